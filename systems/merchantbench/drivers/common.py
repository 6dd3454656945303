"""What the MerchantBench claim drivers share: the agent set-up, observation texts, the small windows.

Claims use small windows where the mechanism allows (T and K in the hundreds of estimated tokens above the
tool schemas), so that examples are a few short steps; the mechanics are the same as at the defaults. The
provider counts like the design's estimator (the fast path) unless a claim needs the exact cl100k count.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from sim.engine import Simulation
from sim.text import fact_token, observation
from sim.tokens import count_tokens
from sim.variant import Variant
from systems.merchantbench.model import (
    MerchantEnv,
    ReactAgent,
    estimate_tokens,
    message_token_estimate,
    run_step,
    tools_json,
)
from systems.merchantbench.state import FaultSchedule, ReactConfig, StepResult

SYSTEM_PROMPT = "You run a small online shop. Keep it solvent."
BIG = 10**9
K_SMALL = 100


@cache
def overhead() -> int:
    """What the estimator-counting provider reports besides the history: the tool schemas' estimate plus
    the system message's. Triggers sit above it plus K: at or below, every hop after a compaction fires
    again (a reminder storm, which is upstream behaviour when T is configured that low)."""
    return estimate_tokens(tools_json()) + message_token_estimate(
        {"role": "system", "content": SYSTEM_PROMPT}
    )


def t_small() -> int:
    """A trigger 200 estimated history tokens above :func:`overhead`."""
    return overhead() + 200


@cache
def fixed_cost() -> int:
    """The exact provider tokens of the system prompt plus the tool schemas."""
    return count_tokens(SYSTEM_PROMPT) + count_tokens(tools_json())


_OBS_STREAM = "merchantbench.claims.obs"
#: Texts made by :func:`observations` on a fresh stream, by (seed, sizes, first fact), with the stream's
#: state after them; a claim's examples repeat size lists, and a search repeats the same examples. Bounded
#: by the characters it holds (emptied when full).
_OBS_MEMO: dict[tuple[Any, ...], tuple[list[str], list[str], Any]] = {}
_OBS_MEMO_CHARS = 8_000_000
_obs_chars = 0


def observations(sim: Simulation, sizes: list[Any], *, first_fact: int = 1) -> tuple[list[str], list[str]]:
    """Observation texts for (chars, n_facts) pairs, and every fact id they carry, in order.

    On a stream nothing has drawn from yet the texts depend only on the seed and the arguments: those are
    remembered (with the stream's state after them, restored on a hit), so a repeated example costs no
    filler."""
    global _obs_chars
    key = (sim.seed, tuple(map(tuple, sizes)), first_fact) if sim.streams.fresh(_OBS_STREAM) else None
    rng = sim.rng(_OBS_STREAM)
    if key is not None and (hit := _OBS_MEMO.get(key)) is not None:
        rng.setstate(hit[2])
        return list(hit[0]), list(hit[1])
    out, facts = [], []
    n = first_fact
    for t, (chars, n_facts) in enumerate(sizes):
        toks = [fact_token(n + i, "amber") for i in range(n_facts)]
        facts += [tok.split("=")[0] for tok in toks]
        n += n_facts
        out.append(f"Day 1, Hour {t}\n" + observation(rng, chars, toks))
    if key is not None:
        size = sum(map(len, out))
        if _obs_chars + size > _OBS_MEMO_CHARS:
            _OBS_MEMO.clear()
            _obs_chars = 0
        if size <= _OBS_MEMO_CHARS:
            _OBS_MEMO[key] = (list(out), list(facts), rng.getstate())
            _obs_chars += size
    return out, facts


def make_agent(
    sim: Simulation,
    variant: Variant,
    model: Any,
    config: ReactConfig,
    *,
    schedule: FaultSchedule | None = None,
    exact: bool = False,
) -> ReactAgent:
    """A logging ReAct agent on a fresh in-memory env that serves :data:`SYSTEM_PROMPT` as its brief."""
    env = MerchantEnv(sim, sim.tree("memory"), variant=variant, schedule=schedule, brief=SYSTEM_PROMPT)
    agent = ReactAgent(
        sim,
        env,
        "agent_0",
        model,
        config=config,
        variant=variant,
        provider_tokenizer="cl100k" if exact else "estimate",
        record_every=1 if exact else 0,
    )
    agent.keep_log = env.keep_log = True
    return agent


def drive(
    agent: ReactAgent, texts: list[str], needed: list[list[str]] | None = None
) -> tuple[ReactAgent, list[StepResult]]:
    """Run one step per text (respawning the agent if its process exits); the agent running at the end."""
    out = []
    for i, text in enumerate(texts):
        agent, result = run_step(agent, text, needed=needed[i] if needed else ())
        out.append(result)
    return agent, out
