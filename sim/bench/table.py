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


def render(agg: list[dict[str, Any]]) -> Any:
    """A rich table of the aggregate (``[min–max]`` across seeds where they differ)."""
    from rich.table import Table

    t = Table(title="context-budget benchmark (means over seeds [min–max]; Σ = sum over seeds; exact cl100k)")
    cols: tuple[tuple[str, str], ...] = (
        ("design", "design"), ("budget", "budget"), ("seeds", "seeds"), ("tokens_mean", "tokens mean"),
        ("tokens_p95", "tokens p95"), ("tokens_max", "tokens max"), ("estimate_mean", "estimate mean"),
        ("over_window_sum", "Σ over window"), ("requests_sum", "Σ requests"), ("recall", "recall"),
        ("recall_vs_oracle", "recall vs oracle"), ("write_amplification", "write ampl."),
        ("storage_ops", "storage ops"), ("live", "live"),
    )  # fmt: skip
    if agg and "provider" in agg[0]:
        t.title = f"{t.title}; cost at {agg[0]['provider']} list price"
        cols = (
            *cols[:-1], ("cache_hit_ratio", "cache hit ratio"), ("cost_usd_mean", "$ / request"),
            ("cost_usd_p95", "$ / request p95"), ("cost_usd_run", "$ / run"), cols[-1],
        )  # fmt: skip
    for key, title in cols:
        t.add_column(title, justify="left" if key == "design" else "right")
    for r in sorted(agg, key=lambda r: (r["budget"], r["design"])):
        t.add_row(*(_fmt(r, key) for key, _ in cols))
    return t
