"""RSIAgent fidelity bookkeeping: the modeled operations, every simplification, the coverage of each
record ID of seed 003, and where the fidelity note and the report differ (the note wins)."""

from __future__ import annotations

from collections.abc import Callable

from sim.fidelity import Coverage, Deviation, Operation
from systems.rsiagent import faults as fp
from systems.rsiagent.model import texts

T_FN = "tests/test_rsiagent_functions.py"
T_ADM = "tests/test_rsiagent_admission.py"
T_PH = "tests/test_rsiagent_phases.py"
T_FOLD = "tests/test_rsiagent_fold.py"
T_VER = "tests/test_rsiagent_verifier.py"
T_ST = "tests/test_rsiagent_stateful.py"
T_CL = "tests/test_claims_registry.py"

OPERATIONS: list[Operation] = [
    Operation(
        "push_memory",
        ("MEM-OBJ-memory", "RT-RTE-task-execution"),
        "delete and recreate the guest bank, upload in 3,000-char chunks, extract; not atomic",
        (fp.PUSH_UPLOAD, fp.PUSH_EXTRACT),
    ),
    Operation(
        "pull_memory",
        ("MEM-OBJ-memory",),
        "regular files minus bytecode; 3 attempts with 15 s backoff, then {}",
        (fp.PULL_ATTEMPT,),
    ),
    Operation(
        "_pull_terminal_memory",
        ("MEM-OBJ-memory", "RT-RTE-learning-admission"),
        "types, safe names, directory and find-count checks that tell empty from failed",
    ),
    Operation(
        "silent_audit",
        ("RT-RTE-learning-admission",),
        "8-word shingles against the corpus minus the authorized target direction and 12-word near windows",
    ),
    Operation(
        "exam_fence.audit_text",
        ("MEM-OBJ-curriculum-notes",),
        "the notes audit: paths, repository URLs, exam task ids and [a-z0-9']+ instruction 8-grams",
    ),
    Operation(
        "journal",
        ("MEM-OBJ-memory-journal",),
        "ep{NNN}.tgz (sorted gzip tar, fixed mtime) then a journal.jsonl line; no fsync, no id guard",
        (fp.JOURNAL_AFTER_TGZ,),
    ),
    Operation(
        "_atomic_install_memory",
        ("RT-RTE-learning-admission", "MEM-OBJ-memory"),
        "stage, fsync files/dirs/root, backup rename, stage rename, parent fsync, delete backup",
        fp.INSTALL_POINTS,
    ),
    Operation(
        "write_memory",
        ("MEM-OBJ-memory-journal",),
        "direct API: delete everything, write in dict order, no checks (an escape is recorded, never made)",
        (fp.WRITE_MEMORY_EACH,),
    ),
    Operation(
        "evolve_practice",
        ("RT-RTE-task-execution", "RT-RTE-learning-admission", "MEM-OBJ-learning-diagnosis"),
        "fresh VM, work, verdict, reset with canonical re-pushed, distill, reconcile, diagnose, commit",
        (fp.CHECKPOINT,),
    ),
    Operation(
        "curriculum_turn",
        ("RT-RTE-curriculum-search", "MEM-OBJ-curriculum-notes"),
        "disposable bank copy or the none ablation; notes replaced only by a non-empty read",
    ),
    Operation(
        "evolve_parallel_phase1",
        ("RT-RTE-learning-admission", "MEM-OBJ-memory"),
        "SimPy branches from the snapshot (at most max_parallel=4 at once, any wave width), drained, then "
        "serialized commits that re-push the latest canonical bank",
    ),
    Operation(
        "osworld / ale memory attach",
        ("RT-RTE-task-execution", "MEM-OBJ-memory"),
        "OSWorld continues memory-OFF on a failed push; ALE raises",
        (fp.OSWORLD_PUSH, fp.ALE_PUSH),
    ),
    Operation(
        "_fold_once / maybe_fold",
        ("MEM-RTE-worklog-fold", "MEM-OBJ-work-log"),
        "before each model call over [user, assistant] pairs (TASK pair 0, pending message excluded): keep "
        "window, high/low-water hysteresis or legacy count, head/tail fold input, strip + cap or digest",
    ),
    Operation(
        "run_with_resume",
        ("MEM-OBJ-work-log", "RT-OBJ-loop-result"),
        "stalled restart: eligibility, synthesized log (one summarizer call), 12k/6k handoff, review",
    ),
    Operation(
        "_agentic_substantive_checkpoint / semantic replay",
        ("MEM-RTE-verifier-replay", "RT-RTE-candidate-verification"),
        "checkpoint through the last Program/Look, pending observation, replay when shorter, 3 strikes",
    ),
    Operation(
        "detach_executor",
        ("MEM-OBJ-verifier-scratch",),
        "export, close, roll back; export failure tolerated only on the retry path",
        (fp.SCRATCH_EXPORT,),
    ),
    Operation(
        "durable_user_message / with_durable_images",
        ("MEM-OBJ-durable-images",),
        "whole images with sniffed MIME and sha256, deduplicated; data-URL wire form",
    ),
]

NOT_MODELED: list[str] = [
    "tar member metadata and symlinks kept as links (the bank is files only).",
    "the 15 s sleeps advance no simulation time (they are recorded in the trace).",
    "the ``ts`` is the host clock in UTC (upstream formats local time).",
    "symlinked destinations (refused upstream); the pid is a constant.",
    "the FAIL-is-not-success rule is an instruction, not a check.",
    "the Curriculum's fixture capture and the evidence view (programs, traces, SHA256SUMS).",
    "the Curriculum phases between projects (see :func:`curriculum_turn`).",
    "the retry of a branch after a pre-verdict physical failure; branch fixtures.",
    "the Curriculum's wave authoring (its segments, drafts and fixture checks): the publication is given.",
    "the event log (``PHASE1_WAVE_COMPLETED``), ``memory_frozen``, later phases, the protocol fields and "
    "the Curriculum transcripts.",
    "the second verify_memory after the ALE episode (only the post-upload check is made).",
    "a separate evaluation role YAML (evaluation runs use the target role's loop settings).",
    "the fixed variant's per-chunk summarizer calls (one call sees every chunk).",
    "the transport pause and retry around the call (``_call_with_transport_pause``).",
    "the Verifier bounce and the repeat and cycle detectors of ``run_attempt``; their ``verifier`` and "
    "``stagnation`` memory notes are appended with :meth:`note` by the caller.",
    "upstream's real action grammar.",
    "symlink roots and symlinks inside the bank (_read_memory_tree raises on them): trees hold files.",
    "the Verifier's re-check that the candidate and evidence are unchanged (fail closed).",
    "the verified-practice memory recovery and the other recovery variants (§2.17) beyond the wave "
    "state check and the fixed variant's startup install recovery.",
    "unified evolution cycles beyond their restarting experience_index and per-cycle journal roots "
    "(used by the journal claim).",
    "model calls: every model decision is a seeded policy of systems.rsiagent.policies.",
    "mode 0600 of boundary_audit.json and file modes in general.",
    "the mkstemp/replace/fsync dance of atomic JSON writes (one write here).",
    "upstream's distillation draft (visible only to reconciliation): distillation edits the bank.",
    "tamper checks of the candidate and evidence view, and the history-hygiene empty-reply fallback.",
    "role keys outside the loop (actor practice_mode and independent_verify; target "
    "verifier_persist_scratch, rollback_mirror and private paths).",
    "the streak counters behind the stalled status (the max_consec_* limits are recorded; a loop "
    "result carries its status).",
    "boundary errors raised inside a branch (transcript audits) and their precedence over infra errors "
    "in the drain (the first branch error aborts the wave).",
    "the exact wording of the Curriculum, Verifier, distillation, reconciliation and learning-diagnosis "
    "prompts (short stand-ins; the Actor charter, inventories, fold and restart texts are sized like "
    "upstream's).",
    "the exam fence's grader-constant tuples (L4: they need the graders' sources).",
    "the exam fence's audits of agent transcripts (``boundary_audit.json``), prompts, handoffs and "
    "captured project trees (``_audit_agent_artifacts``, ``_audit_prompt``, ``audit_captured_materials``): "
    "only the bank's silent audit and the curriculum notes' ``audit_text`` run.",
]

_CLAIMS = (f"{T_CL}::test_direction_comes_out_as_expected", f"{T_CL}::test_direction_comes_out_as_expected")

COVERAGE: dict[str, Coverage] = {
    "MEM-OBJ-memory": Coverage(
        (
            "model.push_memory",
            "model.pull_memory",
            "model.pull_terminal_memory",
            "model.Volume.read_tree",
            "model.manifest",
            "model.tree_sha256",
            "model.GuestVM",
            "model.Host",
        ),
        (
            f"{T_ADM}::test_failed_upload_leaves_an_empty_guest_bank",
            f"{T_ADM}::test_pull_retries_then_returns_empty",
            f"{T_ADM}::test_terminal_pull_tells_empty_from_failed",
            f"{T_FN}::test_tree_sha256_is_canonical_json_of_name_to_sha",
            f"{T_ADM}::test_read_memory_tree_missing_root_is_empty_file_root_raises",
            f"{T_ST}::test_bank_machine_agrees_with_dict_model",
            *_CLAIMS,
        ),
    ),
    "MEM-OBJ-memory-journal": Coverage(
        (
            "model.journal",
            "model.journal_archive",
            "model.read_journal",
            "model.write_memory",
            "model.commit_learning",
            "model.records (checkpoints, outcome.json / outcome.md)",
        ),
        (
            f"{T_ADM}::test_journal_archive_is_sorted_gzip_tar_with_fixed_mtime",
            f"{T_ADM}::test_journal_archive_bytes_equal_tarfile_w_gz_on_the_named_file",
            f"{T_PH}::test_checkpoints_only_for_configured_projects_through_the_staged_install",
            f"{T_ADM}::test_repeated_episode_overwrites_archive_keeps_both_lines",
            f"{T_ADM}::test_write_memory_deletes_first_and_escapes_the_bank",
            f"{T_ADM}::test_confined_names_refuse_the_whole_write",
            f"{T_ADM}::test_memos_match_fresh_computation_for_small_and_large_trees",
            *_CLAIMS,
        ),
    ),
    "MEM-OBJ-work-log": Coverage(
        (
            "model.ActorLoop.summary",
            "model.cap_worklog",
            "model.digest_fallback",
            "model.synthesize_worklog",
            "model.stalled_handoff",
            "state.LoopResult.worklog",
        ),
        (
            f"{T_FOLD}::test_digest_fallback_keeps_newest_tail",
            f"{T_FOLD}::test_fold_strips_the_summary",
            f"{T_FOLD}::test_handoff_truncates_to_12k_and_pivot_to_6k",
            f"{T_FOLD}::test_blank_log_leaves_the_log_section_out",
            f"{T_FOLD}::test_synthesized_log_is_one_summarizer_call_over_the_last_60_messages",
            *_CLAIMS,
        ),
    ),
    "MEM-OBJ-curriculum-notes": Coverage(
        ("model.read_curriculum_notes", "model.curriculum_turn", "model.Host.notes", "model.audit_text"),
        (
            f"{T_PH}::test_notes_only_nonempty_read_replaces",
            f"{T_PH}::test_notes_read_rules",
            f"{T_PH}::test_notes_audit_hit_quarantines",
            *_CLAIMS,
        ),
    ),
    "MEM-OBJ-learning-diagnosis": Coverage(
        ("model.learning_diagnosis", "model.evolve_practice_project (promote_learning route)"),
        (f"{T_PH}::test_diagnosis_edits_are_still_pulled", *_CLAIMS),
    ),
    "MEM-OBJ-verifier-scratch": Coverage(
        ("model.Scratch", "model.detach_executor"),
        (f"{T_VER}::test_scratch_export_failure_tolerated_only_on_retry_path",),
    ),
    "MEM-OBJ-durable-images": Coverage(
        (
            "model.durable_user_message",
            "model.with_durable_images",
            "model.wire_message",
            "model.agentic_image_bytes",
            "model.scope_prior_curriculum_visuals",
        ),
        (
            f"{T_VER}::test_durable_images_stored_whole_and_deduplicated",
            f"{T_VER}::test_wire_message_and_strict_decode",
            f"{T_VER}::test_scope_prior_curriculum_visuals_strips_pixels",
        ),
    ),
    "MEM-RTE-worklog-fold": Coverage(
        (
            "model.ActorLoop.maybe_fold",
            "model.ActorLoop._fold_once",
            "model.effective_keep",
            "model.fold_input",
            "model.render_fold",
            "model.ROLE_DEFAULTS",
            "model.phase_cfg",
        ),
        (
            f"{T_FOLD}::test_reproduced_fold_stops_above_high_water",
            f"{T_FOLD}::test_minimal_alignment_keep_1_batch_1",
            f"{T_FOLD}::test_fold_runs_before_the_call_and_the_pending_observation_is_not_foldable",
            f"{T_FOLD}::test_fold_note_is_appended_to_the_pending_message_and_enters_the_history",
            f"{T_FOLD}::test_legacy_mode_folds_all_foldable_in_one_call",
            f"{T_FOLD}::test_mid_message_fact_is_lost_in_a_fold",
            f"{T_FN}::test_effective_keep_reproduced_fat_pairs",
            f"{T_FOLD}::test_config_defaults_row_and_role_overrides",
            "tests/test_rsiagent_adapter.py::test_six_pair_floor_overflows_an_8k_window",
            *_CLAIMS,
        ),
    ),
    "MEM-RTE-verifier-replay": Coverage(
        (
            "model.substantive_checkpoint",
            "model.actionless_fingerprint",
            "model.semantic_replay",
            "model.recovery_history",
            "model.VerifierSession",
        ),
        (
            f"{T_VER}::test_checkpoint_keeps_through_last_action_and_pends_its_observation",
            f"{T_VER}::test_semantic_replay_drops_narration_keeps_nudges_as_original_context",
            f"{T_VER}::test_three_segments_without_progress_raise",
        ),
    ),
    "RT-BAP-actor-method": Coverage(
        (
            "model.inventory_listing",
            "model.actor_charter",
            "model.memory_preamble",
            "model.actor_work (Actor-chosen reads)",
            "model.memory_revisit",
        ),
        (
            f"{T_FN}::test_inventory_listing_practice",
            f"{T_FN}::test_actor_charter_fences_the_inventory",
            f"{T_FN}::test_inventory_listing_osworld_and_ale",
            f"{T_PH}::test_next_actor_sees_the_promoted_bank_as_inventory",
        ),
    ),
    "RT-OBJ-loop-result": Coverage(
        ("state.LoopResult", "model.ActorLoop.result", "model.resume_eligible"),
        (
            f"{T_FOLD}::test_resume_eligibility",
            f"{T_FOLD}::test_prompt_after_fold_has_task_and_log_then_tail",
        ),
    ),
    "RT-RTE-candidate-verification": Coverage(
        ("model.verify", "model.parse_verdict", "policies.VerifierPolicy", "model.VerifierSession"),
        (
            f"{T_FN}::test_parse_verdict_ignores_fenced_lines",
            f"{T_PH}::test_fail_verdict_is_recorded",
            f"{T_PH}::test_wave_aborts_before_any_commit_on_branch_error",
        ),
    ),
    "RT-RTE-curriculum-search": Coverage(
        ("model.curriculum_turn", "model.parse_decision", "model.parse_wave_handoff"),
        (
            f"{T_PH}::test_none_ablation_changes_only_what_curriculum_sees",
            f"{T_FN}::test_parse_decision_requires_project_root",
            f"{T_FN}::test_parse_decision_phase1_saturated",
            f"{T_PH}::test_wave_publication_rules",
        ),
    ),
    "RT-RTE-learning-admission": Coverage(
        (
            "model.silent_audit",
            "model.audit_candidate",
            "model.admit",
            "model.commit_learning",
            "model.atomic_install_memory",
            "model.evolve_parallel_phase1",
            "model.distill",
            "model.reconcile",
        ),
        (
            f"{T_ADM}::test_admit_rejects_whole_candidate_and_quarantines",
            f"{T_PH}::test_learning_audit_authorizes_the_target_direction",
            f"{T_PH}::test_promote_route_authorizes_the_target_audit_surface",
            f"{T_PH}::test_state_json_at_project_end_and_on_every_exit",
            f"{T_ADM}::test_staged_install_order_and_cleanup",
            f"{T_PH}::test_wave_branches_run_concurrently_and_commit_in_assignment_order",
            f"{T_PH}::test_wave_writes_before_after_and_changes_per_branch",
            f"{T_PH}::test_pulls_equal_audits_equal_installs",
            f"{T_ST}::test_bank_machine_agrees_with_dict_model",
            *_CLAIMS,
        ),
    ),
    "RT-RTE-lineage-recovery": Coverage(
        ("model.wave_resume_allowed", "model.recover_install (fixed variant)"),
        (
            f"{T_PH}::test_wave_partial_commit_on_rejection",
            f"{T_PH}::test_wave_branches_run_concurrently_and_commit_in_assignment_order",
            f"{T_ADM}::test_exchange_install_with_recovery",
        ),
        not_modeled="the recovery variants of §2.17 (phase-1 practice resume, verified-practice memory "
        "recovery, post-target and ready-target recovery) beyond the wave state-tree check",
    ),
    "RT-RTE-task-execution": Coverage(
        (
            "model.evolve_practice_project",
            "model.reset_null_vm",
            "model.push_canonical",
            "model.osworld_attach_memory",
            "model.ale_attach_memory",
            "model.ActorLoop",
        ),
        (
            f"{T_PH}::test_work_phase_edits_are_discarded",
            f"{T_PH}::test_osworld_continues_memory_off_but_claims_memory",
            f"{T_PH}::test_ale_raises_on_failed_upload",
            f"{T_PH}::test_canonical_push_failure_is_infra",
            *_CLAIMS,
        ),
    ),
}

DIFFERENCES: list[str] = [
    "Revision: the report cites 4d7ef437 (unreadable); the model follows the note's e8e8c220 / 57c8ac28 / "
    "586733a8, identical for transport, audit, journal, install, fold and resume.",
    'Bytecode filter: the report quotes `"pycache" in rel`; the note says paths containing `__pycache__`. '
    "The model follows the note (pull_excluded), so `a__pycache__b` is dropped by the pull but counted "
    "by find (infra).",
    "Waves: the report says each branch receives the latest canonical tree at its serialized commit and "
    "leaves the lost update 'less direct'; the note pins it down: the lost update exists only in the "
    "counterfactual (push at wave start), the residue upstream is the stale rewrite. Both are claims.",
    "Journal: the report's docstring quote says 'append-only per-episode snapshot'; the note (reproduced) "
    "shows a repeated episode id overwrites the archive. The model overwrites; upstream's unified cycles "
    "each journal into their own lineage root, so the overwrite claim is a counterfactual (one shared root).",
    "write_memory: the report found no caller; the note documents its semantics; the model implements "
    "them as a direct API used only by the write-memory-bypass and write-memory-escapes-bank claims and "
    "tests.",
    "Pull failure: the report does not discuss the {} value; the note says the terminal pull's count "
    "check separates it. The raw-pull claim is a counterfactual caller; upstream's commit uses the check.",
]


_CLEAN_ROOM = "clean room: upstream's prose is not copied; facts (labels, format strings, sizes) carry over"
_SAME_SIZE = (
    "none: the text has upstream's cl100k count (counted now, below), so request tokens, context "
    "figures and fold decisions are upstream's"
)


def _wording(
    name: str, where: str, tokens: int, text: Callable[[], str], chars: int | None = None
) -> Deviation:
    size = f"{tokens} cl100k tokens" + (f", {chars} characters" if chars is not None else "")
    return Deviation(
        name,
        "wording",
        f"{where}: upstream's own sentences ({size}).",
        f"memsim's own sentences with upstream's labels and layout, at the same size ({size}).",
        _CLEAN_ROOM,
        _SAME_SIZE + ("; its characters are upstream's too (tests/test_rsiagent_texts.py)" if chars else ""),
        tokens,
        text,
    )


#: Every remaining deviation from upstream (``memsim doc fidelity``), besides the NOT_MODELED lines.
DEVIATIONS: list[Deviation] = [
    Deviation(
        "write_memory outside the run root",
        "behaviour",
        "write_memory joins each name to the bank unchecked (explore/commit.py:121-135): ../../../z.md or an "
        "absolute name is written on the host, outside the run root.",
        "the sandboxed file tree never writes outside its root: the write is recorded under its resolved "
        "target (FileTree.outside, WriteMemoryResult.outside, the trace's write_memory op) and not made.",
        "a model must not touch the host; the record keeps what upstream does visible (claim "
        "rsiagent.write-memory-escapes-bank).",
        "none on any figure: claims and checkers see the target and the bytes upstream would write; only a "
        "later read of that host path is not modeled (no modeled code reads it).",
    ),
    _wording(
        "memory_preamble header",
        "explore/charter.py memory_preamble, the 5 lines before the state sentence",
        76,
        lambda: texts.PREAMBLE_HEAD,
        372,
    ),
    _wording(
        "memory_preamble state sentence, non-empty inventory",
        "explore/charter.py memory_preamble",
        5,
        lambda: texts.PREAMBLE_FULL,
        27,
    ),
    _wording(
        "memory_preamble state sentence, empty inventory",
        "explore/charter.py memory_preamble",
        12,
        lambda: texts.PREAMBLE_EMPTY,
        61,
    ),
    _wording(
        "memory_preamble retrieval paragraph",
        "explore/charter.py memory_preamble, the 5 lines after the state sentence",
        86,
        lambda: texts.PREAMBLE_MID,
        402,
    ),
    *(
        _wording(
            f"memory-revisit note, {event}",
            f"core/loop.py _MEMORY_REVISIT[{event!r}] + the fixed tail, after the [MEMORY RETRIEVAL "
            "OPPORTUNITY] label",
            tokens,
            lambda event=event: texts.memory_revisit("~/.memory", event),  # type: ignore[misc]
            chars,
        )
        for event, tokens, chars in (
            ("verifier", 61, 298),
            ("fold", 59, 292),
            ("recovery", 60, 301),
            ("stagnation", 58, 284),
        )
    ),
    _wording(
        "summarizer system prompt", "core/actor.py SUMMARIZER_SYSTEM", 307, lambda: texts.SUMMARIZER_SYSTEM
    ),
    _wording(
        "restart handoff paragraph",
        "core/actor.py handoff_message",
        50,
        lambda: texts.HANDOFF_PARAGRAPH,
        259,
    ),
    _wording(
        "pivot handoff paragraph",
        "core/actor.py pivot_handoff_message",
        60,
        lambda: texts.PIVOT_PARAGRAPH,
        279,
    ),
    _wording(
        "strategy-review system prompt", "core/actor.py strategy review", 27, lambda: texts.REVIEW_SYSTEM
    ),
    _wording(
        "strategy-review ask (both sections empty)",
        "core/actor.py strategy_review_ask",
        83,
        lambda: texts.REVIEW_ASK,
    ),
    _wording(
        "opening message tail",
        "core/actor.py opening_message(instruction, None)",
        76,
        lambda: texts.OPENING_TAIL,
        363,
    ),
]
