"""The cross-design context-budget benchmark: one seeded workload through every design and an oracle.

For each (design, budget, seed) the harness builds the seed's :class:`~sim.workload.Workload`, drives the
design's adapter (``systems/<name>/adapter.py``) step by step, records every model request in the trace
(exact cl100k tokens, the design's own estimate, the fact ids present and the fact a probe needed) and
reduces the trace to metrics:

* request tokens (mean, p95, max; exact cl100k) and the design's own estimate (mean);
* requests over the provider window (``exact_tokens > budget``);
* probe recall: the fraction of probes whose request contained the needed fact, and recall relative to
  the oracle's on the same workload and budget;
* durable bytes, bytes written, write amplification (bytes written / observation bytes), storage ops;
* liveness: after the load phase, in the calm phase, every request fits the window (no compaction loop,
  no overflow that never drains).

The **oracle** keeps exactly the needed facts within the same budget: its request is the system prompt,
the current observation (clipped to what fits) and, at a probe, the needed fact token. It is the upper
bound on recall that any design could reach at that budget.

Sweeps run on local processes (``concurrent.futures``) or, unchanged, on a Dask distributed cluster.
"""

from __future__ import annotations

import csv
import importlib
import json
import math
import os
import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from sim.engine import Simulation
from sim.errors import UsageError
from sim.fidelity import system_module
from sim.tokens import count_tokens
from sim.trace import RequestRecord
from sim.workload import Drawn, ModelRequest, StorageStats, WorkStep, drive, make_workload

ORACLE_SYSTEM_PROMPT = "You are an agent. Answer from the context."


class OracleAdapter:
    """Keeps exactly the needed facts within the budget (the recall upper bound)."""

    name = "oracle"

    def __init__(self, sim: Simulation, budget: int, drawn: Drawn) -> None:
        self.sim = sim
        self.budget = budget
        self.facts: dict[str, str] = {}
        self.obs_bytes = 0

    def step(self, step: WorkStep) -> ModelRequest:
        for f in step.facts:
            self.facts[f.split("=")[0]] = f
        self.obs_bytes += len(step.observation.encode())
        parts = [ORACLE_SYSTEM_PROMPT]
        if step.probe:
            parts.append(self.facts[step.probe])
            parts.append(step.question)
        room = self.budget - sum(count_tokens(p) for p in parts)
        obs = step.observation
        if count_tokens(obs) > room:
            obs = obs[: max(0, int(room * 3.5))]  # clip conservatively under the room
            while obs and count_tokens(obs) > room:
                obs = obs[: int(len(obs) * 0.9)]
        parts.insert(1, obs)
        return ModelRequest(tuple(p for p in parts if p), None, "oracle")

    def storage(self) -> StorageStats:
        size = sum(len(f) for f in self.facts.values())
        return StorageStats(size, size, len(self.facts))


def available_designs() -> list[str]:
    """The designs whose adapters exist, then the oracle."""
    from systems import SYSTEMS

    return [s for s in SYSTEMS if system_module(s, "adapter") is not None] + ["oracle"]


def adapter_class(design: str) -> type:
    """The adapter class of *design*."""
    if design == "oracle":
        return OracleAdapter
    mod = system_module(design, "adapter")
    if mod is None:
        raise UsageError(f"unknown design {design!r}: expected some of {', '.join(available_designs())}")
    cls: type = mod.Adapter
    return cls


@dataclass(frozen=True)
class Task:
    """One cell of the sweep."""

    design: str
    budget: int
    seed: int
    steps: int | None = None


def _p95(values: Sequence[int]) -> float:
    if not values:
        return 0.0
    s = sorted(values)
    return float(s[min(len(s) - 1, math.ceil(0.95 * len(s)) - 1)])


class Metrics:
    """Streaming metrics of one cell: nothing per request is kept but its two token numbers."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.series: list[list[Any]] = []
        self.estimates: list[int] = []
        self.probes = 0
        self.hits = 0
        self.calm = 0
        self.calm_fit = 0
        self.obs_bytes = 0

    def __call__(self, step: WorkStep, req: ModelRequest, rec: RequestRecord) -> None:
        self.series.append([step.index, rec.exact_tokens, rec.estimate])
        if rec.estimate is not None:
            self.estimates.append(rec.estimate)
        self.obs_bytes += len(step.observation.encode())
        if step.probe:
            self.probes += 1
            self.hits += step.probe in rec.fact_ids
        if step.phase == "calm":
            self.calm += 1
            self.calm_fit += rec.exact_tokens <= self.budget

    def row(self, task: Task, drawn: Drawn, storage: StorageStats, seconds: float) -> dict[str, Any]:
        exact = [s[1] for s in self.series]
        est = self.estimates
        amplification = round(storage.bytes_written / self.obs_bytes, 3) if self.obs_bytes else 0.0
        return {
            "design": task.design,
            "budget": task.budget,
            "seed": task.seed,
            "steps": len(self.series),
            "requests": len(exact),
            "tokens_mean": round(sum(exact) / len(exact), 1) if exact else 0.0,
            "tokens_p95": _p95(exact),
            "tokens_max": max(exact, default=0),
            "estimate_mean": round(sum(est) / len(est), 1) if est else None,
            "over_window": sum(1 for x in exact if x > task.budget),
            "probes": self.probes,
            "recall": round(self.hits / self.probes, 4) if self.probes else None,
            "durable_bytes": storage.durable_bytes,
            "bytes_written": storage.bytes_written,
            "write_amplification": amplification,
            "storage_ops": storage.ops,
            "calm_requests": self.calm,
            "live": self.calm > 0 and self.calm_fit == self.calm,
            "seconds": round(seconds, 3),
            "drawn": json.dumps(asdict(drawn), sort_keys=True),
            "series": self.series,
        }


def run_task(task: Task, trace_path: str | None = None) -> dict[str, Any]:
    """Run one (design, budget, seed) cell and reduce it to metrics plus the per-request series.

    With *trace_path* the requests are streamed to SQLite; nothing is kept in memory either way.
    """
    importlib.import_module("systems")
    workload = make_workload(task.seed, task.steps)
    t0 = time.perf_counter()
    sim = Simulation(task.seed, trace_path=trace_path, keep_trace=False)
    sim.trace.set_meta(design=task.design, budget=task.budget, drawn=asdict(workload.drawn))
    adapter = adapter_class(task.design)(sim, task.budget, workload.drawn)
    metrics = Metrics(task.budget)
    drive(adapter, sim, workload, metrics)
    storage = adapter.storage()
    seconds = time.perf_counter() - t0
    sim.close()
    return metrics.row(task, workload.drawn, storage, seconds)


def add_relative_recall(rows: list[dict[str, Any]]) -> None:
    """Set ``recall_vs_oracle`` on every row that has an oracle row for the same budget and seed."""
    oracle = {(r["budget"], r["seed"]): r["recall"] for r in rows if r["design"] == "oracle"}
    for r in rows:
        o = oracle.get((r["budget"], r["seed"]))
        r["recall_vs_oracle"] = round(r["recall"] / o, 4) if (o and r["recall"] is not None) else None


def _parse_list(text: str, what: str, cast: Any = str) -> list[Any]:
    items = [x.strip() for x in text.split(",") if x.strip()]
    if not items:
        raise UsageError(f"--{what} is empty")
    try:
        return [cast(x) for x in items]
    except ValueError as exc:
        raise UsageError(f"--{what}: {exc}") from exc


def tasks_for(designs: Iterable[str], budgets: Iterable[int], seeds: int, steps: int | None) -> list[Task]:
    """The sweep's cells."""
    return [Task(d, b, s, steps) for s in range(seeds) for b in budgets for d in designs]


def run_sweep(
    tasks: list[Task],
    *,
    workers: int = 1,
    executor: str = "local",
    scheduler: str | None = None,
    progress: bool = True,
) -> list[dict[str, Any]]:
    """Run *tasks* locally (processes) or on Dask; results in task order."""
    from sim.progress import progress_bar

    results: dict[int, dict[str, Any]] = {}
    with progress_bar("bench", len(tasks), enabled=progress) as (bar, job):
        if executor == "dask":
            for i, row in _run_dask(tasks, workers, scheduler):
                results[i] = row
                bar.advance(job)
        elif workers <= 1:
            for i, t in enumerate(tasks):
                results[i] = run_task(t)
                bar.advance(job)
        else:
            from concurrent.futures import ProcessPoolExecutor, as_completed

            with ProcessPoolExecutor(max_workers=workers) as pool:
                futs = {pool.submit(run_task, t): i for i, t in enumerate(tasks)}
                for fut in as_completed(futs):
                    results[futs[fut]] = fut.result()
                    bar.advance(job)
    rows = [results[i] for i in range(len(tasks))]
    add_relative_recall(rows)
    return rows


def _run_dask(tasks: list[Task], workers: int, scheduler: str | None) -> Iterable[tuple[int, dict[str, Any]]]:
    try:
        from dask.distributed import Client, LocalCluster, as_completed
    except ImportError as exc:
        raise UsageError("--executor dask needs the dask extra: pip install 'memsim[dask]'") from exc
    cluster = None
    if scheduler:
        client = Client(scheduler, timeout="10s")
    else:
        cluster = LocalCluster(
            n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None, host="127.0.0.1"
        )
        client = Client(cluster)
    try:
        futs = client.map(run_task, tasks, pure=False)
        index = {f.key: i for i, f in enumerate(futs)}
        for fut in as_completed(futs):
            yield index[fut.key], fut.result()
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


COLUMNS = (
    "design",
    "budget",
    "seed",
    "requests",
    "tokens_mean",
    "tokens_p95",
    "tokens_max",
    "estimate_mean",
    "over_window",
    "probes",
    "recall",
    "recall_vs_oracle",
    "durable_bytes",
    "bytes_written",
    "write_amplification",
    "storage_ops",
    "live",
    "seconds",
    "drawn",
)


def aggregate(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Mean metrics per (design, budget) over seeds."""
    groups: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault((r["design"], r["budget"]), []).append(r)

    def mean(vals: list[Any], digits: int = 1) -> float | None:
        v = [x for x in vals if x is not None]
        return round(sum(v) / len(v), digits) if v else None

    out = []
    for (d, b), rs in groups.items():
        out.append(
            {
                "design": d,
                "budget": b,
                "seeds": len(rs),
                "tokens_mean": mean([r["tokens_mean"] for r in rs]),
                "tokens_p95": mean([r["tokens_p95"] for r in rs]),
                "tokens_max": max(r["tokens_max"] for r in rs),
                "estimate_mean": mean([r["estimate_mean"] for r in rs]),
                "over_window": sum(r["over_window"] for r in rs),
                "requests": sum(r["requests"] for r in rs),
                "recall": mean([r["recall"] for r in rs], 3),
                "recall_vs_oracle": mean([r["recall_vs_oracle"] for r in rs], 3),
                "write_amplification": mean([r["write_amplification"] for r in rs], 3),
                "storage_ops": mean([r["storage_ops"] for r in rs]),
                "live": all(r["live"] for r in rs),
            }
        )
    return out


def render(agg: list[dict[str, Any]]) -> Any:
    """A rich table of the aggregate."""
    from rich.table import Table

    t = Table(title="context-budget benchmark (means over seeds; tokens are exact cl100k)")
    cols = (
        "design",
        "budget",
        "seeds",
        "tokens_mean",
        "tokens_p95",
        "tokens_max",
        "estimate_mean",
        "over_window",
        "requests",
        "recall",
        "recall_vs_oracle",
        "write_amplification",
        "storage_ops",
        "live",
    )
    for c in cols:
        t.add_column(c.replace("_", " "), justify="left" if c == "design" else "right")
    for r in sorted(agg, key=lambda r: (r["budget"], r["design"])):
        t.add_row(*("-" if r[c] is None else str(r[c]) for c in cols))
    return t


def write_outputs(rows: list[dict[str, Any]], out: Path, plots: bool = True) -> list[Path]:
    """Write results.db (SQLite), results.csv, aggregate.csv and, if asked, PNG plots; return paths."""
    import sqlite_utils

    out.mkdir(parents=True, exist_ok=True)
    paths = []
    db_path = out / "results.db"
    if db_path.exists():
        db_path.unlink()
    db = sqlite_utils.Database(db_path)
    db.table("results").insert_all([{k: r.get(k) for k in COLUMNS} for r in rows])
    db.table("series").insert_all(
        {
            "design": r["design"],
            "budget": r["budget"],
            "seed": r["seed"],
            "step": s[0],
            "exact_tokens": s[1],
            "estimate": s[2],
        }
        for r in rows
        for s in r["series"]
    )
    db.conn.close()
    paths.append(db_path)
    csv_path = out / "results.csv"
    with open(csv_path, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=[*COLUMNS])
        w.writeheader()
        for r in rows:
            w.writerow({k: r.get(k) for k in COLUMNS})
    paths.append(csv_path)
    agg = aggregate(rows)
    agg_path = out / "aggregate.csv"
    with open(agg_path, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(agg[0]))
        w.writeheader()
        w.writerows(agg)
    paths.append(agg_path)
    if plots:
        paths.extend(plot(rows, agg, out))
    return paths


def plot(rows: list[dict[str, Any]], agg: list[dict[str, Any]], out: Path) -> list[Path]:
    """PNG plots: tokens per request over time per design; recall and overflow against budget."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        sys.stderr.write("plots skipped: install the plot extra (pip install 'memsim[plot]')\n")
        return []
    paths = []
    budgets = sorted({r["budget"] for r in rows})
    designs = list(dict.fromkeys(r["design"] for r in rows))
    seed0 = min(r["seed"] for r in rows)
    b_mid = budgets[len(budgets) // 2]
    fig, ax = plt.subplots(figsize=(10, 5))
    for r in rows:
        if r["seed"] == seed0 and r["budget"] == b_mid:
            ax.plot([s[0] for s in r["series"]], [s[1] for s in r["series"]], label=r["design"], lw=1)
    ax.axhline(b_mid, color="k", ls="--", lw=0.8, label=f"provider window {b_mid:,}")
    shown = [r for r in rows if r["seed"] == seed0 and r["budget"] == b_mid]
    if shown:
        load_steps = json.loads(shown[0]["drawn"])["steps"]
        ax.axvspan(load_steps, shown[0]["steps"], color="0.9", label="calm tail (liveness)")
    ax.set_xlabel("step")
    ax.set_ylabel("request tokens (exact cl100k)")
    ax.set_yscale("log")
    ax.set_title(f"Tokens per request over time (seed {seed0}, window {b_mid:,})")
    ax.legend(fontsize=8)
    fig.tight_layout()
    p = out / "tokens_over_time.png"
    fig.savefig(p, dpi=110)
    plt.close(fig)
    paths.append(p)
    for metric, ylabel, fname in (
        ("recall", "probe recall", "recall_vs_budget.png"),
        ("over_window", "requests over the window", "overflow_vs_budget.png"),
    ):
        fig, ax = plt.subplots(figsize=(7, 4.5))
        for d in designs:
            pts = sorted((a["budget"], a[metric]) for a in agg if a["design"] == d and a[metric] is not None)
            if pts:
                ax.plot([x for x, _ in pts], [y for _, y in pts], marker="o", label=d)
        ax.set_xscale("log")
        ax.set_xlabel("provider window (tokens)")
        ax.set_ylabel(ylabel)
        ax.set_title(f"{ylabel} against budget")
        if metric == "recall":
            ax.set_ylim(0, 1.05)
        ax.legend(fontsize=8, loc="lower right" if metric == "recall" else "upper right")
        fig.tight_layout()
        p = out / fname
        fig.savefig(p, dpi=110)
        plt.close(fig)
        paths.append(p)
    return paths


def run_cli(
    *,
    designs: str | None,
    budgets: str,
    seeds: int,
    steps: int | None,
    workers: int,
    executor: str,
    scheduler: str | None,
    out: Path,
    plots: bool,
) -> list[dict[str, Any]]:
    """``memsim bench``."""
    from rich.console import Console

    if executor not in ("local", "dask"):
        raise UsageError(f"unknown executor {executor!r}: expected local or dask")
    if scheduler and executor != "dask":
        raise UsageError("--scheduler needs --executor dask")
    avail = available_designs()
    chosen = _parse_list(designs, "designs") if designs else avail
    for d in chosen:
        if d not in avail:
            raise UsageError(f"unknown design {d!r}: expected some of {', '.join(avail)}")
    if "oracle" not in chosen:
        chosen.append("oracle")
    bl = _parse_list(budgets, "budgets", int)
    if any(b < 500 for b in bl):
        raise UsageError("--budgets must be at least 500 tokens each")
    workers = min(workers, os.cpu_count() or 1) if executor == "local" else workers
    rows = run_sweep(
        tasks_for(chosen, bl, seeds, steps), workers=workers, executor=executor, scheduler=scheduler
    )
    paths = write_outputs(rows, out, plots)
    Console(width=220).print(render(aggregate(rows)))
    for p in paths:
        print(f"wrote {p}")
    return rows
