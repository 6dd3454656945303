"""The cross-design context-budget benchmark: one workload through every design variant and an oracle.

For each (design variant, budget, seed) the harness builds the workload (:mod:`sim.workload`: the seed's
generated one, or a user's JSONL file), drives the design's adapter step by step, records every model
request in the trace (exact cl100k tokens, the design's own estimate, the fact ids present and the fact a
probe needed) and reduces it to metrics (:mod:`sim.bench.metrics`). The **oracle**
(:mod:`sim.bench.oracle`) sends exactly the needed fact within the same window: the recall upper bound.

Modules: :mod:`~sim.bench.tasks` (cells, design variants and knobs), :mod:`~sim.bench.executors`
(local processes or Dask), :mod:`~sim.bench.metrics`, :mod:`~sim.bench_outputs` (files),
:mod:`~sim.bench.plots`, :mod:`~sim.bench.table` and :mod:`~sim.bench_cli`.
"""

from sim.bench.executors import run_sweep
from sim.bench.metrics import Metrics, add_relative_recall, aggregate
from sim.bench.oracle import ORACLE_SYSTEM_PROMPT, OracleAdapter
from sim.bench.table import render
from sim.bench.tasks import DesignSpec, Task, parse_designs, run_task, tasks_for


def available_designs() -> list[str]:
    """Every installed design, then the oracle."""
    from sim.registry import designs

    return [*designs(), "oracle"]


__all__ = [
    "ORACLE_SYSTEM_PROMPT",
    "DesignSpec",
    "Metrics",
    "OracleAdapter",
    "Task",
    "add_relative_recall",
    "aggregate",
    "available_designs",
    "parse_designs",
    "render",
    "run_sweep",
    "run_task",
    "tasks_for",
]
