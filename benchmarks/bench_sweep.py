"""Benchmark (not a test): the claims suite, the sweep's scaling, and a long run's peak memory.

    python benchmarks/bench_sweep.py [--long-steps 100000] [--design merchantbench]

Prints:
1. the claims suite in the ``ci`` profile: total wall time and the slowest claims;
2. the context-budget sweep at 1 and 2 local workers: wall time and speed-up;
3. one long single run (default 100,000 load steps) with its trace streamed to SQLite: peak RSS of the
   child process that ran it, steps per second.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def claims_suite() -> None:
    from sim import ledger

    t0 = time.perf_counter()
    results = ledger.run_all(profile="ci", progress=False)
    total = time.perf_counter() - t0
    rows = sorted((r for r, _, _ in results), key=lambda r: -r.seconds)
    ok = sum(r.faithful_ok and r.fixed_ok for r in rows)
    print(f"claims suite (ci profile): {len(rows)} claims, {ok} passed both ways, {total:.1f} s total")
    for r in rows[:8]:
        print(f"  slowest: {r.claim:55s} {r.seconds:6.2f} s")


def sweep_scaling() -> None:
    from sim import bench

    tasks = bench.tasks_for(bench.available_designs(), [8000, 32000, 128000], 2, None)
    bench.run_sweep(tasks[:5], progress=False)  # warm up: imports, the encoding, the sentence pool
    times = {}
    for workers in (1, 2):
        t0 = time.perf_counter()
        bench.run_sweep(tasks, workers=workers, progress=False)
        times[workers] = time.perf_counter() - t0
    print(
        f"sweep ({len(tasks)} cells): 1 worker {times[1]:.1f} s, 2 workers {times[2]:.1f} s, "
        f"speed-up {times[1] / times[2]:.2f}x"
    )


CHILD = """
import json, sys, time
from sim import bench
t0 = time.perf_counter()
row = bench.run_task(bench.Task(sys.argv[1], int(sys.argv[2]), 0, int(sys.argv[3])), trace_path=sys.argv[4])
row.pop("series")
print(json.dumps({"seconds": time.perf_counter() - t0, **row}))
"""


def long_run(design: str, steps: int, budget: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "long.db"
        out = subprocess.run(
            [sys.executable, "-c", CHILD, design, str(budget), str(steps), str(db)],
            check=True,
            capture_output=True,
            text=True,
        )
        row = json.loads(out.stdout.strip().splitlines()[-1])
        peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        size_mb = db.stat().st_size / 1e6
    print(
        f"long run: {design}, {row['steps']:,} steps at window {budget:,}: {row['seconds']:.1f} s "
        f"({row['steps'] / row['seconds']:,.0f} steps/s), peak RSS {peak_mb:.0f} MB, "
        f"trace {size_mb:.0f} MB on disk"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--long-steps", type=int, default=100_000)
    ap.add_argument("--design", default="merchantbench")
    ap.add_argument("--budget", type=int, default=32_000)
    ap.add_argument("--skip", default="", help="comma-separated parts to skip: claims,sweep,long")
    a = ap.parse_args()
    skip = set(a.skip.split(","))
    if "claims" not in skip:
        claims_suite()
    if "sweep" not in skip:
        sweep_scaling()
    if "long" not in skip:
        long_run(a.design, a.long_steps, a.budget)


if __name__ == "__main__":
    main()
