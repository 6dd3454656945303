"""What the index says per design beyond its verdict counts: the failure modes it has (each claim's own
statement, from the claims registry's rows in the ledger, never typed again), how many of them were
reproduced on upstream's design, and what a run costs and how much of its prompt the cache serves at the
headline window (when the benchmark priced its requests with a provider).

:func:`enrich` adds these to :func:`sim.report.index.headlines`' rows.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any


def first_sentence(statement: str) -> str:
    """A claim statement's first sentence (its failure mode; the property that follows is on the claims
    page): up to the first full stop followed by a space and a capital, or ``Property:``."""
    text = " ".join(statement.split()).split(" Property:")[0]
    m = re.search(r"[.!?](?=\s+[A-Z(])", text)
    return text[: m.end()] if m else text


def headline(statement: str, shortest: int = 24) -> str:
    """A statement's lead: its first sentence up to the first colon outside parentheses (the failure mode
    without its mechanism), or the whole first sentence when that lead would be under *shortest*
    characters."""
    text = first_sentence(statement)
    depth = 0
    for i, ch in enumerate(text):
        depth += (ch in "([") - (ch in ")]")
        if ch == ":" and depth == 0 and text[i + 1 : i + 2] == " " and i >= shortest:
            return text[:i]
    return text


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def enrich(found: list[Any], claims: dict[str, Any] | None, bench_rows: list[dict[str, Any]] | None,
           window: int | None) -> list[Any]:  # fmt: skip
    """*found* (``Headline`` rows) with each design's failure modes, reproduced count and cost."""
    from sim.ledger import has_upstream, is_reference

    rows = [r for r in (claims or {}).get("claims") or [] if isinstance(r, dict)]
    cells = [r for r in bench_rows or [] if window is not None and int(r["budget"]) == window]
    out = []
    for h in found:
        mine = [r for r in rows if r.get("system") == h.design]
        modes = tuple(
            (str(r["claim"]), str(r.get("statement") or ""), r.get("faithful_ok") is True,
             bool(r.get("counterfactual")))
            for r in mine
        )  # fmt: skip
        at = [r for r in cells if r["design"] == h.design]
        priced = [r for r in at if r.get("provider")]
        out.append(
            replace(
                h,
                modes=modes,
                reproduced=sum(ok and not cf for _, _, ok, cf in modes),
                upstream=has_upstream(h.design),
                reference=is_reference(h.design),
                cost_run=_mean(
                    [float(r["cost_usd_run"]) for r in priced if r.get("cost_usd_run") is not None]
                ),
                hit_ratio=_mean(
                    [float(r["cache_hit_ratio"]) for r in priced if r.get("cache_hit_ratio") is not None]
                ),
                provider=str(priced[0]["provider"]) if priced else "",
            )
        )
    return out


def reproduced_tile(found: list[Any]) -> tuple[str, str, str] | None:
    """The index's first tile: failure modes reproduced, worded as a finding (not as "all fine")."""
    n = sum(h.reproduced for h in found)
    total = sum(len(h.modes) for h in found)
    if not total:
        return None
    where = "upstream's designs" if all(h.upstream for h in found if h.modes) else "the designs"
    return (f"{n}", f"failure modes reproduced on {where} (of {total} claimed; each fix checked too)", "")
