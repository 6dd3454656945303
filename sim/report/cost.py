"""What requests cost under a provider's prompt cache (``memsim bench --provider``, :mod:`sim.cache`), on
the report pages: on the benchmark page, cost columns in the aggregate table and two charts against the
window (cost per run, cache hit ratio); on a run page (a trace recorded with a provider, e.g. a replayed
cache claim), a per-request stack of cache-read, cache-write and uncached tokens.

Every function returns nothing (an empty tuple, list or string) when the results carry no cache data, so
``--provider none`` pages are unchanged.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from sim.report.fmt import compact, nice_ticks

#: Aggregate columns a provider adds (the benchmark page's ``AGG_COLUMNS`` shape).
COLUMNS = (
    ("cache_hit_ratio", "cache hit", "mean", 3, "cache-read tokens / prompt tokens: mean over seeds"),
    ("cost_usd_mean", "$ / request", "mean", 5, "dollars per request at the list price: mean over seeds"),
    ("cost_usd_p95", "$ p95", "mean", 5, "95th percentile of dollars per request: mean over seeds"),
    ("cost_usd_run", "$ / run", "mean", 3, "dollars for the cell's whole run: mean over seeds"),
)
#: The stack's bands: (detail key, label, colour).
BANDS = (
    ("cache_read_tokens", "cache read", "#0072B2"),
    ("cache_write_tokens", "cache write", "#E69F00"),
    ("uncached_tokens", "uncached", "#999999"),
)
#: The most bars a run page draws (requests are binned into this many columns, each a bin's mean).
MAX_BARS = 240
W, H, LEFT, RIGHT, TOP, BOTTOM = 1080, 220, 64, 150, 14, 40


def priced(agg: list[dict[str, Any]]) -> bool:
    """Whether a provider priced these aggregate rows."""
    return bool(agg) and agg[0].get("provider") is not None


def bench_columns(agg: list[dict[str, Any]]) -> tuple[tuple[str, str, str, int, str], ...]:
    """The aggregate table's cost columns (none without a provider)."""
    return COLUMNS if priced(agg) else ()


def _read(trace_path: Path) -> tuple[dict[str, Any] | None, list[tuple[int, str, str, dict[str, Any]]]]:
    conn = sqlite3.connect(f"file:{Path(trace_path).resolve()}?mode=ro", uri=True)
    try:
        row = conn.execute("SELECT value FROM meta WHERE key = 'provider'").fetchone()
        if row is None:
            return None, []
        rows = conn.execute(
            "SELECT seq, agent, route, json_extract(detail, '$.cache') FROM requests "
            "WHERE json_extract(detail, '$.cache') IS NOT NULL ORDER BY seq"
        ).fetchall()
    finally:
        conn.close()
    return json.loads(row[0]), [(s, a, r, json.loads(c)) for s, a, r, c in rows]


def run_stack(trace_path: Path) -> dict[str, Any] | None:
    """The run page's per-request stack of one trace: every priced request in run order (binned to at
    most :data:`MAX_BARS` columns), cache read / write / uncached tokens stacked, with the totals; None
    when the trace was recorded without a provider."""
    try:
        provider, rows = _read(trace_path)
    except sqlite3.DatabaseError:
        return None
    if provider is None or not rows:
        return None
    per = -(-len(rows) // MAX_BARS)
    bins = [rows[i : i + per] for i in range(0, len(rows), per)]
    means = [{k: sum(c[k] for *_, c in b) / len(b) for k, _, _ in BANDS} for b in bins]
    top = max(sum(m.values()) for m in means) or 1.0
    ticks = nice_ticks(0, top, 4)
    y_max = max(ticks[-1], top)
    plot_w, plot_h = W - LEFT - RIGHT, H - TOP - BOTTOM
    bar = plot_w / len(bins)

    def y(v: float) -> float:
        return TOP + plot_h * (1 - v / y_max)

    bars = []
    for i, (b, m) in enumerate(zip(bins, means)):
        base, rects = 0.0, []
        for key, _label, colour in BANDS:
            v = m[key]
            if v > 0:
                top_y, h = y(base + v), y(base) - y(base + v)
                rects.append({"y": f"{top_y:.1f}", "h": f"{h:.1f}", "colour": colour})
            base += v
        first, last = b[0][0], b[-1][0]
        what = ", ".join(f"{label} {m[key]:,.0f}" for key, label, _ in BANDS)
        title = f"request {first}" if first == last else f"requests {first}–{last} (mean of {len(b)})"
        bars.append({"x": f"{LEFT + i * bar:.1f}", "w": f"{max(bar - 0.6, 0.6):.1f}", "rects": rects,
                     "title": f"{title}: {what}"})  # fmt: skip
    totals = {k: sum(c[k] for *_, c in rows) for k, _, _ in BANDS}
    prompt = sum(totals.values())
    return {
        "provider": provider,
        "requests": len(rows),
        "per": per,
        "totals": [(label, colour, totals[key]) for key, label, colour in BANDS],
        "hit_ratio": totals["cache_read_tokens"] / prompt if prompt else 0.0,
        "cost_usd": sum(c["cost_usd"] for *_, c in rows),
        "cost_tokens": sum(c["cost_tokens"] for *_, c in rows),
        "width": W,
        "height": H,
        "left": LEFT,
        "right": W - RIGHT,
        "top": TOP,
        "bottom": H - BOTTOM,
        "y_ticks": [(f"{y(v):.1f}", compact(v)) for v in ticks],
        "bars": bars,
    }


def run_section(trace_path: Path) -> str:
    """The run page's cost section (HTML), or "" for a trace recorded without a provider."""
    stack = run_stack(trace_path)
    if stack is None:
        return ""
    from sim.report.templating import render

    return render("cost.html.j2", s=stack)
