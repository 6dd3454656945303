"""The console tables of a sweep's aggregate: means over seeds with their spread, sums labelled as sums.

Two narrow tables (what reaches the model; what is recalled, written and kept) rather than one wide one,
so no cell is cut at a terminal's width: numbers carry thousands separators and as many digits as they
mean, and a mean's min–max over seeds sits under it. Recall vs oracle is left out when the oracle recalled
every probe (it would repeat recall).
"""

from __future__ import annotations

from typing import Any

#: (key, heading, digits) per table; "Σ" marks a sum over seeds.
TOKENS = (
    ("tokens_mean", "tokens mean", 0), ("tokens_p95", "p95", 0), ("tokens_max", "max", 0),
    ("estimate_mean", "design's estimate", 0), ("over_window_sum", "Σ over window", 0),
    ("requests_sum", "Σ requests", 0),
)  # fmt: skip
#: With ``--provider``: the prompt cache's share of the prompt and the price (sim.cache).
COST = (
    ("cache_hit_ratio", "cache hit ratio", 3), ("cost_usd_mean", "$ / request", 4),
    ("cost_usd_p95", "$ / request p95", 4), ("cost_usd_run", "$ / run", 2),
)  # fmt: skip
KEPT = (
    ("recall", "recall", 3), ("recall_unenforced", "recall if nothing enforced the window", 3),
    ("recall_vs_oracle", "recall vs oracle", 3),
    ("write_amplification", "write ampl.", 3), ("storage_ops", "storage ops", 0), ("live", "live", 0),
)  # fmt: skip


def _num(v: Any, digits: int) -> str:
    if isinstance(v, bool):
        return "yes" if v else "NO"
    if isinstance(v, int | float):
        return f"{v:,.{digits}f}"
    return "-"


def _fmt(row: dict[str, Any], key: str, digits: int) -> str:
    v = row.get(key)
    if v is None:
        return "-"
    lo, hi = row.get(f"{key}_min"), row.get(f"{key}_max")
    if lo is not None and hi is not None and lo != hi:
        return f"{_num(v, digits)}\n[{_num(lo, digits)}–{_num(hi, digits)}]"
    return _num(v, digits)


def oracle_perfect(agg: list[dict[str, Any]]) -> bool:
    """Whether every oracle cell recalled every probe (then recall vs oracle equals recall)."""
    oracle = [a for a in agg if a["design"] == "oracle"]
    return bool(oracle) and all(a.get("recall_min", a.get("recall")) == 1 for a in oracle)


def _table(agg: list[dict[str, Any]], title: str, cols: tuple[tuple[str, str, int], ...]) -> Any:
    from rich.markup import escape
    from rich.table import Table

    t = Table(title=escape(title), title_justify="left")
    t.add_column("design", overflow="fold")
    t.add_column("window", justify="right", overflow="fold")
    for _, heading, _ in cols:
        t.add_column(heading, justify="right", overflow="fold")  # a narrow terminal wraps, never cuts
    order = sorted(agg, key=lambda r: (r["budget"], r["design"] == "oracle", r["design"]))
    for i, r in enumerate(order):
        end = i + 1 == len(order) or order[i + 1]["budget"] != r["budget"]
        t.add_row(r["design"], f"{r['budget']:,}", *(_fmt(r, key, d) for key, _, d in cols), end_section=end)
    from sim.registry import reference_note

    t.caption = escape(reference_note(str(r["design"]) for r in agg)) or None
    return t


def render(agg: list[dict[str, Any]], workload: str | None = None) -> Any:
    """Rich renderables of the aggregate: two tables, with ``[min–max]`` across seeds where they differ.

    On a user's *workload* file the seeds are runs of that one file: the titles say so, and that only the
    designs' own randomness (seeded per run) can differ between them."""
    from rich.console import Group

    seeds = max((int(a.get("seeds") or 0) for a in agg), default=0)
    kept = tuple(c for c in KEPT if not (c[0] == "recall_vs_oracle" and oracle_perfect(agg)))
    if workload is None:
        head, note = "context-budget benchmark", f"means over {seeds} seeds [min–max]; Σ = sum over seeds"
    elif seeds > 1:
        head = f"context-budget benchmark on {workload}"
        note = (
            f"the same file in each of {seeds} runs, only the designs' own randomness seeded per run; "
            "means over runs [min–max]; Σ = sum over runs"
        )
    else:
        head, note = f"context-budget benchmark on {workload}", "one run per window"
    tables = [
        _table(agg, f"{head} ({note}; exact cl100k): what reaches the model", TOKENS),
        _table(agg, f"{head} ({note}; exact cl100k): what is recalled, written and kept", kept),
    ]
    from sim.bench.stats import MIN_SEEDS

    if workload is None and seeds < MIN_SEEDS:
        tables.append(
            f"{seeds} seed{'s' if seeds != 1 else ''}: too few to conclude which design recalls more "
            f"(--seeds {MIN_SEEDS} or more gives bootstrap intervals on the report page, --html)."
        )
    if agg and "provider" in agg[0]:
        tables.append(_table(agg, f"{head} ({note}): what it costs at {agg[0]['provider']} list price", COST))
    if len(kept) < len(KEPT):
        tables.append("recall vs oracle is left out: the oracle recalled every probe, so it equals recall.")
    return Group(*tables)
