"""Fact sets as sorted integer intervals, read straight from a trace's range-encoded ``facts`` column.

A request that carries a whole folded log holds thousands of fact ids, written as ranges
(``"FACT-0001..FACT-4000"``, :func:`sim.trace.encode_facts`). The report needs sizes, membership and
"what left since the previous request" for every request of a long run; expanding each set into strings
(:func:`sim.trace.decode_facts`) would cost O(facts) per request, so this works on the intervals:
O(ranges) per request. ``FactSet.ids()`` equals ``decode_facts`` of the same text (tested).
"""

from __future__ import annotations

import bisect
import json
import re
from dataclasses import dataclass

_CANONICAL = re.compile(r"FACT-(\d{4,})")


def _number(item: str) -> int | None:
    """The number of a canonical fact id (``FACT-0017``, ``FACT-12345``), else None."""
    m = _CANONICAL.fullmatch(item)
    if m is None:
        return None
    n = int(m.group(1))
    return n if item == f"FACT-{n:04d}" else None


@dataclass(frozen=True)
class FactSet:
    """Disjoint, sorted, non-adjacent inclusive intervals of fact numbers, plus non-canonical ids."""

    lo: tuple[int, ...] = ()
    hi: tuple[int, ...] = ()
    other: frozenset[str] = frozenset()

    @classmethod
    def parse(cls, text: str) -> FactSet:
        """The set of an encoded ``facts`` column (``"[]"``, ``'["FACT-0001..FACT-0040", "FACT-0042"]'``)."""
        if text in ("[]", ""):
            return EMPTY
        spans: list[tuple[int, int]] = []
        other: set[str] = set()
        for item in json.loads(text):
            a, sep, b = item.partition("..")
            if sep:
                spans.append((int(a[5:]), int(b[5:])))
                continue
            n = _number(item)
            if n is None:
                other.add(item)
            else:
                spans.append((n, n))
        spans.sort()
        lo: list[int] = []
        hi: list[int] = []
        for a, b in spans:
            if lo and a <= hi[-1] + 1:
                hi[-1] = max(hi[-1], b)
            else:
                lo.append(a)
                hi.append(b)
        return cls(tuple(lo), tuple(hi), frozenset(other))

    def __len__(self) -> int:
        return sum(b - a + 1 for a, b in zip(self.lo, self.hi)) + len(self.other)

    def __contains__(self, fact: object) -> bool:
        if not isinstance(fact, str):
            return False
        n = _number(fact)
        if n is None:
            return fact in self.other
        i = bisect.bisect_right(self.lo, n) - 1
        return i >= 0 and n <= self.hi[i]

    def mask(self, numbered: list[tuple[int, int]], named: dict[str, int]) -> int:
        """The OR of the bits of the facts present: *numbered* ``(number, bit)`` pairs for canonical ids
        (parsed once by the caller with :func:`numbered`), *named* id → bit for the others."""
        out = 0
        lo, hi = self.lo, self.hi
        for n, bit in numbered:
            i = bisect.bisect_right(lo, n) - 1
            if i >= 0 and n <= hi[i]:
                out |= bit
        for f, bit in named.items():
            if f in self.other:
                out |= bit
        return out

    def overlap(self, other: FactSet) -> int:
        """How many facts are in both sets (a linear merge of the two interval lists)."""
        n = len(self.other & other.other)
        i = j = 0
        while i < len(self.lo) and j < len(other.lo):
            a = max(self.lo[i], other.lo[j])
            b = min(self.hi[i], other.hi[j])
            if a <= b:
                n += b - a + 1
            if self.hi[i] < other.hi[j]:
                i += 1
            else:
                j += 1
        return n

    def minus(self, other: FactSet, limit: int) -> list[str]:
        """Up to *limit* fact ids of this set that are not in *other*, in id order."""
        out: list[str] = []
        for a, b in zip(self.lo, self.hi):
            n = a
            while n <= b and len(out) < limit:
                j = bisect.bisect_right(other.lo, n) - 1
                if j >= 0 and n <= other.hi[j]:
                    n = other.hi[j] + 1  # skip the part of the interval the other set covers
                    continue
                out.append(f"FACT-{n:04d}")
                n += 1
        out.extend(sorted(self.other - other.other)[: max(0, limit - len(out))])
        return out

    def ids(self) -> frozenset[str]:
        """Every fact id (expanded; for small sets and tests)."""
        return frozenset(f"FACT-{n:04d}" for a, b in zip(self.lo, self.hi) for n in range(a, b + 1)) | (
            self.other
        )


def numbered(bits: dict[str, int]) -> tuple[list[tuple[int, int]], dict[str, int]]:
    """Fact id → bit split into canonical ``(number, bit)`` pairs and the other ids (:meth:`FactSet.mask`)."""
    nums: list[tuple[int, int]] = []
    named: dict[str, int] = {}
    for f, bit in bits.items():
        n = _number(f)
        if n is None:
            named[f] = bit
        else:
            nums.append((n, bit))
    return nums, named


EMPTY = FactSet()
