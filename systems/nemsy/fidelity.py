"""Nemsy fidelity table: every record ID of report 002 mapped to model elements and tests (or a "Not
modeled:" reason), the modeled operations, every simplification, and where the note and report differ."""

from sim.fidelity import Coverage, Deviation, Operation
from systems.nemsy import faults as fp
from systems.nemsy.model.prompts import UPSTREAM_SYSTEM_TOKENS, system_prompt

T = "tests/test_nemsy_model.py::"
F = "tests/test_nemsy_functions.py::"
P = "tests/test_nemsy_properties.py::"
S = "tests/test_nemsy_stateful.py::"
A = "tests/test_nemsy_adapter.py::"
R = "tests/test_nemsy_requests.py::"
U = "tests/test_nemsy_fidelity.py::"

OPERATIONS: list[Operation] = [
    Operation(
        "ingest",
        ("RT-RTE-document-ingest", "MEM-OBJ-source-page"),
        "load 10 (wide 50) pages + index, one call, token log, parse/write page + index, log, ledger",
        (fp.INGEST_LLM_CALL, fp.INGEST_AFTER_PAGE, fp.INGEST_AFTER_INDEX, fp.INGEST_AFTER_LOG),
    ),
    Operation(
        "_parse_and_write_ingest",
        ("MEM-OBJ-source-page",),
        "SUMMARY regex, fence unwrap, embedded-questions removal, QUESTIONS append, raw overwrite",
    ),
    Operation(
        "_update_index",
        ("MEM-OBJ-wiki-index",),
        "append '- [[stem]] — line （date）'; create with frontmatter when absent; never dedupe",
    ),
    Operation(
        "append_log",
        ("MEM-OBJ-operation-log",),
        "append '[YYYY-MM-DD HH:MM] op | title — detail' (a text-mode rewrite: \\r and \\r\\n become \\n)",
    ),
    Operation(
        "record_ingest",
        ("MEM-OBJ-ingest-log",),
        "v2 record: stripped hash, prev hash, unstripped size, status, timestamps, prior page kept",
        (fp.LEDGER_WRITE,),
    ),
    Operation(
        "load_ingest_log",
        ("MEM-OBJ-ingest-log",),
        "missing/invalid/non-dict/non-v2 -> empty v2; a damaged v2 dict is used as is (raises later)",
    ),
    Operation("get_file_status", ("MEM-OBJ-ingest-log",), "CLI status by content hash"),
    Operation("display_status", ("MEM-OBJ-ingest-log",), "web/sources badge by mtime vs last ingestion"),
    Operation(
        "cli_ingest",
        ("RT-RTE-document-ingest",),
        "collect, classify (empty/done/new/changed), guidance, ingest; >20 pending asks y/N",
    ),
    Operation(
        "web_ingest",
        ("RT-RTE-document-ingest",),
        "/api/ingest: a path as given (404 if missing), directory collected, force and ledger ignored",
    ),
    Operation("collect_files", ("RT-RTE-document-ingest",), "suffix filter, _index.md excluded, skip dirs"),
    Operation("find_index_context", ("MEM-OBJ-index-guidance",), "ancestor _index.md, farthest first"),
    Operation(
        "load_wiki_context",
        ("RT-BAP-wiki-context", "MEM-OBJ-wiki-index", "RT-RTE-wiki-answer"),
        "index in full + N newest pages (mtime index; reads only N bodies); no token budget",
    ),
    Operation(
        "query",
        ("RT-RTE-wiki-answer", "RT-RTE-reasoning-query"),
        "30 pages (or a snapshot), one call, token log, archive only with -a, log",
    ),
    Operation(
        "_archive_query_result",
        ("RT-RTE-answer-archive", "MEM-OBJ-query-page"),
        "'# q' + answer minus ARCHIVABLE, frontmatter {date,tags,title,type}, index entry",
        (fp.ARCHIVE_AFTER_PAGE,),
    ),
    Operation("web_query", ("RT-RTE-wiki-answer", "RT-RTE-answer-archive"), "/api/query: archive ignored"),
    Operation("lint", ("RT-RTE-wiki-lint",), "50 pages + index, one call, report returned, log entry"),
    Operation(
        "save_insight",
        ("RT-RTE-insight-save", "MEM-OBJ-insight-page"),
        "fresh call on the transcript, title extraction/fallbacks, raw write, index, log",
        (fp.SAVE_AFTER_PAGE, fp.SAVE_AFTER_INDEX),
    ),
    Operation(
        "ChatSession.say",
        ("RT-RTE-conversation-chat",),
        "CLI chat turn on the start-of-session 20-page snapshot; trim to 2*max_turns after the turn",
    ),
    Operation(
        "ChatSession.command",
        ("RT-RTE-conversation-chat",),
        "/ingest, /save, /query [-a] (reuses the snapshot); no history change",
    ),
    Operation("web_chat", ("RT-RTE-conversation-chat",), "/api/chat: 20 pages fresh per request"),
    Operation(
        "ChatSession.input",
        ("RT-RTE-conversation-chat",),
        "REPL line: stripped, blank skipped, '/' commands, else a turn",
    ),
    Operation("web_lint", ("RT-RTE-wiki-lint",), "/api/lint: 50 pages, one call, token log, no log line"),
    Operation("web_wiki", ("MEM-RTE-browser-read",), "/api/wiki: every note with its frontmatter fields"),
    Operation("status", ("MEM-OBJ-token-log",), "status counts (every *.md, sources/, queries/) and tokens"),
    Operation(
        "delete_wiki_note",
        ("MEM-CLM-storage-lifecycle",),
        "confirmation required; unlinks only (index, log, ledger untouched)",
    ),
    Operation("resolve", ("MEM-RTE-browser-read",), "first note in path order with the lower-cased stem"),
    Operation("read_file", ("MEM-RTE-browser-read",), "raw note text for the browser (no model call)"),
    Operation(
        "_record_tokens / summarize_token_log",
        ("MEM-OBJ-token-log",),
        "append usage per call; summary by command and model",
    ),
]

NOT_MODELED: list[str] = [
    "The model itself (DeepSeek): replies come from seeded policies.",
    "Upstream's prompt text: stand-ins padded to upstream's cl100k size (0 tokens off).",
    "Streaming output, the terminal UI, progress bars and the printed lists.",
    "The browser UI (FileLibrary and Chat views, mode switches, local 'done' marks).",
    "Settings loading (TOML, .env, environment variables): the TOML defaults are used.",
    "Local time: the agent clock is UTC and stands for date.today()/datetime.now().",
    "python-frontmatter's JSON and TOML handlers (a page that opens with a ``{`` or ``+++`` line).",
    "the CLI ``sources`` tree raising on an unparsable ingested_at (the web shows done).",
    "/status's balance request to the provider and its printed tables (counts returned).",
    "Reasoning mode's thinking text, temperature and budget (only its tuple defect).",
    "Lint's report content: the stand-in returns empty ISSUES/SUGGESTIONS sections.",
    "/api/file's lexical containment check (the file tree refuses escaping paths itself).",
    "search_notes, a helper without a wired caller (iter_notes does not exist at this commit).",
    "Provider caching, overflow and truncation (RT-CMP-deepseek): requests are recorded only.",
]

DIFFERENCES: list[str] = [
    "Report quotes the index entry with ASCII parentheses '(date)'; the note (code at the pinned "
    "commit) has full-width '（date）' after one ASCII space. The model follows the note.",
    "Report: 'Missing SUMMARY returns None'; the note adds that CRLF or a trailing space after the "
    "marker also fails. Modeled per the note.",
    "Report describes archive as explicit-flag only; the note confirms ARCHIVABLE never archives by "
    "itself at this commit (an older revision archived on the marker). Modeled per the note.",
    "The note shows the freshly created index ending with the entry's newline; python-frontmatter's "
    "dumps strips the formatted post, so the created file has no trailing newline until the next append "
    "(which then adds the '\\n' separator the note describes). The end state after two entries is the "
    "same either way.",
    "Report's token-log and status consumers are 'supplied'; the note gives the exact schema and "
    "summary, which the model implements.",
]

COVERAGE: dict[str, Coverage] = {
    "MEM-ABS-history-store": Coverage(
        ("Nemsy.history_files", "ChatSession.history (in memory only)", "FIX_SAVE_EVICTED"),
        (
            T + "test_history_dir_stays_empty",
            T + "test_chat_trimming_after_each_turn",
            P + "test_pinned_counterexample",
        ),
    ),
    "MEM-CLM-storage-lifecycle": Coverage(
        ("Nemsy.delete_wiki_note", "FIX_DELETE_SYNC", "claim nemsy.delete-leaves-index"),
        (T + "test_delete_helper", T + "test_synchronized_delete_fix", S + "test_nemsy_wiki_machine"),
    ),
    "MEM-OBJ-index-guidance": Coverage(
        ("Nemsy.find_index_context", "Nemsy.ingest_prompt"),
        (
            T + "test_guidance_farthest_first_with_labels",
            T + "test_guidance_outside_raw_root_raises",
            T + "test_guidance_reaches_the_ingest_prompt",
        ),
    ),
    "MEM-OBJ-ingest-log": Coverage(
        (
            "Nemsy.record_ingest",
            "Nemsy.load_ingest_log",
            "Nemsy.get_file_status",
            "Nemsy.display_status",
            "cli_file_status",
            "display_file_status",
            "content_hash",
            "LedgerRecord",
        ),
        (
            T + "test_ledger_schema_and_fields",
            T + "test_ledger_keeps_prior_page_when_new_is_none",
            T + "test_ledger_fallback_to_empty_v2",
            F + "test_display_and_cli_status_disagree",
            T + "test_display_status_through_the_model",
            S + "test_nemsy_wiki_machine",
        ),
    ),
    "MEM-OBJ-insight-page": Coverage(
        ("Nemsy.save_insight", "InsightRewriter"),
        (T + "test_insight_title_and_fallbacks", T + "test_insight_prompt_and_empty_history"),
    ),
    "MEM-OBJ-operation-log": Coverage(
        ("Nemsy.append_log",),
        (
            T + "test_log_entries_formats",
            T + "test_ingest_logged_even_when_parsing_failed",
            T + "test_web_endpoints_write_no_log",
            U + "test_log_append_rewrites_the_file_in_text_mode",
        ),
    ),
    "MEM-OBJ-query-page": Coverage(
        ("Nemsy._archive_query_result", "Nemsy.query_page_name", "frontmatter_dumps"),
        (
            T + "test_archive_body_and_metadata",
            T + "test_query_title_cut_to_40_before_sanitizing",
            T + "test_upstream_query_with_archive",
        ),
    ),
    "MEM-OBJ-source-page": Coverage(
        ("Nemsy._parse_and_write_ingest", "parse_ingest_response", "sanitize_title", "IngestResponder"),
        (
            F + "test_sanitize_title_examples",
            F + "test_parser_equals_upstream_regex_sequence",
            F + "test_parser_embedded_heading_cuts_everything_after",
            T + "test_same_day_same_name_overwrites",
            T + "test_upstream_ingest_basic",
        ),
    ),
    "MEM-OBJ-token-log": Coverage(
        ("Nemsy._record_tokens", "Nemsy.load_token_log", "summarize_token_log"),
        (
            F + "test_token_log_summary",
            T + "test_token_log_file_and_reset",
            T + "test_reasoning_without_archive_logs_reasoner_mode",
        ),
    ),
    "MEM-OBJ-wiki-index": Coverage(
        ("Nemsy._update_index", "index_entry", "load_wiki_context (index first, in full)"),
        (
            F + "test_index_entry_format",
            T + "test_index_created_with_frontmatter_then_appended",
            T + "test_summary_lines_of_each_writer",
            S + "test_nemsy_wiki_machine",
        ),
    ),
    "MEM-RTE-browser-read": Coverage(
        ("Nemsy.resolve", "resolve_citation", "Nemsy.read_file"),
        (
            F + "test_resolve_citation_first_in_path_order",
            F + "test_resolve_citation_no_prefix_or_alias",
            T + "test_resolve_through_the_model",
        ),
    ),
    "RT-BAP-wiki-context": Coverage(
        (
            "load_wiki_context",
            "MtimeIndex",
            "select_wiki_pages",
            "Nemsy._request (sim.request's fields)",
        ),
        (
            T + "test_loader_separators_and_order",
            T + "test_route_page_limits",
            T + "test_loader_matches_upstream_selection_after_mixed_writes",
            T + "test_every_load_is_a_recorded_request",
            R + "test_every_route_records_exact_parts",
            A + "test_adapter_ingests_each_observation_and_returns_query_requests",
        ),
    ),
    "RT-CMP-deepseek": Coverage(
        not_modeled="the provider model and its hidden state; requests are recorded with exact cl100k "
        "counts and seeded policies stand in for replies (see NOT_MODELED)"
    ),
    "RT-RTE-answer-archive": Coverage(
        (
            "Nemsy.query(archive=)",
            "Nemsy._archive_query_result",
            "ChatSession.command('/query q -a')",
            "Nemsy.web_query",
        ),
        (
            T + "test_archivable_marker_alone_never_archives",
            T + "test_chat_query_reuses_snapshot",
            T + "test_archive_body_and_metadata",
        ),
    ),
    "RT-RTE-conversation-chat": Coverage(
        ("ChatSession", "Nemsy.web_chat", "Nemsy.chat_request"),
        (
            T + "test_cli_chat_snapshot_is_stale_after_ingest",
            T + "test_chat_trimming_after_each_turn",
            T + "test_chat_archivable_prompt_saves_current_history",
        ),
    ),
    "RT-RTE-document-ingest": Coverage(
        ("Nemsy.ingest", "Nemsy.cli_ingest", "Nemsy.web_ingest", "Nemsy.collect_files"),
        (
            T + "test_done_skipped_unless_force",
            T + "test_empty_source_recorded_without_model_call",
            T + "test_web_ingest_ignores_force_and_ledger",
            T + "test_full_scan_over_twenty_needs_confirmation",
            U + "test_ingest_without_raw_root_falls_back_to_the_working_directory",
            T + "test_crash_after_page_leaves_page_without_index",
        ),
    ),
    "RT-RTE-insight-save": Coverage(
        ("Nemsy.save_insight", "ChatSession.command('/save')"),
        (T + "test_insight_title_and_fallbacks", T + "test_chat_archivable_prompt_saves_current_history"),
    ),
    "RT-RTE-reasoning-query": Coverage(
        ("Nemsy.query(reasoning=True)", "FIX_REASON_ARCHIVE"),
        (
            T + "test_reasoning_archive_raises_before_writing",
            T + "test_reasoning_without_archive_logs_reasoner_mode",
        ),
    ),
    "RT-RTE-wiki-answer": Coverage(
        ("Nemsy.query", "load_wiki_context(30)", "FactAnswerer"),
        (
            T + "test_every_load_is_a_recorded_request",
            T + "test_upstream_query_basic",
            P + "test_pinned_counterexample",
        ),
    ),
    "RT-RTE-wiki-lint": Coverage(
        ("Nemsy.lint",), (T + "test_route_page_limits", T + "test_log_entries_formats")
    ),
}

_ROUTES = {
    "ingest": "agent.py:49-76 (CLI ingest, chat /ingest, /api/ingest)",
    "query": "agent.py:78-97 (CLI query, chat /query, reasoning -r)",
    "web_query": "web.py:326-348 (/api/query)",
    "chat": "agent.py:455-472 (CLI chat, after the Wiki context)",
    "web_chat": "web.py:281-301 (/api/chat, after the Wiki context)",
    "lint": "agent.py:99-120 (CLI lint, chat /lint, /api/lint)",
    "save": "agent.py:501-536 (chat /save, the ARCHIVABLE prompt, /api/save)",
}

#: Every remaining deviation from upstream (``memsim doc fidelity``), besides the NOT_MODELED lines.
DEVIATIONS: list[Deviation] = [
    Deviation(
        f"{route} system prompt",
        "wording",
        f"the shared base (agent.py:35-47, schema.py:16-28) plus the {route} addon, {where}: upstream's own "
        f"Chinese prose, {UPSTREAM_SYSTEM_TOKENS[route]} cl100k tokens at an empty Wiki path.",
        "memsim's own short text with upstream's 'Wiki 目录：{path}' line, padded with ' ~' placeholder "
        "tokens to the same count (the path adds the same tokens as upstream's).",
        "clean room: upstream has no licence, so its prompts are not copied; only their size carries over",
        "none: every request of this route has upstream's cl100k cost at every Wiki path (counted now, "
        "below; tests/test_nemsy_fidelity.py checks three paths); the stand-in's words do not steer the "
        "seeded policies",
        UPSTREAM_SYSTEM_TOKENS[route],
        lambda route=route: system_prompt(route, ""),  # type: ignore[misc]
    )
    for route, where in _ROUTES.items()
]
