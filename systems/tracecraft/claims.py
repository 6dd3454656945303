"""Tracecraft's claimed failure modes (fidelity note §3): declarations only.

Each claim names its fix (a switch of :data:`systems.tracecraft.state.FIXES`) and its off switch (one of
:data:`systems.tracecraft.state.OFF`: the mechanism under test switched off or emptied, which its property
must reject as it rejects upstream's design); its strategy, driver and example type live in
:mod:`systems.tracecraft.drivers` (one module per service) and its checkers in
:mod:`systems.tracecraft.properties`. Every claim runs on the in-memory object store and a fresh
simulation. Where a claim needs a cheap example, a constant is a parameter of the example (``seen_cap``)
while the model keeps upstream's default.

Every faithful counterexample also runs on the real ``tracecraft`` CLI (``memsim replay --real``,
:mod:`systems.tracecraft.transfer`); :data:`systems.tracecraft.transfer.REPRODUCES` records the result.
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
        "destination's cursor and never receives the first bytes (each destination's transcript, after "
        "one more flush, must be the whole file).",
        "state-scoped: key the local state by (backend, bucket, project, harness, session) and drop a state "
        "whose harness or source does not match.",
        sessions.mirror_cursor_reuse_examples,
        sessions.mirror_cursor_reuse,
        fixes=("state-scoped",),
        off=("mirror-uploads-nothing",),
        example_type=sessions.MirrorCursorReuseExample,
    ),
    _claim(
        "stop-deletes-cursor",
        ("MEM-OBJ-mirror-state", "RT-RTE-session-mirror"),
        "`session stop` deletes the local cursor, so the next mirror uploads the whole file again (the "
        "transcript must be the file, each byte once).",
        "stop-keeps-cursor: stop marks the state ended instead of deleting it; followers stop, a one-shot "
        "mirror resumes from the cursor.",
        sessions.stop_deletes_cursor_examples,
        sessions.stop_deletes_cursor,
        fixes=("stop-keeps-cursor",),
        off=("mirror-uploads-nothing",),
        example_type=sessions.StopDeletesCursorExample,
    ),
    _claim(
        "mirror-not-idempotent",
        ("RT-CLM-mirror-idempotence", "MEM-OBJ-session-parts"),
        "A crash after the part PUT or the meta PUT makes the retry upload the same bytes again (after the "
        "retry the transcript must be the file, each byte once).",
        "mirror-intent: a write-ahead intent in the local state; the retry asks the bucket whether the part "
        "landed, completes meta and commits the cursor.",
        sessions.mirror_not_idempotent_examples,
        sessions.mirror_not_idempotent,
        fixes=("mirror-intent",),
        off=("mirror-uploads-nothing",),
        example_type=sessions.MirrorNotIdempotentExample,
    ),
    _claim(
        "redaction-per-chunk",
        ("RT-CLM-secret-redaction", "MEM-OBJ-session-parts"),
        "Redaction runs per flushed chunk: a secret split across two flushes is stored unredacted (the "
        "transcript must be the whole file, redacted as one).",
        "line-aligned: flush only whole lines, so redaction never sees a split secret.",
        sessions.redaction_per_chunk_examples,
        sessions.redaction_per_chunk,
        fixes=("line-aligned",),
        off=("mirror-uploads-nothing",),
        example_type=sessions.RedactionPerChunkExample,
    ),
    _claim(
        "compact-duplicates",
        ("RT-RTE-session-compact", "MEM-OBJ-session-meta"),
        "An interrupted compact leaves the merged part and the originals, show prints the content twice, "
        "and a second compact makes the duplicate permanent (show must print each line once and the "
        "re-run compact must leave one merged part plus the kept tail).",
        "compact-manifest: meta is the manifest show and compact read; the merged entry records the parts "
        "it covers, and covered originals are deleted idempotently.",
        sessions.compact_duplicates_examples,
        sessions.compact_duplicates,
        fixes=("compact-manifest",),
        off=("compact-merges-nothing",),
        example_type=sessions.CompactDuplicatesExample,
        intent="upstream's docstring calls the duplicate a crash can leave 'harmless' "
        "(cli/session.py:531-534); the claim shows the second compact makes it permanent.",
    ),
    _claim(
        "meta-lost-update",
        ("MEM-OBJ-session-meta", "RT-RTE-session-compact"),
        "meta.json is rebuilt read-modify-write with no CAS: a mirror racing a compact loses its parts-log "
        "entry, or the flush drops the compact's last_compacted_at (meta must list the bucket's parts and "
        "show must print the whole session).",
        "meta-cas: meta is compare-and-put (If-Match) with retry, and a rebuild keeps the keys it does not "
        "own.",
        sessions.meta_lost_update_examples,
        sessions.meta_lost_update,
        fixes=("meta-cas",),
        off=("mirror-uploads-nothing",),
        example_type=sessions.MetaLostUpdateExample,
    ),
    _claim(
        "two-mirrors",
        ("RT-CLM-mirror-idempotence", "RT-RTE-session-mirror"),
        "Two mirrors of one session read the same cursor and both upload the same bytes (racing mirrors "
        "must upload what one mirror would: each round's bytes once, from byte 0 again after a lost state).",
        "part-cond-put: a conditional lock object named by the flush's start cursor; under it the state is "
        "read again, and it is removed after the state save (a later flush from the same cursor, after a "
        "lost state, is not refused forever).",
        sessions.two_mirrors_examples,
        sessions.two_mirrors,
        fixes=("part-cond-put",),
        off=("mirror-uploads-nothing",),
        example_type=sessions.TwoMirrorsExample,
    ),
    _claim(
        "part-seq-overflow",
        ("MEM-OBJ-session-parts",),
        "Part seq 100000 has 6 digits and fails PART_RE: show never prints the bytes flushed into it.",
        "part-seq-wide: part-(\\d{5,}) with a numeric sort.",
        sessions.part_seq_overflow_examples,
        sessions.part_seq_overflow,
        fixes=("part-seq-wide",),
        off=("mirror-uploads-nothing",),
        example_type=sessions.PartSeqOverflowExample,
    ),
    _claim(
        "seen-cap-replay",
        ("MEM-OBJ-inbox-cursor", "RT-RTE-mail-exchange"),
        "More unseen keys within the grace window than SEEN_CAP: the next --new shows the evicted oldest "
        "keys again (every message must be shown exactly once).",
        "seen-cap-watermark: when seen is truncated, raise the watermark to the largest evicted key.",
        mail.seen_cap_replay_examples,
        mail.seen_cap_replay,
        fixes=("seen-cap-watermark",),
        off=("inbox-shows-nothing",),
        example_type=mail.SeenCapReplayExample,
    ),
    _claim(
        "skew-hides-mail",
        ("MEM-OBJ-inbox-cursor", "RT-RTE-mail-exchange", "MEM-OBJ-message-content"),
        "A sender clock more than 300 s slow stamps a key below the reader's watermark: --new never shows "
        "it (every message must be shown exactly once).",
        "mailbox-stamp: the sender LISTs the recipient's mailbox above its own clock and stamps "
        "max(own clock, newest key + 1 ns), ignoring keys more than 30 min ahead; no store clock is needed.",
        mail.skew_hides_mail_examples,
        mail.skew_hides_mail,
        fixes=("mailbox-stamp",),
        off=("inbox-ignores-cursor",),
        example_type=mail.SkewHidesMailExample,
        intent="upstream documents arrivals more than the 300 s grace window out of order as the limit of "
        "--new (protocol.py:96-103); the claim shows that clock skew, not only a slow PUT, reaches it. A "
        "PUT that lands more than 300 s after its stamp stays that limit under the fix.",
    ),
    _claim(
        "future-key-blinds",
        ("MEM-OBJ-inbox-cursor", "RT-RTE-mail-exchange"),
        "One future-stamped key lifts the watermark above all correct mail: --new goes blind (every message "
        "must be shown exactly once).",
        "future-guard: keys stamped after now + grace are ignored for the watermark; horizon = "
        "min(max_ts, now) - grace.",
        mail.future_key_blinds_examples,
        mail.future_key_blinds,
        fixes=("future-guard",),
        off=("inbox-ignores-cursor",),
        example_type=mail.FutureKeyBlindsExample,
    ),
    _claim(
        "shared-cursor-reshow",
        ("MEM-OBJ-inbox-cursor",),
        "Readers sharing one agent id overwrite one cursor (last writer wins): mail is shown again, or one "
        "reader never sees what the other consumed (each reader must show every message exactly once).",
        "reader-cursor: one cursor per reader process.",
        mail.shared_cursor_reshow_examples,
        mail.shared_cursor_reshow,
        fixes=("reader-cursor",),
        off=("inbox-shows-nothing",),
        example_type=mail.SharedCursorReshowExample,
    ),
    _claim(
        "unvalidated-agent-id",
        ("RT-OBJ-config", "MEM-OBJ-message-content", "MEM-OBJ-memory-history"),
        "Agent ids are never validated: an id with '/' sends mail nobody sees and writes history that "
        "`memory history` cannot show (a valid id must be served; an accepted write must be delivered).",
        "validate-agent: agent ids are validated at config load with the recipient rules.",
        mail.unvalidated_agent_id_examples,
        mail.unvalidated_agent_id,
        fixes=("validate-agent",),
        off=("agent-ids-refused",),
        example_type=mail.UnvalidatedAgentIdExample,
    ),
    _claim(
        "history-newest-not-live",
        ("MEM-OBJ-memory-history", "MEM-OBJ-memory-live", "RT-RTE-memory-write"),
        "Snapshot and live writes are separate: the newest history entry need not be the live value (get "
        "and history --limit 1 must agree on a value no later acknowledged set supersedes).",
        "history-is-live: the live value is the newest snapshot, and a snapshot is stamped above the newest "
        "one it lists, so key order follows the order of sets that do not overlap, whatever the clocks.",
        memory.history_newest_not_live_examples,
        memory.history_newest_not_live,
        fixes=("history-is-live",),
        off=("memory-writes-nothing",),
        example_type=memory.HistoryNewestNotLiveExample,
        intent="upstream writes the snapshot first on purpose: 'a crash in between leaves an extra audit "
        "entry (harmless)' (cli/memory.py:62-63); the claim shows it is the newest entry and never live.",
    ),
    _claim(
        "history-not-immutable",
        ("MEM-CLM-history-immutability", "RT-CMP-get-store"),
        "'No version is ever lost' is not enforced: the backend API overwrites or deletes snapshots (history "
        "must keep every line it showed and show every acknowledged set).",
        "history-worm: the backend refuses overwrite and delete under memory/_history/ (object lock).",
        memory.history_not_immutable_examples,
        memory.history_not_immutable,
        fixes=("history-worm",),
        off=("memory-writes-nothing",),
        example_type=memory.HistoryNotImmutableExample,
    ),
    _claim(
        "permanent-claim",
        ("RT-OBJ-step-state", "RT-RTE-step-control"),
        "A claim never expires and `complete --force` leaves it: the step cannot be reclaimed and the "
        "original owner can overwrite the forced result (a free step must be claimable and its owner must "
        "be able to complete it).",
        "claim-lease: claims are leases (600 s, conditional takeover of a non-complete step) and --force "
        "rewrites the claim.",
        steps.permanent_claim_examples,
        steps.permanent_claim,
        fixes=("claim-lease",),
        off=("complete-refuses",),
        example_type=steps.PermanentClaimExample,
    ),
    _claim(
        "completed-step-regresses",
        ("RT-OBJ-step-state", "RT-RTE-step-control"),
        "An unclaimed step can be completed, then claimed: the unconditional status PUT turns complete back "
        "into in_progress (a free step must stay claimable and completable).",
        "claim-refuses-terminal: claim refuses a step whose status is complete.",
        steps.completed_step_regresses_examples,
        steps.completed_step_regresses,
        fixes=("claim-refuses-terminal",),
        off=("claim-refuses",),
        example_type=steps.CompletedStepRegressesExample,
    ),
    _claim(
        "status-before-handoff",
        ("MEM-OBJ-handoff", "RT-RTE-step-control", "RT-BAP-step-polling"),
        "complete writes status before the handoff: a waiter sees complete with the handoff missing or "
        "stale (the owner's completes must land and the step must end in the last one's state).",
        "handoff-first: the handoff is PUT first (with its own id) and status references it.",
        steps.status_before_handoff_examples,
        steps.status_before_handoff,
        fixes=("handoff-first",),
        off=("complete-refuses",),
        example_type=steps.StatusBeforeHandoffExample,
    ),
    _claim(
        "handoff-no-consumer",
        ("MEM-OBJ-handoff", "RT-BAP-step-polling"),
        "No command reads the handoff: the next agent's wait-for never delivers the note.",
        "handoff-reader: wait-for returns the handoffs of the steps it waited for.",
        steps.handoff_no_consumer_examples,
        steps.handoff_no_consumer,
        fixes=("handoff-reader",),
        off=("complete-refuses",),
        example_type=steps.HandoffNoConsumerExample,
    ),
    _claim(
        "registration-not-liveness",
        ("MEM-OBJ-agent-registration", "RT-RTE-init-config"),
        "The heartbeat is written at init only: an agent working now is reported stale after 300 s (every "
        "active agent must be listed, and not as stale).",
        "heartbeat-refresh: every command refreshes agents/<id>.json.",
        steps.registration_not_liveness_examples,
        steps.registration_not_liveness,
        fixes=("heartbeat-refresh",),
        off=("agents-lists-nothing",),
        example_type=steps.RegistrationNotLivenessExample,
    ),
    _claim(
        "session-id-ambiguity",
        ("MEM-OBJ-session-meta", "RT-CMP-harness-registry"),
        "show/stop/compact take the first harness holding a session id and say nothing (an unambiguous id "
        "must show its session; an ambiguous one must be refused and reachable with --harness).",
        "require-harness: show, stop and compact refuse an ambiguous session id and take --harness.",
        sessions.session_id_ambiguity_examples,
        sessions.session_id_ambiguity,
        fixes=("require-harness",),
        off=("show-refuses",),
        example_type=sessions.SessionIdAmbiguityExample,
    ),
    _claim(
        "artifact-collision",
        ("MEM-OBJ-artifact-file", "RT-RTE-artifact-share"),
        "Artifact addresses collide: a step named 'shared' is the pool, and step ids fold case and '.' "
        "(each address must download its own latest upload).",
        "artifact-namespace: step artifacts live under artifacts/steps/<raw id>/; the pool is reserved.",
        artifacts.artifact_collision_examples,
        artifacts.artifact_collision,
        fixes=("artifact-namespace",),
        off=("artifacts-store-nothing",),
        example_type=artifacts.ArtifactCollisionExample,
    ),
    _claim(
        "hf-racy-claims",
        ("RT-CMP-get-store", "RT-OBJ-step-state", "MEM-RTE-evaluator-readback"),
        "On the HF backend the conditional claim is exists-then-write: concurrent claimants all win (one "
        "claimant must win, and be the stored owner). It transfers only to a local stand-in for the Hub's "
        "file system: memsim makes no network call.",
        "hf-verify-claim: on HF, after the exists-then-write wait HF_SETTLE_S (5 s, longer than any write "
        "takes) and read the claim back; another owner means the claim was lost (Fischer's mutual "
        "exclusion, no conditional write needed).",
        steps.hf_racy_claims_examples,
        steps.hf_racy_claims,
        fixes=("hf-verify-claim",),
        off=("claim-refuses",),
        example_type=steps.HfRacyClaimsExample,
        intent="upstream documents HF claims as best-effort: `claim` warns that 'another agent may also "
        "believe it won this step' (cli/steps.py:66-74; hf.py:56-57).",
    ),
]
