"""Issue 42: the long target run streams its trace; its summary counts what the kept trace would show."""

from scenarios import rsiagent_long_target_run as scn
from sim.engine import Simulation
from sim.scenario import Context


def _run(keep: bool, **params: object) -> tuple[list[str], Simulation]:
    sim = Simulation(scn.SEED, keep_trace=keep)
    try:
        return scn.run(Context(sim, scn.Params.model_validate(params))), sim
    finally:
        sim.close()


def test_summary_reads_counters_not_the_trace() -> None:
    """Run as memsim runs it (``KEEP_TRACE`` False) nothing is kept in memory, and the lines are those of a
    run that keeps its trace, whose records give the same request, guard and review figures."""
    assert scn.KEEP_TRACE is False
    params = {"turns": 240, "budget": 6000, "blank_rate": 0.3}
    lines, lean = _run(False, **params)
    assert not lean.trace.data.requests and not lean.trace.data.ops
    kept_lines, kept = _run(True, **params)
    assert lines == kept_lines
    data = kept.trace.data
    guards = sum(o.op == "fold_guard" for o in data.ops)
    review = [r for r in data.requests if r.route == "loop.strategy_review"][-1]
    assert f"stopped above high water: {guards} times" in lines[3] and guards > 0
    assert f"strategy review request: {review.exact_tokens} tokens, {len(review.fact_ids)} facts" in lines
    assert lines[-1] == f"model requests recorded: {len(data.requests)}"
    folds = [o for o in data.ops if o.op == "fold_once"]
    assert lines[2].startswith(f"folds: {len(folds)} covering ")
