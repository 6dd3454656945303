"""A bench cell's per-request series in machine-integer columns (issue 42): what it holds per request,
what it yields, and the nearest-rank p95 taken without a sorted copy."""

from __future__ import annotations

import math
import pickle
import tracemalloc
from types import SimpleNamespace
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from sim.bench.metrics import Metrics, Series, p95


def _step(i: int) -> Any:
    return SimpleNamespace(index=i, observation="x", probe=None, phase="load")


def _rec(tokens: int, estimate: int | None) -> Any:
    return SimpleNamespace(exact_tokens=tokens, estimate=estimate, has_fact=lambda _f: False)


def test_a_request_costs_the_series_a_few_machine_words() -> None:
    """Before issue 42 each request kept a list and its int objects (about 150 bytes); a million-step
    cell held 0.15 GB of them. Now a request is three 8-byte numbers (plus the array's spare room)."""
    n = 20_000
    m = Metrics(budget=32_000)
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        for i in range(n):
            m(_step(100_000 + i), None, _rec(70_000 + i, 90_000 + i))  # type: ignore[arg-type]
        held = tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()
    assert held / n < 40, held / n


@given(
    st.lists(
        st.tuples(st.integers(0, 2**40), st.integers(0, 2**40), st.none() | st.integers(0, 2**40)),
        max_size=30,
    )
)
def test_the_series_yields_the_lists_it_replaces(rows: list[tuple[int, int, int | None]]) -> None:
    s = Series(3)
    for r in rows:
        s.append(r)
    assert len(s) == len(rows)
    assert list(s) == [list(r) for r in rows]
    back = pickle.loads(pickle.dumps(s))
    assert back == s and list(back) == list(s)


@given(st.lists(st.integers(-(2**40), 2**40) | st.floats(allow_nan=False), max_size=200))
def test_p95_is_the_nearest_rank_of_the_sorted_values(values: list[float]) -> None:
    s = sorted(values)
    want = float(s[min(len(s) - 1, math.ceil(0.95 * len(s)) - 1)]) if s else 0.0
    assert p95(values) == want
