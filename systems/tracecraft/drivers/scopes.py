"""Each Tracecraft claim's exhaustive scope (``memsim claims --exhaustive``): the values it probes.

Operation sequences are two or three operations over the strategies' own op lists (the mail ops leave out
PUTs later than the grace window, upstream's documented limit, as the strategies do); waits sit at and
around the 300 s thresholds (the mail grace, the registration's liveness, the claim lease at 600 s);
clock skews are the claims' fixed ones. Where a claim treats its agents alike, examples that differ only
by a relabelling of them are one case (``interchangeable``).
"""

from __future__ import annotations

from sim.exhaustive import Scope, derive, interchangeable, record, seq, values
from sim.exhaustive.scope import Values
from systems.tracecraft.drivers import artifacts, mail, memory, sessions, steps


def _ops(choices: tuple[tuple[object, ...], ...]) -> Values:
    return values(*(list(op) for op in choices))


SCOPES: dict[str, Scope] = {
    "mirror-cursor-reuse": derive(sessions.MirrorCursorReuseExample),
    "stop-deletes-cursor": derive(
        sessions.StopDeletesCursorExample, max_len=3, paths={"*": _ops(sessions.STOP_OPS)}
    ),
    "mirror-not-idempotent": derive(sessions.MirrorNotIdempotentExample),
    "redaction-per-chunk": derive(
        sessions.RedactionPerChunkExample,
        max_len=1,
        paths={"cuts.*": values(0, 1, 7, 19, 20, 30, 60)},
        note="one cut at each end of the secret, inside it and past it",
    ),
    "compact-duplicates": derive(sessions.CompactDuplicatesExample),
    "meta-lost-update": derive(
        sessions.MetaLostUpdateExample, mirror_at=values(0, 1, 2, 6, 12), compact_at=values(0, 1, 2, 6, 12)
    ),
    "two-mirrors": derive(
        sessions.TwoMirrorsExample,
        max_len=1,
        paths={
            "*": record(
                first=values(0, 1, 2),
                second_at=values(0, 4, 8),
                append=values(0, 1),
                append_at=values(0, 8),
                lose_state=values(False, True),
            )
        },
        note="one round",
    ),
    "part-seq-overflow": derive(
        sessions.PartSeqOverflowExample,
        base=values(99_988, 99_993, 99_994, 99_998, 99_999),
        flushes=values(1, 5, 6),
        note="bases whose flushes cross 99,999",
    ),
    "seen-cap-replay": derive(mail.SeenCapReplayExample, max_len=2, paths={"batches.*": values(0, 1, 2, 8)}),
    "skew-hides-mail": derive(
        mail.SkewHidesMailExample,
        max_len=3,
        paths={
            "skews": values(mail.SKEW_SKEWS),
            "ops.*": _ops(mail.mail_op_choices(mail.SKEW_SKEWS, mail.SKEW_EXTRA)),
        },
        note="senders 0, 2, 10 and 15 minutes slow; a PUT 120 s late; waits of 10, 350 and 700 s",
        deep={"ops.*": _ops((("send", 0, 0), ("send", 2, 0), ("send", 0, 120), ("wait", 0, 350)))},
        deep_note="up to 6 of 4 ops: the on-time and 10-minute-slow senders, the late PUT, a wait past grace",
    ),
    "future-key-blinds": derive(
        mail.FutureKeyBlindsExample,
        max_len=3,
        paths={
            "skews": values(mail.FUTURE_SKEWS),
            "ops.*": _ops(mail.mail_op_choices(mail.FUTURE_SKEWS, mail.FUTURE_EXTRA)),
        },
        note="senders 0 s, 30 s and 1 h fast; a 9999… leaf",
        deep={"ops.*": _ops((("junk", 0, 0), ("send", 0, 0), ("send", 2, 0), ("wait", 0, 700)))},
        deep_note="up to 6 of 4 ops: the 9999… leaf, the on-time and 1-hour-fast senders, a long wait",
    ),
    "shared-cursor-reshow": derive(
        mail.SharedCursorReshowExample,
        send_every=values(2, 3, 20),
        r1_every=values(2, 3, 20),
        r2_every=values(2, 3, 20),
        r2_pause=values(0, 1, 20),
    ),
    "unvalidated-agent-id": derive(mail.UnvalidatedAgentIdExample, max_len=2),
    "history-newest-not-live": derive(
        memory.HistoryNewestNotLiveExample,
        deep={"sets.*.1": values(0, 1, 4), "crash_at": values(0, 1, 4)},
        deep_note="set values and crash points 0, 1 and 4",
    ),
    "history-not-immutable": derive(memory.HistoryNotImmutableExample),
    "permanent-claim": derive(
        steps.PermanentClaimExample,
        paths={"": seq(_ops(steps.PERMANENT_CLAIM_OPS), 3, min_len=2, cap=6, prefix=(["claim", "a", ""],))},
        note="a's first claim, then 2 or 3 of the strategy's claims, completes and waits (700 s: past the "
        "lease)",
        deep={
            "": seq(
                _ops(
                    (
                        ("complete", "b", "force"),
                        ("complete", "a", "blocked"),
                        ("wait", "", "700"),
                        ("claim", "b", ""),
                    )
                ),
                6,
                min_len=2,
                cap=6,
                prefix=(["claim", "a", ""],),
            )
        },
        deep_note="then 2 to 6 of b's forced complete, a's blocked complete, b's claim and the 700 s wait",
    ),
    "completed-step-regresses": derive(
        steps.CompletedStepRegressesExample,
        max_len=3,
        symmetry=interchangeable("a", "b"),
        note="agents a and b are interchangeable (the check names neither)",
    ),
    "status-before-handoff": derive(
        steps.StatusBeforeHandoffExample,
        paths={"poll_at.*": values(0, 1, 5, 10)},
        deep={"poll_at": seq(values(0, 5), 2, cap=3)},
        deep_note="polls at 0 and 5 s, up to two",
    ),
    "handoff-no-consumer": derive(steps.HandoffNoConsumerExample),
    "registration-not-liveness": derive(
        steps.RegistrationNotLivenessExample,
        deep={"*.2": values(0, 400)},
        deep_note="waits of 0 and 400 s (under and past the 300 s liveness)",
    ),
    "session-id-ambiguity": derive(sessions.SessionIdAmbiguityExample),
    "artifact-collision": derive(artifacts.ArtifactCollisionExample),
    "hf-racy-claims": derive(
        steps.HfRacyClaimsExample,
        max_len=3,
        paths={"gaps.*": values(2.0, 1.0, 0.5, 0.0)},
        latency=values(0.25, 1.0),
        note="the strategy's gaps, 2 s first (the staggered control)",
    ),
}
