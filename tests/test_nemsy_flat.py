"""Issue 42: a long Nemsy run holds nothing per step that no later step reads, and what a later step reads
only compactly. The compact structures answer as the plain ones did (path table, cold files, mtime index,
packed index blocks); a bench request recorded from running counts is the one its parts spelt out give;
the loader's running totals equal a full recount; and per-page tables that only grew are gone."""

from __future__ import annotations

import random

from sim.engine import Simulation
from sim.spill import PathTable, SpillTree, _ColdFiles
from sim.text import extract_facts, fact_token
from sim.tokens import count_tokens
from sim.workload import make_workload
from systems.nemsy.adapter import Adapter
from systems.nemsy.model import (
    INDEX_FILE,
    LOG_FILE,
    Nemsy,
    context_tokens,
    index_section_tokens,
    load_wiki_context,
)
from systems.nemsy.model.mtimeindex import MtimeIndex
from systems.nemsy.model.pages import PackedBlocks, extend_blocks, index_blocks, select_wiki_pages
from systems.nemsy.policies import FactAnswerer, IngestResponder

NAMES = ("a", "b", "x.md", "中文.md", "sub/deep/y.md", "sub/z.md", "queries/q-1.md", "sources/s-2.md")


def test_path_table_interns_paths_in_order() -> None:
    rng = random.Random(1)
    t = PathTable()
    seen: list[str] = []
    for _ in range(3000):
        p = rng.choice(NAMES) if rng.random() < 0.3 else f"d{rng.randrange(9)}/f-{rng.randrange(5000)}.md"
        j = t.add(p)
        if p not in seen:
            seen.append(p)
        assert j == seen.index(p) and t.path(j) == p and t.find(p) == j
    assert [t.path(j) for j in range(len(t))] == seen
    assert t.find("d1/never.md") == -1 and t.find("nowhere/x") == -1


def test_cold_files_answer_as_a_dict() -> None:
    rng = random.Random(2)
    cold, ref = _ColdFiles(), {}
    for _ in range(2000):
        p = f"w/{rng.randrange(200)}.md"
        op = rng.randrange(4)
        if op == 0:
            v = (rng.randrange(1 << 40) * (1 << 40) + rng.randrange(1 << 40)) << 64 | rng.randrange(1 << 64)
            cold[p] = ref[p] = v
        elif op == 1:
            assert cold.pop(p, None) == ref.pop(p, None)
        assert cold.get(p) == ref.get(p) and (p in cold) == (p in ref) and len(cold) == len(ref)
    assert sorted(cold) == sorted(ref)
    assert cold.total("w/") == sum((v >> 64) % (1 << 40) for v in ref.values()) and cold.total("v/") == 0


def test_mtime_index_selects_as_upstream_sorts() -> None:
    rng = random.Random(3)
    idx, ref = MtimeIndex(), {}
    for k in range(1500):
        p = f"{rng.choice(('sources', 'queries', 'a/b'))}/p-{rng.randrange(300)}.md"
        if rng.random() < 0.15:
            idx.drop(p)
            ref.pop(p, None)
        else:
            m = float(k // rng.choice((1, 7, 50)))  # ties in mtime, and pages rewritten in the past
            idx.put(p, m)
            ref[p] = m
        n = rng.randrange(0, 40)
        assert idx.newest(n) == select_wiki_pages(ref.items(), n)
    assert idx.loadable() == select_wiki_pages(ref.items(), len(ref)) and len(idx) == len(ref)


def test_packed_blocks_read_as_the_blocks_of_the_whole_text() -> None:
    rng = random.Random(4)
    text = "# 索引\n"
    blocks: tuple[str, ...] = index_blocks(text)
    for i in range(400):
        add = f"- [[s-{i}]] — 来自 s-{i} 的摘要 （2026-12-06）\n" * rng.randrange(1, 4)
        text += add
        blocks = extend_blocks(blocks, add)
        assert blocks == index_blocks(text) and "".join(blocks) == text
    assert isinstance(blocks, PackedBlocks) and blocks[3:5] == index_blocks(text)[3:5]


def _life(ops: int) -> Nemsy:
    sim = Simulation(5)
    n = Nemsy(sim, responder=IngestResponder(rng=sim.rng("r")), answerer=FactAnswerer())
    for k in range(ops):
        if k % 4 == 3:
            n.query(f"What is FACT-{k:04d} (op {k})?", archive=True)
        else:
            n.write_source(f"s-{k}.md", f"Source {k}: {fact_token(k, 'teal')} {fact_token(k + 1, 'red')}.")
            n.cli_ingest(f"s-{k}.md")
        sim.env.run(until=sim.now + 3_000)
    return n


def test_running_totals_equal_a_full_recount() -> None:
    """The long-life scenario's rows count the loaded context and the index from the block tallies."""
    n = _life(150)  # 150 index lines: two complete blocks and a partial one
    ctx = load_wiki_context(n)
    assert ctx.index_tally is not None and ctx.index_tally.blocks >= 2
    assert context_tokens(ctx) == count_tokens(ctx.text)
    assert index_section_tokens(ctx) == count_tokens(f"=== {INDEX_FILE} ===\n{n.read_wiki_note(INDEX_FILE)}")
    call = n.query_call("What is FACT-0001?", ctx)
    assert call.counted().tokens == sum(count_tokens(p) for p in call.parts()[0])


def test_no_table_grows_per_page_that_no_later_step_reads() -> None:
    """Appended-file sizes only for the appended files; an archived query's inputs only when asked for."""
    n = _life(60)
    assert set(n._plain) <= {INDEX_FILE, LOG_FILE}
    assert n.derivations  # kept by default (checkers and the invalidate-derived fix read them)
    n2 = _life(0)
    n2.keep_derivations = False
    n2.query("What is FACT-0001?", archive=True)
    assert not n2.derivations


def test_bench_request_from_counts_is_its_parts_counted() -> None:
    wl = make_workload(3, 120)
    sim = Simulation(3)
    a = Adapter(sim, 8000, wl.drawn)
    assert isinstance(a.tree, SpillTree)
    for step in wl.steps:
        req = a.step(step)
        c = req.counted
        assert c is not None
        facts = frozenset().union(*(extract_facts(p) for p in req.parts))
        tokens = sum(count_tokens(p) for p in req.parts)
        assert (c.tokens, c.parts, c.facts) == (tokens, len(req.parts), facts)
