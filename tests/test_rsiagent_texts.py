"""The texts RSIAgent sends are sized like upstream's (issue 15 item 11): short format strings are
upstream's; longer prose is our own wording with upstream's cl100k size and, where the text enters a
history whose character size drives folding, its character count."""

import pytest

from sim.tokens import count_tokens
from systems.rsiagent.model import texts


@pytest.mark.parametrize(
    ("name", "chars", "tokens"),
    [
        ("HANDOFF_PARAGRAPH", 259, 50),  # core/actor.py handoff_message
        ("PIVOT_PARAGRAPH", 279, 60),  # pivot_handoff_message
        ("OPENING_TAIL", 363, 76),  # opening_message(instruction, None)
        ("REVISIT_TAIL", 192, 37),  # core/loop.py _memory_revisit
    ],
)
def test_history_texts_match_upstream_characters_and_tokens(name: str, chars: int, tokens: int) -> None:
    """Texts that enter the Actor's history match upstream's characters (fold sizes) and tokens."""
    text = getattr(texts, name)

    assert (len(text), count_tokens(text)) == (chars, tokens)


def test_memory_revisit_notes_match_upstream_per_event() -> None:
    """Each event sentence has upstream's size; a whole note is 58-61 tokens."""
    want = {"verifier": (73, 13), "fold": (67, 11), "recovery": (76, 12), "stagnation": (59, 10)}
    got = {k: (len(v), count_tokens(v)) for k, v in texts.REVISIT_EVENTS.items()}
    notes = {k: count_tokens(texts.memory_revisit("~/.memory", k)) for k in want}

    assert got == want
    assert notes == {"verifier": 61, "fold": 59, "recovery": 60, "stagnation": 58}
    with pytest.raises(ValueError):
        texts.memory_revisit("~/.memory", "bounce")


def test_prompt_texts_match_upstream_tokens() -> None:
    """The summarizer prompt (307), the review system prompt (27), the review ask with both sections
    empty (83) and the fold request's fixed text (19)."""
    assert count_tokens(texts.SUMMARIZER_SYSTEM) == 307
    assert count_tokens(texts.REVIEW_SYSTEM) == 27
    assert texts.strategy_review_ask(" ", "\n") == texts.REVIEW_ASK and count_tokens(texts.REVIEW_ASK) == 83
    fixed = texts.fold_request("x", "y")
    assert count_tokens(fixed) - count_tokens("x") - count_tokens("y") in (17, 18, 19)
    assert fixed == "CURRENT LOG:\nx\n\nOLDER TURNS TO FOLD IN:\ny\n\nOutput the updated log only."
    assert texts.fold_request("", "y").startswith("CURRENT LOG:\n(empty)\n\n")


def test_review_ask_caps_and_omits_sections() -> None:
    """``strategy_review_ask``: ``worklog.strip()[:8000]`` and ``tail.strip()[:6000]``, each only when not
    blank."""
    ask = texts.strategy_review_ask(" " + "w" * 9000, "t" * 7000)

    assert "w" * 8000 + "\n" in ask and "w" * 8001 not in ask and ask.endswith("\n" + "t" * 6000)
    assert "\n\nWORK LOG of the attempt:\n" in ask and "\n\nFINAL TURNS of the attempt:\n" in ask
    assert "FINAL TURNS" not in texts.strategy_review_ask("w", "  ")


@pytest.mark.parametrize(
    ("listing", "chars", "tokens"),
    [("", 889, 183), ("a.md  3B", 857, 181), ("  12  a.md\n 7  b/c.md", 870, 188)],
)
def test_memory_preamble_matches_upstream_size_per_listing(listing: str, chars: int, tokens: int) -> None:
    """``memory_preamble(listing)`` (``explore/charter.py``), measured on upstream's text: the whole preamble
    has upstream's characters (it opens a folding history) and cl100k tokens for an empty and a filled
    listing."""
    text = texts.memory_preamble(listing)

    assert (len(text), count_tokens(text)) == (chars, tokens)


def test_memory_preamble_pieces_labels_and_layout_match_upstream() -> None:
    """Each piece of our own wording has upstream's size: the header (372 characters, 76 tokens, 5 lines),
    the two state sentences (27 / 5 and 61 / 12), the retrieval paragraph (402 / 86, 5 lines); upstream's
    labels are kept, and the paragraph follows the state line directly (no blank line between)."""
    sizes = {
        name: (len(getattr(texts, name)), count_tokens(getattr(texts, name)))
        for name in ("PREAMBLE_HEAD", "PREAMBLE_FULL", "PREAMBLE_EMPTY", "PREAMBLE_MID")
    }
    assert sizes == {
        "PREAMBLE_HEAD": (372, 76),
        "PREAMBLE_FULL": (27, 5),
        "PREAMBLE_EMPTY": (61, 12),
        "PREAMBLE_MID": (402, 86),
    }
    assert texts.PREAMBLE_HEAD.startswith("[YOUR MEMORY — ") and "~/.memory/" in texts.PREAMBLE_HEAD
    assert texts.PREAMBLE_MID.endswith(".]\n") and texts.PREAMBLE_HEAD.count("\n") == 5
    lines = texts.memory_preamble("a.md  3B").split("\n")
    assert lines[5] == texts.PREAMBLE_FULL and lines[6] == texts.PREAMBLE_MID.split("\n")[0]
    assert lines[11:14] == ["", "Current durable-memory inventory (1 files):", "a.md  3B"]
