"""The run page's context-window timeline of each agent, as geometry (:mod:`sim.report.lanes` draws lanes).

Everything here is numbers and short path strings; the templates turn them into SVG elements. A timeline
has at most :data:`MAX_COLUMNS` columns: a longer run is bucketed, and each column then shows the largest
request of its bucket (peaks survive; the page says how many requests a column holds). Markers, failures
and crashes sit in "rug" rows above the plot, one row per label, counted per column, so a marker that
fires on every step stays readable; when a timeline has few of them each also gets a guide line.
"""

from __future__ import annotations

import bisect
import math
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from sim.report.fmt import CRASH, FAIL, compact, nice_ticks, num, seconds, stable_colour
from sim.report.runview import FAULT_PHASES, LINE_KEYS, Request

#: A notable operation's position: (agent, seq, time, op, phase).
Mark = tuple[str, int, float, str, str]

MAX_COLUMNS = 240
#: The widest a column gets (a short run's chart is narrower rather than a few huge bars).
MAX_BAR = 44
#: Requests per timeline up to which each is drawn as a separate bar (a gap between bars).
BAR_LIMIT = 60
#: Timelines drawn (the agents with the most requests; the rest are listed).
MAX_TIMELINES = 8
#: Marks per timeline up to which each also gets a guide line across the plot.
GUIDE_LIMIT = 30

WIDTH = 1080
PLOT_LEFT = 64
PLOT_RIGHT = 150
PLOT_H = 220
FACTS_H = 64
GAP = 34
RUG_H = 11

#: Part kinds in stacking order (bottom first) with their colours; other kinds follow by name.
KIND_COLOURS = {
    "system": "#7F7F7F",
    "tools": "#BCBD22",
    "memory": "#009E73",
    "index": "#E69F00",
    "page": "#56B4E9",
    "worklog": "#CC79A7",
    "message": "#0072B2",
}
KIND_OTHER = ("#8C564B", "#17BECF", "#9467BD", "#F0E442", "#2CA02C", "#FF9DA7")
UNLABELLED = "request (parts not labelled)"
LINE_COLOURS = {"window": "#D55E00", "trigger": "#7B3294", "budget": "#E69F00"}
REQUEST_COLOUR = "#0072B2"
#: Markers: dark, saturated (never the failure red); ordinary operations in the lanes: light.
MARK_PALETTE = ("#6A3D9A", "#00736B", "#8C510A", "#C51B7D", "#1F4E79", "#4D4D4D", "#3F6E1A")
OP_PALETTE = ("#A6CEE3", "#B2DF8A", "#FDBF6F", "#CAB2D6", "#FFE45C", "#8DD3C7", "#BEBADA", "#80B1D3",
              "#FCCDE5", "#D9D9D9")  # fmt: skip


def kind_colour(kind: str) -> str:
    if kind == UNLABELLED:
        return REQUEST_COLOUR
    return KIND_COLOURS.get(kind) or stable_colour(kind, KIND_OTHER)


def mark_colours(markers: dict[str, str]) -> dict[str, str]:
    """A distinct colour per marker label of the trace's designs (by label order: stable per design)."""
    return {
        label: MARK_PALETTE[i % len(MARK_PALETTE)] for i, label in enumerate(sorted(set(markers.values())))
    }


def kind_order(kind: str) -> tuple[int, str]:
    order = list(KIND_COLOURS)
    return (order.index(kind), "") if kind in order else (len(order), kind)


def _f(x: float) -> str:
    return f"{x:.1f}".rstrip("0").rstrip(".")


@dataclass(frozen=True)
class Band:
    kind: str
    colour: str
    tokens: int  # summed over the drawn columns
    path: str = ""
    rects: tuple[tuple[str, str, str, str], ...] = ()  # x, y, w, h (bar mode)


@dataclass(frozen=True)
class Line:
    key: str
    label: str
    colour: str
    path: str
    y_label: str
    dashed: bool = False
    note: str = ""


@dataclass(frozen=True)
class Rug:
    """One row of marks above the plot: a label, its cells (x, w, opacity, title) and its total."""

    label: str
    shape: str  # "marker", "fail", "crash"
    colour: str
    y: str
    cells: tuple[tuple[str, str, str, str], ...]
    total: int
    guides: tuple[str, ...] = ()  # x of guide lines across the plot


@dataclass(frozen=True)
class Probe:
    x: str
    y: str
    hit: bool
    title: str


@dataclass(frozen=True)
class Column:
    x: str
    w: str
    title: str


@dataclass(frozen=True)
class Raster:
    """Which needed facts each column's requests carried: rows of (y, fact id, cells, probe marks)."""

    top: int
    rows: tuple[tuple[str, str, tuple[tuple[str, str, str], ...], tuple[tuple[str, bool, str], ...]], ...]
    # per row: (y, fact, cells (x, w, opacity), probes (x, hit, title))


RASTER_ROW = 11


@dataclass
class Timeline:
    """One agent's requests: stacked tokens by kind, lines, rugs, probes, fact counts, routes."""

    agent: str
    routes: list[tuple[str, str, int]]  # (series, colour, requests), in the order each first ran
    route_strip: list[tuple[str, str, str, str]]  # (x, w, colour, series) when the agent has several series
    requests: int
    per_column: int
    right: str
    top: int
    bottom: int
    facts_top: int
    facts_bottom: int
    height: int
    bands: list[Band]
    lines: list[Line]
    rugs: list[Rug]
    probes: list[Probe]
    columns: list[Column]
    y_ticks: list[tuple[str, str]]
    x_ticks: list[tuple[str, str]]
    facts_path: str
    drop_rects: list[tuple[str, str, str, str]]
    facts_ticks: list[tuple[str, str]]
    peak: int
    peak_time: float
    labelled: bool
    has_facts: bool = True
    raster: Raster | None = None


def _step(vals: list[float | None], X: Callable[[float], float], Y: Callable[[float], float]) -> str:
    d: list[str] = []
    pen = False
    for c, v in enumerate(vals):
        if v is None:
            pen = False
            continue
        d.append(f"{'L' if pen else 'M'}{_f(X(c))} {_f(Y(v))}H{_f(X(c + 1))}")
        pen = True
    return "".join(d)


def _area(
    above: list[int], below: list[int], X: Callable[[float], float], Y: Callable[[float], float]
) -> str:
    """A stepped band between two stacked series (one column per value)."""
    n = len(above)
    d = [f"M{_f(X(0))} {_f(Y(above[0]))}"]
    for c in range(n):
        d.append(f"H{_f(X(c + 1))}")
        if c + 1 < n:
            d.append(f"V{_f(Y(above[c + 1]))}")
    d.append(f"V{_f(Y(below[n - 1]))}")
    for c in range(n - 1, -1, -1):
        d.append(f"H{_f(X(c))}")
        if c > 0:
            d.append(f"V{_f(Y(below[c - 1]))}")
    return "".join(d) + "Z"


def spread(ys: list[float], gap: float = 12.0) -> list[float]:
    """Label positions at least *gap* apart, each as near its wish as possible (order kept)."""
    order = sorted(range(len(ys)), key=lambda i: ys[i])
    out = list(ys)
    last = -1e9
    for i in order:
        out[i] = max(ys[i], last + gap)
        last = out[i]
    return out


ROUTE_PALETTE = ("#4E79A7", "#F28E2B", "#59A14F", "#B07AA1", "#76B7B2", "#EDC948", "#FF9DA7", "#9C755F")


def _raster(
    top: int, tracked: list[str], cols: list[list[Request]], X: Callable[[float], float]
) -> Raster | None:
    """The needed-facts raster: per tracked fact this agent carried or needed, the share of each column's
    requests that carried it (darker: more), and its probes (hit or miss)."""
    rows: list[tuple[str, str, tuple[tuple[str, str, str], ...], tuple[tuple[str, bool, str], ...]]] = []
    for i, fact in enumerate(tracked):
        bit = 1 << i
        if not any(r.present & bit or r.wanted & bit for c in cols for r in c):
            continue
        y = top + len(rows) * RASTER_ROW
        cells: list[tuple[str, str, str]] = []
        run: tuple[int, float] | None = None  # (first column, opacity) of the current run of equal cells
        levels = []
        for c in cols:
            share = sum(1 for r in c if r.present & bit) / len(c)
            levels.append(0.0 if share == 0 else 0.4 if share < 0.5 else 0.7 if share < 1 else 1.0)
        for k in range(len(cols) + 1):
            level = levels[k] if k < len(cols) else -1.0
            if run is not None and level != run[1]:
                if run[1] > 0:
                    cells.append((_f(X(run[0])), _f(X(k) - X(run[0])), f"{run[1]:.1f}"))
                run = None
            if run is None and k < len(cols):
                run = (k, level)
        probes = []
        for k, c in enumerate(cols):
            asked = [r for r in c if r.wanted & bit]
            if asked:
                hit = all(r.present & bit for r in asked)
                title = f"{fact}: {'present' if hit else 'missing'} at the probe (t={seconds(asked[0].time)})"
                probes.append((_f(X(k + 0.5)), hit, title))
        rows.append((str(y), fact, tuple(cells), tuple(probes)))
    return Raster(top, tuple(rows)) if rows else None


def timeline(
    agent: str,
    reqs: list[Request],
    marks: list[Mark],
    markers: dict[str, str],
    tracked: list[str] | None = None,
    series: Callable[[Request], str] | None = None,
) -> Timeline:
    """The timeline of *agent*'s requests (in seq order, all routes), with its notable operations *marks*.

    *series* names the series a request belongs to (default: its route; a scenario running several
    variants side by side names them): the strip under the axis and its legend show the series, in the
    order each first ran."""
    name = series or (lambda r: r.route)
    per = max(1, math.ceil(len(reqs) / MAX_COLUMNS))
    cols = [reqs[i : i + per] for i in range(0, len(reqs), per)]
    reps = [max(c, key=lambda r: (r.exact, -r.seq)) for c in cols]
    n = len(cols)
    cw = min((WIDTH - PLOT_LEFT - PLOT_RIGHT) / n, MAX_BAR)
    right = PLOT_LEFT + n * cw

    def X(c: float) -> float:
        return PLOT_LEFT + c * cw

    rugs, marked = _rugs(reqs, per, marks, markers, mark_colours(markers), X)
    top = 10 + len(rugs) * RUG_H + (8 if rugs else 6)
    plot_h = PLOT_H if n > 12 else PLOT_H * 2 // 3
    bottom = top + plot_h
    counts = Counter(name(r) for r in reqs)  # insertion order: the order each series first ran
    route_colour = {r: ROUTE_PALETTE[i % len(ROUTE_PALETTE)] for i, r in enumerate(counts)}
    routes = [(r, route_colour[r], counts[r]) for r in counts]
    strip: list[tuple[str, str, str, str]] = []
    if len(counts) > 1:
        c0 = 0
        for c in range(1, n + 1):
            if c == n or name(reps[c]) != name(reps[c0]):
                strip.append((_f(X(c0)), _f(X(c) - X(c0)), route_colour[name(reps[c0])], name(reps[c0])))
                c0 = c
    for i, r in enumerate(rugs):
        rugs[i] = Rug(r.label, r.shape, r.colour, str(10 + i * RUG_H), r.cells, r.total, r.guides)

    kinds = sorted({k for r in reps for k in (r.kinds or {UNLABELLED: 0})}, key=kind_order)
    values = [r.kinds if r.kinds else {UNLABELLED: r.exact} for r in reps]
    line_keys = [k for k in LINE_KEYS if any(k in r.lines for r in reps)]
    peak = max(
        [r.exact for r in reps]
        + [r.estimate or 0 for r in reps]
        + [v for r in reps for v in r.lines.values()]
        + [1]
    )
    ticks = nice_ticks(0, peak * 1.06, 5)
    y_max = max(ticks[-1], peak * 1.06)

    def Y(v: float) -> float:
        return top + plot_h * (1 - v / y_max)

    bands: list[Band] = []
    below = [0] * n
    for k in kinds:
        vals = [v.get(k, 0) for v in values]
        above = [b + v for b, v in zip(below, vals)]
        if n <= BAR_LIMIT:
            gap = min(cw * 0.18, 6)
            rects = tuple(
                (_f(X(c) + gap / 2), _f(Y(above[c])), _f(cw - gap), _f(Y(below[c]) - Y(above[c])))
                for c in range(n)
                if vals[c] > 0
            )
            bands.append(Band(k, kind_colour(k), sum(vals), rects=rects))
        else:
            bands.append(Band(k, kind_colour(k), sum(vals), path=_area(above, below, X, Y)))
        below = above

    lines: list[Line] = []
    wishes: list[float] = []
    paths: dict[str, int] = {}
    for key in line_keys:
        lvals: list[float | None] = [r.lines.get(key) for r in reps]
        last = next(v for v in reversed(lvals) if v is not None)
        path = _step(lvals, X, Y)
        note = (
            "from the requests" if any(key in r.detail_lines for r in reps) else "from the run's parameters"
        )
        if path in paths:  # the same line under two names (T = B): one line, both names
            j = paths[path]
            old = lines[j]
            lines[j] = Line(
                old.key, old.label.replace(" ", f" = {key} ", 1), old.colour, path, "", note=old.note
            )
            continue
        paths[path] = len(lines)
        lines.append(Line(key, f"{key} {num(int(last))}", LINE_COLOURS[key], path, "", note=note))
        wishes.append(Y(last))
    if any(r.estimate is not None for r in reps):
        evals: list[float | None] = [None if r.estimate is None else float(r.estimate) for r in reps]
        last = next(v for v in reversed(evals) if v is not None)
        lines.append(Line("estimate", "design's estimate", "#333333", _step(evals, X, Y), "", dashed=True))
        wishes.append(Y(last))
    lines = [
        Line(ln.key, ln.label, ln.colour, ln.path, _f(y + 4), ln.dashed, ln.note)
        for ln, y in zip(lines, spread(wishes))
    ]

    probes: list[Probe] = []
    for c, col in enumerate(cols):
        hits = sum(r.probe[0] for r in col if r.probe)
        need = sum(r.probe[1] for r in col if r.probe)
        if need:
            many = "s" if sum(1 for r in col if r.probe) > 1 else ""
            title = f"probe{many}: {hits} of {need} needed facts present"
            probes.append(Probe(_f(X(c + 0.5)), _f(Y(reps[c].exact) - 8), hits == need, title))

    has_facts = any(r.facts or r.dropped for r in reqs)
    facts_top = bottom + GAP if has_facts else bottom + 8
    f_max = max([r.facts for r in reps] + [sum(r.dropped for r in c) for c in cols] + [1])
    f_ticks = nice_ticks(0, f_max, 2)
    f_scale = max(f_ticks[-1], f_max)

    def FY(v: float) -> float:
        return facts_top + FACTS_H * (1 - v / f_scale)

    facts_path = "".join(
        f"{'L' if c else 'M'}{_f(X(c))} {_f(FY(r.facts))}H{_f(X(c + 1))}" for c, r in enumerate(reps)
    )
    drop_rects = []
    for c, col in enumerate(cols):
        gone = sum(r.dropped for r in col)
        if gone:
            drop_rects.append(
                (_f(X(c) + cw * 0.15), _f(FY(gone)), _f(max(cw * 0.7, 1.0)), _f(FY(0) - FY(gone)))
            )
    index_ticks = [int(v) for v in nice_ticks(1, len(reqs), 6) if v >= 1 and v == int(v)] or [1]
    raster_top = facts_top + (FACTS_H + 24 if has_facts else 16)
    raster = _raster(raster_top, tracked or [], cols, X)
    if raster is not None:
        height = raster_top + len(raster.rows) * RASTER_ROW + 12
    else:
        height = facts_top + (FACTS_H + 22 if has_facts else 16)
    peak_req = max(reqs, key=lambda r: (r.exact, -r.seq))
    return Timeline(
        agent=agent, routes=routes, route_strip=strip, requests=len(reqs), per_column=per, right=_f(right),
        top=top, bottom=bottom, facts_top=facts_top, facts_bottom=facts_top + (FACTS_H if has_facts else 0),
        height=height, has_facts=has_facts, raster=raster,
        bands=bands, lines=lines, rugs=rugs, probes=probes,
        columns=[
            Column(_f(X(c)), _f(cw), _column_title(agent, per, c, col, reps[c], marked.get(c, Counter()),
                                                   name(reps[c])))
            for c, col in enumerate(cols)
        ],
        y_ticks=[(_f(Y(v)), compact(v)) for v in ticks],
        x_ticks=[(_f(X((i - 0.5) / per)), num(i)) for i in index_ticks],
        facts_path=facts_path, drop_rects=drop_rects, facts_ticks=[(_f(FY(v)), compact(v)) for v in f_ticks],
        peak=peak_req.exact, peak_time=peak_req.time, labelled=any(r.kinds for r in reps),
    )  # fmt: skip


def _column_title(
    agent: str, per: int, c: int, col: list[Request], rep: Request, marked: Counter[str], series: str = ""
) -> str:
    """A column's hover text, kept short (a long run has hundreds of columns)."""
    first = c * per + 1
    head = (
        f"request {first:,}"
        if len(col) == 1
        else f"requests {first:,}–{first + len(col) - 1:,} (largest shown)"
    )
    when = f"t={seconds(col[0].time)}" + (f"–{seconds(col[-1].time)}" if col[-1].time != col[0].time else "")
    est = f" (estimate {rep.estimate:,})" if rep.estimate is not None else ""
    route = rep.route if series in ("", rep.route) else f"{series} ({rep.route})"
    parts = [f"{agent} · {head} · {when}", f"{route}: {rep.exact:,} tokens{est}"]
    if rep.kinds:
        parts[-1] += ": " + ", ".join(
            f"{k} {v:,}" for k, v in sorted(rep.kinds.items(), key=lambda kv: kind_order(kv[0]))
        )
    gone = sum(r.dropped for r in col)
    line = f"{rep.facts:,} facts" + (f", {gone:,} gone since the previous" if gone else "")
    need = sum(r.probe[1] for r in col if r.probe)
    if need:
        line += f" · probe {sum(r.probe[0] for r in col if r.probe)}/{need} present"
    parts.append(line)
    if rep.lines:
        parts.append(" · ".join(f"{k} {v:,}" for k, v in sorted(rep.lines.items())))
    if marked:
        parts.append("marked before it: " + ", ".join(f"{n:,} × {k}" for k, n in sorted(marked.items())))
    return "\n".join(parts)


#: Rug rows with at most this many cells give each cell its own hover text (else the columns carry it).
CELL_TITLES = 60


def _rugs(reqs: list[Request], per: int, marks: list[Mark], markers: dict[str, str], colours: dict[str, str],
          X: Callable[[float], float]) -> tuple[list[Rug], dict[int, Counter[str]]]:  # fmt: skip
    """Rug rows: per label, how many marks fall before each column (between the requests around them);
    and per column, the marks counted by label (for the column's hover text)."""
    seqs = [r.seq for r in reqs]
    n_cols = math.ceil(len(reqs) / per)
    rows: dict[tuple[int, str, str], dict[int, list[float]]] = {}
    per_cell: dict[int, Counter[str]] = {}
    for _, seq, t, op, phase in marks:
        boundary = bisect.bisect_left(seqs, seq)  # the mark comes before request #boundary (0-based)
        cell = min(n_cols, math.ceil(boundary / per))
        if phase in FAULT_PHASES:
            key = (0 if phase == "crash" else 1, phase, f"{phase}: {op}")
        else:
            key = (2, "marker", markers.get(op, op))
        c = rows.setdefault(key, {}).setdefault(cell, [0, t, t])
        c[0] += 1
        c[2] = t
        per_cell.setdefault(cell, Counter())[key[2]] += 1
    total_marks = sum(int(v[0]) for cells in rows.values() for v in cells.values())
    cw = X(1) - X(0)
    w = max(2.0, min(cw * 0.8, 8.0))
    out = []
    for (_, shape, label), cells in sorted(rows.items()):
        colour = (
            CRASH if shape == "crash" else FAIL if shape == "fail" else colours.get(label, MARK_PALETTE[-1])
        )
        most = max(v[0] for v in cells.values())
        drawn = []
        for cell, (count, t0, t1) in sorted(cells.items()):
            where = f"before request {cell * per + 1:,}" if cell < n_cols else f"after request {len(reqs):,}"
            when = f"t={seconds(t0)}" + (f"–{seconds(t1)}" if t1 != t0 else "")
            opacity = 0.35 + 0.65 * count / most
            title = f"{label} ×{int(count):,} {where} ({when})" if len(cells) <= CELL_TITLES else ""
            drawn.append((_f(X(cell) - w / 2), _f(w), f"{opacity:.2f}", title))
        guides = (
            tuple(_f(X(cell)) for cell in sorted(cells))
            if shape == "crash" or total_marks <= GUIDE_LIMIT
            else ()
        )
        out.append(
            Rug(label, shape, colour, "", tuple(drawn), int(sum(v[0] for v in cells.values())), guides)
        )
    return out, per_cell


#: Vertical gap between two series labels at a chart's right edge.
LABEL_GAP = 11.0


def label_positions(wishes: list[float], gap: float, lo: float, hi: float) -> list[float]:
    """Label baselines near their *wishes*, at least *gap* apart, inside [lo, hi] (order kept): pushed down
    from the top, then, if the last ran past *hi*, pushed back up from the bottom."""
    out = spread([min(max(w, lo), hi) for w in wishes], gap)
    order = sorted(range(len(out)), key=lambda i: out[i], reverse=True)
    floor = hi + gap
    for i in order:
        out[i] = min(out[i], floor - gap)
        floor = out[i]
    return out
