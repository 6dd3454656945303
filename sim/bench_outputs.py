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
    "estimate_mean", "over_window", "probes", "recall", "recall_unenforced", "recall_vs_oracle",
    "durable_bytes", "bytes_written", "write_amplification", "storage_ops", "live", "seconds", "drawn",
)  # fmt: skip


#: The columns a provider adds (``--provider``), after :data:`COLUMNS`; absent with ``--provider none``.
CACHE_COLUMNS = (
    "provider", "cache_read_tokens", "cache_write_tokens", "uncached_tokens", "cache_hit_ratio",
    "cost_tokens_mean", "cost_usd_mean", "cost_usd_p95", "cost_usd_run",
)  # fmt: skip


def columns(rows: list[dict[str, Any]]) -> tuple[str, ...]:
    """The result columns of *rows*: :data:`COLUMNS`, and :data:`CACHE_COLUMNS` when a provider priced
    them."""
    return COLUMNS + CACHE_COLUMNS if rows and "provider" in rows[0] else COLUMNS


def _csv(rows: list[dict[str, Any]], fields: list[str]) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=fields, lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({k: r.get(k) for k in fields})
    return buf.getvalue()


#: The ``series`` table: one row per recorded request of every cell.
SERIES = {"design": str, "budget": int, "seed": int, "step": int, "exact_tokens": int, "estimate": int}
#: The ``series`` columns a provider adds: each request's three-way split (they sum to ``exact_tokens``).
SERIES_CACHE = {"cache_read_tokens": int, "cache_write_tokens": int, "uncached_tokens": int}


def _write_db(
    rows: list[dict[str, Any]], agg: list[dict[str, Any]], path: Path, record: dict[str, Any] | None = None
) -> None:
    """``results`` and ``aggregate`` (columns typed from their values by sqlite-utils) and ``series``, in
    one transaction; ``series`` (8,580 rows on the default sweep, nearly all of the file) goes in through
    one ``executemany``. The default sweep's file takes 0.014 s (0.14 s when sqlite-utils converted every
    series row); the tables are the same."""
    import sqlite_utils

    if path.exists():
        path.unlink()
    db = sqlite_utils.Database(path)
    cols = columns(rows)
    series = SERIES | SERIES_CACHE if cols is not COLUMNS else SERIES
    width = len(series) - 3
    with db.conn:
        db.table("results").insert_all([{k: r.get(k) for k in cols} for r in rows])
        db.table("series").create(series)
        db.conn.executemany(
            f'INSERT INTO "series" VALUES ({", ".join("?" * len(series))})',
            ((r["design"], r["budget"], r["seed"], *s[:width]) for r in rows for s in r["series"]),
        )
        db.table("aggregate").insert_all(agg)
        if record is not None:  # the run's provenance (sim.provenance)
            from sim.provenance import write_db_meta

            write_db_meta(db.conn, record)
    db.conn.close()


def write_outputs(
    rows: list[dict[str, Any]],
    out: Path,
    plots: bool = True,
    *,
    outputs: Outputs | None = None,
    html: bool = False,
    workers: int = 1,
    provenance: dict[str, Any] | None = None,
) -> list[Path]:
    """Stage a sweep's files (committed here unless *outputs* is given: its owner commits); their paths.

    With *workers* > 1 (``memsim bench --workers N``) one plot is drawn in a forked helper while this
    process writes the SQLite file, the CSVs and the other plots (:class:`~sim.bench.plots.Plotter`). The
    default sweep's files take 0.27 s so, 0.41 s in one process (matplotlib loaded; median of 5). The
    files are the same. The *provenance* record (:func:`sim.provenance.collect`) goes into ``results.db``'s
    ``meta`` table, a sidecar beside each CSV and the page's footer."""
    from sim.bench.plots import Plotter

    own = outputs is None
    o = outputs or Outputs()
    o.dir(out)
    agg = aggregate(rows)
    plotter = Plotter(rows, agg, workers) if plots else None
    try:
        if plotter is not None:
            plotter.start()
        from sim.provenance import write_csv

        o.write_with(out / "results.db", lambda p: _write_db(rows, agg, p, provenance))
        write_csv(o, out / "results.csv", _csv(rows, list(columns(rows))), provenance)
        write_csv(o, out / "aggregate.csv", _csv(agg, list(agg[0])), provenance)
        images: dict[str, bytes] = {}
        if plotter is not None:
            for p in plotter.finish(out, o):
                images[p.name] = o.staged_path(p).read_bytes()
        if html:
            from sim.report import render_bench_rows

            o.write_text(out / "index.html", render_bench_rows(rows, agg, images, provenance))
    except BaseException:
        if plotter is not None:
            plotter.stop()
        if own:
            o.abort()
        raise
    paths = o.paths
    if own:
        o.commit()
    return paths
