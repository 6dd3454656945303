"""MerchantBench's pure checkers on hand-written histories (Maelstrom style: empty, holding, violated)."""

from __future__ import annotations

import json

import pytest

from sim.engine import Simulation
from sim.text import observation
from sim.tokens import count_tokens
from sim.trace import OpRecord, RequestRecord
from sim.workload import WorkStep, draw, make_workload, run_adapter
from systems.merchantbench import properties as pr
from systems.merchantbench.adapter import Adapter
from systems.merchantbench.model import (
    POLICY_REDACTED_TOOL_CONTENT,
    history_entry,
    message_token_estimate,
    tools_json,
)
from systems.merchantbench.state import Compaction, SentRequest


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


def _sent(t: int, msgs: list, dropped: int = 0, pending: bool = False, retry: bool = False, hop: int = 0):
    return SentRequest(t, hop, msgs, dropped, pending, retry)


def _compaction(t: int, before: list[str], after: list[dict], document: str = "") -> Compaction:
    total = sum(message_token_estimate(m) for m in after)
    return Compaction(t, tuple(before), tuple(after), total, document, True)


USER = {"role": "user", "content": "FACT-0001=red"}


def test_cycles_complete_rejects_a_design_that_never_compacts() -> None:
    """A reminder must be resolved by the next step: compacted, cleared (re-armed) or fired again. A
    design with compaction off (the reminder stays pending for ever) is rejected; one in the last step is
    exempt."""
    trig = _op("compaction_trigger", t=1)

    assert pr.check_cycles_complete([trig, _op("compact", t=2)], last_t=3).holds
    assert pr.check_cycles_complete([trig, _op("compaction_cleared", t=1)], last_t=3).holds
    assert pr.check_cycles_complete([trig], last_t=1).holds
    assert not pr.check_cycles_complete([trig], last_t=3).holds  # degenerate: compaction off
    assert not pr.check_cycles_complete([trig, _op("compact", t=3)], last_t=3).holds


def test_compaction_service_rejects_losing_an_unsaved_fact() -> None:
    """A fact dropped by a compaction must be in the history after it or in the document then."""
    trig, done = _op("compaction_trigger", t=0), _op("compact", t=0)
    kept = _compaction(0, ["user\nFACT-0001=red"], [USER])
    saved = _compaction(0, ["user\nFACT-0001=red"], [], document="- FACT-0001=red")
    lost = _compaction(0, ["user\nFACT-0001=red"], [])

    assert pr.check_compaction_service([trig, done], [kept, saved], last_t=1).holds
    assert "FACT-0001" in pr.check_compaction_service([trig, done], [lost], last_t=1).detail
    assert not pr.check_compaction_service([trig], [], last_t=1).holds  # degenerate: never compacts


def test_compaction_keeps_step() -> None:
    """A compaction must leave the step's observation in a history within K plus its user messages."""
    trig, done = _op("compaction_trigger", t=0), _op("compact", t=0)
    steps = {0: "FACT-0001=red"}
    big = {"role": "assistant", "content": "x" * 4000}

    assert pr.check_compaction_keeps_step([trig, done], [_compaction(0, [], [USER])], steps, 10, 1).holds
    assert not pr.check_compaction_keeps_step([trig, done], [_compaction(0, [], [])], steps, 10, 1).holds
    assert not pr.check_compaction_keeps_step(
        [trig, done], [_compaction(0, [], [USER, big])], steps, 10, 1
    ).holds
    assert not pr.check_compaction_keeps_step([trig], [], steps, 10, 1).holds  # degenerate: never compacts


def test_read_delivered_rejects_an_empty_read() -> None:
    """The request after a read must show the question and the document's fact in that read's result,
    after its call; a read that returned nothing (the feature off) is rejected like an orphaned result."""
    call = {"id": "r", "function": {"name": "read_memory_doc"}}
    acts = [(0, 1, [call], "ok", [{"ok": True, "content": "FACT-0001=teal"}])]
    q = {"role": "user", "content": "Question: FACT-0001?"}
    asked = {"role": "assistant", "tool_calls": [{"id": "r"}]}
    result = {"role": "tool", "tool_call_id": "r", "content": '{"content": "FACT-0001=teal"}'}
    empty = {"role": "tool", "tool_call_id": "r", "content": '{"content": ""}'}
    log = lambda *m: [_sent(0, []), _sent(0, list(m))]  # noqa: E731

    assert pr.check_read_delivered([], [], "FACT-0001=teal", "Question").holds
    assert pr.check_read_delivered(log(q, asked, result), acts, "FACT-0001=teal", "Question").holds
    assert not pr.check_read_delivered(log(q, result), acts, "FACT-0001=teal", "Question").holds  # orphan
    assert not pr.check_read_delivered(log(asked, result), acts, "FACT-0001=teal", "Question").holds
    assert not pr.check_read_delivered(log(q, asked, empty), acts, "FACT-0001=teal", "Question").holds


def test_window_service_rejects_an_empty_request() -> None:
    """Every request within the window and showing its step's observation (or a prefix of it): a request
    over the window and one that shows nothing (the history emptied) are both rejected."""
    obs = {0: "Day 1, Hour 0\nrestock"}
    shown = [_sent(0, [{"role": "user", "content": "Day 1, Hour 0\nre"}])]

    assert pr.check_window_service([_req(100)], shown, 100, obs).holds
    assert "101 provider tokens" in pr.check_window_service([_req(101)], shown, 100, obs).detail
    assert not pr.check_window_service([_req(50)], [_sent(0, [])], 100, obs).holds


def test_no_silent_drop_rejects_a_hidden_reminder_and_no_trim() -> None:
    """A request that drops history must show a reminder; a request over B (untrimmed) is rejected."""
    reminder = {"role": "user", "content": "[context-maintenance]\n..."}
    small = {"role": "user", "content": "x"}
    big = [{"role": "user", "content": "y" * 400}, {"role": "user", "content": "z" * 400}]

    assert pr.check_no_silent_drop([_sent(0, [small, reminder], dropped=3)], [_req(50)], 100).holds
    assert not pr.check_no_silent_drop([_sent(0, [small], dropped=2, pending=True)], [_req(50)], 100).holds
    assert not pr.check_no_silent_drop([_sent(0, big)], [_req(300)], 100).holds  # degenerate: no trim
    assert pr.check_no_silent_drop([_sent(0, big)], [_req(90)], 100).holds  # within B exactly


def test_compactions_warned() -> None:
    """A compaction without the reminder is reported, and so is a reminder never followed by one."""
    trig = _op("compaction_trigger", t=1)

    assert pr.check_compactions_warned([trig, _op("compact", reminder_seen=True, t=1)], 3).holds
    assert not pr.check_compactions_warned([trig, _op("compact", reminder_seen=False, t=1)], 3).holds
    assert not pr.check_compactions_warned([trig], 3).holds


def test_writes_applied() -> None:
    """The document must be the last write and every write one entry: a resent write that runs twice
    (idempotency off) is rejected as a replayed one that runs zero times is."""
    assert pr.check_writes_applied([], None, []).holds
    assert pr.check_writes_applied(["a", "b"], "b", [1, 2]).holds
    assert not pr.check_writes_applied(["a", "b"], "a", [1]).holds
    assert not pr.check_writes_applied(["a", "a"], "a", [1]).holds
    assert not pr.check_writes_applied(["a"], "a", [1, 2]).holds


def test_read_kept_rejects_a_redacted_or_empty_read() -> None:
    """After a read every later request (retries excepted) must show the fact; history must hold the
    server's result (a redaction is not one)."""
    call = {"id": "r", "function": {"name": "read_memory_doc"}}
    acts = [(0, 1, [call], "ok", [{"ok": True}])]
    fact = {"role": "tool", "name": "read_memory_doc", "content": "FACT-0001=teal"}
    gone = {"role": "tool", "name": "read_memory_doc", "content": POLICY_REDACTED_TOOL_CONTENT}
    ok_log = [_sent(0, []), _sent(0, [], retry=True), _sent(0, [fact])]

    assert pr.check_read_kept(ok_log, acts, "FACT-0001=teal", [fact], [fact["content"]]).holds
    assert not pr.check_read_kept([_sent(0, []), _sent(0, [gone])], acts, "FACT-0001=teal", [], []).holds
    assert not pr.check_read_kept(ok_log, acts, "FACT-0001=teal", [gone], [fact["content"]]).holds


def test_isolation_own_history_versions() -> None:
    """Isolation, an agent's own append-only history and recorded versions; an empty history (the
    feature off) is rejected."""
    e1 = history_entry(1, 0, 0, 1, "a", first=True).encode()
    e2 = e1 + history_entry(2, 0, 0, 1, "b", first=False).encode()

    assert pr.check_documents_isolated({"a": "1"}, {"a": "1"}).holds
    assert not pr.check_documents_isolated({"a": ""}, {"a": "1"}).holds
    assert pr.check_own_history({"x": (e1, e1)}, {"x": ["a"]}).holds
    assert not pr.check_own_history({"x": (e1, b"junk")}, {"x": ["a"]}).holds
    assert not pr.check_own_history({"x": (b"", b"")}, {"x": ["a"]}).holds
    assert pr.check_versions_recorded([(1, b"a"), (2, b"b")], ["a", "b"]).holds
    assert not pr.check_versions_recorded([(1, b"a"), (3, b"b")], ["a", "b"]).holds
    assert not pr.check_versions_recorded([], ["a"]).holds
    assert len(e2) > len(e1)


def test_document_committed_and_roundtrip() -> None:
    """The document is the last committed write (or the interrupted one) and recorded; a missing document
    after committed writes (documents off) and a torn one are rejected; CRLF changes are reported."""
    hist = history_entry(1, 0, 0, 3, "old", first=True).encode()

    assert pr.check_document_committed(None, b"", [], None).holds
    assert pr.check_document_committed(b"old", hist, ["old"], None).holds
    assert pr.check_document_committed(b"old", hist, [], "old").holds
    assert not pr.check_document_committed(b"ol", hist, [], "old").holds  # torn
    assert not pr.check_document_committed(None, hist, ["old"], None).holds  # documents off
    assert not pr.check_document_committed(b"new", hist, ["new"], None).holds  # unrecorded
    assert pr.check_roundtrip("a", {"content": "a", "bytes": 1}, {"bytes": 1}).holds
    assert not pr.check_roundtrip("a\r\n", {"content": "a\n", "bytes": 2}, {"bytes": 3}).holds
    assert not pr.check_roundtrip("a", {"content": "", "bytes": 0}, {"bytes": 1}).holds


def test_probe_in_context() -> None:
    """A probe whose fact is known but absent from the first request of its step is reported."""
    assert pr.check_probe_in_context(
        [_req(5, facts={"FACT-0001"}, needed={"FACT-0001"})], ["FACT-0001"]
    ).holds
    assert not pr.check_probe_in_context([_req(5, needed={"FACT-0001"})], ["FACT-0001"]).holds


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


def test_adapter_honours_variant_and_knobs() -> None:
    """The adapter builds the design as the variant and knobs say: K, T and B scaling, the schema size and
    the provider from the knobs; the trigger-untrimmed fix fires where the faithful design slides."""
    from sim.errors import UsageError
    from systems.merchantbench.design import DESIGN
    from systems.merchantbench.knobs import UPSTREAM_SCHEMA_TOKENS
    from systems.merchantbench.model import UPSTREAM_SCHEMA_TOKENS as MODEL_SCHEMA_TOKENS
    from systems.merchantbench.state import TRIGGER_UNTRIMMED

    values = {"keep": 8000, "window_scale": 0.5, "trigger_ratio": 0.9, "schema_tokens": 2000}
    a = Adapter(Simulation(0), 32_000, draw(0), knobs=DESIGN.parse_knobs(values))
    cfg = a.agent.config

    assert (cfg.context_window, cfg.trigger, cfg.keep) == (16_000, 14_400, 8_000)
    assert count_tokens(a.env.tools_json()) == 2_000 and UPSTREAM_SCHEMA_TOKENS == MODEL_SCHEMA_TOKENS
    with pytest.raises(UsageError, match=r"merchantbench\.keep"):
        DESIGN.parse_knobs({"keep": -1})
    workload = make_workload(1, steps=120)
    fired = {}
    for label, variant in (
        ("faithful", DESIGN.switches.variant()),
        ("fixed", DESIGN.switches.fixed(TRIGGER_UNTRIMMED)),
    ):
        adapter = Adapter(Simulation(1), 40_000, workload.drawn, variant=variant)
        for step in workload.steps:
            adapter.step(step)
        fired[label] = adapter.agent.reminders
    assert fired["faithful"] == 0 and fired["fixed"] > 0
