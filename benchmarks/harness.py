"""The common harness of every benchmark script: fresh processes, ratios beside their floor, one result file.

Each ``benchmarks/bench_*.py`` measures goals as **ratios against a floor or a fair peer measured in the
same run** (so the numbers compare across machines), each configuration in a **fresh process**
(:func:`fresh`: no cache warmed by another configuration), and reports them as :class:`Goal` rows:

    Goal.of("mb.loop", "MerchantBench loop vs its floor", 0.41, ">= 1/3", "0.073 s vs 0.030 s (median of 5)")

:func:`report` prints the rows as a table and, with ``--json FILE``, writes them for
``benchmarks/run_all.py``, which runs every script and generates ``docs/benchmarks.md`` (the table, the
commands and the machine). Timings are wall clock or peak RSS and never asserted by the tests.
"""

from __future__ import annotations

import argparse
import json
import operator
import os
import platform
import re
import resource
import shlex
import statistics
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


#: A target the harness can check: a comparison and a number (``>= 1/3``, ``<= 1.25``, ``< 1,024 KB``),
#: then anything (its unit, a remark); ``(reported)`` has none and is always met.
_TARGET = re.compile(r"\s*(>=|<=|>|<)\s*(\d[\d,]*(?:\.\d+)?)(?:/(\d+))?")
_COMPARE: dict[str, Callable[[float, float], bool]] = {
    ">=": operator.ge, "<=": operator.le, ">": operator.gt, "<": operator.lt,
}  # fmt: skip


def meets(value: float, target: str) -> bool:
    """Whether *value* meets *target* as written (``">= 1/3"``: at least one third); ``"(reported)"``
    is met by any value. A target of another form is an error: say how it is met with ``Goal(ok=...)``."""
    if target == "(reported)":
        return True
    m = _TARGET.match(target)
    if m is None:
        raise ValueError(f"target {target!r} is not a comparison with a number")
    bound = float(m[2].replace(",", "")) / (int(m[3]) if m[3] else 1)
    return _COMPARE[m[1]](value, bound)


def shown(value: float, unit: str = "x", target: str = "(reported)") -> str:
    """*value* as the tables print it: three significant digits for a ratio (``1.8x``), one decimal for a
    figure with a unit (``175.8 MB``), and more digits while fewer would read as meeting *target* when
    the value does not, or the other way round (1.797 against ``>= 1.8x`` is ``1.797x``, not ``1.8x``)."""
    if unit != "x":
        return f"{value:,.1f} {unit}"
    digits = 3
    if target != "(reported)" and _TARGET.match(target):
        met = meets(value, target)
        while digits < 8 and meets(float(f"{value:.{digits}g}"), target) != met:
            digits += 1
    return f"{value:,.{digits}g}x"


@dataclass
class Goal:
    """One measured goal: the ratio (or figure) beside its target and what it was measured against.

    Build it with :meth:`of`, which checks the value against the target as written, so the two cannot
    disagree; ``Goal(..., ok=...)`` directly only for a target that is not a comparison (``32/960``)."""

    key: str
    goal: str
    value: float
    target: str
    ok: bool
    detail: str = ""
    unit: str = "x"
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def of(
        cls,
        key: str,
        goal: str,
        value: float,
        target: str,
        detail: str = "",
        *,
        also: bool = True,
        unit: str = "x",
        extra: dict[str, Any] | None = None,
    ) -> Goal:
        """The goal *key*, met when *value* meets *target* (:func:`meets`) and *also* holds (a condition
        the figure alone does not show: the rows were identical, nothing was kept)."""
        return cls(key, goal, value, target, meets(value, target) and also, detail, unit, extra or {})


def fresh(code: str, *args: str, timeout: float = 3600) -> Any:
    """Run *code* (a Python snippet whose last printed line is one JSON value) in a fresh interpreter.

    The child starts with no cache warmed by the parent or by another configuration (``sys.argv[1:]`` are
    *args*); its peak RSS in MB is added as ``_rss_mb`` when the result is a dict.
    """
    tail = "\nimport resource as _r\nprint('__RSS__', _r.getrusage(_r.RUSAGE_SELF).ru_maxrss / 1024)\n"
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code) + tail, *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=timeout,
        env={**os.environ, "PYTHONHASHSEED": "0"},
    )
    if proc.returncode != 0:
        raise RuntimeError(f"benchmark child failed:\n{proc.stderr[-3000:]}")
    lines = [ln for ln in proc.stdout.splitlines() if ln.strip()]
    rss = float(lines[-1].split()[1])
    value = json.loads(lines[-2])
    if isinstance(value, dict):
        value["_rss_mb"] = round(rss, 1)
    return value


def command_time(argv: Sequence[str], *, timeout: float = 3600) -> tuple[float, float]:
    """Wall and CPU seconds of running *argv* as a fresh process from the repository root (output
    discarded). The CPU is the command's own and that of every process it waited for (its workers), from
    this process's ``RUSAGE_CHILDREN``. A failing command raises :class:`RuntimeError` with its last
    stderr lines."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(
        list(argv), capture_output=True, text=True, cwd=ROOT, timeout=timeout,
        env={**os.environ, "PYTHONHASHSEED": "0"},
    )  # fmt: skip
    seconds = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} exited {proc.returncode}:\n{proc.stderr[-3000:]}")
    return seconds, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def fresh_rounds(configs: dict[str, Callable[[], Any]], rounds: int) -> dict[str, list[Any]]:
    """Run each configuration (a call that starts its own fresh process) once per round, interleaved
    (``a b a b ...``), so drift in the machine's load hits every configuration alike."""
    out: dict[str, list[Any]] = {k: [] for k in configs}
    for _ in range(rounds):
        for k, fn in configs.items():
            out[k].append(fn())
    return out


def median(values: Sequence[float]) -> float:
    """The median of *values*."""
    return statistics.median(values)


def median_time(fn: Callable[[], Any], rounds: int = 5) -> float:
    """The median wall time of *rounds* calls of *fn*, in seconds."""
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def interleaved(fns: dict[str, Callable[[], Any]], rounds: int = 5) -> dict[str, float]:
    """Median wall times of several functions timed in interleaved rounds (drift hits all alike)."""
    times: dict[str, list[float]] = {k: [] for k in fns}
    for _ in range(rounds):
        for k, fn in fns.items():
            t0 = time.perf_counter()
            fn()
            times[k].append(time.perf_counter() - t0)
    return {k: statistics.median(v) for k, v in times.items()}


def machine() -> dict[str, Any]:
    """What the numbers were measured on (with the load average when measured: other work on the machine
    slows every configuration, and parallel ones most)."""
    try:
        load = [round(x, 2) for x in os.getloadavg()]
    except OSError:
        load = []
    return {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "processor": _cpu_model() or platform.processor() or platform.machine(),
        "load_average": load,
    }


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return ""


def parser(description: str) -> argparse.ArgumentParser:
    """The common command line: ``--json FILE`` and ``--quick``."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--json", type=Path, help="also write the goals as JSON here (for run_all.py)")
    ap.add_argument("--quick", action="store_true", help="smaller sizes, for a smoke run")
    return ap


def _argv() -> str:
    """This script's command line, its path relative to the checkout when it is inside it (a row's
    command reproduces it from any clone)."""
    script = Path(sys.argv[0]).resolve()
    head = script.relative_to(ROOT).as_posix() if script.is_relative_to(ROOT) else sys.argv[0]
    return shlex.join([head, *sys.argv[1:]])


def report(title: str, goals: Sequence[Goal], json_path: Path | None = None, *, command: str = "") -> None:
    """Print the goals as a table; with *json_path*, write them (and the machine) as JSON."""
    print(f"\n{title}")
    width = max((len(g.goal) for g in goals), default=10)
    for g in goals:
        value = shown(g.value, g.unit, g.target)
        mark = "ok " if g.ok else "MISS"
        print(f"  {mark} {g.goal:<{width}}  {value:>12}  target {g.target:<10}  {g.detail}")
    if json_path is not None:
        json_path.write_text(
            json.dumps(
                {
                    "title": title,
                    "command": command or _argv(),  # an empty argument stays ""
                    "machine": machine(),
                    "goals": [asdict(g) for g in goals],
                },
                indent=2,
            )
            + "\n"
        )
