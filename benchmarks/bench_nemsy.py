"""Nemsy benchmarks: the Wiki loader's cost against the number of pages, and the tokens a query delivers
as the wiki grows (with the index's share).

Run: ``/work/venv/bin/python benchmarks/bench_nemsy.py``. Prints deterministic-format tables of ratios
measured in the same run (timings vary by machine; body-read counts and token counts are exact).

1. Loader cost. Three loaders pick the same 30 newest pages from a wiki of N pages: the model's
   (an mtime index kept by every write: reads only the 30 selected bodies), upstream's shape (stat every
   file, sort, read 30) and a naive peer that reads every page body, then sorts. The model's cost stays
   flat in N; the naive peer grows linearly.
2. Tokens per query. A wiki grown through the real write path (page + index entry per source ingest,
   one archived query per four ingests) is loaded on the query route (index + 30 newest pages) at
   100, 1,000 and 10,000 pages: exact cl100k tokens, and the share taken by the index; and the bytes
   each write costs (upstream appends to index.md and log.md by rewriting the whole file).
"""

from __future__ import annotations

import statistics
import time

from sim.engine import Simulation
from sim.files import FileTree
from sim.text import extract_facts, fact_token
from sim.tokens import count_tokens
from systems.nemsy.model import (
    INDEX_FILE,
    QUERY_PAGES,
    QUERY_SYSTEM,
    WIKI_DIR,
    Nemsy,
    index_stems,
    load_wiki_context,
    select_wiki_pages,
)
from systems.nemsy.policies import IngestResponder

SIZES = (100, 1_000, 10_000)


def _best(fn, repeat: int = 7) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def _stat_all(tree: FileTree, n: int) -> list[str]:
    prefix = WIKI_DIR + "/"
    stats = [(p[len(prefix) :], tree.mtime(p)) for p in tree.list(WIKI_DIR) if p.endswith(".md")]
    chosen = select_wiki_pages(stats, n)
    for rel in chosen:
        tree.read_text(prefix + rel)
    return chosen


def _read_all(tree: FileTree, n: int) -> list[str]:
    prefix = WIKI_DIR + "/"
    bodies = {p[len(prefix) :]: tree.read_text(p) for p in tree.list(WIKI_DIR) if p.endswith(".md")}
    stats = [(rel, tree.mtime(prefix + rel)) for rel in bodies]
    return select_wiki_pages(stats, n)


def loader_table() -> list[str]:
    out = [
        "Loader cost: selecting the 30 newest pages (no index.md), median of 7 loads",
        f"{'pages':>7} {'model µs':>10} {'stat-all µs':>12} {'read-all µs':>12} {'read-all/model':>15} "
        f"{'bodies read: model':>19} {'read-all':>9}",
    ]
    for size in SIZES:
        sim = Simulation(1)
        n = Nemsy(sim)
        for i in range(size):
            n.write_wiki_note(
                f"sources/page-{i:05d}.md", f"# Page {i}\n\n{fact_token(i % 9999 + 1, 'amber')} " * 4
            )
            sim.env.run(until=sim.now + 1)
        expected = _read_all(n.tree, QUERY_PAGES)
        assert list(load_wiki_context(n, QUERY_PAGES).pages) == expected == _stat_all(n.tree, QUERY_PAGES)
        ops0 = n.tree.ops
        load_wiki_context(n, QUERY_PAGES)
        model_reads = n.tree.ops - ops0
        ops0 = n.tree.ops
        _read_all(n.tree, QUERY_PAGES)
        naive_reads = n.tree.ops - ops0
        t_model = _best(lambda n=n: load_wiki_context(n, QUERY_PAGES))
        t_stat = _best(lambda n=n: _stat_all(n.tree, QUERY_PAGES))
        t_read = _best(lambda n=n: _read_all(n.tree, QUERY_PAGES))
        out.append(
            f"{size:>7} {t_model * 1e6:>10.0f} {t_stat * 1e6:>12.0f} {t_read * 1e6:>12.0f} "
            f"{t_read / t_model:>14.1f}x {model_reads:>19} {naive_reads:>9}"
        )
    return out


def token_table() -> list[str]:
    out = [
        "Tokens per query (index + 30 newest pages + question); the wiki grows by source pages and one "
        "archived query per 5 writes",
        f"{'pages':>7} {'index lines':>11} {'index tokens':>12} {'page tokens':>11} {'request tokens':>14} "
        f"{'index share':>11} {'facts delivered':>15} {'bytes written/write':>19}",
    ]
    sim = Simulation(2)
    rng = sim.rng("bench.nemsy")
    responder = IngestResponder()
    n = Nemsy(sim, responder=responder, record_requests=False)
    pages = 0
    k = 0
    last_bytes, last_pages = 0, 0
    targets = list(SIZES)
    while targets:
        k += 1
        if k % 5 == 0:
            q = f"What is FACT-{rng.randrange(1, k):04d} (query {k})?"
            n._archive_query_result(
                q, f"根据 Wiki：{fact_token(k, 'teal')}\n\n来源：[[src-{k - 1:05d}-2026-01-05]]"
            )
        else:
            title = f"src-{k:05d}"
            n._parse_and_write_ingest(responder(title, f"{fact_token(k, 'amber')}", ""), title)
        sim.env.run(until=sim.now + 30)
        pages += 1
        if pages == targets[0]:
            targets.pop(0)
            question = "What is FACT-0001?"
            ctx = load_wiki_context(n, QUERY_PAGES, query=question)
            total = count_tokens(QUERY_SYSTEM) + count_tokens(n.query_prompt(question, ctx))
            index_text = dict(ctx.sections)[INDEX_FILE]
            index_tokens = count_tokens(f"=== {INDEX_FILE} ===\n{index_text}")
            page_tokens = sum(count_tokens(f"=== {p} ===\n{c}") for p, c in ctx.sections if p != INDEX_FILE)
            facts = len(extract_facts(ctx.text))
            lines = len(index_stems(index_text))
            out.append(
                f"{pages:>7} {lines:>11} {index_tokens:>12} {page_tokens:>11} {total:>14} "
                f"{index_tokens / total:>11.1%} {facts:>15} "
                f"{(n.bytes_written - last_bytes) / (pages - last_pages):>19.0f}"
            )
            last_bytes, last_pages = n.bytes_written, pages
    return out


def main() -> None:
    for line in loader_table():
        print(line)
    print()
    for line in token_table():
        print(line)


if __name__ == "__main__":
    main()
