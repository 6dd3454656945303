"""RSIAgent operations, named as upstream names them (AetherLabsAI/RSIAgent, revisions e8e8c220 / 57c8ac28 /
586733a8 per the fidelity note; the report cites 4d7ef437).

Sections: the bank and its transport (``explore/commit.py``), the silent audit, the journal and the staged
install, the direct ``write_memory`` API, the phase-gated learning of one project (``evolve_practice``,
``_promote_learning``), curriculum notes and the ``none`` ablation, parallel waves
(``evolve_parallel_phase1``), benchmark memory attachment (OSWorld / ALE), WORK LOG folding and stalled
restart (``core/loop.py``), verifier replay and scratch (``core/verifier.py``) and durable images
(``llm/client.py``).

Every failure-mode fix, counterfactual weakening and off switch is a switch of
:class:`sim.variant.Variant` (names in :mod:`systems.rsiagent.state`); the faithful design has none.
Three claims compare upstream with a *counterfactual* weaker design: pushing the canonical bank at wave
start instead of at each serialized commit, committing from a raw ``pull_memory`` without the terminal
checks, and one journal shared by every unified cycle. Where the fidelity note and the report disagree
the note wins (see ``fidelity.DIFFERENCES``; its Corrections section wins over its older text).

Not modeled: symlink roots and symlinks inside the bank (_read_memory_tree raises on them): trees hold files.
Not modeled: the Verifier's re-check that the candidate and evidence are unchanged (fail closed).
Not modeled: the verified-practice memory recovery and the other recovery variants (§2.17) beyond the wave
state check and the fixed variant's startup install recovery.
Not modeled: unified evolution cycles beyond their restarting experience_index and per-cycle journal roots
(used by the journal claim).
Not modeled: model calls: every model decision is a seeded policy of systems.rsiagent.policies.
Not modeled: mode 0600 of boundary_audit.json and file modes in general.
Not modeled: upstream's distillation draft (visible only to reconciliation): distillation edits the bank.
Not modeled: tamper checks of the candidate and evidence view, and the history-hygiene empty-reply fallback.
"""

# ruff: noqa: F401  (this module re-exports the model's modules)

from sim.variant import FAITHFUL, Variant
from systems.rsiagent.model.admission import (
    OVERLEAF_CREDENTIALS,
    _exchange_dirs,
    admit,
    atomic_install_memory,
    audit_candidate,
    build_corpus,
    journal,
    normalize_instruction_for_corpus,
    recover_install,
    require_corpus,
    validate_instruction_corpus,
    write_memory,
)
from systems.rsiagent.model.attachment import (
    EvalRecord,
    ale_attach_memory,
    osworld_attach_memory,
    verify_memory,
)
from systems.rsiagent.model.common import (
    BRANCH_ID_RE,
    CHUNK,
    DECISION_PHASE1_RE,
    DECISION_RE,
    DIGEST_CHARS,
    ELIGIBLE_STALL,
    ELISION,
    FOLD_HEAD,
    FOLD_TAIL,
    KEEP_FLOOR,
    MAX_PARALLEL,
    NEAR_WINDOW,
    NO_PROGRESS_SEGMENTS,
    OSWORLD_MODE,
    PROJECT_ROOT,
    PULL_ATTEMPTS,
    PULL_BACKOFF_S,
    RESUME_MIN_ITERS,
    RESUME_MIN_WALL_S,
    REVIEW_MESSAGE_CHARS,
    REVIEW_MESSAGES,
    REVIEW_OUT_CAP,
    SHINGLE_N,
    SYNTH_MESSAGES,
    SYSTEM,
    VERDICT_RE,
    WORK_PHASE_NOTICE,
    WORKLOG_MARKER,
    AgenticVerifierNoProgressError,
    BoundaryAuditError,
    FrozenMemoryUploadError,
    PracticeInfrastructureError,
    UnsafeMemoryName,
    VerifierProtocolError,
)
from systems.rsiagent.model.curriculum import (
    curriculum_turn,
    read_curriculum_notes,
)
from systems.rsiagent.model.functions import (
    _FENCE_WORD,
    _WORD,
    EXAM_SEATS,
    MEMO_MAX_BYTES,
    PATH_PAT,
    REPO_PAT,
    TASKID_PAT,
    _effective_keep_sizes,
    _is_subsequence,
    _journal_archive,
    _small,
    _tree_sha256,
    _word_index,
    audit_hits,
    audit_text,
    authorized_near_shingle,
    bank_facts,
    cap_worklog,
    digest_lines,
    effective_keep,
    fence_grams,
    fence_words,
    find_counted,
    fold_input,
    inventory_listing,
    journal_archive,
    listing,
    manifest,
    memory_path,
    parse_decision,
    parse_verdict,
    pull_excluded,
    read_archive,
    safe_memory_name,
    shingles,
    silent_audit,
    tree_sha256,
    words,
)
from systems.rsiagent.model.images import (
    agentic_image_bytes,
    durable_user_message,
    image_attachment,
    scope_prior_curriculum_visuals,
    sniff_mime,
    wire_message,
    with_durable_images,
)
from systems.rsiagent.model.phases import (
    ActorContext,
    ProjectSpec,
    _admit_at,
    _append,
    actor_work,
    commit_learning,
    distill,
    evolve_practice,
    evolve_practice_project,
    learning_diagnosis,
    push_canonical,
    reconcile,
    reset_null_vm,
    verify,
)
from systems.rsiagent.model.texts import (
    CHARTER_HEAD,
    CHARTER_PROJECT,
    CHARTER_TAIL,
    HANDOFF_PARAGRAPH,
    OPENING_TAIL,
    PIVOT_PARAGRAPH,
    PREAMBLE_EMPTY,
    PREAMBLE_FULL,
    PREAMBLE_HEAD,
    PREAMBLE_MID,
    REVIEW_ASK,
    REVIEW_SYSTEM,
    REVISIT_EVENTS,
    REVISIT_PREFIX,
    REVISIT_TAIL,
    SUMMARIZER_SYSTEM,
    TASK_HEADER,
    WORKLOG_HEADER,
    actor_charter,
    fold_request,
    handoff_message,
    memory_preamble,
    memory_revisit,
    opening_message,
    pivot_handoff_message,
    strategy_review_ask,
)
from systems.rsiagent.model.transport import (
    pull_memory,
    pull_terminal_memory,
    push_memory,
)
from systems.rsiagent.model.verifier import (
    LOSSLESS,
    ORIGINAL,
    Scratch,
    VerifierSession,
    _chars,
    _merge_images,
    actionless_fingerprint,
    detach_executor,
    parse_turn,
    recovery_history,
    semantic_replay,
    substantive_checkpoint,
)
from systems.rsiagent.model.volumes import (
    GuestVM,
    Host,
    Volume,
    read_journal,
)
from systems.rsiagent.model.waves import (
    WaveDecision,
    WaveProject,
    WaveResult,
    _merge_sibling_changes,
    evolve_parallel_phase1,
    parse_wave_handoff,
    wave_resume_allowed,
)
from systems.rsiagent.model.worklog import (
    ROLE_DEFAULTS,
    ActorLoop,
    digest_fallback,
    phase_cfg,
    render_fold,
    render_turn,
    resume,
    resume_eligible,
    stalled_handoff,
    synthesize_worklog,
)
from systems.rsiagent.state import COUNTERFACTUALS, FIXES, OFF
