"""The benchmark page: findings first (with how far the seeds resolve them), then SVG pictures against the
window in each design's stable colour, the aggregate over seeds (means with a bootstrap interval or their
spread, sums labelled as sums), the sweep's PNG plots inline and every cell.

:func:`render_bench_rows` takes what :func:`sim.bench_outputs.write_outputs` has in memory;
:func:`render_bench` reads a bench output directory (``results.db``: tables ``results`` and ``aggregate``;
the PNGs beside it), so ``memsim report DIR`` gives the same page.

The page is a list of :class:`Section` (:data:`SECTIONS`, in page order): each an anchor, a heading (also
its link in the page's nav), a template fragment under ``templates/bench/`` and an optional function of
the page's :class:`BenchPage` giving that fragment's own context. A module that adds a part of the page
(another table, another picture) adds one ``Section`` to :data:`SECTIONS`; each fragment is rendered on its
own (autoescaped) and the page places it.
"""

from __future__ import annotations

import base64
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sim.bench import stats
from sim.report import cost
from sim.report.charts import LABEL_GAP, label_positions
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
    (
        "recall",
        "recall",
        "mean",
        3,
        "probe recall (a request over the window delivers nothing): mean over seeds",
    ),
    (
        "recall_unenforced",
        "recall if nothing enforced the window",
        "mean",
        3,
        "probe recall of the requests as built, over the window or not: mean over seeds (never compared)",
    ),
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
#: The aggregate is shown as narrow tables, each a group of :data:`AGG_COLUMNS` keys under a heading; a
#: column in no group goes to a last table ("other figures"), so an added column always shows.
AGG_GROUPS = (
    ("tokens", "What reaches the model",
     ("tokens_mean", "tokens_p95", "tokens_max", "estimate_mean", "over_window_sum", "requests_sum")),
    ("recall", "What is recalled, written and kept",
     ("recall", "recall_unenforced", "recall_vs_oracle", "write_amplification", "storage_ops", "live")),
    ("cost", "What it costs (with --provider)",
     ("cache_hit_ratio", "cost_usd_mean", "cost_usd_p95", "cost_usd_run")),
)  # fmt: skip
CELL_COLUMNS = (
    "design", "budget", "seed", "requests", "tokens_mean", "tokens_p95", "tokens_max", "estimate_mean",
    "over_window", "probes", "recall", "recall_unenforced", "recall_vs_oracle", "write_amplification",
    "storage_ops", "live",
)  # fmt: skip
CHART_W = 540
CHART_H = 260
LEFT, RIGHT, TOP, BOTTOM = 64, 112, 16, 40


def _f(x: float) -> str:
    return f"{x:.1f}".rstrip("0").rstrip(".")


@dataclass
class BenchPage:
    """What every section of the bench page is drawn from (built once by :func:`page_data`)."""

    rows: list[dict[str, Any]]
    agg: list[dict[str, Any]]
    designs: list[str]
    budgets: list[int]
    seeds: list[int]
    colour: dict[str, str]
    images: list[tuple[str, str]] = field(default_factory=list)  # (file name, data: URI)
    images_left: int = 0
    twins: list[str] = field(default_factory=list)  # PNG files not embedded: an SVG chart shows the same
    #: Probe recall per (design, window): the mean over seeds with its bootstrap interval.
    recall: dict[tuple[str, int], stats.Interval] = field(default_factory=dict)
    #: Per (design, window) other than the window's best: (best design, paired difference best − design).
    versus: dict[tuple[str, int], tuple[str, stats.Interval]] = field(default_factory=dict)
    #: The best design's name per window (highest mean recall, the oracle aside).
    best: dict[int, str] = field(default_factory=dict)
    #: Every oracle cell recalled every probe, so recall vs oracle equals recall (the column is left out).
    oracle_perfect: bool = False


def _per_seed(rows: list[dict[str, Any]], metric: str) -> dict[tuple[str, int], dict[int, float]]:
    out: dict[tuple[str, int], dict[int, float]] = {}
    for r in rows:
        if r.get(metric) is not None:
            out.setdefault((str(r["design"]), int(r["budget"])), {})[int(r["seed"])] = float(r[metric])
    return out


def page_data(rows: list[dict[str, Any]], agg: list[dict[str, Any]], images: dict[str, bytes]) -> BenchPage:
    """The :class:`BenchPage` of a sweep's *rows*, their aggregate *agg* and its PNG *images*."""
    from sim.bench.plots import colour

    designs = list(dict.fromkeys([str(r["design"]) for r in rows] + [str(a["design"]) for a in agg]))
    seeds = sorted({int(r["seed"]) for r in rows})
    page = BenchPage(
        rows=rows, agg=agg, designs=designs, budgets=sorted({int(a["budget"]) for a in agg}), seeds=seeds,
        colour={d: colour(d) for d in designs},
    )  # fmt: skip
    total = 0
    for name in sorted(images):
        data = images[name]
        if name in SVG_TWINS:  # drawn above as an SVG chart: listed as a file, not shown twice
            page.twins.append(name)
            continue
        if (
            len(data) > MAX_IMAGE_BYTES
            or total + len(data) > MAX_IMAGES_BYTES
            or not data.startswith(b"\x89PNG")
        ):
            continue
        total += len(data)
        page.images.append((name, "data:image/png;base64," + base64.b64encode(data).decode("ascii")))
    page.images_left = len(images) - len(page.images) - len(page.twins)
    recall = _per_seed(rows, "recall")
    for (d, b), by_seed in recall.items():
        ci = stats.bootstrap([by_seed[s] for s in sorted(by_seed)], stats.key("recall", d, b, list(by_seed)))
        if ci is not None:
            page.recall[(d, b)] = ci
    for b in page.budgets:
        at = [d for d in designs if d != "oracle" and (d, b) in page.recall]
        if not at:
            continue
        best = max(at, key=lambda d: (page.recall[(d, b)].mean, -designs.index(d)))
        page.best[b] = best
        for d in at:
            if d != best:
                diff = stats.paired(
                    recall[(best, b)], recall[(d, b)], stats.key(f"recall-{best}", d, b, seeds)
                )
                if diff is not None:
                    page.versus[(d, b)] = (best, diff)
    oracle = [r.get("recall") for r in rows if r["design"] == "oracle"]
    page.oracle_perfect = bool(oracle) and all(v == 1 for v in oracle)
    return page


def _whisker(page: BenchPage, a: dict[str, Any], metric: str) -> tuple[Any, Any, str]:
    """A point's whisker: the bootstrap interval of recall with seeds enough, else the min–max."""
    ci = page.recall.get((str(a["design"]), int(a["budget"]))) if metric == "recall" else None
    if ci is not None and ci.enough:
        return ci.lo, ci.hi, f"{stats.LEVEL:.0%} CI {ci.lo:.3g}–{ci.hi:.3g} over {_seeds(ci.n)}"
    lo, hi = a.get(f"{metric}_min"), a.get(f"{metric}_max")
    if lo is None or lo == hi:
        return None, None, ""
    return lo, hi, f"min {lo}, max {hi} over {_seeds(int(a.get('seeds') or 0))}"


#: The sweep's PNG plots that repeat an SVG chart of the page: the page lists them, it does not embed them.
SVG_TWINS = ("recall_vs_budget.png", "overflow_vs_budget.png")


def _seeds(n: int) -> str:
    return f"{n} seed{'' if n == 1 else 's'}"


def _and(names: list[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


#: The pictures against the window: (metric, y-axis title, caption, a fixed top of the y axis or None).
CHARTS = (
    ("recall", "probe recall", "probe recall (mean over seeds)", 1.0),
    ("over_window_sum", "requests over the window", "requests over the window (sum over seeds)", None),
    (
        "tokens_mean",
        "tokens per request",
        "tokens per request (exact cl100k, mean over seeds, min–max)",
        None,
    ),
)


def _chart(page: BenchPage, metric: str, y_title: str, title: str, unit_max: float | None) -> dict[str, Any]:
    """A dot plot of *metric* per window (windows evenly spaced, designs dodged) with whiskers, a y-axis
    title and each series named at the right edge (labels kept apart and inside the chart)."""
    agg, designs, budgets = page.agg, page.designs, page.budgets
    vals = [a.get(f"{metric}_max", a.get(metric)) for a in agg] + [a.get(metric) for a in agg]
    top = max([float(v) for v in vals if isinstance(v, int | float)] + [unit_max or 0.0, 1e-9])
    ticks = nice_ticks(0, top, 4)
    y_max = max(ticks[-1], top)
    height = max(CHART_H, TOP + BOTTOM + int(LABEL_GAP * (len(designs) + 1)))
    plot_w = CHART_W - LEFT - RIGHT
    slot = plot_w / max(1, len(budgets))

    def Y(v: float) -> float:
        return TOP + (height - TOP - BOTTOM) * (1 - v / y_max)

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
            lo, hi, what = _whisker(page, a, metric)
            title_txt = f"{d} · window {int(a['budget']):,}: {a[metric]}" + (f" ({what})" if what else "")
            pts.append({
                "x": _f(x), "y": _f(Y(float(a[metric]))), "title": title_txt,
                "lo": _f(Y(float(lo))) if lo is not None else "",
                "hi": _f(Y(float(hi))) if hi is not None else "",
            })  # fmt: skip
        if pts:
            path = "M" + "L".join(f"{p['x']} {p['y']}" for p in pts)
            series.append(
                {"design": d, "colour": page.colour[d], "points": pts, "path": path, "dashed": ":" in d}
            )
            wishes.append(float(pts[-1]["y"]))
    for s, y in zip(series, label_positions(wishes, LABEL_GAP, TOP + 4, height - BOTTOM)):
        s["label_y"] = _f(y + 4)
    enough = metric == "recall" and any(ci.enough for ci in page.recall.values())
    whiskers = (
        f"whiskers: {stats.LEVEL:.0%} bootstrap interval over seeds" if enough
        else "whiskers: min–max over seeds" if metric != "over_window_sum" else ""
    )  # fmt: skip
    return {
        "title": title + (f"; {whiskers}" if whiskers else ""),
        "y_title": y_title,
        "metric": metric,
        "width": CHART_W,
        "height": height,
        "left": LEFT,
        "right": CHART_W - RIGHT,
        "top": TOP,
        "bottom": height - BOTTOM,
        "y_ticks": [(_f(Y(v)), compact(v) if v >= 1 or v == 0 else f"{v:g}") for v in ticks],
        "x_ticks": [(_f(LEFT + slot * (i + 0.5)), compact(b)) for i, b in enumerate(budgets)],
        "series": series,
    }


def bench_charts(page: Any) -> list[dict[str, Any]]:
    """The benchmark page's cost charts against the window (none without a provider); *page* is the
    bench page's :class:`~sim.report.bench.BenchPage`."""
    agg = page.agg
    if not cost.priced(agg):
        return []
    model = str(agg[0]["provider"])
    return [
        _chart(page, "cost_usd_run", "USD per run", f"cost per run, USD at {model} list price (mean over "
               "seeds)", None),
        _chart(page, "cache_hit_ratio", "cache hit ratio", "cache hit ratio: cache-read / prompt tokens "
               "(mean over seeds)", 1.0),
    ]  # fmt: skip


def _text(v: Any, digits: int) -> str:
    if isinstance(v, float) and not isinstance(v, bool):
        return f"{v:,.{digits}f}"
    return num(v)


def _cell(page: BenchPage, row: dict[str, Any], key: str, kind: str, digits: int) -> dict[str, Any]:
    """One aggregate cell: its value, what is under it (an interval, the spread, a caution) and its class."""
    v = row.get(key)
    lo, hi = row.get(f"{key}_min"), row.get(f"{key}_max")
    under, cls = "", ""
    if kind == "mean" and lo is not None and hi is not None and lo != hi:
        under = f"{_text(lo, digits)}–{_text(hi, digits)}"
    if key == "recall" and v is not None:
        d, b = str(row["design"]), int(row["budget"])
        ci = page.recall.get((d, b))
        if ci is not None and ci.n > 1 and ci.lo != ci.hi:
            if ci.enough:
                under = f"{stats.LEVEL:.0%} CI {ci.lo:.3f}–{ci.hi:.3f}"
            else:
                under = f"min–max {_text(lo, digits)}–{_text(hi, digits)}; {ci.n} seeds: too few to conclude"
                cls = "few"
        vs = page.versus.get((d, b))
        if vs is not None and vs[1].enough and not vs[1].resolved:
            same = vs[1].lo == vs[1].hi == 0
            note = f"= {vs[0]} on every seed" if same else f"≈ {vs[0]} (not resolved)"
            under = f"{under} · {note}" if under else note
            cls = cls if same else "unresolved"
    return {"text": _text(v, digits), "spread": under, "kind": kind, "bad": kind == "plain" and v is False,
            "cls": cls}  # fmt: skip


def _tables(page: BenchPage) -> list[dict[str, Any]]:
    """The aggregate as narrow tables (:data:`AGG_GROUPS`), rows by window then design."""
    from sim.report import cost

    columns = {c[0]: c for c in AGG_COLUMNS + cost.bench_columns(page.agg)}  # with a provider: its cost
    skip = {"seeds"} | ({"recall_vs_oracle"} if page.oracle_perfect else set())
    grouped = [k for _, _, keys in AGG_GROUPS for k in keys]
    groups = [
        (gid, title, [k for k in keys if k in columns and k not in skip]) for gid, title, keys in AGG_GROUPS
    ]
    rest = [k for k in columns if k not in grouped and k not in skip]
    if rest:
        groups.append(("other", "Other figures", rest))
    order = sorted(page.agg, key=lambda a: (int(a["budget"]), page.designs.index(str(a["design"]))))
    out = []
    for gid, title, keys in groups:
        if not keys:
            continue
        out.append({
            "id": gid, "title": title, "columns": [columns[k] for k in keys],
            "rows": [
                {"design": a["design"], "budget": a["budget"], "seeds": a.get("seeds"),
                 "cells": [_cell(page, a, k, *columns[k][2:4]) for k in keys]}
                for a in order
            ],
        })  # fmt: skip
    return out


def _findings(page: BenchPage) -> list[tuple[str, str]]:
    """Plain sentences with a class: the best and lowest recall per window and whether the seeds resolve
    the difference, liveness, overflow."""
    out: list[tuple[str, str]] = []
    n = len(page.seeds)
    for b in page.budgets:
        best = page.best.get(b)
        if best is None:
            continue
        at = [d for d in page.designs if d != "oracle" and (d, b) in page.recall]
        worst = min(at, key=lambda d: (page.recall[(d, b)].mean, page.designs.index(d)))
        text = (
            f"Window {b:,}: best probe recall {page.recall[(best, b)].mean:.3f} ({best}), "
            f"lowest {page.recall[(worst, b)].mean:.3f} ({worst})"
        )
        diff = page.versus.get((worst, b))
        if diff is None:
            out.append((text + ".", ""))
            continue
        ci = diff[1]
        if ci.enough:
            text += f"; difference {ci.mean:.3f}, {stats.LEVEL:.0%} CI {ci.lo:.3f}–{ci.hi:.3f}"
            text += " (resolved by the seeds)" if ci.resolved else " (the seeds cannot resolve it)"
            tied = [
                d for d in at if d != best and (d, b) in page.versus and not page.versus[(d, b)][1].resolved
            ]
            if tied:
                text += (
                    f"; the seeds cannot tell {best} apart from {_and(tied)}"
                    f" (recall within the interval of {best}'s)"
                )
        out.append((text + ".", ""))
    if n < stats.MIN_SEEDS:
        out.append((
            f"{n} seed{'s' if n != 1 else ''}: too few to conclude which design recalls more. Means show "
            f"their min–max over seeds; run with --seeds {stats.MIN_SEEDS} or more for {stats.LEVEL:.0%} "
            "bootstrap intervals.", "few",
        ))  # fmt: skip
    dead = sorted({f"{a['design']} at {int(a['budget']):,}" for a in page.agg if not a.get("live")}, key=str)
    if dead:
        out.append(("Not live (a calm-tail request over the window): " + ", ".join(dead) + ".", "bad"))
    else:
        out.append(("Every design was live at every window (each calm-tail request fitted).", "ok"))
    over = [a for a in page.agg if a.get("over_window_sum")]
    if over:
        text = ", ".join(f"{a['design']} {a['over_window_sum']:,} at {int(a['budget']):,}" for a in over)
        out.append((f"Requests over the window (summed over seeds): {text}.", "bad"))
    return out


@dataclass(frozen=True)
class Section:
    """One part of the bench page: its anchor *id*, its *title* (heading and nav link), a *template*
    (``templates/bench/...``) and a *context* function of the page (None: the page alone)."""

    id: str
    title: str
    template: str
    context: Callable[[BenchPage], dict[str, Any]] | None = None


def _pictures(page: BenchPage) -> dict[str, Any]:
    return {"charts": [_chart(page, m, y, t, u) for m, y, t, u in CHARTS] + bench_charts(page)}


def _tradeoff(page: BenchPage) -> dict[str, Any]:
    from sim.report.tradeoff import recall_cost_chart

    return {"chart": recall_cost_chart(page)}


def _aggregate(page: BenchPage) -> dict[str, Any]:
    return {"tables": _tables(page), "method": stats.METHOD, "min_seeds": stats.MIN_SEEDS}


def _cells(page: BenchPage) -> dict[str, Any]:
    cells = sorted(
        page.rows, key=lambda r: (int(r["budget"]), page.designs.index(str(r["design"])), int(r["seed"]))
    )
    return {
        "cells": cells[:MAX_CELLS],
        "cells_left": max(0, len(cells) - MAX_CELLS),
        "cell_columns": CELL_COLUMNS,
    }


#: The bench page's sections, in page order (add one to add a part of the page).
SECTIONS: list[Section] = [
    Section("pictures", "Against the window", "bench/pictures.html.j2", _pictures),
    Section("aggregate", "Aggregate over seeds", "bench/aggregate.html.j2", _aggregate),
    Section("tradeoff", "Recall against cost", "bench/tradeoff.html.j2", _tradeoff),
    Section("plots", "Tokens over time", "bench/plots.html.j2"),
    Section("cells", "Cells (design × window × seed)", "bench/cells.html.j2", _cells),
]


def render_bench_rows(
    rows: list[dict[str, Any]],
    agg: list[dict[str, Any]],
    images: dict[str, bytes],
    provenance: dict[str, Any] | None = None,
) -> str:
    """The benchmark page of a sweep's result *rows*, their aggregate *agg* and its PNG *images*; its
    footer cites the run's *provenance* (:mod:`sim.provenance`) when there is one."""
    from markupsafe import Markup

    from sim import __version__
    from sim.cache.prices import basis
    from sim.provenance import cite_text
    from sim.registry import reference_note

    page = page_data(rows, agg, images)
    provider = ((provenance or {}).get("settings") or {}).get("provider")
    cost_basis = (
        basis(provider, "priced")
        if isinstance(provider, dict) and page.agg and "provider" in page.agg[0]
        else ""
    )
    base = {"page": page, "colour": page.colour, "version": __version__, "cost_basis": cost_basis}
    sections = []
    for s in SECTIONS:
        extra = s.context(page) if s.context is not None else {}
        sections.append((s, Markup(render(s.template, section=s, **base, **extra))))
    from sim.bench.describe import CALM_TAIL, describe

    return render(
        "bench.html.j2",
        **base,
        designs=[(d, page.colour[d]) for d in page.designs],
        reference_note=reference_note(page.designs),
        budgets=page.budgets,
        seeds=page.seeds,
        workload=describe(rows),
        calm_tail=CALM_TAIL,
        n_cells=len(rows),
        findings=_findings(page),
        oracle_perfect=page.oracle_perfect,
        sections=sections,
        cite=cite_text(provenance) if provenance else "",
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
    from sim.provenance import read_db_meta

    return render_bench_rows(rows, agg, images, read_db_meta(db))
