"""How far the seeds pin a benchmark figure down: bootstrap intervals over seeds, and paired differences.

The seed is the unit of replication: each seed draws its own workload (observation sizes, facts per step,
probe frequency, lossiness, skew), so a design's probes within one seed are not independent draws, and a
Wilson interval over the pooled probes would be too narrow (on the demo's sweep one design recalled 0 of one
seed's probes and 54% of the other's). So the interval is a percentile bootstrap over the seeds' cell
values: :data:`RESAMPLES` resamples of the seeds with replacement, each resample's mean, the central
:data:`LEVEL` of those means. It is deterministic: the resampling stream is seeded from the figure's
name, its design and window and the sweep's seeds (``sha256``), so the same sweep gives the same page.

A percentile bootstrap undercovers when there are few seeds (two seeds give at most three distinct
means), so below :data:`MIN_SEEDS` seeds no interval is claimed: :attr:`Interval.enough` is False and the
pages say the seeds are too few to conclude. Two designs run on the same seeds' workloads, so a
difference between them is bootstrapped paired, seed by seed (:func:`paired`); it is *resolved* when its
interval excludes 0.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

#: Seeds below which no interval is claimed (the percentile bootstrap's coverage is far below LEVEL).
MIN_SEEDS = 5
#: Bootstrap resamples per interval.
RESAMPLES = 2000
#: The interval's nominal coverage.
LEVEL = 0.95
METHOD = f"{LEVEL:.0%} percentile bootstrap over seeds ({RESAMPLES:,} resamples, seeded from the sweep)"


@dataclass(frozen=True)
class Interval:
    """A mean over *n* seeds and its bootstrap interval [lo, hi] (lo = hi = the mean when n < 2)."""

    mean: float
    lo: float
    hi: float
    n: int

    @property
    def enough(self) -> bool:
        """Whether there are seeds enough to read [lo, hi] as a confidence interval."""
        return self.n >= MIN_SEEDS

    @property
    def resolved(self) -> bool:
        """For a difference: the seeds are enough and the interval excludes 0."""
        return self.enough and (self.lo > 0 or self.hi < 0)


def _stream(key: str) -> random.Random:
    return random.Random(int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big"))


def bootstrap(values: Sequence[float], key: str) -> Interval | None:
    """The mean of *values* (one per seed) and its bootstrap interval; None when there are none.

    *key* names the figure (e.g. ``"recall|DESIGN|8000|1,2,3,4,5"``): it seeds the resampling stream.
    """
    vals = [float(v) for v in values]
    n = len(vals)
    if n == 0:
        return None
    mean = sum(vals) / n
    if n == 1 or min(vals) == max(vals):
        return Interval(mean, mean, mean, n)
    rng = _stream(key)
    means = sorted(sum(rng.choices(vals, k=n)) / n for _ in range(RESAMPLES))
    tail = (1 - LEVEL) / 2
    lo = means[int(tail * RESAMPLES)]
    hi = means[min(RESAMPLES - 1, int((1 - tail) * RESAMPLES))]
    return Interval(mean, lo, hi, n)


def paired(a: Mapping[int, float], b: Mapping[int, float], key: str) -> Interval | None:
    """The mean of ``a[seed] - b[seed]`` over the seeds both have, and its bootstrap interval."""
    seeds = sorted(set(a) & set(b))
    return bootstrap([a[s] - b[s] for s in seeds], key)


def key(metric: str, design: str, budget: int, seeds: Sequence[int]) -> str:
    """The resampling key of one figure of one sweep."""
    return f"{metric}|{design}|{budget}|{','.join(str(s) for s in sorted(seeds))}"
