"""Tracecraft fidelity bookkeeping: the modeled operations, every simplification, the coverage of each
record ID of seed 004, and where the fidelity note, the report and the model differ (the note wins)."""

from __future__ import annotations

from sim.fidelity import Coverage, Deviation, Operation
from systems.tracecraft import faults as fp

T_FN = "tests/test_tracecraft_functions.py"
T_MO = "tests/test_tracecraft_model.py"
T_CF = "tests/test_tracecraft_conformance.py"
T_PR = "tests/test_tracecraft_properties.py"
T_AD = "tests/test_tracecraft_adapter.py"
T_DF = "tests/test_tracecraft_differential.py"
T_UT = "tests/test_tracecraft_upstream_texts.py"
T_CL = "tests/test_claims_registry.py"
T_FI = "tests/test_tracecraft_fidelity.py"
T_SC = "tests/test_scenarios.py"
CLAIM_FAITHFUL = f"{T_CL}::test_direction_comes_out_as_expected"
CLAIM_FIXED = f"{T_CL}::test_direction_comes_out_as_expected"

OPERATIONS: list[Operation] = [
    Operation("init", ("RT-RTE-init-config", "MEM-OBJ-agent-registration"), "PUT agents/<id>.json once"),
    Operation("agents", ("MEM-OBJ-agent-registration",), "collect_agents: heartbeat age, stale after 300 s"),
    Operation(
        "memory set",
        ("RT-RTE-memory-write", "MEM-OBJ-memory-history", "MEM-OBJ-memory-live"),
        "key checks; snapshot PUT at an append key, then live PUT",
        (fp.MEMORY_SET_AFTER_SNAPSHOT,),
    ),
    Operation("memory get", ("MEM-OBJ-memory-live",), "live value, or {key, value, set_by, set_at}; exit 1"),
    Operation("memory history", ("MEM-OBJ-memory-history",), "direct children, newest --limit, oldest first"),
    Operation("memory list", ("MEM-OBJ-memory-live",), "dotted live keys, not boundary-aware, no _history"),
    Operation(
        "send",
        ("RT-RTE-mail-exchange", "MEM-OBJ-message-content"),
        "recipient validated, sender not; PUT at append_key(messages/<R>/)",
    ),
    Operation(
        "inbox",
        ("RT-RTE-mail-exchange", "MEM-OBJ-inbox-cursor"),
        "plain/--new/--delete; cursor after display, only when an unseen key existed",
        (fp.INBOX_BEFORE_CURSOR, fp.INBOX_AFTER_DELETE),
    ),
    Operation(
        "claim",
        ("RT-RTE-step-control", "RT-OBJ-step-state"),
        "conditional claim PUT (racy exists-then-write on HF), then unconditional status PUT",
        (fp.CLAIM_AFTER_CLAIM,),
    ),
    Operation(
        "complete",
        ("RT-RTE-step-control", "RT-OBJ-step-state", "MEM-OBJ-handoff"),
        "ownership check unless --force; status PUT then handoff PUT",
        (fp.COMPLETE_AFTER_STATUS, fp.COMPLETE_AFTER_HANDOFF),
    ),
    Operation("step-status", ("RT-OBJ-step-state",), "effective status incl. the claim-only crash window"),
    Operation(
        "wait-for",
        ("RT-BAP-step-polling", "RT-RTE-step-control"),
        "polls every 5 s; blocked fails fast; needs_review waits; never reads the handoff",
    ),
    Operation(
        "artifacts upload/download/list",
        ("RT-RTE-artifact-share", "MEM-OBJ-artifact-file"),
        "artifacts/<normalized step|shared>/<basename>; overwrite on upload",
    ),
    Operation(
        "status",
        ("RT-RTE-step-control", "RT-RTE-mail-exchange", "MEM-OBJ-session-meta"),
        "agents, steps, unread counts (cursor holders only), session totals",
    ),
    Operation(
        "session mirror",
        (
            "RT-RTE-session-mirror",
            "MEM-OBJ-session-parts",
            "MEM-OBJ-session-meta",
            "MEM-OBJ-mirror-state",
            "RT-CLM-secret-redaction",
        ),
        "_mirror_once: state cursor, tail, per-chunk redaction, part PUT, meta rebuild, state save",
        (fp.MIRROR_AFTER_PART, fp.MIRROR_AFTER_META),
    ),
    Operation(
        "session list/show/stop",
        ("RT-RTE-session-mirror", "MEM-OBJ-mirror-state"),
        "first matching meta; show downloads every listed part; stop deletes the local state",
    ),
    Operation(
        "session compact",
        ("RT-RTE-session-compact", "MEM-OBJ-session-meta"),
        "merged part-00000, meta rewrite, then deletes",
        (fp.COMPACT_AFTER_MERGED, fp.COMPACT_AFTER_META, fp.COMPACT_AFTER_DELETE),
    ),
    Operation(
        "get_store().put_json/delete",
        ("RT-CMP-get-store", "MEM-CLM-history-immutability"),
        "the direct backend API, bypassing CLI checks, snapshots and redaction",
    ),
]

NOT_MODELED: list[str] = [
    "the click CLI, config files and credentials (a Client is the loaded config).",
    "HF's own listing and file API beyond the racy check-then-write conditional put.",
    "``--follow`` Ctrl-C handling and ``--all`` discovery loops (``mirror_follow`` runs N cycles).",
    "``git diff`` (``complete`` takes the changed-file list, ``[]`` standing for a git failure).",
    "S3 pagination beyond the core store's (it follows pages; the >1000-key case is the core's).",
    "the ETag itself; a compare-and-put is atomic because no process runs between its GET and PUT.",
    "real harness discovery roots beyond the layouts of the note (one layout per harness name).",
    "writing the config file and credential checks at init.",
    "the registration's summary column (never displayed upstream either).",
    "package build/publication (RT-RTE-package-release): the released wheel is the conformance oracle.",
    "click's ``Error: …`` line: a failed command raises TracecraftError with click's message instead.",
    "init's HF warnings and the .gitignore entry (init registers the agent and prints its first receipt).",
    "status's text rendering and --watch: status models ``status --json`` (the snapshot printed as indent-2 "
    "JSON).",
    "artifact download's local output file (the command returns the bytes it would write).",
    "the session list's column layout is upstream's, but session ids are truncated to 8 characters there "
    "and in the model alike; --sort-by size is modeled, the empty-meta skip and the harness filter too.",
]

COVERAGE: dict[str, Coverage] = {
    "MEM-CLM-history-immutability": Coverage(
        (
            "model.memory.MemoryService.memory_set",
            "model.core.ClientCore.store_delete",
            "model.bucket.Bucket(worm)",
            "claims: tracecraft.history-not-immutable, tracecraft.history-newest-not-live",
        ),
        (f"{T_MO}::test_crash_after_snapshot_leaves_unlive_history", CLAIM_FAITHFUL, CLAIM_FIXED),
    ),
    "MEM-OBJ-agent-registration": Coverage(
        (
            "model.agents.AgentsService.init",
            "model.agents.AgentsService.agents",
            "protocol.heartbeat_age_s",
            "claims: tracecraft.registration-not-liveness",
        ),
        (f"{T_MO}::test_registration_goes_stale", f"{T_FN}::test_heartbeat_age", CLAIM_FAITHFUL),
    ),
    "MEM-OBJ-artifact-file": Coverage(
        (
            "model.artifacts.ArtifactsService.artifact_upload",
            "model.artifacts.ArtifactsService.artifact_download",
            "claims: tracecraft.artifact-collision",
        ),
        (
            f"{T_FI}::test_artifact_download_uses_the_name_as_given",
            f"{T_MO}::test_artifacts_shared_pool_and_overwrite",
            CLAIM_FAITHFUL,
        ),
    ),
    "MEM-OBJ-handoff": Coverage(
        (
            "model.steps.StepsService.complete",
            "claims: tracecraft.status-before-handoff, tracecraft.handoff-no-consumer",
        ),
        (
            f"{T_MO}::test_handoff_document",
            f"{T_MO}::test_crash_after_status_leaves_stale_handoff",
            CLAIM_FAITHFUL,
        ),
    ),
    "MEM-OBJ-inbox-cursor": Coverage(
        (
            "model.mail.MailService.inbox",
            "protocol.load_stream_cursor",
            "protocol.unseen_keys",
            "protocol.advance_stream",
            "claims: tracecraft.seen-cap-replay, skew-hides-mail, future-key-blinds, shared-cursor-reshow",
        ),
        (
            f"{T_FN}::test_advance_stream_horizon_and_no_regress",
            f"{T_CF}::test_unseen_and_advance",
            f"{T_MO}::test_inbox_new_show_silent_only_new",
            f"{T_MO}::test_late_arrival_within_grace_shown_once",
        ),
    ),
    "MEM-OBJ-memory-history": Coverage(
        ("model.memory.MemoryService.memory_history", "protocol.direct_children"),
        (
            f"{T_MO}::test_history_oldest_first_and_limit",
            f"{T_MO}::test_history_excludes_nested_and_missing_exits",
        ),
    ),
    "MEM-OBJ-memory-live": Coverage(
        ("model.memory.MemoryService.memory_get", "model.memory.MemoryService.memory_list"),
        (
            f"{T_MO}::test_get_with_meta_and_missing",
            f"{T_MO}::test_list_hides_history_and_is_not_boundary_aware",
        ),
    ),
    "MEM-OBJ-message-content": Coverage(
        ("model.mail.MailService.send", "state.InboxLine.render"),
        (
            f"{T_MO}::test_step_tag_and_pinned_line",
            f"{T_MO}::test_recipient_validation_and_unvalidated_sender",
        ),
    ),
    "MEM-OBJ-mirror-state": Coverage(
        (
            "model.mirror.MirrorService.state_path",
            "model.mirror.MirrorService.mirror",
            "model.sessions.SessionsService.session_stop",
            "claims: tracecraft.mirror-cursor-reuse, tracecraft.stop-deletes-cursor",
        ),
        (
            f"{T_MO}::test_mirror_parts_nothing_new_and_state_loss",
            f"{T_MO}::test_meta_rebuilt_list_show_stop",
            CLAIM_FAITHFUL,
        ),
    ),
    "MEM-OBJ-session-meta": Coverage(
        (
            "model.mirror.MirrorService._meta_append",
            "model.sessions.SessionsService.session_compact",
            "claims: tracecraft.meta-lost-update",
        ),
        (
            f"{T_FI}::test_meta_cwd_is_null_except_for_claude_code",
            f"{T_FI}::test_json_bodies_are_indent_2_ascii",
            f"{T_MO}::test_meta_rebuilt_list_show_stop",
            f"{T_MO}::test_compact_three_to_one_and_keep_tail",
            CLAIM_FAITHFUL,
        ),
    ),
    "MEM-OBJ-session-parts": Coverage(
        (
            "model.mirror.MirrorService.mirror",
            "protocol.PART_RE",
            "protocol.part_name",
            "claims: tracecraft.part-seq-overflow",
        ),
        (f"{T_MO}::test_mirror_parts_nothing_new_and_state_loss", f"{T_FN}::test_part_re_six_digit_seq"),
    ),
    "MEM-RTE-evaluator-readback": Coverage(
        (
            "benchmarks/bench_tracecraft.py (messaging_bench, contention_bench)",
            "properties.check_single_winner",
            "scenarios/tracecraft_claim_contention.py",
            "claims: tracecraft.hf-racy-claims",
        ),
        (f"{T_PR}::test_single_winner", f"{T_SC}::test_scenario_output_matches_committed", CLAIM_FAITHFUL),
    ),
    "RT-BAP-agent-prompt": Coverage(
        (
            "adapter.Adapter (host policy: the shipped read-after-write instructions as read-back)",
            "adapter.SYSTEM_PROMPT",
        ),
        (f"{T_AD}::test_requests_fit_budget_and_carry_questions",),
    ),
    "RT-BAP-step-polling": Coverage(
        ("model.steps.StepsService.wait_for", "model.core.WAIT_POLL_S"),
        (
            f"{T_FI}::test_wait_for_validates_ids_inside_the_poll_loop",
            f"{T_MO}::test_wait_for_polls_blocked_and_review",
        ),
    ),
    "RT-CLM-mirror-idempotence": Coverage(
        (
            "model.mirror.MirrorService.mirror",
            "claims: tracecraft.mirror-not-idempotent, tracecraft.two-mirrors",
        ),
        (f"{T_MO}::test_mirror_parts_nothing_new_and_state_loss", CLAIM_FAITHFUL, CLAIM_FIXED),
    ),
    "RT-CLM-secret-redaction": Coverage(
        ("protocol.redact", "protocol.merge_counts", "claims: tracecraft.redaction-per-chunk"),
        (f"{T_FN}::test_redact_whole_and_split_secret", f"{T_CF}::test_redact", CLAIM_FAITHFUL),
    ),
    "RT-CMP-get-store": Coverage(
        ("model.bucket.Bucket", "sim.objects (memory, moto, moto-server, endpoint)"),
        (
            f"{T_CF}::test_random_operations_agree_with_the_real_package",
            f"{T_CF}::test_every_counterexample_reproduces_on_the_real_cli",
            f"{T_DF}::test_memory_and_moto_agree",
            f"{T_MO}::test_two_claims_one_winner",
        ),
    ),
    "RT-CMP-harness-registry": Coverage(
        (
            "model.harness.FileTailHarness (claude-code, codex, openclaw)",
            "model.harness.HermesHarness",
            "model.harness.encode_cwd",
        ),
        (
            f"{T_FI}::test_hermes_discovers_sessions_through_the_sessions_table",
            f"{T_FI}::test_hermes_degrades_instead_of_raising",
            f"{T_MO}::test_harness_discovery",
            f"{T_MO}::test_hermes_rowid_cursor",
        ),
    ),
    "RT-OBJ-config": Coverage(
        (
            "model.client.Tracecraft(project, backend, bucket_name)",
            "model.client.Client(agent_id)",
            "claims: tracecraft.unvalidated-agent-id",
        ),
        (f"{T_MO}::test_recipient_validation_and_unvalidated_sender", CLAIM_FAITHFUL),
    ),
    "RT-OBJ-step-state": Coverage(
        (
            "model.steps.StepsService.claim",
            "model.steps.StepsService.complete",
            "model.steps.StepsService.effective_status",
            "claims: tracecraft.permanent-claim, completed-step-regresses",
        ),
        (
            f"{T_MO}::test_two_claims_one_winner",
            f"{T_MO}::test_complete_ownership_force_and_unclaimed",
            f"{T_MO}::test_status_unread_and_crash_window",
        ),
    ),
    "RT-RTE-artifact-share": Coverage(
        (
            "model.artifacts.ArtifactsService.artifact_upload",
            "model.artifacts.ArtifactsService.artifact_download",
            "model.artifacts.ArtifactsService.artifact_list",
        ),
        (f"{T_MO}::test_artifacts_shared_pool_and_overwrite",),
    ),
    "RT-RTE-init-config": Coverage(
        ("model.agents.AgentsService.init",), (f"{T_MO}::test_registration_goes_stale",)
    ),
    "RT-RTE-mail-exchange": Coverage(
        ("model.mail.MailService.send", "model.mail.MailService.inbox", "model.status.StatusService.status"),
        (
            f"{T_MO}::test_inbox_new_show_silent_only_new",
            f"{T_MO}::test_delete_keeps_broadcasts_and_excludes_new",
            f"{T_MO}::test_burst_keeps_every_message_and_merge_is_chronological",
            f"{T_UT}::test_recipient_errors",
            f"{T_UT}::test_inbox_body_fallback_and_receipts",
        ),
    ),
    "RT-RTE-memory-write": Coverage(
        ("model.memory.MemoryService.memory_set",),
        (
            f"{T_MO}::test_memory_set_rejects_reserved_keys",
            f"{T_MO}::test_crash_after_snapshot_leaves_unlive_history",
            f"{T_UT}::test_memory_key_errors",
            f"{T_UT}::test_history_defaults_and_list_of_any_object",
        ),
    ),
    "RT-RTE-package-release": Coverage(
        not_modeled=(
            "packaging and PyPI publication are not memory behaviour; the released tracecraft-ai 0.2.5 "
            "wheel is used as the live conformance oracle of the pure functions "
            "(tests/test_tracecraft_conformance.py)"
        )
    ),
    "RT-RTE-session-compact": Coverage(
        ("model.sessions.SessionsService.session_compact", "claims: tracecraft.compact-duplicates"),
        (
            f"{T_MO}::test_compact_three_to_one_and_keep_tail",
            f"{T_MO}::test_interrupted_compact_shows_duplicates",
            f"{T_UT}::test_keep_tail_beyond_part_count_compacts_nothing",
            f"{T_UT}::test_show_and_compact_search_part_names_next_seq_matches",
        ),
    ),
    "RT-RTE-session-mirror": Coverage(
        (
            "model.mirror.MirrorService.mirror",
            "model.mirror.MirrorService.mirror_follow",
            "model.sessions.SessionsService.session_show",
            "model.sessions.SessionsService.session_stop",
            "model.sessions.SessionsService.session_list",
        ),
        (
            f"{T_FI}::test_output_channels_and_status_fields",
            f"{T_MO}::test_mirror_parts_nothing_new_and_state_loss",
            f"{T_MO}::test_follow_reloads_state_and_rejects_bad_interval",
            f"{T_MO}::test_redaction_default_and_no_redact",
            f"{T_UT}::test_nothing_new_and_session_not_found",
            f"{T_UT}::test_missing_harness_session",
            f"{T_UT}::test_stop_is_best_effort",
            f"{T_UT}::test_mirror_receipt_and_meta_defaults",
        ),
    ),
    "RT-RTE-step-control": Coverage(
        (
            "model.steps.StepsService.claim",
            "model.steps.StepsService.complete",
            "model.steps.StepsService.step_status",
            "model.steps.StepsService.wait_for",
        ),
        (
            f"{T_MO}::test_complete_ownership_force_and_unclaimed",
            f"{T_MO}::test_wait_for_polls_blocked_and_review",
            f"{T_UT}::test_step_id_errors",
            f"{T_UT}::test_flag_conflicts",
            f"{T_UT}::test_foreign_complete_refused_with_hint",
            f"{T_UT}::test_wait_for_texts",
            f"{T_UT}::test_claim_owner_unknown_and_complete_started_at",
        ),
    ),
}

DIFFERENCES: list[str] = [
    "The report describes history as 'newest limit then oldest first' and meta as a manifest 'that can be "
    "lost or stale'; the note adds the exact cursor algorithm (watermark = max ts - 300 s, string "
    "comparisons, SEEN_CAP 1,000, own broadcasts advance the cursor), the 6-digit part seq and the crash "
    "table. The model follows the note.",
    "The report's `session list` sorts 'by recency/size'; the model sorts by last_uploaded_at only.",
    "append_key takes the writer's clock (ts_ns) and the 8 hex characters as arguments instead of calling "
    "time.time_ns() and uuid4() (conformance patches both upstream).",
    "As upstream, direct_children, key_ts_ns and key_sender cut len(prefix) characters without checking the "
    "prefix, and load_stream_cursor raises on a truthy non-dict document (found by the conformance test; "
    "the note does not say).",
    "The note's fix for two mirrors of one session (a conditional PUT on the seq-only name) is not enough: "
    "a second mirror that lists after the first one's part PUT takes seq+1 and uploads the same bytes "
    "(Hypothesis found it). The model's part-cond-put fix names the lock by the flush's start cursor, "
    "reads the state again under it and removes it after the state save (issue 12: a lock that stays "
    "refuses every later flush from the same cursor, e.g. after a lost state).",
    "The note's fix for clock skew, server-assigned order, needs the store's clock, which S3 cannot put into "
    "a key. The model's mailbox-stamp fix is a hybrid logical clock over a LIST: the sender stamps above the "
    "newest key in the mailbox (keys more than 30 min ahead ignored). Upstream documents arrivals more than "
    "the grace window out of order as the limit of --new (protocol.py:96-103), so the claim says so.",
    "The note's fix for HF claims, 'a conditional-PUT backend', swaps the backend. The model's "
    "hf-verify-claim fixes HF itself: after the exists-then-write it waits 5 s and reads the claim back "
    "(Fischer's mutual exclusion: safe while every write lands within 5 s of its existence check).",
    "The note's pinned inbox regex `\\[(.*?)\\] \\((direct|broadcast)\\) (\\S+): (.+)` does not match "
    "step-tagged lines (`<from> [step X]: ...`); upstream's tests pin it on untagged lines.",
    "The Hermes harness's 'size' for the min-bytes check is taken as the session's highest message id (the "
    "cursor's unit); the note only says the cursor is the max messages.id.",
    "The mirror's flushes are not line-aligned (faithful); the line-aligned fix is one of the note's two "
    "named fixes for split secrets (the other, a carry window, cannot be exact for unbounded patterns).",
    "Review audit against the 0.2.5 source (the note does not say; the model follows upstream): "
    "compact slices `[:-K]`, so --keep-tail K >= the part count compacts nothing; show and compact "
    "`search` PART_RE on the last segment of the recursive listing (nested or prefixed part names count) "
    "while the next seq `match`es it; `session stop` is best effort (no meta is not an error, an empty "
    "meta is not marked); an owner-less claim reads as 'unknown'; an unclaimed complete stamps "
    "started_at = now; own broadcasts are also skipped by body `from` whatever the key says; missing "
    "message fields print as '?'/''; collect_agents reports status 'stale' and skips empty documents; "
    "session_totals returns {count, total_uploaded_bytes, last_uploaded_at} over non-empty metas; error "
    "texts and receipts are upstream's verbatim.",
    "Transfer audit against the 0.2.5 wheel (issue 16; the model follows upstream): append keys are "
    "stamped before the PUT's round trip (cli/memory.py:64, protocol.py:53) and a send's uuid is drawn "
    "then; complete takes its time before any store call (cli/steps.py:113); a mirror's parts-log entry "
    "is stamped after the meta GET (cli/session.py:321-332); collect_agents takes now before its listing "
    "(protocol.py:210); effective_status defaults to 'unknown'/'?' only for missing fields "
    "(protocol.py:169-172); step-status prints '<id>: <status>[ (agent: A)]'; status --json lists steps "
    "as {id, status, agent} read from the listing (protocol.py:176-190); session list skips empty metas "
    "and filters by the meta's harness field. With these, the 23 counterexamples replay on the real CLI "
    "word for word and random operation sequences give the same output lines, keys and bytes "
    "(tests/test_tracecraft_conformance.py).",
]

#: Every remaining deviation from upstream (``memsim doc fidelity``), besides the NOT_MODELED lines.
DEVIATIONS: list[Deviation] = [
    Deviation(
        "failed commands",
        "behaviour",
        "a failed tracecraft command prints click's one 'Error: <message>' line on stderr and exits 1.",
        "the model's command raises TracecraftError carrying click's message (the transfer harness compares "
        "that message with the real CLI's stderr line).",
        "a model is called, not run as a process; the message is what the claims and the transfer compare",
        "none: the error texts are upstream's verbatim; exit codes are not a figure memsim reports.",
    ),
    Deviation(
        "key stamps and message ids",
        "behaviour",
        "append_key calls time.time_ns() and uuid4() itself (protocol.py:53, cli/memory.py:64).",
        "append_key takes the writer's clock (ts_ns) and the 8 hex characters as arguments: the agent "
        "clock (skew and drift included) and the run's seeded stream.",
        "determinism: same seed, same keys (the conformance tests patch both upstream to compare)",
        "none on key formats and order (tests/test_tracecraft_conformance.py compares keys and bytes); "
        "clock skew is applied where upstream's host clock would be.",
    ),
]
