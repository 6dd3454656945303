"""The ``bm25`` claims' strategies, checks and exhaustive scopes."""

from __future__ import annotations

from typing import Annotated, Any

from hypothesis import strategies as st
from pydantic import Field
from typing_extensions import TypedDict  # pydantic refuses typing.TypedDict before Python 3.12

from reference.bm25.model import Bm25Memory, Settings
from sim.claims import Verdict
from sim.engine import Simulation
from sim.exhaustive import Scope, derive, values
from sim.variant import Variant

#: The question, the turn that matches it and the answer phrased unlike it (no word in common).
QUESTION = "What name did I give my kitten?"
ASKED = "I need a name for my new kitten, any ideas?"
ANSWER = "Call her Biscuit."
#: Later turns that share no word with the question.
FILLERS = (
    "Rain fell over the harbour all afternoon.",
    "Trains to the coast run every hour on weekends.",
    "Bread rises faster in a warm kitchen.",
    "Pack a spare battery for long hikes.",
)


class UnlikeExample(TypedDict):
    """An example of ``bm25.unlike-phrasing``: K, the recent tail and how many later turns follow."""

    k: Annotated[int, Field(ge=1, le=5)]
    tail: Annotated[int, Field(ge=0, le=3)]
    later: Annotated[int, Field(ge=0, le=8)]


def unlike_strategy() -> Any:
    return st.fixed_dictionaries(
        {"k": st.integers(1, 5), "tail": st.integers(0, 3), "later": st.integers(0, 8)}
    )


def unlike_check(sim: Simulation, ex: dict[str, Any], variant: Variant) -> Verdict:
    """After an unrelated session, the user asks for a name for the kitten, the assistant answers, *later*
    unrelated turns follow; then the question. The answer turn must be in the request (window 4,000
    tokens)."""
    mem = Bm25Memory(Settings(k=ex["k"], tail=ex["tail"]), variant=variant)
    for j, text in enumerate(FILLERS):  # an earlier session: a term in 1 of 2 documents has idf 0
        mem.add(f"p0:{j}", "p0", "user" if j % 2 == 0 else "assistant", "", text)
    mem.add("s0:0", "s0", "user", "user", ASKED)
    mem.add("s0:1", "s0", "assistant", "assistant", ANSWER)
    for j in range(ex["later"]):
        role = "user" if j % 2 == 0 else "assistant"
        mem.add(f"s1:{j}", "s1", role, role, FILLERS[j % len(FILLERS)])
    parts = mem.request(QUESTION, 4000)
    if any(ANSWER in p for p in parts):
        return Verdict.ok()
    return Verdict.violated(f"the answer turn is not in the request: {mem.last_reasons['s0:1']}")


#: K at its bounds, the tail empty, one turn and its largest, later turns none to eight.
SCOPES: dict[str, Scope] = {
    "unlike-phrasing": derive(UnlikeExample, k=values(1, 5), tail=values(0, 1, 3), later=values(0, 1, 3, 8)),
}
