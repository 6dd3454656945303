"""How far a conversation benchmark's recall is pinned down: bootstrap intervals resampled by instance.

Questions of one conversation are not independent draws: LoCoMo asks about 200 questions of each of
its 10 conversations, and a design that loses one conversation's early sessions loses many of its
questions together. So the interval resamples **instances** (conversations; a LongMemEval instance is
one question, where this is the same as resampling questions), as the fact-token benchmark resamples
seeds (:mod:`sim.bench.stats`): :data:`~sim.bench.stats.RESAMPLES` resamples of the instances with
replacement, each resample's recall the pooled mean over its questions (sum of the questions' recalls
over their count, so an instance weighs by its scored questions, as the mean itself does), the central
:data:`~sim.bench.stats.LEVEL` of those. On LoCoMo's real file (``locomo10.json``, sha256
``79fa87e9...``) one seed design's as-built turn recall at 8k, 0.436, is [0.387, 0.501] resampled by
conversation against [0.413, 0.460] resampled by question; with the window enforced it is 0.398
[0.292, 0.491] (issue 38).

Deterministic: the resampling stream is seeded (``sha256``) from the instance ids of the figure, so the
same file gives the same page, and every design at every window is resampled with the same draws of
the same instances (a difference between two designs is then read on common draws). Below
:data:`~sim.bench.stats.MIN_SEEDS` instances no interval is claimed (:attr:`Interval.enough` is False,
and the console and page say *too few to conclude*), the fact-token benchmark's rule over seeds.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterable
from functools import lru_cache

from sim.bench.stats import LEVEL, MIN_SEEDS, RESAMPLES, Interval

METHOD = (
    f"{LEVEL:.0%} percentile bootstrap over instances (conversations), {RESAMPLES:,} resamples seeded from "
    f"the instance ids; none claimed below {MIN_SEEDS} instances"
)


@lru_cache(maxsize=16)
def _draws(ids: tuple[str, ...]) -> tuple[tuple[int, ...], ...]:
    """:data:`RESAMPLES` resamples (index tuples) of the *ids*, from a stream seeded by them."""
    digest = hashlib.sha256(("conversations|" + "\x1f".join(ids)).encode()).digest()
    rng = random.Random(int.from_bytes(digest[:8], "big"))
    n = len(ids)
    population = range(n)
    return tuple(tuple(rng.choices(population, k=n)) for _ in range(RESAMPLES))


def by_instance(values: Iterable[tuple[str, float]]) -> Interval | None:
    """The mean of the question values and its bootstrap interval over their instances; *values* are
    ``(instance_id, value)`` per scored question. None when there are none. ``Interval.n`` counts
    instances."""
    sums: dict[str, list[float]] = {}
    for inst, v in values:
        acc = sums.setdefault(inst, [0.0, 0.0])
        acc[0] += float(v)
        acc[1] += 1.0
    if not sums:
        return None
    ids = tuple(sums)
    s = [sums[i][0] for i in ids]
    c = [sums[i][1] for i in ids]
    mean = sum(s) / sum(c)
    n = len(ids)
    if n == 1 or len({si / ci for si, ci in zip(s, c, strict=True)}) == 1:
        return Interval(mean, mean, mean, n)
    means = sorted(sum(map(s.__getitem__, idx)) / sum(map(c.__getitem__, idx)) for idx in _draws(ids))
    tail = (1 - LEVEL) / 2
    lo = means[int(tail * RESAMPLES)]
    hi = means[min(RESAMPLES - 1, int((1 - tail) * RESAMPLES))]
    return Interval(mean, lo, hi, n)
