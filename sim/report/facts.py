"""Fact sets as the report reads them: :class:`sim.tracefacts.FactSet` (sorted integer intervals).

A request that carries a whole folded log holds thousands of fact ids. The report needs sizes, membership
and "what left since the previous request" for every request of a long run; expanding each set into
strings (:func:`sim.trace.decode_facts`) would cost O(facts) per request, so it reads the intervals that
:func:`sim.trace.iter_requests` resolves (``RequestRecord.fact_set``): O(intervals) per request, or less.
``FactSet.ids()`` equals ``decode_facts`` of the same set's encoded list (tested).
"""

from __future__ import annotations

from sim.tracefacts import EMPTY, FactSet, fact_number

__all__ = ["EMPTY", "FactSet", "numbered"]


def numbered(bits: dict[str, int]) -> tuple[list[tuple[int, int]], dict[str, int]]:
    """Fact id -> bit, split into canonical ``(number, bit)`` pairs and the other ids (``FactSet.mask``)."""
    nums: list[tuple[int, int]] = []
    named: dict[str, int] = {}
    for f, bit in bits.items():
        n = fact_number(f)
        if n < 0:
            named[f] = bit
        else:
            nums.append((n, bit))
    return nums, named
