"""Nemsy's claimed failure modes (fidelity note §3, items 1–15), each with its minimal fix and off switch.

Two items list several distinct defects, and each gets its own claim so that each one's shrunk
counterexample is shown: item 10 (the mtime/hash status split) as ``status-split-touch``,
``status-split-backdated`` and ``status-split-blank``, the three mismatches of §2.8, which together are
every way the two statuses can disagree; item 12 (parser quirks) as ``parser-lost-sections``,
``parser-stray-hash``, ``parser-md-fence`` and ``parser-empty-summary``, each with its own one-quirk fix.

Declarations only: each claim's strategy and driver live in :mod:`systems.nemsy.drivers`, its checkers in
:mod:`systems.nemsy.properties`. The faithful design must fail the claim's property somewhere in the
drawn space; the named fix must hold everywhere in the same space. Examples are plain JSON.
"""

from __future__ import annotations

from sim.claims import Claim
from systems.nemsy import drivers as d
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
)

SYSTEM = "nemsy"

CLAIMS: list[Claim] = [
    Claim(
        "nemsy.recency-window",
        SYSTEM,
        ("RT-RTE-wiki-answer", "RT-BAP-wiki-context"),
        "The query loader takes the N newest pages by mtime, so a page holding the asked fact is dropped "
        "once N newer pages exist; only its index line survives.",
        f"{FIX_RELEVANCE}: rank every page by matches of the question's terms before recency",
        d.recency_strategy,
        d.recency_check,
        fixes=(FIX_RELEVANCE,),
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
        d.delete_strategy,
        d.delete_check,
        fixes=(FIX_DELETE_SYNC,),
        summarize=lambda e: f"{e['sources']} sources, delete #{e['delete']}",
    ),
    Claim(
        "nemsy.duplicate-index-on-reingest",
        SYSTEM,
        ("MEM-OBJ-wiki-index", "MEM-OBJ-source-page", "RT-RTE-document-ingest"),
        "Re-ingesting a source appends a second index line (same day: one overwritten page; later day: "
        "two dated pages that both load).",
        f"{FIX_INDEX_UPSERT}: index upsert keyed by page; re-ingest replaces the ledger's wiki_page",
        d.reingest_strategy,
        d.reingest_check,
        fixes=(FIX_INDEX_UPSERT,),
        summarize=lambda ops: repr(ops),
    ),
    Claim(
        "nemsy.title-collision",
        SYSTEM,
        ("MEM-OBJ-source-page", "MEM-OBJ-wiki-index", "MEM-OBJ-ingest-log"),
        "Distinct sources whose sanitized titles collide share one page the same day: the second "
        "overwrites the first while two index entries alias one stem and both ledger records say done.",
        f"{FIX_INJECTIVE_NAMES}: page name = sanitized title + short hash of the source path or question",
        d.collision_strategy,
        d.collision_check,
        fixes=(FIX_INJECTIVE_NAMES,),
        summarize=d.sanitized_summary,
    ),
    Claim(
        "nemsy.ledger-done-without-page",
        SYSTEM,
        ("MEM-OBJ-ingest-log", "RT-RTE-document-ingest"),
        "A reply without '---SUMMARY---\\n' writes no page but the ledger says done (wiki_page null, or "
        "the stale page of an earlier version), so the CLI skips the source forever.",
        f"{FIX_LEDGER_FAILED}: record 'failed' when no page was written and count it as pending",
        d.ledger_strategy,
        d.ledger_check,
        fixes=(FIX_LEDGER_FAILED,),
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
        d.index_strategy,
        d.index_check,
        fixes=(FIX_BOUNDED_INDEX,),
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
        d.derived_strategy,
        d.derived_check,
        fixes=(FIX_INVALIDATE_DERIVED,),
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
        d.snapshot_strategy,
        d.snapshot_check,
        fixes=(FIX_RELOAD_SNAPSHOT,),
        summarize=lambda ops: repr(ops),
    ),
    Claim(
        "nemsy.trimming-loses-history",
        SYSTEM,
        ("RT-RTE-conversation-chat", "MEM-ABS-history-store"),
        "With max_turns>0 the CLI keeps only the last 2*max_turns messages: facts stated earlier are gone "
        "from later requests, with no summary and nothing persisted.",
        f"{FIX_SAVE_EVICTED}: fold the facts of evicted turns into a summary kept in the system prompt",
        d.trim_strategy,
        d.trim_check,
        fixes=(FIX_SAVE_EVICTED,),
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
        d.status_strategy,
        d.status_touch_check,
        fixes=(FIX_HASH_STATUS,),
        summarize=d.status_summary,
    ),
    Claim(
        "nemsy.status-split-backdated",
        SYSTEM,
        ("MEM-OBJ-ingest-log",),
        "An edit whose mtime is older than the last ingestion (a restored or synced file) shows done in the "
        "web/sources display while the CLI finds it changed and re-ingests it.",
        f"{FIX_HASH_STATUS}: one hash-based status shared by every surface",
        d.status_strategy,
        d.status_backdated_check,
        fixes=(FIX_HASH_STATUS,),
        summarize=d.status_summary,
    ),
    Claim(
        "nemsy.status-split-blank",
        SYSTEM,
        ("MEM-OBJ-ingest-log",),
        "A whitespace-only source is empty for the CLI (recorded, never ingested) but new or changed in the "
        "web/sources display, which tests emptiness by byte size.",
        f"{FIX_HASH_STATUS}: one hash-based status shared by every surface",
        d.status_strategy,
        d.status_blank_check,
        fixes=(FIX_HASH_STATUS,),
        summarize=d.status_summary,
    ),
    Claim(
        "nemsy.corrupt-ledger-reset",
        SYSTEM,
        ("MEM-OBJ-ingest-log", "RT-RTE-document-ingest"),
        "A missing, invalid or old-format ingest_log.json reads as an empty v2 ledger: every source is new "
        "again and the next scan re-ingests everything.",
        f"{FIX_LEDGER_BACKUP}: keep a backup of the last good ledger and read it when the main file is bad",
        d.corrupt_strategy,
        d.corrupt_check,
        fixes=(FIX_LEDGER_BACKUP,),
        summarize=lambda e: f"{e['sources']} sources, ledger replaced by {e['corrupt']!r}",
    ),
    Claim(
        "nemsy.parser-lost-sections",
        SYSTEM,
        ("MEM-OBJ-source-page", "RT-RTE-document-ingest"),
        "An embedded '## 待探索问题' heading in the summary cuts the page from that heading to the end: "
        "every later section of the summary is lost.",
        f"{FIX_PARSER_SECTION_ONLY}: remove only the questions section (up to the next heading)",
        d.parser_strategy,
        d.parser_sections_check,
        fixes=(FIX_PARSER_SECTION_ONLY,),
        summarize=lambda e: repr(d.build_response(e)[0]),
    ),
    Claim(
        "nemsy.parser-stray-hash",
        SYSTEM,
        ("MEM-OBJ-source-page", "RT-RTE-document-ingest"),
        "The embedded-questions regex matches '## 待探索问题' inside '### 待探索问题', so the page keeps a "
        "stray '#' line.",
        f"{FIX_PARSER_ANY_LEVEL}: match the embedded heading at any level (#{{2,}})",
        d.parser_strategy,
        d.parser_stray_check,
        fixes=(FIX_PARSER_ANY_LEVEL,),
        summarize=lambda e: repr(d.build_response(e)[0]),
    ),
    Claim(
        "nemsy.parser-md-fence",
        SYSTEM,
        ("MEM-OBJ-source-page", "RT-RTE-document-ingest"),
        "Only a bare or ```markdown fence is unwrapped: a summary fenced as ```md is written with its fence "
        "lines verbatim.",
        f"{FIX_PARSER_ANY_FENCE}: unwrap a fence whatever its info string",
        d.parser_strategy,
        d.parser_fence_check,
        fixes=(FIX_PARSER_ANY_FENCE,),
        summarize=lambda e: repr(d.build_response(e)[0]),
    ),
    Claim(
        "nemsy.parser-empty-summary",
        SYSTEM,
        ("MEM-OBJ-source-page", "RT-RTE-document-ingest", "MEM-OBJ-ingest-log"),
        "A summary with no content ahead of its questions (empty, or only an embedded questions heading) "
        "is accepted: an empty page (or a lone '#') is written, indexed and recorded as done.",
        f"{FIX_PARSER_REJECT_EMPTY}: write nothing when the summary has no text",
        d.parser_strategy,
        d.parser_empty_check,
        fixes=(FIX_PARSER_REJECT_EMPTY,),
        summarize=lambda e: repr(d.build_response(e)[0]),
    ),
    Claim(
        "nemsy.ambiguous-citation",
        SYSTEM,
        ("MEM-RTE-browser-read",),
        "Citation resolve matches the lower-cased stem and returns the first note in path order, so "
        "insights/FOO-d, queries/foo-d and sources/Foo-d all resolve the citation foo-d to the insights "
        "page.",
        f"{FIX_UNIQUE_RESOLVE}: answer 'ambiguous' (no path) when several notes share the stem",
        d.citation_strategy,
        d.citation_check,
        fixes=(FIX_UNIQUE_RESOLVE,),
        summarize=lambda e: f"pages {['/'.join(p) for p in e['pages']]}, cite {e['cite']!r}",
    ),
    Claim(
        "nemsy.web-ignores-flags",
        SYSTEM,
        ("RT-RTE-answer-archive", "RT-RTE-document-ingest"),
        "/api/query drops archive and /api/ingest drops force, re-ingesting unchanged files.",
        f"{FIX_WEB_FLAGS}: the web endpoints honor archive and force like the CLI",
        d.web_strategy,
        d.web_check,
        fixes=(FIX_WEB_FLAGS,),
        summarize=lambda ops: repr(ops),
    ),
    Claim(
        "nemsy.reasoning-archive-crash",
        SYSTEM,
        ("RT-RTE-reasoning-query", "RT-RTE-answer-archive", "MEM-OBJ-token-log"),
        "query -r -a treats the reasoning tuple as text: it raises before archiving and writes no log or "
        "token-log entry.",
        f"{FIX_REASON_ARCHIVE}: unpack (reasoning, answer) and continue as the ordinary path",
        d.reason_strategy,
        d.reason_check,
        fixes=(FIX_REASON_ARCHIVE,),
        summarize=lambda e: f"reasoning={e['reasoning']}, question about {e['question']}",
    ),
]

__all__ = ["CLAIMS"]
