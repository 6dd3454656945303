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
#: The files a sweep writes into --out (sim.bench_outputs; the plots: sim.bench.plots.PLOTS).
OUTPUT_FILES = (
    "results.db",
    "results.csv",
    "aggregate.csv",
    "results.csv.meta.json",
    "aggregate.csv.meta.json",
)


def parse_budgets(text: str) -> list[int]:
    """The ``--budgets`` list: at most 32 windows, each within [500, 2,000,000] tokens."""
    items = [x.strip() for x in text.split(",") if x.strip()]
    if not items:
        raise UsageError("--budgets is empty")
    if len(items) > MAX_BUDGETS:
        raise UsageError(f"--budgets lists {len(items)} windows; at most {MAX_BUDGETS}")
    out = []
    for x in items:
        from sim.numbers import parse_int

        b = parse_int(x.replace("_", ""), "--budgets")
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
    model: str | None = None,
    roles: str | None = None,
) -> list[dict[str, Any]]:
    """``memsim bench`` (*budgets* None: :data:`DEFAULT_BUDGETS`, or on a conversation workload windows
    fitted to the corpus, :mod:`sim.conversations.windows`)."""
    from sim.bench.executors import run_sweep
    from sim.bench.metrics import aggregate
    from sim.bench.table import render
    from sim.bench.tasks import parse_designs, tasks_for
    from sim.bench_outputs import write_outputs
    from sim.cache import parse_provider
    from sim.console import report_console
    from sim.outputs import Outputs

    if executor not in ("local", "dask"):
        raise UsageError(f"unknown executor {executor!r}: expected local or dask")
    if scheduler and executor != "dask":
        raise UsageError("--scheduler needs --executor dask")
    if scheduler:  # a bad or silent scheduler is one error line, before the workload is read
        from sim.bench.executors import check_scheduler

        check_scheduler(scheduler)
    cache = parse_provider(provider, cache_ttl, price, model)
    conversation = _conversation(workload)
    if conversation is not None:
        from sim.conversations.baselines import without_baselines

        designs = without_baselines(designs)  # the baselines always run: naming one is accepted
    specs = parse_designs(designs, knobs)
    settings: dict[str, Any] = {
        "designs": [s.label for s in specs], "variants": {s.label: s.variant.label() for s in specs},
        "knobs": {s.label: s.knob_dict for s in specs if s.knobs},
        "provider": cache.meta() if cache is not None else None, "workers": workers, "executor": executor,
    }  # fmt: skip
    if conversation is not None:
        bc = parse_budgets(budgets) if budgets is not None else None
        if steps is not None:
            raise UsageError("--steps does not apply with --workload (the file sets the steps)")
        from sim.conversations.roles import roles_for
        from sim.conversations.run import baseline_specs
        from sim.conversations_cli import run_conversation_cli

        role_map = roles_for(conversation[0], roles)
        settings["benchmark"] = "conversations"
        settings["designs"] = [s.label for s in specs if s.label != "oracle"] + [
            b.label for b in baseline_specs()
        ]
        return run_conversation_cli(
            specs, bc, conversation, workers=workers, executor=executor, scheduler=scheduler, out=out,
            html=html, progress=progress, plots=plots, provider=cache, settings=settings, roles=role_map,
        )  # fmt: skip
    if roles is not None:
        raise UsageError("--roles applies to conversation workloads (locomo:FILE)")
    bl = parse_budgets(budgets if budgets is not None else DEFAULT_BUDGETS)
    settings["budgets"] = bl
    outputs = Outputs()
    if workload is not None:
        outputs.reads(workload, "--workload")
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
    settings.update(benchmark="fact-token", seeds=runs, steps=steps)
    workers = min(workers, os.cpu_count() or 1) if executor == "local" else workers
    tasks = tasks_for(specs, bl, runs, steps, workload_file, provider=cache)
    aside = _prepare_plots if plots else _prepare  # the output phase's imports, beside the workers' cells
    rows = run_sweep(
        tasks, workers=workers, executor=executor, scheduler=scheduler, progress=progress, aside=aside
    )
    from sim.provenance import collect

    record = collect(input_path=workload_file, input_format="memsim-jsonl" if workload_file else None,
                     settings=settings)  # fmt: skip
    with outputs.transaction():
        paths = write_outputs(
            rows, out, plots, outputs=outputs, html=html, workers=workers, provenance=record
        )
    from sim.bench.describe import describe, summary_lines

    agg = aggregate(rows)
    print(f"memsim bench: {len(rows):,} cells on the {describe(rows, workload.name if workload else None)}")
    for line in summary_lines(agg):  # the summary before the long tables
        print("  " + line)
    console = report_console(240)
    console.print(render(agg, workload=workload.name if workload else None))
    if cache is not None:  # the price basis beside the cost table (sim.cache.prices.basis)
        from rich.markup import escape

        from sim.cache.prices import basis

        console.print(escape(basis(cache, "priced")))
    for p in paths:
        print(f"wrote {p}")
    return rows
