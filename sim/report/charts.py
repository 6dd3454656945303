"""The run page's pictures as geometry: the context-window timeline of each agent, and the swim lanes.

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

from sim.report.fmt import CRASH, FAIL, axis_seconds, compact, nice_ticks, num, seconds, stable_colour
from sim.report.runview import FAULT_PHASES, LANE_BINS, LINE_KEYS, Request, RunView

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
MAX_LANES = 24
#: Operation names drawn in their own colour in the swim lanes (the rest are "other operations").
LANE_CATEGORIES = 6

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


@dataclass
class Timeline:
    """One agent's requests: stacked tokens by kind, lines, rugs, probes, fact counts, routes."""

    agent: str
    routes: list[tuple[str, str, int]]  # (route, colour, requests)
    route_strip: list[tuple[str, str, str, str]]  # (x, w, colour, route) when the agent has several routes
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


def timeline(agent: str, reqs: list[Request], marks: list[Mark], markers: dict[str, str]) -> Timeline:
    """The timeline of *agent*'s requests (in seq order, all routes), with its notable operations *marks*."""
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
    counts = Counter(r.route for r in reqs)
    route_colour = {r: ROUTE_PALETTE[i % len(ROUTE_PALETTE)] for i, r in enumerate(sorted(counts))}
    routes = [(r, route_colour[r], counts[r]) for r in sorted(counts, key=lambda r: (-counts[r], r))]
    strip: list[tuple[str, str, str, str]] = []
    if len(counts) > 1:
        c0 = 0
        for c in range(1, n + 1):
            if c == n or reps[c].route != reps[c0].route:
                strip.append((_f(X(c0)), _f(X(c) - X(c0)), route_colour[reps[c0].route], reps[c0].route))
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
    peak_req = max(reqs, key=lambda r: (r.exact, -r.seq))
    return Timeline(
        agent=agent, routes=routes, route_strip=strip, requests=len(reqs), per_column=per, right=_f(right),
        top=top, bottom=bottom, facts_top=facts_top, facts_bottom=facts_top + (FACTS_H if has_facts else 0),
        height=facts_top + (FACTS_H + 22 if has_facts else 16), has_facts=has_facts,
        bands=bands, lines=lines, rugs=rugs, probes=probes,
        columns=[
            Column(_f(X(c)), _f(cw), _column_title(agent, per, c, col, reps[c], marked.get(c, Counter())))
            for c, col in enumerate(cols)
        ],
        y_ticks=[(_f(Y(v)), compact(v)) for v in ticks],
        x_ticks=[(_f(X((i - 0.5) / per)), num(i)) for i in index_ticks],
        facts_path=facts_path, drop_rects=drop_rects, facts_ticks=[(_f(FY(v)), compact(v)) for v in f_ticks],
        peak=peak_req.exact, peak_time=peak_req.time, labelled=any(r.kinds for r in reps),
    )  # fmt: skip


def _column_title(
    agent: str, per: int, c: int, col: list[Request], rep: Request, marked: Counter[str]
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
    parts = [f"{agent} · {head} · {when}", f"{rep.route}: {rep.exact:,} tokens{est}"]
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


# -- swim lanes ---------------------------------------------------------------------------------------------
LANE_H = 22
LANE_LEFT = 150
LANE_RIGHT = 20


@dataclass(frozen=True)
class Tick:
    x: str
    y: str
    colour: str
    shape: str  # "op", "request", "fail", "crash", "marker"
    title: str


@dataclass
class Lanes:
    """Agents as horizontal lanes, time on the simulation clock (or record order) along x."""

    axis: str
    height: int
    labels: list[tuple[str, str, str, str]]  # (row top y, label y, agent, count text)
    ticks: list[Tick]
    paths: list[tuple[str, str, str]]  # (colour, path, title) for a large trace
    x_ticks: list[tuple[str, str]]
    legend: list[tuple[str, str, str]]  # (shape, colour, label)
    merged: int
    binned: bool


def _lane_of(view: RunView) -> tuple[dict[str, int], list[str], int]:
    counts = {a: view.agent_ops.get(a, 0) + view.agent_requests(a) for a in view.agents}
    shown = view.agents
    merged = 0
    if len(shown) > MAX_LANES:
        keep = set(sorted(shown, key=lambda a: (-counts[a], a))[: MAX_LANES - 1])
        merged = len(shown) - len(keep)
        shown = [a for a in shown if a in keep]
    names = [*shown, f"{merged:,} other agents"] if merged else list(shown)
    index = {a: i for i, a in enumerate(shown)}
    return {a: index.get(a, len(shown)) for a in view.agents}, names, merged


def lanes(view: RunView) -> Lanes:
    """The swim-lane picture of *view* (one mark per record, or per-bin counts for a large trace)."""
    lane, names, merged = _lane_of(view)
    plot_w = WIDTH - LANE_LEFT - LANE_RIGHT
    by_time = view.t_max > view.t_min
    lo, hi = (view.t_min, view.t_max) if by_time else (1.0, float(max(view.op_total + view.request_total, 2)))

    def X(v: float) -> float:
        return LANE_LEFT + plot_w * (v - lo) / (hi - lo)

    def LY(i: int) -> float:
        return 6 + i * LANE_H

    categories = [o for o, _ in view.op_names if o not in view.markers][:LANE_CATEGORIES]
    colours = {o: OP_PALETTE[i % len(OP_PALETTE)] for i, o in enumerate(sorted(categories))}
    marks = mark_colours(view.markers)
    legend: set[tuple[str, str, str]] = set()
    ticks: list[Tick] = []
    paths: list[tuple[str, str, str]] = []

    def tick(agent: str, seq: int, t: float, op: str, phase: str) -> None:
        marker = view.markers.get(op, "")
        x = _f(X(t if by_time else seq))
        y = LY(lane[agent])
        title = f"{agent} · {op} ({phase}) · t={seconds(t)} · seq {seq}"
        if phase in FAULT_PHASES:
            colour = CRASH if phase == "crash" else FAIL
            ticks.append(Tick(x, _f(y + 2), colour, phase, title))
            legend.add((phase, colour, phase))
        elif op == "model request":
            ticks.append(Tick(x, _f(y + LANE_H / 2), REQUEST_COLOUR, "request", title))
            legend.add(("request", REQUEST_COLOUR, "model request"))
        elif marker:
            colour = marks[marker]
            ticks.append(Tick(x, _f(y + 2), colour, "marker", f"{marker}: {title}"))
            legend.add(("marker", colour, marker))
        else:
            colour = colours.get(op, OP_PALETTE[-1])
            ticks.append(Tick(x, _f(y + 5), colour, "op", title))
            legend.add(("op", colour, op if op in colours else "other operations"))

    if view.lane_points:
        for agent, seq, t, op, phase in view.lane_points:
            tick(agent, seq, t, op, phase)
    else:
        cat_colour = {"model request": REQUEST_COLOUR, **marks}
        cat_colour.update(colours)
        _binned(view, lane, names, cat_colour, X, LY, lo, hi, paths, legend)
        faults = [m for m in view.marks if m[4] in FAULT_PHASES]
        for agent, seq, t, op, phase in faults[:400]:
            tick(agent, seq, t, op, phase)
    labels = []
    for i, name in enumerate(names):
        n = sum(view.agent_ops.get(a, 0) + view.agent_requests(a) for a in view.agents if lane[a] == i)
        labels.append((_f(LY(i)), _f(LY(i) + LANE_H / 2 + 4), name, f"{n:,}"))
    axis_y = LY(len(names)) + 4
    if by_time:
        x_ticks = [(_f(X(v)), axis_seconds(v)) for v in nice_ticks(lo, hi, 7)]
    else:
        x_ticks = [(_f(X(v)), f"#{int(v):,}") for v in nice_ticks(lo, hi, 7) if v == int(v)]
    order = {"request": 0, "marker": 1, "op": 2, "fail": 3, "crash": 4}
    return Lanes(
        "time" if by_time else "order", int(axis_y + 36), labels, ticks, paths, x_ticks,
        sorted(legend, key=lambda e: (order[e[0]], e[2] == "other operations", e[2])), merged,
        not view.lane_points,
    )  # fmt: skip


def _binned(
    view: RunView,
    lane: dict[str, int],
    names: list[str],
    cat_colour: dict[str, str],
    X: Callable[[float], float],
    LY: Callable[[int], float],
    lo: float,
    hi: float,
    paths: list[tuple[str, str, str]],
    legend: set[tuple[str, str, str]],
) -> None:
    """Per lane, stacked bars of record counts per bin (model requests, operation categories, other), and
    the design's markers as full-height bars in every bin that holds one (rare events stay visible)."""
    merged: dict[int, list[Counter[str]]] = {}
    for agent, bins in view.lane_bins.items():
        acc = merged.setdefault(lane[agent], [Counter() for _ in range(LANE_BINS)])
        for b, c in enumerate(bins):
            acc[b].update(c)
    marker_labels = sorted(set(view.markers.values()))
    plain = sorted(k for k in cat_colour if k != "model request" and k not in marker_labels)
    cats = ["model request", *plain, "other operations"]
    colours = {**cat_colour, "other operations": OP_PALETTE[-1]}
    bw = (hi - lo) / LANE_BINS

    def bar(b: int, y0: float, y1: float) -> str:
        x0, x1 = X(lo + b * bw), X(lo + (b + 1) * bw)
        if x1 - x0 < 1.6:
            x0, x1 = x0 - 0.8 + (x1 - x0) / 2, x0 + 0.8 + (x1 - x0) / 2
        return f"M{_f(x0)} {_f(y0)}V{_f(y1)}H{_f(x1)}V{_f(y0)}Z"

    for i, bins in sorted(merged.items()):
        grouped = []
        for c in bins:
            g: Counter[str] = Counter()
            for k, v in c.items():
                g[k if k in colours else "other operations"] += v
            grouped.append(g)
        base = LY(i) + LANE_H - 2
        plain_peak = max((sum(v for k, v in g.items() if k not in marker_labels) for g in grouped), default=0)
        below = [0.0] * LANE_BINS
        for cat in cats:
            vals = [g.get(cat, 0) for g in grouped]
            if not any(vals) or not plain_peak:
                continue
            scale = (LANE_H - 4) / plain_peak
            d = []
            for b, v in enumerate(vals):
                if v:
                    y0 = base - below[b] * scale
                    d.append(bar(b, y0, y0 - v * scale))
                    below[b] += v
            paths.append(
                (
                    colours[cat],
                    "".join(d),
                    f"{names[i]}: {cat}, {sum(vals):,} records (lane peak {plain_peak:,} per bin)",
                )
            )
            legend.add(("request" if cat == "model request" else "op", colours[cat], cat))
        for label in marker_labels:
            vals = [g.get(label, 0) for g in grouped]
            if any(vals):
                bars = "".join(bar(b, base, base - (LANE_H - 4)) for b, v in enumerate(vals) if v)
                paths.append((colours[label], bars, f"{names[i]}: {label}, {sum(vals):,} records"))
                legend.add(("marker", colours[label], label))
