"""``memsim bench --workload longmemeval:F | locomo:F | F.jsonl`` (with turn ids): the conversation sweep,
validated first (every instance read once before any unit runs), its files written together."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from sim.bench.tasks import DesignSpec
from sim.cache import ProviderConfig
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
    provider: ProviderConfig | None = None,
    settings: dict[str, Any] | None = None,
    roles: Roles | None = None,
) -> list[dict[str, Any]]:
    """Run every instance of the file through every design variant and the three baselines at *budgets*
    (None: windows fitted to the corpus, printed first), the turns of a two-person corpus in *roles*;
    print the tables (and, with a *provider*, what each design costs, beside its price basis) and the
    files written. Every file carries the run's provenance (:mod:`sim.provenance`: the input's sha256, the
    command, *settings* with the windows and their rule, the roles and the interval method, the errata
    dropped)."""
    from sim.console import report_console
    from sim.conversations.metrics import aggregate
    from sim.conversations.run import run_conversations
    from sim.conversations.table import render
    from sim.conversations_outputs import OUTPUT_FILES, write_outputs
    from sim.conversations_outputs import settings as run_settings
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
    from sim.conversations_outputs import COST_FILES

    names = OUTPUT_FILES + (COST_FILES if provider is not None else ()) + (tuple(PLOTS) if plots else ())
    for name in names + (("index.html",) if html else ()):
        outputs.file(out / name, "--out")
    workers = min(workers, os.cpu_count() or 1) if executor == "local" else workers
    costs: list[dict[str, Any]] = []
    errata: list[dict[str, str]] = []
    file = str(Path(path).resolve())
    run_meta = run_settings(budgets, roles)
    instances = None
    if budgets is None:  # one read validates the file, notes its errata and measures its instances
        from sim.conversations.run import count_instances
        from sim.conversations.windows import fit

        lengths: list[int] = []
        instances = count_instances(kind, file, progress=progress, errata=errata, lengths=lengths)
        fitted = fit(lengths)
        budgets = list(fitted.windows)
        run_meta.update(windows=",".join(str(w) for w in budgets), windows_rule=fitted.describe())
        print(fitted.describe(), flush=True)
    rows = run_conversations(specs, budgets, kind, file, workers=workers, executor=executor,
                             scheduler=scheduler, progress=progress, provider=provider, costs=costs,
                             errata=errata if instances is None else None, roles=roles,
                             instances=instances)  # fmt: skip
    from sim.provenance import collect

    run_config = {**(settings or {}), **run_meta, "budgets": budgets}
    record = collect(input_path=path, input_format=kind, settings=run_config, errata=errata)
    meta = provider.meta() if provider is not None else None
    with outputs.transaction():
        paths = write_outputs(
            rows, out, outputs=outputs, html=html, title=f"{kind}:{Path(path).name}", plots=plots,
            provenance=record, costs=costs, provider=meta, meta=run_meta,
        )  # fmt: skip
    if roles is not None:
        print(f"speaker roles: {roles.text()} (--roles; docs/conversations.md, 'Speaker roles')")
    from sim.conversations.retrieval import aggregate_into

    agg = aggregate_into(aggregate(rows), rows)
    n = len({(r["instance"], r["question_id"]) for r in rows})
    b = max(budgets)
    recall = ", ".join(
        f"{a['design']} {a['evidence_recall_turn']:.3f}"
        for a in agg
        if a["budget"] == b and a["question_type"] == "all" and a["evidence_recall_turn"] is not None
    )
    print(f"memsim bench: {n:,} questions of {kind}:{Path(path).name}; turn recall at {b:,} tokens: {recall}")
    console = report_console(240)
    console.print(render(agg))
    if meta is not None:
        from sim.cache.prices import basis
        from sim.conversations import cost

        console.print(cost.render(cost.summary(rows, costs, meta), basis(meta, "refused")))
    for p in paths:
        print(f"wrote {p}")
    return rows
