"""``memsim bench``: validate every option first, run the sweep, then write its files together."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from sim.bench.plots import PLOTS as PLOT_FILES
from sim.errors import UsageError

MIN_BUDGET, MAX_BUDGET = 500, 2_000_000
#: The fact-token benchmark's windows when --budgets is not given.
DEFAULT_BUDGETS = "8000,32000,128000"
#: The most windows one sweep may list.
MAX_BUDGETS = 32
#: The files a sweep writes into --out (sim.bench.outputs; the plots: sim.bench.plots.PLOTS).
OUTPUT_FILES = ("results.db", "results.csv", "aggregate.csv")


def parse_budgets(text: str) -> list[int]:
    """The ``--budgets`` list: at most 32 windows, each within [500, 2,000,000] tokens."""
    items = [x.strip() for x in text.split(",") if x.strip()]
    if not items:
        raise UsageError("--budgets is empty")
    if len(items) > MAX_BUDGETS:
        raise UsageError(f"--budgets lists {len(items)} windows; at most {MAX_BUDGETS}")
    out = []
    for x in items:
        try:
            b = int(x.replace("_", ""))
        except ValueError as exc:
            raise UsageError(f"--budgets: {x!r} is not an integer") from exc
        if not MIN_BUDGET <= b <= MAX_BUDGET:
            raise UsageError(
                f"--budgets must be between {MIN_BUDGET:,} and {MAX_BUDGET:,} tokens each, not {b:,}"
            )
        out.append(b)
    if len(set(out)) != len(out):
        raise UsageError("--budgets lists a window twice")
    return out


def _prepare() -> None:
    """What writing the outputs imports (run beside the workers' first cells with ``--workers N``)."""
    import sqlite_utils  # noqa: F401


def _prepare_plots() -> None:
    from sim.bench.plots import preload

    _prepare()
    preload()


def _conversation(workload: Path | None) -> tuple[str, Path] | None:
    """The (format, file) of a ``--workload`` that is a real conversation (``longmemeval:F``, ``locomo:F``,
    or a native JSONL file with turn ids and evidence); None for the fact-token benchmark's file."""
    if workload is None:
        return None
    try:
        from sim.conversations.formats import has_turn_labels, parse_workload_spec
    except ImportError:  # the loaders are not installed: only the fact-token file format
        return None
    kind, path = parse_workload_spec(str(workload))
    if kind == "native" and not has_turn_labels(path):
        return None
    return kind, path


def run_cli(
    *,
    designs: str | None,
    budgets: str | None,
    seeds: int | None,
    steps: int | None,
    knobs: list[str],
    workload: Path | None,
    workers: int,
    executor: str,
    scheduler: str | None,
    out: Path,
    plots: bool,
    html: bool,
    progress: bool,
    provider: str = "none",
    cache_ttl: str | None = None,
    price: str | None = None,
    roles: str | None = None,
) -> list[dict[str, Any]]:
    """``memsim bench`` (*budgets* None: :data:`DEFAULT_BUDGETS`, or on a conversation workload windows
    fitted to the corpus, :mod:`sim.conversations.windows`)."""
    from sim.bench.executors import run_sweep
    from sim.bench.metrics import aggregate
    from sim.bench.outputs import write_outputs
    from sim.bench.table import render
    from sim.bench.tasks import parse_designs, tasks_for
    from sim.cache import parse_provider
    from sim.cli import report_console
    from sim.outputs import Outputs

    if executor not in ("local", "dask"):
        raise UsageError(f"unknown executor {executor!r}: expected local or dask")
    if scheduler and executor != "dask":
        raise UsageError("--scheduler needs --executor dask")
    cache = parse_provider(provider, cache_ttl, price)
    conversation = _conversation(workload)
    if conversation is not None:
        from sim.conversations.baselines import without_baselines

        designs = without_baselines(designs)  # the baselines always run: naming one is accepted
    specs = parse_designs(designs, knobs)
    if conversation is not None:
        bc = parse_budgets(budgets) if budgets is not None else None
        if steps is not None:
            raise UsageError("--steps does not apply with --workload (the file sets the steps)")
        if cache is not None:
            raise UsageError("--provider applies to the fact-token benchmark, not to conversation workloads")
        from sim.conversations.cli import run_conversation_cli
        from sim.conversations.roles import roles_for

        return run_conversation_cli(
            specs, bc, conversation, workers=workers, executor=executor, scheduler=scheduler, out=out,
            html=html, progress=progress, plots=plots, roles=roles_for(conversation[0], roles),
        )  # fmt: skip
    if roles is not None:
        raise UsageError("--roles applies to conversation workloads (locomo:FILE)")
    bl = parse_budgets(budgets if budgets is not None else DEFAULT_BUDGETS)
    outputs = Outputs()
    out = outputs.dir(out)
    for name in OUTPUT_FILES + (PLOT_FILES if plots else ()) + (("index.html",) if html else ()):
        outputs.file(out / name, "--out")  # a directory in the way fails now, not after the sweep
    workload_file = None
    if workload is not None:
        if steps is not None:
            raise UsageError("--steps does not apply with --workload (the file sets the steps)")
        from sim.workload import load_workload_file

        load_workload_file(workload)  # validate every line before any cell runs
        workload_file = str(workload.resolve())
    # A user's file is the same in every run: it runs once per window unless more runs are asked for, and
    # then only the designs' own randomness (seeded per run) differs between them.
    runs = seeds if seeds is not None else (1 if workload_file else 3)
    workers = min(workers, os.cpu_count() or 1) if executor == "local" else workers
    tasks = tasks_for(specs, bl, runs, steps, workload_file, provider=cache)
    aside = _prepare_plots if plots else _prepare  # the output phase's imports, beside the workers' cells
    rows = run_sweep(
        tasks, workers=workers, executor=executor, scheduler=scheduler, progress=progress, aside=aside
    )
    with outputs.transaction():
        paths = write_outputs(rows, out, plots, outputs=outputs, html=html, workers=workers)
    report_console(240).print(render(aggregate(rows), workload=workload.name if workload else None))
    for p in paths:
        print(f"wrote {p}")
    return rows
