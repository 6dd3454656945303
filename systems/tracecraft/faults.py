"""Tracecraft's named crash/fail points: one per gap in every multi-write order (fidelity note §2.7).

Arm them with ``crash@<point>`` (e.g. ``crash@tracecraft.memory_set.after_snapshot``); what was written
before the point stays in the bucket (and in the local mirror-state file).
"""

from sim.faults import declare_point

MEMORY_SET_AFTER_SNAPSHOT = declare_point(
    "tracecraft.memory_set.after_snapshot",
    "memory set: the history snapshot is PUT, the live value is not (a snapshot that never went live)",
)
INBOX_BEFORE_CURSOR = declare_point(
    "tracecraft.inbox.before_cursor",
    "inbox --new: the messages were printed, the cursor is not PUT (they are shown again next time)",
)
INBOX_AFTER_DELETE = declare_point(
    "tracecraft.inbox.after_delete",
    "inbox --delete: one printed direct message was DELETEd, the rest were not (partial deletion)",
)
CLAIM_AFTER_CLAIM = declare_point(
    "tracecraft.claim.after_claim",
    "claim: claim.json is PUT, status.json is not (readers say in_progress from the claim)",
)
COMPLETE_AFTER_STATUS = declare_point(
    "tracecraft.complete.after_status",
    "complete: status.json is PUT, handoff.json is not (status complete, handoff missing or stale)",
)
COMPLETE_AFTER_HANDOFF = declare_point(
    "tracecraft.complete.after_handoff",
    "complete (handoff-first fix): handoff.json is PUT, status.json is not",
)
MIRROR_AFTER_PART = declare_point(
    "tracecraft.mirror.after_part",
    "mirror: the part is PUT, meta.json and the local state are not (an orphan part; retry duplicates)",
)
MIRROR_AFTER_META = declare_point(
    "tracecraft.mirror.after_meta",
    "mirror: part and meta are PUT, the local cursor is not saved (retry re-reads the same bytes)",
)
COMPACT_AFTER_MERGED = declare_point(
    "tracecraft.compact.after_merged",
    "compact: the merged part is PUT, meta is not (merged part plus originals)",
)
COMPACT_AFTER_META = declare_point(
    "tracecraft.compact.after_meta",
    "compact: merged part and meta are PUT, no original is deleted (show prints the content twice)",
)
COMPACT_AFTER_DELETE = declare_point(
    "tracecraft.compact.after_delete",
    "compact: one original part was DELETEd, the rest were not",
)

ALL = (
    MEMORY_SET_AFTER_SNAPSHOT, INBOX_BEFORE_CURSOR, INBOX_AFTER_DELETE, CLAIM_AFTER_CLAIM,
    COMPLETE_AFTER_STATUS, COMPLETE_AFTER_HANDOFF, MIRROR_AFTER_PART, MIRROR_AFTER_META,
    COMPACT_AFTER_MERGED, COMPACT_AFTER_META, COMPACT_AFTER_DELETE,
)  # fmt: skip
