"""The ``pager`` claims' strategies, checks and exhaustive scopes."""

from __future__ import annotations

from typing import Annotated, Any

from hypothesis import strategies as st
from pydantic import Field
from typing_extensions import TypedDict  # pydantic refuses typing.TypedDict before Python 3.12

from reference.pager.model import Pager
from sim.claims import Verdict
from sim.engine import Simulation
from sim.exhaustive import Scope, derive, values
from sim.variant import Variant

#: The question; the message holding its one rare word ("vet"); chatty messages full of its common words.
QUESTION = "What did I say the vet was called?"
EVIDENCE = "My vet is Dr Okafor."
CHATTY = (
    "What did I tell you about the thing that was on the list?",
    "What was it that I said you should do about the plan?",
    "Did I tell you what the time was when I left?",
    "I think that was what I said about the other one.",
)
#: Messages sharing no word with the question.
QUIET = (
    "Rain fell over a harbour all afternoon.",
    "Trains to a coast run every hour on weekends.",
    "Bread rises faster in a warm kitchen.",
)
#: The window of the check: small enough that a few messages put the queue under pressure.
WINDOW = 200


class CrowdExample(TypedDict):
    """An example of ``pager.common-words``: chatty messages after the evidence, then quiet ones."""

    chatty: Annotated[int, Field(ge=0, le=8)]
    quiet: Annotated[int, Field(ge=0, le=6)]


def crowd_strategy() -> Any:
    return st.fixed_dictionaries({"chatty": st.integers(0, 8), "quiet": st.integers(0, 6)})


def crowd_check(sim: Simulation, ex: dict[str, Any], variant: Variant) -> Verdict:
    """The user names the vet, then *chatty* messages, then *quiet* ones (window 200 tokens, MemGPT's
    thresholds, keyword search, page of 5); then the question. The evidence must be in the request: in
    the queue, or on the search page once evicted."""
    p = Pager(WINDOW, variant=variant)
    p.add("m0", "s0", "user", "user", EVIDENCE)
    n = 1
    for group, count in ((CHATTY, ex["chatty"]), (QUIET, ex["quiet"])):
        for j in range(count):
            p.add(f"m{n}", "s0", "user" if n % 2 == 0 else "assistant", "", group[j % len(group)])
            n += 1
    parts = p.request(QUESTION)
    if any(EVIDENCE in part for part in parts):
        return Verdict.ok()
    return Verdict.violated(f"the evidence message is not in the request: {p.last_reasons['m0']}")


#: Chatty messages at, under and over the page size (6: where the ci search shrinks to); quiet
#: ones none to six.
SCOPES: dict[str, Scope] = {
    "common-words": derive(CrowdExample, chatty=values(0, 4, 5, 6, 8), quiet=values(0, 1, 3, 6)),
}
