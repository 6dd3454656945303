"""Streaming metrics of one benchmark cell, relative recall, and the aggregate over seeds.

Per cell: request tokens (mean, p95, max; exact cl100k) and the design's own estimate (mean); requests
over the provider window; probe recall and recall relative to the oracle's on the same workload and
budget (a probe whose request is over the window scores 0: a provider refuses that request, so nothing
of it reaches the model; the as-built share is kept as ``recall_unenforced``, *recall if nothing
enforced the window*, issue 38); durable bytes, bytes written, write amplification (bytes written /
observation bytes), storage operations; liveness (in the calm tail every request fits the window).

The aggregate over seeds gives means with their spread (min and max across seeds) and labels sums as
sums (``over_window_sum``, ``requests_sum``).

With a provider selected (``--provider``, :mod:`sim.cache`) a cell also reports its prompt split three
ways (``cache_read_tokens``, ``cache_write_tokens``, ``uncached_tokens``: sums over its requests, which
add up to the sum of their exact tokens), the cache hit ratio (cache-read / prompt tokens) and the cost:
per request in input-token equivalents (mean) and dollars (mean, p95), and per run (``cost_usd_run``).
Without one, rows are exactly what they were before providers existed.
"""

from __future__ import annotations

import heapq
import json
import math
from array import array
from collections.abc import Iterator, Sequence
from dataclasses import asdict
from typing import Any

from sim.cache import ProviderCache
from sim.trace import RequestRecord
from sim.workload import Drawn, ModelRequest, StorageStats, WorkStep


def p95(values: Sequence[float]) -> float:
    """The 95th percentile (nearest rank): the value at rank ceil(0.95 n) of the sorted values, found as
    the smallest of the top n - rank + 1 (a heap of 5 % of them, not a sorted copy of a long series)."""
    n = len(values)
    if not n:
        return 0.0
    rank = min(n, math.ceil(0.95 * n))  # 1-based, ascending
    return float(heapq.nlargest(n - rank + 1, values)[-1])


#: A missing design estimate in a :class:`Series` column (token counts are never negative).
_NONE = -1


class Series:
    """The per-request series of one cell (``[step, exact_tokens, estimate]``, with a provider's cache
    also ``[cache_read, cache_write, uncached]``), kept as columns of machine integers: 8 bytes a number
    instead of a list and its int objects (about 200 bytes a request, 0.2 GB over a million-step cell;
    issue 42). Iterating yields each request's numbers as a list, ``None`` for a missing estimate, as the
    lists it replaces did; it pickles as its columns' bytes."""

    __slots__ = ("cols",)

    def __init__(self, width: int) -> None:
        self.cols = tuple(array("q") for _ in range(width))

    def append(self, values: Sequence[int | None]) -> None:
        for col, v in zip(self.cols, values, strict=True):
            col.append(_NONE if v is None else v)

    def column(self, k: int) -> array[int]:
        """Column *k* as stored (a missing estimate is -1)."""
        return self.cols[k]

    def __len__(self) -> int:
        return len(self.cols[0])

    def __iter__(self) -> Iterator[list[int | None]]:
        for values in zip(*self.cols, strict=True):
            yield [None if v == _NONE else v for v in values]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Series):
            return self.cols == other.cols
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Series({len(self)} requests, {len(self.cols)} columns)"


class Metrics:
    """Streaming metrics of one cell: nothing per request is kept but its two token numbers (and, with a
    provider's *cache*, its three-way split and its cost), in machine-integer columns (:class:`Series`)."""

    def __init__(self, budget: int, cache: ProviderCache | None = None) -> None:
        self.budget = budget
        self.cache = cache
        self.costs = array("d")
        self.series = Series(3 if cache is None else 6)
        self._no_split = () if cache is None else (None, None, None)  # a cache with no split to report
        self.estimates = 0  # requests that carry the design's own estimate
        self.estimate_sum = 0
        self.probes = 0
        self.hits = 0
        self.hits_unenforced = 0
        self.calm = 0
        self.calm_fit = 0
        self.obs_bytes = 0

    def __call__(self, step: WorkStep, req: ModelRequest, rec: RequestRecord) -> None:
        if self.cache is not None and self.cache.last is not None:
            c = self.cache.last
            self.series.append((step.index, rec.exact_tokens, rec.estimate, c.read, c.write, c.uncached))
            self.costs.append(c.cost_usd)
        else:
            self.series.append((step.index, rec.exact_tokens, rec.estimate, *self._no_split))
        if rec.estimate is not None:
            self.estimates += 1
            self.estimate_sum += rec.estimate
        self.obs_bytes += len(step.observation.encode())
        if step.probe:
            self.probes += 1
            hit = rec.has_fact(step.probe)
            self.hits_unenforced += hit
            # A request over the window delivers nothing (a provider refuses it): its probe scores 0.
            self.hits += hit and rec.exact_tokens <= self.budget
        if step.phase == "calm":
            self.calm += 1
            self.calm_fit += rec.exact_tokens <= self.budget

    def row(
        self, cell: dict[str, Any], drawn: Drawn, storage: StorageStats, seconds: float
    ) -> dict[str, Any]:
        """The result row of the cell described by *cell* (design, budget, seed, variant, knobs)."""
        exact = self.series.column(1)
        est_n = self.estimates
        amplification = round(storage.bytes_written / self.obs_bytes, 3) if self.obs_bytes else 0.0
        row: dict[str, Any] = {
            **cell,
            "steps": len(self.series),
            "requests": len(exact),
            "tokens_mean": round(sum(exact) / len(exact), 1) if exact else 0.0,
            "tokens_p95": p95(exact),
            "tokens_max": max(exact, default=0),
            "estimate_mean": round(self.estimate_sum / est_n, 1) if est_n else None,
            "over_window": sum(1 for x in exact if x > cell["budget"]),
            "probes": self.probes,
            "recall": round(self.hits / self.probes, 4) if self.probes else None,
            "recall_unenforced": round(self.hits_unenforced / self.probes, 4) if self.probes else None,
            "durable_bytes": storage.durable_bytes,
            "bytes_written": storage.bytes_written,
            "write_amplification": amplification,
            "storage_ops": storage.ops,
            "calm_requests": self.calm,
            "live": self.calm > 0 and self.calm_fit == self.calm,
            "seconds": round(seconds, 3),
            "drawn": json.dumps(asdict(drawn), sort_keys=True),
            "series": self.series,
        }
        if self.cache is not None:
            row.update(self._cache_columns(sum(exact)))
        return row

    def _cache_columns(self, prompt: int) -> dict[str, Any]:
        assert self.cache is not None
        c, costs = self.cache, self.costs
        return {
            "provider": f"{c.config.name}:{c.config.model}",
            "cache_read_tokens": c.read,
            "cache_write_tokens": c.write,
            "uncached_tokens": c.uncached,
            "cache_hit_ratio": round(c.read / prompt, 4) if prompt else 0.0,
            "cost_tokens_mean": round(c.cost_tokens / len(costs), 1) if costs else 0.0,
            "cost_usd_mean": round(sum(costs) / len(costs), 6) if costs else 0.0,
            "cost_usd_p95": round(p95(costs), 6),
            "cost_usd_run": round(sum(costs), 4),
        }


def add_relative_recall(rows: list[dict[str, Any]]) -> None:
    """Set ``recall_vs_oracle`` on every row that has an oracle row for the same budget and seed."""
    oracle = {(r["budget"], r["seed"]): r["recall"] for r in rows if r["design"] == "oracle"}
    for r in rows:
        o = oracle.get((r["budget"], r["seed"]))
        r["recall_vs_oracle"] = round(r["recall"] / o, 4) if (o and r["recall"] is not None) else None


#: Metrics averaged over seeds (with min and max), and those summed.
MEANS = ("tokens_mean", "tokens_p95", "estimate_mean", "recall", "recall_unenforced", "recall_vs_oracle",
         "write_amplification", "storage_ops")  # fmt: skip
SUMS = ("over_window", "requests")
#: The means kept to three digits (the others to one).
THREE_DIGITS = ("recall", "recall_unenforced", "recall_vs_oracle", "write_amplification")
#: With a provider: the cache metrics averaged over seeds (with the number of digits kept).
CACHE_MEANS = {"cache_hit_ratio": 4, "cost_tokens_mean": 1, "cost_usd_mean": 6, "cost_usd_p95": 6,
               "cost_usd_run": 4}  # fmt: skip


def aggregate(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per (design, budget): means over seeds with min and max, sums labelled ``_sum``, liveness."""
    groups: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault((r["design"], r["budget"]), []).append(r)

    def stats(vals: list[Any], digits: int) -> tuple[float | None, float | None, float | None]:
        v = [x for x in vals if x is not None]
        if not v:
            return None, None, None
        return round(sum(v) / len(v), digits), round(min(v), digits), round(max(v), digits)

    out = []
    for (d, b), rs in groups.items():
        row: dict[str, Any] = {"design": d, "budget": b, "seeds": len(rs)}
        for m in MEANS:
            digits = 3 if m in THREE_DIGITS else 1
            mean, lo, hi = stats([r.get(m) for r in rs], digits)  # a row from before issue 38: no unenforced
            row[m], row[f"{m}_min"], row[f"{m}_max"] = mean, lo, hi
        row["tokens_max"] = max(r["tokens_max"] for r in rs)
        for m in SUMS:
            row[f"{m}_sum"] = sum(r[m] for r in rs)
        row["live"] = all(r["live"] for r in rs)
        if "provider" in rs[0]:
            row["provider"] = rs[0]["provider"]
            for m, digits in CACHE_MEANS.items():
                mean, lo, hi = stats([r[m] for r in rs], digits)
                row[m], row[f"{m}_min"], row[f"{m}_max"] = mean, lo, hi
        out.append(row)
    return out
