"""Issue 13's fidelity items on minimal sequences, each pinning upstream's behaviour at
Artemonim/merchantbench @ 47eafeae (``react`` = ``agent/baselines/react_160k_compact_30k.py``, ``routes`` =
``env/web/routes_agent.py``; line numbers from the fidelity note's Corrections). Items 7 and 11 (admission
order, result shapes, recorded origins) are pinned in ``test_merchantbench_memory.py``."""

from __future__ import annotations

import json

from sim.engine import Simulation
from sim.faults import FaultPlan
from sim.tokens import count_tokens
from systems.merchantbench import faults as fp
from systems.merchantbench.model import (
    UPSTREAM_SCHEMA_TOKENS,
    MerchantEnv,
    ReactAgent,
    classify_llm_error,
    history_token_estimate,
    run_step,
    sanitize_message_for_llm,
    tool_schemas,
    tools_json,
)
from systems.merchantbench.model.estimate import coerce_arguments
from systems.merchantbench.policies import SavePolicy, ScriptedModel
from systems.merchantbench.state import FaultSchedule, ReactConfig, Reply, ToolCall

BIG = 10**9
PROMPT = "You run a shop."


def _agent(script=None, *, schedule=None, config=None, brief=PROMPT, model=None, **env_kw):
    sim = Simulation(0)
    env = MerchantEnv(sim, sim.tree("memory"), schedule=schedule, brief=brief, **env_kw)
    agent = ReactAgent(
        sim,
        env,
        "agent_0",
        model or ScriptedModel(script or {}),
        config=config or ReactConfig(context_window=BIG, trigger=BIG, keep=BIG),
    )
    return sim, env, agent


def _contexts(env: MerchantEnv, t: int) -> list[dict | None]:
    return [turn.get("context") for turn in env.read_step_index(t)["turns"]]


READ = Reply(tool_calls=(ToolCall("read_memory_doc", "{}", "r"),), prompt_tokens=100)


def test_1_failed_forced_eos_keeps_reported_tokens_when_nothing_pending() -> None:
    """react 741-748: the HTTPError handler of _force_end_of_step resets last_prompt_tokens only while a
    compaction is pending; with nothing pending the reported 100 tokens survive to the next trigger check."""
    _sim, _env, agent = _agent({(0, 0): READ}, schedule=FaultSchedule(act=((0, 0, 500), (0, 1, 500))))
    result = agent.run_step("hello")

    assert result.outcome == "forced" and agent.compaction_pending is False
    assert agent.last_prompt_tokens == 100


def test_2_tool_call_reply_without_text_has_empty_content() -> None:
    """react 632, 680-684: thought = msg.content or "": an assistant message with tool calls and no text is
    sent and remembered with content "" (never None), which the estimator prices 1 token below null."""
    _sim, env, agent = _agent({(0, 0): Reply(tool_calls=(ToolCall("read_memory_doc", "{}", "r"),))})
    agent.run_step("hello")
    assistant = agent.history.msgs[1]

    assert assistant["content"] == ""
    assert next(m for m in env.read_step_index(0)["messages"] if m["role"] == "assistant")["content"] == ""
    as_null = json.dumps({**assistant, "content": None}, ensure_ascii=False, sort_keys=True)
    assert len(as_null) - len(json.dumps(assistant, ensure_ascii=False, sort_keys=True)) == 2


def test_3_invalid_arguments_keep_non_ascii_raw_and_non_strings_unwrapped() -> None:
    """react 125-147: an unparsable or non-object string is wrapped with ensure_ascii=False (non-ASCII
    literal); a non-string is json.dumps'd (sorted, non-ASCII literal) and returned as is, even a list; a
    value json.dumps rejects is str()-converted and handled as a string."""
    assert coerce_arguments("价格") == '{"_invalid_json_arguments": "价格"}'
    assert coerce_arguments([1, "é"]) == '[1, "é"]'
    assert coerce_arguments({"b": "é", "a": 1}) == '{"a": 1, "b": "é"}'
    assert coerce_arguments({1, 2}) == '{"_invalid_json_arguments": "{1, 2}"}'
    assert coerce_arguments("") == coerce_arguments(None) == coerce_arguments(" \n") == "{}"
    call = {"id": "c", "type": "function", "function": {"name": "f", "arguments": "价格"}}
    sent = sanitize_message_for_llm({"role": "assistant", "content": "", "tool_calls": [call]})
    assert sent["tool_calls"][0]["function"]["arguments"] == '{"_invalid_json_arguments": "价格"}'


def test_4_health_counters_count_since_the_last_successful_act() -> None:
    """react 386-390, 553-557, 649: each act carries the failures since the previous successful act, only
    the non-zero counters, and the counters restart at 0 after it; a later act does not repeat them."""
    schedule = FaultSchedule(llm=((0, 0, "burst"),))
    _sim, env, agent = _agent({(0, 0): READ, (1, 0): READ}, schedule=schedule)
    agent.run_step("first")
    agent.run_step("second")

    assert _contexts(env, 0)[0] == {"tokens": 100, "provider_api_failed_attempts": 1}
    assert _contexts(env, 1)[0] == {"tokens": 100}


def test_5_retry_exhausted_counts_a_final_error_after_a_retry() -> None:
    """react 466-473: a non-retryable code after a retry or after the Forbidden retry counts retry_exhausted
    (burst then unknown: 1; Forbidden then Forbidden: 1); alone it does not."""
    cases = {
        ((0, 0, "burst"), (0, 1, "unknown")): 1,
        ((0, 0, "forbidden"), (0, 1, "forbidden")): 1,
        ((0, 0, "unknown"),): None,
    }
    for llm, expected in cases.items():
        _sim, env, agent = _agent(schedule=FaultSchedule(llm=llm))
        agent.run_step("hello")

        assert _contexts(env, 0)[0].get("retry_exhausted") == expected


def test_6_context_tokens_estimate_the_sanitized_request() -> None:
    """react 540-558, 629: with no reported usage a hop's act estimates its own sanitized request (system
    message included), not the raw history; the key is left out when the estimate is 0 and no context is
    sent when nothing is left."""
    bad = Reply(tool_calls=(ToolCall("query_balance", "not json", "q"),))
    schedule = FaultSchedule(no_usage=((0, 1),))
    _sim, env, agent = _agent({(0, 0): bad}, schedule=schedule)
    agent.run_step("hello")
    sent = agent.last_request
    raw = [{"role": "system", "content": PROMPT}, *agent.history.msgs[:3]]

    assert _contexts(env, 0)[1] == {"tokens": history_token_estimate(sent)}
    assert history_token_estimate(sent) != history_token_estimate(raw)  # the wrapped arguments count
    empty = _agent(brief=None)[2]
    assert empty.act_context([]) is None


def test_6_forced_eos_context_rebuilds_the_request_now() -> None:
    """react 736: a forced end-of-step after an LLM failure estimates a request rebuilt from the history as
    it is then (here the first hop, whose usage never came)."""
    _sim, env, agent = _agent(schedule=FaultSchedule(llm=((0, 0, "invalid"),)))
    agent.run_step("hello")
    rebuilt = [{"role": "system", "content": PROMPT}, {"role": "user", "content": "hello"}]

    assert _contexts(env, 0)[0] == {
        "tokens": history_token_estimate(rebuilt),
        "provider_api_failed_attempts": 1,
    }


def test_6_after_a_forbidden_retry_the_original_request_is_estimated_redacted() -> None:
    """react 451-459 and 629: the retry rebinds its own request, so the act's estimate covers the original
    request's messages, whose tool contents the redaction rewrote in place."""
    script = {
        (0, 0): Reply(tool_calls=(ToolCall("read_memory_doc", "{}", "r"),)),
        (0, 1): Reply(content="done"),
    }
    schedule = FaultSchedule(llm=((0, 1, "forbidden"),), no_usage=((0, 2),))
    _sim, env, agent = _agent(script, schedule=schedule)
    agent.env.write_memory_doc("agent_0", "x" * 4000)
    agent.run_step("hello")
    original_with_redaction = [{"role": "system", "content": PROMPT}, *agent.history.msgs[:3]]

    assert _contexts(env, 0)[1]["tokens"] == history_token_estimate(original_with_redaction)


def test_8_identical_id_less_calls_share_an_id_and_the_act_is_rejected() -> None:
    """react 671: call_{hop}_{tool_calls_raw.index(tc)} gives two equal id-less calls the same id
    call_0_0; the server answers 400 duplicate tool_call id (routes 983-984), an [act-error] EOS follows,
    and neither write runs."""
    w = ToolCall("write_memory_doc", json.dumps({"content": "alpha"}))
    _sim, env, agent = _agent({(0, 0): Reply(tool_calls=(w, w))})
    result = agent.run_step("hello")

    assert result.outcome == "forced"
    assert agent.history.msgs[-1]["content"].startswith(
        "[act-error] HTTPError: 400 Client Error: BAD REQUEST"
    )
    assert env.memory_versions("agent_0") == []


def test_9_classification_is_case_sensitive_and_uses_the_response_status() -> None:
    """react 267-295: exact-case markers; a bare 500 is transient through e.response.status_code; status
    numbers in the text are not searched; lower-case markers are unknown."""
    assert classify_llm_error("InternalServerError: Error code: 500", 500) == "transient"
    assert classify_llm_error("InternalServerError: Error code: 500") == "unknown"
    assert classify_llm_error("APIError: connection reset") == "unknown"
    assert classify_llm_error("APIError: request timed out") == "transient"
    assert classify_llm_error("BadRequestError: invalidparameter function.arguments") == "unknown"


def test_9_system_prompt_comes_from_the_first_brief_even_empty() -> None:
    """react 392-398: the first brief sets the prompt even when it is "" (no system message is sent), and no
    later brief replaces it."""
    _sim, _env, agent = _agent(brief="")
    agent.run_step("hello")
    agent.brief("later")
    agent.run_step("again")

    assert agent.system_prompt == ""
    assert agent.last_request[0]["role"] == "user"


def test_10_one_refused_act_forces_a_step_crash_eos_that_is_remembered() -> None:
    """Corrections 11: a ConnectionError on /act is not an HTTPError; run() forces [step-crash]
    ConnectionError; the server answers again, so that EOS succeeds and is kept in history."""
    _sim, env, agent = _agent({(0, 0): READ}, schedule=FaultSchedule(outage=((0, 0, 1),)))
    result = agent.run_step("hello")

    assert result.outcome == "forced"
    assert agent.history.msgs[-1]["content"].startswith("[step-crash] ConnectionError: HTTPConnectionPool(")
    assert env.t == 1 and env.memory_versions("agent_0") == []


def test_10_a_server_still_down_kills_the_agent_and_the_respawn_starts_empty() -> None:
    """Corrections 11: the reminder fires, the save act gets no answer, the [step-crash] EOS gets none
    either, so the process exits; the start route respawns it with an empty history, nothing pending and,
    against the same live Environment, no brief and so no system prompt. It observes the same tick again:
    the fact seen before the crash is in neither the new request nor the (never written) document."""
    config = ReactConfig(context_window=BIG, trigger=count_tokens(tools_json()) + 50, keep=100)
    sim, env, agent = _agent(
        config=config, model=SavePolicy(save="direct"), schedule=FaultSchedule(outage=((1, 0, 2),))
    )
    agent.run_step("Day 1, Hour 0\nFACT-0001=amber " + "x" * 2000)
    first = agent
    agent, result = run_step(agent, "Day 1, Hour 1\nquiet")

    assert first.compaction_pending is True and agent is not first and agent.generation == 1
    assert result.outcome == "done" and env.t == 2
    assert agent.system_prompt is None
    assert agent.history.msgs[0] == {"role": "user", "content": "Day 1, Hour 1\nquiet"}
    assert "FACT-0001" not in json.dumps(agent.last_request) and env.memory_versions("agent_0") == []
    assert [o.op for o in sim.trace.data.ops if o.op in ("agent_exit", "respawn")] == [
        "agent_exit",
        "respawn",
    ]


def test_10_a_server_crash_in_a_handler_kills_the_server_and_a_restart_serves_the_brief_again() -> None:
    """Corrections 11: a crash inside a write kills the server process (the client sees the connection
    aborted, not a 500); the agent exits; a restarted (rehydrated) Environment serves the brief again, so
    the respawned agent has its system prompt. The crashed write left a half-written document and no
    history entry; the new process, seeing the same tick, writes again."""
    sim, env, agent = _agent(
        {(0, 0): Reply(tool_calls=(ToolCall("write_memory_doc", json.dumps({"content": "abcdef"}), "w"),))}
    )
    sim.faults = FaultPlan.parse([f"crash@{fp.WRITE_DOC_PARTIAL}"])
    agent, result = run_step(agent, "hello")

    assert env.restarts == 1 and agent.generation == 1 and result.outcome == "done"
    assert agent.system_prompt == PROMPT
    assert env.tree.read_text(env.memory_doc_path("agent_0")) == "abcdef"
    assert env.memory_versions("agent_0") == [1]
    crash = next(o for o in sim.trace.data.ops if o.op == "server_crash")
    assert crash.phase == "crash" and agent.history.msgs[0] == {"role": "user", "content": "hello"}
    assert [o.op for o in sim.trace.data.ops if o.op in ("server_crash", "server_restart", "respawn")] == [
        "server_crash",
        "server_restart",
        "respawn",
    ]


def test_10_observation_retries_a_refused_connection_three_times() -> None:
    """merchantbench_tool_client.observation: a ConnectionError is retried observation_connection_retries=3
    times, then escapes run() and the process exits. Refused: the act, the [step-crash] EOS, then the
    respawned process's observations: 3 refusals are survived (outage 5), a 4th kills it again (outage 6)."""
    generations = {}
    for refused in (5, 6):
        _sim, _env, agent = _agent({(0, 0): READ}, schedule=FaultSchedule(outage=((0, 0, refused),)))
        agent, result = run_step(agent, "hello")
        generations[refused] = (agent.generation, result.outcome)

    assert generations == {5: (1, "done"), 6: (2, "done")}


def test_12_the_stand_in_schema_is_upstreams_size() -> None:
    """env/tools/registry.py + observation.py: 26 published tools in the registry's order (default.yaml
    denies market_brief and hot_search_terms), 4,127 cl100k tokens in memsim's serialization; the knob
    sizes the stand-in exactly."""
    names = [s["function"]["name"] for s in tool_schemas()]

    assert count_tokens(tools_json()) == UPSTREAM_SCHEMA_TOKENS == 4_127
    assert len(names) == 26 and names[:3] == ["get_daily_report", "search_products", "get_product_detail"]
    assert names[-5:] == [
        "read_memory_doc",
        "write_memory_doc",
        "end_of_step",
        "get_observation",
        "list_tools",
    ]
    assert {count_tokens(tools_json(n)) for n in (2_000, 8_000)} == {2_000, 8_000}
    env = _agent(schema_tokens=8_000)[1]
    assert count_tokens(env.tools_json()) == 8_000


def test_issue27_register_capabilities_declared_not_modeled_and_their_counters_exist() -> None:
    """Issue 27 item 5: upstream's register() declares which runtime-health counters the agent reports
    (react:359-377), for the leaderboard only. memsim declares it not modeled, with its reason and effect,
    and sends every counter the declaration marks "reported" in its act contexts."""
    from sim.fidelity import deviations

    dev = {d.name: d for d in deviations("merchantbench")}["register() runtime-health capabilities"]
    assert dev.kind == "not modeled" and "react:359-377" in dev.upstream and "leaderboard" in dev.upstream
    assert "memory_compactions: reported" in dev.upstream
    assert "skills_evolutions: not_applicable" in dev.upstream
    assert dev.why and dev.effect.startswith("none")
    _sim, _env, agent = _agent()
    agent.health["provider_api_failed_attempts"] = 2
    agent.health["retry_exhausted"] = 1
    agent.compaction_pending = True
    ctx = agent.act_context([]) or {}
    assert {"provider_api_failed_attempts", "retry_exhausted", "compacted"} <= set(ctx)
    assert not hasattr(agent, "register")
