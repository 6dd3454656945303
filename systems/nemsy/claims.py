"""Nemsy's claimed failure modes (fidelity note §3, items 1–15), each with the minimal fix as a switch.

Two items list several distinct defects, and each gets its own claim so that each one's shrunk
counterexample is shown: item 10 (the mtime/hash status split) as ``status-split-touch``,
``status-split-backdated`` and ``status-split-blank``, the three mismatches of §2.8, which together are
every way the two statuses can disagree; item 12 (parser quirks) as ``parser-lost-sections``,
``parser-stray-hash``, ``parser-md-fence`` and ``parser-empty-summary``, each with its own one-quirk fix.

Every claim drives a tiny Wiki (a handful of sources, small limits passed as parameters where upstream
has a constant) through the real model operations and checks one invariant from
:mod:`systems.nemsy.properties`. The faithful design must fail it somewhere in the drawn space; the named
fix must hold everywhere in the same space. Examples are plain JSON (dicts and lists).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sim.claims import FAITHFUL, Claim, Verdict
from sim.engine import Simulation
from sim.text import fact_token
from systems.nemsy import properties as pr
from systems.nemsy.model import (
    INDEX_FILE,
    LOG_FILE,
    RAW_DIR,
    Nemsy,
    parse_ingest_response_with,
    sanitize_title,
)
from systems.nemsy.policies import RESPONSE_FAULTS, FactAnswerer, IngestResponder, InsightRewriter
from systems.nemsy.state import (
    FIX_BOUNDED_INDEX,
    FIX_DELETE_SYNC,
    FIX_HASH_STATUS,
    FIX_INDEX_UPSERT,
    FIX_INJECTIVE_NAMES,
    FIX_INVALIDATE_DERIVED,
    FIX_LEDGER_BACKUP,
    FIX_LEDGER_FAILED,
    FIX_PARSER_ANY_FENCE,
    FIX_PARSER_ANY_LEVEL,
    FIX_PARSER_REJECT_EMPTY,
    FIX_PARSER_SECTION_ONLY,
    FIX_REASON_ARCHIVE,
    FIX_RELEVANCE,
    FIX_RELOAD_SNAPSHOT,
    FIX_SAVE_EVICTED,
    FIX_UNIQUE_RESOLVE,
    FIX_WEB_FLAGS,
    Message,
    Variant,
)

SYSTEM = "nemsy"
VALUES = ("amber", "teal", "ruby", "jade", "navy", "plum")
NAMES = ("alpha", "beta", "gamma", "delta", "omega", "sigma", "kappa", "theta")


def _st() -> Any:
    from hypothesis import strategies as st

    return st


def _variant(variant: str, fix: str, **kw: Any) -> Variant:
    return Variant() if variant == FAITHFUL else Variant.with_fix(fix, **kw)


def _system(sim: Simulation, variant: str, fix: str, **kw: Any) -> Nemsy:
    responder = kw.pop("responder", None) or IngestResponder()
    return Nemsy(
        sim,
        variant=_variant(variant, fix, **{k: v for k, v in kw.items() if k == "context_chars"}),
        responder=responder,
        answerer=FactAnswerer(),
        rewriter=InsightRewriter(),
    )


def tick(sim: Simulation, seconds: float = 1.0) -> None:
    """Advance simulated time (so later writes have later mtimes)."""
    sim.env.run(until=sim.now + seconds)


def _fact(i: int, v: int = 0) -> str:
    return fact_token(i + 1, VALUES[v % len(VALUES)])


def _source_text(i: int, v: int = 0) -> str:
    return f"Notes about {NAMES[i]}: {_fact(i, v)} and nothing else."


def _wiki_pages(n: Nemsy, prefix: str = "") -> dict[str, str]:
    return {
        p: n.read_wiki_note(p) or ""
        for p in n.list_wiki_notes()
        if p not in (INDEX_FILE, LOG_FILE) and p.startswith(prefix)
    }


def _guard(check: Callable[[Simulation, Any, str], Verdict]) -> Callable[[Simulation, Any, str], Verdict]:
    """Turn an unexpected exception into a violation (a check never raises)."""

    def run(sim: Simulation, example: Any, variant: str) -> Verdict:
        try:
            return check(sim, example, variant)
        except Exception as exc:  # a check must not raise
            return Verdict.violated(f"raised {type(exc).__name__}: {exc}")

    run.__doc__ = check.__doc__
    return run


# -- 1. recency window -----------------------------------------------------------------------------
def _recency_strategy() -> Any:
    st = _st()
    return st.fixed_dictionaries(
        {"sources": st.integers(1, 6), "probe": st.integers(0, 5), "max_files": st.integers(1, 4)}
    )


def _recency_check(sim: Simulation, ex: dict[str, Any], variant: str) -> Verdict:
    """Ingest N one-fact sources, then load the query context with max_files pages for the probed fact."""
    n = _system(sim, variant, FIX_RELEVANCE)
    count = ex["sources"]
    probe = ex["probe"] % count
    for i in range(count):
        n.write_source(f"{NAMES[i]}.md", _source_text(i))
        n.cli_ingest(f"{NAMES[i]}.md")
        tick(sim)
    question = f"What is FACT-{probe + 1:04d}?"
    ctx = n._load_wiki_context(ex["max_files"], query=question)
    n.query(question, wiki_context=ctx)
    return pr.check_relevant_page_loaded(
        dict(s for s in ctx.sections if s[0] != INDEX_FILE),
        _wiki_pages(n),
        f"FACT-{probe + 1:04d}",
        ex["max_files"],
    )


# -- 2. delete leaves index and ledger -------------------------------------------------------------
def _delete_strategy() -> Any:
    st = _st()
    return st.fixed_dictionaries({"sources": st.integers(1, 3), "delete": st.none() | st.integers(0, 2)})


def _delete_check(sim: Simulation, ex: dict[str, Any], variant: str) -> Verdict:
    """Ingest sources, delete one page (confirmed), rescan: index entries resolve, done records have pages."""
    n = _system(sim, variant, FIX_DELETE_SYNC)
    for i in range(ex["sources"]):
        n.write_source(f"{NAMES[i]}.md", _source_text(i))
    n.cli_ingest()
    tick(sim)
    if ex["delete"] is not None:
        rec = n.ledger_record(f"{RAW_DIR}/{NAMES[ex['delete'] % ex['sources']]}.md")
        if rec is not None and rec.wiki_page:
            n.delete_wiki_note(rec.wiki_page, confirmed=True)
    tick(sim)
    n.cli_ingest()
    notes = n.list_wiki_notes()
    v = pr.check_index_entries_resolve(n.read_wiki_note(INDEX_FILE), notes)
    return v if not v.holds else pr.check_done_records_have_pages(n.load_ingest_log(), notes)


# -- 3. duplicate index entries on re-ingest -------------------------------------------------------
def _reingest_strategy() -> Any:
    st = _st()
    op = st.one_of(
        st.tuples(st.just("ingest"), st.integers(0, 1)),
        st.tuples(st.just("edit"), st.integers(0, 1)),
        st.tuples(st.just("force"), st.integers(0, 1)),
        st.tuples(st.just("day")),
    ).map(list)
    return st.lists(op, max_size=6)


def _run_source_ops(sim: Simulation, n: Nemsy, ops: list[list[Any]]) -> None:
    versions: dict[int, int] = {}
    for i in range(2):
        n.write_source(f"{NAMES[i]}.md", _source_text(i))
    for op in ops:
        kind = op[0]
        if kind == "day":
            tick(sim, 86_400)
            continue
        i = op[1]
        if kind == "edit":
            versions[i] = versions.get(i, 0) + 1
            n.write_source(f"{NAMES[i]}.md", _source_text(i, versions[i]))
        elif kind in ("ingest", "force"):
            n.cli_ingest(f"{NAMES[i]}.md", force=kind == "force")
        tick(sim)


def _reingest_check(sim: Simulation, ops: list[list[Any]], variant: str) -> Verdict:
    """CLI ingest / edit / force / next day on two sources: one index entry and one page per source."""
    n = _system(sim, variant, FIX_INDEX_UPSERT)
    _run_source_ops(sim, n, ops)
    v = pr.check_unique_index_entries(n.read_wiki_note(INDEX_FILE))
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


def _collision_strategy() -> Any:
    st = _st()
    return st.lists(st.sampled_from(COLLIDING_PATHS), min_size=1, max_size=4, unique=True)


def _collision_check(sim: Simulation, paths: list[str], variant: str) -> Verdict:
    """Ingest each drawn source once, the same day: distinct sources ↔ distinct pages ↔ one entry each."""
    n = _system(sim, variant, FIX_INJECTIVE_NAMES)
    for k, p in enumerate(paths):
        n.write_source(p, f"Source {p}: {_fact(k)}.")
        n.cli_ingest(p)
        tick(sim)
    return pr.check_distinct_sources_distinct_pages(
        n.load_ingest_log(), n.list_wiki_notes(), n.read_wiki_note(INDEX_FILE)
    )


# -- 5. ledger done without (a current) page -------------------------------------------------------
def _ledger_strategy() -> Any:
    st = _st()
    op = st.one_of(
        st.tuples(st.just("ingest"), st.integers(0, 1), st.sampled_from(RESPONSE_FAULTS)),
        st.tuples(st.just("edit"), st.integers(0, 1)),
    ).map(list)
    return st.lists(op, max_size=5)


def _ledger_check(sim: Simulation, ops: list[list[Any]], variant: str) -> Verdict:
    """Ingests whose replies may lack the SUMMARY marker: a ``done`` record needs a page from its hash."""
    responder = IngestResponder()
    n = _system(sim, variant, FIX_LEDGER_FAILED, responder=responder)
    versions = [0, 0]
    for i in range(2):
        n.write_source(f"{NAMES[i]}.md", _source_text(i))
    for op in ops:
        if op[0] == "edit":
            versions[op[1]] += 1
            n.write_source(f"{NAMES[op[1]]}.md", _source_text(op[1], versions[op[1]]))
        else:
            responder.fault = op[2]
            n.cli_ingest(f"{NAMES[op[1]]}.md")
        tick(sim)
    return pr.check_done_records_have_pages(n.load_ingest_log(), n.list_wiki_notes(), n.page_source_hash)


# -- 6. the unbounded index defeats the page budget ------------------------------------------------
def _index_strategy() -> Any:
    st = _st()
    return st.fixed_dictionaries(
        {
            "ops": st.lists(st.sampled_from(["ingest", "archive"]), max_size=10),
            "max_files": st.integers(0, 2),
            "budget": st.integers(400, 1600),
        }
    )


def _index_check(sim: Simulation, ex: dict[str, Any], variant: str) -> Verdict:
    """Ingests and archived queries, then a load with a shared character budget (the fix's knob)."""
    n = _system(sim, variant, FIX_BOUNDED_INDEX, context_chars=ex["budget"])
    for k, kind in enumerate(ex["ops"]):
        if kind == "ingest":
            n.write_source(f"s{k}.md", f"Source {k}: {_fact(k)}.")
            n.cli_ingest(f"s{k}.md")
        else:
            n.query(f"What do we know about FACT-{k:04d}?", archive=True, max_files=ex["max_files"])
        tick(sim)
    ctx = n._load_wiki_context(ex["max_files"])
    return pr.check_context_within(ctx.text, ex["budget"], ctx.index_chars)


# -- 7. generated answers feed future answers ------------------------------------------------------
def _derived_strategy() -> Any:
    st = _st()
    return st.fixed_dictionaries(
        {
            "sources": st.integers(1, 2),
            "archive": st.booleans(),
            "edit": st.sampled_from(["none", "value", "drop"]),
            "reingest": st.booleans(),
            "next_day": st.booleans(),
        }
    )


def _derived_check(sim: Simulation, ex: dict[str, Any], variant: str) -> Verdict:
    """Ingest; ask about fact 1 (maybe archiving); edit its source (change or withdraw the fact); maybe
    re-ingest (maybe the next day); ask again: both answers agree with the current source pages."""
    n = _system(sim, variant, FIX_INVALIDATE_DERIVED)
    for i in range(ex["sources"]):
        n.write_source(f"{NAMES[i]}.md", _source_text(i))
    n.cli_ingest()
    tick(sim)
    question = "What is FACT-0001?"
    first = n.query(question, archive=ex["archive"])
    v = pr.check_answer_supported(first, "FACT-0001", _wiki_pages(n, "sources/"))
    if not v.holds:
        return v
    tick(sim, 86_400 if ex["next_day"] else 1)
    if ex["edit"] != "none":
        text = _source_text(0, 1) if ex["edit"] == "value" else f"Notes about {NAMES[0]}: withdrawn."
        n.write_source(f"{NAMES[0]}.md", text)
    if ex["reingest"]:
        n.cli_ingest()
    tick(sim)
    second = n.query(question)
    return pr.check_answer_supported(second, "FACT-0001", _wiki_pages(n, "sources/"))


# -- 8. stale CLI chat snapshot --------------------------------------------------------------------
def _snapshot_strategy() -> Any:
    st = _st()
    op = st.one_of(
        st.tuples(st.just("ingest"), st.integers(0, 2)),
        st.tuples(st.just("turn"), st.integers(0, 2)),
        st.tuples(st.just("query-a"), st.integers(0, 2)),
        st.tuples(st.just("save")),
    ).map(list)
    return st.lists(op, max_size=6)


def _snapshot_check(sim: Simulation, ops: list[list[Any]], variant: str) -> Verdict:
    """A chat session with /ingest, /query -a and /save between turns: each turn sees a fresh Wiki."""
    n = _system(sim, variant, FIX_RELOAD_SNAPSHOT)
    for i in range(3):
        n.write_source(f"{NAMES[i]}.md", _source_text(i))
    session = n.chat_session(max_files=3)
    for op in ops:
        if op[0] == "ingest":
            session.command(f"/ingest {NAMES[op[1]]}.md")
        elif op[0] == "query-a":
            session.command(f"/query What is FACT-{op[1] + 1:04d}? -a")
        elif op[0] == "save":
            session.command("/save")
        else:
            used = session.context().text
            fresh = n._load_wiki_context(3).text
            v = pr.check_snapshot_fresh(used, fresh)
            if not v.holds:
                return v
            session.say(f"What is FACT-{op[1] + 1:04d}?")
        tick(sim)
    return Verdict.ok()


# -- 9. trimming loses history ---------------------------------------------------------------------
def _trim_strategy() -> Any:
    st = _st()
    return st.fixed_dictionaries({"max_turns": st.integers(0, 3), "turns": st.integers(1, 5)})


def _trim_check(sim: Simulation, ex: dict[str, Any], variant: str) -> Verdict:
    """Each turn states one fact; the last turn's request must still carry every earlier fact."""
    n = _system(sim, variant, FIX_SAVE_EVICTED)
    session = n.chat_session(max_turns=ex["max_turns"])
    stated: list[str] = []
    for t in range(ex["turns"]):
        session.say(f"Remember {_fact(t)}.")
        stated.append(f"FACT-{t + 1:04d}")
        tick(sim)
    session.say("What did I tell you first?")
    return pr.check_request_has_facts(sim.trace.data.requests[-1].fact_ids, stated)


# -- 10. mtime/hash status split -------------------------------------------------------------------
def _status_strategy() -> Any:
    st = _st()
    op = st.one_of(
        st.tuples(st.just("write"), st.sampled_from(["text", "edit", "blank", "empty"])),
        st.tuples(st.just("ingest")),
        st.tuples(st.just("touch")),
        st.tuples(st.just("backdate")),
    ).map(list)
    return st.lists(op, max_size=5)


StatusCheck = Callable[[str, str], Verdict]


def _status_run(sim: Simulation, ops: list[list[Any]], variant: str, check: StatusCheck) -> Verdict:
    """Write / ingest / touch / back-date one source; after each step compare CLI and display status."""
    n = _system(sim, variant, FIX_HASH_STATUS)
    rel, path = "alpha.md", f"{RAW_DIR}/alpha.md"
    n.write_source(rel, _source_text(0))
    edits = 0
    for op in ops:
        if op[0] == "write":
            edits += 1
            texts = {"text": _source_text(0), "edit": _source_text(0, edits), "blank": "  \n", "empty": ""}
            n.write_source(rel, texts[op[1]])
        elif op[0] == "ingest":
            n.cli_ingest(rel)
        elif op[0] == "touch":
            n.touch_source(rel)
        else:
            edits += 1
            n.write_source(rel, _source_text(0, edits), mtime=n.clock.seconds() - 3600.0)
        tick(sim)
        v = check(n.get_file_status(path, n.tree.read_text(path)), n.display_status(path))
        if not v.holds:
            return Verdict.violated(f"after {op}: {v.detail}")
    return Verdict.ok()


def _status_touch_check(sim: Simulation, ops: list[list[Any]], variant: str) -> Verdict:
    """After each step the display shows ``changed`` only for a file the CLI would re-ingest."""
    return _status_run(sim, ops, variant, pr.check_display_not_falsely_changed)


def _status_backdated_check(sim: Simulation, ops: list[list[Any]], variant: str) -> Verdict:
    """After each step the display shows ``done`` only for a file the CLI finds ingested."""
    return _status_run(sim, ops, variant, pr.check_display_not_falsely_done)


def _status_blank_check(sim: Simulation, ops: list[list[Any]], variant: str) -> Verdict:
    """After each step the CLI and the display agree on whether the file is empty."""
    return _status_run(sim, ops, variant, pr.check_emptiness_agrees)


def _status_summary(ops: list[list[Any]]) -> str:
    words = {
        "ingest": "ingest",
        "touch": "touch (same bytes, newer mtime)",
        "backdate": "edit with an mtime 1 h in the past",
    }
    texts = {"text": "the original text", "edit": "an edited text", "blank": "'  \\n'", "empty": "''"}
    steps = [f"write {texts[op[1]]}" if op[0] == "write" else words[op[0]] for op in ops]
    return "alpha.md written, then " + ", ".join(steps) if steps else "alpha.md written"


# -- 11. corrupt ledger resets everything ----------------------------------------------------------
CORRUPTIONS = (None, "{not json", "[]", '{"version": 1, "files": {}}')


def _corrupt_strategy() -> Any:
    st = _st()
    return st.fixed_dictionaries({"sources": st.integers(1, 3), "corrupt": st.sampled_from(CORRUPTIONS)})


def _corrupt_check(sim: Simulation, ex: dict[str, Any], variant: str) -> Verdict:
    """Ingest everything, (maybe) corrupt the ledger, scan again: no unchanged source is re-ingested."""
    n = _system(sim, variant, FIX_LEDGER_BACKUP)
    for i in range(ex["sources"]):
        n.write_source(f"{NAMES[i]}.md", _source_text(i))
    n.cli_ingest()
    tick(sim)
    if ex["corrupt"] is not None:
        n.corrupt_ingest_log(ex["corrupt"])
    before = n.calls["ingest"]
    n.cli_ingest()
    return pr.check_no_spurious_reingest(before, n.calls["ingest"], ex["sources"])


# -- 12. parser quirks -----------------------------------------------------------------------------
def _parser_strategy() -> Any:
    st = _st()
    return st.fixed_dictionaries(
        {
            "sections": st.lists(st.sampled_from(["##", "###"]), max_size=3),
            "embedded": st.sampled_from([None, "## bare", "## ruled", "### bare", "### ruled", "## 列表"]),
            "at": st.integers(0, 3),
            "fence": st.sampled_from(["none", "bare", "markdown", "md"]),
            "questions": st.booleans(),
        }
    )


def build_response(ex: dict[str, Any]) -> tuple[str, list[str], bool]:
    """The model reply of a parser example, the facts the page must keep, and whether the summary has
    content ahead of any questions heading (a section, or a kept ``## 待探索问题列表`` heading)."""
    blocks: list[str] = []
    facts: list[str] = []
    lead = bool(ex["sections"])
    for k, level in enumerate(ex["sections"]):
        blocks.append(f"{level} Part {k}\n\n{_fact(k)}")
        facts.append(f"FACT-{k + 1:04d}")
    if ex["embedded"] is not None:
        level, kind = ex["embedded"].split(" ")
        heading = f"{level} 待探索问题列表" if kind == "列表" else f"{level} 待探索问题"
        block = f"{heading}\n\n- 还有什么？"
        if kind == "ruled":
            block = "---\n\n" + block
        blocks.insert(min(ex["at"], len(blocks)), block)
        lead = kind == "列表" or min(ex["at"], len(ex["sections"])) > 0
    summary = "\n\n".join(blocks)
    if summary and ex["fence"] != "none":
        info = {"bare": "", "markdown": "markdown", "md": "md"}[ex["fence"]]
        summary = f"```{info}\n{summary}\n```"
    text = f"---SUMMARY---\n{summary}\n"
    if ex["questions"]:
        text += "---QUESTIONS---\n- 下一步？\n"
    return text, facts, lead


ParserCheck = Callable[[str | None, list[str], bool], Verdict]


def _parser_run(ex: dict[str, Any], variant: str, fix: str, check: ParserCheck) -> Verdict:
    text, facts, has_content = build_response(ex)
    fixes = frozenset() if variant == FAITHFUL else frozenset({fix})
    return check(parse_ingest_response_with(text, fixes), facts, has_content)


def _parser_sections_check(sim: Simulation, ex: dict[str, Any], variant: str) -> Verdict:
    """Parse a drawn reply: the facts of every non-question section survive."""
    return _parser_run(ex, variant, FIX_PARSER_SECTION_ONLY, lambda r, f, c: pr.check_sections_kept(r, f))


def _parser_stray_check(sim: Simulation, ex: dict[str, Any], variant: str) -> Verdict:
    """Parse a drawn reply: no line made only of '#' remains."""
    return _parser_run(ex, variant, FIX_PARSER_ANY_LEVEL, lambda r, f, c: pr.check_no_stray_hash(r))


def _parser_fence_check(sim: Simulation, ex: dict[str, Any], variant: str) -> Verdict:
    """Parse a drawn reply: no code-fence line is written."""
    return _parser_run(ex, variant, FIX_PARSER_ANY_FENCE, lambda r, f, c: pr.check_no_fence_line(r))


def _parser_empty_check(sim: Simulation, ex: dict[str, Any], variant: str) -> Verdict:
    """Parse a drawn reply: a summary with nothing ahead of its questions writes no page; one with a
    section ahead of them is written."""
    return _parser_run(
        ex, variant, FIX_PARSER_REJECT_EMPTY, lambda r, f, c: pr.check_empty_summary_rejected(r, c)
    )


# -- 13. ambiguous citation ------------------------------------------------------------------------
def _citation_strategy() -> Any:
    st = _st()
    page = st.tuples(
        st.sampled_from(["sources", "queries", "insights"]),
        st.sampled_from(["foo-d", "FOO-d", "Foo-d", "bar-d"]),
    )
    return st.fixed_dictionaries(
        {
            "pages": st.lists(page.map(list), min_size=1, max_size=3, unique_by=lambda p: tuple(p)),
            "cite": st.sampled_from(["foo-d", "FOO-D.md", "bar-d"]),
        }
    )


def _citation_check(sim: Simulation, ex: dict[str, Any], variant: str) -> Verdict:
    """Write the drawn pages, resolve the citation: a path only when exactly one stem matches."""
    n = _system(sim, variant, FIX_UNIQUE_RESOLVE)
    for folder, stem in ex["pages"]:
        n.write_wiki_note(f"{folder}/{stem}.md", f"# {stem}")
    return pr.check_unambiguous_resolution(n.resolve(ex["cite"]))


# -- 14. web ignores flags -------------------------------------------------------------------------
def _web_strategy() -> Any:
    st = _st()
    op = st.one_of(
        st.tuples(st.just("query"), st.booleans()), st.tuples(st.just("ingest"), st.booleans())
    ).map(list)
    return st.lists(op, max_size=4)


def _web_check(sim: Simulation, ops: list[list[Any]], variant: str) -> Verdict:
    """Web query with archive, web ingest without force of an unchanged file: flags honored as in the CLI."""
    n = _system(sim, variant, FIX_WEB_FLAGS)
    path = n.write_source("alpha.md", _source_text(0))
    n.cli_ingest("alpha.md")
    tick(sim)
    for k, op in enumerate(ops):
        if op[0] == "query":
            q = f"Question {k} about FACT-0001?"
            n.web_query(q, archive=op[1])
            v = pr.check_flags_honored(n.read_wiki_note(n.query_page_name(q)) is not None, op[1], 0)
        else:
            before = n.calls["ingest"]
            n.web_ingest([path], force=op[1])
            v = pr.check_flags_honored(True, False, 0 if op[1] else n.calls["ingest"] - before)
        if not v.holds:
            return v
        tick(sim)
    return Verdict.ok()


# -- 15. reasoning archive crash -------------------------------------------------------------------
def _reason_strategy() -> Any:
    st = _st()
    return st.fixed_dictionaries({"reasoning": st.booleans(), "question": st.sampled_from(NAMES[:3])})


def _reason_check(sim: Simulation, ex: dict[str, Any], variant: str) -> Verdict:
    """``query -a`` (with or without ``-r``): a page, a log entry and a token-log entry, no crash."""
    n = _system(sim, variant, FIX_REASON_ARCHIVE)
    n.write_source("alpha.md", _source_text(0))
    n.cli_ingest("alpha.md")
    tick(sim)
    q = f"What about {ex['question']} and FACT-0001?"
    error = None
    tokens_before = len(n.load_token_log())
    try:
        n.query(q, archive=True, reasoning=ex["reasoning"])
    except AttributeError as exc:
        error = f"AttributeError: {exc}"
    page = n.query_page_name(q)
    return pr.check_archive_effects(
        page if n.read_wiki_note(page) is not None else None,
        n.read_wiki_note(LOG_FILE),
        len(n.load_token_log()) - tokens_before,
        q,
        error,
    )


def _sanitized(paths: list[str]) -> str:
    return ", ".join(f"{p} -> {sanitize_title(p.rsplit('/', 1)[-1].rsplit('.', 1)[0])}" for p in paths)


CLAIMS: list[Claim] = [
    Claim(
        "nemsy.recency-window",
        SYSTEM,
        ("RT-RTE-wiki-answer", "RT-BAP-wiki-context"),
        "The query loader takes the N newest pages by mtime, so a page holding the asked fact is dropped "
        "once N newer pages exist; only its index line survives.",
        f"{FIX_RELEVANCE}: rank every page by matches of the question's terms before recency",
        _recency_strategy,
        _guard(_recency_check),
        summarize=lambda e: (
            f"{e['sources']} sources, probe source #{e['probe'] % e['sources']}, max_files={e['max_files']}"
        ),
    ),
    Claim(
        "nemsy.delete-leaves-index",
        SYSTEM,
        ("MEM-CLM-storage-lifecycle", "MEM-OBJ-wiki-index", "MEM-OBJ-ingest-log"),
        "delete_wiki_note unlinks the page only: its index entry stays (resolve 404s) and the ledger stays "
        "done, so the page is never regenerated.",
        f"{FIX_DELETE_SYNC}: delete also drops the stem's index entries and ledger record, and logs",
        _delete_strategy,
        _guard(_delete_check),
        summarize=lambda e: f"{e['sources']} sources, delete #{e['delete']}",
    ),
    Claim(
        "nemsy.duplicate-index-on-reingest",
        SYSTEM,
        ("MEM-OBJ-wiki-index", "MEM-OBJ-source-page", "RT-RTE-document-ingest"),
        "Re-ingesting a source appends a second index line (same day: one overwritten page; later day: "
        "two dated pages that both load).",
        f"{FIX_INDEX_UPSERT}: index upsert keyed by page; re-ingest replaces the ledger's wiki_page",
        _reingest_strategy,
        _guard(_reingest_check),
        summarize=lambda ops: repr(ops),
    ),
    Claim(
        "nemsy.title-collision",
        SYSTEM,
        ("MEM-OBJ-source-page", "MEM-OBJ-wiki-index", "MEM-OBJ-ingest-log"),
        "Distinct sources whose sanitized titles collide share one page the same day: the second "
        "overwrites the first while two index entries alias one stem and both ledger records say done.",
        f"{FIX_INJECTIVE_NAMES}: page name = sanitized title + short hash of the source path or question",
        _collision_strategy,
        _guard(_collision_check),
        summarize=_sanitized,
    ),
    Claim(
        "nemsy.ledger-done-without-page",
        SYSTEM,
        ("MEM-OBJ-ingest-log", "RT-RTE-document-ingest"),
        "A reply without '---SUMMARY---\\n' writes no page but the ledger says done (wiki_page null, or "
        "the stale page of an earlier version), so the CLI skips the source forever.",
        f"{FIX_LEDGER_FAILED}: record 'failed' when no page was written and count it as pending",
        _ledger_strategy,
        _guard(_ledger_check),
        summarize=lambda ops: repr(ops),
    ),
    Claim(
        "nemsy.unbounded-index",
        SYSTEM,
        ("MEM-OBJ-wiki-index", "RT-BAP-wiki-context"),
        "The index is appended on every write and always loaded in full outside the page count, so the "
        "loaded context outgrows any fixed character budget as writes accumulate, whatever max_files is "
        "(even 0).",
        f"{FIX_BOUNDED_INDEX}: clip the index to its newest entries and count it and the pages inside one "
        "shared character budget",
        _index_strategy,
        _guard(_index_check),
        summarize=lambda e: (
            f"{len(e['ops'])} ops {e['ops']}, max_files={e['max_files']}, budget={e['budget']} chars"
        ),
    ),
    Claim(
        "nemsy.derived-feedback",
        SYSTEM,
        ("MEM-OBJ-query-page", "RT-BAP-wiki-context", "RT-RTE-answer-archive"),
        "An archived answer loads like a source page and keeps feeding its old value into later answers "
        "after the source it was drawn from is corrected.",
        f"{FIX_INVALIDATE_DERIVED}: record each derived page's inputs and stop loading it once they change",
        _derived_strategy,
        _guard(_derived_check),
        summarize=lambda e: (
            f"{e['sources']} sources, archive={e['archive']}, edit={e['edit']}, "
            f"reingest={e['reingest']}, next_day={e['next_day']}"
        ),
    ),
    Claim(
        "nemsy.stale-chat-snapshot",
        SYSTEM,
        ("RT-RTE-conversation-chat", "RT-BAP-wiki-context"),
        "CLI chat loads its Wiki snapshot once: pages written by /ingest, /query -a or /save in the "
        "session never reach later turns.",
        f"{FIX_RELOAD_SNAPSHOT}: reload the snapshot when the Wiki's write generation changed",
        _snapshot_strategy,
        _guard(_snapshot_check),
        summarize=lambda ops: repr(ops),
    ),
    Claim(
        "nemsy.trimming-loses-history",
        SYSTEM,
        ("RT-RTE-conversation-chat", "MEM-ABS-history-store"),
        "With max_turns>0 the CLI keeps only the last 2*max_turns messages: facts stated earlier are gone "
        "from later requests, with no summary and nothing persisted.",
        f"{FIX_SAVE_EVICTED}: fold the facts of evicted turns into a summary kept in the system prompt",
        _trim_strategy,
        _guard(_trim_check),
        summarize=lambda e: f"max_turns={e['max_turns']}, {e['turns']} fact turns then a question",
    ),
    Claim(
        "nemsy.status-split-touch",
        SYSTEM,
        ("MEM-OBJ-ingest-log",),
        "The web/sources display compares mtime with the last ingestion, the CLI compares content hashes: "
        "after a touch (or a rewrite with the same bytes) the display shows changed while the CLI skips the "
        "file as done.",
        f"{FIX_HASH_STATUS}: one hash-based status shared by every surface",
        _status_strategy,
        _guard(_status_touch_check),
        summarize=_status_summary,
    ),
    Claim(
        "nemsy.status-split-backdated",
        SYSTEM,
        ("MEM-OBJ-ingest-log",),
        "An edit whose mtime is older than the last ingestion (a restored or synced file) shows done in the "
        "web/sources display while the CLI finds it changed and re-ingests it.",
        f"{FIX_HASH_STATUS}: one hash-based status shared by every surface",
        _status_strategy,
        _guard(_status_backdated_check),
        summarize=_status_summary,
    ),
    Claim(
        "nemsy.status-split-blank",
        SYSTEM,
        ("MEM-OBJ-ingest-log",),
        "A whitespace-only source is empty for the CLI (recorded, never ingested) but new or changed in the "
        "web/sources display, which tests emptiness by byte size.",
        f"{FIX_HASH_STATUS}: one hash-based status shared by every surface",
        _status_strategy,
        _guard(_status_blank_check),
        summarize=_status_summary,
    ),
    Claim(
        "nemsy.corrupt-ledger-reset",
        SYSTEM,
        ("MEM-OBJ-ingest-log", "RT-RTE-document-ingest"),
        "A missing, invalid or old-format ingest_log.json reads as an empty v2 ledger: every source is new "
        "again and the next scan re-ingests everything.",
        f"{FIX_LEDGER_BACKUP}: keep a backup of the last good ledger and read it when the main file is bad",
        _corrupt_strategy,
        _guard(_corrupt_check),
        summarize=lambda e: f"{e['sources']} sources, ledger replaced by {e['corrupt']!r}",
    ),
    Claim(
        "nemsy.parser-lost-sections",
        SYSTEM,
        ("MEM-OBJ-source-page", "RT-RTE-document-ingest"),
        "An embedded '## 待探索问题' heading in the summary cuts the page from that heading to the end: "
        "every later section of the summary is lost.",
        f"{FIX_PARSER_SECTION_ONLY}: remove only the questions section (up to the next heading)",
        _parser_strategy,
        _guard(_parser_sections_check),
        summarize=lambda e: repr(build_response(e)[0]),
    ),
    Claim(
        "nemsy.parser-stray-hash",
        SYSTEM,
        ("MEM-OBJ-source-page", "RT-RTE-document-ingest"),
        "The embedded-questions regex matches '## 待探索问题' inside '### 待探索问题', so the page keeps a "
        "stray '#' line.",
        f"{FIX_PARSER_ANY_LEVEL}: match the embedded heading at any level (#{{2,}})",
        _parser_strategy,
        _guard(_parser_stray_check),
        summarize=lambda e: repr(build_response(e)[0]),
    ),
    Claim(
        "nemsy.parser-md-fence",
        SYSTEM,
        ("MEM-OBJ-source-page", "RT-RTE-document-ingest"),
        "Only a bare or ```markdown fence is unwrapped: a summary fenced as ```md is written with its fence "
        "lines verbatim.",
        f"{FIX_PARSER_ANY_FENCE}: unwrap a fence whatever its info string",
        _parser_strategy,
        _guard(_parser_fence_check),
        summarize=lambda e: repr(build_response(e)[0]),
    ),
    Claim(
        "nemsy.parser-empty-summary",
        SYSTEM,
        ("MEM-OBJ-source-page", "RT-RTE-document-ingest", "MEM-OBJ-ingest-log"),
        "A summary with no content ahead of its questions (empty, or only an embedded questions heading) "
        "is accepted: an empty page (or a lone '#') is written, indexed and recorded as done.",
        f"{FIX_PARSER_REJECT_EMPTY}: write nothing when the summary has no text",
        _parser_strategy,
        _guard(_parser_empty_check),
        summarize=lambda e: repr(build_response(e)[0]),
    ),
    Claim(
        "nemsy.ambiguous-citation",
        SYSTEM,
        ("MEM-RTE-browser-read",),
        "Citation resolve matches the lower-cased stem and returns the first note in path order, so "
        "insights/FOO-d, queries/foo-d and sources/Foo-d all resolve the citation foo-d to the insights "
        "page.",
        f"{FIX_UNIQUE_RESOLVE}: answer 'ambiguous' (no path) when several notes share the stem",
        _citation_strategy,
        _guard(_citation_check),
        summarize=lambda e: f"pages {['/'.join(p) for p in e['pages']]}, cite {e['cite']!r}",
    ),
    Claim(
        "nemsy.web-ignores-flags",
        SYSTEM,
        ("RT-RTE-answer-archive", "RT-RTE-document-ingest"),
        "/api/query drops archive and /api/ingest drops force, re-ingesting unchanged files.",
        f"{FIX_WEB_FLAGS}: the web endpoints honor archive and force like the CLI",
        _web_strategy,
        _guard(_web_check),
        summarize=lambda ops: repr(ops),
    ),
    Claim(
        "nemsy.reasoning-archive-crash",
        SYSTEM,
        ("RT-RTE-reasoning-query", "RT-RTE-answer-archive", "MEM-OBJ-token-log"),
        "query -r -a treats the reasoning tuple as text: it raises before archiving and writes no log or "
        "token-log entry.",
        f"{FIX_REASON_ARCHIVE}: unpack (reasoning, answer) and continue as the ordinary path",
        _reason_strategy,
        _guard(_reason_check),
        summarize=lambda e: f"reasoning={e['reasoning']}, question about {e['question']}",
    ),
]

__all__ = ["CLAIMS", "Message", "build_response", "tick"]
