"""The facts column's list encoding as first written (a regex per id, a walk per run): the specification
of the bytes ``sim.trace.encode_facts`` must produce. Used by ``test_trace_facts.py`` and, as the encoder
it replaced, by ``benchmarks/bench_core.py``."""

from __future__ import annotations

import json
import re

_NUM = re.compile(r"FACT-(\d{4,})")


def reference_encode_facts(ids: set[str] | frozenset[str]) -> str:
    """The encoding as first written (a regex per id, a walk per run): the specification of the bytes."""
    nums: list[int] = []
    other: list[str] = []
    for f in ids:
        m = _NUM.fullmatch(f)
        if m and f == f"FACT-{int(m.group(1)):04d}":
            nums.append(int(m.group(1)))
        else:
            other.append(f)
    items: list[str] = []
    nums.sort()
    i = 0
    while i < len(nums):
        j = i
        while j + 1 < len(nums) and nums[j + 1] == nums[j] + 1:
            j += 1
        if j - i >= 2:
            items.append(f"FACT-{nums[i]:04d}..FACT-{nums[j]:04d}")
        else:
            items.extend(f"FACT-{n:04d}" for n in nums[i : j + 1])
        i = j + 1
    return json.dumps(items + sorted(other), ensure_ascii=False, sort_keys=True, default=str)
