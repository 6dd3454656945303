"""Nemsy over a long wiki life: the index grows without bound while the page window stays at 30.

Covers: MEM-OBJ-wiki-index, RT-BAP-wiki-context, RT-RTE-wiki-answer, RT-RTE-answer-archive,
MEM-OBJ-query-page, RT-RTE-document-ingest.

Scenario: a user ingests 500 small source documents (two facts each; every tenth ingest re-ingests an
edited earlier source) and archives 200 queries about facts seen so far, 25 operations a day. At
checkpoints the scenario prints what the query loader (index in full + the 30 newest pages, Nemsy's
defaults) delivers: exact cl100k tokens of the context and of the whole query request (with the system
prompt at upstream's size), the index's share of the request, duplicate index entries, how many
of the wiki's facts a query can still see, and how many loaded pages are generated answers.

It streams (issue 42): the trace goes to disk as it is written (``KEEP_TRACE = False``); the installation
keeps its files as the benchmark does (a :class:`~sim.spill.SpillTree`: sources and pages in a temp
file, the index, log, ledger and token log as tail files; the ledger and token log not held as
documents, an archived query's input hashes not kept); the rows come from running totals (pages, index
entries, each fact's source pages) and count the context and the request from the index's block
tallies, so neither a row nor an operation re-reads the Wiki. A million operations::

    memsim run nemsy_long_life --param ingests=800000 --param queries=200000 \
        --param checkpoint=100000 --out DIR

The request still grows with the Wiki (upstream loads the whole index every query: about 37 cl100k
tokens more each operation here); the simulator's memory and time an operation do not.
"""

from array import array

from pydantic import Field

from sim.scenario import Context, main
from sim.scenario import Params as BaseParams
from sim.spill import SpillTree
from sim.text import extract_facts, fact_token
from systems.nemsy.adapter import HOT_FILES, TAIL_FILES, spilled
from systems.nemsy.drivers import VALUES
from systems.nemsy.model import (
    QUERY_PAGES,
    RAW_DIR,
    Nemsy,
    context_tokens,
    index_section_tokens,
    index_stems,
    load_wiki_context,
)
from systems.nemsy.policies import FactAnswerer, IngestResponder

SYSTEM = "nemsy"
SEED = 7
KEEP_TRACE = False


class Params(BaseParams):
    """Scenario parameters (defaults are the embedded values)."""

    ingests: int = Field(500, ge=1, le=1_000_000, description="source ingests")
    queries: int = Field(200, ge=0, le=1_000_000, description="archived queries")
    ops_per_day: int = Field(25, ge=1, le=10_000, description="operations per simulated day")
    checkpoint: int = Field(100, ge=1, le=1_000_000, description="print every this many operations")


class _Totals:
    """What a checkpoint row counts of the whole Wiki, kept as running totals (issue 42: a row re-read every
    page and the whole index, so a long run's rows cost more and more): source and query pages, index
    entries (complete index blocks are counted once), and how many source pages hold each fact."""

    def __init__(self) -> None:
        self.src = self.qry = 0
        self.blocks = self.entries = 0  # complete index blocks counted, and their entries
        self.holders = array("I")  # fact number -> source pages holding it
        self.facts = 0  # fact numbers with a holder

    def page_facts(self, n: Nemsy, page: str | None, delta: int) -> None:
        """Add (*delta* 1) or remove (-1) the facts of source page *page* (when it exists)."""
        text = n.read_wiki_note(page) if page is not None else None
        for fid in extract_facts(text or ""):
            k = int(fid[5:])
            if k >= len(self.holders):
                grow = max(k + 1, 2 * len(self.holders)) - len(self.holders)
                self.holders.frombytes(bytes(self.holders.itemsize * grow))
            was = self.holders[k]
            self.holders[k] = was + delta
            self.facts += (was == 0) - (was + delta == 0)

    def held(self, fid: str) -> bool:
        k = int(fid[5:])
        return k < len(self.holders) and self.holders[k] > 0

    def index_entries(self, n: Nemsy) -> int:
        """Entries of ``index.md`` now: the complete blocks' counted once, the last block's afresh."""
        blocks = n.index_blocks() or ("",)
        for b in blocks[self.blocks : len(blocks) - 1]:
            self.entries += len(index_stems(b))
        self.blocks = max(self.blocks, len(blocks) - 1)
        return self.entries + len(index_stems(blocks[-1]))


def run(ctx: Context) -> list[str]:
    p: Params = ctx.params
    sim = ctx.sim
    rng = sim.rng("scenario.nemsy_long_life")
    # The installation's files as the benchmark keeps them (sim.spill: sources and pages on disk, the
    # index, log and JSON files as tail files) and nothing per operation held that no later one reads.
    tree = SpillTree(sim.clock("nemsy").seconds, spill=spilled, tail=TAIL_FILES.__contains__, hot=HOT_FILES)
    n = Nemsy(
        sim, tree=tree, responder=IngestResponder(rng=sim.rng("nemsy.responder")), answerer=FactAnswerer()
    )
    n.hold_token_log = n.hold_ledger = n.keep_page_hashes = n.keep_derivations = False
    total = p.ingests + p.queries
    plan = ["ingest"] * p.ingests + ["query"] * p.queries
    rng.shuffle(plan)
    out = [
        f"{p.ingests} ingests + {p.queries} archived queries, {p.ops_per_day} ops/day, "
        f"query window {QUERY_PAGES} pages + the whole index (Nemsy's defaults)",
        f"{'ops':>5} {'sources':>7} {'src pages':>9} {'qry pages':>9} {'index lines':>11} {'dup':>4} "
        f"{'ctx tokens':>10} {'req tokens':>10} {'index share':>11} {'facts in window':>15} "
        f"{'derived in window':>17}",
    ]
    t = _Totals()
    next_fact, sources, ingests = 1, 0, 0
    for k, op in enumerate(plan, start=1):
        pages = len(n.pages)
        if op == "ingest":
            ingests += 1
            if ingests % 10 == 0 and sources:
                i = rng.randrange(sources)
                text = f"Source {i} revised: {fact_token(next_fact, rng.choice(VALUES))}."
                next_fact += 1
            else:
                i = sources
                sources += 1
                facts = [fact_token(next_fact + j, rng.choice(VALUES)) for j in range(2)]
                next_fact += 2
                text = f"Source {i}: " + " ".join(facts) + "."
            page = n.source_page_name(f"src-{i:04d}", f"{RAW_DIR}/src-{i:04d}.md")
            t.page_facts(n, page, -1)
            n.write_source(f"src-{i:04d}.md", text)
            written = {o.page for o in n.cli_ingest(f"src-{i:04d}.md") if o.page}
            assert written <= {page}, (written, page)  # the page named as upstream names it
            t.page_facts(n, page, 1)
            t.src += len(n.pages) - pages
        else:
            fid = f"FACT-{rng.randrange(1, next_fact):04d}" if next_fact > 1 else "FACT-0001"
            n.query(f"What is {fid} (op {k})?", archive=True)
            t.qry += len(n.pages) - pages
        sim.env.run(until=sim.now + 86_400 / p.ops_per_day)
        if k % p.checkpoint == 0 or k == total:
            out.append(_row(n, k, sources, t))
    return out


def _row(n: Nemsy, k: int, sources: int, t: _Totals) -> str:
    """One checkpoint row, from the running totals and the context a query loads now (no page re-read).

    Every page has its own stem (source stems are ``src-NNNN-date``, query stems ``What-is-...``) and one
    entry at least, so the duplicate entries are the entries beyond one a page."""
    ctx = load_wiki_context(n, QUERY_PAGES)
    entries = t.index_entries(n)
    tokens = context_tokens(ctx)
    request = n.query_call("What is FACT-0001?", ctx).counted().tokens
    index_tokens = index_section_tokens(ctx)
    visible = extract_facts("\n".join(c for p, c in ctx.page_sections if p.startswith("sources/")))
    seen = sum(1 for f in visible if t.held(f))
    derived = sum(1 for p in ctx.pages if not p.startswith("sources/"))
    return (
        f"{k:>5} {sources:>7} {t.src:>9} {t.qry:>9} {entries:>11} "
        f"{entries - t.src - t.qry:>4} {tokens:>10} {request:>10} {index_tokens / request:>11.1%} "
        f"{f'{seen}/{t.facts}':>15} {f'{derived}/{len(ctx.pages)}':>17}"
    )


if __name__ == "__main__":
    main(__name__)
