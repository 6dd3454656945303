"""The memory document tools, /act admission and idempotency, step traces, run deletion and unload, and
the Hermes state.db reader (MerchantBench), mirroring upstream's own test expectations."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from sim.engine import Simulation
from sim.faults import Crash, FaultPlan, WriteFailed
from systems.merchantbench import MerchantEnv, RunRegistry, read_hermes_trace
from systems.merchantbench import faults as fp
from systems.merchantbench.design import DESIGN
from systems.merchantbench.model import (
    EOS_CALL,
    MEMORY_DOC_MAX_BYTES,
    TOOL_SCHEMAS,
    parse_history_entries,
    read_memory_doc,
    write_memory_doc,
)
from systems.merchantbench.state import ATOMIC_WRITE, HttpError


def _env(**kw) -> tuple[Simulation, MerchantEnv]:
    sim = Simulation(0)
    return sim, MerchantEnv(sim, sim.tree("memory"), **kw)


def _call(name: str, args: dict | str = "{}", cid: str = "call_0_0") -> dict:
    raw = args if isinstance(args, str) else json.dumps(args)
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": raw}}


def _act(env: MerchantEnv, *calls: dict, aid: str = "agent_0") -> dict:
    return env.act(aid, [{"role": "assistant", "content": None, "tool_calls": list(calls)}], step=env.t)


# -- document tools -------------------------------------------------------------------------------------
def test_both_tools_are_in_the_schemas() -> None:
    """Upstream: read_memory_doc and write_memory_doc appear in the tool schemas (write requires content)."""
    names = {s["function"]["name"]: s for s in TOOL_SCHEMAS}

    assert {"read_memory_doc", "write_memory_doc"} <= set(names)
    assert names["write_memory_doc"]["function"]["parameters"]["required"] == ["content"]
    assert names["read_memory_doc"]["function"]["parameters"]["additionalProperties"] is False


def test_first_read_is_empty() -> None:
    """Upstream: the first read is {"ok": True, "content": "", "bytes": 0}."""
    _, env = _env()

    assert read_memory_doc(env, "agent_0") == {"ok": True, "content": "", "bytes": 0}


def test_empty_file_reads_as_empty() -> None:
    """An empty document gives the same result as a missing one."""
    _, env = _env()
    write_memory_doc(env, "agent_0", "")

    assert read_memory_doc(env, "agent_0") == {"ok": True, "content": "", "bytes": 0}


def test_write_then_read_round_trips_with_utf8_bytes() -> None:
    """Upstream: a write returns its UTF-8 length and the content reads back exactly."""
    _, env = _env()
    body = "# Plan\n- restock té 🙂\n"

    assert write_memory_doc(env, "agent_0", body) == {"ok": True, "bytes": len(body.encode())}
    assert read_memory_doc(env, "agent_0") == {"ok": True, "content": body, "bytes": len(body.encode())}


def test_paths_under_the_run_directory() -> None:
    """Document and history live under <runs_root>/<run_id>/agent/memory/."""
    _, env = _env(run_id="r1", runs_root="runs")

    assert env.memory_doc_path("agent 0") == "runs/r1/agent/memory/agent_0.md"
    assert env.memory_history_path("agent 0") == "runs/r1/agent/memory/agent_0.history.md"


def test_two_writes_make_two_versions() -> None:
    """Upstream: two writes leave 2 markers, versions 1 and 2, step 0, bodies in order."""
    sim, env = _env()
    write_memory_doc(env, "agent_0", "first")
    write_memory_doc(env, "agent_0", "second")
    text = env.tree.read_text(env.memory_history_path("agent_0"))

    assert text.count("<!-- merchantbench-memory-version ") == 2
    assert "## Memory version 1\n" in text and "## Memory version 2\n" in text
    assert text.count("- step: 0\n") == 2
    assert text.index("first") < text.index("second")
    assert f"- wall_ms: {sim.clock('server').ms()}\n" in text


def test_history_records_env_tick_and_server_clock() -> None:
    """step is env.t; wall_ms is the env server's time.time() (its skew shows, the agent's does not)."""
    sim = Simulation(0, faults=["skew:server=60", "skew:agent_0=3600"])
    env = MerchantEnv(sim, sim.tree("memory"))
    env.t = 17
    write_memory_doc(env, "agent_0", "x")
    text = env.tree.read_text(env.memory_history_path("agent_0"))

    assert "- step: 17\n" in text
    assert "- wall_ms: 1767571260000\n" in text


def test_agents_have_separate_documents() -> None:
    """Upstream: agent_0 and agent_1 documents stay separate."""
    _, env = _env()
    write_memory_doc(env, "agent_0", "zero")
    write_memory_doc(env, "agent_1", "one")

    assert (read_memory_doc(env, "agent_0")["content"], read_memory_doc(env, "agent_1")["content"]) == (
        "zero",
        "one",
    )


def test_legacy_marker_makes_version_2() -> None:
    """Upstream (legacy realshop compat): a legacy marker leads to merchantbench version 2."""
    _, env = _env()
    env.tree.write_text(env.memory_history_path("agent_0"), "<!-- realshop-memory-version 1 -->\nold\n")
    write_memory_doc(env, "agent_0", "new")

    assert "<!-- merchantbench-memory-version 2 -->" in env.tree.read_text(env.memory_history_path("agent_0"))


def test_size_limit_allows_exactly_262144() -> None:
    """Exactly 262,144 bytes is accepted; one more is rejected and nothing is touched."""
    _, env = _env()

    assert write_memory_doc(env, "agent_0", "a" * MEMORY_DOC_MAX_BYTES)["ok"] is True
    over = write_memory_doc(env, "agent_0", "é" * (MEMORY_DOC_MAX_BYTES // 2) + "a")
    assert over == {"ok": False, "error": "content too large (262145 bytes, max 262144)"}
    assert len(parse_history_entries(env.tree.read_bytes(env.memory_history_path("agent_0")))) == 1


def test_direct_call_coerces_non_strings() -> None:
    """A direct call str()-coerces the content."""
    _, env = _env()
    write_memory_doc(env, "agent_0", {"a": 1})

    assert read_memory_doc(env, "agent_0")["content"] == "{'a': 1}"


def test_lone_surrogate_raises() -> None:
    """A lone surrogate raises (uncaught upstream: /act returns 500)."""
    _, env = _env()

    with pytest.raises(UnicodeEncodeError):
        write_memory_doc(env, "agent_0", "a\ud800")
    with pytest.raises(HttpError) as exc:
        _act(env, _call("write_memory_doc", '{"content": "a\\ud800"}'))
    assert exc.value.status == 500


def test_crlf_comes_back_as_lf() -> None:
    """Writing "a\\r\\nb\\rc" reports 6 bytes; the read gives "a\\nb\\nc" with 5."""
    _, env = _env()

    assert write_memory_doc(env, "agent_0", "a\r\nb\rc")["bytes"] == 6
    assert read_memory_doc(env, "agent_0") == {"ok": True, "content": "a\nb\nc", "bytes": 5}


def test_cross_file_alias_replaces_history_and_restarts_versions() -> None:
    """Id agent_0.history writes agent_0's history file; agent_0's next entry is version 1 again."""
    _, env = _env()
    write_memory_doc(env, "agent_0", "one")
    write_memory_doc(env, "agent_0", "two")
    write_memory_doc(env, "agent_0.history", "junk")
    write_memory_doc(env, "agent_0", "three")

    assert env.tree.read_text(env.memory_history_path("agent_0")).startswith("junk")
    assert env.memory_versions("agent_0") == [1]


def test_marker_in_body_inflates_version() -> None:
    """If body 1 contains a marker, the next write is labelled version 3."""
    _, env = _env()
    write_memory_doc(env, "agent_0", "<!-- merchantbench-memory-version 9 -->")
    write_memory_doc(env, "agent_0", "next")

    assert "## Memory version 3\n" in env.tree.read_text(env.memory_history_path("agent_0"))


def test_crash_between_document_and_history_leaves_unrecorded_document() -> None:
    """Overwrite first, then append, no rollback: a crash between leaves the new document unrecorded."""
    sim, env = _env()
    write_memory_doc(env, "agent_0", "old")
    sim.faults = FaultPlan.parse([f"crash@{fp.WRITE_DOC_AFTER_DOCUMENT}"])

    with pytest.raises(Crash):
        write_memory_doc(env, "agent_0", "new")
    assert read_memory_doc(env, "agent_0")["content"] == "new"
    assert [b for _, b in parse_history_entries(env.tree.read_bytes(env.memory_history_path("agent_0")))] == [
        b"old"
    ]


def test_history_append_failure_keeps_new_document() -> None:
    """A failed history append does not restore the old document."""
    sim, env = _env()
    sim.faults = FaultPlan.parse([f"fail@{fp.WRITE_DOC_HISTORY_APPEND}"])

    with pytest.raises(WriteFailed):
        write_memory_doc(env, "agent_0", "new")
    assert read_memory_doc(env, "agent_0")["content"] == "new"
    assert not env.tree.exists(env.memory_history_path("agent_0"))


def test_partial_write_crash_truncates_document() -> None:
    """A crash during the in-place rewrite leaves a truncated document."""
    sim, env = _env()
    sim.faults = FaultPlan.parse([f"crash@{fp.WRITE_DOC_PARTIAL}"])

    with pytest.raises(Crash):
        write_memory_doc(env, "agent_0", "abcdef")
    assert read_memory_doc(env, "agent_0")["content"] == "abc"


def test_atomic_write_fix_keeps_old_document_on_crash() -> None:
    """Fixed variant: history first, temp file + replace; a crash before replace keeps the old document."""
    sim, env = _env(variant=DESIGN.switches.fixed(ATOMIC_WRITE))
    write_memory_doc(env, "agent_0", "old")
    sim.faults = FaultPlan.parse([f"crash@{fp.WRITE_DOC_BEFORE_REPLACE}"])

    with pytest.raises(Crash):
        write_memory_doc(env, "agent_0", "new")
    assert read_memory_doc(env, "agent_0")["content"] == "old"
    assert env.tree.exists(env.memory_doc_path("agent_0") + ".tmp")


# -- /act admission and idempotency ---------------------------------------------------------------------
def _results(res: dict) -> list:
    return [json.loads(r["content"]) for r in res["tool_results"]]


def test_act_runs_tools_and_returns_results() -> None:
    """Upstream's response (routes 1133-1139): every env call runs in order, each result a tool_result with
    the env origin and its JSON text; the end-of-step result is {ok, time} with the virtual datetime
    (tools.py end_of_step_result; default.yaml virtual_time starts 2025-06-01)."""
    _, env = _env()
    res = _act(env, _call("write_memory_doc", {"content": "x"}), _call("end_of_step", cid="e"))

    assert res["ok"] is True and res["turn_idx"] == 0
    assert (res["step_done"], res["hook_released"]) == (True, True)
    assert [(r["tool_call_id"], r["name"], r["tool_origin"]) for r in res["tool_results"]] == [
        ("call_0_0", "write_memory_doc", "merchantbench_env"),
        ("e", "end_of_step", "merchantbench_env"),
    ]
    assert res["tool_results"][1]["content"] == (
        '{"ok": true, "time": {"day": 1, "hour": 0, "datetime": "2025-06-01T00:00:00"}}'
    )
    assert _results(res)[0] == {"ok": True, "bytes": 1}
    assert env.t == 1


def test_end_of_step_time_without_virtual_time() -> None:
    """Off virtual time the end-of-step time is exactly {day, hour}, day counted from 1 (sim_time)."""
    _, env = _env(start_date=None)
    env.t = 49
    res = env.act("agent_0", [{"role": "assistant", "content": "", "tool_calls": [dict(EOS_CALL)]}], step=49)

    assert _results(res) == [{"ok": True, "time": {"day": 3, "hour": 1}}]


def test_act_rejections() -> None:
    """410 dead, 425 stale step, 400 end_of_step not last, 429 over the turn limit (pure EOS exempt)."""
    _, env = _env(max_turns_per_step=1)
    with pytest.raises(HttpError) as e400:
        _act(env, _call("end_of_step", cid="e"), _call("read_memory_doc"))
    _act(env, _call("read_memory_doc"))
    with pytest.raises(HttpError) as e429:
        _act(env, _call("read_memory_doc"))
    _act(env, dict(EOS_CALL))
    with pytest.raises(HttpError) as e425:
        env.act("agent_0", [{"role": "assistant", "tool_calls": [_call("read_memory_doc")]}], step=0)
    env.dead.add("agent_0")
    with pytest.raises(HttpError) as e410:
        _act(env, _call("read_memory_doc"))

    assert [e.value.status for e in (e400, e429, e425, e410)] == [400, 429, 425, 410]
    assert (e400.value.code, e425.value.code) == ("end_of_step_must_be_last", "stale_step")
    assert e429.value.code == "max_turns_per_step=1 reached"


def test_admission_order_misplaced_eos_wins_over_closed_hook_and_quota() -> None:
    """Corrections 7 (routes 1020-1043): the 400 for a misplaced end_of_step is checked before the closed
    hook's 425 and the quota's 429."""
    _, env = _env(max_turns_per_step=0)
    env.hook_open = False
    with pytest.raises(HttpError) as misplaced:
        _act(env, _call("end_of_step", cid="e"), _call("read_memory_doc"))
    with pytest.raises(HttpError) as closed:
        _act(env, _call("read_memory_doc"))

    assert (misplaced.value.status, closed.value.status) == (400, 425)


def test_missing_or_repeated_call_ids_are_400_and_nothing_runs() -> None:
    """Corrections 7-8 (routes 981-984): a call without an id, or a repeated id, rejects the whole act
    before any call runs."""
    _, env = _env()
    w = _call("write_memory_doc", {"content": "x"})
    with pytest.raises(HttpError) as missing:
        _act(env, {**w, "id": ""})
    with pytest.raises(HttpError) as repeated:
        _act(env, w, w)

    assert (missing.value.status, missing.value.code) == (400, "tool_call id is required")
    assert (repeated.value.status, repeated.value.code) == (400, "duplicate tool_call id: call_0_0")
    assert env.memory_versions("agent_0") == []


def test_http_error_text_is_requests_own() -> None:
    """The [act-error] text carries requests' message: status, Client/Server Error, the upper-case reason
    phrase and the act URL (merchantbench_tool_client.act raise_for_status; Corrections 7)."""
    _, env = _env()
    with pytest.raises(HttpError) as exc:
        _act(env, _call("end_of_step", cid="e"), _call("read_memory_doc"))

    assert str(exc.value) == (
        "400 Client Error: BAD REQUEST for url: http://localhost:5050/runs/run-0001/agents/agent_0/act"
    )
    assert str(HttpError(500, url="u")) == "500 Server Error: INTERNAL SERVER ERROR for url: u"
    assert str(HttpError(409, url="u")) == "409 Client Error: CONFLICT for url: u"


def test_closed_hook_admits_only_pure_end_of_step() -> None:
    """With the hook closed only a pure end-of-step is admitted (425 hook_closed otherwise)."""
    _, env = _env()
    env.hook_open = False
    with pytest.raises(HttpError) as exc:
        _act(env, _call("read_memory_doc"))

    assert (exc.value.status, exc.value.code) == (425, "hook_closed")
    assert _act(env, dict(EOS_CALL))["step_done"] is True


def test_invalid_arguments_give_a_tool_result_not_a_rejection() -> None:
    """Invalid JSON arguments produce the invalid-JSON result with the raw text (routes 1071-1077); the act
    is not rejected, and an end-of-step with bad arguments does not end the step."""
    _, env = _env()
    res = _act(env, _call("write_memory_doc", "not json"), _call("end_of_step", "  ", cid="e"))

    bad = {"code": "invalid_arguments", "path": "$", "message": "invalid JSON in arguments: "}
    assert _results(res) == [
        {"ok": False, "error": {**bad, "message": bad["message"] + "not json"}},
        {"ok": False, "error": {**bad, "message": bad["message"] + "  "}},
    ]
    assert res["step_done"] is False and env.t == 0


@pytest.mark.parametrize(
    ("call", "result"),
    [
        (_call("write_memory_doc", {}), {"ok": False, "error": {
            "code": "invalid_arguments", "path": "$.content", "message": "required argument is missing",
            "content": "required argument is missing"}}),
        (_call("write_memory_doc", {"content": "x", "z": 1, "a": 2}), {"ok": False, "error": {
            "code": "invalid_arguments", "path": "$.a", "message": "unknown argument: a",
            "a": "unknown argument: a"}}),
        (_call("write_memory_doc", {"content": 7}), {"ok": False, "error": {
            "code": "invalid_arguments", "path": "$.content", "message": "expected string, got integer",
            "content": "expected string, got integer"}}),
        (_call("read_memory_doc", "[1]"), {"ok": False, "error": {
            "code": "invalid_arguments", "path": "$", "message": "expected object, got array"}}),
        (_call("market_brief"), {
            "ok": False, "error": "tool 'market_brief' is not available in this scenario"}),
        (_call("teleport"), {"ok": False, "error": "unknown tool: teleport"}),
    ],
)  # fmt: skip
def test_dispatch_result_shapes(call: dict, result: dict) -> None:
    """dispatch_tool's order and shapes (dispatch.py 16-182): denied, unknown, schema violations (path,
    message and the field), then the handler."""
    _, env = _env()

    assert _results(_act(env, call)) == [result]


def test_idempotent_replay_and_conflict() -> None:
    """Same key and fingerprint: cached result with _idempotent_replay, no write; different: 409."""
    _, env = _env()
    first = _results(_act(env, _call("write_memory_doc", {"content": "a"})))[0]
    again = _results(_act(env, _call("write_memory_doc", {"content": "a"})))[0]
    with pytest.raises(HttpError) as exc:
        _act(env, _call("write_memory_doc", {"content": "b"}))
    with pytest.raises(HttpError) as bad_json:
        _act(env, _call("write_memory_doc", "not json"))

    assert first == {"ok": True, "bytes": 1}
    assert again == {"ok": True, "bytes": 1, "_idempotent_replay": True}
    assert (exc.value.status, exc.value.code) == (409, "idempotency_conflict")
    assert bad_json.value.status == 409  # undecodable arguments: no fingerprint, which differs
    assert env.memory_versions("agent_0") == [1]


def test_only_successful_results_are_cached() -> None:
    """A failed (oversize) write is not cached: the same key can then succeed."""
    _, env = _env()
    big = "a" * (MEMORY_DOC_MAX_BYTES + 1)
    assert _results(_act(env, _call("write_memory_doc", {"content": big})))[0]["ok"] is False

    assert _results(_act(env, _call("write_memory_doc", {"content": "ok"})))[0] == {"ok": True, "bytes": 2}


def test_denied_tools() -> None:
    """The Hermes overlay denies the document tools."""
    _, env = _env(tool_denylist=("read_memory_doc", "write_memory_doc"))

    assert _results(_act(env, _call("read_memory_doc")))[0] == {
        "ok": False,
        "error": "tool 'read_memory_doc' is not available in this scenario",
    }
    assert "write_memory_doc" not in env.offered_tools()


def test_recorded_messages_carry_the_env_origin() -> None:
    """record_act's recorded messages (routes 941-1013, 1099-1116): the assistant message and each call
    stamped with tool_origin, each generated tool message with its runtime_execution_id; the turn record
    counts origins and keeps the normalized context."""
    _, env = _env()
    env.deliver_observation("agent_0", "Day 1, Hour 0")
    env.act(
        "agent_0",
        [
            {"role": "user", "content": "r"},
            {"role": "assistant", "content": "", "tool_calls": [_call("read_memory_doc")]},
        ],
        step=0,
        context={"tokens": 0, "compacted": True, "retry_exhausted": 1},
    )
    step = env.read_step_index(0)
    user, reminder, assistant, tool = step["messages"]

    assert (user["content"], reminder) == ("Day 1, Hour 0", {"role": "user", "content": "r"})
    assert assistant["tool_origin"] == "merchantbench_env"
    assert assistant["tool_calls"][0]["tool_origin"] == "merchantbench_env"
    assert (
        tool["runtime_execution_id"] == "agent_0:0:0:call_0_0" and tool["tool_origin"] == "merchantbench_env"
    )
    turn = step["turns"][0]
    assert (turn["turn_idx"], turn["agent_id"]) == (0, "agent_0")
    assert turn["message_origins"] == {"merchantbench_env": 2} and turn["tool_call_origins"] == {
        "merchantbench_env": 1
    }
    assert turn["context"] == {"compacted": True, "retry_exhausted": 1}  # tokens 0 dropped


# -- step traces ----------------------------------------------------------------------------------------
def test_step_trace_shape_live_then_final() -> None:
    """t_00000.json: live after each act (close 0), final at hook close; the JSON shape upstream tests."""
    sim, env = _env()
    env.deliver_observation("agent_0", "Day 1, Hour 0")
    _act(env, _call("read_memory_doc"))
    live = env.read_step_index(0)
    sim.run(until=5)
    _act(env, dict(EOS_CALL))
    final = env.read_step_index(0)

    assert env.step_index_path(0).endswith("agent/by_step/t_00000.json")
    assert live["hook_close_wall_ms"] == 0 and live["n_turns"] == 1
    assert set(final) == {
        "t",
        "n_turns",
        "hook_open_wall_ms",
        "hook_close_wall_ms",
        "messages",
        "message_agents",
        "turns",
    }
    assert final["hook_close_wall_ms"] == final["hook_open_wall_ms"] + 5000
    assert final["message_agents"] == ["agent_0"] * len(final["messages"])
    assert env.tree.read_text(env.step_index_path(0)) == json.dumps(final, ensure_ascii=False, indent=2)


def test_long_markdown_write_is_in_the_trace() -> None:
    """Upstream: a long Markdown write/read is preserved in full in the step trace."""
    _, env = _env()
    body = "# Notes\n" + "\n".join(f"- item {i}" for i in range(500))
    _act(env, _call("write_memory_doc", {"content": body}))
    _act(env, _call("read_memory_doc", cid="r"))
    msgs = env.read_step_index(0)["messages"]

    assert json.loads(msgs[0]["tool_calls"][0]["function"]["arguments"])["content"] == body
    assert json.loads(msgs[-1]["content"])["content"] == body


def test_read_step_index_missing_or_corrupt_is_none() -> None:
    """read_step_index returns None for a missing or corrupt file."""
    _, env = _env()
    env.tree.write_text(env.step_index_path(3), "{not json")

    assert env.read_step_index(2) is None
    assert env.read_step_index(3) is None


def test_crash_before_trace_replace_leaves_the_temp_file() -> None:
    """Temp file + replace: a crash between leaves t_NNNNN.json.tmp.PID.HEX and the old file."""
    sim, env = _env()
    sim.faults = FaultPlan.parse([f"crash@{fp.STEP_TRACE_BEFORE_REPLACE}"])

    with pytest.raises(Crash):
        env.write_step_live()
    names = env.tree.list(f"{env.run_dir}/agent/by_step")
    assert len(names) == 1 and ".json.tmp.4242." in names[0]
    assert env.read_step_index(0) is None


def test_trace_index_counts_compacted_turns() -> None:
    """The index reports the max tokens and the number of turns with compacted True (bool only)."""
    _, env = _env()
    env.act(
        "agent_0",
        [{"role": "assistant", "tool_calls": [_call("read_memory_doc")]}],
        step=0,
        context={"tokens": 123456, "compacted": True},
    )
    env.act(
        "agent_0",
        [{"role": "assistant", "tool_calls": [_call("read_memory_doc", cid="x")]}],
        step=0,
        context={"tokens": 5, "compacted": "yes"},
    )

    assert env.trace_index() == {"tokens": 123456, "compactions": 1}


# -- deletion and unload --------------------------------------------------------------------------------
def _registry() -> tuple[Simulation, RunRegistry, MerchantEnv]:
    sim = Simulation(0)
    reg = RunRegistry(sim, sim.tree("memory"))
    env = reg.create_run("r1")
    write_memory_doc(env, "agent_0", "notes")
    _act(env, dict(EOS_CALL))
    reg.tree.write_text("runs/r1/agent/hermes_home/state.db", "db")
    return sim, reg, env


def test_delete_run_removes_everything_together() -> None:
    """delete_run removes documents, histories, traces and hermes_home together; then not found."""
    _, reg, _ = _registry()

    assert reg.delete_run("r1") == {"deleted": True, "run_id": "r1"}
    assert reg.tree.list("runs/r1") == []
    assert reg.delete_run("r1") == {"deleted": False, "reason": "not found"}
    with pytest.raises(HttpError) as exc:
        reg.env("r1")
    assert exc.value.status == 410


def test_delete_run_refusals() -> None:
    """Escaping paths raise ValueError; a stuck worker is busy; 12 failed removals give an error."""
    sim, reg, _ = _registry()
    with pytest.raises(ValueError):
        reg.delete_run("../x")
    reg.stuck.add("r1")
    assert reg.delete_run("r1")["status"] == "busy"
    reg.stuck.clear()
    sim.faults = FaultPlan.parse([f"fail@{fp.DELETE_RUN_RMTREE}#{n}" for n in range(1, 13)])
    out = reg.delete_run("r1")

    assert (out["deleted"], out["status"]) == (False, "error")
    assert out["reason"].startswith("failed to remove run directory")
    assert reg.tree.exists("runs/r1/agent/memory/agent_0.md")


def test_delete_run_retries_a_failed_removal() -> None:
    """One failed attempt is retried (12 attempts)."""
    sim, reg, _ = _registry()
    sim.faults = FaultPlan.parse([f"fail@{fp.DELETE_RUN_RMTREE}"])

    assert reg.delete_run("r1")["deleted"] is True


def test_unload_drops_runtime_only() -> None:
    """release_terminal_runtime: only for finished/stopped runs; files remain; /act returns 410."""
    _, reg, env = _registry()

    assert reg.release_terminal_runtime("r1") is False
    reg.finish("r1")
    assert reg.release_terminal_runtime("r1") is True
    assert reg.tree.exists("runs/r1/agent/memory/agent_0.md")
    assert env.read_step_index(0) is not None
    with pytest.raises(HttpError) as exc:
        _act(env, _call("read_memory_doc"))
    assert exc.value.status == 410
    with pytest.raises(HttpError):
        reg.env("r1")


# -- Hermes state.db reader -----------------------------------------------------------------------------
def _hermes_db(path: Path, root: str = "merchantbench-r1") -> Path:
    conn = sqlite3.connect(path)
    conn.executescript(
        "CREATE TABLE sessions (id TEXT PRIMARY KEY, source TEXT, parent_session_id TEXT, started_at REAL,"
        " system_prompt TEXT);"
        "CREATE TABLE messages (id INTEGER PRIMARY KEY, session_id TEXT, role TEXT, content TEXT,"
        " timestamp REAL, active INTEGER);"
    )
    conn.execute("INSERT INTO sessions VALUES (?, 'merchantbench', NULL, 1, 'You are Hermes.')", (root,))
    conn.execute("INSERT INTO sessions VALUES ('child', 'merchantbench', ?, 2, '')", (root,))
    conn.execute("INSERT INTO sessions VALUES ('other', 'cli', NULL, 0, 'other')")
    rows = [
        (root, "user", "preamble", 1, 1),
        (root, "user", "Day 1, Hour 3 observation", 2, 0),
        (root, "assistant", "old turn", 3, 0),
        ("child", "user", "  Day 1, Hour 4 observation", 4, 1),
        ("child", "assistant", "new turn", 5, 1),
        ("other", "user", "Day 1, Hour 9", 6, 1),
    ]
    conn.executemany(
        "INSERT INTO messages (session_id, role, content, timestamp, active) VALUES (?,?,?,?,?)", rows
    )
    conn.commit()
    conn.close()
    return path


def test_hermes_reader_active_rows_and_prompt(tmp_path: Path) -> None:
    """Lineage from merchantbench-{rid}, active rows only, Day/Hour steps, system prompt prepended."""
    db = _hermes_db(tmp_path / "state.db")
    out = read_hermes_trace(db, "r1")

    assert out["steps"] == {
        4: [
            {"role": "system", "content": "You are Hermes."},
            {"role": "user", "content": "  Day 1, Hour 4 observation"},
            {"role": "assistant", "content": "new turn"},
        ]
    }
    assert out["stats"] == {"total_raw": 5, "total_active": 3, "total_compacted": 2}


def test_hermes_reader_include_compacted(tmp_path: Path) -> None:
    """include_compacted (1/true/yes/on, any case) returns the compacted rows too."""
    db = _hermes_db(tmp_path / "state.db")
    out = read_hermes_trace(db, "r1", include_compacted="TRUE")

    assert sorted(out["steps"]) == [3, 4]
    assert sum(len(v) for v in out["steps"].values()) == 5  # 4 rows (preamble dropped) + system prompt


def test_hermes_reader_realshop_and_source_fallbacks(tmp_path: Path) -> None:
    """realshop-{rid} lineage is the second choice; then every merchantbench/realshop session."""
    legacy = read_hermes_trace(_hermes_db(tmp_path / "a.db", root="realshop-r1"), "r1")
    fallback = read_hermes_trace(_hermes_db(tmp_path / "b.db", root="merchantbench-zzz"), "r1")

    assert sorted(legacy["steps"]) == [4]
    assert sorted(fallback["steps"]) == [4]


def test_hermes_reader_sqlite_error_is_empty(tmp_path: Path) -> None:
    """A missing or broken database gives an empty result; the file is opened read-only."""
    (tmp_path / "bad.db").write_text("not sqlite")

    assert read_hermes_trace(tmp_path / "missing.db", "r1")["steps"] == {}
    assert read_hermes_trace(tmp_path / "bad.db", "r1")["steps"] == {}
    assert not (tmp_path / "missing.db").exists()
