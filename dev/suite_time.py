"""Measure how long the README's test command takes, and write it where a reader looks.

python dev/suite_time.py                      # run .ci/run's pytest command (+ --durations=30), timed
python dev/suite_time.py --seconds 512 --cores 2 [--log pytest.log]   # record a run measured elsewhere

Writes README's ``<!-- memsim:suite-time -->`` block (one sentence: the command's wall time, the cores, the
date) and ``docs/test-suite.md`` (the same, with the 30 slowest tests when a log with pytest's
``--durations`` table is given or the run here made one). Run it on an otherwise idle machine with the
cores the sentence names: a loaded machine reports its load, not the suite.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BLOCK = re.compile(r"<!-- memsim:suite-time -->\n(?:.*?\n)?<!-- /memsim:suite-time -->", re.DOTALL)
DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)s\s+(call|setup|teardown)\s+(\S+)", re.MULTILINE)


def command() -> str:
    """The pytest line of ``.ci/run`` (which tests/test_readme.py keeps equal to the README's)."""
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    return next(ln.strip() for ln in ci.splitlines() if "-m pytest" in ln and not ln.startswith("#"))


def _minutes(seconds: float) -> str:
    m, s = divmod(round(seconds), 60)
    return f"{m} min {s:02d} s" if m else f"{s} s"


def slowest(log: str, n: int = 30) -> list[tuple[float, str, str]]:
    """The *n* slowest (seconds, phase, test) of pytest's ``--durations`` table in *log*."""
    rows = [(float(s), phase, test) for s, phase, test in DURATION.findall(log)]
    return sorted(rows, key=lambda r: -r[0])[:n]


def write(seconds: float, cores: int, log: str, when: str) -> None:
    cmd = command()
    sentence = (
        f"On {cores} cores the test command takes about {_minutes(seconds)} (measured {when}; "
        f"`python dev/suite_time.py` re-measures it; the slowest tests are in "
        f"[docs/test-suite.md](docs/test-suite.md))."
    )
    readme = ROOT / "README.md"
    text = readme.read_text(encoding="utf-8")
    if not BLOCK.search(text):
        raise SystemExit("README.md has no <!-- memsim:suite-time --> block")
    text = BLOCK.sub(lambda _m: f"<!-- memsim:suite-time -->\n{sentence}\n<!-- /memsim:suite-time -->", text)
    readme.write_text(text, encoding="utf-8")
    lines = [
        "# The test suite's duration",
        "",
        f"`{cmd}`: {seconds:,.0f} s wall on {cores} cores, measured {when} by `python dev/suite_time.py`.",
        "",
    ]
    top = slowest(log)
    if top:
        lines += [
            "The 30 slowest test phases (pytest `--durations=30`):",
            "",
            "| s | phase | test |",
            "|---|---|---|",
        ]
        lines += [f"| {s:.2f} | {phase} | `{test}` |" for s, phase, test in top]
    else:
        lines.append("No `--durations` table was recorded with this measurement.")
    (ROOT / "docs" / "test-suite.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(sentence)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, help="record this wall time instead of running the suite")
    ap.add_argument("--cores", type=int, default=len(os.sched_getaffinity(0)), help="cores it ran on")
    ap.add_argument("--log", type=Path, help="pytest's output of that run (for its --durations table)")
    args = ap.parse_args()
    when = dt.date.today().isoformat()
    if args.seconds is not None:
        log = args.log.read_text(encoding="utf-8") if args.log else ""
        write(args.seconds, args.cores, log, when)
        return
    argv = [sys.executable if a.endswith("/python") else a for a in shlex.split(command())]
    argv.append("--durations=30")
    t0 = time.monotonic()
    proc = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True)
    seconds = time.monotonic() - t0
    sys.stdout.write(proc.stdout[-3000:])
    if proc.returncode != 0:
        raise SystemExit(f"the suite failed (exit {proc.returncode}): nothing recorded")
    write(seconds, args.cores, proc.stdout, when)


if __name__ == "__main__":
    main()
