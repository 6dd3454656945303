"""Tracecraft's claimed failure modes (fidelity note §3): declarations only.

Each claim names its fix (a switch of :data:`systems.tracecraft.state.FIXES`); its strategy and driver
live in :mod:`systems.tracecraft.drivers` (one module per service) and its checkers in
:mod:`systems.tracecraft.properties`. Every claim runs on the in-memory object store and a fresh
simulation. Where a claim needs a cheap example, a constant is a parameter of the example (``seen_cap``)
while the model keeps upstream's default.
"""

from __future__ import annotations

from sim.claims import Claim, claim_factory
from systems.tracecraft.drivers import artifacts, mail, memory, sessions, steps

_claim = claim_factory("tracecraft")

CLAIMS: list[Claim] = [
    _claim(
        "mirror-cursor-reuse",
        ("MEM-OBJ-mirror-state", "RT-RTE-session-mirror"),
        "The mirror state is keyed by session id only: a second project or harness resumes from another "
        "destination's cursor and never receives the first bytes.",
        "state-scoped",
        sessions.mirror_cursor_reuse_examples,
        sessions.mirror_cursor_reuse,
        fixes=("state-scoped",),
    ),
    _claim(
        "stop-deletes-cursor",
        ("MEM-OBJ-mirror-state", "RT-RTE-session-mirror"),
        "`session stop` deletes the local cursor, so the next mirror uploads the whole file again.",
        "stop-keeps-cursor",
        sessions.stop_deletes_cursor_examples,
        sessions.stop_deletes_cursor,
        fixes=("stop-keeps-cursor",),
    ),
    _claim(
        "mirror-not-idempotent",
        ("RT-CLM-mirror-idempotence", "MEM-OBJ-session-parts"),
        "A crash after the part PUT or the meta PUT makes the retry upload the same bytes again.",
        "mirror-intent",
        sessions.mirror_not_idempotent_examples,
        sessions.mirror_not_idempotent,
        fixes=("mirror-intent",),
    ),
    _claim(
        "redaction-per-chunk",
        ("RT-CLM-secret-redaction", "MEM-OBJ-session-parts"),
        "Redaction runs per flushed chunk: a secret split across two flushes is stored unredacted.",
        "line-aligned",
        sessions.redaction_per_chunk_examples,
        sessions.redaction_per_chunk,
        fixes=("line-aligned",),
    ),
    _claim(
        "compact-duplicates",
        ("RT-RTE-session-compact", "MEM-OBJ-session-meta"),
        "An interrupted compact leaves the merged part and the originals, show prints the content "
        "twice, and a second compact makes the duplicate permanent.",
        "compact-manifest",
        sessions.compact_duplicates_examples,
        sessions.compact_duplicates,
        fixes=("compact-manifest",),
    ),
    _claim(
        "meta-lost-update",
        ("MEM-OBJ-session-meta", "RT-RTE-session-compact"),
        "meta.json is rebuilt read-modify-write with no CAS: a mirror racing a compact loses its parts-log "
        "entry, or the flush drops the compact's last_compacted_at.",
        "meta-cas",
        sessions.meta_lost_update_examples,
        sessions.meta_lost_update,
        fixes=("meta-cas",),
    ),
    _claim(
        "two-mirrors",
        ("RT-CLM-mirror-idempotence", "RT-RTE-session-mirror"),
        "Two mirrors of one session read the same cursor and both upload the same bytes.",
        "part-cond-put",
        sessions.two_mirrors_examples,
        sessions.two_mirrors,
        fixes=("part-cond-put",),
    ),
    _claim(
        "part-seq-overflow",
        ("MEM-OBJ-session-parts",),
        "Part seq 100000 has 6 digits and fails PART_RE: show never prints the bytes flushed into it.",
        "part-seq-wide",
        sessions.part_seq_overflow_examples,
        sessions.part_seq_overflow,
        fixes=("part-seq-wide",),
    ),
    _claim(
        "seen-cap-replay",
        ("MEM-OBJ-inbox-cursor", "RT-RTE-mail-exchange"),
        "More unseen keys within the grace window than SEEN_CAP: the next --new shows the evicted oldest "
        "keys again.",
        "seen-cap-watermark",
        mail.seen_cap_replay_examples,
        mail.seen_cap_replay,
        fixes=("seen-cap-watermark",),
    ),
    _claim(
        "skew-hides-mail",
        ("MEM-OBJ-inbox-cursor", "RT-RTE-mail-exchange", "MEM-OBJ-message-content"),
        "A sender clock more than 300 s slow, or a late arrival, stamps a key below the reader's "
        "watermark: --new never shows it.",
        "server-order",
        mail.skew_hides_mail_examples,
        mail.skew_hides_mail,
        fixes=("server-order",),
    ),
    _claim(
        "future-key-blinds",
        ("MEM-OBJ-inbox-cursor", "RT-RTE-mail-exchange"),
        "One future-stamped key lifts the watermark above all correct mail: --new goes blind.",
        "future-guard",
        mail.future_key_blinds_examples,
        mail.future_key_blinds,
        fixes=("future-guard",),
    ),
    _claim(
        "shared-cursor-reshow",
        ("MEM-OBJ-inbox-cursor",),
        "Readers sharing one agent id overwrite one cursor (last writer wins): mail is shown again.",
        "reader-cursor",
        mail.shared_cursor_reshow_examples,
        mail.shared_cursor_reshow,
        fixes=("reader-cursor",),
    ),
    _claim(
        "unvalidated-agent-id",
        ("RT-OBJ-config", "MEM-OBJ-message-content", "MEM-OBJ-memory-history"),
        "Agent ids are never validated: an id with '/' sends mail nobody sees and writes history that "
        "`memory history` cannot show.",
        "validate-agent",
        mail.unvalidated_agent_id_examples,
        mail.unvalidated_agent_id,
        fixes=("validate-agent",),
    ),
    _claim(
        "history-newest-not-live",
        ("MEM-OBJ-memory-history", "MEM-OBJ-memory-live", "RT-RTE-memory-write"),
        "Snapshot and live writes are separate: the newest history entry need not be the live value.",
        "history-is-live",
        memory.history_newest_not_live_examples,
        memory.history_newest_not_live,
        fixes=("history-is-live",),
    ),
    _claim(
        "history-not-immutable",
        ("MEM-CLM-history-immutability", "RT-CMP-get-store"),
        "'No version is ever lost' is not enforced: the backend API overwrites or deletes snapshots.",
        "history-worm",
        memory.history_not_immutable_examples,
        memory.history_not_immutable,
        fixes=("history-worm",),
    ),
    _claim(
        "permanent-claim",
        ("RT-OBJ-step-state", "RT-RTE-step-control"),
        "A claim never expires and `complete --force` leaves it: the step cannot be reclaimed and the "
        "original owner can overwrite the forced result.",
        "claim-lease",
        steps.permanent_claim_examples,
        steps.permanent_claim,
        fixes=("claim-lease",),
    ),
    _claim(
        "completed-step-regresses",
        ("RT-OBJ-step-state", "RT-RTE-step-control"),
        "An unclaimed step can be completed, then claimed: the unconditional status PUT turns complete "
        "back into in_progress.",
        "claim-refuses-terminal",
        steps.completed_step_regresses_examples,
        steps.completed_step_regresses,
        fixes=("claim-refuses-terminal",),
    ),
    _claim(
        "status-before-handoff",
        ("MEM-OBJ-handoff", "RT-RTE-step-control", "RT-BAP-step-polling"),
        "complete writes status before the handoff: a waiter sees complete with the handoff missing "
        "or stale.",
        "handoff-first",
        steps.status_before_handoff_examples,
        steps.status_before_handoff,
        fixes=("handoff-first",),
    ),
    _claim(
        "handoff-no-consumer",
        ("MEM-OBJ-handoff", "RT-BAP-step-polling"),
        "No command reads the handoff: the next agent's wait-for never delivers the note.",
        "handoff-reader",
        steps.handoff_no_consumer_examples,
        steps.handoff_no_consumer,
        fixes=("handoff-reader",),
    ),
    _claim(
        "registration-not-liveness",
        ("MEM-OBJ-agent-registration", "RT-RTE-init-config"),
        "The heartbeat is written at init only: an agent working now is reported stale after 300 s.",
        "heartbeat-refresh",
        steps.registration_not_liveness_examples,
        steps.registration_not_liveness,
        fixes=("heartbeat-refresh",),
    ),
    _claim(
        "session-id-ambiguity",
        ("MEM-OBJ-session-meta", "RT-CMP-harness-registry"),
        "show/stop/compact take the first harness holding a session id and say nothing.",
        "require-harness",
        sessions.session_id_ambiguity_examples,
        sessions.session_id_ambiguity,
        fixes=("require-harness",),
    ),
    _claim(
        "artifact-collision",
        ("MEM-OBJ-artifact-file", "RT-RTE-artifact-share"),
        "Artifact addresses collide: a step named 'shared' is the pool, and step ids fold case and '.'.",
        "artifact-namespace",
        artifacts.artifact_collision_examples,
        artifacts.artifact_collision,
        fixes=("artifact-namespace",),
    ),
    _claim(
        "hf-racy-claims",
        ("RT-CMP-get-store", "RT-OBJ-step-state", "MEM-RTE-evaluator-readback"),
        "On the HF backend the conditional claim is exists-then-write: concurrent claimants all win.",
        "conditional-backend",
        steps.hf_racy_claims_examples,
        steps.hf_racy_claims,
        fixes=("conditional-backend",),
    ),
]
