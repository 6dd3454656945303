"""Nemsy's recency window drops the page that answers the question; only its index line survives.

Covers: RT-RTE-wiki-answer, RT-BAP-wiki-context, MEM-OBJ-wiki-index (claim nemsy.recency-window).

Scenario: a user ingests one source holding FACT-0001, then 30 newer sources (one a minute), then asks
for FACT-0001. The query loader sends the whole index plus the 30 newest pages (Nemsy's default), so the
relevant page is the 31st newest and never reaches the model; the answer is "Wiki 中暂无此内容" although
the index still names the page. Each query request is shown by kind (the system prompt is the stand-in
padded to upstream's 680 cl100k tokens at the model's Wiki path). With one newer source less, the page
is loaded. The relevance-selection fix ranks pages by the question's terms first and finds it in the
same wiki.
"""

import json

from pydantic import Field

from sim.engine import Simulation
from sim.scenario import Context, main
from sim.scenario import Params as BaseParams
from sim.text import fact_token
from sim.variant import FAITHFUL, Variant
from systems.nemsy.design import DESIGN
from systems.nemsy.model import INDEX_FILE, QUERY_PAGES, Nemsy, index_stems, load_wiki_context
from systems.nemsy.policies import FactAnswerer, IngestResponder
from systems.nemsy.state import FIX_RELEVANCE

SYSTEM = "nemsy"
SEED = 11


class Params(BaseParams):
    """Scenario parameters (defaults are the embedded values)."""

    newer: int = Field(QUERY_PAGES, ge=0, le=2_000, description="sources ingested after the relevant one")
    step_s: float = Field(60.0, gt=0, le=86_400.0, description="seconds between ingests")


def _wiki(sim: Simulation, variant: Variant, newer: int, step_s: float) -> Nemsy:
    n = Nemsy(sim, variant=variant, responder=IngestResponder(), answerer=FactAnswerer())
    rng = sim.rng("scenario.nemsy_recency_window")
    n.write_source("pricing-notes.md", f"Pricing notes. The agreed discount is {fact_token(1, 'amber')}.")
    n.cli_ingest("pricing-notes.md")
    for i in range(newer):
        sim.env.run(until=sim.now + step_s)
        fact = fact_token(i + 2, rng.choice(["teal", "ruby"]))
        n.write_source(f"later-{i:02d}.md", f"Later note {i}: {fact}.")
        n.cli_ingest(f"later-{i:02d}.md")
    sim.env.run(until=sim.now + step_s)
    return n


def _ask(n: Nemsy, label: str) -> list[str]:
    question = "What is FACT-0001?"
    answer = n.query(question)
    req = n.sim.trace.data.requests[-1]
    kinds = json.loads(req.detail)["tokens_by_kind"]
    ctx = load_wiki_context(n, QUERY_PAGES, query=question)
    page = "sources/pricing-notes-2026-01-05.md"
    stems = index_stems(n.read_wiki_note(INDEX_FILE) or "")
    return [
        f"[{label}] wiki: {len(n.list_wiki_notes()) - 2} pages, index {len(stems)} lines, "
        f"'pricing-notes-2026-01-05' in index: {'pricing-notes-2026-01-05' in stems}",
        f"[{label}] query context: index + {len(ctx.pages)} pages, {req.exact_tokens} tokens, "
        f"relevant page loaded: {page in ctx.pages}, facts delivered: {len(req.fact_ids)}, "
        f"FACT-0001 among them: {'FACT-0001' in req.fact_ids}",
        f"[{label}] query request by kind: "
        + ", ".join(f"{k} {v}" for k, v in sorted(kinds.items(), key=lambda kv: -kv[1])),
        f"[{label}] answer: {answer.splitlines()[0]}",
    ]


def run(ctx: Context) -> list[str]:
    p: Params = ctx.params
    out = [f"1 relevant source, then {p.newer} newer sources; query window {QUERY_PAGES} pages + index"]
    out += _ask(_wiki(ctx.sim, FAITHFUL, p.newer, p.step_s), "faithful")
    fewer = max(0, p.newer - 1)
    with Simulation(ctx.sim.seed) as sim:
        out += _ask(_wiki(sim, FAITHFUL, fewer, p.step_s), f"faithful, {fewer} newer")
    with Simulation(ctx.sim.seed) as sim:
        out += _ask(
            _wiki(sim, DESIGN.switches.fixed(FIX_RELEVANCE), p.newer, p.step_s), "relevance-selection"
        )
    return out


if __name__ == "__main__":
    main(__name__)
