"""The index's running totals (``BlockTally``): a request that takes the index's leading blocks from their
tally records exactly what ``sim.request`` records of the same parts spelt out, and the vault's tally is a
recount of its blocks after any sequence of appends, rewrites, deletions and rescans.

Blocks are cut every two lines here (``INDEX_BLOCK_LINES`` patched), so a few entries make several blocks.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sim.engine import Simulation
from sim.text import extract_facts
from sim.tokens import count_tokens
from sim.variant import Variant
from systems.nemsy import Nemsy, WikiContext
from systems.nemsy.model import load_wiki_context, pages
from systems.nemsy.model.prompts import ModelCall, context_segments, tally_blocks
from systems.nemsy.policies import FactAnswerer, IngestResponder
from systems.nemsy.state import FIX_DELETE_SYNC, FIX_INDEX_UPSERT


@pytest.fixture(autouse=True)
def _two_line_blocks(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(pages, "INDEX_BLOCK_LINES", 2)
    yield


# Index lines as they come: entries, blank lines, lines that start with a space (a cut before one would
# change how cl100k chunks the text), other line ends, facts, and a last line without its newline.
LINES = st.lists(
    st.one_of(
        st.builds(
            lambda i: f"- [[src-{i:04d}]] — 来自 src-{i:04d}.md 的摘要 （2026-12-01）\n", st.integers(0, 99)
        ),
        st.sampled_from(["\n", " indented\n", "\tTab\n", "# Heading\n", "x\r", "y\u2028", "\n\n"]),
        st.builds(lambda i: f"- FACT-{i:04d}=amber\n", st.integers(1, 20)),
    ),
    max_size=14,
).map("".join)
PAGES = st.lists(
    st.tuples(
        st.sampled_from(["a.md", "b.md", "sources/c.md"]), st.sampled_from(["body", " lead", "", "F\n"])
    ),
    max_size=3,
)
TRAILS = st.sampled_from(["", "\n", "\n    ", " tail"])


def _reference(call: ModelCall) -> tuple[int, frozenset[str], int, dict[str, int]]:
    """What ``sim.request`` records of the call's parts (the contract ``counted`` keeps)."""
    sim = Simulation(0)
    parts, kinds = call.parts()
    rec = sim.request("nemsy", call.route, parts, kinds=kinds)
    return (
        rec.exact_tokens,
        rec.fact_ids,
        rec.messages,
        json.loads(rec.detail)["tokens_by_kind"],
    )


def _counted(call: ModelCall) -> tuple[int, frozenset[str], int, dict[str, int]]:
    c = call.counted()
    return c.tokens, c.facts, c.parts, c.by_kind


@settings(max_examples=150, deadline=None)
@given(LINES, PAGES, TRAILS, st.sampled_from(["", "\n\n---当前 Wiki 状态---\n", "head "]))
def test_a_request_with_the_tally_counts_what_the_spelt_out_parts_count(index, loaded, trail, head) -> None:
    """Same parts, same text, and the same record (tokens, facts, part count, tokens by kind in order),
    whether the index's leading blocks come as one run with their tally or one segment each."""
    blocks = pages.index_blocks(index)
    plain = WikiContext(tuple(loaded), 10, blocks)
    tallied = WikiContext(tuple(loaded), 10, blocks, index_tally=tally_blocks(blocks[:-1]))
    assert tallied.index_chars == plain.index_chars == len(index)

    def call(ctx: WikiContext) -> ModelCall:
        user = (("message", head), *context_segments(ctx, trail))
        return ModelCall("query", "wiki.query", (("system", "system prompt\n"),), user, ("earlier turn",))

    a, b = call(plain), call(tallied)
    assert b.parts() == a.parts()
    assert b.user_text == a.user_text
    assert _counted(b) == _counted(a) == _reference(a)
    assert list(b.counted().by_kind) == list(a.counted().by_kind)  # the order sim.request writes them


@settings(max_examples=60, deadline=None)
@given(LINES, st.data())
def test_a_tally_extended_block_by_block_is_the_tally_of_them_all(index, data) -> None:
    blocks = pages.index_blocks(index)
    k = data.draw(st.integers(0, len(blocks)))
    whole = tally_blocks(blocks)
    assert tally_blocks(blocks[k:], tally_blocks(blocks[:k])) == whole
    assert whole.tokens == sum(count_tokens(b) for b in blocks)
    assert whole.facts == frozenset().union(*map(extract_facts, blocks))
    assert whole.chars == len(index)


OPS = st.lists(
    st.one_of(
        st.tuples(st.just("ingest"), st.integers(0, 3), st.integers(0, 2)),
        st.tuples(st.just("delete"), st.integers(0, 3), st.just(0)),
        st.tuples(st.just("rescan"), st.just(0), st.just(0)),
        st.tuples(st.just("query"), st.just(0), st.just(0)),
    ),
    min_size=1,
    max_size=25,
)


@settings(max_examples=40, deadline=None)
@given(st.sampled_from([(), (FIX_INDEX_UPSERT,), (FIX_INDEX_UPSERT, FIX_DELETE_SYNC)]), OPS)
def test_the_vault_tally_is_a_recount_after_appends_rewrites_and_deletes(fixes, ops) -> None:
    """After every operation the vault's tally equals a recount of its blocks but the last, and the last
    request recorded is what ``sim.request`` records of its parts. (The fixes rewrite ``index.md`` whole:
    the index-upsert fix on every re-ingest, the synchronized delete on every delete.)"""
    n = Nemsy(
        Simulation(0),
        variant=Variant(fixes=frozenset(fixes)),
        responder=IngestResponder(),
        answerer=FactAnswerer(),
    )
    for op, i, version in ops:
        if op == "ingest":
            n.write_source(f"s{i}.md", f"Source {i} v{version}: FACT-{10 * i + version + 1:04d}=amber")
            n.cli_ingest(f"s{i}.md")
        elif op == "delete":
            listed = [p for p in n.list_wiki_notes() if p.startswith("sources/")]
            if listed:
                n.delete_wiki_note(listed[i % len(listed)], confirmed=True)
        elif op == "rescan":
            n.rescan()
        else:
            n.query(f"What is FACT-{i + 1:04d}?")
        n.sim.env.run(until=n.sim.now + 60)  # a minute a step: one day, so a re-ingest names the same page
        blocks = n.index_blocks()
        if blocks is None:
            assert n.index_tally() is None
            continue
        assert n.index_tally() == tally_blocks(blocks[:-1])
        assert load_wiki_context(n).index_tally == n.index_tally()
        if n.last_call is not None and n.sim.trace.data.requests:
            rec = n.sim.trace.data.requests[-1]
            assert (rec.exact_tokens, rec.fact_ids, rec.messages) == _reference(n.last_call)[:3]
