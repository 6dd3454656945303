"""A conversation sweep's files: ``questions.csv``, ``aggregate.csv``, ``results.db`` (tables ``questions``
and ``aggregate``) and, with ``--html``, ``index.html`` (issue 28). Staged through
:class:`sim.outputs.Outputs`: they appear together when the sweep finishes, or not at all."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sim.bench_outputs import _csv
from sim.conversations.metrics import QUESTION_COLUMNS, aggregate
from sim.conversations.retrieval import COLUMNS as RETRIEVAL_COLUMNS
from sim.conversations.retrieval import aggregate_into
from sim.outputs import Outputs

#: The columns of ``questions.csv`` and the ``questions`` table: the scorer's, then the retrieval metrics.
COLUMNS = (*QUESTION_COLUMNS, *RETRIEVAL_COLUMNS)

#: The files a conversation sweep writes into --out.
OUTPUT_FILES = ("results.db", "questions.csv", "aggregate.csv")


def _write_db(rows: list[dict[str, Any]], agg: list[dict[str, Any]], path: Path) -> None:
    import sqlite_utils

    if path.exists():
        path.unlink()
    db = sqlite_utils.Database(path)
    with db.conn:
        db.table("questions").insert_all([{k: r.get(k) for k in COLUMNS} for r in rows])
        db.table("aggregate").insert_all(agg)
    db.conn.close()


def write_outputs(
    rows: list[dict[str, Any]],
    out: Path,
    *,
    outputs: Outputs,
    html: bool = False,
    title: str = "",
    plots: bool = False,
) -> list[Path]:
    """Stage the sweep's files under *out* (the owner of *outputs* commits them), with *plots* the PNGs
    (:mod:`sim.conversations.plots`); their paths."""
    if not rows:
        from sim.errors import UsageError

        raise UsageError("the workload has no questions")
    outputs.dir(out)
    agg = aggregate_into(aggregate(rows), rows)
    outputs.write_with(out / "results.db", lambda p: _write_db(rows, agg, p))
    outputs.write_text(out / "questions.csv", _csv(rows, list(COLUMNS)))
    outputs.write_text(out / "aggregate.csv", _csv(agg, list(agg[0])))
    if plots:
        from sim.conversations.plots import write_plots

        write_plots(rows, agg, out, outputs)
    if html:
        from sim.report.conversations import render_conversations

        outputs.write_text(out / "index.html", render_conversations(rows, agg, title=title))
    return outputs.paths
