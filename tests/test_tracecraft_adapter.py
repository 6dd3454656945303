"""The Tracecraft benchmark adapter: requests fit the budget, carry the probe question, use the model, and
honour the variant and the knobs it is given."""

from __future__ import annotations

from typing import Any

import pytest

from sim.engine import Simulation
from sim.errors import UsageError
from sim.files import MemoryTree
from sim.objects import MemoryStore
from sim.workload import make_workload, run_adapter
from systems.tracecraft.adapter import Adapter
from systems.tracecraft.design import DESIGN
from systems.tracecraft.model.retention import HeadlessBody
from systems.tracecraft.state import FIXES


def test_requests_fit_budget_and_carry_questions() -> None:
    """Every request is within the provider window; probes end with their question; storage is counted."""
    w = make_workload(3, steps=40)
    sim = Simulation(3)
    budget = 8000

    reqs = run_adapter(Adapter, sim, w, budget)

    recs = sim.trace.data.requests
    assert len(reqs) == len(w.steps)
    assert max(r.exact_tokens for r in recs) <= budget
    for step, req in zip(w.steps, reqs, strict=True):
        if step.question:
            assert req.parts[-1] == step.question
    assert all(r.estimate is None and r.route == "tracecraft.readback" for r in reqs)
    sim.close()


def test_storage_and_lossless_memory() -> None:
    """With lossiness 0 every fact is saved with memory set; storage reports bytes and ops."""
    w = make_workload(4, steps=30)
    drawn = w.drawn.__class__(**{**w.drawn.__dict__, "lossiness": 0.0})
    sim = Simulation(4)
    ad = Adapter(sim, 100_000, drawn)

    for step in w.steps:
        ad.step(step)

    saved = ad.facts_in_memory()
    assert saved == {f.split("=")[0] for s in w.steps for f in s.facts}
    st = ad.storage()
    assert st.durable_bytes > 0 and st.bytes_written >= st.durable_bytes and st.ops > 0
    sim.close()


def _run(knobs: dict[str, object] | None = None, fixes: tuple[str, ...] = ()) -> tuple[Adapter, list[Any]]:
    w = make_workload(5, steps=60)
    sim = Simulation(5)
    variant = DESIGN.switches.fixed(*fixes)
    ad = Adapter(sim, 30_000, w.drawn, variant=variant, knobs=DESIGN.parse_knobs(knobs or {}))
    reqs = [ad.step(step) for step in w.steps]
    sim.close()
    return ad, reqs


def test_knobs_are_honoured() -> None:
    """memory_keys, tail_lines and compact_every change the requests and the bucket as declared."""
    base, base_reqs = _run()
    _, no_memory = _run({"memory_keys": 0})
    _, no_tail = _run({"tail_lines": 0})
    never, _ = _run({"compact_every": 0})
    parts = "sessions/claude-code/bench-session/"

    assert all(r.parts[2] == "memory:\n" for r in no_memory)
    assert any(r.parts[2] != "memory:\n" for r in base_reqs)
    assert all(len(r.parts) <= 3 + (1 if r.parts[-1].startswith("Question") else 0) for r in no_tail)
    assert sum(len(r.parts) for r in base_reqs) > sum(len(r.parts) for r in no_tail)
    assert len(never.tc.bucket.list_keys(parts)) > len(base.tc.bucket.list_keys(parts))


def test_variant_is_honoured() -> None:
    """The adapter runs the design as the given variant: heartbeat-refresh writes the host's registration
    on every command; the faithful design never does."""
    faithful, _ = _run()
    fixed, _ = _run(fixes=("heartbeat-refresh",))

    assert faithful.tc.bucket.get_json("agents/host.json") is None
    assert fixed.tc.bucket.get_json("agents/host.json")["id"] == "host"
    assert fixed.tc.variant.has("heartbeat-refresh")


def test_knobs_are_bounded() -> None:
    """Unknown or out-of-range knobs are errors (``--knob tracecraft.KEY=VALUE``)."""
    for bad in ({"memory_keys": -1}, {"latency_s": 100}, {"nope": 1}):
        with pytest.raises(UsageError):
            DESIGN.parse_knobs(bad)


class _FullTree(MemoryTree):
    """The host's home holding every byte (as before issue 33)."""

    def release(self, path: str, upto: int) -> None:
        pass


@pytest.mark.parametrize("fixes", [(), tuple(FIXES)])
def test_long_cell_holds_only_what_it_reads_back(
    monkeypatch: pytest.MonkeyPatch, fixes: tuple[str, ...]
) -> None:
    """Issue 33: the host's session file holds no mirrored byte, the bucket at most its hot objects in
    memory and a merged part only the lines ``show --tail`` reads, however long the cell; and every request
    and storage figure equals those of a host holding everything (a plain MemoryStore and MemoryTree)."""
    import systems.tracecraft.adapter as adapter_module
    import systems.tracecraft.model.retention as retention

    w = make_workload(6, steps=240)
    knobs = DESIGN.parse_knobs({"tail_lines": 4, "compact_every": 10})
    variant = DESIGN.switches.fixed(*fixes)

    def run() -> tuple[Adapter, list[Any]]:
        sim = Simulation(6)
        ad = Adapter(sim, 30_000, w.drawn, variant=variant, knobs=knobs)
        reqs = [ad.step(step) for step in w.steps]
        sim.close()
        return ad, reqs

    monkeypatch.setattr(retention, "HOT_OBJECTS", 32)
    ad, reqs = run()
    held = list(ad.store._objects.values())
    assert len(held) <= 32
    assert max(len(b.tail) if isinstance(b, HeadlessBody) else len(b) for b in held) < 64 * 1024
    assert any(isinstance(b, HeadlessBody) for b in held)
    assert len(ad.home._files[ad.path]) == 0 < ad.home.size(ad.path)

    monkeypatch.setattr(adapter_module, "TailStore", lambda keep_lines: MemoryStore())
    monkeypatch.setattr(adapter_module, "HostTree", _FullTree)
    full, full_reqs = run()
    assert reqs == full_reqs
    assert ad.storage() == full.storage()
    assert ad.facts_in_memory() == full.facts_in_memory()
