"""The run page: what reached the model, per agent, and what every agent did, from one trace.

Headline first (the numbers and findings a reader checks), then the pictures (a context-window timeline
per agent: stacked request tokens by part kind, the window/trigger lines, markers, failures and probes;
the facts strip under it; swim lanes of every agent's operations on the simulation clock), then the
details (probes, fact drops, operation counts and listings, the run's meta).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sim.report import charts, lanes
from sim.report.fmt import num, pct, plural, seconds
from sim.report.inputs import check_trace
from sim.report.runview import (
    DROPPED_IDS,
    FAULT_PHASES,
    LANE_BINS,
    MAX_LISTED_OPS,
    MAX_MARKS,
    MAX_NOTABLE,
    MAX_PROBES,
    RunView,
    read_run,
)
from sim.report.templating import render


@dataclass(frozen=True)
class Section:
    """A part another module adds to the run page, after the swim lanes: its anchor *id*, its *title*
    (heading and nav link), a *template* under ``templates/`` rendered on its own (autoescaped) with
    ``view`` and what *context* returns for the :class:`RunView`."""

    id: str
    title: str
    template: str
    context: Callable[[RunView], dict[str, Any]] | None = None


#: Added parts of the run page, in page order (empty: the page's own parts only).
SECTIONS: list[Section] = []

META_ORDER = ("scenario", "seed", "faults", "store", "params", "memsim_version", "schema_version", "complete")


def render_run(trace_path: Path) -> str:
    """The report page of the complete trace at *trace_path* (:class:`sim.trace.TraceError` otherwise)."""
    from markupsafe import Markup

    from sim.report.cost import run_section

    check_trace(Path(trace_path))  # the rows its writer produces (sim.report.inputs)
    view = read_run(Path(trace_path))
    extra = [
        (s, Markup(render(s.template, view=view, **(s.context(view) if s.context is not None else {}))))
        for s in SECTIONS
    ]
    return render("run.html.j2", **context(view), sections=extra, cost_section=run_section(Path(trace_path)))


def _titles(view: RunView) -> tuple[str, dict[str, str]]:
    """The scenario's title and each design's title, where they are installed."""
    from sim.errors import UsageError
    from sim.registry import designs

    found = designs()
    systems = {s: found[s].title if s in found else s for s in view.systems}
    title = ""
    name = view.meta.get("scenario", "")
    if name:
        try:
            from sim.scenario_core import scenarios

            sc = scenarios().get(name)
            title = sc.title if sc is not None else ""
        except UsageError:
            title = ""
    return title, systems


def _meta_rows(view: RunView) -> list[tuple[str, str, bool]]:
    keys = [k for k in META_ORDER if k in view.meta] + sorted(k for k in view.meta if k not in META_ORDER)
    rows = []
    for k in keys:
        v = view.meta_json(k, "")
        if isinstance(v, dict | list) and v:
            import json

            rows.append((k, json.dumps(v, ensure_ascii=False, sort_keys=True, indent=1), True))
        else:
            rows.append((k, view.meta[k], False))
    return rows


def _findings(view: RunView) -> list[tuple[str, str]]:
    """Plain sentences, each with a class (``""``, ``"bad"``, ``"ok"``): what a reader should know first."""
    out: list[tuple[str, str]] = []
    reqs = [(a, r) for (a, _), rs in view.requests.items() for r in rs]
    span = view.t_max - view.t_min
    out.append(
        (
            f"{plural(view.op_total, 'operation')} and {plural(view.request_total, 'model request')} by "
            f"{plural(len(view.agents), 'agent')} over {seconds(span)} of simulated time.",
            "",
        )
    )
    if not reqs:
        out.append(("No model requests were recorded: this trace cannot show what reached the model.", "bad"))
    else:
        agent, peak = max(reqs, key=lambda ar: (ar[1].exact, -ar[1].seq))
        text = f"Largest request: {peak.exact:,} tokens ({peak.route}, {agent}, t={seconds(peak.time)})"
        limit = "window" if "window" in peak.lines else "budget" if "budget" in peak.lines else ""
        if limit:
            text += f", {pct(peak.exact, peak.lines[limit])} of its {peak.lines[limit]:,}-token {limit}"
        out.append((text + ".", ""))
        with_window = [r for _, r in reqs if "window" in r.lines]
        over = sum(r.exact > r.lines["window"] for r in with_window)
        if with_window:
            out.append(
                (
                    f"{plural(over, 'request')} of {len(with_window):,} exceeded the window."
                    if over
                    else f"Every one of {len(with_window):,} requests fitted its window.",
                    "bad" if over else "ok",
                )
            )
        est = [(r.exact, r.estimate) for _, r in reqs if r.estimate]
        if est:
            ratio = sum(e for _, e in est) / sum(x for x, _ in est)
            out.append(
                (
                    f"The design's own token estimate is {ratio:.2f}× the exact cl100k count "
                    f"(summed over {plural(len(est), 'request')}).",
                    "",
                )
            )
    if view.probe_total:
        misses = view.needed_total - view.needed_hits
        text = (
            f"{plural(view.probe_total, 'probe')} needed {plural(view.needed_total, 'fact')}: "
            f"{view.needed_hits:,} present, {misses:,} missing"
        )
        first = next((p for p in view.probes if p.misses), None)
        if first is not None:
            text += f" (first miss: {first.misses[0]} at t={seconds(first.time)}, {first.agent})"
        out.append((text + ".", "bad" if misses else "ok"))
        out.extend(_per_series(view))
    elif reqs:
        out.append(("No request in this trace is a probe (none names the facts it needed).", ""))
    if view.drop_events:
        big = max(view.drops, key=lambda d: (d.count, -d.seq))
        out.append(
            (
                f"Facts left an agent's next request {plural(view.drop_events, 'time')}; the largest drop "
                f"removed {plural(big.count, 'fact')} at t={seconds(big.time)} ({big.agent}, {big.route}).",
                "",
            )
        )
    labels = Counter(view.markers[op] for _, _, _, op, phase in view.marks if phase not in FAULT_PHASES)
    if labels:
        more = " (counted up to the cap)" if len(view.marks) >= MAX_MARKS else ""
        out.append(
            ("Marked: " + ", ".join(f"{n:,} × {k}" for k, n in sorted(labels.items())) + more + ".", "")
        )
    faults = view.meta_json("faults", [])
    phases: Counter[str] = Counter()
    for (_, _, phase), c in view.counts.items():
        if phase in FAULT_PHASES:
            phases[phase] += int(c[0])
    if faults or phases:
        text = "Faults: " + (", ".join(str(f) for f in faults) if faults else "none injected")
        if phases:
            text += "; " + ", ".join(plural(n, f"{p} record") for p, n in sorted(phases.items()))
            crash = next((m for m in view.marks if m[4] == "crash"), None)
            if crash is not None:
                text += f" (crash in {crash[3]} by {crash[0]} at t={seconds(crash[2])})"
        out.append((text + ".", "bad" if phases else ""))
    return out


def _per_series(view: RunView) -> list[tuple[str, str]]:
    """One line per variant when the run has several, each with both denominators: the needed-fact checks
    (a fact still missing at a later probe is needed, and counted, again) and the distinct facts behind
    them, so "23 of 48" beside "30 of 30" says what each counts."""
    named = [(s, t) for s, t in view.tallies.items() if s]
    if len(named) < 2:
        return []
    out = []
    for s, t in sorted(named, key=lambda st: st[1].first_seq):
        text = (
            f"{s}: {t.hits:,} of {t.needed:,} needed facts present over {plural(t.probes, 'probe')} "
            f"({pct(t.hits, t.needed)}); distinct facts (per agent): {len(t.distinct_hits):,} of "
            f"{len(t.distinct):,}."
        )
        out.append((text, "bad" if t.hits < t.needed else "ok"))
    if any(t.needed != len(t.distinct) for _, t in named):
        out.append((
            "Needed facts count a fact at every probe that needs it (one still missing is needed again at "
            "the next), so compare variants by their distinct facts.", "",
        ))  # fmt: skip
    return out


def _stats(view: RunView) -> list[tuple[str, str]]:
    out = [
        (num(view.op_total), "operations"),
        (num(view.request_total), "model requests"),
        (num(len(view.agents)), "agents"),
        (seconds(view.t_max - view.t_min), "simulated time"),
    ]
    peak = max((r.exact for rs in view.requests.values() for r in rs), default=None)
    if peak is not None:
        out.append((num(peak), "peak request tokens"))
    named = sorted(
        ((s, t) for s, t in view.tallies.items() if s and t.needed), key=lambda st: st[1].first_seq
    )
    if len(named) > 1:  # one tile per variant: pooling faithful and fixed runs would mean neither
        for s, t in named:
            out.append((f"{t.hits:,}/{t.needed:,}", f"needed facts present at probes: {s}"))
    elif view.probe_total:
        out.append((f"{view.needed_hits:,}/{view.needed_total:,}", "needed facts present at probes"))
    return out


def context(view: RunView) -> dict[str, Any]:
    """The template context of *view*."""
    title, systems = _titles(view)
    order = {a: i for i, a in enumerate(view.agents)}
    per_agent: dict[str, list[Any]] = {}
    for (agent, _), reqs in view.requests.items():
        per_agent.setdefault(agent, []).extend(reqs)
    for reqs in per_agent.values():
        reqs.sort(key=lambda r: r.seq)
    keys = sorted(per_agent, key=lambda a: (-len(per_agent[a]), order[a]))
    timelines = []
    for agent in sorted(keys[: charts.MAX_TIMELINES], key=lambda a: order[a]):
        marks = [m for m in view.marks if m[0] == agent]
        timelines.append(
            charts.timeline(
                agent,
                per_agent[agent],
                marks,
                view.markers,
                view.tracked,
                series=lambda r: view.series(r) or r.route,
            )
        )
    undrawn = [
        (a, len(per_agent[a]), max(q.exact for q in per_agent[a]))
        for a in sorted(keys[charts.MAX_TIMELINES :], key=lambda a: order[a])
    ]
    kinds: dict[str, tuple[str, int]] = {}
    for t in timelines:
        for b in t.bands:
            colour, total = kinds.get(b.kind, (b.colour, 0))
            kinds[b.kind] = (colour, total + b.tokens)
    line_legend: dict[str, tuple[str, bool]] = {}
    for t in timelines:
        for ln in t.lines:
            line_legend[ln.label if ln.dashed else ln.label.rsplit(" ", 1)[0]] = (ln.colour, ln.dashed)
    counts = sorted(
        ((a, o, p, int(c[0]), c[1], c[2]) for (a, o, p), c in view.counts.items()),
        key=lambda r: (order.get(r[0], 0), r[1], r[2]),
    )
    return {
        "view": view,
        "version": view.meta.get("memsim_version", ""),
        "name": view.meta.get("scenario", "") or Path(view.path).stem,
        "title": title,
        "systems": systems,
        "stats": _stats(view),
        "findings": _findings(view),
        "timelines": timelines,
        "undrawn": undrawn,
        "kinds": sorted(kinds.items(), key=lambda kv: charts.kind_order(kv[0])),
        "line_legend": sorted(line_legend.items()),
        "unlabelled": charts.UNLABELLED,
        "lanes": lanes.lanes(view),
        "counts": counts,
        "meta_rows": _meta_rows(view),
        "caps": {
            "columns": charts.MAX_COLUMNS,
            "timelines": charts.MAX_TIMELINES,
            "probes": MAX_PROBES,
            "listed": MAX_LISTED_OPS,
            "notable": MAX_NOTABLE,
            "lanes": lanes.MAX_LANES,
            "fault_ticks": lanes.MAX_FAULT_TICKS,
            "lane_bins": LANE_BINS,
            "dropped_ids": DROPPED_IDS,
        },
        "plot": {
            "width": charts.WIDTH,
            "left": charts.PLOT_LEFT,
            "right": charts.WIDTH - charts.PLOT_RIGHT,
            "lane_left": lanes.LANE_LEFT,
            "lane_right": charts.WIDTH - lanes.LANE_RIGHT,
            "lane_h": lanes.LANE_H,
            "rug_h": charts.RUG_H,
        },
    }
