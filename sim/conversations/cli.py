"""``memsim bench --workload longmemeval:F | locomo:F | F.jsonl`` (with turn ids): the conversation sweep,
validated first (every instance read once before any unit runs), its files written together."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from sim.bench.tasks import DesignSpec
from sim.errors import UsageError


def run_conversation_cli(
    specs: list[DesignSpec],
    budgets: list[int],
    conversation: tuple[str, Path],
    *,
    workers: int,
    executor: str,
    scheduler: str | None,
    out: Path,
    html: bool,
    progress: bool,
    plots: bool = False,
) -> list[dict[str, Any]]:
    """Run every instance of the file through every design variant and the three baselines; print the
    overall table and the files written."""
    from sim.cli import report_console
    from sim.conversations.metrics import aggregate
    from sim.conversations.outputs import OUTPUT_FILES, write_outputs
    from sim.conversations.run import run_conversations
    from sim.conversations.table import render
    from sim.outputs import Outputs

    if executor not in ("local", "dask"):
        raise UsageError(f"unknown executor {executor!r}: expected local or dask")
    if scheduler and executor != "dask":
        raise UsageError("--scheduler needs --executor dask")
    kind, path = conversation
    outputs = Outputs()
    outputs.reads(path, "workload")
    out = outputs.dir(out)
    from sim.conversations.plots import PLOTS

    for name in OUTPUT_FILES + (tuple(PLOTS) if plots else ()) + (("index.html",) if html else ()):
        outputs.file(out / name, "--out")
    workers = min(workers, os.cpu_count() or 1) if executor == "local" else workers
    rows = run_conversations(specs, budgets, kind, str(Path(path).resolve()), workers=workers,
                             executor=executor, scheduler=scheduler, progress=progress)  # fmt: skip
    with outputs.transaction():
        paths = write_outputs(
            rows, out, outputs=outputs, html=html, title=f"{kind}:{Path(path).name}", plots=plots
        )
    report_console(240).print(render(aggregate(rows)))
    for p in paths:
        print(f"wrote {p}")
    return rows
