"""A conversation sweep's files: ``questions.csv``, ``aggregate.csv``, ``results.db`` (tables ``questions``
and ``aggregate``, and ``meta``: the run's settings as key and value, issue 38) and, with ``--html``,
``index.html`` (issue 28). Staged through
:class:`sim.outputs.Outputs`: they appear together when the sweep finishes, or not at all."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sim.bench.outputs import _csv
from sim.conversations.metrics import QUESTION_COLUMNS, aggregate
from sim.conversations.roles import Roles
from sim.outputs import Outputs

#: The files a conversation sweep writes into --out.
OUTPUT_FILES = ("results.db", "questions.csv", "aggregate.csv")


def settings(budgets: list[int] | None, roles: Roles | None) -> dict[str, str]:
    """The run's settings this part of memsim records in the outputs' ``meta`` (issue 38): the windows
    and how they were chosen, the speaker roles, how recall treats the window, the interval method."""
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
    rows: list[dict[str, Any]], agg: list[dict[str, Any]], path: Path, meta: dict[str, str] | None = None
) -> None:
    import sqlite_utils

    if path.exists():
        path.unlink()
    db = sqlite_utils.Database(path)
    with db.conn:
        db.table("questions").insert_all([{k: r.get(k) for k in QUESTION_COLUMNS} for r in rows])
        db.table("aggregate").insert_all(agg)
        if meta:  # the shape of a trace's meta table: key, and the value as JSON text
            db.conn.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)")
            db.conn.executemany(
                "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                [(k, json.dumps(v, ensure_ascii=False)) for k, v in meta.items()],
            )
    db.conn.close()


def write_outputs(
    rows: list[dict[str, Any]],
    out: Path,
    *,
    outputs: Outputs,
    html: bool = False,
    title: str = "",
    plots: bool = False,
    meta: dict[str, str] | None = None,
) -> list[Path]:
    """Stage the sweep's files under *out* (the owner of *outputs* commits them), with *plots* the PNGs
    (:mod:`sim.conversations.plots`); their paths."""
    if not rows:
        from sim.errors import UsageError

        raise UsageError("the workload has no questions")
    outputs.dir(out)
    agg = aggregate(rows)
    outputs.write_with(out / "results.db", lambda p: _write_db(rows, agg, p, meta))
    outputs.write_text(out / "questions.csv", _csv(rows, list(QUESTION_COLUMNS)))
    outputs.write_text(out / "aggregate.csv", _csv(agg, list(agg[0])))
    if plots:
        from sim.conversations.plots import write_plots

        write_plots(rows, agg, out, outputs)
    if html:
        from sim.report.conversations import render_conversations

        outputs.write_text(out / "index.html", render_conversations(rows, agg, title=title, meta=meta))
    return outputs.paths
