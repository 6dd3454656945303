"""Switch names and frozen values of the ``bm25`` reference design."""

from __future__ import annotations

from dataclasses import dataclass

NEIGHBOURS = "neighbours"
"""The fix: each retrieved turn brings the turns beside it in its session (LongMemEval's *round*, a user
turn with its reply), so an answer phrased unlike the question rides in with the turn that matched."""
NO_RETRIEVAL = "no-retrieval"
"""The off switch: nothing is retrieved (the request is the system prompt, the recent tail and the
question)."""

FIXES = (NEIGHBOURS,)
OFF = (NO_RETRIEVAL,)


@dataclass(frozen=True, slots=True)
class Stored:
    """One stored turn: its id, session, role, the text as shown to the model (``speaker: text``), its
    cl100k count, and the turn's own text (what is indexed: LongMemEval indexes the content only)."""

    turn_id: str
    session_id: str
    role: str
    text: str
    tokens: int
    raw: str
