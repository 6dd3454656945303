"""The prompt-cache claim's workload and driver: steps of prose through the ReAct loop at a window the
history outgrows, every hop priced by Anthropic's prompt cache with upstream's Claude breakpoints."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from hypothesis import strategies as st
from pydantic import Field
from typing_extensions import TypedDict

from sim.cache import ProviderConfig
from sim.claims import Verdict
from sim.engine import Simulation
from sim.variant import Variant
from systems.merchantbench import properties as pr
from systems.merchantbench.drivers.common import BIG, drive, fixed_cost, make_agent, observations
from systems.merchantbench.policies import SavePolicy
from systems.merchantbench.state import ReactConfig

CACHE_HISTORY = 4000
"""What the window leaves for history after the system prompt and the tool schemas (exact tokens)."""
MIN_HIT_RATIO = 0.5
"""The share of the history tokens sent after the window filled that the cache must serve."""


class CacheExample(TypedDict):
    chars: Literal[800, 1600, 3200]
    steps: Annotated[int, Field(ge=2, le=40)]


def cache_strategy() -> Any:
    # *steps* observations of *chars* characters of prose (about 200, 400 or 800 estimated tokens): the
    # history outgrows the window after 10 to 40 steps, and a step is small next to half the window (so
    # an aligned trim keeps several steps between its moves).
    return st.fixed_dictionaries({"chars": st.sampled_from([800, 1600, 3200]), "steps": st.integers(2, 40)})


def cache_check(sim: Simulation, ex: dict[str, Any], variant: Variant) -> Verdict:
    sim.use_provider(ProviderConfig.of("anthropic"))
    texts, _ = observations(sim, [(ex["chars"], 0)] * ex["steps"])
    window = fixed_cost() + CACHE_HISTORY
    config = ReactConfig(context_window=window, trigger=BIG, keep=BIG)
    agent = make_agent(sim, variant, SavePolicy(), config, exact=True)
    agent, _ = drive(agent, texts)
    return pr.check_cache_served(sim.trace.data.requests, window, MIN_HIT_RATIO)
