"""The context-budget benchmark harness: metrics, the oracle bound, outputs, determinism, Dask."""

import csv

import pytest

from sim import bench
from sim.workload import make_workload


def _strip(rows):
    return [{k: v for k, v in r.items() if k != "seconds"} for r in rows]


def test_workload_is_seeded_and_logs_what_it_drew() -> None:
    """The same seed gives the same workload; probes only ask for facts seen earlier."""
    a, b = make_workload(3, 30), make_workload(3, 30)

    assert a == b
    assert a != make_workload(4, 30)
    seen: set[str] = set()
    for s in a.steps:
        if s.probe:
            assert s.probe in seen
            assert s.probe in s.question
        seen |= {f.split("=")[0] for f in s.facts}
    assert a.drawn.steps == 30 and a.drawn.calm_steps >= 10


def test_oracle_recalls_every_probe_within_budget() -> None:
    """The oracle's requests fit the window and carry every probed fact."""
    row = bench.run_task(bench.Task("oracle", 4000, 1, 40))

    assert row["recall"] == 1.0
    assert row["over_window"] == 0
    assert row["tokens_max"] <= 4000
    assert row["live"] is True


def test_every_design_runs_and_is_deterministic() -> None:
    """Every available design completes a small workload, twice with identical metrics."""
    tasks = bench.tasks_for(bench.available_designs(), [6000], 1, 20)

    first = bench.run_sweep(tasks, progress=False)
    second = bench.run_sweep(tasks, progress=False)

    assert _strip(first) == _strip(second)
    for r in first:
        assert r["requests"] == r["steps"]
        assert r["recall"] is None or 0.0 <= r["recall"] <= 1.0
        assert r["recall_vs_oracle"] is None or r["recall_vs_oracle"] >= 0.0


def test_outputs_are_written(tmp_path) -> None:
    """SQLite, CSV and the three plots are produced."""
    rows = bench.run_sweep(bench.tasks_for(["oracle"], [3000, 9000], 1, 12), progress=False)

    paths = bench.write_outputs(rows, tmp_path)

    names = sorted(p.name for p in paths)
    assert names == sorted(
        [
            "results.db",
            "results.csv",
            "aggregate.csv",
            "tokens_over_time.png",
            "recall_vs_budget.png",
            "overflow_vs_budget.png",
        ]
    )
    with open(tmp_path / "results.csv") as fh:
        assert len(list(csv.DictReader(fh))) == 2


def test_local_processes_match_serial() -> None:
    """Two worker processes give the same rows as the serial run."""
    tasks = bench.tasks_for(["oracle"], [3000, 9000], 2, 12)

    assert _strip(bench.run_sweep(tasks, workers=2, progress=False)) == _strip(
        bench.run_sweep(tasks, progress=False)
    )


@pytest.mark.slow
def test_dask_executor_matches_local() -> None:
    """The same sweep on a local Dask distributed cluster gives the same rows as the local run."""
    pytest.importorskip("dask.distributed", reason="the dask extra is not installed")
    tasks = bench.tasks_for(["oracle"], [3000], 2, 12)

    on_dask = bench.run_sweep(tasks, workers=2, executor="dask", progress=False)

    assert _strip(on_dask) == _strip(bench.run_sweep(tasks, progress=False))
