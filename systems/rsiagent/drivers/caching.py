"""Driver of the prompt-cache claim (MEM-RTE-worklog-fold, MEM-OBJ-work-log): an Actor loop folding its
oldest pairs into the WORK LOG, every model call priced by OpenAI-style automatic prefix caching (upstream
sends no cache breakpoints; the provider's prefix cache is the only one the request can use)."""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from hypothesis import strategies as st
from pydantic import Field
from typing_extensions import TypedDict

from sim.cache import ProviderConfig
from sim.claims import Verdict
from sim.engine import Simulation
from sim.text import extract_fact_values
from sim.tokens import count_tokens
from sim.variant import Variant
from systems.rsiagent import properties as props
from systems.rsiagent.drivers.common import FILL, INSTRUCTION, fact
from systems.rsiagent.model import ActorLoop
from systems.rsiagent.policies import Summarizer
from systems.rsiagent.state import LoopConfig

#: The Actor's system prompt in this claim: short (under the provider's 1,024-token minimum), so only a
#: prefix that reaches into the task and the WORK LOG can be cached.
#: The values the state fact cycles through.
STATES = ("amber", "teal", "coral", "ivory")
CHARTER = "You are the Actor. Work through Programs; the WORK LOG stands in for your earlier turns."


class CacheExample(TypedDict):
    """Model calls after the opening one, facts per observation, filler characters per observation, the
    pairs kept unfolded, the fold batch (count trigger: fold once a batch lies outside the keep) and
    whether each observation also reports the task's current state (one fact whose value changes: the
    summarizer merges it into its existing entry, as upstream's prompt asks, "CURRENT STATE" first)."""

    steps: Annotated[int, Field(ge=1, le=24)]
    facts: Annotated[int, Field(ge=1, le=40)]
    chars: Literal[200, 2000]
    keep: Annotated[int, Field(ge=1, le=3)]
    batch: Annotated[int, Field(ge=1, le=3)]
    state: bool


def cache_examples() -> Any:
    return st.fixed_dictionaries(
        {
            "steps": st.integers(1, 24),
            "facts": st.integers(1, 40),
            "chars": st.sampled_from([200, 2000]),
            "keep": st.integers(1, 3),
            "batch": st.integers(1, 3),
            "state": st.booleans(),
        }
    )


def check_cache(sim: Simulation, ex: dict[str, Any], variant: Variant) -> Verdict:
    """Each call observes *facts* new facts and *chars* of filler; the lossless summarizer folds. Every
    call's stable tokens are the system prompt, the instruction and the WORK LOG as the previous call
    sent it."""
    sim.use_provider(ProviderConfig.of("openai"))
    cfg = LoopConfig(
        history_keep_pairs=ex["keep"], keep_chars=0, fold_batch=ex["batch"], worklog_max_chars=100_000
    )
    loop = ActorLoop(sim, cfg, Summarizer(), instruction=INSTRUCTION, variant=variant, system_prompt=CHARTER)
    fixed = count_tokens(CHARTER) + count_tokens(INSTRUCTION)
    observed: dict[str, str] = {}  # fact id -> its latest token
    n = 1
    seen: list[tuple[int, int, frozenset[str], frozenset[str]]] = []
    for k in range(ex["steps"] + 1):
        if k:
            toks = [fact(0, STATES[k % len(STATES)])] if ex["state"] else []
            toks += [fact(n + j) for j in range(ex["facts"])]
            n += ex["facts"]
            observed.update((t.split("=")[0], t) for t in toks)
            loop.observe(" ".join(toks) + " " + (FILL * 80)[: ex["chars"]])
        stable = fixed + (count_tokens(loop.summary) if loop.summary else 0)  # as the previous call sent it
        parts = loop.call("PROGRAM: step")
        latest = frozenset(observed.values())
        seen.append((stable, loop.pairs - 1 - loop.covered, latest, _shown(parts)))
    reads = [
        json.loads(r.detail)["cache"]["cache_read_tokens"]
        for r in sim.trace.data.requests
        if r.route == "loop.step"
    ]
    calls = [(read, *rest) for read, rest in zip(reads, seen, strict=True)]
    return props.check_fold_keeps_prefix_cached(calls, ex["keep"] + ex["batch"] - 1)


def _shown(parts: list[str]) -> frozenset[str]:
    """The fact tokens a request shows, each id with the value it last shows (what a reader takes)."""
    return frozenset(f"{k}={v}" for k, v in extract_fact_values("\n".join(parts)).items())
