"""The benchmark page: the aggregate over seeds (means with their spread, sums labelled as sums), an SVG of
recall and overflow against budget in each design's stable colour, and the sweep's PNG plots inline.

:func:`render_bench_rows` takes what :func:`sim.bench.write_outputs` has in memory; :func:`render_bench`
reads a bench output directory (``results.db``: tables ``results`` and ``aggregate``; the PNGs beside
it), so ``memsim report DIR`` gives the same page.
"""

from __future__ import annotations

import base64
import sqlite3
from pathlib import Path
from typing import Any

from sim.report.fmt import compact, nice_ticks, num
from sim.report.inputs import check_bench
from sim.report.templating import render

#: Per-cell rows listed (all are in results.csv).
MAX_CELLS = 2000
#: PNG plots embedded: at most this many bytes each, and in all.
MAX_IMAGE_BYTES = 8 << 20
MAX_IMAGES_BYTES = 24 << 20

#: Aggregate columns: (key, heading, kind, digits, explanation); kind "mean" (shown with its min–max over
#: seeds), "sum" (summed over seeds) or "plain".
AGG_COLUMNS = (
    ("seeds", "seeds", "plain", 0, "seeds in the mean"),
    (
        "tokens_mean",
        "tokens / request",
        "mean",
        0,
        "exact cl100k tokens per request: mean over seeds of each cell's mean",
    ),
    ("tokens_p95", "p95", "mean", 0, "95th percentile of request tokens: mean over seeds"),
    ("tokens_max", "max", "plain", 0, "the largest request of any seed"),
    (
        "estimate_mean",
        "design's estimate",
        "mean",
        0,
        "the design's own token estimate per request: mean over seeds",
    ),
    (
        "over_window_sum",
        "over window (sum)",
        "sum",
        0,
        "requests over the provider window, summed over seeds",
    ),
    ("requests_sum", "requests (sum)", "sum", 0, "requests, summed over seeds"),
    ("recall", "recall", "mean", 3, "probe recall: mean over seeds"),
    (
        "recall_vs_oracle",
        "vs oracle",
        "mean",
        3,
        "recall as a fraction of the oracle's on the same workload: mean over seeds",
    ),
    ("write_amplification", "write ampl.", "mean", 2, "bytes written / observation bytes: mean over seeds"),
    ("storage_ops", "storage ops", "mean", 0, "storage operations per cell: mean over seeds"),
    ("live", "live", "plain", 0, "every seed's calm-tail requests fitted the window"),
)
CELL_COLUMNS = (
    "design", "budget", "seed", "requests", "tokens_mean", "tokens_p95", "tokens_max", "estimate_mean",
    "over_window", "probes", "recall", "recall_vs_oracle", "write_amplification", "storage_ops", "live",
)  # fmt: skip
CHART_W = 540
CHART_H = 260
LEFT, RIGHT, TOP, BOTTOM = 52, 112, 16, 40


def _f(x: float) -> str:
    return f"{x:.1f}".rstrip("0").rstrip(".")


def _chart(
    agg: list[dict[str, Any]], designs: list[str], metric: str, title: str, unit_max: float | None
) -> dict[str, Any]:
    """A dot plot of *metric* per budget (categorical x, designs dodged), with min–max whiskers."""
    from sim.bench.plots import colour

    budgets = sorted({int(a["budget"]) for a in agg})
    vals = [a.get(f"{metric}_max", a.get(metric)) for a in agg] + [a.get(metric) for a in agg]
    top = max([float(v) for v in vals if isinstance(v, int | float)] + [unit_max or 0.0, 1e-9])
    ticks = nice_ticks(0, top, 4)
    y_max = max(ticks[-1], top)
    plot_w = CHART_W - LEFT - RIGHT
    slot = plot_w / max(1, len(budgets))

    def Y(v: float) -> float:
        return TOP + (CHART_H - TOP - BOTTOM) * (1 - v / y_max)

    series: list[dict[str, Any]] = []
    wishes: list[float] = []
    n = max(1, len(designs))
    for k, d in enumerate(designs):
        pts = []
        for a in agg:
            if a["design"] != d or a.get(metric) is None:
                continue
            i = budgets.index(int(a["budget"]))
            x = LEFT + slot * (i + 0.5) + (k - (n - 1) / 2) * min(10.0, slot * 0.7 / n)
            lo, hi = a.get(f"{metric}_min"), a.get(f"{metric}_max")
            title_txt = f"{d} · window {int(a['budget']):,}: {a[metric]}" + (
                f" (min {lo}, max {hi} over {a.get('seeds')} seeds)" if lo is not None and lo != hi else ""
            )
            pts.append({
                "x": _f(x), "y": _f(Y(float(a[metric]))), "title": title_txt,
                "lo": _f(Y(float(lo))) if lo is not None else "",
                "hi": _f(Y(float(hi))) if hi is not None else "",
            })  # fmt: skip
        if pts:
            path = "M" + "L".join(f"{p['x']} {p['y']}" for p in pts)
            series.append({"design": d, "colour": colour(d), "points": pts, "path": path, "dashed": ":" in d})
            wishes.append(float(pts[-1]["y"]))
    from sim.report.charts import spread

    for s, y in zip(series, spread(wishes, 11.0)):
        s["label_y"] = _f(y + 4)
    return {
        "title": title,
        "metric": metric,
        "width": CHART_W,
        "height": CHART_H,
        "left": LEFT,
        "right": CHART_W - RIGHT,
        "top": TOP,
        "bottom": CHART_H - BOTTOM,
        "y_ticks": [(_f(Y(v)), compact(v) if v >= 1 or v == 0 else f"{v:g}") for v in ticks],
        "x_ticks": [(_f(LEFT + slot * (i + 0.5)), compact(b)) for i, b in enumerate(budgets)],
        "series": series,
    }


def _cell(row: dict[str, Any], key: str, kind: str, digits: int) -> dict[str, Any]:
    def text(v: Any) -> str:
        if isinstance(v, float) and not isinstance(v, bool):
            return f"{v:,.{digits}f}"
        return num(v)

    v = row.get(key)
    lo, hi = row.get(f"{key}_min"), row.get(f"{key}_max")
    spread = kind == "mean" and lo is not None and hi is not None and lo != hi
    return {
        "text": text(v), "spread": f"{text(lo)}–{text(hi)}" if spread else "", "kind": kind,
        "bad": kind == "plain" and v is False,
    }  # fmt: skip


def _findings(agg: list[dict[str, Any]], designs: list[str]) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    budgets = sorted({int(a["budget"]) for a in agg})
    for b in budgets:
        at = [
            a
            for a in agg
            if int(a["budget"]) == b and a["design"] != "oracle" and a.get("recall") is not None
        ]
        if at:
            best = max(at, key=lambda a: (a["recall"], -designs.index(a["design"])))
            worst = min(at, key=lambda a: (a["recall"], designs.index(a["design"])))
            out.append((
                f"Window {b:,}: best probe recall {best['recall']:.3g} ({best['design']}), "
                f"lowest {worst['recall']:.3g} ({worst['design']}).", "",
            ))  # fmt: skip
    dead = sorted({f"{a['design']} at {int(a['budget']):,}" for a in agg if not a.get("live")}, key=str)
    if dead:
        out.append(("Not live (a calm-tail request over the window): " + ", ".join(dead) + ".", "bad"))
    else:
        out.append(("Every design was live at every window (each calm-tail request fitted).", "ok"))
    over = [a for a in agg if a.get("over_window_sum")]
    if over:
        text = ", ".join(f"{a['design']} {a['over_window_sum']:,} at {int(a['budget']):,}" for a in over)
        out.append((f"Requests over the window (summed over seeds): {text}.", "bad"))
    return out


def render_bench_rows(rows: list[dict[str, Any]], agg: list[dict[str, Any]], images: dict[str, bytes]) -> str:
    """The benchmark page of a sweep's result *rows*, their aggregate *agg* and its PNG *images*."""
    from sim import __version__
    from sim.bench.plots import colour

    designs = list(dict.fromkeys([str(r["design"]) for r in rows] + [str(a["design"]) for a in agg]))
    ordered = sorted(agg, key=lambda a: (int(a["budget"]), designs.index(str(a["design"]))))
    table = [
        {"design": a["design"], "colour": colour(str(a["design"])), "budget": a["budget"],
         "cells": [_cell(a, k, kind, digits) for k, _, kind, digits, _ in AGG_COLUMNS]}
        for a in ordered
    ]  # fmt: skip
    shown: list[tuple[str, str]] = []
    total = 0
    for name in sorted(images):
        data = images[name]
        if (
            len(data) > MAX_IMAGE_BYTES
            or total + len(data) > MAX_IMAGES_BYTES
            or not data.startswith(b"\x89PNG")
        ):
            continue
        total += len(data)
        shown.append((name, "data:image/png;base64," + base64.b64encode(data).decode("ascii")))
    cells = sorted(rows, key=lambda r: (int(r["budget"]), designs.index(str(r["design"])), int(r["seed"])))
    seeds = sorted({int(r["seed"]) for r in rows})
    steps = sorted({int(r["steps"]) for r in rows if r.get("steps") is not None})
    budgets = sorted({int(a["budget"]) for a in agg})
    charts = [
        _chart(agg, designs, "recall", "probe recall (mean over seeds, min–max)", 1.0),
        _chart(agg, designs, "over_window_sum", "requests over the window (sum over seeds)", None),
        _chart(agg, designs, "tokens_mean", "tokens per request (mean over seeds, min–max)", None),
    ]
    return render(
        "bench.html.j2",
        version=__version__,
        designs=[(d, colour(d)) for d in designs],
        budgets=budgets,
        seeds=seeds,
        steps=steps,
        n_cells=len(rows),
        findings=_findings(agg, designs),
        charts=charts,
        images=shown,
        images_left=len(images) - len(shown),
        table=table,
        columns=AGG_COLUMNS,
        cells=cells[:MAX_CELLS],
        cells_left=max(0, len(cells) - MAX_CELLS),
        cell_columns=CELL_COLUMNS,
        colour={d: colour(d) for d in designs},
    )


def _rows(conn: sqlite3.Connection, table: str) -> list[dict[str, Any]]:
    cur = conn.execute(f"SELECT * FROM [{table}]")  # table names are constants here
    names = [c[0] for c in cur.description]
    return [dict(zip(names, r)) for r in cur]


def render_bench(out_dir: Path) -> str:
    """The benchmark page of a bench output directory (``results.db`` and the PNG plots beside it)."""
    from sim.errors import UsageError

    out_dir = Path(out_dir)
    db = out_dir / "results.db"
    if not db.is_file():
        raise UsageError(
            f"{out_dir} is not a bench output directory (no results.db; `memsim bench --out DIR`)"
        )
    try:
        conn = sqlite3.connect(f"file:{db.resolve()}?mode=ro", uri=True)
        try:
            rows = _rows(conn, "results")
            agg = _rows(conn, "aggregate")
            steps = {
                (d, b, sd): n
                for d, b, sd, n in conn.execute(
                    "SELECT design, budget, seed, count(*) FROM series GROUP BY 1, 2, 3"
                )
            }
        finally:
            conn.close()
    except sqlite3.DatabaseError as exc:
        raise UsageError(f"{db} is not a memsim bench database: {exc}") from exc
    if not rows or not agg or "design" not in rows[0] or "budget" not in agg[0]:
        raise UsageError(f"{db} has no benchmark results")
    check_bench(rows, agg, db)  # the schema its writer produces (sim.report.inputs)
    for a in agg:
        a["live"] = bool(a.get("live"))
    for r in rows:
        r["live"] = bool(r.get("live"))
        r["steps"] = steps.get((r["design"], r["budget"], r["seed"]))
    images = {}
    for p in sorted(out_dir.glob("*.png")):
        if p.is_file() and p.stat().st_size <= MAX_IMAGE_BYTES:
            images[p.name] = p.read_bytes()
    return render_bench_rows(rows, agg, images)
