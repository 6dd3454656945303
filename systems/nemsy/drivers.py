"""Nemsy's claim drivers: for each claim of :mod:`systems.nemsy.claims`, its Hypothesis strategy (a plain
JSON example space) and its driver ``check(sim, example, variant) -> Verdict``, which runs a tiny Wiki (a
handful of sources, small limits passed as parameters where upstream has a constant) through the real
model operations and checks one invariant from :mod:`systems.nemsy.properties`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sim.claims import Verdict
from sim.engine import Simulation
from sim.text import fact_token
from sim.variant import Variant
from systems.nemsy import properties as pr
from systems.nemsy.model import (
    CONTEXT_CHARS,
    INDEX_FILE,
    LOG_FILE,
    RAW_DIR,
    Nemsy,
    load_wiki_context,
    parse_ingest_response_with,
    sanitize_title,
)
from systems.nemsy.policies import RESPONSE_FAULTS, FactAnswerer, IngestResponder, InsightRewriter
from systems.nemsy.state import FIX_PARSER_FIXES

SYSTEM = "nemsy"
VALUES = ("amber", "teal", "ruby", "jade", "navy", "plum")
NAMES = ("alpha", "beta", "gamma", "delta", "omega", "sigma", "kappa", "theta")


def _st() -> Any:
    from hypothesis import strategies as st

    return st


def _system(
    sim: Simulation,
    variant: Variant,
    *,
    responder: IngestResponder | None = None,
    context_chars: int = CONTEXT_CHARS,
) -> Nemsy:
    return Nemsy(
        sim,
        variant=variant,
        context_chars=context_chars,
        responder=responder or IngestResponder(),
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


# -- 1. recency window -----------------------------------------------------------------------------
def recency_strategy() -> Any:
    st = _st()
    return st.fixed_dictionaries(
        {"sources": st.integers(1, 6), "probe": st.integers(0, 5), "max_files": st.integers(1, 4)}
    )


def recency_check(sim: Simulation, ex: dict[str, Any], variant: Variant) -> Verdict:
    """Ingest N one-fact sources, then load the query context with max_files pages for the probed fact."""
    n = _system(sim, variant)
    count = ex["sources"]
    probe = ex["probe"] % count
    for i in range(count):
        n.write_source(f"{NAMES[i]}.md", _source_text(i))
        n.cli_ingest(f"{NAMES[i]}.md")
        tick(sim)
    question = f"What is FACT-{probe + 1:04d}?"
    ctx = load_wiki_context(n, ex["max_files"], query=question)
    n.query(question, wiki_context=ctx)
    return pr.check_relevant_page_loaded(
        dict(s for s in ctx.sections if s[0] != INDEX_FILE),
        _wiki_pages(n),
        f"FACT-{probe + 1:04d}",
        ex["max_files"],
    )


# -- 2. delete leaves index and ledger -------------------------------------------------------------
def delete_strategy() -> Any:
    st = _st()
    return st.fixed_dictionaries({"sources": st.integers(1, 3), "delete": st.none() | st.integers(0, 2)})


def delete_check(sim: Simulation, ex: dict[str, Any], variant: Variant) -> Verdict:
    """Ingest sources, delete one page (confirmed), rescan: index entries resolve, done records have pages."""
    n = _system(sim, variant)
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
def reingest_strategy() -> Any:
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


def reingest_check(sim: Simulation, ops: list[list[Any]], variant: Variant) -> Verdict:
    """CLI ingest / edit / force / next day on two sources: one index entry and one page per source."""
    n = _system(sim, variant)
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


def collision_strategy() -> Any:
    st = _st()
    return st.lists(st.sampled_from(COLLIDING_PATHS), min_size=1, max_size=4, unique=True)


def collision_check(sim: Simulation, paths: list[str], variant: Variant) -> Verdict:
    """Ingest each drawn source once, the same day: distinct sources ↔ distinct pages ↔ one entry each."""
    n = _system(sim, variant)
    for k, p in enumerate(paths):
        n.write_source(p, f"Source {p}: {_fact(k)}.")
        n.cli_ingest(p)
        tick(sim)
    return pr.check_distinct_sources_distinct_pages(
        n.load_ingest_log(), n.list_wiki_notes(), n.read_wiki_note(INDEX_FILE)
    )


# -- 5. ledger done without (a current) page -------------------------------------------------------
def ledger_strategy() -> Any:
    st = _st()
    op = st.one_of(
        st.tuples(st.just("ingest"), st.integers(0, 1), st.sampled_from(RESPONSE_FAULTS)),
        st.tuples(st.just("edit"), st.integers(0, 1)),
    ).map(list)
    return st.lists(op, max_size=5)


def ledger_check(sim: Simulation, ops: list[list[Any]], variant: Variant) -> Verdict:
    """Ingests whose replies may lack the SUMMARY marker: a ``done`` record needs a page from its hash."""
    responder = IngestResponder()
    n = _system(sim, variant, responder=responder)
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
def index_strategy() -> Any:
    st = _st()
    return st.fixed_dictionaries(
        {
            "ops": st.lists(st.sampled_from(["ingest", "archive"]), max_size=10),
            "max_files": st.integers(0, 2),
            "budget": st.integers(400, 1600),
        }
    )


def index_check(sim: Simulation, ex: dict[str, Any], variant: Variant) -> Verdict:
    """Ingests and archived queries, then a load with a shared character budget (the fix's knob)."""
    n = _system(sim, variant, context_chars=ex["budget"])
    for k, kind in enumerate(ex["ops"]):
        if kind == "ingest":
            n.write_source(f"s{k}.md", f"Source {k}: {_fact(k)}.")
            n.cli_ingest(f"s{k}.md")
        else:
            n.query(f"What do we know about FACT-{k:04d}?", archive=True, max_files=ex["max_files"])
        tick(sim)
    ctx = load_wiki_context(n, ex["max_files"])
    return pr.check_context_within(ctx.text, ex["budget"], ctx.index_chars)


# -- 7. generated answers feed future answers ------------------------------------------------------
def derived_strategy() -> Any:
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


def derived_check(sim: Simulation, ex: dict[str, Any], variant: Variant) -> Verdict:
    """Ingest; ask about fact 1 (maybe archiving); edit its source (change or withdraw the fact); maybe
    re-ingest (maybe the next day); ask again: both answers agree with the current source pages."""
    n = _system(sim, variant)
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
def snapshot_strategy() -> Any:
    st = _st()
    op = st.one_of(
        st.tuples(st.just("ingest"), st.integers(0, 2)),
        st.tuples(st.just("turn"), st.integers(0, 2)),
        st.tuples(st.just("query-a"), st.integers(0, 2)),
        st.tuples(st.just("save")),
    ).map(list)
    return st.lists(op, max_size=6)


def snapshot_check(sim: Simulation, ops: list[list[Any]], variant: Variant) -> Verdict:
    """A chat session with /ingest, /query -a and /save between turns: each turn sees a fresh Wiki."""
    n = _system(sim, variant)
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
            fresh = load_wiki_context(n, 3).text
            v = pr.check_snapshot_fresh(used, fresh)
            if not v.holds:
                return v
            session.say(f"What is FACT-{op[1] + 1:04d}?")
        tick(sim)
    return Verdict.ok()


# -- 9. trimming loses history ---------------------------------------------------------------------
def trim_strategy() -> Any:
    st = _st()
    return st.fixed_dictionaries({"max_turns": st.integers(0, 3), "turns": st.integers(1, 5)})


def trim_check(sim: Simulation, ex: dict[str, Any], variant: Variant) -> Verdict:
    """Each turn states one fact; the last turn's request must still carry every earlier fact."""
    n = _system(sim, variant)
    session = n.chat_session(max_turns=ex["max_turns"])
    stated: list[str] = []
    for t in range(ex["turns"]):
        session.say(f"Remember {_fact(t)}.")
        stated.append(f"FACT-{t + 1:04d}")
        tick(sim)
    session.say("What did I tell you first?")
    return pr.check_request_has_facts(sim.trace.data.requests[-1].fact_ids, stated)


# -- 10. mtime/hash status split -------------------------------------------------------------------
def status_strategy() -> Any:
    st = _st()
    op = st.one_of(
        st.tuples(st.just("write"), st.sampled_from(["text", "edit", "blank", "empty"])),
        st.tuples(st.just("ingest")),
        st.tuples(st.just("touch")),
        st.tuples(st.just("backdate")),
    ).map(list)
    return st.lists(op, max_size=5)


StatusCheck = Callable[[str, str], Verdict]


def _status_run(sim: Simulation, ops: list[list[Any]], variant: Variant, check: StatusCheck) -> Verdict:
    """Write / ingest / touch / back-date one source; after each step compare CLI and display status."""
    n = _system(sim, variant)
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


def status_touch_check(sim: Simulation, ops: list[list[Any]], variant: Variant) -> Verdict:
    """After each step the display shows ``changed`` only for a file the CLI would re-ingest."""
    return _status_run(sim, ops, variant, pr.check_display_not_falsely_changed)


def status_backdated_check(sim: Simulation, ops: list[list[Any]], variant: Variant) -> Verdict:
    """After each step the display shows ``done`` only for a file the CLI finds ingested."""
    return _status_run(sim, ops, variant, pr.check_display_not_falsely_done)


def status_blank_check(sim: Simulation, ops: list[list[Any]], variant: Variant) -> Verdict:
    """After each step the CLI and the display agree on whether the file is empty."""
    return _status_run(sim, ops, variant, pr.check_emptiness_agrees)


def status_summary(ops: list[list[Any]]) -> str:
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


def corrupt_strategy() -> Any:
    st = _st()
    return st.fixed_dictionaries({"sources": st.integers(1, 3), "corrupt": st.sampled_from(CORRUPTIONS)})


def corrupt_check(sim: Simulation, ex: dict[str, Any], variant: Variant) -> Verdict:
    """Ingest everything, (maybe) corrupt the ledger, scan again: no unchanged source is re-ingested."""
    n = _system(sim, variant)
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
def parser_strategy() -> Any:
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


def _parser_run(ex: dict[str, Any], variant: Variant, check: ParserCheck) -> Verdict:
    text, facts, has_content = build_response(ex)
    return check(parse_ingest_response_with(text, variant.fixes & FIX_PARSER_FIXES), facts, has_content)


def parser_sections_check(sim: Simulation, ex: dict[str, Any], variant: Variant) -> Verdict:
    """Parse a drawn reply: the facts of every non-question section survive."""
    return _parser_run(ex, variant, lambda r, f, c: pr.check_sections_kept(r, f))


def parser_stray_check(sim: Simulation, ex: dict[str, Any], variant: Variant) -> Verdict:
    """Parse a drawn reply: no line made only of '#' remains."""
    return _parser_run(ex, variant, lambda r, f, c: pr.check_no_stray_hash(r))


def parser_fence_check(sim: Simulation, ex: dict[str, Any], variant: Variant) -> Verdict:
    """Parse a drawn reply: no code-fence line is written."""
    return _parser_run(ex, variant, lambda r, f, c: pr.check_no_fence_line(r))


def parser_empty_check(sim: Simulation, ex: dict[str, Any], variant: Variant) -> Verdict:
    """Parse a drawn reply: a summary with nothing ahead of its questions writes no page; one with a
    section ahead of them is written."""
    return _parser_run(ex, variant, lambda r, f, c: pr.check_empty_summary_rejected(r, c))


# -- 13. ambiguous citation ------------------------------------------------------------------------
def citation_strategy() -> Any:
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


def citation_check(sim: Simulation, ex: dict[str, Any], variant: Variant) -> Verdict:
    """Write the drawn pages, resolve the citation: a path only when exactly one stem matches."""
    n = _system(sim, variant)
    for folder, stem in ex["pages"]:
        n.write_wiki_note(f"{folder}/{stem}.md", f"# {stem}")
    return pr.check_unambiguous_resolution(n.resolve(ex["cite"]))


# -- 14. web ignores flags -------------------------------------------------------------------------
def web_strategy() -> Any:
    st = _st()
    op = st.one_of(
        st.tuples(st.just("query"), st.booleans()), st.tuples(st.just("ingest"), st.booleans())
    ).map(list)
    return st.lists(op, max_size=4)


def web_check(sim: Simulation, ops: list[list[Any]], variant: Variant) -> Verdict:
    """Web query with archive, web ingest without force of an unchanged file: flags honored as in the CLI."""
    n = _system(sim, variant)
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
            n.web_ingest(path, force=op[1])
            v = pr.check_flags_honored(True, False, 0 if op[1] else n.calls["ingest"] - before)
        if not v.holds:
            return v
        tick(sim)
    return Verdict.ok()


# -- 15. reasoning archive crash -------------------------------------------------------------------
def reason_strategy() -> Any:
    st = _st()
    return st.fixed_dictionaries({"reasoning": st.booleans(), "question": st.sampled_from(NAMES[:3])})


def reason_check(sim: Simulation, ex: dict[str, Any], variant: Variant) -> Verdict:
    """``query -a`` (with or without ``-r``): a page, a log entry and a token-log entry, no crash."""
    n = _system(sim, variant)
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


def sanitized_summary(paths: list[str]) -> str:
    return ", ".join(f"{p} -> {sanitize_title(p.rsplit('/', 1)[-1].rsplit('.', 1)[0])}" for p in paths)
