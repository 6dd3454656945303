"""Benchmark (not a test): a long bench cell of every design in flat memory (issue 33).

    python benchmarks/bench_memory.py [--quick] [--json FILE]

* ``memory.<design>``: one bench cell of the design (seed 0, its faithful variant, no oracle beside it) at
  each window 8k, 32k and 160k, each at 25,000 and at 100,000 load steps in a fresh process (``--quick``:
  2,000 and 8,000), run as ``memsim bench`` runs it (``sim.bench.run_task``, the trace streamed to
  nowhere) with the workload generated a step at a time (the per-process workload memo is off, so the
  figure is the cell's own). The row's figure is the largest peak RSS at the longer run, against 500 MB;
  it is met only if every window's growth between the two runs is under 1 KB a step (flat after
  warm-up: what still grows is the per-request series a bench row returns, three numbers a step, the
  trace's fact-number memo until it holds 65,536 ids, and what a design's upstream keeps for good, such
  as Nemsy's ingest ledger). Before issue 33 a MerchantBench cell at 32k grew by about 4 KB a step (its
  in-process history kept every message's text: 890 MB at 100,000 steps), a Tracecraft cell by about
  24 KB, Nemsy's by 9.9 KB and RSIAgent's by 7 KB.

Peak RSS is valid on a loaded machine (each cell is its own process); the cells' wall times are not
reported. The full run is 24 cells, 12 of them 100,000 steps (minutes each): give ``run_all.py`` a
``--timeout`` of two hours for it, or run one design per process two at a time (``--designs`` picks
designs) and write the page with ``run_all.py --assemble``. Below about 10,000 steps the byte-bounded
caches (token counts 32 MiB, the MerchantBench history's counts 8 MiB, fact sets) are still filling:
``--quick``'s growth figures include that warm-up, so only its peaks are comparable.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import Goal, fresh, parser, report

DESIGNS = ("merchantbench", "nemsy", "rsiagent", "tracecraft")
WINDOWS = (8_000, 32_000, 160_000)
FLAT_KB_PER_STEP = 1.0
PEAK_MB = 500

CELL = """
import json, sys
import sim.workload
sim.workload.WORKLOAD_MEMO_CHARS = 0  # the cell's own memory: no workload kept for another cell
from sim.bench.tasks import Task, run_task
design, budget, steps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
row = run_task(Task(design, budget, 0, steps))
print(json.dumps({"steps": row["steps"], "requests": row["requests"]}))
"""


def cell(design: str, window: int, steps: int) -> float:
    """Peak RSS in MB of one cell in a fresh process."""
    out = fresh(CELL, design, str(window), str(steps))
    return float(out["_rss_mb"])


def design_goal(design: str, short: int, long: int, windows: tuple[int, ...] = WINDOWS) -> Goal:
    peaks, growths, parts = [], [], []
    for w in windows:
        a, b = cell(design, w, short), cell(design, w, long)
        kb = (b - a) * 1024 / (long - short)
        peaks.append(b)
        growths.append(kb)
        parts.append(f"{w // 1000}k: {a:.0f} MB at {short:,}, {b:.0f} MB at {long:,} ({kb:.2f} KB/step)")
    return Goal.of(
        f"memory.{design}",
        f"{design} bench cell of {long:,} steps: peak RSS, largest over windows "
        + "/".join(f"{w // 1000}k" for w in windows),
        max(peaks),
        f"< {PEAK_MB} MB, growth < {FLAT_KB_PER_STEP:g} KB/step",
        "; ".join(parts),
        also=all(g < FLAT_KB_PER_STEP for g in growths),
        unit="MB",
    )


def main() -> None:
    ap = parser(__doc__.splitlines()[0] if __doc__ else "")
    ap.add_argument("--designs", default=",".join(DESIGNS), help="comma-separated designs to measure")
    ap.add_argument(
        "--windows", default=",".join(map(str, WINDOWS)), help="comma-separated windows (one process each)"
    )
    a = ap.parse_args()
    short, long = (2_000, 8_000) if a.quick else (25_000, 100_000)
    windows = tuple(int(w) for w in a.windows.split(",") if w)
    goals = [design_goal(d, short, long, windows) for d in a.designs.split(",") if d]
    report("memory: long bench cells", goals, a.json)


if __name__ == "__main__":
    main()
