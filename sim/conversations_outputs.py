"""A conversation sweep's files: ``questions.csv``, ``aggregate.csv``, ``results.db`` (tables ``questions``
and ``aggregate``, and ``meta``: the run's provenance, its settings among them, issue 38) and, with
``--html``, ``index.html`` (issue 28). Staged through
:class:`sim.outputs.Outputs`: they appear together when the sweep finishes, or not at all."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sim.bench_outputs import _csv
from sim.conversations.metrics import QUESTION_COLUMNS, aggregate
from sim.conversations.retrieval import COLUMNS as RETRIEVAL_COLUMNS
from sim.conversations.retrieval import aggregate_into
from sim.conversations.roles import Roles
from sim.outputs import Outputs

#: The columns of ``questions.csv`` and the ``questions`` table: the scorer's, then the retrieval metrics
#: (then, with a provider, the charge: :func:`question_columns`).
COLUMNS = (*QUESTION_COLUMNS, *RETRIEVAL_COLUMNS)

#: The files a conversation sweep writes into --out (each CSV with its provenance sidecar,
#: :mod:`sim.provenance`).
OUTPUT_FILES = (
    "results.db", "questions.csv", "aggregate.csv", "questions.csv.meta.json", "aggregate.csv.meta.json",
)  # fmt: skip


#: With ``--provider``: the cost files (:mod:`sim.conversations.cost`), each with its sidecar.
COST_FILES = ("cost.csv", "cost_summary.csv", "cost.csv.meta.json", "cost_summary.csv.meta.json")


def settings(budgets: list[int] | None, roles: Roles | None) -> dict[str, str]:
    """The run's settings this part of memsim records with its outputs (issue 38; in the provenance
    record's ``settings``, :mod:`sim.provenance`): the windows and how they were chosen, the speaker
    roles, how recall treats the window, the interval method."""
    from sim.conversations.intervals import METHOD

    return {
        "windows": ",".join(str(b) for b in budgets) if budgets else "",
        "windows_rule": "--budgets" if budgets else "",
        "roles": roles.text() if roles is not None else "the dataset's",
        "recall": "a request over the window delivers nothing (request-over-window); the as-built figure "
        "is *_unenforced",
        "intervals": METHOD,
    }


def _write_db(
    rows: list[dict[str, Any]],
    agg: list[dict[str, Any]],
    path: Path,
    record: dict[str, Any] | None = None,
    priced: tuple[list[dict[str, Any]], list[dict[str, Any]]] | None = None,
) -> None:
    import sqlite_utils

    from sim.provenance import write_db_meta

    if path.exists():
        path.unlink()
    db = sqlite_utils.Database(path)
    # A staged file nobody reads until it is renamed into place: no fsync and no journal file per commit
    # (sqlite-utils commits every batch of ~66 rows; a LoCoMo sweep's 14,000 rows made 200 journal files).
    # Neither setting is stored in the file: the tables are the same bytes.
    db.conn.execute("PRAGMA synchronous=OFF")
    db.conn.execute("PRAGMA journal_mode=MEMORY")
    cols = question_columns(rows)
    with db.conn:
        db.table("questions").insert_all([{k: r.get(k) for k in cols} for r in rows])
        db.table("aggregate").insert_all(agg)
        if priced is not None:
            db.table("cost").insert_all(priced[0])
            db.table("cost_summary").insert_all(priced[1])
        if record is not None:
            write_db_meta(db.conn, record)
    db.conn.close()


def question_columns(rows: list[dict[str, Any]]) -> tuple[str, ...]:
    """The question columns, and the cost columns when a provider priced the rows."""
    from sim.conversations.cost import QUESTION_COST_COLUMNS

    return COLUMNS + QUESTION_COST_COLUMNS if rows and "cost_usd" in rows[0] else COLUMNS


def write_outputs(
    rows: list[dict[str, Any]],
    out: Path,
    *,
    outputs: Outputs,
    html: bool = False,
    title: str = "",
    plots: bool = False,
    provenance: dict[str, Any] | None = None,
    costs: list[dict[str, Any]] | None = None,
    provider: dict[str, Any] | None = None,
    meta: dict[str, str] | None = None,
) -> list[Path]:
    """Stage the sweep's files under *out* (the owner of *outputs* commits them), with *plots* the PNGs
    (:mod:`sim.conversations.plots`); their paths. The *provenance* record (:func:`sim.provenance.collect`)
    goes into ``results.db``'s ``meta`` table, a sidecar beside each CSV and the page's footer. With a
    *provider* (its ``meta()``) the per-instance *costs* and their summary are written too (``cost.csv``,
    ``cost_summary.csv``, tables ``cost`` and ``cost_summary``). The run's settings *meta* (:func:`settings`)
    head the page; without a provenance record they are ``results.db``'s ``meta``."""
    if not rows:
        from sim.errors import UsageError

        raise UsageError("the workload has no questions")
    outputs.dir(out)
    agg = aggregate_into(aggregate(rows), rows)
    from sim.provenance import write_csv

    priced = None
    if provider is not None:
        from sim.conversations.cost import INSTANCE_COLUMNS, SUMMARY_COLUMNS, summary

        priced = (costs or [], summary(rows, costs or [], provider))
    record = provenance if provenance is not None else meta
    outputs.write_with(out / "results.db", lambda p: _write_db(rows, agg, p, record, priced))
    write_csv(outputs, out / "questions.csv", _csv(rows, list(question_columns(rows))), provenance)
    write_csv(outputs, out / "aggregate.csv", _csv(agg, list(agg[0])), provenance)
    if priced is not None:
        write_csv(outputs, out / "cost.csv", _csv(priced[0], list(INSTANCE_COLUMNS)), provenance)
        write_csv(outputs, out / "cost_summary.csv", _csv(priced[1], list(SUMMARY_COLUMNS)), provenance)
    if plots:
        from sim.conversations.plots import write_plots

        write_plots(rows, agg, out, outputs)
    if html:
        from sim.report.conversations import render_conversations

        page = render_conversations(
            rows,
            agg,
            title=title,
            provenance=provenance,
            cost=(priced[1], provider) if priced is not None and provider is not None else None,
            meta=meta,
        )
        outputs.write_text(out / "index.html", page)
    return outputs.paths
