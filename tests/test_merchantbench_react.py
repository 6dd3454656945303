"""The ReAct 160k/compact-30k baseline (MerchantBench): trigger, compaction, request assembly, errors,
mirroring upstream's tests/test_react_160k_compact_30k.py."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st
from strategies_merchantbench import FAULT_SCHEDULES, SAVE_POLICY_KW

from sim.engine import Simulation
from sim.text import extract_facts
from sim.tokens import count_tokens
from sim.variant import Variant
from systems.merchantbench import (
    MerchantEnv,
    ReactAgent,
    ReactConfig,
    SavePolicy,
    ScriptedModel,
    history_token_estimate,
    trim_messages_to_token_budget,
)
from systems.merchantbench.design import DESIGN
from systems.merchantbench.model import (
    DEFAULT_DENYLIST,
    FALLBACK_HOPS_EXHAUSTED,
    FALLBACK_NO_TOOL_CALL,
    POLICY_REDACTED_TOOL_CONTENT,
    TOOLS_JSON,
    UPSTREAM_SCHEMA_TOKENS,
    compaction_notice,
    compaction_reminder,
    estimate_tokens,
    is_maintenance,
    message_token_estimate,
    tools_json,
)
from systems.merchantbench.state import (
    PROVIDER_BUDGET,
    REDACT_RETRY_COPY,
    SAVE_BEFORE_COMPACT,
    FaultSchedule,
    Reply,
    ToolCall,
)

BIG = 10**9


def _agent(
    script=None,
    *,
    model=None,
    config=None,
    schedule=None,
    variant=None,
    denylist=DEFAULT_DENYLIST,
    tokenizer="cl100k",
    prompt="You run a shop.",
    schema_tokens=UPSTREAM_SCHEMA_TOKENS,
) -> tuple[Simulation, MerchantEnv, ReactAgent]:
    sim = Simulation(0)
    env = MerchantEnv(
        sim,
        sim.tree("memory"),
        schedule=schedule,
        tool_denylist=denylist,
        brief=prompt,
        schema_tokens=schema_tokens,
    )
    agent = ReactAgent(
        sim,
        env,
        "agent_0",
        model or ScriptedModel(script or {}),
        config=config or ReactConfig(context_window=BIG, trigger=BIG, keep=BIG),
        variant=variant or Variant(),
        provider_tokenizer=tokenizer,
    )
    return sim, env, agent


def _write(content: str, cid: str | None = None) -> Reply:
    return Reply(tool_calls=(ToolCall("write_memory_doc", json.dumps({"content": content}), cid),))


READ = Reply(tool_calls=(ToolCall("read_memory_doc", "{}"),))


def test_119_reported_tokens_do_not_fire_trigger_120() -> None:
    """Upstream: 119 provider tokens against T=120 does not fire, though the history estimate is larger."""
    _sim, _env, agent = _agent({}, config=ReactConfig(context_window=BIG, trigger=120, keep=50))
    agent.history.append({"role": "user", "content": "x" * 2000})
    agent.last_prompt_tokens = 119
    agent.maybe_add_compaction_reminder()

    assert agent.history.total > 120
    assert agent.compaction_pending is False
    agent.last_prompt_tokens = 120
    agent.maybe_add_compaction_reminder()
    assert agent.compaction_pending is True


def test_missing_usage_falls_back_to_history_estimate() -> None:
    """Upstream: with usage missing, the untrimmed history estimate drives the trigger."""
    _sim, _env, agent = _agent(
        {(0, 0): Reply(content="ok")},
        config=ReactConfig(context_window=BIG, trigger=120, keep=50),
        schedule=FaultSchedule(no_usage=((0, 0),)),
    )
    agent.run_step("short")

    assert agent.last_prompt_tokens == 0
    agent.history.append({"role": "user", "content": "x" * 2000})
    agent.maybe_add_compaction_reminder()
    assert agent.compaction_pending is True
    assert agent.history.msgs[-1]["content"] == compaction_reminder(120, 50)


def test_reminder_then_write_compacts_after_the_act() -> None:
    """Upstream: T=120, K=50, B=200: reminder, then a write; the act sends exactly [reminder, assistant] with
    compacted True; afterwards the history is at most K and the old state is gone."""
    script = {(0, 0): Reply(content="ok", prompt_tokens=500), (1, 0): _write("notes")}
    _sim, env, agent = _agent(script, config=ReactConfig(context_window=200, trigger=120, keep=50))
    agent.run_step("Day 1, Hour 0 old state " + "x" * 400)
    agent.run_step("Day 1, Hour 1")
    step = env.read_step_index(1)
    write_turn = step["turns"][0]

    assert [m["role"] for m in step["messages"][1:3]] == ["user", "assistant"]
    assert step["messages"][1]["content"] == compaction_reminder(120, 50)
    assert write_turn["context"]["compacted"] is True
    assert "compacted" not in step["turns"][1]["context"]
    assert agent.compactions == 1
    assert not any("old state" in str(m.get("content")) for m in agent.history.msgs)
    assert agent.last_prompt_tokens > 0  # the EOS hop's reply reset the stale value after compaction


def test_notice_path_without_the_write_tool() -> None:
    """Upstream: without write_memory_doc the notice path trims at once; history stays small."""
    script = {(0, 0): Reply(content="ok", prompt_tokens=500)}
    _sim, env, agent = _agent(
        script,
        config=ReactConfig(context_window=BIG, trigger=120, keep=50),
        denylist=("write_memory_doc", "read_memory_doc"),
    )
    agent.run_step("old " + "x" * 400)
    agent.run_step("Day 1, Hour 1")

    notice = compaction_notice(120, 50)
    assert env.read_step_index(1)["messages"][1]["content"] == notice
    assert agent.history.total <= 80
    assert agent.compactions == 1


def test_context_tokens_reported_else_request_estimate() -> None:
    """Upstream: context tokens are the reported prompt tokens, else the request estimate."""
    _sim, env, agent = _agent(
        {(0, 0): Reply(content="a", prompt_tokens=123)}, schedule=FaultSchedule(no_usage=((1, 0),))
    )
    agent.run_step("hello")
    agent.run_step("again")

    assert env.read_step_index(0)["turns"][0]["context"] == {"tokens": 123}
    assert env.read_step_index(1)["turns"][0]["context"] == {"tokens": agent.last_request_estimate}


def test_retry_sleeps_2_then_5() -> None:
    """Upstream: two burst errors then success sleep 2 s and 5 s (simulated); the act after them reports
    the two failed attempts, and the counters restart at 0 once it succeeds (react 386-390, 649)."""
    sim, env, agent = _agent({}, schedule=FaultSchedule(llm=((0, 0, "burst"), (0, 1, "burst"))))
    agent.run_step("hello")

    assert sim.now == 3 * agent.config.llm_latency_s + 2 + 5
    assert env.read_step_index(0)["turns"][0]["context"]["provider_api_failed_attempts"] == 2
    assert not any(agent.health.values())


def test_allocation_quota_nine_calls_then_exhausted() -> None:
    """Upstream: AllocationQuota: 9 calls (1 + 8 retries), retry_exhausted 1, then an [llm-error] EOS."""
    sched = FaultSchedule(llm=tuple((0, i, "allocation") for i in range(12)))
    sim, env, agent = _agent({}, schedule=sched)
    result = agent.run_step("hello")

    assert agent.hops == 9
    assert env.read_step_index(0)["turns"][0]["context"]["retry_exhausted"] == 1
    assert result.outcome == "forced" and result.detail.startswith("[llm-error] RateLimitError: ")
    assert "detail_code=Throttling.AllocationQuota retries=8" in result.detail
    assert sim.now == 9 * agent.config.llm_latency_s + 30 + 60 + 6 * 120
    assert agent.history.msgs == [{"role": "user", "content": "hello"}]  # [llm-error] EOS not remembered


def test_no_tool_call_becomes_eos_and_only_content_is_kept() -> None:
    """Upstream: a reply without tool calls is an EOS on the same turn; history keeps [user, assistant]."""
    _sim, env, agent = _agent({(0, 0): Reply(content="done for now", reasoning_content="why")})
    agent.run_step("hello")
    sent = next(m for m in env.read_step_index(0)["messages"] if m["role"] == "assistant")

    assert sent["tool_calls"][0]["function"]["name"] == "end_of_step"
    assert agent.history.msgs == [
        {"role": "user", "content": "hello"},
        {"role": "assistant", "content": "done for now", "reasoning_content": "why"},
    ]


def test_empty_reply_uses_the_fallback_text() -> None:
    """An empty reply sends the fallback text, which is then remembered."""
    _sim, _env, agent = _agent({(0, 0): Reply()})
    agent.run_step("hello")

    assert agent.history.msgs[-1] == {"role": "assistant", "content": FALLBACK_NO_TOOL_CALL}


def _two_reads() -> dict:
    calls = (ToolCall("read_memory_doc", "{}", "r1"), ToolCall("query_balance", "{}", "r2"))
    return {(0, 0): Reply(tool_calls=calls, reasoning_content="think")}


def test_forbidden_redacts_last_tool_group_in_place_and_retries_without_sleep() -> None:
    """Upstream: Forbidden redacts both tool messages of the last group (ids and reasoning kept) in
    history, and retries at once without using the retry budget."""
    sim, _env, agent = _agent(_two_reads(), schedule=FaultSchedule(llm=((0, 1, "forbidden"),)))
    agent.run_step("hello")
    tools = [m for m in agent.history.msgs if m["role"] == "tool"]

    assert [m["content"] for m in tools] == [POLICY_REDACTED_TOOL_CONTENT] * 2
    assert [m["tool_call_id"] for m in tools] == ["r1", "r2"]
    assert agent.history.msgs[1]["reasoning_content"] == "think"
    assert sim.now == 3 * agent.config.llm_latency_s
    assert json.loads(POLICY_REDACTED_TOOL_CONTENT) == {
        "hint": "continue with known numeric facts or query narrower if needed",
        "reason": "provider returned Forbidden; previous tool output was removed from the LLM prompt",
        "redacted_for_policy_retry": True,
    }


def test_redact_retry_copy_fix_keeps_history() -> None:
    """Fixed variant: only the retry's request is redacted; history keeps the results."""
    _sim, _env, agent = _agent(
        _two_reads(),
        schedule=FaultSchedule(llm=((0, 1, "forbidden"),)),
        variant=DESIGN.switches.fixed(REDACT_RETRY_COPY),
    )
    agent.run_step("hello")

    assert POLICY_REDACTED_TOOL_CONTENT not in [m.get("content") for m in agent.history.msgs]


def test_forbidden_then_burst_uses_the_retry_budget() -> None:
    """Upstream: Forbidden then a burst error: the burst retry sleeps 2 s; a second Forbidden is final."""
    sched = FaultSchedule(llm=((0, 0, "forbidden"), (0, 1, "burst")))
    sim, _env, agent = _agent({}, schedule=sched)
    agent.run_step("hello")
    _sim2, _env2, agent2 = _agent({}, schedule=FaultSchedule(llm=((0, 0, "forbidden"), (0, 1, "forbidden"))))
    result = agent2.run_step("hello")

    assert sim.now == 3 * agent.config.llm_latency_s + 2
    assert result.outcome == "forced" and "detail_code=Forbidden" in result.detail


def test_invalid_parameter_and_unknown_are_not_retried() -> None:
    """Upstream: InvalidParameter and unknown errors are not retried."""
    for kind in ("invalid", "unknown"):
        _sim, _env, agent = _agent({}, schedule=FaultSchedule(llm=((0, 0, kind),)))
        result = agent.run_step("hello")

        assert agent.hops == 1 and result.outcome == "forced"
        assert "retry_exhausted" not in _env.read_step_index(0)["turns"][0]["context"]


def test_invalid_json_arguments_wrapped_only_in_the_request() -> None:
    """Upstream: invalid JSON arguments are wrapped in the request; history keeps the raw arguments."""
    script = {(0, 0): Reply(tool_calls=(ToolCall("query_balance", "not json", "q"),))}
    _sim, _env, agent = _agent(script)
    agent.run_step("hello")
    sent = next(m for m in agent.last_request if m.get("tool_calls"))

    assert sent["tool_calls"][0]["function"]["arguments"] == '{"_invalid_json_arguments": "not json"}'
    assert agent.history.msgs[1]["tool_calls"][0]["function"]["arguments"] == "not json"


def test_425_truncates_history_but_keeps_pending_and_reminder_copy() -> None:
    """Upstream: a 425 drops this step from history but keeps pending and the pre-assistant reminder."""
    script = {(0, 0): Reply(content="ok", prompt_tokens=500), (1, 0): _write("notes")}
    _sim, env, agent = _agent(
        script,
        config=ReactConfig(context_window=BIG, trigger=120, keep=50),
        schedule=FaultSchedule(act=((1, 0, 425),)),
    )
    agent.run_step("first")
    n0 = len(agent.history)
    result = agent.run_step("second")

    assert result.outcome == "stale"
    assert len(agent.history) == n0
    assert agent.compaction_pending is True
    assert agent.pre_assistant == [{"role": "user", "content": compaction_reminder(120, 50)}]
    assert env.t == 2  # the hook closed


def test_500_forces_an_act_error_eos() -> None:
    """Upstream: a 500 forces an [act-error] end-of-step."""
    _sim, _env, agent = _agent({(0, 0): READ}, schedule=FaultSchedule(act=((0, 0, 500),)))
    result = agent.run_step("hello")

    assert result.outcome == "forced"
    assert agent.history.msgs[-1]["content"] == (
        "[act-error] HTTPError: 500 Server Error: INTERNAL SERVER ERROR for url: "
        "http://localhost:5050/runs/run-0001/agents/agent_0/act"
    )


def test_forced_eos_failure_clears_pending_but_keeps_reminder() -> None:
    """A failed forced EOS clears pending, the pre-assistant list and last_prompt_tokens."""
    script = {(0, 0): Reply(content="ok", prompt_tokens=500), (1, 0): READ}
    sched = FaultSchedule(act=((1, 0, 500), (1, 1, 500)))
    _sim, _env, agent = _agent(
        script, config=ReactConfig(context_window=BIG, trigger=120, keep=50), schedule=sched
    )
    agent.run_step("first")
    agent.run_step("second")

    assert (agent.compaction_pending, agent.pre_assistant, agent.last_prompt_tokens) == (False, [], 0)
    assert any(is_maintenance(m) for m in agent.history.msgs)


def test_compaction_after_any_successful_act() -> None:
    """Compaction runs after a read (nothing saved); with compact-after-save it waits for a write."""
    script = {(0, 0): Reply(content="ok", prompt_tokens=500), (1, 0): READ, (1, 1): _write("n")}
    cfg = ReactConfig(context_window=BIG, trigger=120, keep=50)
    for variant, compacted_after in (
        (Variant(), "read_memory_doc"),
        (DESIGN.switches.fixed(SAVE_BEFORE_COMPACT), "write_memory_doc"),
    ):
        sim, _env, agent = _agent(script, config=cfg, variant=variant)
        agent.run_step("first " + "x" * 300)
        agent.run_step("second")
        ops = [
            o.op if o.op != "act" else o.data["tools"][0]
            for o in sim.trace.data.ops
            if o.op in ("act", "compact")
        ]

        assert ops[ops.index("compact") - 1] == compacted_after


def test_hop_budget_exhausted_forces_eos() -> None:
    """When the hops run out the loop forces an EOS with the fallback text."""
    script = {(0, h): READ for h in range(3)}
    _sim, _env, agent = _agent(
        script, config=ReactConfig(context_window=BIG, trigger=BIG, keep=BIG, max_hops=3)
    )
    result = agent.run_step("hello")

    assert result.detail == "hops" and agent.history.msgs[-1]["content"] == FALLBACK_HOPS_EXHAUSTED


def test_system_prompt_outside_history_and_first_brief_only() -> None:
    """The system prompt comes from the first brief only, stays outside history, and is not a message for
    Claude models (it is still counted)."""
    _sim, _env, agent = _agent({})
    agent.run_step("hello")
    agent.brief("second brief")
    agent.run_step("again")

    assert agent.system_prompt == "You run a shop."
    assert agent.last_request[0] == {"role": "system", "content": "You run a shop."}
    assert all(m["role"] != "system" for m in agent.history.msgs)
    _sim2, _env2, claude = _agent(
        {}, config=ReactConfig(context_window=BIG, trigger=BIG, keep=BIG, model_name="claude-sonnet")
    )
    claude.run_step("hello")
    assert claude.last_request[0]["role"] == "user"
    assert claude.last_parts[0] == "You run a shop."


def test_request_is_trimmed_at_b_with_nothing_subtracted() -> None:
    """The request is system + trim(history, B); the system prompt and tool schemas are not subtracted."""
    _sim, _env, agent = _agent({}, config=ReactConfig(context_window=60, trigger=BIG, keep=BIG))
    for i in range(5):
        agent.run_step(f"observation {i} " + "y" * 100)

    body = agent.last_request[1:]
    assert body == trim_messages_to_token_budget(agent.history.msgs[:-1], 60)  # before the EOS note
    assert agent.last_request_estimate == history_token_estimate(agent.last_request)


def test_provider_count_is_exact_cl100k_of_the_whole_request() -> None:
    """Every hop's trace record holds the exact count of system prompt, tool schemas and messages."""
    sim, _env, agent = _agent({})
    agent.run_step("hello world")
    rec = sim.trace.data.requests[-1]

    assert rec.exact_tokens == sum(count_tokens(p) for p in agent.last_parts)
    assert rec.exact_tokens > count_tokens(TOOLS_JSON)
    assert rec.estimate == agent.last_request_estimate
    assert agent.last_prompt_tokens == rec.exact_tokens


@settings(max_examples=20)
@given(
    st.lists(st.lists(st.integers(1, 5), max_size=2), min_size=1, max_size=8),
    st.sampled_from(["You run a shop.", "You run a shop. FACT-0004=gold"]),
)
def test_every_record_holds_the_facts_of_its_whole_request(steps: list[list[int]], prompt: str) -> None:
    """Every hop's record holds the fact ids of the request it sent (system prompt, tool schemas and the
    window of history, which slides as old steps fall out of a small window), as a recount of its parts."""
    config = ReactConfig(context_window=120, trigger=BIG, keep=BIG)
    sim, _env, agent = _agent({}, prompt=prompt, config=config)
    for i, ids in enumerate(steps):
        agent.run_step(f"obs {i} " + " ".join(f"FACT-{n:04d}=red" for n in ids) + " " + "y" * 150)
        rec = sim.trace.data.requests[-1]
        sent = frozenset().union(*map(extract_facts, agent.last_parts))

        assert rec.fact_ids == sent == agent.request_facts()


def test_estimate_tokenizer_reports_request_plus_tools_estimate() -> None:
    """The fast provider path reports the request estimate plus the tool schemas' estimate."""
    _sim, _env, agent = _agent({}, tokenizer="estimate")
    agent.run_step("hello")

    assert agent.last_prompt_tokens == agent.last_request_estimate + estimate_tokens(agent.tools_json)


def test_save_policy_saves_visible_facts_on_reminder() -> None:
    """The reminder policy reads, then writes every visible fact token."""
    cfg = ReactConfig(context_window=BIG, trigger=400, keep=10_000)
    _sim, env, agent = _agent(
        model=SavePolicy(save="reminder"), config=cfg, variant=DESIGN.switches.fixed(SAVE_BEFORE_COMPACT)
    )
    agent.run_step("FACT-0001=amber " + "x" * 2000)
    agent.run_step("FACT-0002=teal")

    assert env.read_memory_doc("agent_0")["content"] == "# Notes\n- FACT-0001=amber\n- FACT-0002=teal\n"


@settings(max_examples=30)
@given(st.lists(st.integers(0, 600), min_size=1, max_size=6), st.integers(20, 400))
def test_history_ledger_matches_a_recount(sizes: list[int], window: int) -> None:
    """After any run, the ledger's running total and cached costs equal a fresh recount."""
    cfg = ReactConfig(context_window=window, trigger=300, keep=100)
    _sim, _env, agent = _agent(
        model=SavePolicy(save="direct", domain_calls=True), config=cfg, tokenizer="estimate"
    )
    for i, n in enumerate(sizes):
        agent.run_step(f"obs {i} " + "z" * n)

    assert agent.history.total == history_token_estimate(agent.history.msgs)
    assert agent.history.costs == [message_token_estimate(m) for m in agent.history.msgs]


def test_observation_410_ends_the_run() -> None:
    """run(): a 410 on the observation means the run finished; the agent returns (react 761-771)."""
    _sim, env, agent = _agent({})
    env.dead.add("agent_0")
    result = agent.run_step("hello")

    assert result.outcome == "finished" and agent.hops == 0


def test_exception_in_step_forces_step_crash_eos() -> None:
    """An exception inside the step forces a ``[step-crash] {Type}: {e}`` end-of-step (react 780-785)."""

    class Broken:
        def respond(self, *a: object) -> Reply:
            raise ValueError("odd reply")

    _sim, env, agent = _agent(model=Broken())
    result = agent.run_step("hello")

    assert (result.outcome, result.detail) == ("forced", "[step-crash] ValueError: odd reply")
    assert agent.history.msgs[-1] == {"role": "assistant", "content": "[step-crash] ValueError: odd reply"}
    assert env.t == 1


@settings(max_examples=40)
@given(
    SAVE_POLICY_KW,
    FAULT_SCHEDULES,
    st.lists(st.tuples(st.integers(0, 1200), st.booleans()), min_size=1, max_size=4),
)
def test_loop_survives_drawn_policies_and_faults(
    policy_kw: dict, schedule: FaultSchedule, steps: list
) -> None:
    """Under any drawn save policy and provider/server fault schedule the loop never raises, keeps its
    ledger exact, keeps pending and the pre-assistant copy together, and leaves a readable trace per step."""
    cfg = ReactConfig(context_window=600, trigger=500, keep=150, max_hops=6)
    _sim, env, agent = _agent(
        model=SavePolicy(**policy_kw), config=cfg, schedule=schedule, tokenizer="estimate"
    )
    for i, (chars, probe) in enumerate(steps):
        text = f"Day 1, Hour {i}\nFACT-{i + 1:04d}=red " + "w" * chars
        if probe:
            text += "\nQuestion: what is the value of FACT-0001?"
        result = agent.run_step(text)

        assert result.outcome in ("done", "stale", "forced")
        assert agent.history.total == history_token_estimate(agent.history.msgs)
        assert agent.compaction_pending == bool(agent.pre_assistant)
    assert all(env.read_step_index(t) is not None for t in range(env.t))


def _ceiling_run(text: str, window: int, variant: Variant | None = None) -> int:
    sim, _env, agent = _agent(
        {},
        config=ReactConfig(context_window=window, trigger=BIG, keep=BIG),
        variant=variant,
        schema_tokens=300,
    )
    agent.run_step(text)
    return sim.trace.data.requests[-1].exact_tokens


def test_no_ceiling_system_and_tool_schemas_not_subtracted() -> None:
    """Prose that fits B by the estimate still overflows the window once the tool schemas are added."""
    text = "restock tea and cups before the weekend rush " * 60
    window = message_token_estimate({"role": "user", "content": text}) + 20

    assert _ceiling_run(text, window) > window
    assert _ceiling_run(text, window, DESIGN.switches.fixed(PROVIDER_BUDGET)) <= window


def test_no_ceiling_estimator_gap_on_cjk() -> None:
    """CJK text counts 0.5 token per character in the estimate but about 1 in cl100k."""
    text = "价格库存订单客户供应商" * 60
    window = count_tokens(tools_json(300)) + message_token_estimate({"role": "user", "content": text}) + 40

    assert _ceiling_run(text, window) > window
    assert _ceiling_run(text, window, DESIGN.switches.fixed(PROVIDER_BUDGET)) <= window


def test_no_ceiling_single_message_over_budget() -> None:
    """A single observation over B is always kept; the fix clips it to the provider budget."""
    text = "inventory report " * 400

    assert _ceiling_run(text, 600) > 600
    assert _ceiling_run(text, 600, DESIGN.switches.fixed(PROVIDER_BUDGET)) <= 600


def test_large_save_below_k_still_pushes_the_observation_out() -> None:
    """The milder shape of failure mode 3: a save smaller than K leaves a non-empty history after the
    compaction, but the step's observation and the reminder are gone; the claim's property rejects that
    too, and the group-trim fix keeps the observation."""
    from sim.claims import FAITHFUL, FIXED, registry

    claim = registry("merchantbench")["merchantbench.large-save-empties-history"]
    ex = {"keep": 300, "write_chars": 356, "prefix": [[0, 2]], "last": 147}
    kept, verdicts = {}, {}
    for variant in (FAITHFUL, FIXED):
        sim = Simulation(0)
        verdicts[variant] = claim.check(sim, ex, claim.variant(variant))
        compacts = [o.data for o in sim.trace.data.ops if o.op == "compact"]
        assert compacts and all(d["after"] > 0 for d in compacts)  # the history is not emptied
        kept[variant] = [d["obs_kept"] for d in compacts]

    assert kept[FAITHFUL] == [False] and "without the step's observation" in verdicts[FAITHFUL].detail
    assert all(kept[FIXED]) and verdicts[FIXED].holds
