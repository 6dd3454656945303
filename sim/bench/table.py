"""The console table of a sweep's aggregate: means over seeds with their spread, sums labelled as sums."""

from __future__ import annotations

from typing import Any


def _fmt(row: dict[str, Any], key: str) -> str:
    v = row.get(key)
    if v is None:
        return "-"
    lo, hi = row.get(f"{key}_min"), row.get(f"{key}_max")
    if lo is not None and hi is not None and lo != hi:
        return f"{v} [{lo}–{hi}]"
    return str(v)


def render(agg: list[dict[str, Any]], workload: str | None = None) -> Any:
    """A rich table of the aggregate (``[min–max]`` across seeds where they differ). On a user's
    *workload* file the seeds are runs of that one file: the table says so, and that only the designs'
    own randomness (seeded per run) can differ between them."""
    from rich.table import Table

    if workload is None:
        title = "context-budget benchmark (means over seeds [min–max]; Σ = sum over seeds; exact cl100k)"
    elif max((r.get("seeds", 1) for r in agg), default=1) > 1:
        title = (
            f"context-budget benchmark on {workload} (the same file each run, only the designs' own "
            "randomness seeded per run; means over runs [min–max]; Σ = sum over runs; exact cl100k)"
        )
    else:
        title = f"context-budget benchmark on {workload} (one run per window; exact cl100k)"
    t = Table(title=title)
    cols = (
        ("design", "design"), ("budget", "budget"), ("seeds", "seeds" if workload is None else "runs"),
        ("tokens_mean", "tokens mean"),
        ("tokens_p95", "tokens p95"), ("tokens_max", "tokens max"), ("estimate_mean", "estimate mean"),
        ("over_window_sum", "Σ over window"), ("requests_sum", "Σ requests"), ("recall", "recall"),
        ("recall_vs_oracle", "recall vs oracle"), ("write_amplification", "write ampl."),
        ("storage_ops", "storage ops"), ("live", "live"),
    )  # fmt: skip
    for key, title in cols:
        t.add_column(title, justify="left" if key == "design" else "right")
    for r in sorted(agg, key=lambda r: (r["budget"], r["design"])):
        t.add_row(*(_fmt(r, key) for key, _ in cols))
    return t
