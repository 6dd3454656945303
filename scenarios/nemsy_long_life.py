"""Nemsy over a long wiki life: the index grows without bound while the page window stays at 30.

Covers: MEM-OBJ-wiki-index, RT-BAP-wiki-context, RT-RTE-wiki-answer, RT-RTE-answer-archive,
MEM-OBJ-query-page, RT-RTE-document-ingest.

Scenario: a user ingests 500 small source documents (two facts each; every tenth ingest re-ingests an
edited earlier source) and archives 200 queries about facts seen so far, 25 operations a day. At
checkpoints the scenario prints what the query loader (index in full + the 30 newest pages, Nemsy's
defaults) delivers: exact cl100k tokens of the context and of the whole query request (with the system
prompt at upstream's size), the index's share of the request, duplicate index entries, how many
of the wiki's facts a query can still see, and how many loaded pages are generated answers.
"""

from pydantic import Field

from sim.scenario import Context, main
from sim.scenario import Params as BaseParams
from sim.text import extract_facts, fact_token
from sim.tokens import count_tokens
from systems.nemsy.drivers import VALUES
from systems.nemsy.model import INDEX_FILE, QUERY_PAGES, Nemsy, index_stems, load_wiki_context
from systems.nemsy.policies import FactAnswerer, IngestResponder

SYSTEM = "nemsy"
SEED = 7


class Params(BaseParams):
    """Scenario parameters (defaults are the embedded values)."""

    ingests: int = Field(500, ge=1, le=20_000, description="source ingests")
    queries: int = Field(200, ge=0, le=20_000, description="archived queries")
    ops_per_day: int = Field(25, ge=1, le=10_000, description="operations per simulated day")
    checkpoint: int = Field(100, ge=1, le=40_000, description="print every this many operations")


def run(ctx: Context) -> list[str]:
    p: Params = ctx.params
    sim = ctx.sim
    rng = sim.rng("scenario.nemsy_long_life")
    n = Nemsy(sim, responder=IngestResponder(rng=sim.rng("nemsy.responder")), answerer=FactAnswerer())
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
    next_fact, sources, ingests = 1, 0, 0
    for k, op in enumerate(plan, start=1):
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
            n.write_source(f"src-{i:04d}.md", text)
            n.cli_ingest(f"src-{i:04d}.md")
        else:
            fid = f"FACT-{rng.randrange(1, next_fact):04d}" if next_fact > 1 else "FACT-0001"
            n.query(f"What is {fid} (op {k})?", archive=True)
        sim.env.run(until=sim.now + 86_400 / p.ops_per_day)
        if k % p.checkpoint == 0 or k == total:
            out.append(_row(n, k, sources))
    return out


def _row(n: Nemsy, k: int, sources: int) -> str:
    ctx = load_wiki_context(n, QUERY_PAGES)
    index = n.read_wiki_note(INDEX_FILE) or ""
    stems = index_stems(index)
    tokens = count_tokens(ctx.text)
    request = sum(count_tokens(part) for part in n.query_call("What is FACT-0001?", ctx).parts()[0])
    index_tokens = count_tokens(f"=== {INDEX_FILE} ===\n{index}")
    notes = n.list_wiki_notes()
    src = [p for p in notes if p.startswith("sources/")]
    qry = [p for p in notes if p.startswith("queries/")]
    all_facts: set[str] = set().union(*(extract_facts(n.read_wiki_note(p) or "") for p in src))
    visible = extract_facts("\n".join(c for p, c in ctx.sections if p.startswith("sources/")))
    derived = sum(1 for p in ctx.pages if not p.startswith("sources/"))
    return (
        f"{k:>5} {sources:>7} {len(src):>9} {len(qry):>9} {len(stems):>11} "
        f"{len(stems) - len(set(stems)):>4} {tokens:>10} {request:>10} {index_tokens / request:>11.1%} "
        f"{f'{len(visible & all_facts)}/{len(all_facts)}':>15} {f'{derived}/{len(ctx.pages)}':>17}"
    )


if __name__ == "__main__":
    main(__name__)
