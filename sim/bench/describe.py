"""What workload a sweep ran, in words, for every page and console summary that quotes its figures.

The demo and ``memsim bench`` run different workloads (the demo: 60 load steps on five seeds; the bench:
120, 160 or 200 load steps drawn per seed, three seeds), so a recall quoted without its workload cannot
be compared. Every seeded workload ends in a *calm tail* (``sim.workload.draw``: a tenth of the load
steps, at least 10, of short observations with no facts or probes) that checks each design stays live
once the pressure drops: a cell's steps are its load steps plus that tail.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any


def span(values: Iterable[int]) -> str:
    """``70`` for one value, ``132–220`` for several (a range, never a fraction)."""
    vs = sorted(set(values))
    if not vs:
        return "—"
    return f"{vs[0]:,}" if len(vs) == 1 else f"{vs[0]:,}–{vs[-1]:,}"


def _drawn(row: dict[str, Any]) -> dict[str, Any]:
    d = row.get("drawn")
    if isinstance(d, str):
        try:
            d = json.loads(d)
        except ValueError:
            return {}
    return d if isinstance(d, dict) else {}


def steps_text(rows: list[dict[str, Any]]) -> str:
    """``60 load steps + a 10-step calm tail (70 steps per cell)``, or the cell steps alone."""
    drawn = [_drawn(r) for r in rows]
    load = [int(d["steps"]) for d in drawn if "steps" in d]
    calm = [int(d["calm_steps"]) for d in drawn if "calm_steps" in d]
    total = [int(r["steps"]) for r in rows if r.get("steps") is not None]
    if load and calm:
        varies = " (drawn per seed)" if len(set(load)) > 1 else ""
        return (
            f"{span(load)} load steps{varies} + a {span(calm)}-step calm tail "
            f"({span(a + b for a, b in zip(load, calm))} steps per cell)"
        )
    return f"{span(total)} steps per cell" if total else ""


def describe(rows: list[dict[str, Any]], workload: str | None = None) -> str:
    """The sweep's workload in one phrase: the seeded synthetic one (its seeds and steps) or the file."""
    seeds = sorted({int(r["seed"]) for r in rows if r.get("seed") is not None})
    steps = steps_text(rows)
    if workload:
        return f"workload file {workload}" + (f": {steps}" if steps else "")
    which = f"seed {seeds[0]}" if len(seeds) == 1 else f"seeds {span(seeds)}" if seeds else ""
    return "seeded synthetic workload" + (f" ({which})" if which else "") + (f": {steps}" if steps else "")


#: What the calm tail is, for a page's note.
CALM_TAIL = (
    "the calm tail: short observations with no facts or probes after the load, a tenth of the load steps "
    "(at least 10), to check every design stays live once the pressure drops"
)


def summary_lines(agg: list[dict[str, Any]]) -> list[str]:
    """Per window: recall of each design (the oracle last), overflow and liveness; then a caution when
    the seeds are too few to conclude."""
    from sim.bench.stats import MIN_SEEDS

    out = []
    for b in sorted({int(a["budget"]) for a in agg}):
        at = sorted(
            (a for a in agg if int(a["budget"]) == b), key=lambda a: (a["design"] == "oracle", a["design"])
        )
        recall = ", ".join(f"{a['design']} {a['recall']:.3f}" for a in at if a.get("recall") is not None)
        line = f"window {b:,}: recall {recall}"
        over = [f"{a['design']} {a['over_window_sum']:,}" for a in at if a.get("over_window_sum")]
        if over:
            line += f"; requests over the window: {', '.join(over)}"
        dead = [str(a["design"]) for a in at if not a.get("live")]
        if dead:
            line += f"; not live: {', '.join(dead)}"
        cost = [
            f"{a['design']} ${a['cost_usd_run']:,.2f} (cache hit {a.get('cache_hit_ratio') or 0:.3f})"
            for a in at
            if a.get("cost_usd_run") is not None and a["design"] != "oracle"
        ]
        if cost:
            line += f"; per run: {', '.join(cost)}"
        out.append(line)
    seeds = max((int(a.get("seeds") or 0) for a in agg), default=0)
    if seeds < MIN_SEEDS:
        out.append(
            f"{seeds} seed{'' if seeds == 1 else 's'}: too few to conclude which design recalls more "
            "(the page says so per cell)"
        )
    else:
        out.append("95% bootstrap intervals over seeds, and which differences the seeds resolve: on the page")
    return out
