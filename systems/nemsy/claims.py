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
from systems.nemsy.drivers import caching, chat, ledger, parser, wiki
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
    FIX_QUESTION_LAST,
    FIX_REASON_ARCHIVE,
    FIX_RELEVANCE,
    FIX_RELOAD_SNAPSHOT,
    FIX_SAVE_EVICTED,
    FIX_UNIQUE_RESOLVE,
    FIX_WEB_FLAGS,
    OFF_ARCHIVE_NOOP,
    OFF_DELETE_NOOP,
    OFF_DISPLAY_ALWAYS_NEW,
    OFF_INDEX_NOT_UPDATED,
    OFF_LEDGER_NOT_WRITTEN,
    OFF_LOADER_EMPTY,
    OFF_LOADER_EVERY_PAGE,
    OFF_NO_PAGE_WRITE,
    OFF_NO_TRIM,
    OFF_PARSER_REJECTS_ALL,
    OFF_RESOLVE_ALWAYS_404,
    OFF_WEB_INGEST_NOOP,
)

SYSTEM = "nemsy"

CLAIMS: list[Claim] = [
    Claim(
        "nemsy.cache-question-first",
        SYSTEM,
        ("RT-RTE-wiki-answer", "RT-BAP-wiki-context", "RT-CMP-deepseek"),
        "The CLI query's user prompt starts with the question (问题：q) and then the Wiki context, so two "
        "queries share only the system prompt as a prefix (about 680 tokens, under the 1,024-token minimum "
        "of automatic prefix caching): the index, which only grows at its end, is sent uncached at every "
        "query. Property: every query shows the index and the asked page, and reads from the cache at "
        "least half of the system prompt and index tokens the previous query sent (once they reach the "
        "cacheable minimum).",
        f"{FIX_QUESTION_LAST}: the same template with the Wiki context first and the question last",
        caching.cache_strategy,
        caching.cache_check,
        fixes=(FIX_QUESTION_LAST,),
        off=(OFF_LOADER_EMPTY,),
        slow=True,
        example_type=caching.CACHE,
        summarize=lambda e: f"{e['steps']} ingest+query steps of {e['chars']} characters",
    ),
    Claim(
        "nemsy.recency-window",
        SYSTEM,
        ("RT-RTE-wiki-answer", "RT-BAP-wiki-context"),
        "The query loader takes the N newest pages by mtime, so a page holding the asked fact is dropped "
        "once N newer pages exist; only its index line survives.",
        f"{FIX_RELEVANCE}: rank every page by matches of the question's terms before recency",
        wiki.recency_strategy,
        wiki.recency_check,
        fixes=(FIX_RELEVANCE,),
        off=(OFF_LOADER_EVERY_PAGE,),
        example_type=wiki.RECENCY,
        summarize=lambda e: (
            f"{e['sources']} sources, probe source #{e['probe'] % e['sources']}, max_files={e['max_files']}"
        ),
    ),
    Claim(
        "nemsy.delete-leaves-index",
        SYSTEM,
        ("MEM-CLM-storage-lifecycle", "MEM-OBJ-wiki-index", "MEM-OBJ-ingest-log"),
        "delete_wiki_note unlinks the page only: its index entry stays (resolve 404s) and the ledger stays "
        "done, so the page is never regeneratewiki.",
        f"{FIX_DELETE_SYNC}: delete also drops the stem's index entries and ledger record, and logs",
        wiki.delete_strategy,
        wiki.delete_check,
        fixes=(FIX_DELETE_SYNC,),
        off=(OFF_DELETE_NOOP,),
        example_type=wiki.DELETE,
        summarize=lambda e: f"{e['sources']} sources, delete #{e['delete']}",
    ),
    Claim(
        "nemsy.duplicate-index-on-reingest",
        SYSTEM,
        ("MEM-OBJ-wiki-index", "MEM-OBJ-source-page", "RT-RTE-document-ingest"),
        "Re-ingesting a source appends a second index line (same day: one overwritten page; later day: "
        "two dated pages that both load).",
        f"{FIX_INDEX_UPSERT}: index upsert keyed by page; re-ingest replaces the ledger's wiki_page",
        wiki.reingest_strategy,
        wiki.reingest_check,
        fixes=(FIX_INDEX_UPSERT,),
        off=(OFF_INDEX_NOT_UPDATED,),
        example_type=wiki.REINGEST,
        summarize=lambda ops: repr(ops),
    ),
    Claim(
        "nemsy.title-collision",
        SYSTEM,
        ("MEM-OBJ-source-page", "MEM-OBJ-wiki-index", "MEM-OBJ-ingest-log"),
        "Distinct sources whose sanitized titles collide share one page the same day: the second "
        "overwrites the first while two index entries alias one stem and both ledger records say done.",
        f"{FIX_INJECTIVE_NAMES}: page name = sanitized title + short hash of the source path or question",
        wiki.collision_strategy,
        wiki.collision_check,
        fixes=(FIX_INJECTIVE_NAMES,),
        off=(OFF_NO_PAGE_WRITE,),
        example_type=wiki.COLLISION,
        summarize=wiki.sanitized_summary,
    ),
    Claim(
        "nemsy.ledger-done-without-page",
        SYSTEM,
        ("MEM-OBJ-ingest-log", "RT-RTE-document-ingest"),
        "A reply without '---SUMMARY---\\n' writes no page but the ledger says done (wiki_page null, or "
        "the stale page of an earlier version), so the CLI skips the source forever.",
        f"{FIX_LEDGER_FAILED}: record 'failed' when no page was written and count it as pending",
        ledger.ledger_strategy,
        ledger.ledger_check,
        fixes=(FIX_LEDGER_FAILED,),
        off=(OFF_LEDGER_NOT_WRITTEN,),
        example_type=ledger.LEDGER,
        summarize=lambda ops: repr(ops),
    ),
    Claim(
        "nemsy.unbounded-index",
        SYSTEM,
        ("MEM-OBJ-wiki-index", "RT-BAP-wiki-context"),
        "The index is appended on every write and always loaded in full outside the page count, so the "
        "loaded context outgrows any fixed character budget as writes accumulate, whatever max_files is "
        "(even 0).",
        f"{FIX_BOUNDED_INDEX}: one shared character budget: the newest pages first, then the index with one "
        "entry per page, newest first, in what is left",
        wiki.index_strategy,
        wiki.index_check,
        fixes=(FIX_BOUNDED_INDEX,),
        off=(OFF_LOADER_EMPTY,),
        slow=True,
        example_type=wiki.INDEX,
        summarize=lambda e: (
            f"{len(e['ops'])} ops {e['ops']}, max_files={e['max_files']}, budget={e['budget']} chars"
        ),
    ),
    Claim(
        "nemsy.derived-feedback",
        SYSTEM,
        ("MEM-OBJ-query-page", "RT-BAP-wiki-context", "RT-RTE-answer-archive"),
        "An archived answer loads like a source page and keeps feeding its old value into later answers "
        "after the source it was drawn from is correctewiki.",
        f"{FIX_INVALIDATE_DERIVED}: record every page an archived answer or a saved insight was made from "
        "and stop loading it once one of them changes",
        wiki.derived_strategy,
        wiki.derived_check,
        fixes=(FIX_INVALIDATE_DERIVED,),
        off=(OFF_ARCHIVE_NOOP,),
        example_type=wiki.DERIVED,
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
        chat.snapshot_strategy,
        chat.snapshot_check,
        fixes=(FIX_RELOAD_SNAPSHOT,),
        off=(OFF_LOADER_EMPTY,),
        example_type=chat.SNAPSHOT,
        summarize=lambda ops: repr(ops),
    ),
    Claim(
        "nemsy.trimming-loses-history",
        SYSTEM,
        ("RT-RTE-conversation-chat", "MEM-ABS-history-store"),
        "With max_turns>0 the CLI keeps only the last 2*max_turns messages: facts stated earlier are gone "
        "from later requests, with no summary and nothing persistechat.",
        f"{FIX_SAVE_EVICTED}: one model call folds the evicted turns into a bounded running summary that the "
        "chat system prompt carries",
        chat.trim_strategy,
        chat.trim_check,
        fixes=(FIX_SAVE_EVICTED,),
        off=(OFF_NO_TRIM,),
        example_type=chat.TRIM,
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
        ledger.status_strategy,
        ledger.status_touch_check,
        fixes=(FIX_HASH_STATUS,),
        off=(OFF_DISPLAY_ALWAYS_NEW,),
        example_type=ledger.STATUS,
        summarize=ledger.status_summary,
    ),
    Claim(
        "nemsy.status-split-backdated",
        SYSTEM,
        ("MEM-OBJ-ingest-log",),
        "An edit whose mtime is older than the last ingestion (a restored or synced file) shows done in the "
        "web/sources display while the CLI finds it changed and re-ingests it.",
        f"{FIX_HASH_STATUS}: one hash-based status shared by every surface",
        ledger.status_strategy,
        ledger.status_backdated_check,
        fixes=(FIX_HASH_STATUS,),
        off=(OFF_DISPLAY_ALWAYS_NEW,),
        example_type=ledger.STATUS,
        summarize=ledger.status_summary,
    ),
    Claim(
        "nemsy.status-split-blank",
        SYSTEM,
        ("MEM-OBJ-ingest-log",),
        "A whitespace-only source is empty for the CLI (recorded, never ingested) but new or changed in the "
        "web/sources display, which tests emptiness by byte size.",
        f"{FIX_HASH_STATUS}: one hash-based status shared by every surface",
        ledger.status_strategy,
        ledger.status_blank_check,
        fixes=(FIX_HASH_STATUS,),
        off=(OFF_DISPLAY_ALWAYS_NEW,),
        example_type=ledger.STATUS,
        summarize=ledger.status_summary,
    ),
    Claim(
        "nemsy.corrupt-ledger-reset",
        SYSTEM,
        ("MEM-OBJ-ingest-log", "RT-RTE-document-ingest"),
        "A missing, invalid or old-format ingest_log.json reads as an empty v2 ledger (and one that is not "
        "UTF-8 fails every scan): every source is new again and the next scan re-ingests everything.",
        f"{FIX_LEDGER_BACKUP}: keep a backup beside every ledger write and read it when the main file is "
        "missing, unreadable or resets",
        ledger.corrupt_strategy,
        ledger.corrupt_check,
        fixes=(FIX_LEDGER_BACKUP,),
        off=(OFF_LEDGER_NOT_WRITTEN,),
        example_type=ledger.CORRUPT,
        summarize=lambda e: f"{e['sources']} sources, ledger replaced by {e['corrupt']!r}",
    ),
    Claim(
        "nemsy.parser-lost-sections",
        SYSTEM,
        ("MEM-OBJ-source-page", "RT-RTE-document-ingest"),
        "An embedded '## 待探索问题' heading in the summary cuts the page from that heading to the end: "
        "every later section of the summary is lost.",
        f"{FIX_PARSER_SECTION_ONLY}: remove only the questions section (up to the next heading)",
        parser.parser_strategy,
        parser.parser_sections_check,
        fixes=(FIX_PARSER_SECTION_ONLY,),
        off=(OFF_PARSER_REJECTS_ALL,),
        example_type=parser.PARSER,
        summarize=lambda e: repr(parser.build_response(e)[0]),
    ),
    Claim(
        "nemsy.parser-stray-hash",
        SYSTEM,
        ("MEM-OBJ-source-page", "RT-RTE-document-ingest"),
        "The embedded-questions regex matches '## 待探索问题' inside '### 待探索问题', so the page keeps a "
        "stray '#' line.",
        f"{FIX_PARSER_ANY_LEVEL}: match the embedded heading at any level (#{{2,}})",
        parser.parser_strategy,
        parser.parser_stray_check,
        fixes=(FIX_PARSER_ANY_LEVEL,),
        off=(OFF_PARSER_REJECTS_ALL,),
        example_type=parser.PARSER,
        summarize=lambda e: repr(parser.build_response(e)[0]),
    ),
    Claim(
        "nemsy.parser-md-fence",
        SYSTEM,
        ("MEM-OBJ-source-page", "RT-RTE-document-ingest"),
        "Only a bare or ```markdown fence is unwrapped: a summary fenced as ```md is written with its fence "
        "lines verbatim.",
        f"{FIX_PARSER_ANY_FENCE}: unwrap a fence whatever its info string",
        parser.parser_strategy,
        parser.parser_fence_check,
        fixes=(FIX_PARSER_ANY_FENCE,),
        off=(OFF_PARSER_REJECTS_ALL,),
        example_type=parser.PARSER,
        summarize=lambda e: repr(parser.build_response(e)[0]),
    ),
    Claim(
        "nemsy.parser-empty-summary",
        SYSTEM,
        ("MEM-OBJ-source-page", "RT-RTE-document-ingest", "MEM-OBJ-ingest-log"),
        "A summary with no content ahead of its questions (empty, or only an embedded questions heading) "
        "is accepted: an empty page (or a lone '#') is written, indexed and recorded as done.",
        f"{FIX_PARSER_REJECT_EMPTY}: write no page for a summary with no text and record the source "
        "'failed' (pending), not done",
        parser.parser_strategy,
        parser.parser_empty_check,
        fixes=(FIX_PARSER_REJECT_EMPTY,),
        off=(OFF_PARSER_REJECTS_ALL,),
        example_type=parser.PARSER,
        summarize=lambda e: repr(parser.build_response(e)[0]),
    ),
    Claim(
        "nemsy.ambiguous-citation",
        SYSTEM,
        ("MEM-RTE-browser-read",),
        "Citation resolve matches the lower-cased stem and returns the first note in path order, so "
        "insights/FOO-d, queries/foo-d and sources/Foo-d all resolve the citation foo-d to the insights "
        "page.",
        f"{FIX_UNIQUE_RESOLVE}: resolve to the note whose stem equals the citation exactly (else the one "
        "matching it ignoring case); answer 'ambiguous' with the candidates only when several qualify",
        wiki.citation_strategy,
        wiki.citation_check,
        fixes=(FIX_UNIQUE_RESOLVE,),
        off=(OFF_RESOLVE_ALWAYS_404,),
        example_type=wiki.CITATION,
        summarize=lambda e: f"pages {['/'.join(p) for p in e['pages']]}, cite {e['cite']!r}",
    ),
    Claim(
        "nemsy.web-ignores-flags",
        SYSTEM,
        ("RT-RTE-answer-archive", "RT-RTE-document-ingest"),
        "/api/query drops archive and /api/ingest drops force, re-ingesting unchanged files.",
        f"{FIX_WEB_FLAGS}: the web endpoints honor archive and force like the CLI",
        ledger.web_strategy,
        ledger.web_check,
        fixes=(FIX_WEB_FLAGS,),
        off=(OFF_WEB_INGEST_NOOP,),
        example_type=ledger.WEB,
        summarize=lambda ops: repr(ops),
    ),
    Claim(
        "nemsy.reasoning-archive-crash",
        SYSTEM,
        ("RT-RTE-reasoning-query", "RT-RTE-answer-archive", "MEM-OBJ-token-log"),
        "query -r -a treats the reasoning tuple as text: it raises before archiving and writes no log or "
        "token-log entry.",
        f"{FIX_REASON_ARCHIVE}: unpack (reasoning, answer) and continue as the ordinary path",
        ledger.reason_strategy,
        ledger.reason_check,
        fixes=(FIX_REASON_ARCHIVE,),
        off=(OFF_ARCHIVE_NOOP,),
        example_type=ledger.REASON,
        summarize=lambda e: f"reasoning={e['reasoning']}, question about {e['question']}",
    ),
]

__all__ = ["CLAIMS"]
