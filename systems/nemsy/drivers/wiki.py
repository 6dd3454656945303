"""Drivers of the Wiki-side claims: the recency window, delete, re-ingest, title collisions, the unbounded
index, derived pages and ambiguous citations (fidelity note §3 items 1-4, 6, 7, 13)."""

from __future__ import annotations

from typing import Any

from sim.claims import Verdict
from sim.engine import Simulation
from sim.variant import Variant
from systems.nemsy import properties as pr
from systems.nemsy.drivers.common import (
    NAMES,
    Example,
    Int,
    ListOf,
    OneOf,
    Ops,
    TupleOf,
    fact,
    fact_id,
    ops_strategy,
    source_text,
    st,
    system,
    tick,
    wiki_pages,
)
from systems.nemsy.model import INDEX_FILE, RAW_DIR, Nemsy, load_wiki_context, sanitize_title


def _resolved(rel: str) -> str:
    return f"/{RAW_DIR}/{rel}"


# -- 1. recency window -----------------------------------------------------------------------------
RECENCY = Example("RecencyExample", sources=Int(1, 6), probe=Int(0, 5), max_files=Int(1, 4))


def recency_strategy() -> Any:
    s = st()
    return s.fixed_dictionaries(
        {"sources": s.integers(1, 6), "probe": s.integers(0, 5), "max_files": s.integers(1, 4)}
    )


def recency_check(sim: Simulation, ex: dict[str, Any], variant: Variant) -> Verdict:
    """Ingest N one-fact sources, then load the query context with max_files pages for the probed fact:
    at most max_files pages, one of them holding the fact."""
    n = system(sim, variant)
    count = ex["sources"]
    probe = ex["probe"] % count
    for i in range(count):
        n.write_source(f"{NAMES[i]}.md", source_text(i))
        n.cli_ingest(f"{NAMES[i]}.md")
        tick(sim)
    question = f"What is {fact_id(probe)}?"
    ctx = load_wiki_context(n, ex["max_files"], query=question)
    n.query(question, wiki_context=ctx)
    return pr.check_relevant_page_loaded(
        dict(ctx.page_sections), wiki_pages(n), fact_id(probe), ex["max_files"]
    )


# -- 2. delete leaves index and ledger -------------------------------------------------------------
DELETE = Example("DeleteExample", sources=Int(1, 3), delete=OneOf(None, 0, 1, 2))


def delete_strategy() -> Any:
    s = st()
    return s.fixed_dictionaries({"sources": s.integers(1, 3), "delete": s.none() | s.integers(0, 2)})


def delete_check(sim: Simulation, ex: dict[str, Any], variant: Variant) -> Verdict:
    """Ingest sources, delete one page (confirmed): it is gone from the Wiki, the index and the ledger;
    after a rescan every index entry resolves and every done record has its page."""
    n = system(sim, variant)
    for i in range(ex["sources"]):
        n.write_source(f"{NAMES[i]}.md", source_text(i))
    n.cli_ingest()
    tick(sim)
    if ex["delete"] is not None:
        rec = n.ledger_record(f"{RAW_DIR}/{NAMES[ex['delete'] % ex['sources']]}.md")
        if rec is not None and rec.wiki_page:
            n.delete_wiki_note(rec.wiki_page, confirmed=True)
            v = pr.check_deleted(
                rec.wiki_page, n.list_wiki_notes(), n.read_wiki_note(INDEX_FILE), n.load_ingest_log()
            )
            if not v.holds:
                return v
    tick(sim)
    n.cli_ingest()
    notes = n.list_wiki_notes()
    v = pr.check_index_entries_resolve(n.read_wiki_note(INDEX_FILE), notes)
    return v if not v.holds else pr.check_done_records_have_pages(n.load_ingest_log(), notes)


# -- 3. duplicate index entries on re-ingest -------------------------------------------------------
REINGEST = Ops(("ingest", Int(0, 1)), ("edit", Int(0, 1)), ("force", Int(0, 1)), ("day",), max_length=6)


def reingest_strategy() -> Any:
    return ops_strategy(REINGEST)


def _run_source_ops(sim: Simulation, n: Nemsy, ops: list[list[Any]]) -> set[str]:
    versions: dict[int, int] = {}
    ingested: set[str] = set()
    for i in range(2):
        n.write_source(f"{NAMES[i]}.md", source_text(i))
    for op in ops:
        kind = op[0]
        if kind == "day":
            tick(sim, 86_400)
            continue
        i = op[1]
        if kind == "edit":
            versions[i] = versions.get(i, 0) + 1
            n.write_source(f"{NAMES[i]}.md", source_text(i, versions[i]))
        elif kind in ("ingest", "force"):
            n.cli_ingest(f"{NAMES[i]}.md", force=kind == "force")
            ingested.add(_resolved(f"{NAMES[i]}.md"))
        tick(sim)
    return ingested


def reingest_check(sim: Simulation, ops: list[list[Any]], variant: Variant) -> Verdict:
    """CLI ingest / edit / force / next day on two sources: each ingested source has one page listed
    exactly once, and no page is listed twice."""
    n = system(sim, variant)
    ingested = _run_source_ops(sim, n, ops)
    index = n.read_wiki_note(INDEX_FILE)
    v = pr.check_unique_index_entries(index)
    if not v.holds:
        return v
    v = pr.check_ingested_sources_listed_once(
        index, n.list_wiki_notes(), n.load_ingest_log(), sorted(ingested)
    )
    if not v.holds:
        return v
    return pr.check_one_page_per_source(n.list_wiki_notes(), {NAMES[i]: NAMES[i] for i in range(2)})


# -- 4. same-day title collision -------------------------------------------------------------------
COLLIDING_PATHS = (
    "d1/notes.md",
    "d2/notes.md",
    "C++ Notes.md",
    "C# Notes.md",
    "A B.md",
    "A: B.md",
    "x.md",
    "xmd.md",
    "report.txt",
)
COLLISION = ListOf(OneOf(*COLLIDING_PATHS), max_length=4, min_length=1)


def collision_strategy() -> Any:
    s = st()
    return s.lists(s.sampled_from(COLLIDING_PATHS), min_size=1, max_size=4, unique=True)


def collision_check(sim: Simulation, paths: list[str], variant: Variant) -> Verdict:
    """Ingest each drawn source once, the same day: each has a done record whose page holds its fact, and
    distinct sources ↔ distinct pages ↔ one entry each."""
    n = system(sim, variant)
    for k, p in enumerate(paths):
        n.write_source(p, f"Source {p}: {fact(k)}.")
        n.cli_ingest(p)
        tick(sim)
    expected = {_resolved(p): fact_id(k) for k, p in enumerate(paths)}
    return pr.check_distinct_sources_distinct_pages(
        n.load_ingest_log(), n.list_wiki_notes(), n.read_wiki_note(INDEX_FILE), expected, n.read_wiki_note
    )


def sanitized_summary(paths: list[str]) -> str:
    return ", ".join(f"{p} -> {sanitize_title(p.rsplit('/', 1)[-1].rsplit('.', 1)[0])}" for p in paths)


# -- 6. the unbounded index defeats the page budget ------------------------------------------------
INDEX = Example(
    "IndexExample",
    ops=ListOf(OneOf("ingest", "archive"), max_length=10),
    max_files=Int(0, 2),
    budget=Int(400, 1600),
)


def index_strategy() -> Any:
    s = st()
    return s.fixed_dictionaries(
        {
            "ops": s.lists(s.sampled_from(["ingest", "archive"]), max_size=10),
            "max_files": s.integers(0, 2),
            "budget": s.integers(400, 1600),
        }
    )


def index_check(sim: Simulation, ex: dict[str, Any], variant: Variant) -> Verdict:
    """Ingests and archived queries, then a load with a shared character budget (the fix's knob): it fits
    and still carries the newest page (or, with no pages, the newest index entry)."""
    n = system(sim, variant, context_chars=ex["budget"])
    for k, kind in enumerate(ex["ops"]):
        if kind == "ingest":
            n.write_source(f"s{k}.md", f"Source {k}: {fact(k)}.")
            n.cli_ingest(f"s{k}.md")
        else:
            n.query(f"What do we know about FACT-{k:04d}?", archive=True, max_files=ex["max_files"])
        tick(sim)
    ctx = load_wiki_context(n, ex["max_files"])
    newest = n.pages.newest(1)
    page = (newest[0], n.read_wiki_note(newest[0]) or "") if newest else None
    lines = (n.read_wiki_note(INDEX_FILE) or "").splitlines(keepends=True)
    return pr.check_context_serves_budget(
        ctx.text, ex["budget"], page, lines[-1] if lines else None, ex["max_files"]
    )


# -- 7. generated answers feed future answers ------------------------------------------------------
DERIVED = Example(
    "DerivedExample",
    sources=Int(1, 2),
    archive=bool,
    edit=OneOf("none", "value", "drop"),
    reingest=bool,
    next_day=bool,
)


def derived_strategy() -> Any:
    s = st()
    return s.fixed_dictionaries(
        {
            "sources": s.integers(1, 2),
            "archive": s.booleans(),
            "edit": s.sampled_from(["none", "value", "drop"]),
            "reingest": s.booleans(),
            "next_day": s.booleans(),
        }
    )


def derived_check(sim: Simulation, ex: dict[str, Any], variant: Variant) -> Verdict:
    """Ingest; ask about fact 1 (maybe archiving: the page is written); edit its source (change or withdraw
    the fact); maybe re-ingest (maybe the next day); ask again: both answers state what the current source
    pages hold."""
    n = system(sim, variant)
    for i in range(ex["sources"]):
        n.write_source(f"{NAMES[i]}.md", source_text(i))
    n.cli_ingest()
    tick(sim)
    question = f"What is {fact_id(0)}?"
    first = n.query(question, archive=ex["archive"])
    if ex["archive"] and n.read_wiki_note(n.query_page_name(question)) is None:
        return Verdict.violated("query -a wrote no archived page")
    v = pr.check_answer_current(first, fact_id(0), wiki_pages(n, "sources/"))
    if not v.holds:
        return v
    tick(sim, 86_400 if ex["next_day"] else 1)
    if ex["edit"] != "none":
        text = source_text(0, 1) if ex["edit"] == "value" else f"Notes about {NAMES[0]}: withdrawn."
        n.write_source(f"{NAMES[0]}.md", text)
    if ex["reingest"]:
        n.cli_ingest()
    tick(sim)
    second = n.query(question)
    return pr.check_answer_current(second, fact_id(0), wiki_pages(n, "sources/"))


# -- 13. ambiguous citation ------------------------------------------------------------------------
FOLDERS = ("sources", "queries", "insights")
STEMS = ("foo-d", "FOO-d", "Foo-d", "bar-d")
CITES = ("foo-d", "FOO-D.md", "bar-d")
CITATION = Example(
    "CitationExample",
    pages=ListOf(TupleOf(OneOf(*FOLDERS), OneOf(*STEMS)), max_length=3, min_length=1),
    cite=OneOf(*CITES),
)


def citation_strategy() -> Any:
    s = st()
    page = s.tuples(s.sampled_from(FOLDERS), s.sampled_from(STEMS))
    return s.fixed_dictionaries(
        {
            "pages": s.lists(page.map(list), min_size=1, max_size=3, unique_by=lambda p: tuple(p)),
            "cite": s.sampled_from(CITES),
        }
    )


def citation_check(sim: Simulation, ex: dict[str, Any], variant: Variant) -> Verdict:
    """Write the drawn pages, resolve the citation: the one note it names, and none when several qualify."""
    n = system(sim, variant)
    for folder, stem in ex["pages"]:
        n.write_wiki_note(f"{folder}/{stem}.md", f"# {stem}")
    return pr.check_citation_names_its_page(n.resolve(ex["cite"]), ex["cite"])
