"""MerchantBench fidelity: operations, simplifications, record coverage, note/report differences."""

from __future__ import annotations

from sim.fidelity import Coverage, Deviation, Operation
from systems.merchantbench import faults as fp
from systems.merchantbench.model.tools import UPSTREAM_SCHEMA_TOKENS, tools_json

T_PURE = "tests/test_merchantbench_pure.py"
T_MEM = "tests/test_merchantbench_memory.py"
T_REACT = "tests/test_merchantbench_react.py"
T_PROP = "tests/test_merchantbench_properties.py"
T_CLAIMS = "tests/test_claims_registry.py"
T_FID = "tests/test_merchantbench_fidelity.py"


def _claim(cid: str) -> str:
    return f"{T_CLAIMS}::test_direction_comes_out_as_expected[merchantbench.{cid}:faithful]"


OPERATIONS: list[Operation] = [
    Operation(
        "safe_agent_id",
        ("MEM-OBJ-memory-doc",),
        "file-name form of an agent id: runs outside [A-Za-z0-9_.-] to '_', strip '._', 'agent' if empty",
    ),
    Operation(
        "write_memory_doc",
        ("MEM-OBJ-memory-doc", "MEM-OBJ-memory-history", "MEM-RTE-document-write"),
        "str-coerce, 256 KiB limit, overwrite the document in place, then append a history entry",
        (
            fp.WRITE_DOC_PARTIAL,
            fp.WRITE_DOC_AFTER_DOCUMENT,
            fp.WRITE_DOC_HISTORY_APPEND,
            fp.WRITE_DOC_BEFORE_REPLACE,
        ),
    ),
    Operation(
        "read_memory_doc",
        ("MEM-RTE-document-read",),
        "the whole latest document with universal newlines; missing or empty: '' and 0 bytes",
    ),
    Operation(
        "next_memory_version",
        ("MEM-OBJ-memory-history",),
        "1 + substring counts of the current and legacy markers anywhere in the history file",
    ),
    Operation(
        "act",
        ("RT-RTE-act-gate", "RT-CLM-http-controls"),
        "POST /act: 410/425/429/400 admission, 409 idempotency precheck, dispatch, live step trace",
    ),
    Operation(
        "write_step_live / write_step_index",
        ("MEM-OBJ-step-traces",),
        "t_NNNNN.json by temp file + os.replace, after every act and at hook close",
        (fp.STEP_TRACE_BEFORE_REPLACE,),
    ),
    Operation(
        "read_step_index", ("MEM-RTE-trace-inspection",), "a step's JSON, None when missing or corrupt"
    ),
    Operation(
        "read_hermes_trace",
        ("MEM-RTE-trace-inspection",),
        "Hermes state.db read-only: session lineage, active rows, Day/Hour steps, system prompt",
    ),
    Operation(
        "delete_run",
        ("MEM-RTE-run-withdrawal",),
        "stop the worker, drop runtime, remove the whole run directory (12 attempts)",
        (fp.DELETE_RUN_RMTREE,),
    ),
    Operation(
        "release_terminal_runtime",
        ("MEM-RTE-run-withdrawal",),
        "unload: drop the in-memory runtime of a finished/stopped run; files remain, /act 410",
    ),
    Operation(
        "estimate_tokens / message_token_estimate",
        ("RT-RTE-context-trim",),
        "max(1, (ascii + 2*non_ascii)//4) of the sorted JSON; a message costs that plus 4",
    ),
    Operation(
        "_trim_messages_to_token_budget",
        ("RT-RTE-context-trim", "MEM-OBJ-history"),
        "newest always kept, contiguous suffix, leading tool messages dropped (incremental ledger)",
    ),
    Operation(
        "_maybe_add_compaction_reminder",
        ("RT-RTE-context-trim", "RT-RTE-react-loop"),
        "fire on reported prompt tokens (else untrimmed estimate) >= T: pending reminder or notice",
    ),
    Operation(
        "_compact_history_if_pending",
        ("RT-RTE-context-trim", "MEM-OBJ-history"),
        "after every successful act: history = trim(history, K), reset reported tokens",
    ),
    Operation(
        "_drive_step",
        ("RT-RTE-react-loop",),
        "observation, hops of trigger/request/LLM/act; 425 truncation; forced end-of-step paths",
    ),
    Operation("_remember_act", ("MEM-OBJ-history",), "EOS-only acts keep just the assistant content"),
    Operation(
        "server outage, crash, restart and agent respawn",
        ("MEM-OBJ-history", "RT-RTE-react-loop", "RT-OBJ-system-brief"),
        "a ConnectionError escapes the step; the [step-crash] EOS fails too, the agent exits; the respawned "
        "process starts with an empty history (and, against a live Environment, no brief)",
    ),
    Operation("_sanitize_message_for_llm", ("RT-RTE-react-loop",), "tool-call arguments fixed in a copy"),
    Operation(
        "Forbidden redaction",
        ("RT-RTE-react-loop",),
        "one-shot in-place redaction of the last tool group, then one retry",
    ),
    Operation(
        "_add_cache_breakpoints / extra_body (Claude models)",
        ("RT-CMP-openai-model", "MEM-CLM-telemetry-limits"),
        "no system message; cache_control on the system block, the last two messages and the last "
        "assistant message (non-empty text only); the Forbidden retry resends with the system mark alone",
    ),
    Operation(
        "_act_context",
        ("MEM-CLM-telemetry-limits",),
        "tokens (reported, else request estimate), compacted while pending, health counters",
    ),
]

NOT_MODELED: list[str] = [
    "Simulator domain state (products, orders, cash), observation assembly, scoring and leaderboards: the "
    "workload supplies the observation text.",
    "Snapshots, dashboard replay and SQLite rehydration (MEM-CLM-state-boundary): none restores "
    "ReAct history. A server restart is modeled as a rehydrated Environment at the same tick with its "
    "files and idempotency cache; what else rehydration restores (domain state) is not.",
    "External Hermes: profile preparation, compression and skills (RT-RTE-hermes-launch); only the state.db "
    "reader and the tool denylist of the Hermes overlay are modeled.",
    "Hosted evaluation (RT-RTE-hosted-eval).",
    "The human playground's edits of the memory document (MEM-RTE-document-write's alternate admission "
    "path; Corrections 13, unverified): its write path and its interleaving with agent writes were not read "
    "in upstream's code. The playground's per-step read goes through the same read_memory_doc.",
    "Worker threads, the bootstrap process, leases and PRAGMA wal_checkpoint: a run stops cleanly or is "
    "'stuck'.",
    "env.lock contention: SimPy runs one process at a time, so every /act is already serialized.",
    "Chat-template tokens: the provider count is cl100k of role, content and tool-call name/arguments per "
    "message, plus the system prompt and the tool schemas' canonical JSON.",
    "Claude models: the act context's tokens estimate (sent only when no usage was reported) is taken in "
    "upstream over the marked copies of the request (react:191-227, 629: a marked message's content "
    "becomes one text block with cache_control), memsim's over the unmarked messages: a higher chars/4 "
    "figure in upstream's act telemetry; the trigger and every request are unchanged.",
    "Directory fsyncs and case-insensitive filesystems other than by the casefold_paths switch.",
    "Legacy realshop history entries are assumed to share the current entry framing (framed-versions fix).",
    "Multi-agent hooks beyond 'the hook closes when every agent ended its step'.",
    "max_steps, activation_period and CLI/env overrides of B, T, K: they are ReactConfig fields.",
    "The 50 ms wait between delete_run's 12 removal attempts (delete_run is a synchronous call).",
    "max_hook_seconds: a hook that closes on time is an injected 425 from the FaultSchedule.",
    "Flask's <agent_id> route converter (ids with '/' unreachable over HTTP): the model accepts any id.",
    "The domain tools' parameters and handlers (RT-OBJ-tool-registry): the published schema keeps "
    "upstream's 26 tool names and order and its size (4,127 cl100k tokens, knob schema_tokens), with filler "
    'descriptions and no parameters for the 22 domain tools; a call to one returns {"ok": true}. By the '
    "design's chars/4 estimate the stand-in is 4,661 tokens, upstream's 4,302 (the estimate-counting "
    "provider's reported tokens are 359 higher per request); cl100k counts are equal.",
    "token_usage on each act and record_usage (/usage) for delayed auxiliary usage: cost telemetry only "
    "(the cached-token reading and token_usage's arithmetic are model.caching's, and --provider prices "
    "each request); the trigger reads usage.prompt_tokens, which includes cached tokens, as modeled. Turn "
    "records carry token_usage {}.",
    "Failed-act runtime events (every /act answered >= 400 is logged as {status, error}): telemetry "
    "outside the memory the agent reads.",
    "Client-supplied tool messages (runtime_historical) and non-env tool_origin calls in /act payloads, "
    "and skipping env calls whose result is already in the payload: the ReAct baseline sends only "
    "[*pre_assistant, assistant] with env calls, so these paths never arise; the modeled server rejects a "
    "client tool message with 400.",
    "The idempotency cache's file (agent/idem_cache.json): the cache is an in-memory LRU of 256 keys that "
    "survives a server restart, as the persisted file makes it.",
    "Observation long-poll timeouts (408 retried) and the observation cache: the observation is the "
    "workload's text for the open hook.",
]

DIFFERENCES: list[str] = [
    "Revision: the report cites d9e5bd75 (unreadable); the fidelity note and this model follow 47eafeae. "
    "39d61122 counts only the current marker; 1054108a has no realshop- Hermes fallback; older deletion "
    "calls rmtree once (modeled: 12 attempts).",
    "The report's 'unload' is modeled as release_terminal_runtime, the only such method the note found.",
    "The report says the version count covers current and legacy markers; the note adds that the count is "
    "over the whole file, bodies included (version inflation, modeled).",
    "The report says there is no provider-token ceiling; the note adds that the trigger may never fire "
    "(silent slide) depending on the provider's tokenizer: modeled as ReactAgent(provider_tokenizer=...). "
    "With English prose and cl100k the reported tokens of a request trimmed to B stay near 0.84*B plus the "
    "4,127-token schemas, below T = B for B above about 27,000: in the benchmark adapter at B = 40,000 "
    "the reminder fires only after a lone observation over B (tests/test_merchantbench_properties.py "
    "adapter tests); at B = 8,000 the schemas alone are half the window and it fires every few steps.",
    "Silent-slide fix: the note suggests T below the provider budget; that alone still drops silently when "
    "the next message is large (kept total far below T). The model's fix fires on max(reported tokens, "
    "untrimmed history estimate) with T <= B, which warns before any trim drops.",
    "The report treats the Forbidden redaction as filtering raw context; the note shows it is permanent in "
    "history (modeled, claim forbidden-erases-read).",
]

COVERAGE: dict[str, Coverage] = {
    "MEM-BAP-document-guidance": Coverage(
        (
            "model.TOOL_SCHEMAS read_memory_doc description",
            "policies.SavePolicy read_on_probe",
            "adapter.Adapter read-on-probe host policy",
        ),
        (
            f"{T_MEM}::test_both_tools_are_in_the_schemas",
            f"{T_PROP}::test_adapter_runs_the_workload",
            _claim("orphaned-read-result"),
        ),
    ),
    "MEM-CLM-state-boundary": Coverage(
        not_modeled=(
            "simulator snapshots, dashboard replay and SQLite rehydration hold domain state and never "
            "restore "
            "ReAct history; the model has no domain state (the ReAct history is never rebuilt, as modeled)"
        )
    ),
    "MEM-CLM-telemetry-limits": Coverage(
        ("ReactAgent.act_context", "MerchantEnv.trace_index", "compact op in the trace"),
        (
            f"{T_REACT}::test_reminder_then_write_compacts_after_the_act",
            f"{T_REACT}::test_context_tokens_reported_else_request_estimate",
            f"{T_MEM}::test_trace_index_counts_compacted_turns",
            _claim("traces-not-reloaded"),
        ),
    ),
    "MEM-OBJ-history": Coverage(
        ("model.History (incremental ledger)", "ReactAgent.history", "ReactAgent.remember_act"),
        (
            f"{T_PURE}::test_incremental_trim_equals_upstream_trim",
            f"{T_REACT}::test_history_ledger_matches_a_recount",
            f"{T_REACT}::test_no_tool_call_becomes_eos_and_only_content_is_kept",
            f"{T_FID}::test_10_a_server_still_down_kills_the_agent_and_the_respawn_starts_empty",
            _claim("suffix-eviction"),
            _claim("large-save-empties-history"),
        ),
    ),
    "MEM-OBJ-memory-doc": Coverage(
        ("model.safe_agent_id", "MerchantEnv.memory_doc_path", "MerchantEnv.write_memory_doc"),
        (
            f"{T_PURE}::test_safe_agent_id_collisions_to_agent_0",
            f"{T_MEM}::test_paths_under_the_run_directory",
            f"{T_MEM}::test_agents_have_separate_documents",
            _claim("id-aliasing"),
            _claim("index-aliasing"),
        ),
    ),
    "MEM-OBJ-memory-history": Coverage(
        ("model.history_entry", "model.next_memory_version", "MerchantEnv._append_memory_history"),
        (
            f"{T_MEM}::test_two_writes_make_two_versions",
            f"{T_MEM}::test_legacy_marker_makes_version_2",
            f"{T_PURE}::test_next_memory_version_examples",
            _claim("version-inflation"),
        ),
    ),
    "MEM-OBJ-step-traces": Coverage(
        ("MerchantEnv.write_step_live", "MerchantEnv.write_step_index", "faults.STEP_TRACE_BEFORE_REPLACE"),
        (
            f"{T_MEM}::test_step_trace_shape_live_then_final",
            f"{T_MEM}::test_crash_before_trace_replace_leaves_the_temp_file",
            _claim("traces-not-reloaded"),
        ),
    ),
    "MEM-RTE-document-read": Coverage(
        ("MerchantEnv.read_memory_doc",),
        (
            f"{T_MEM}::test_first_read_is_empty",
            f"{T_MEM}::test_crlf_comes_back_as_lf",
            _claim("crlf-not-preserved"),
            _claim("orphaned-read-result"),
        ),
    ),
    "MEM-RTE-document-write": Coverage(
        ("MerchantEnv.write_memory_doc", "faults.WRITE_DOC_*"),
        (
            f"{T_MEM}::test_write_then_read_round_trips_with_utf8_bytes",
            f"{T_MEM}::test_size_limit_allows_exactly_262144",
            f"{T_MEM}::test_crash_between_document_and_history_leaves_unrecorded_document",
            _claim("overwrite-then-append"),
        ),
    ),
    "MEM-RTE-run-withdrawal": Coverage(
        ("RunRegistry.delete_run", "RunRegistry.release_terminal_runtime"),
        (f"{T_MEM}::test_delete_run_removes_everything_together", f"{T_MEM}::test_unload_drops_runtime_only"),
    ),
    "MEM-RTE-trace-inspection": Coverage(
        ("MerchantEnv.read_step_index", "model.read_hermes_trace"),
        (
            f"{T_MEM}::test_read_step_index_missing_or_corrupt_is_none",
            f"{T_MEM}::test_hermes_reader_active_rows_and_prompt",
            f"{T_MEM}::test_hermes_reader_include_compacted",
        ),
    ),
    "RT-BAP-brief-guidance": Coverage(
        ("ReactAgent.brief",), (f"{T_REACT}::test_system_prompt_outside_history_and_first_brief_only",)
    ),
    "RT-CLM-http-controls": Coverage(
        ("MerchantEnv.act idempotency key and fingerprint",),
        (
            f"{T_MEM}::test_idempotent_replay_and_conflict",
            f"{T_MEM}::test_act_rejections",
            _claim("reused-call-id"),
        ),
    ),
    "RT-CMP-openai-model": Coverage(
        ("policies.SavePolicy", "policies.ScriptedModel", "ReactAgent._call_llm (provider count, errors)"),
        (
            f"{T_REACT}::test_provider_count_is_exact_cl100k_of_the_whole_request",
            f"{T_REACT}::test_allocation_quota_nine_calls_then_exhausted",
            _claim("no-provider-ceiling"),
        ),
    ),
    "RT-OBJ-system-brief": Coverage(
        ("ReactAgent.system_prompt", "MerchantEnv.deliver_observation (brief once per live env)"),
        (
            f"{T_REACT}::test_system_prompt_outside_history_and_first_brief_only",
            f"{T_FID}::test_9_system_prompt_comes_from_the_first_brief_even_empty",
        ),
    ),
    "RT-OBJ-tool-registry": Coverage(
        ("model.TOOL_SCHEMAS", "MerchantEnv.offered_tools", "MerchantEnv.tool_denylist"),
        (f"{T_MEM}::test_both_tools_are_in_the_schemas", f"{T_MEM}::test_denied_tools"),
    ),
    "RT-RTE-act-gate": Coverage(
        ("MerchantEnv.act",),
        (
            f"{T_MEM}::test_act_rejections",
            f"{T_MEM}::test_closed_hook_admits_only_pure_end_of_step",
            _claim("reminder-lost-on-425"),
        ),
    ),
    "RT-RTE-context-trim": Coverage(
        (
            "model.trim_messages_to_token_budget",
            "History.trim_start",
            "ReactAgent.maybe_add_compaction_reminder",
            "ReactAgent.compact_history_if_pending",
        ),
        (
            f"{T_PURE}::test_trim_budget_150_example_orphans_and_drops_the_read",
            f"{T_REACT}::test_119_reported_tokens_do_not_fire_trigger_120",
            f"{T_PROP}::test_adapter_slides_silently_when_no_observation_exceeds_the_window",
            f"{T_PROP}::test_adapter_fires_only_after_a_lone_observation_over_the_window",
            f"{T_REACT}::test_large_save_below_k_still_pushes_the_observation_out",
            _claim("silent-slide"),
        ),
    ),
    "RT-RTE-hermes-launch": Coverage(
        not_modeled=(
            "Hermes profile setup, compression settings and skills are external; only the overlay's "
            "denial of "
            "the document tools (MerchantEnv tool_denylist) and the state.db reader are modeled"
        )
    ),
    "RT-RTE-hosted-eval": Coverage(
        not_modeled=("terminal evaluation keeps operator-facing results; no memory route to model")
    ),
    "RT-RTE-react-loop": Coverage(
        ("ReactAgent.drive_step", "ReactAgent.force_end_of_step", "ReactAgent._redact_last_tool_group"),
        (
            f"{T_REACT}::test_425_truncates_history_but_keeps_pending_and_reminder_copy",
            f"{T_REACT}::test_forbidden_redacts_last_tool_group_in_place_and_retries_without_sleep",
            f"{T_REACT}::test_500_forces_an_act_error_eos",
            _claim("forced-eos-compacts"),
            _claim("forbidden-erases-read"),
        ),
    ),
}

#: Every remaining deviation from upstream (``memsim doc fidelity``), besides the NOT_MODELED lines.
DEVIATIONS: list[Deviation] = [
    Deviation(
        "register() runtime-health capabilities",
        "not modeled",
        "the ReAct baseline's register() (react:359-377) sends framework, model, version and an extra of "
        "max_hops_per_step, context_window_tokens, compact_trigger_tokens, compact_keep_tokens, "
        "runtime_health_version 1 and runtime_health_capabilities {provider_api_failed_attempts: "
        "reported, retry_exhausted: reported, memory_compactions: reported, skills_evolutions: "
        "not_applicable}. The run meta keeps it, and the leaderboard (env/web/leaderboard.py "
        "_runtime_health_metadata, _weekly_runtime_health) reads it to decide what it expects of the "
        "agent: a counter declared 'reported' makes its weekly runtime-health metric complete data (a 0 "
        "means none happened), 'not_applicable' marks it N/A, an undeclared one stays of unknown coverage.",
        "no registration call and no run meta. The agent keeps every counter the declaration marks "
        "'reported': each act's context carries provider_api_failed_attempts and retry_exhausted (reset "
        "after every successful act) and compacted: True while a compaction is pending, which is what the "
        "memory_compactions metric counts.",
        "the declaration changes no request, no memory and nothing the agent reads; it only labels "
        "leaderboard metrics, and memsim reports no leaderboard (its figures come from the recorded "
        "requests and the trace)",
        "none on any memsim figure (request tokens, recall, liveness, claims): nothing memsim reports reads "
        "it. Issue 27's differential against upstream's code agrees on 71 of 75 MerchantBench checks; the 4 "
        "others are features memsim does not model, this one among them.",
    ),
    Deviation(
        "published tool schemas",
        "wording",
        f"env/tools/registry.py and env/tools/observation.py: 26 tools with their real parameters and "
        f"descriptions, {UPSTREAM_SCHEMA_TOKENS:,} cl100k tokens as published with the default denylist.",
        "upstream's 26 names in upstream's order; the four modeled tools keep their real parameters with "
        "paraphrased descriptions, the 22 domain tools have no parameters and filler descriptions sized to "
        "the same count (knob schema_tokens).",
        'clean room, and the domain tools\' handlers are not modeled (a call returns {"ok": true})',
        "none on cl100k figures (counted now, below); by the design's chars/4 estimate the stand-in is "
        "4,661 tokens against upstream's 4,302, so an estimate-counting provider reports 359 more tokens "
        "per request (see the domain-tools line below)",
        UPSTREAM_SCHEMA_TOKENS,
        tools_json,
    ),
]
