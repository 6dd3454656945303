"""Drivers of the ledger-side claims: done without a page, the status split, the corrupt ledger, the web
flags and the reasoning archive (fidelity note §3 items 5, 10, 11, 14, 15)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sim.claims import Verdict
from sim.engine import Simulation
from sim.variant import Variant
from systems.nemsy import properties as pr
from systems.nemsy.drivers.common import (
    NAMES,
    Example,
    Int,
    OneOf,
    Ops,
    ops_strategy,
    source_text,
    st,
    system,
    tick,
)
from systems.nemsy.model import LOG_FILE, RAW_DIR, content_hash
from systems.nemsy.policies import RESPONSE_FAULTS, IngestResponder

# -- 5. ledger done without (a current) page -------------------------------------------------------
LEDGER = Ops(("ingest", Int(0, 1), OneOf(*RESPONSE_FAULTS)), ("edit", Int(0, 1)), max_length=5)


def ledger_strategy() -> Any:
    return ops_strategy(LEDGER)


def ledger_check(sim: Simulation, ops: list[list[Any]], variant: Variant) -> Verdict:
    """Ingests whose replies may lack the SUMMARY marker: the ledger records every ingested source's
    content, and a ``done`` record needs a page written from that content."""
    responder = IngestResponder()
    n = system(sim, variant, responder=responder)
    versions = [0, 0]
    ingested: dict[str, str] = {}
    for i in range(2):
        n.write_source(f"{NAMES[i]}.md", source_text(i))
    for op in ops:
        rel = f"{NAMES[op[1]]}.md"
        if op[0] == "edit":
            versions[op[1]] += 1
            n.write_source(rel, source_text(op[1], versions[op[1]]))
        else:
            responder.fault = op[2]
            if any(o.action == "ingested" for o in n.cli_ingest(rel)):
                ingested[f"/{RAW_DIR}/{rel}"] = content_hash(n.tree.read_text(f"{RAW_DIR}/{rel}"))
        tick(sim)
    v = pr.check_ledger_says_what_was_ingested(n.load_ingest_log(), ingested)
    if not v.holds:
        return v
    return pr.check_done_records_have_pages(n.load_ingest_log(), n.list_wiki_notes(), n.page_source_hash)


# -- 10. mtime/hash status split -------------------------------------------------------------------
STATUS = Ops(
    ("write", OneOf("text", "edit", "blank", "empty")), ("ingest",), ("touch",), ("backdate",), max_length=5
)


def status_strategy() -> Any:
    return ops_strategy(STATUS)


StatusCheck = Callable[[str, str], Verdict]


def _status_run(sim: Simulation, ops: list[list[Any]], variant: Variant, check: StatusCheck) -> Verdict:
    """Write / ingest / touch / back-date one source; after each step compare the CLI and display status
    (and right after an ingest of a non-empty file the display must say done)."""
    n = system(sim, variant)
    rel, path = "alpha.md", f"{RAW_DIR}/alpha.md"
    n.write_source(rel, source_text(0))
    edits = 0
    for op in ops:
        ingested = False
        if op[0] == "write":
            edits += 1
            texts = {"text": source_text(0), "edit": source_text(0, edits), "blank": "  \n", "empty": ""}
            n.write_source(rel, texts[op[1]])
        elif op[0] == "ingest":
            ingested = any(o.action == "ingested" for o in n.cli_ingest(rel))
        elif op[0] == "touch":
            n.touch_source(rel)
        else:
            edits += 1
            n.write_source(rel, source_text(0, edits), mtime=n.clock.seconds() - 3600.0)
        tick(sim)
        display = n.display_status(path)
        for v in (check(n.get_file_status(path, n.tree.read_text(path)), display),
                  pr.check_display_done_after_ingest(display, ingested)):  # fmt: skip
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
#: None: untouched; "missing": the file deleted; "non-utf8": bytes that are not UTF-8; else the new text.
CORRUPTIONS = (None, "missing", "{not json", "[]", '{"version": 1, "files": {}}', "non-utf8")
CORRUPT = Example("CorruptExample", sources=Int(1, 3), corrupt=OneOf(*CORRUPTIONS))


def corrupt_strategy() -> Any:
    s = st()
    return s.fixed_dictionaries({"sources": s.integers(1, 3), "corrupt": s.sampled_from(CORRUPTIONS)})


def corrupt_check(sim: Simulation, ex: dict[str, Any], variant: Variant) -> Verdict:
    """Ingest everything (the ledger says done for each), damage or delete the ledger, scan again: the scan
    completes and re-ingests no unchanged source."""
    n = system(sim, variant)
    for i in range(ex["sources"]):
        n.write_source(f"{NAMES[i]}.md", source_text(i))
    n.cli_ingest()
    done = {f"/{RAW_DIR}/{NAMES[i]}.md": content_hash(source_text(i)) for i in range(ex["sources"])}
    v = pr.check_ledger_says_what_was_ingested(n.load_ingest_log(), done)
    if not v.holds:
        return v
    tick(sim)
    if ex["corrupt"] == "missing":
        n.delete_ingest_log()
    elif ex["corrupt"] == "non-utf8":
        n.corrupt_ingest_log(b"\xff\xfe{")
    elif ex["corrupt"] is not None:
        n.corrupt_ingest_log(ex["corrupt"])
    before = n.calls["ingest"]
    n.cli_ingest()
    return pr.check_no_spurious_reingest(before, n.calls["ingest"], ex["sources"])


# -- 14. web ignores flags -------------------------------------------------------------------------
WEB = Ops(("query", bool), ("ingest", bool), ("edit",), max_length=4)


def web_strategy() -> Any:
    return ops_strategy(WEB)


def web_check(sim: Simulation, ops: list[list[Any]], variant: Variant) -> Verdict:
    """Web query with or without archive; web ingest with or without force of an unchanged or edited
    file: archive archives, an unchanged unforced file is skipped, a forced or edited one is ingested."""
    n = system(sim, variant)
    path = n.write_source("alpha.md", source_text(0))
    n.cli_ingest("alpha.md")
    tick(sim)
    edits = 0
    for k, op in enumerate(ops):
        if op[0] == "query":
            q = f"Question {k} about FACT-0001?"
            n.web_query(q, archive=op[1])
            v = pr.check_flags_honored(n.read_wiki_note(n.query_page_name(q)) is not None, op[1], 0)
        elif op[0] == "edit":
            edits += 1
            n.write_source("alpha.md", source_text(0, edits))
            v = Verdict.ok()
        else:
            changed = n.get_file_status(path, n.tree.read_text(path)) != "done"
            before = n.calls["ingest"]
            n.web_ingest("/" + path, force=op[1])
            calls = n.calls["ingest"] - before
            should = op[1] or changed
            v = pr.check_flags_honored(True, False, 0 if should else calls, 1 - calls if should else 0)
        if not v.holds:
            return v
        tick(sim)
    return Verdict.ok()


# -- 15. reasoning archive crash -------------------------------------------------------------------
REASON = Example("ReasonExample", reasoning=bool, question=OneOf(*NAMES[:3]))


def reason_strategy() -> Any:
    s = st()
    return s.fixed_dictionaries({"reasoning": s.booleans(), "question": s.sampled_from(NAMES[:3])})


def reason_check(sim: Simulation, ex: dict[str, Any], variant: Variant) -> Verdict:
    """``query -a`` (with or without ``-r``): a page, a log entry and a token-log entry, no crash."""
    n = system(sim, variant)
    n.write_source("alpha.md", source_text(0))
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
