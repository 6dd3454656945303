"""Run every benchmark script and generate ``docs/benchmarks.md``: every goal, its figure, its target,
whether it is met, the command that measured it, and the machine.

    python benchmarks/run_all.py [--only core,sweep] [--skip nemsy] [--quick] [--timeout 3600] [--out FILE]
                                 [--dir DIR]
    python benchmarks/run_all.py --assemble JSON [JSON ...] --out FILE

Each ``benchmarks/bench_*.py`` runs in its own fresh process with ``--json FILE`` (a file in a temporary
directory; ``--quick`` is passed on), one after another so they never share the machine with each other.
A script that fails, times out or writes no JSON does not hide the others: it becomes one failed row
naming the script and why (its exit code and last line of stderr). The page is written atomically.
``--assemble`` writes the page from goals documents of scripts run separately (hours-long ones, run two at
a time), each row with the command that wrote it.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import ROOT, machine, shown

BENCH_DIR = Path(__file__).resolve().parent
DOC = ROOT / "docs" / "benchmarks.md"


def scripts(only: set[str], skip: set[str], where: Path = BENCH_DIR) -> list[Path]:
    """The benchmark scripts in *where* to run, by name order (``bench_core.py`` is ``core``)."""
    found = sorted(where.glob("bench_*.py"))
    out = []
    for p in found:
        name = p.stem.removeprefix("bench_")
        if (only and name not in only) or name in skip:
            continue
        out.append(p)
    return out


def run_script(path: Path, json_path: Path, *, quick: bool, timeout: float) -> dict[str, Any]:
    """Run one script in a fresh process; its JSON result, or a result with one failed row."""
    argv = [sys.executable, str(path), "--json", str(json_path), *(["--quick"] if quick else [])]
    shown = f"python {_shown(path)} --json FILE" + (" --quick" if quick else "")
    t0 = time.perf_counter()
    why = ""
    try:
        proc = subprocess.run(
            argv, cwd=ROOT, capture_output=True, text=True, timeout=timeout,
            env={**os.environ, "PYTHONHASHSEED": "0"},
        )  # fmt: skip
        if proc.returncode != 0:
            tail = [ln for ln in proc.stderr.splitlines() if ln.strip()]
            why = f"exited {proc.returncode}: {tail[-1] if tail else '(no stderr)'}"
    except subprocess.TimeoutExpired:
        why = f"timed out after {timeout:.0f} s"
    seconds = time.perf_counter() - t0
    data: dict[str, Any] | None = None
    if not why and not json_path.exists():
        why = "exited 0 but wrote no --json file (it does not follow the benchmarks/harness.py convention)"
    elif not why:
        try:
            data = json.loads(json_path.read_text())
            if not isinstance(data, dict) or not isinstance(data.get("goals"), list):
                raise ValueError("no goals list")
        except (OSError, ValueError) as exc:
            why = f"its --json file is not a goals document ({exc.__class__.__name__}: {exc})"
            data = None
    if data is None:
        return {
            "script": path.name,
            "title": path.stem,
            "command": shown,
            "seconds": seconds,
            "failed": why,
            "goals": [
                {
                    "key": f"{path.stem.removeprefix('bench_')}.failed",
                    "goal": f"{_shown(path)} did not report",
                    "value": None,
                    "target": "-",
                    "ok": False,
                    "detail": why,
                    "unit": "",
                }
            ],
        }
    data.update(script=path.name, command=shown, seconds=seconds, failed="")
    return data


FLOORS = """
import json, random, time
import simpy
from sim.text import filler
from sim.tokens import encoding

def bare(n=400_000):
    env = simpy.Environment()
    def proc(k):
        for _ in range(k):
            yield env.timeout(1)
    for _ in range(4):
        env.process(proc(n // 4))
    t0 = time.perf_counter(); env.run(); return n / (time.perf_counter() - t0)

enc = encoding()
texts = [filler(random.Random(k), 4_000) for k in range(500)]
enc.encode(texts[0], disallowed_special=())
def tok():
    t0 = time.perf_counter()
    for x in texts:
        enc.encode(x, disallowed_special=())
    return sum(len(x.encode()) for x in texts) / (time.perf_counter() - t0)

floors = {"simpy_events_s": max(bare() for _ in range(3)), "tiktoken_bytes_s": max(tok() for _ in range(3))}
print(json.dumps(floors))
"""
"""Measures the two floors every figure rests on, in a fresh process: bare SimPy timeouts (400,000 events
in 4 processes, as ``core.sim_events``' floor) and tiktoken cl100k over 500 4,000-character filler texts,
each the best of 3."""


def floors(timeout: float = 300.0) -> dict[str, float]:
    """The machine's floors measured now (empty if the measurement fails): ``simpy_events_s`` and
    ``tiktoken_bytes_s``. A figure from another machine scales by the ratio of its page's floors."""
    try:
        proc = subprocess.run(
            [sys.executable, "-c", FLOORS], cwd=ROOT, capture_output=True, text=True, timeout=timeout,
            env={**os.environ, "PYTHONHASHSEED": "0"},
        )  # fmt: skip
        data = json.loads(proc.stdout) if proc.returncode == 0 else {}
    except (subprocess.TimeoutExpired, ValueError):
        data = {}
    return {k: float(v) for k, v in data.items() if isinstance(v, (int, float))}


def floors_line(where: dict[str, Any]) -> str:
    """The header's line of floors (measured at the start and at the end of the run)."""
    runs = [f for f in (where.get("floors_start"), where.get("floors_end")) if f]
    if not runs:
        return "Floors: not measured."

    def both(key: str, scale: float, unit: str) -> str:
        vals = [f"{f[key] / scale:.2f}" for f in runs if key in f]
        return f"{' and '.join(vals)} {unit}" if vals else "?"

    when = "at the start and at the end of the run" if len(runs) == 2 else "once in the run"
    simpy, tokens = both("simpy_events_s", 1e6, "M events/s"), both("tiktoken_bytes_s", 1e6, "MB/s")
    return (
        f"Floors ({when}, each in a fresh process, best of 3): bare SimPy {simpy}; tiktoken cl100k {tokens}. "
        "A time from another machine scales by the ratio of its page's floors."
    )


def _shown(path: Path) -> str:
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def _value(g: dict[str, Any]) -> str:
    v = g.get("value")
    if v is None or v != v:  # no figure (None), or a failed measurement's NaN
        return "-"
    return shown(v, g.get("unit", "x"), g.get("target", "(reported)"))


def _esc(s: str) -> str:
    return str(s).replace("|", "\\|").replace("\n", " ")


RUN = (
    "Each script ran in a fresh process, one after another. Every figure is a ratio against a floor or",
    "a peer measured in the same run, or a memory figure against its bound (each script's docstring",
    "says which); the command of each row reproduces it. Timings vary with the machine and its load.",
)
ASSEMBLED = (
    "Assembled from the goals documents (`--json FILE`) of scripts run separately, each in its own fresh",
    "processes (for the long cells, two scripts at a time: a peak RSS is one process's own); the command",
    "of each row reproduces it. Timings vary with the machine and its load.",
)


def markdown(
    results: list[dict[str, Any]], where: dict[str, Any], command: str, intro: tuple[str, ...] = ()
) -> str:
    """The page: the machine, one table of every goal, then each script's command and run time."""
    goals = [(r, g) for r in results for g in r["goals"]]
    measured = [g for r, g in goals if not r["failed"]]
    met = sum(1 for g in measured if g.get("ok"))
    failed = [r["script"] for r in results if r["failed"]]
    load = where.get("load_average") or []
    lines = [
        "# Benchmarks",
        "",
        f"Generated by `{command}`; do not edit.",
        "",
        *(intro or RUN),
        "",
        f"Machine: {where.get('processor', '?')}, {where.get('cpus', '?')} CPUs, "
        f"{where.get('platform', '?')}, Python {where.get('python', '?')}"
        + (f"; load average {', '.join(str(x) for x in load)} when the run started." if load else "."),
        "",
        floors_line(where),
        "",
        f"{met} of {len(measured)} goals met"
        + (f"; {len(failed)} script(s) did not report ({', '.join(failed)})." if failed else "."),
        "",
        "| goal | now | target | ok | how it was measured | command |",
        "|---|---|---|---|---|---|",
    ]
    for r, g in goals:
        ok = "yes" if g.get("ok") else "**no**"
        lines.append(
            f"| {_esc(g.get('goal', g.get('key', '?')))} (`{_esc(g.get('key', ''))}`) | {_value(g)} | "
            f"{_esc(g.get('target', ''))} | {ok} | {_esc(g.get('detail', ''))} | `{_esc(r['command'])}` |"
        )
    lines += ["", "| script | command | seconds | status |", "|---|---|---|---|"]
    for r in results:
        status = f"failed: {_esc(r['failed'])}" if r["failed"] else "ok"
        secs = "-" if r.get("seconds") is None else f"{r['seconds']:.0f}"
        lines.append(f"| {r['script']} | `{_esc(r['command'])}` | {secs} | {status} |")
    return "\n".join(lines) + "\n"


def _names(text: str) -> set[str]:
    return {x.strip().removeprefix("bench_").removesuffix(".py") for x in text.split(",") if x.strip()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--only", default="", help="comma-separated script names to run (core, sweep, ...)")
    ap.add_argument("--skip", default="", help="comma-separated script names to leave out")
    ap.add_argument("--quick", action="store_true", help="pass --quick to every script (a smoke run)")
    ap.add_argument("--timeout", type=float, default=3600.0, help="seconds each script may take")
    ap.add_argument("--out", type=Path, default=DOC, help="the Markdown page to write")
    ap.add_argument("--dir", type=Path, default=BENCH_DIR, help="where the bench_*.py scripts are")
    ap.add_argument(
        "--assemble", nargs="+", type=Path, metavar="JSON",
        help="write the page from these scripts' --json files (run separately) instead of running scripts",
    )  # fmt: skip
    a = ap.parse_args(argv)
    if a.assemble:
        shown = " ".join(["python benchmarks/run_all.py", *(argv if argv is not None else sys.argv[1:])])
        return assemble(a.assemble, a.out, shown)
    chosen = scripts(_names(a.only), _names(a.skip), a.dir.resolve())
    if not chosen:
        print("run_all: no benchmark scripts selected", file=sys.stderr)
        return 2
    where = {**machine(), "floors_start": floors()}
    results = []
    with tempfile.TemporaryDirectory(prefix="memsim-run-all-") as tmp:
        for path in chosen:
            print(f"run_all: {path.name} ...", file=sys.stderr, flush=True)
            r = run_script(path, Path(tmp) / f"{path.stem}.json", quick=a.quick, timeout=a.timeout)
            results.append(r)
            met = sum(bool(g.get("ok")) for g in r["goals"])
            state = f"FAILED ({r['failed']})" if r["failed"] else f"{met}/{len(r['goals'])} met"
            print(f"run_all: {path.name}: {state}, {r['seconds']:.0f} s", file=sys.stderr, flush=True)
    where["floors_end"] = floors()
    shown = " ".join(["python benchmarks/run_all.py", *(argv if argv is not None else sys.argv[1:])])
    page = markdown(results, where, shown)
    a.out.parent.mkdir(parents=True, exist_ok=True)
    tmp_out = a.out.with_name(f".{a.out.name}.{os.getpid()}.tmp")
    tmp_out.write_text(page)
    os.replace(tmp_out, a.out)
    print(f"wrote {a.out}")
    return 0 if all(not r["failed"] for r in results) else 1


def assemble(files: list[Path], out: Path, shown: str) -> int:
    """Write the page *out* from goals documents that scripts wrote with ``--json FILE``: each row keeps the
    command that wrote it (the ``--json`` path shown as ``FILE``) and the machine it ran on."""
    results = []
    where: dict[str, Any] = {}
    for f in files:
        try:
            data = json.loads(f.read_text())
            if not isinstance(data, dict) or not isinstance(data.get("goals"), list):
                raise ValueError("no goals list")
        except (OSError, ValueError) as exc:
            print(f"run_all: error: {f}: not a goals document ({exc})", file=sys.stderr)
            return 2
        argv = shlex.split(str(data.get("command", "")))  # as the harness wrote it (shlex.join)
        argv = ["FILE" if i and argv[i - 1] == "--json" else x for i, x in enumerate(argv)]
        script = Path(argv[0]).name if argv else f.name
        data.update(script=script, command="python " + shlex.join(argv), seconds=None, failed="")
        results.append(data)
        where = where or dict(data.get("machine") or {})
    page = markdown(results, where, shown, ASSEMBLED)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp_out = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    tmp_out.write_text(page)
    os.replace(tmp_out, out)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
