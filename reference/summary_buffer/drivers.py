"""Each claim's strategy and driver: the workload it generates and how it runs the summary buffer."""

from __future__ import annotations

from typing import Annotated, Any

from hypothesis import strategies as st
from pydantic import Field
from typing_extensions import TypedDict  # pydantic refuses typing.TypedDict before Python 3.12

from reference.common import HUMAN, SYSTEM, SYSTEM_PROMPT, message
from reference.summary_buffer.model import SummaryBuffer
from reference.summary_buffer.policies import Summarizer
from reference.summary_buffer.properties import check_fact_in_request
from reference.summary_buffer.state import NO_SUMMARY, PIN_FACTS
from sim.claims import Verdict
from sim.engine import Simulation
from sim.exhaustive import Scope, derive, values
from sim.text import fact_token, observation
from sim.variant import Variant


class FoldExample(TypedDict):
    """An example of ``summary-buffer.fold-loses-fact``: the buffer's token limit, the summarizer's keep
    probability (percent), then the sizes (characters) of the observations after the fact's."""

    limit: Annotated[int, Field(ge=40, le=400)]
    keep_percent: Annotated[int, Field(ge=0, le=100)]
    later: list[Annotated[int, Field(ge=0, le=1500)]]


def fold_strategy() -> Any:
    return st.fixed_dictionaries(
        {
            "limit": st.integers(40, 400),
            "keep_percent": st.integers(0, 100),
            "later": st.lists(st.integers(0, 1500), min_size=0, max_size=4),
        }
    )


def fold_check(sim: Simulation, ex: dict[str, Any], variant: Variant) -> Verdict:
    """Observe FACT-0001, then the later observations, then ask for FACT-0001 (summary cap: 4,000 tokens,
    never reached here: the loss is the fold's, not the cap's)."""
    rng = sim.rng("summary-buffer.claims.obs")
    summarizer = Summarizer(ex["keep_percent"] / 100, 4000, sim.rng("summary-buffer.claims.summarizer"),
                            pin_facts=variant.has(PIN_FACTS))  # fmt: skip
    buf = SummaryBuffer(message(SYSTEM, SYSTEM_PROMPT), ex["limit"], summarizer,
                        summarize=not variant.has(NO_SUMMARY))  # fmt: skip
    buf.add(message(HUMAN, observation(rng, 60, [fact_token(1, "amber")])))
    for chars in ex["later"]:
        buf.add(message(HUMAN, observation(rng, chars, [])))
    question = message(HUMAN, "Question: what is the value of FACT-0001?")
    return check_fact_in_request([m.text for m in buf.context(question)], "FACT-0001")


#: Each claim's exhaustive scope (``memsim claims --exhaustive``): a limit at and far over the fact's
#: observation, keep probabilities 0, 50 and 100 percent, later observations of 0, 60 and 1,500 characters,
#: up to two of them.
SCOPES: dict[str, Scope] = {
    "fold-loses-fact": derive(
        FoldExample,
        max_len=2,
        limit=values(40, 400),
        keep_percent=values(0, 50, 100),
        paths={"later.*": values(0, 60, 1500)},
    ),
}
