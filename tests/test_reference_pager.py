"""The ``pager`` reference design: MemGPT's eviction thresholds and evicted messages paging back by
search (its claims and conformance run in tests/test_reference_bm25.py beside bm25's)."""

from __future__ import annotations

from reference.pager.model import CORE_BLOCK, SYSTEM_PROMPT, Pager, eviction_note
from reference.pager.state import NO_SEARCH, STOPWORDS_FIX
from sim.tokens import count_tokens
from sim.variant import Variant

LINES = [
    f"Line {i}: the harbour ferry leaves at {i} past the hour with {i} crates aboard." for i in range(40)
]


def test_the_queue_evicts_at_memgpts_thresholds() -> None:
    budget = 600
    p = Pager(budget)
    fixed = count_tokens(SYSTEM_PROMPT) + count_tokens(CORE_BLOCK)
    queue: list[int] = []
    evicted = 0
    for i, text in enumerate(LINES):
        p.add(f"m{i}", "s", "user", "", text)
        queue.append(count_tokens(text))
        note = count_tokens(eviction_note(evicted)) if evicted else 0
        if fixed + note + sum(queue) > 0.75 * budget:  # MESSAGE_SUMMARY_WARNING_FRAC
            target, gone = 0.75 * sum(queue), 0  # MESSAGE_SUMMARY_TRUNC_TOKEN_FRAC
            while gone < target and len(queue) > 3:  # MESSAGE_SUMMARY_TRUNC_KEEP_N_LAST
                gone += queue.pop(0)
                evicted += 1
        assert p.evicted == evicted and p.queue_tokens == sum(queue)
    assert evicted > 0
    ctx = p.context()
    assert ctx[:3] == [SYSTEM_PROMPT, CORE_BLOCK, eviction_note(evicted)] and ctx[-1] == LINES[-1]


def test_evicted_messages_page_back_by_search() -> None:
    fixed = Variant(fixes=frozenset({STOPWORDS_FIX}))
    off = Variant(fixes=frozenset({STOPWORDS_FIX}), off=frozenset({NO_SEARCH}))
    for variant, paged in ((Variant(), True), (fixed, True), (off, False)):
        p = Pager(600, variant=variant)
        p.add("vet", "s", "user", "", "My vet is Dr Okafor.")
        for i, text in enumerate(LINES[:20]):
            p.add(f"m{i}", "s", "user", "", text)
        assert 0 not in p.queue  # evicted
        parts = p.request("Who is my vet?")
        assert ("My vet is Dr Okafor." in parts) is paged
        assert p.last_reasons["vet"] == ("in-request" if paged else "not-retrieved@search off")
        assert sum(count_tokens(x) for x in parts) <= 600
        assert p.last_ranked[0] == "vet" or not paged
