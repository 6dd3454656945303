"""The Tracecraft benchmark adapter: requests fit the budget, carry the probe question, and use the model."""

from __future__ import annotations

from sim.engine import Simulation
from sim.workload import make_workload, run_adapter
from systems.tracecraft.adapter import Adapter


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

    saved = set(ad.keys)
    assert saved == {f.split("=")[0] for s in w.steps for f in s.facts}
    st = ad.storage()
    assert st.durable_bytes > 0 and st.bytes_written >= st.durable_bytes and st.ops > 0
    sim.close()
