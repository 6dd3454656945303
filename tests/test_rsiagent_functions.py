"""RSIAgent's public pure functions against the exact behaviour in the fidelity note (§2.1-§2.10a)."""

import hashlib
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from systems.rsiagent import (
    cap_worklog,
    digest_lines,
    effective_keep,
    fold_input,
    inventory_listing,
    shingles,
    silent_audit,
    tree_sha256,
)
from systems.rsiagent.model import (
    ELISION,
    WORKLOG_MARKER,
    authorized_near_shingle,
    find_counted,
    manifest,
    parse_decision,
    parse_verdict,
    pull_excluded,
    safe_memory_name,
    words,
)
from systems.rsiagent.state import Message

EIGHT = "one two three four five six seven eight"


def test_words_split_on_apostrophes_and_lowercase() -> None:
    """Words are [a-z0-9]+ of the lowercased text, so don't gives don and t."""
    assert words("Don't STOP-now 42x") == ["don", "t", "stop", "now", "42x"]


def test_shingle_needs_eight_words() -> None:
    """Fewer than 8 words give no shingle; 8 words give exactly one, joined by single spaces."""
    assert shingles("one two three four five six seven") == frozenset()
    assert shingles("One, two; three four five six seven EIGHT") == frozenset({EIGHT})


def test_shingles_slide_by_one_word() -> None:
    """Nine words give two overlapping shingles."""
    assert shingles(EIGHT + " nine") == frozenset({EIGHT, "two three four five six seven eight nine"})


def test_silent_audit_rejects_corpus_overlap() -> None:
    """A file holding another task's 8-word run is rejected; others are accepted."""
    corpus = shingles(EIGHT)
    files = {"leak.md": b"note: one two three four five six seven eight!", "ok.md": b"nothing here"}

    accepted, rejected = silent_audit(files, corpus)

    assert accepted == {"ok.md": b"nothing here"}
    assert rejected == ["leak.md"]


def test_silent_audit_allows_authorized_text() -> None:
    """The bank may quote the target (authorized) text verbatim."""
    files = {"a.md": EIGHT.encode()}

    assert silent_audit(files, shingles(EIGHT), authorized_instruction=EIGHT) == (files, [])


def test_authorized_near_shingle_skips_at_most_four_words() -> None:
    """The 8 words in order inside a 12-word window of the authorized words are exempt; 5 skips are not."""
    gram = EIGHT
    four = ["one", "two", "x", "three", "four", "y", "five", "six", "z", "seven", "w", "eight"]
    five = ["one", "two", "x", "three", "four", "y", "five", "six", "z", "seven", "w", "v", "eight"]

    assert authorized_near_shingle(gram, four)
    assert not authorized_near_shingle(gram, five)
    assert silent_audit({"a": gram.encode()}, shingles(gram), " ".join(four)) == ({"a": gram.encode()}, [])
    assert silent_audit({"a": gram.encode()}, shingles(gram), " ".join(five))[1] == ["a"]


def test_silent_audit_decodes_binary_with_errors_ignored() -> None:
    """Binary files are audited too: invalid UTF-8 bytes are dropped, not an error."""
    data = b"\xff" + EIGHT.encode() + b"\xfe"

    assert silent_audit({"bin": data}, shingles(EIGHT))[1] == ["bin"]


def test_fold_input_keeps_short_content() -> None:
    """Content of at most 4,000 characters is returned unchanged."""
    s = "x" * 4000

    assert fold_input(s) == s


def test_fold_input_elides_the_middle() -> None:
    """Over 4,000 characters: the first 1,500 + elision marker + the last 2,500."""
    s = "".join(chr(97 + i % 26) for i in range(5000))

    assert fold_input(s) == s[:1500] + "\n…[trace middle elided]…\n" + s[-2500:]
    assert ELISION == "\n\u2026[trace middle elided]\u2026\n"


def test_cap_worklog_cuts_at_last_newline() -> None:
    """Over the cap: cut at the last newline before it, rstrip, append the marker."""
    text = "aaaa\nbbbb\ncccc\n"

    assert cap_worklog(text, 12) == "aaaa\nbbbb" + WORKLOG_MARKER
    assert cap_worklog(text, 100) == text


def test_cap_worklog_hard_cut_below_half() -> None:
    """When the last newline is below cap/2 the cut is hard at the cap."""
    text = "ab\n" + "c" * 30

    assert cap_worklog(text, 20) == text[:20] + WORKLOG_MARKER
    assert "\u2014" in WORKLOG_MARKER


def test_digest_lines_collapse_and_clip() -> None:
    """[you]/[env] plus whitespace-collapsed content clipped to 220 characters."""
    msgs = [Message("assistant", "run\n  the   tests"), Message("user", "y" * 300)]

    assert digest_lines(msgs) == ["[you] run the tests", "[env] " + "y" * 220]


def test_effective_keep_without_char_budget() -> None:
    """keep_chars <= 0 keeps history_keep_pairs."""
    assert effective_keep([10] * 20, 80, 0, None) == 80


def test_effective_keep_fewer_than_six_pairs() -> None:
    """Fewer than 6 pairs: all of them."""
    assert effective_keep([10**6] * 4, 80, 500_000, 80) == 4


def test_effective_keep_reproduced_fat_pairs() -> None:
    """100 pairs of 120k chars with the target defaults keep the 6-pair floor."""
    assert effective_keep([120_000] * 100, 80, 500_000, 80) == 6


def test_effective_keep_ignores_reasoning() -> None:
    """Reasoning is not counted toward keep_chars; content is."""
    pair = [Message("assistant", "a" * 10, reasoning="r" * 10_000), Message("user", "b" * 10)]

    assert effective_keep([pair] * 30, 80, 200, 80) == 10


def test_effective_keep_ceiling_and_pair_cap() -> None:
    """The walk stops at history_keep_pairs; the ceiling clips; the floor is 6."""
    assert effective_keep([1] * 50, 20, 10_000, 80) == 20
    assert effective_keep([1] * 50, 20, 10_000, 12) == 12
    assert effective_keep([1] * 50, 2, 10_000, 80) == 6


def test_tree_sha256_is_canonical_json_of_name_to_sha() -> None:
    """sha256 of sorted, compact JSON (non-ASCII kept) of name -> sha256."""
    files = {"b.md": b"2", "é.md": b"1"}
    m = {n: hashlib.sha256(d).hexdigest() for n, d in files.items()}
    want = hashlib.sha256(
        json.dumps(m, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    ).hexdigest()

    assert tree_sha256(files) == want
    assert manifest(files)["b.md"] == {"bytes": 1, "sha256": hashlib.sha256(b"2").hexdigest()}


def test_inventory_listing_practice() -> None:
    """Practice/waves: sorted "{name}  {len}B" lines, or the placeholder."""
    assert inventory_listing({"z.md": b"abc", "a/b.py": b""}) == "a/b.py  0B\nz.md  3B"
    assert inventory_listing({}) == "(no durable memory files yet)"


def test_inventory_listing_osworld_and_ale() -> None:
    """``memory_preamble``: OSWorld's right-aligned sizes and ALE's ``_listing`` under
    ``Current durable-memory inventory (N files):``; an empty bank says ``empty (0 files)``; the prose is
    sized like upstream's (183 tokens with an empty bank)."""
    from sim.tokens import count_tokens

    osworld = inventory_listing({"x.md": b"12345"}, "osworld")
    assert "\nCurrent durable-memory inventory (1 files):\n        5  x.md\n\n" in osworld
    assert osworld.endswith("        5  x.md\n\n")
    ale = inventory_listing({"a.md": b"abc", "b/c.md": b""}, "ale")
    assert ale.endswith("\nCurrent durable-memory inventory (2 files):\na.md  3B\nb/c.md  0B\n\n")
    empty = inventory_listing({}, "osworld")
    assert empty.endswith("\nCurrent durable-memory inventory: empty (0 files).\n\n")
    assert empty == inventory_listing({}, "ale") and count_tokens(empty) == 183


def test_actor_charter_fences_the_inventory() -> None:
    """``self_evolving_actor_charter``: ``DURABLE MEMORY FILES:`` then the inventory between ``---`` lines,
    then the project verbatim; sized like upstream's charter plus runtime contract (629 tokens for a
    two-word project and an empty bank)."""
    from sim.tokens import count_tokens
    from systems.rsiagent.model import actor_charter

    text = actor_charter("  Build x \n", "")
    assert "DURABLE MEMORY FILES:\n---\n(no durable memory files yet)\n---\n" in text
    assert "\n---\nBuild x\n---\n" in text and count_tokens(text) == 629
    assert "DURABLE MEMORY FILES:\n---\na.md  3B\n---" in actor_charter(
        "p", inventory_listing({"a.md": b"abc"})
    )


def test_safe_memory_names() -> None:
    """``_safe_memory_name`` follows ``pathlib``: ``.``, ``./a``, ``a//b``, ``a/`` and ``a/./b`` normalize
    to safe parts; an absolute path, ``..`` anywhere and "" are unsafe (``practice_loop.py``)."""
    names = ["a/b", ".", "./a", "a//b", "a/", "a/./b", "/a", "a/..", "../x", "", 3]
    assert [safe_memory_name(n) for n in names] == [True] * 6 + [False] * 5


def test_pull_and_find_bytecode_rules_differ() -> None:
    """A name merely containing __pycache__ is dropped by the pull but counted by find."""
    assert pull_excluded("a__pycache__b") and find_counted("a__pycache__b")
    assert pull_excluded("x/__pycache__/m.pyc") and not find_counted("x/__pycache__/m.pyc")
    assert pull_excluded("m.pyo") and not find_counted("m.pyo")


def test_parse_verdict_ignores_fenced_lines() -> None:
    """Exactly one VERDICT line outside code fences."""
    assert parse_verdict("```\nVERDICT: FAIL\n```\nVERDICT: PASS") == "PASS"


def test_parse_verdict_tilde_fences_markers_and_indented_lines() -> None:
    """``_parse_unique_handoff`` (``practice_loop.py:413-445``): ``~~~`` opens a fence too, only the same
    marker closes it, and lines indented by a tab or four spaces are skipped."""
    from systems.rsiagent.model import VerifierProtocolError

    assert parse_verdict("~~~\nVERDICT: PASS\n~~~\nVERDICT: FAIL") == "FAIL"
    assert parse_verdict("~~~\n```\nVERDICT: PASS\n~~~\nVERDICT: FAIL") == "FAIL"
    for report in ("    VERDICT: PASS", "\tVERDICT: PASS", "```\nVERDICT: PASS\n~~~\nVERDICT: FAIL"):
        with pytest.raises(VerifierProtocolError):
            parse_verdict(report)
    assert parse_verdict("  VERDICT: PASS  ") == "PASS"


def test_parse_decision_requires_project_root() -> None:
    """A PROJECT decision must name the project root."""
    assert parse_decision("\nDECISION: PROJECT\nwork in /home/user/evolution_project") == "PROJECT"
    assert parse_decision("DECISION: CONVERGED") == "CONVERGED"


def test_parse_decision_phase1_saturated() -> None:
    """Phase 1 ends with SATURATED (not CONVERGED); a decision line must match the regex exactly."""
    assert parse_decision("DECISION: SATURATED", phase1=True) == "SATURATED"
    assert parse_decision("DECISION: STALLED", phase1=True) == "STALLED"
    for bad, phase1 in (("DECISION: SATURATED", False), ("DECISION: CONVERGED", True)):
        with pytest.raises(ValueError):
            parse_decision(bad, phase1=phase1)
    with pytest.raises(ValueError):
        parse_decision("DECISION: PROJECT")  # no project root
    with pytest.raises(ValueError):
        parse_decision("Decision: PROJECT /home/user/evolution_project")


@given(st.text(max_size=9000))
def test_fold_input_is_bounded(s: str) -> None:
    """fold_input never returns more than 4,000 characters plus the marker."""
    out = fold_input(s)

    assert len(out) <= 4000 + len(ELISION)
    assert out.startswith(s[:1500])


@given(st.text(max_size=600), st.integers(10, 400))
def test_cap_worklog_bounded(text: str, cap: int) -> None:
    """The capped log is at most the cap plus the marker and is a prefix of the input when cut."""
    out = cap_worklog(text, cap)

    assert len(out) <= cap + len(WORKLOG_MARKER)
    if out != text:
        assert text.startswith(out[: -len(WORKLOG_MARKER)])


def test_not_modeled_lines_appear_in_docstrings() -> None:
    """Every fidelity NOT_MODELED line is also a "Not modeled:" line in the model's docstrings."""
    import inspect
    import pkgutil
    from importlib import import_module

    from systems.rsiagent import fidelity, model

    names = [m.name for m in pkgutil.iter_modules(model.__path__)]
    mods = [model] + [import_module(f"{model.__name__}.{n}") for n in names]
    source = " ".join(" ".join(inspect.getsource(m) for m in mods).split())
    missing = [
        line for line in fidelity.NOT_MODELED if "Not modeled: " + " ".join(line.split()) not in source
    ]

    assert missing == []
