"""The benchmark page's chart of recall against cost: one point per design and window (means over seeds),
a design's windows joined in window order, so what a larger window buys in recall and costs is read off one
picture. Cost is dollars per run when a provider priced the sweep (``memsim bench --provider``), else the
exact cl100k tokens per request.
"""

from __future__ import annotations

from typing import Any

from sim.report.fmt import compact, nice_ticks

W, H = 640, 300
LEFT, RIGHT, TOP, BOTTOM = 64, 130, 16, 44


def _f(x: float) -> str:
    return f"{x:.1f}"


def recall_cost_chart(page: Any) -> dict[str, Any] | None:
    """The chart's drawing data for the bench page's :class:`~sim.report.bench.BenchPage` (None when no
    cell has both a recall and a cost)."""
    from sim.report.charts import LABEL_GAP, label_positions
    from sim.report.cost import priced

    money = priced(page.agg)
    key = "cost_usd_run" if money else "tokens_mean"
    x_title = "USD per run (list price)" if money else "tokens per request (exact cl100k)"
    pts = [
        (str(a["design"]), int(a["budget"]), float(a["recall"]), float(a[key]))
        for a in page.agg
        if a.get("recall") is not None and a.get(key) is not None and a["design"] != "oracle"
    ]
    if not pts:
        return None
    x_ticks = nice_ticks(0, max(p[3] for p in pts) or 1.0, 4)
    x_max = max(x_ticks[-1], max(p[3] for p in pts), 1e-9)
    y_ticks = nice_ticks(0, 1.0, 4)

    def X(v: float) -> float:
        return LEFT + (W - LEFT - RIGHT) * v / x_max

    def Y(v: float) -> float:
        return TOP + (H - TOP - BOTTOM) * (1 - v / max(y_ticks[-1], 1.0))

    series, wishes = [], []
    for d in page.designs:
        mine = sorted((p for p in pts if p[0] == d), key=lambda p: p[1])
        if not mine:
            continue
        points = [
            {
                "x": _f(X(c)), "y": _f(Y(r)), "window": compact(b),
                "title": f"{d} · window {b:,}: recall {r:.3f}, "
                + (f"${c:,.2f} per run" if money else f"{c:,.0f} tokens per request"),
            }
            for _, b, r, c in mine
        ]  # fmt: skip
        series.append({
            "design": d, "colour": page.colour[d], "points": points, "dashed": ":" in d,
            "path": "M" + "L".join(f"{p['x']} {p['y']}" for p in points),
        })  # fmt: skip
        wishes.append(float(points[-1]["y"]))
    for s, y in zip(series, label_positions(wishes, LABEL_GAP, TOP + 4, H - BOTTOM)):
        s["label_y"] = _f(y + 4)
    return {
        "width": W, "height": H, "left": LEFT, "right": W - RIGHT, "top": TOP, "bottom": H - BOTTOM,
        "x_title": x_title, "y_title": "probe recall", "money": money,
        "x_ticks": [(_f(X(v)), f"${v:,.2f}" if money else compact(v)) for v in x_ticks],
        "y_ticks": [(_f(Y(v)), f"{v:g}") for v in y_ticks],
        "series": series,
    }  # fmt: skip
