"""Same-day title collisions: distinct sources share one page while the index aliases one stem.

Covers: MEM-OBJ-source-page, MEM-OBJ-wiki-index, MEM-OBJ-ingest-log, MEM-RTE-browser-read
(claim nemsy.title-collision).

Scenario: on one day a user ingests four sources: ``d1/C++ Notes.md`` and ``d2/C# Notes.md`` (both
sanitize to ``C-Notes``), then ``d1/notes.md`` and ``d2/notes.md`` (equal stems in different folders).
Each later one overwrites the earlier page. The index gets four lines for two stems; all four ledger
records say ``done``, so a rescan never rebuilds the lost summaries; a query for an overwritten fact
gets "暂无". The injective-names fix (sanitized title + a short hash of the source path) keeps four pages.
"""

import json

from sim.engine import Simulation
from sim.scenario import Context, main
from sim.text import extract_facts, fact_token
from sim.variant import FAITHFUL, Variant
from systems.nemsy.design import DESIGN
from systems.nemsy.model import INDEX_FILE, RAW_DIR, Nemsy, index_stems
from systems.nemsy.policies import FactAnswerer, IngestResponder
from systems.nemsy.state import FIX_INJECTIVE_NAMES

SYSTEM = "nemsy"
SEED = 3
SOURCES = ("d1/C++ Notes.md", "d2/C# Notes.md", "d1/notes.md", "d2/notes.md")


def _session(sim: Simulation, variant: Variant, label: str) -> list[str]:
    n = Nemsy(sim, variant=variant, responder=IngestResponder(), answerer=FactAnswerer())
    out = []
    for k, rel in enumerate(SOURCES):
        n.write_source(rel, f"Notes from {rel}: {fact_token(k + 1, 'amber')}.")
        page = n.cli_ingest(rel)[0].page
        out.append(f"[{label}] ingest {rel!r} -> {page}")
        sim.env.run(until=sim.now + 60)
    sources = [p for p in n.list_wiki_notes() if p.startswith("sources/")]
    stems = index_stems(n.read_wiki_note(INDEX_FILE) or "")
    kept = sorted(extract_facts("".join(n.read_wiki_note(p) or "" for p in sources)))
    out.append(f"[{label}] source pages: {len(sources)}; facts kept: {', '.join(kept)}")
    out.append(f"[{label}] index lines: {len(stems)} for {len(set(stems))} distinct stems")
    lines = (n.read_wiki_note(INDEX_FILE) or "").splitlines()
    aliases = [ln.split(" — ")[1].rsplit(" （", 1)[0] for ln in lines if ln.startswith(f"- [[{stems[0]}]]")]
    out.append(f"[{label}] [[{stems[0]}]] is listed as: {' | '.join(aliases)}")
    statuses = [n.ledger_record(f"{RAW_DIR}/{rel}").status for rel in SOURCES]  # type: ignore[union-attr]
    rescan = n.cli_ingest(recursive=True)
    out.append(f"[{label}] ledger: {statuses}; rescan ingests {sum(o.action == 'ingested' for o in rescan)}")
    out.append(f"[{label}] query FACT-0001 -> {n.query('What is FACT-0001?').splitlines()[0]}")
    res = n.resolve(stems[0])
    out.append(f"[{label}] resolve {stems[0]!r} -> {res.path} ({len(res.candidates)} candidate)")
    reqs = sim.trace.data.requests
    by_kind: dict[str, int] = {}
    for r in reqs:
        for k, v in json.loads(r.detail)["tokens_by_kind"].items():
            by_kind[k] = by_kind.get(k, 0) + v
    kinds = ", ".join(f"{k} {v}" for k, v in sorted(by_kind.items(), key=lambda kv: -kv[1]))
    out.append(f"[{label}] {len(reqs)} model requests, {sum(r.exact_tokens for r in reqs)} tokens: {kinds}")
    return out


def run(ctx: Context) -> list[str]:
    out = _session(ctx.sim, FAITHFUL, "faithful")
    with Simulation(ctx.sim.seed) as sim:
        out += _session(sim, DESIGN.switches.fixed(FIX_INJECTIVE_NAMES), "injective-names")
    return out


if __name__ == "__main__":
    main(__name__)
