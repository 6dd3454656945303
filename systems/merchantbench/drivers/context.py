"""Workloads and drivers of the claims about the ReAct loop's context: the compaction cycle, the trims at B
and K, the request ceiling, 425s, failed acts, Forbidden redaction, reused call ids and trace recall.

Each claim has a strategy (a Hypothesis strategy of JSON-shaped examples), its example type (the same
shape with the strategy's bounds, for ``memsim replay``) and a check that runs the example on a variant
and hands the logs to a checker in :mod:`systems.merchantbench.properties`.
"""

from __future__ import annotations

import json
import random
from dataclasses import replace
from typing import Annotated, Any, Literal

from hypothesis import strategies as st
from pydantic import Field
from typing_extensions import TypedDict

from sim.claims import Verdict
from sim.engine import Simulation
from sim.text import fact_token, filler, observation
from sim.variant import Variant
from systems.merchantbench import properties as pr
from systems.merchantbench.drivers.common import (
    BIG,
    K_SMALL,
    drive,
    fixed_cost,
    make_agent,
    observations,
    t_small,
)
from systems.merchantbench.model import message_token_estimate
from systems.merchantbench.policies import SavePolicy, ScriptedModel
from systems.merchantbench.state import FaultSchedule, ReactConfig, Reply, ToolCall

Chars = Annotated[int, Field(ge=0, le=1500)]
Facts = Annotated[int, Field(ge=0, le=2)]
_SIZES = st.lists(st.tuples(st.integers(0, 1500), st.integers(0, 2)), min_size=1, max_size=4)


def _ops(sim: Simulation) -> list[Any]:
    return list(sim.trace.data.ops)


# -- 1. suffix eviction --------------------------------------------------------------------------------
class SuffixExample(TypedDict):
    save: Literal["never", "reminder", "every_k"]
    k: Annotated[int, Field(ge=1, le=3)]
    steps: Annotated[list[tuple[Chars, Facts]], Field(min_length=1, max_length=4)]


def suffix_strategy() -> Any:
    return st.fixed_dictionaries(
        {"save": st.sampled_from(["never", "reminder", "every_k"]), "k": st.integers(1, 3), "steps": _SIZES}
    )


def suffix_check(sim: Simulation, ex: dict[str, Any], variant: Variant) -> Verdict:
    texts, _ = observations(sim, ex["steps"])
    config = ReactConfig(context_window=BIG, trigger=t_small(), keep=K_SMALL)
    agent = make_agent(sim, variant, SavePolicy(save=ex["save"], k=ex["k"]), config)
    agent, results = drive(agent, texts)
    return pr.check_compaction_service(_ops(sim), agent.compaction_log, results[-1].t)


# -- 2. orphaned read result ---------------------------------------------------------------------------
class OrphanExample(TypedDict):
    offset: Annotated[int, Field(ge=0, le=300)]
    slack: Annotated[int, Field(ge=0, le=200)]
    steps: Annotated[list[Annotated[int, Field(ge=0, le=400)]], Field(max_length=3)]


ORPHAN_FACT = fact_token(1, "teal")
ORPHAN_QUESTION = "Question: what is the value of FACT-0001?"


def orphan_strategy() -> Any:
    return st.fixed_dictionaries(
        {
            "offset": st.integers(0, 300),
            "slack": st.integers(0, 200),
            "steps": st.lists(st.integers(0, 400), max_size=3),
        }
    )


def _document(budget: int, slack: int) -> str:
    """A document whose read result costs at most ``budget - slack`` estimated tokens (as large as that
    allows), starting with the fact."""
    text = f"# Notes\n- {ORPHAN_FACT}\n" + filler(random.Random(7), 4 * budget + 400)
    target = budget - slack

    def cost(n: int) -> int:
        doc = text[:n]
        content = json.dumps({"ok": True, "content": doc, "bytes": len(doc.encode())}, ensure_ascii=False)
        return message_token_estimate(
            {"role": "tool", "tool_call_id": "call_0_0", "name": "read_memory_doc", "content": content}
        )

    lo, hi = 0, len(text)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if cost(mid) <= target else (lo, mid - 1)
    return text[:lo]


def orphan_check(sim: Simulation, ex: dict[str, Any], variant: Variant) -> Verdict:
    # B leaves room for the tool schemas and system prompt, so the provider-budget fix can show something.
    budget = fixed_cost() + 120 + ex["offset"]
    texts, _ = observations(sim, [(c, 0) for c in ex["steps"]])
    texts.append(f"Day 1, Hour {len(texts)}\n{ORPHAN_QUESTION}")
    config = ReactConfig(context_window=budget, trigger=BIG, keep=BIG)
    agent = make_agent(sim, variant, SavePolicy(read_on_probe=True), config)
    agent.env.write_memory_doc("agent_0", _document(budget, ex["slack"]))
    agent, _ = drive(agent, texts)
    return pr.check_read_delivered(agent.request_log, agent.act_log, ORPHAN_FACT, ORPHAN_QUESTION)


# -- 3. a large save empties the history ---------------------------------------------------------------
class LargeSaveExample(TypedDict):
    keep: Annotated[int, Field(ge=300, le=360)]
    write_chars: Annotated[int, Field(ge=0, le=3000)]
    prefix: Annotated[
        list[tuple[Annotated[int, Field(ge=0, le=1200)], Facts]], Field(min_length=1, max_length=2)
    ]
    last: Annotated[int, Field(ge=0, le=150)]


def large_save_strategy() -> Any:
    return st.fixed_dictionaries(
        {
            "keep": st.integers(300, 360),
            "write_chars": st.integers(0, 3000),
            "prefix": st.lists(st.tuples(st.integers(0, 1200), st.integers(0, 2)), min_size=1, max_size=2),
            "last": st.integers(0, 150),
        }
    )


def large_save_check(sim: Simulation, ex: dict[str, Any], variant: Variant) -> Verdict:
    texts, _ = observations(sim, [*ex["prefix"], (ex["last"], 1), (0, 0)])
    policy = SavePolicy(save="oversize", oversize_chars=ex["write_chars"])
    config = ReactConfig(context_window=BIG, trigger=BIG, keep=ex["keep"], max_hops=4)
    agent = make_agent(sim, variant, policy, config)
    agent, _ = drive(agent, texts[:-2])
    # The trigger fires on the save step's first hop (the reported prompt tokens include the tool schemas,
    # above K + 1) and not again after the compaction (the untrimmed estimate is then <= K); a quiet step
    # follows with the trigger out of reach.
    agent.config = replace(config, trigger=ex["keep"] + 1)
    agent, _ = drive(agent, texts[-2:-1])
    agent.config = config
    agent, results = drive(agent, texts[-1:])
    steps = dict(enumerate(texts))
    last = results[-1].t
    return pr.check_compaction_keeps_step(_ops(sim), agent.compaction_log, steps, ex["keep"], last)


# -- 4. no provider-token ceiling ----------------------------------------------------------------------
_KINDS = {"prose": None, "cjk": "价格库存订单客户供应商", "digits": "0123456789 "}


class CeilingExample(TypedDict):
    window: Annotated[int, Field(ge=60, le=1260)]
    steps: Annotated[
        list[tuple[Literal["cjk", "digits", "prose"], Annotated[int, Field(ge=0, le=3000)]]],
        Field(min_length=1, max_length=4),
    ]


def _text(sim: Simulation, kind: str, chars: int) -> str:
    alphabet = _KINDS[kind]
    if alphabet is None:
        return observation(sim.rng("merchantbench.claims.prose"), chars, [])
    rng = sim.rng(f"merchantbench.claims.{kind}")
    return "".join(rng.choice(alphabet) for _ in range(chars))


def ceiling_strategy() -> Any:
    kinds = st.sampled_from(sorted(_KINDS))
    return st.fixed_dictionaries(
        {
            "window": st.integers(60, 1260),
            "steps": st.lists(st.tuples(kinds, st.integers(0, 3000)), min_size=1, max_size=4),
        }
    )


def ceiling_check(sim: Simulation, ex: dict[str, Any], variant: Variant) -> Verdict:
    window = fixed_cost() + ex["window"]  # the example's window is what is left after system and tools
    config = ReactConfig(context_window=window, trigger=BIG, keep=BIG)
    agent = make_agent(sim, variant, SavePolicy(), config, exact=True)
    texts = {t: f"Day 1, Hour {t}\n" + _text(sim, kind, n) for t, (kind, n) in enumerate(ex["steps"])}
    agent, _ = drive(agent, list(texts.values()))
    return pr.check_window_service(sim.trace.data.requests, agent.request_log, window, texts)


# -- 4b. silent slide: the reminder never fires --------------------------------------------------------
SLIDE_WINDOW = 40_000
"""B = T for the silent-slide claim: above the ~27k where 0.84 B of prose plus the 4,127-token schemas
stays below B (a request trimmed to B then reports fewer than T tokens)."""


class SlideExample(TypedDict):
    steps: Annotated[list[Literal[0, 40000, 80000, 120000]], Field(min_length=2, max_length=5)]


def slide_strategy() -> Any:
    # The history must outgrow B (about 160,000 characters of prose) before a trim drops anything; the
    # search has to find how many steps of which size get there.
    return st.fixed_dictionaries(
        {"steps": st.lists(st.sampled_from([0, 40_000, 80_000, 120_000]), min_size=2, max_size=5)}
    )


def slide_check(sim: Simulation, ex: dict[str, Any], variant: Variant) -> Verdict:
    texts, _ = observations(sim, [(c, 0) for c in ex["steps"]])
    config = ReactConfig(context_window=SLIDE_WINDOW, trigger=SLIDE_WINDOW, keep=SLIDE_WINDOW // 2)
    agent = make_agent(sim, variant, SavePolicy(save="direct"), config, exact=True)
    agent, _ = drive(agent, texts)
    return pr.check_no_silent_drop(agent.request_log, sim.trace.data.requests, SLIDE_WINDOW)


# -- 5. a 425 loses the reminder -----------------------------------------------------------------------
class StaleExample(TypedDict):
    save: Literal["never", "direct"]
    steps: Annotated[
        list[tuple[Literal[0, 400, 800, 1500], Facts, Literal[0, 1] | None]],
        Field(min_length=3, max_length=5),
    ]


def stale_strategy() -> Any:
    # Each step is (observation chars, facts, the act index a 425 lands on or None). Sizes come from a
    # small set and a run has at least three steps (one to fill the window, one where the trigger fires,
    # one to compact): the search must still line a 425 up with the step whose first hop fires.
    step = st.tuples(st.sampled_from([0, 400, 800, 1500]), st.integers(0, 2), st.sampled_from([None, 0, 1]))
    return st.fixed_dictionaries(
        {"save": st.sampled_from(["never", "direct"]), "steps": st.lists(step, min_size=3, max_size=5)}
    )


def stale_check(sim: Simulation, ex: dict[str, Any], variant: Variant) -> Verdict:
    texts, _ = observations(sim, [(c, f) for c, f, _ in ex["steps"]])
    schedule = FaultSchedule(
        act=tuple((t, a, 425) for t, (_, _, a) in enumerate(ex["steps"]) if a is not None)
    )
    config = ReactConfig(context_window=BIG, trigger=t_small(), keep=K_SMALL)
    agent = make_agent(sim, variant, SavePolicy(save=ex["save"]), config, schedule=schedule)
    agent, results = drive(agent, texts)
    return pr.check_compactions_warned(_ops(sim), results[-1].t)


# -- 6. failed act, then a forced end-of-step that compacts --------------------------------------------
class ForcedExample(TypedDict):
    eos_first: bool
    steps: Annotated[list[tuple[Chars, Facts]], Field(min_length=1, max_length=4)]
    faults: Annotated[
        list[tuple[Annotated[int, Field(ge=0, le=3)], Annotated[int, Field(ge=0, le=2)], Literal[400, 500]]],
        Field(max_length=2),
    ]


def forced_strategy() -> Any:
    fault = st.tuples(st.integers(0, 3), st.integers(0, 2), st.sampled_from([400, 500]))
    return st.fixed_dictionaries(
        {"eos_first": st.booleans(), "steps": _SIZES, "faults": st.lists(fault, max_size=2)}
    )


def forced_check(sim: Simulation, ex: dict[str, Any], variant: Variant) -> Verdict:
    texts, _ = observations(sim, ex["steps"])
    schedule = FaultSchedule(act=tuple((t, a, s) for t, a, s in ex["faults"]))
    config = ReactConfig(context_window=BIG, trigger=t_small(), keep=K_SMALL)
    policy = SavePolicy(save="direct", eos_first=ex["eos_first"])
    agent = make_agent(sim, variant, policy, config, schedule=schedule)
    agent, results = drive(agent, texts)
    return pr.check_compaction_service(_ops(sim), agent.compaction_log, results[-1].t)


# -- 7. a reused call id -------------------------------------------------------------------------------
class ReuseExample(TypedDict):
    writes: Annotated[
        list[tuple[Literal["call_a", "call_b"] | None, Literal["alpha", "beta", "gamma"]]],
        Field(min_length=1, max_length=4),
    ]
    resend: Annotated[list[Annotated[int, Field(ge=0, le=3)]], Field(max_length=2)]


def reuse_strategy() -> Any:
    write = st.tuples(
        st.sampled_from(["call_a", "call_b", None]), st.sampled_from(["alpha", "beta", "gamma"])
    )
    return st.fixed_dictionaries(
        {"writes": st.lists(write, min_size=1, max_size=4), "resend": st.lists(st.integers(0, 3), max_size=2)}
    )


def reuse_check(sim: Simulation, ex: dict[str, Any], variant: Variant) -> Verdict:
    script = {
        (0, hop): Reply(tool_calls=(ToolCall("write_memory_doc", json.dumps({"content": c}), cid),))
        for hop, (cid, c) in enumerate(ex["writes"])
    }
    schedule = FaultSchedule(resend=tuple((0, a) for a in ex["resend"]))
    config = ReactConfig(context_window=BIG, trigger=BIG, keep=BIG)
    agent = make_agent(sim, variant, ScriptedModel(script), config, schedule=schedule)
    agent, _ = drive(agent, ["Day 1, Hour 0\nstock check"])
    sent = [
        json.loads(c["function"]["arguments"])["content"]
        for _, _, calls, _, _ in agent.act_log
        for c in calls
        if c["function"]["name"] == "write_memory_doc"
    ]
    doc = agent.env.read_memory_doc("agent_0")["content"]
    return pr.check_writes_applied(sent, doc, agent.env.memory_versions("agent_0"))


# -- 8. Forbidden erases a memory read -----------------------------------------------------------------
class ForbiddenExample(TypedDict):
    domain: bool
    steps: Annotated[list[tuple[bool, Literal[0, 1, 2] | None]], Field(min_length=1, max_length=3)]


FORBIDDEN_FACT = fact_token(1, "teal")


def forbidden_strategy() -> Any:
    # Each step is (a probe for FACT-0001?, the LLM call a Forbidden lands on or None).
    step = st.tuples(st.booleans(), st.sampled_from([None, 0, 1, 2]))
    return st.fixed_dictionaries({"domain": st.booleans(), "steps": st.lists(step, min_size=1, max_size=3)})


def forbidden_check(sim: Simulation, ex: dict[str, Any], variant: Variant) -> Verdict:
    llm = tuple((t, c, "forbidden") for t, (_, c) in enumerate(ex["steps"]) if c is not None)
    config = ReactConfig(context_window=BIG, trigger=BIG, keep=BIG)
    policy = SavePolicy(read_on_probe=True, domain_calls=ex["domain"])
    agent = make_agent(sim, variant, policy, config, schedule=FaultSchedule(llm=llm))
    agent.env.write_memory_doc("agent_0", "# Notes\n- " + FORBIDDEN_FACT + "\n")
    texts = [
        f"Day 1, Hour {t}\n" + ("Question: what is the value of FACT-0001?" if probe else "quiet hour")
        for t, (probe, _) in enumerate(ex["steps"])
    ]
    agent, _ = drive(agent, texts)
    results = (text for _, _, text in agent.env.results_log)
    return pr.check_read_kept(agent.request_log, agent.act_log, FORBIDDEN_FACT, agent.history.msgs, results)


# -- 9. evicted turns never come back from traces ------------------------------------------------------
class RecallExample(TypedDict):
    steps: Annotated[list[tuple[Chars, Annotated[int, Field(ge=0, le=1)]]], Field(min_length=1, max_length=4)]
    probe: Annotated[int, Field(ge=0, le=3)]


def recall_strategy() -> Any:
    return st.fixed_dictionaries(
        {
            "steps": st.lists(st.tuples(st.integers(0, 1500), st.integers(0, 1)), min_size=1, max_size=4),
            "probe": st.integers(0, 3),
        }
    )


def recall_check(sim: Simulation, ex: dict[str, Any], variant: Variant) -> Verdict:
    texts, facts = observations(sim, ex["steps"])
    if not facts:
        return Verdict.ok("no facts")
    fid = facts[min(ex["probe"], len(facts) - 1)]
    texts.append(f"Day 1, Hour {len(texts)}\nQuestion: what is the value of {fid}?")
    config = ReactConfig(context_window=BIG, trigger=t_small(), keep=K_SMALL)
    agent = make_agent(sim, variant, SavePolicy(), config)
    agent.record_every = 1
    needed = [[] for _ in texts[:-1]] + [[fid]]
    drive(agent, texts, needed)
    return pr.check_probe_in_context(sim.trace.data.requests, facts)
