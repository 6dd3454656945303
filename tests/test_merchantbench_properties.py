"""MerchantBench's pure checkers on hand-written histories (Maelstrom style: empty, holding, violated)."""

from __future__ import annotations

import json

from sim.engine import Simulation
from sim.text import observation
from sim.tokens import count_tokens
from sim.trace import OpRecord, RequestRecord
from sim.workload import WorkStep, draw, make_workload, run_adapter
from systems.merchantbench import properties as pr
from systems.merchantbench.adapter import Adapter
from systems.merchantbench.model import POLICY_REDACTED_TOOL_CONTENT, history_entry, tools_json


def _op(op: str, **detail) -> OpRecord:
    return OpRecord(1, 0.0, "agent_0", "merchantbench", op, "ok", json.dumps(detail))


def _req(exact: int, facts=(), needed=(), t=0) -> RequestRecord:
    return RequestRecord(
        1,
        0.0,
        "agent_0",
        "merchantbench",
        "react.hop",
        exact,
        exact,
        1,
        json.dumps(sorted(facts)),
        json.dumps(sorted(needed)),
        json.dumps({"t": t}),
    )


def test_facts_recoverable() -> None:
    """Empty holds; a fact in the document holds; a fact in neither is reported."""
    hist = [{"role": "user", "content": "FACT-0001=red"}]

    assert pr.check_facts_recoverable([], [], "").holds
    assert pr.check_facts_recoverable(["FACT-0001", "FACT-0002"], hist, "- FACT-0002=teal").holds
    assert "FACT-0003" in pr.check_facts_recoverable(["FACT-0003"], hist, "").detail


def test_read_results_delivered() -> None:
    """A read result missing from the next request is reported; an empty read is ignored."""
    call = {"id": "r", "function": {"name": "read_memory_doc"}}
    acts = [(0, 1, [call], "ok", [{"ok": True, "content": "notes"}])]
    with_result = [(0, [], 0, False), (0, [{"role": "tool", "tool_call_id": "r"}], 0, False)]
    without = [(0, [], 0, False), (0, [{"role": "user", "content": "x"}], 0, False)]
    empty_read = [(0, 1, [call], "ok", [{"ok": True, "content": ""}])]

    assert pr.check_read_results_delivered([], []).holds
    assert pr.check_read_results_delivered(with_result, acts).holds
    assert not pr.check_read_results_delivered(without, acts).holds
    assert pr.check_read_results_delivered(without, empty_read).holds


def test_observation_survives_compaction() -> None:
    """A compaction that empties the history or loses the observation is reported."""
    assert pr.check_observation_survives_compaction([_op("compact", after=3, obs_kept=True)]).holds
    assert not pr.check_observation_survives_compaction([_op("compact", after=0, obs_kept=False)]).holds
    assert pr.check_observation_survives_compaction([_op("act")]).holds


def test_compaction_keeps_history() -> None:
    """Only a compaction that leaves history == [] is reported (the large-save claim's property)."""
    assert pr.check_compaction_keeps_history([]).holds
    assert pr.check_compaction_keeps_history([_op("compact", before=6, after=2, obs_kept=False)]).holds
    assert not pr.check_compaction_keeps_history([_op("compact", before=6, after=0, obs_kept=False)]).holds


def test_request_ceiling() -> None:
    """A request over the window is reported."""
    assert pr.check_request_ceiling([_req(100)], 100).holds
    assert "101 provider tokens" in pr.check_request_ceiling([_req(101)], 100).detail


def test_no_silent_drop() -> None:
    """Dropping while pending is fine; dropping with nothing pending is a silent slide."""
    assert pr.check_no_silent_drop([(0, [], 3, True), (1, [], 0, False)]).holds
    assert not pr.check_no_silent_drop([(0, [], 2, False)]).holds


def test_compactions_saw_reminder_and_failed_write() -> None:
    """Compaction without the reminder, and after a failed write with nothing saved, are reported."""
    assert pr.check_compactions_saw_reminder([_op("compact", reminder_seen=True, t=1)]).holds
    assert not pr.check_compactions_saw_reminder([_op("compact", reminder_seen=False, t=1)]).holds
    assert pr.check_no_compaction_after_failed_write([_op("compact", write_failed=True, saved=True)]).holds
    assert not pr.check_no_compaction_after_failed_write(
        [_op("compact", write_failed=True, saved=False)]
    ).holds


def test_writes_applied() -> None:
    """The document must be the last write and every write must have an entry."""
    assert pr.check_writes_applied([], None, []).holds
    assert pr.check_writes_applied(["a", "b"], "b", [1, 2]).holds
    assert not pr.check_writes_applied(["a", "b"], "a", [1]).holds
    assert not pr.check_writes_applied(["a", "a"], "a", [1]).holds


def test_tool_results_intact() -> None:
    """A redacted tool message is not a server result."""
    hist = [{"role": "tool", "name": "read_memory_doc", "content": POLICY_REDACTED_TOOL_CONTENT}]

    assert pr.check_tool_results_intact([], []).holds
    assert not pr.check_tool_results_intact(hist, ['{"ok": true}']).holds
    assert not pr.check_tool_results_intact(hist, [], names=("read_memory_doc",)).holds
    assert pr.check_tool_results_intact(hist, [], names=("query_balance",)).holds


def test_isolation_append_only_versions() -> None:
    """Isolation, append-only history and consecutive versions on small cases."""
    assert pr.check_documents_isolated({"a": "1"}, {"a": "1"}).holds
    assert not pr.check_documents_isolated({"a": "2"}, {"a": "1"}).holds
    assert pr.check_history_append_only(b"ab", b"abc").holds
    assert not pr.check_history_append_only(b"ab", b"junk").holds
    assert pr.check_versions_consecutive([1, 2, 3]).holds
    assert not pr.check_versions_consecutive([1, 3]).holds


def test_document_committed_and_roundtrip() -> None:
    """A document with no history entry is reported; CRLF changes are reported."""
    hist = history_entry(1, 0, 0, 3, "old", first=True).encode()

    assert pr.check_document_committed(None, b"").holds
    assert pr.check_document_committed(b"old", hist).holds
    assert not pr.check_document_committed(b"new", hist).holds
    assert pr.check_roundtrip("a", {"content": "a", "bytes": 1}, {"bytes": 1}).holds
    assert not pr.check_roundtrip("a\r\n", {"content": "a\n", "bytes": 2}, {"bytes": 3}).holds


def test_probe_in_context() -> None:
    """A probe whose fact is known but absent from the first request of its step is reported."""
    assert pr.check_probe_in_context(
        [_req(5, facts={"FACT-0001"}, needed={"FACT-0001"})], ["FACT-0001"]
    ).holds
    assert not pr.check_probe_in_context([_req(5, needed={"FACT-0001"})], ["FACT-0001"]).holds
    assert pr.check_probe_in_context([_req(5, needed={"FACT-0001"})], []).holds


def test_maintenance_text_reachability() -> None:
    """sometimes("warned"): some message is a reminder or notice."""
    assert not pr.check_maintenance_text([]).holds
    assert pr.check_maintenance_text([{"role": "user", "content": "[context-maintenance]\n..."}]).holds


def test_adapter_runs_the_workload() -> None:
    """The benchmark adapter returns one request per step (the last hop's that still showed the step's
    observation), with the probe question in it, and a fresh adapter has stored nothing."""
    workload = make_workload(5, steps=60)
    sim = Simulation(5)
    reqs = run_adapter(Adapter, sim, workload, 8_000)
    probes = [s for s in workload.steps if s.probe]

    assert len(reqs) == len(workload.steps)
    assert all(r.route == "react.hop" and r.estimate for r in reqs)
    assert all(any(s.question in p for p in r.parts) for s, r in zip(workload.steps, reqs) if s.probe)
    assert probes
    stats = Adapter(Simulation(1), 8_000, workload.drawn).storage()
    assert stats.durable_bytes == 0


def test_adapter_scales_keep_with_the_window() -> None:
    """B = T = budget and K = round(budget * 30 / 160)."""
    a = Adapter(Simulation(0), 32_000, draw(0))

    assert (a.agent.config.context_window, a.agent.config.trigger, a.agent.config.keep) == (
        32_000,
        32_000,
        6_000,
    )


def test_adapter_slides_silently_when_no_observation_exceeds_the_window() -> None:
    """Upstream finding (T = B, cl100k provider): a request trimmed to B estimated tokens reports fewer than
    T tokens (about 0.84 B of prose plus the 4,127-token tool schemas, below B from about B = 27,000 on), so
    the reminder never fires; the trim drops silently and the history outgrows B."""
    workload = make_workload(1, steps=120)
    sim = Simulation(1)
    reqs = run_adapter(Adapter, sim, workload, 40_000)
    records = sim.trace.data.requests
    ops = [o.op for o in sim.trace.data.ops]

    assert len(reqs) == len(records) == len(workload.steps)
    assert "compaction_trigger" not in ops and "compact" not in ops
    assert max(r.exact_tokens for r in records) < 40_000
    assert max(r.estimate or 0 for r in records) > 39_900  # the trim really is at B
    tools = count_tokens(tools_json())  # counted by the provider, not in the design's estimate
    assert any(r.estimate and r.exact_tokens - tools < 0.9 * r.estimate for r in records)


def test_adapter_fires_only_after_a_lone_observation_over_the_window() -> None:
    """The trigger fires after a step whose observation alone exceeds B: the trim keeps the newest message
    whole, that request overflows the window, reports >= T, and the next step compacts once."""
    rng = Simulation(0).rng("test.obs")
    sizes = [16_000] * 12 + [200_000] + [400, 400]
    steps = [WorkStep(i, observation(rng, n, [])) for i, n in enumerate(sizes)]
    drawn = draw(0)
    sim = Simulation(0)
    adapter = Adapter(sim, 40_000, drawn)
    for step in steps:
        req = adapter.step(step)
        sim.request("merchantbench", req.route, req.parts, estimate=req.estimate)
    exact = [r.exact_tokens for r in sim.trace.data.requests]
    triggers = [o.data["t"] for o in sim.trace.data.ops if o.op == "compaction_trigger"]

    assert max(exact[:12]) < 40_000 < exact[12]
    assert triggers == [13]
    assert adapter.agent.compactions == 1
