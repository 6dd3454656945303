"""The run page's swim lanes: one lane per agent, its operations and requests on the simulation clock.

A small trace gets one mark per record (requests as dots, the design's markers as tall bars, failures
in red, crashes as black diamonds); a large one gets per-bin counts stacked by operation, with markers
as full-height bars in each bin that holds one and failures and crashes still drawn one by one.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from sim.report.charts import OP_PALETTE, REQUEST_COLOUR, WIDTH, _f, mark_colours
from sim.report.fmt import CRASH, FAIL, nice_ticks, seconds, time_ticks
from sim.report.runview import FAULT_PHASES, LANE_BINS, RunView

MAX_LANES = 24
#: Operation names drawn in their own colour (the rest are "other operations").
LANE_CATEGORIES = 6
#: Failures and crashes drawn one by one in a large trace's lanes.
MAX_FAULT_TICKS = 400

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
        for agent, seq, t, op, phase in faults[:MAX_FAULT_TICKS]:
            tick(agent, seq, t, op, phase)
    labels = []
    for i, name in enumerate(names):
        n = sum(view.agent_ops.get(a, 0) + view.agent_requests(a) for a in view.agents if lane[a] == i)
        labels.append((_f(LY(i)), _f(LY(i) + LANE_H / 2 + 4), name, f"{n:,}"))
    axis_y = LY(len(names)) + 4
    if by_time:
        x_ticks = [(_f(X(v)), label) for v, label in time_ticks(lo, hi, 7)]
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
