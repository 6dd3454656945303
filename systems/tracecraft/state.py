"""Tracecraft value records: the switch names, sessions found by a harness, inbox lines and flushes.

A variant of the design is a :class:`sim.variant.Variant` of these names (``variant.has(name)``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

#: Every named fix (one per failure mode of the fidelity note §3); the faithful design enables none.
FIXES = (
    "state-scoped",  # 1: mirror state keyed by (backend, bucket, project, harness, sid); reset on mismatch
    "stop-keeps-cursor",  # 2: stop marks the state ended instead of deleting it; followers stop
    "mirror-intent",  # 3: a write-ahead intent in the state; the retry asks the bucket whether it landed
    "line-aligned",  # 4: flush only whole lines, so redaction never sees a split secret
    "compact-manifest",  # 5: meta is the manifest; merged entry records what it covers
    "meta-cas",  # 6: meta is compare-and-put with retry; rebuilds keep unknown keys
    "part-cond-put",  # 7: a conditional lock named by the start cursor, state re-read under it, then removed
    "part-seq-wide",  # 8: part-(\d{5,}) with a numeric sort
    "seen-cap-watermark",  # 9: a truncated seen list raises the watermark to the largest evicted key
    "mailbox-stamp",  # 10: stamp max(own clock, newest mailbox key + 1 ns), from a LIST before the PUT
    "future-guard",  # 11: keys stamped after now + grace are ignored; horizon = min(max_ts, now) - grace
    "reader-cursor",  # 12: one cursor per reader process
    "validate-agent",  # 13: agent ids validated at config load with the recipient rules
    "history-is-live",  # 14: live is the newest snapshot; snapshots stamped above the newest one (LIST)
    "history-worm",  # 14b: the backend refuses overwrite/delete under memory/_history/ (object lock)
    "claim-lease",  # 15: claims are leases (expiry, takeover) and force rewrites the claim
    "claim-refuses-terminal",  # 16: claim refuses a step whose status is complete
    "handoff-first",  # 17: the handoff is PUT first and status references it
    "handoff-reader",  # 18: wait-for returns the handoffs of the steps it waited for
    "heartbeat-refresh",  # 19: every command refreshes agents/<id>.json
    "require-harness",  # 20a: show/stop/compact refuse an ambiguous session id
    "artifact-namespace",  # 20b: step artifacts under artifacts/steps/<raw id>/, the pool reserved
    "hf-verify-claim",  # 21: HF claim: exists-then-write, wait HF_SETTLE_S, read back (Fischer's lock)
)

#: Every off switch: a claim's mechanism switched off or emptied (the degenerate design its property must
#: reject). The claims runner turns one on together with the claim's fix (the ``off`` direction).
OFF = (
    "mirror-uploads-nothing",  # session mirror prints "nothing new" and uploads nothing
    "compact-merges-nothing",  # session compact prints "nothing to compact" and merges nothing
    "inbox-shows-nothing",  # inbox shows no message (the cursor still advances)
    "inbox-ignores-cursor",  # inbox --new neither reads nor writes the cursor (a plain read)
    "agent-ids-refused",  # config load refuses every agent id
    "memory-writes-nothing",  # memory set prints its receipt and writes nothing
    "claim-refuses",  # claim refuses every step
    "complete-refuses",  # complete refuses every step
    "agents-lists-nothing",  # agents lists no registration
    "show-refuses",  # session show finds no session
    "artifacts-store-nothing",  # artifact upload stores nothing
)


@dataclass(frozen=True)
class Session:
    """A host session a harness found: its id, path in the host tree (or DB path), mtime, the cwd it
    ran in ("" when the harness cannot know it) and its absolute source path (meta's ``source_path``)."""

    harness: str
    session_id: str
    path: str
    mtime: float = 0.0
    cwd: str = ""
    source_path: str = ""


@dataclass(frozen=True)
class InboxLine:
    """One printed inbox line and the message key it came from."""

    key: str
    kind: str  # "direct" | "broadcast"
    sender: str
    sent_at: str
    message: str
    step: str | None = None

    def render(self) -> str:
        """``[<sent_at>] (<kind>) <from>[ [step X]]: <message>``."""
        step = f" [step {self.step}]" if self.step else ""
        return f"[{self.sent_at}] ({self.kind}) {self.sender}{step}: {self.message}"


@dataclass(frozen=True)
class Flush:
    """The outcome of one ``_mirror_once``: what was uploaded (or why nothing was)."""

    status: str  # "uploaded" | "nothing new" | "conflict" | "resumed"
    seq: int | None = None
    key: str | None = None
    cursor_range: tuple[int, int] | None = None
    source_bytes: int = 0
    uploaded_bytes: int = 0
    redactions: dict[str, int] = field(default_factory=dict)
