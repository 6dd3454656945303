"""Benchmark (not a test): a million steps of every design in flat memory (issues 33 and 42).

    python benchmarks/bench_memory.py [--designs D,...] [--cells D,...] [--runs D,...] [--windows 32000,...]
                                      [--steps 1000000] [--at 250000] [--quick] [--json FILE]

Two kinds of row, each against a peak RSS under 500 MB and growth under 0.25 KB a step between
``--at`` (250,000) and ``--steps`` (1,000,000):

* ``memory.<design>``: one bench cell of the design (seed 0, its faithful variant, no oracle beside it),
  run as ``memsim bench`` runs it (``sim.bench.run_task``, the trace streamed to nowhere) with the
  workload generated a step at a time (the per-process workload memo is off, so the figure is the cell's
  own), at 1,000,000 load steps in **one** fresh process per window: the cell's metrics read the
  process's peak RSS so far (``VmHWM`` in ``/proc/self/status``) as step 250,000 passes, and the peak at
  the end is the process's ``ru_maxrss``. The growth is the difference over the 750,000 steps between;
  the row's figure is the largest peak over the windows (``--windows``; default 32k only: a million-step
  cell takes tens of minutes on a loaded machine). Before issue 33 a MerchantBench cell at 32k grew by
  about 4 KB a step (890 MB at 100,000 steps); issue 33 left it under 1 KB (Nemsy's at 1.00).
* ``run.<design>``: the design's long scenario through ``memsim run SCENARIO --param ... --out TMPDIR``
  (the trace streamed to disk) in a fresh process at 250,000 and at 1,000,000 steps, the peak RSS of
  each child from ``os.wait4``; the row shows the command. :data:`RUNS` maps a design to its scenario
  and the parameters that make N steps (edit it when a scenario changes). Before issue 42,
  ``merchantbench_long_run`` grew by about 2.1 KB a step (439 MB at 200,000 steps).

``--cells`` and ``--runs`` choose the designs of each kind (default: every one of ``--designs``; an
empty list leaves that kind out), so the hours-long full run can be split over processes run two at a
time and the page written with ``run_all.py --assemble``. A cell or run that fails is a failed row naming
why. Peak RSS is valid on a loaded machine (each measurement is its own process); wall times are shown
but not scored. ``--quick``: 8,000 steps with the peak read at 2,000, where the byte-bounded caches
(token counts 32 MiB, the MerchantBench history's counts 8 MiB, fact sets) are still filling, so only
its peaks are comparable.
"""

from __future__ import annotations

import math
import os
import shlex
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import ROOT, Goal, fresh, parser, report

DESIGNS = ("merchantbench", "nemsy", "rsiagent", "tracecraft")
WINDOWS = (32_000,)
STEPS, AT = 1_000_000, 250_000
QUICK_STEPS, QUICK_AT = 8_000, 2_000
FLAT_KB_PER_STEP = 0.25
PEAK_MB = 500

#: Each design's long ``memsim run`` scenario and its ``--param`` values for *n* steps.
RUNS: dict[str, tuple[str, Callable[[int], dict[str, int]]]] = {
    "merchantbench": ("merchantbench_long_run", lambda n: {"steps": n}),
    "nemsy": (
        "nemsy_long_life",
        lambda n: {"ingests": round(0.8 * n), "queries": n - round(0.8 * n), "checkpoint": max(1, n // 10)},
    ),
    "rsiagent": ("rsiagent_long_target_run", lambda n: {"turns": n}),
    "tracecraft": ("tracecraft_long_team", lambda n: {"steps": n}),
}

CELL = """
import json, sys
import sim.workload
sim.workload.WORKLOAD_MEMO_CHARS = 0  # the cell's own memory: no workload kept for another cell
import sim.bench.tasks as tasks
design, budget, steps, at = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
seen = {"n": 0, "hwm_kb": None}

def hwm_kb():
    with open("/proc/self/status") as f:
        return next(int(ln.split()[1]) for ln in f if ln.startswith("VmHWM:"))

class Metrics(tasks.Metrics):
    def __call__(self, step, req, rec):
        super().__call__(step, req, rec)
        seen["n"] += 1
        if seen["n"] == at:
            seen["hwm_kb"] = hwm_kb()

tasks.Metrics = Metrics
row = tasks.run_task(tasks.Task(design, budget, 0, steps))
print(json.dumps({"steps": row["steps"], "requests": row["requests"], "seconds": row["seconds"],
                  "at_mb": seen["hwm_kb"] / 1024 if seen["hwm_kb"] else None}))
"""


def _target() -> str:
    return f"< {PEAK_MB} MB, growth < {FLAT_KB_PER_STEP:g} KB/step"


def _failed(key: str, goal: str, why: str) -> Goal:
    """A row whose measurement failed (no figure: NaN)."""
    return Goal(key, goal, math.nan, _target(), False, f"failed: {why}", "MB")


def cell_goal(design: str, windows: tuple[int, ...], steps: int, at: int) -> Goal:
    """``memory.<design>``: one process per window, the peak at *at* read inside it."""
    goal = f"{design} bench cell of {steps:,} steps: peak RSS, largest over windows " + "/".join(
        f"{w // 1000}k" for w in windows
    )
    peaks, growths, parts = [], [], []
    for w in windows:
        try:
            out = fresh(CELL, design, str(w), str(steps), str(at), timeout=6 * 3600)
        except (RuntimeError, subprocess.TimeoutExpired) as exc:
            return _failed(f"memory.{design}", goal, f"{w // 1000}k: {str(exc).strip().splitlines()[-1]}")
        a, b = out["at_mb"], out["_rss_mb"]
        kb = (b - a) * 1024 / (out["steps"] - at)  # the cell's steps: its load steps and its calm tail
        peaks.append(b)
        growths.append(kb)
        parts.append(
            f"{w // 1000}k: {a:.0f} MB at {at:,}, {b:.0f} MB at {out['steps']:,} ({kb:.3f} KB/step, "
            f"{out['seconds']:.0f} s)"
        )
    return Goal.of(
        f"memory.{design}",
        goal,
        max(peaks),
        _target(),
        "; ".join(parts) + "; one fresh process per window, the peak at the first size read in it (VmHWM)",
        also=all(g < FLAT_KB_PER_STEP for g in growths),
        unit="MB",
    )


def run_argv(design: str, n: int, out: str) -> list[str]:
    """``memsim run`` of *design*'s long scenario (:data:`RUNS`) at *n* steps, its trace under *out*."""
    scenario, params = RUNS[design]
    argv = ["memsim", "run", scenario]
    for k, v in params(n).items():
        argv += ["--param", f"{k}={v}"]
    return [*argv, "--out", out]


def peak_of(argv: list[str], timeout: float = 6 * 3600) -> tuple[float, float]:
    """Peak RSS in MB (``os.wait4``'s ``ru_maxrss``) and wall seconds of *argv* in a fresh process from
    the repository root; a failure raises :class:`RuntimeError` with its last stderr line."""
    cmd = [sys.executable, "-m", "sim.cli", *argv[1:]] if argv[0] == "memsim" else argv
    with tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=err,
                                env={**os.environ, "PYTHONHASHSEED": "0"})  # fmt: skip
        deadline = t0 + timeout
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() > deadline:
                proc.kill()
                os.wait4(proc.pid, 0)
                raise RuntimeError(f"timed out after {timeout:.0f} s")
            time.sleep(0.5)
        proc.returncode = os.waitstatus_to_exitcode(status)
        seconds = time.perf_counter() - t0
        if proc.returncode != 0:
            err.seek(0)
            tail = [ln for ln in err.read().decode(errors="replace").splitlines() if ln.strip()]
            raise RuntimeError(f"exited {proc.returncode}: {tail[-1] if tail else '(no stderr)'}")
    return usage.ru_maxrss / 1024, seconds


def run_goal(design: str, steps: int, at: int) -> Goal:
    """``run.<design>``: the long scenario at *at* and at *steps* steps, each in a fresh process."""
    scenario = RUNS[design][0]
    goal = f"`memsim run {scenario}` of {steps:,} steps, trace to disk: peak RSS"
    shown = shlex.join(run_argv(design, steps, "TMPDIR"))
    try:
        with tempfile.TemporaryDirectory(prefix="memsim-bench-run-") as tmp:
            a, sa = peak_of(run_argv(design, at, f"{tmp}/a"))
            b, sb = peak_of(run_argv(design, steps, f"{tmp}/b"))
            size = sum(p.stat().st_size for p in Path(f"{tmp}/b").rglob("*") if p.is_file()) / 1e6
    except RuntimeError as exc:
        return _failed(f"run.{design}", goal, f"{exc}; `{shown}`")
    kb = (b - a) * 1024 / (steps - at)
    return Goal.of(
        f"run.{design}",
        goal,
        b,
        _target(),
        f"{a:.0f} MB at {at:,} steps ({sa:.0f} s), {b:.0f} MB at {steps:,} ({sb:.0f} s): {kb:.3f} KB/step; "
        f"trace {size:,.0f} MB on disk; each a fresh process; `{shown}`",
        also=kb < FLAT_KB_PER_STEP,
        unit="MB",
    )


def _designs(text: str | None, default: list[str]) -> list[str]:
    if text is None:
        return default
    return [d for d in (x.strip() for x in text.split(",")) if d and d != "none"]


def main() -> None:
    ap = parser(__doc__.splitlines()[0] if __doc__ else "")
    ap.add_argument("--designs", default=",".join(DESIGNS), help="comma-separated designs to measure")
    ap.add_argument("--cells", default=None, help="designs whose bench cells to measure (default: --designs)")
    ap.add_argument("--runs", default=None, help="designs whose `memsim run` to measure (default: --designs)")
    ap.add_argument(
        "--windows", default=",".join(map(str, WINDOWS)), help="comma-separated windows (one process each)"
    )
    ap.add_argument("--steps", type=int, default=None, help=f"the long size (default {STEPS:,})")
    ap.add_argument("--at", type=int, default=None, help=f"where the growth starts (default {AT:,})")
    a = ap.parse_args()
    steps = a.steps or (QUICK_STEPS if a.quick else STEPS)
    at = a.at or (QUICK_AT if a.quick else AT)
    if not 0 < at < steps:
        ap.error("--at must be positive and below --steps")
    designs = _designs(a.designs, list(DESIGNS))
    windows = tuple(int(w) for w in a.windows.split(",") if w)
    goals = [cell_goal(d, windows, steps, at) for d in _designs(a.cells, designs)]
    for d in _designs(a.runs, designs):
        if d not in RUNS:
            ap.error(f"--runs: no long scenario for {d!r} in RUNS")
        goals.append(run_goal(d, steps, at))
    report("memory: a million steps", goals, a.json)


if __name__ == "__main__":
    main()
