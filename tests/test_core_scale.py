"""The core at scale: fact ids of any width, byte-bounded text caches, and a streamed run's memory.

Long runs number more than 9,999 facts, keep megabyte prompts in flight and record requests carrying
thousands of fact ids; these tests pin what must not change when they do: every id is seen, every count
is the uncached count, a cache never holds more than its byte budget, and a streamed trace holds nothing
per record. The trace's ``facts`` column (the full encoding of a fact set and its key frames and deltas)
is tested in ``tests/test_trace_facts.py``.
"""

from __future__ import annotations

import gc
import random
import tracemalloc

from hypothesis import given
from hypothesis import strategies as st

from sim.bench.metrics import Metrics
from sim.bench.oracle import OracleAdapter
from sim.engine import Simulation
from sim.text import FACT_CACHE_BYTES, extract_facts, fact_id, fact_token, observation
from sim.tokens import (
    ENTRY_OVERHEAD,
    TOKEN_CACHE_BYTES,
    count_tokens,
    count_tokens_uncached,
    text_cache,
)
from sim.trace import decode_facts, encode_facts
from sim.workload import Drawn, drive, make_workload


# -- fact ids of any width through extraction, the trace and the workload -----------------------------
@given(st.lists(st.integers(0, 10**7), min_size=1, max_size=30, unique=True))
def test_fact_ids_of_any_width_survive_extraction_and_the_trace(numbers: list[int]) -> None:
    """Facts numbered past 9,999 are extracted from text, encoded in the ``facts`` column and decoded
    back, exactly like four-digit ones."""
    rng = random.Random(len(numbers))
    tokens = [fact_token(n, "teal") for n in numbers]
    text = observation(rng, 40 * len(numbers), tokens)
    ids = {fact_id(n) for n in numbers}

    assert extract_facts(text) == ids
    assert decode_facts(encode_facts(extract_facts(text))) == ids


def _long_drawn(steps: int) -> Drawn:
    # Small observations and one fact per step: more than 10,000 facts in a second of work.
    return Drawn(
        seed=7, steps=steps, obs_tokens_mean=20, obs_tokens_max=40, facts_per_step=1.0, probe_every=5,
        lossiness=0.0, skew_s=0.0, calm_steps=10,
    )  # fmt: skip


def test_workload_numbers_facts_past_9999() -> None:
    """An 11,000-step workload carries 11,000 distinct facts; those past FACT-9999 have five digits and
    are found in their observations."""
    w = make_workload(7, drawn=_long_drawn(11_000))
    facts = w.facts
    wide = [s for s in w.iter_steps() if s.facts and len(s.facts[0].split("=")[0]) > 9]

    assert len(facts) == 11_000
    assert fact_id(11_000) in facts and fact_id(10_000) in facts
    assert len(wide) == 1_001
    assert all(extract_facts(s.observation) == {f.split("=")[0] for f in s.facts} for s in wide)


def test_a_generated_workload_holds_nothing_per_step() -> None:
    """A workload generated a step at a time keeps nothing per step it has made (issue 33: the list of
    every fact id seen, for the probes' draw, grew by two ids a step in a long bench cell)."""
    steps = make_workload(7, drawn=_long_drawn(8_000)).iter_steps()
    for _ in zip(range(1_000), steps):
        pass
    tracemalloc.start()
    try:
        before, _ = tracemalloc.get_traced_memory()
        probes = sum(1 for _, s in zip(range(6_000), steps) if s.probe)
        after, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()

    assert probes == 1_200
    assert after - before < 16_384


def test_oracle_recalls_every_probe_at_11k_steps() -> None:
    """The oracle sends exactly the needed fact, so it recalls every probe, including probes of facts
    numbered 10,000 and up (it recalled 0.82 of them at 11k steps while ids were matched as 4 digits)."""
    drawn = _long_drawn(11_000)
    w = make_workload(7, drawn=drawn)
    sim = Simulation(7, keep_trace=False)
    metrics = Metrics(4000)
    wide_probes = sum(1 for s in w.iter_steps() if s.probe and int(s.probe[5:]) >= 10_000)

    drive(OracleAdapter(sim, 4000, drawn), sim, w, metrics)

    assert wide_probes > 0
    assert metrics.probes == 2_201
    assert metrics.hits == metrics.probes


# -- byte-bounded caches --------------------------------------------------------------------------
@given(
    budget=st.integers(0, 4_000),
    texts=st.lists(st.text(max_size=300), max_size=60),
)
def test_text_cache_never_exceeds_its_budget_and_never_changes_a_result(
    budget: int, texts: list[str]
) -> None:
    """Whatever is looked up, the cache charges at most its budget and returns the function's value."""
    calls: list[str] = []

    @text_cache(budget)
    def length(text: str) -> int:
        calls.append(text)
        return len(text)

    for t in texts + texts[::-1]:
        assert length(t) == len(t)
        info = length.cache_info()
        assert info.bytes <= budget
        assert info.hits + info.misses == len(calls) + info.hits
    assert length.cache_info().misses == len(calls)


def test_text_cache_evicts_the_least_recently_used() -> None:
    """With room for two entries, touching the older one makes the other the one evicted."""
    import sys

    a, b, c = "a" * 100, "b" * 100, "c" * 100
    room = 2 * (sys.getsizeof(a) + ENTRY_OVERHEAD)
    seen: list[str] = []
    cached = text_cache(room)(lambda t: seen.append(t) or len(t))

    cached(a)
    cached(b)
    cached(a)  # a is now the most recent
    cached(c)  # evicts b
    cached(a)
    cached(b)

    assert seen == [a, b, c, b]


def test_a_text_larger_than_the_budget_is_computed_and_not_kept() -> None:
    """A text costing more than the whole budget does not flush the cache: it is simply not kept."""
    cached = text_cache(10_000)(len)
    cached("small")
    cached("x" * 20_000)

    assert cached.cache_info().currsize == 1
    assert cached("x" * 20_000) == 20_000
    assert cached.cache_info().misses == 3


def test_cache_memory_stays_bounded_while_texts_keep_growing() -> None:
    """Nemsy-like prompts (each larger than the last, never seen again) fed through a 1 MB cache keep at
    most about 1 MB alive, where an 8,192-entry cache would have kept all of them (about 20 MB)."""
    cached = text_cache(1 << 20)(len)
    gc.collect()
    tracemalloc.start()
    try:
        for i in range(2_000):
            cached("page line\n" * (i + 1))  # 10 bytes more each time; the caller keeps none of them
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()

    assert cached.cache_info().bytes <= 1 << 20
    assert held < 1.25 * (1 << 20)


def test_the_shared_caches_are_byte_bounded() -> None:
    """``count_tokens`` and ``extract_facts`` carry byte budgets (not entry counts) and stay within them."""
    for t in ("hello world", "FACT-0017=amber and FACT-12345=gold", "x" * 5000):
        count_tokens(t)
        extract_facts(t)

    assert count_tokens.cache_info().maxsize == TOKEN_CACHE_BYTES
    assert extract_facts.cache_info().maxsize == FACT_CACHE_BYTES
    assert 0 < count_tokens.cache_info().bytes <= TOKEN_CACHE_BYTES
    assert 0 < extract_facts.cache_info().bytes <= FACT_CACHE_BYTES


@given(st.lists(st.text(alphabet="ab FACT-0123456789=tel,.日", max_size=80), max_size=30))
def test_counts_and_facts_through_a_tiny_cache_equal_uncached_ones(texts: list[str]) -> None:
    """Through a cache that keeps almost nothing, counts and fact sets are those computed afresh."""
    tiny_count = text_cache(300)(count_tokens_uncached)
    tiny_facts = text_cache(300)(extract_facts.__wrapped__)  # type: ignore[attr-defined]

    for t in texts * 2:
        assert tiny_count(t) == count_tokens_uncached(t) == count_tokens(t)
        assert tiny_facts(t) == extract_facts(t)


def test_a_streamed_run_holds_nothing_per_record(tmp_path) -> None:
    """With the trace streamed (``keep_trace=False``), 12,000 more ops and requests leave the core's memory
    where it was: nothing is kept per record (the pending batch is flushed before each look)."""
    sim = Simulation(1, trace_path=tmp_path / "t.db", keep_trace=False)
    parts = [f"part {i}: FACT-{i + 9_990:04d}=teal" for i in range(60)]

    def burst(n: int) -> None:
        for i in range(n):
            sim.trace.op("coretest", "tick", agent="a", i=i % 7)
            sim.request("coretest", "hop", parts[i % 50 : i % 50 + 9], needed={fact_id(9_990)}, step=i % 7)
        sim.trace.flush()

    burst(1_000)  # caches and the first batches out of the way
    tracemalloc.start()
    try:
        before, _ = tracemalloc.get_traced_memory()
        burst(6_000)
        after, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    sim.close(complete=True)

    assert sim.trace.records == 14_000
    assert sim.trace.data.ops == [] and sim.trace.data.requests == []
    assert after - before < 16_384


def test_a_text_counted_by_the_merchantbench_history_is_not_encoded_again(monkeypatch) -> None:
    """The history's own count cache and the requests' cache look into each other before encoding: each
    text is encoded once whichever counts it first, and the counts agree with an uncached count."""
    from sim import tokens
    from systems.merchantbench.model import history

    calls: list[str] = []
    enc = tokens.encoding()
    real = enc.encode

    def counting(text: str, **kw: object) -> list[int]:
        calls.append(text)
        return real(text, **kw)

    monkeypatch.setattr(enc, "encode", counting)
    first, second = "a history message never seen before: 4f1c", "a request part never seen before: 9e2b"
    n = history._message_tokens(first)
    assert tokens.count_tokens(first) == n == tokens.count_tokens_uncached(first)
    m = tokens.count_tokens(second)
    assert history._message_tokens(second) == m
    assert calls.count(first) == 2 and calls.count(second) == 1  # the uncached count above is the second
    assert tokens.count_tokens.peek("never counted 77c1") is None
