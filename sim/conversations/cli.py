"""``memsim bench --workload longmemeval:F | locomo:F | F.jsonl`` (with turn ids): the conversation sweep,
validated first (every instance read once before any unit runs), its files written together."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from sim.bench.tasks import DesignSpec
from sim.conversations.outputs import settings
from sim.conversations.roles import Roles
from sim.errors import UsageError


def run_conversation_cli(
    specs: list[DesignSpec],
    budgets: list[int] | None,
    conversation: tuple[str, Path],
    *,
    workers: int,
    executor: str,
    scheduler: str | None,
    out: Path,
    html: bool,
    progress: bool,
    plots: bool = False,
    roles: Roles | None = None,
) -> list[dict[str, Any]]:
    """Run every instance of the file through every design variant and the three baselines at *budgets*
    (None: windows fitted to the corpus, printed first), the turns of a two-person corpus in *roles*;
    print the tables and the files written. The windows (and their rule), the roles and the interval
    method are recorded in the outputs' ``meta``."""
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
    out = outputs.dir(out)
    from sim.conversations.plots import PLOTS

    for name in OUTPUT_FILES + (tuple(PLOTS) if plots else ()) + (("index.html",) if html else ()):
        outputs.file(out / name, "--out")
    workers = min(workers, os.cpu_count() or 1) if executor == "local" else workers
    file = str(Path(path).resolve())
    meta = settings(budgets, roles)
    instances = None
    if budgets is None:
        from sim.conversations.windows import fit_file

        fitted = fit_file(kind, file)
        budgets, instances = list(fitted.windows), fitted.instances
        meta.update(windows=",".join(str(w) for w in budgets), windows_rule=fitted.describe())
        print(fitted.describe(), flush=True)
    rows = run_conversations(specs, budgets, kind, file, workers=workers, executor=executor,
                             scheduler=scheduler, progress=progress, roles=roles,
                             instances=instances)  # fmt: skip
    with outputs.transaction():
        paths = write_outputs(
            rows, out, outputs=outputs, html=html, title=f"{kind}:{Path(path).name}", plots=plots, meta=meta
        )
    if roles is not None:
        print(f"speaker roles: {roles.text()} (--roles; docs/conversations.md, 'Speaker roles')")
    report_console(240).print(render(aggregate(rows)))
    for p in paths:
        print(f"wrote {p}")
    return rows
