"""Each MerchantBench claim's workload and driver: a Hypothesis strategy of examples and a check that runs
the example on a variant of the model and hands what it recorded to a pure checker in ``properties.py``.

Claims use small windows (T, K, B in the hundreds or low thousands of estimated tokens) so that examples
are a few short steps; the mechanics are the same as at the defaults.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from hypothesis import strategies as st

from sim.claims import Verdict
from sim.engine import Simulation
from sim.faults import Crash, FaultPlan, WriteFailed
from sim.text import fact_token, observation
from sim.tokens import count_tokens
from sim.variant import Variant
from systems.merchantbench import faults as fp
from systems.merchantbench import properties as pr
from systems.merchantbench.model import (
    LEGACY_VERSION_MARKER,
    TOOLS_JSON,
    VERSION_MARKER,
    MerchantEnv,
    ReactAgent,
    estimate_tokens,
    message_token_estimate,
)
from systems.merchantbench.policies import SavePolicy, ScriptedModel
from systems.merchantbench.state import (
    FaultSchedule,
    ReactConfig,
    Reply,
    StepResult,
    ToolCall,
)

SYSTEM = "merchantbench"
SYSTEM_PROMPT = "You run a small online shop. Keep it solvent."
BIG = 10**9
#: What the provider counts besides the history (tool schemas plus the system message), in estimated
#: tokens. Triggers sit above OVERHEAD + K: at or below it every hop after a compaction fires again (a
#: reminder storm, which is upstream behaviour when T is configured that low).
OVERHEAD = estimate_tokens(TOOLS_JSON) + message_token_estimate({"role": "system", "content": SYSTEM_PROMPT})
T_SMALL, K_SMALL = OVERHEAD + 200, 100


def _observations(sim: Simulation, sizes: list[Any], *, first_fact: int = 1) -> tuple[list[str], list[str]]:
    """Observation texts for (chars, n_facts) pairs, and every fact id they carry."""
    rng = sim.rng("merchantbench.claims.obs")
    out, facts = [], []
    n = first_fact
    for t, (chars, n_facts) in enumerate(sizes):
        toks = [fact_token(n + i, "amber") for i in range(n_facts)]
        facts += [tok.split("=")[0] for tok in toks]
        n += n_facts
        out.append(f"Day 1, Hour {t}\n" + observation(rng, chars, toks))
    return out, facts


def _agent(
    sim: Simulation,
    variant: Variant,
    model: Any,
    config: ReactConfig,
    *,
    schedule: FaultSchedule | None = None,
    exact: bool = False,
    tree: Any = None,
) -> ReactAgent:
    env = MerchantEnv(
        sim, tree or sim.tree("memory"), variant=variant, schedule=schedule, brief=SYSTEM_PROMPT
    )
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
    agent.keep_log = True
    return agent


def _run(
    agent: ReactAgent, observations: list[str], needed: list[list[str]] | None = None
) -> list[StepResult]:
    out = []
    for i, obs in enumerate(observations):
        if agent.env.t != i:  # a 425 closed a hook: the step index moved on
            pass
        out.append(agent.run_step(obs, needed=(needed[i] if needed else ())))
    return out


_SIZES = st.lists(st.tuples(st.integers(0, 1500), st.integers(0, 2)), min_size=1, max_size=4)


# -- 1. suffix eviction --------------------------------------------------------------------------------
def suffix_strategy() -> Any:
    return st.fixed_dictionaries(
        {
            "save": st.sampled_from(["never", "reminder", "every_k"]),
            "k": st.integers(1, 3),
            "steps": _SIZES,
        }
    )


def suffix_check(sim: Simulation, ex: dict[str, Any], variant: Variant) -> Verdict:
    obs, facts = _observations(sim, ex["steps"])
    policy = SavePolicy(save=ex["save"], k=ex["k"])
    agent = _agent(
        sim,
        variant,
        policy,
        ReactConfig(context_window=BIG, trigger=T_SMALL, keep=K_SMALL),
    )
    _run(agent, obs)
    return pr.check_facts_recoverable(
        facts, agent.history.msgs, agent.env.read_memory_doc("agent_0")["content"]
    )


# -- 2. orphaned read result ---------------------------------------------------------------------------
def orphan_strategy() -> Any:
    return st.fixed_dictionaries(
        {
            "budget": st.integers(40, 400),
            "doc_chars": st.integers(0, 800),
            "steps": st.lists(st.integers(0, 400), min_size=0, max_size=3),
        }
    )


def orphan_check(sim: Simulation, ex: dict[str, Any], variant: Variant) -> Verdict:
    obs, _ = _observations(sim, [(c, 0) for c in ex["steps"]])
    obs.append(f"Day 1, Hour {len(obs)}\nQuestion: what is the value of FACT-0001?")
    agent = _agent(
        sim,
        variant,
        SavePolicy(read_on_probe=True),
        ReactConfig(context_window=ex["budget"], trigger=BIG, keep=BIG),
    )
    rng = sim.rng("merchantbench.claims.doc")
    agent.env.write_memory_doc("agent_0", fact_token(1, "teal") + " " + observation(rng, ex["doc_chars"], []))
    _run(agent, obs)
    return pr.check_read_results_delivered(agent.request_log, agent.act_log)


# -- 3. a large save empties the history ---------------------------------------------------------------
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
    obs, _ = _observations(sim, [*ex["prefix"], (ex["last"], 1)])
    policy = SavePolicy(save="oversize", oversize_chars=ex["write_chars"])
    config = ReactConfig(context_window=BIG, trigger=BIG, keep=ex["keep"], max_hops=4)
    agent = _agent(sim, variant, policy, config)
    _run(agent, obs[:-1])
    # The trigger fires on the last step's first hop (the reported prompt tokens include the tool
    # schemas, above K + 1) and not again after the compaction (the untrimmed estimate is then <= K).
    agent.config = replace(config, trigger=ex["keep"] + 1)
    agent.run_step(obs[-1])
    return pr.check_compaction_keeps_history(sim.trace.data.ops)


# -- 4. no provider-token ceiling ----------------------------------------------------------------------
_KINDS = {"prose": None, "cjk": "价格库存订单客户供应商", "digits": "0123456789 "}


def _text(sim: Simulation, kind: str, chars: int) -> str:
    alphabet = _KINDS[kind]
    if alphabet is None:
        return observation(sim.rng("merchantbench.claims.prose"), chars, [])
    rng = sim.rng(f"merchantbench.claims.{kind}")
    return "".join(rng.choice(alphabet) for _ in range(chars))


def ceiling_strategy() -> Any:
    floor = count_tokens(TOOLS_JSON) + count_tokens(SYSTEM_PROMPT) + 60
    return st.fixed_dictionaries(
        {
            "window": st.integers(floor, floor + 1200),
            "steps": st.lists(
                st.tuples(st.sampled_from(sorted(_KINDS)), st.integers(0, 3000)), min_size=1, max_size=4
            ),
        }
    )


def ceiling_check(sim: Simulation, ex: dict[str, Any], variant: Variant) -> Verdict:
    agent = _agent(
        sim,
        variant,
        SavePolicy(),
        ReactConfig(context_window=ex["window"], trigger=BIG, keep=BIG),
        exact=True,
    )
    for t, (kind, chars) in enumerate(ex["steps"]):
        agent.run_step(f"Day 1, Hour {t}\n" + _text(sim, kind, chars))
    return pr.check_request_ceiling(sim.trace.data.requests, ex["window"])


# -- 4b. silent slide: the reminder never fires --------------------------------------------------------
def slide_strategy() -> Any:
    # Observation sizes from a small set: the history must outgrow B (about 8,000 characters of prose)
    # before a trim drops anything, and the search has to find how many steps of which size get there.
    size = st.sampled_from([0, 1000, 2000, 3000])
    return st.fixed_dictionaries({"steps": st.lists(size, min_size=2, max_size=5)})


def slide_check(sim: Simulation, ex: dict[str, Any], variant: Variant) -> Verdict:
    obs, _ = _observations(sim, [(c, 0) for c in ex["steps"]])
    agent = _agent(
        sim,
        variant,
        SavePolicy(save="direct"),
        ReactConfig(context_window=2000, trigger=2000, keep=1000),
        exact=True,
    )
    _run(agent, obs)
    return pr.check_no_silent_drop(agent.request_log)


# -- 5. a 425 loses the reminder -----------------------------------------------------------------------
def stale_strategy() -> Any:
    # Each step is (observation chars, facts, the act index a 425 lands on or None). Sizes come from a
    # small set and a run has at least three steps (one to fill the window, one where the trigger fires,
    # one to compact): the search must still line a 425 up with the step whose first hop fires.
    step = st.tuples(st.sampled_from([0, 400, 800, 1500]), st.integers(0, 2), st.sampled_from([None, 0, 1]))
    return st.fixed_dictionaries(
        {
            "save": st.sampled_from(["never", "direct"]),
            "steps": st.lists(step, min_size=3, max_size=5),
        }
    )


def stale_check(sim: Simulation, ex: dict[str, Any], variant: Variant) -> Verdict:
    obs, _ = _observations(sim, [(c, f) for c, f, _ in ex["steps"]])
    schedule = FaultSchedule(
        act=tuple((t, a, 425) for t, (_, _, a) in enumerate(ex["steps"]) if a is not None)
    )
    agent = _agent(
        sim,
        variant,
        SavePolicy(save=ex["save"]),
        ReactConfig(context_window=BIG, trigger=T_SMALL, keep=K_SMALL),
        schedule=schedule,
    )
    for o in obs:
        agent.run_step(o)
    return pr.check_compactions_saw_reminder(sim.trace.data.ops)


# -- 6. failed act, then a forced end-of-step that compacts --------------------------------------------
def forced_strategy() -> Any:
    return st.fixed_dictionaries(
        {
            "eos_first": st.booleans(),
            "steps": _SIZES,
            "faults": st.lists(
                st.tuples(st.integers(0, 3), st.integers(0, 2), st.sampled_from([400, 500])), max_size=2
            ),
        }
    )


def forced_check(sim: Simulation, ex: dict[str, Any], variant: Variant) -> Verdict:
    obs, _ = _observations(sim, ex["steps"])
    schedule = FaultSchedule(act=tuple((t, a, s) for t, a, s in ex["faults"]))
    agent = _agent(
        sim,
        variant,
        SavePolicy(save="direct", eos_first=ex["eos_first"]),
        ReactConfig(context_window=BIG, trigger=T_SMALL, keep=K_SMALL),
        schedule=schedule,
    )
    for o in obs:
        agent.run_step(o)
    return pr.check_no_compaction_after_failed_write(sim.trace.data.ops)


# -- 7. a reused call id -------------------------------------------------------------------------------
def reuse_strategy() -> Any:
    write = st.tuples(
        st.sampled_from(["call_a", "call_b", None]), st.sampled_from(["alpha", "beta", "gamma"])
    )
    return st.fixed_dictionaries({"writes": st.lists(write, min_size=1, max_size=4)})


def reuse_check(sim: Simulation, ex: dict[str, Any], variant: Variant) -> Verdict:
    script = {
        (0, hop): Reply(tool_calls=(ToolCall("write_memory_doc", json.dumps({"content": c}), cid),))
        for hop, (cid, c) in enumerate(ex["writes"])
    }
    agent = _agent(
        sim,
        variant,
        ScriptedModel(script),
        ReactConfig(context_window=BIG, trigger=BIG, keep=BIG),
    )
    agent.run_step("Day 1, Hour 0\nstock check")
    sent = [
        json.loads(c["function"]["arguments"])["content"]
        for _, _, calls, _, _ in agent.act_log
        for c in calls
        if c["function"]["name"] == "write_memory_doc"
    ]
    doc = agent.env.read_memory_doc("agent_0")["content"]
    return pr.check_writes_applied(sent, doc, agent.env.memory_versions("agent_0"))


# -- 8. Forbidden erases a memory read -----------------------------------------------------------------
def forbidden_strategy() -> Any:
    # Each step is (a probe for FACT-0001?, the LLM call a Forbidden lands on or None).
    step = st.tuples(st.booleans(), st.sampled_from([None, 0, 1, 2]))
    return st.fixed_dictionaries({"domain": st.booleans(), "steps": st.lists(step, min_size=1, max_size=3)})


def forbidden_check(sim: Simulation, ex: dict[str, Any], variant: Variant) -> Verdict:
    schedule = FaultSchedule(
        llm=tuple((t, c, "forbidden") for t, (_, c) in enumerate(ex["steps"]) if c is not None)
    )
    agent = _agent(
        sim,
        variant,
        SavePolicy(read_on_probe=True, domain_calls=ex["domain"]),
        ReactConfig(context_window=BIG, trigger=BIG, keep=BIG),
        schedule=schedule,
    )
    agent.env.write_memory_doc("agent_0", "# Notes\n- " + fact_token(1, "teal") + "\n")
    for t, (probe, _) in enumerate(ex["steps"]):
        q = "Question: what is the value of FACT-0001?" if probe else "quiet hour"
        agent.run_step(f"Day 1, Hour {t}\n{q}")
    return pr.check_tool_results_intact(
        agent.history.msgs, (text for _, _, text in agent.env.results_log), names=("read_memory_doc",)
    )


# -- 9. agent ids alias (documents) --------------------------------------------------------------------
_IDS = st.one_of(
    st.sampled_from(["agent_0", "agent 0", "agent:0", "_agent_0_", "Agent_0", "José", "Josè", "../x", "x"]),
    st.text(alphabet="aA0_ .:/-é🙂", max_size=5),
)


def alias_strategy() -> Any:
    return st.fixed_dictionaries({"a": _IDS, "b": _IDS, "casefold": st.booleans()})


def alias_check(sim: Simulation, ex: dict[str, Any], variant: Variant) -> Verdict:
    if ex["a"] == ex["b"]:
        return Verdict.ok("same id")
    env = MerchantEnv(sim, sim.tree("memory"), variant=variant, casefold_paths=ex["casefold"])
    env.write_memory_doc(ex["a"], "note of A")
    env.write_memory_doc(ex["b"], "note of B")
    reads = {
        ex["a"]: env.read_memory_doc(ex["a"])["content"],
        ex["b"]: env.read_memory_doc(ex["b"])["content"],
    }
    return pr.check_documents_isolated(reads, {ex["a"]: "note of A", ex["b"]: "note of B"})


# -- 9b. index aliasing: one agent's document is another's history -------------------------------------
def index_strategy() -> Any:
    return st.fixed_dictionaries(
        {
            "base": st.sampled_from(["agent_0", "agent 0", "x"]),
            "suffix": st.sampled_from(["", ".md", ".history", " history", ".history.md", "_history", "."]),
        }
    )


def index_check(sim: Simulation, ex: dict[str, Any], variant: Variant) -> Verdict:
    b, a = ex["base"], ex["base"] + ex["suffix"]
    if a == b:
        return Verdict.ok("same id")
    env = MerchantEnv(sim, sim.tree("memory"), variant=variant)
    env.write_memory_doc(b, "note of B")
    path = env.memory_history_path(b)
    before = env.tree.read_bytes(path)
    env.write_memory_doc(a, "junk")
    after = env.tree.read_bytes(path) if env.tree.exists(path) else b""
    return pr.check_history_append_only(before, after)


# -- 10. version numbers inflate -----------------------------------------------------------------------
_PIECES = [
    "notes",
    "\n",
    VERSION_MARKER + "9 -->",
    LEGACY_VERSION_MARKER + "1 -->",
    "## Memory version 5",
    "<!-- merchantbench-memory-version",
]


def version_strategy() -> Any:
    body = st.lists(st.sampled_from(_PIECES), max_size=3).map("".join)
    return st.fixed_dictionaries({"bodies": st.lists(body, min_size=1, max_size=4)})


def version_check(sim: Simulation, ex: dict[str, Any], variant: Variant) -> Verdict:
    from systems.merchantbench.model import parse_history_entries

    env = MerchantEnv(sim, sim.tree("memory"), variant=variant)
    for body in ex["bodies"]:
        env.write_memory_doc("agent_0", body)
    data = env.tree.read_bytes(env.memory_history_path("agent_0"))
    return pr.check_versions_consecutive([v for v, _ in parse_history_entries(data)])


# -- 11. overwrite then append is not transactional ----------------------------------------------------
_POINTS = [
    f"crash@{fp.WRITE_DOC_PARTIAL}",
    f"crash@{fp.WRITE_DOC_AFTER_DOCUMENT}",
    f"fail@{fp.WRITE_DOC_HISTORY_APPEND}",
    f"crash@{fp.WRITE_DOC_BEFORE_REPLACE}",
]


def txn_strategy() -> Any:
    return st.fixed_dictionaries(
        {
            "writes": st.lists(st.sampled_from(["alpha", "beta", "gamma delta"]), min_size=1, max_size=3),
            "fault": st.sampled_from(_POINTS),
            "nth": st.integers(1, 3),
        }
    )


def txn_check(sim: Simulation, ex: dict[str, Any], variant: Variant) -> Verdict:
    sim.faults = FaultPlan.parse([f"{ex['fault']}#{ex['nth']}"])
    env = MerchantEnv(sim, sim.tree("memory"), variant=variant)
    for body in ex["writes"]:
        try:
            env.write_memory_doc("agent_0", body)
        except (Crash, WriteFailed):
            break
    doc_path, hist_path = env.memory_doc_path("agent_0"), env.memory_history_path("agent_0")
    doc = env.tree.read_bytes(doc_path) if env.tree.exists(doc_path) else None
    hist = env.tree.read_bytes(hist_path) if env.tree.exists(hist_path) else b""
    return pr.check_document_committed(doc, hist)


# -- 12. CRLF not preserved ----------------------------------------------------------------------------
def crlf_strategy() -> Any:
    return st.fixed_dictionaries({"content": st.text(alphabet="ab\r\n é", max_size=8)})


def crlf_check(sim: Simulation, ex: dict[str, Any], variant: Variant) -> Verdict:
    env = MerchantEnv(sim, sim.tree("memory"), variant=variant)
    w = env.write_memory_doc("agent_0", ex["content"])
    return pr.check_roundtrip(ex["content"], env.read_memory_doc("agent_0"), w)


# -- 13. evicted turns never come back from traces -----------------------------------------------------
def recall_strategy() -> Any:
    return st.fixed_dictionaries(
        {
            "steps": st.lists(st.tuples(st.integers(0, 1500), st.integers(0, 1)), min_size=1, max_size=4),
            "probe": st.integers(0, 3),
        }
    )


def recall_check(sim: Simulation, ex: dict[str, Any], variant: Variant) -> Verdict:
    obs, facts = _observations(sim, ex["steps"])
    if not facts:
        return Verdict.ok("no facts")
    fid = facts[min(ex["probe"], len(facts) - 1)]
    obs.append(f"Day 1, Hour {len(obs)}\nQuestion: what is the value of {fid}?")
    agent = _agent(
        sim,
        variant,
        SavePolicy(),
        ReactConfig(context_window=BIG, trigger=T_SMALL, keep=K_SMALL),
        exact=True,
    )
    needed = [[] for _ in obs[:-1]] + [[fid]]
    _run(agent, obs, needed)
    return pr.check_probe_in_context(sim.trace.data.requests, facts)
