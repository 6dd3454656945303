"""A sweep's files: ``results.db`` (SQLite), ``results.csv``, ``aggregate.csv``, plots and the report page.

Everything is staged through :class:`sim.outputs.Outputs` and appears together when the sweep finishes;
an error or Ctrl-C leaves nothing under a final name.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

from sim.bench.metrics import aggregate
from sim.outputs import Outputs

COLUMNS = (
    "design", "variant", "knobs", "budget", "seed", "requests", "tokens_mean", "tokens_p95", "tokens_max",
    "estimate_mean", "over_window", "probes", "recall", "recall_vs_oracle", "durable_bytes", "bytes_written",
    "write_amplification", "storage_ops", "live", "seconds", "drawn",
)  # fmt: skip


def _csv(rows: list[dict[str, Any]], fields: list[str]) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=fields, lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({k: r.get(k) for k in fields})
    return buf.getvalue()


def _write_db(rows: list[dict[str, Any]], path: Path) -> None:
    import sqlite_utils

    if path.exists():
        path.unlink()
    db = sqlite_utils.Database(path)
    db.table("results").insert_all([{k: r.get(k) for k in COLUMNS} for r in rows])
    db.table("series").insert_all(
        {
            "design": r["design"],
            "budget": r["budget"],
            "seed": r["seed"],
            "step": s[0],
            "exact_tokens": s[1],
            "estimate": s[2],
        }
        for r in rows
        for s in r["series"]
    )
    db.table("aggregate").insert_all(aggregate(rows))
    db.conn.close()


def write_outputs(
    rows: list[dict[str, Any]],
    out: Path,
    plots: bool = True,
    *,
    outputs: Outputs | None = None,
    html: bool = False,
) -> list[Path]:
    """Stage a sweep's files (committed here unless *outputs* is given: its owner commits); their paths."""
    own = outputs is None
    o = outputs or Outputs()
    o.dir(out)
    try:
        o.write_with(out / "results.db", lambda p: _write_db(rows, p))
        o.write_text(out / "results.csv", _csv(rows, list(COLUMNS)))
        agg = aggregate(rows)
        o.write_text(out / "aggregate.csv", _csv(agg, list(agg[0])))
        images: dict[str, bytes] = {}
        if plots:
            from sim.bench.plots import plot

            for p in plot(rows, agg, out, o):
                images[p.name] = o.staged_path(p).read_bytes()
        if html:
            from sim.report import render_bench_rows

            o.write_text(out / "index.html", render_bench_rows(rows, agg, images))
    except BaseException:
        if own:
            o.abort()
        raise
    paths = o.paths
    if own:
        o.commit()
    return paths
