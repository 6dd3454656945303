"""A tiny conversation built in code (three dated sessions, one question) for conformance checks: the
adapter contract's conversation half (:func:`sim.testing.check_adapter`) and smoke runs (issue 28)."""

from __future__ import annotations

from sim.conversations.model import Instance, Question, Turn

_LINES = (
    ("user", "I adopted a grey cat last spring and named her Biscuit after my grandmother's recipe."),
    ("assistant", "Biscuit is a lovely name. How is she settling in with the rest of the household?"),
    ("user", "She sleeps on the bookshelf above the radiator and ignores the dog completely."),
    ("assistant", "Cats often pick warm, high places. The dog will probably earn her trust slowly."),
)


def tiny_instance(evidence: tuple[str, ...] = ("s0:0", "s2:2"), answer: str | None = "Biscuit") -> Instance:
    """Three sessions of four turns each (the texts differ by session), dated a week apart, then one
    question; *evidence* and *answer* are its labels (a check runs twice with different labels)."""
    turns = []
    sessions = ("s0", "s1", "s2")
    for k, sid in enumerate(sessions):
        for i, (role, text) in enumerate(_LINES):
            turns.append(
                Turn(f"{sid}:{i}", sid, k, role, role, f"(week {k + 1}) {text}", 1_700_000_000 + 604_800 * k)
            )
    q = Question("q0", "single-session-user", "What is my cat called?", answer, answer is None, evidence,
                 len(turns), 1_700_000_000 + 604_800 * 3)  # fmt: skip
    return Instance("native", 0, "tiny", sessions, tuple(turns), (q,))
