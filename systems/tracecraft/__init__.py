"""Tracecraft: agent coordination memory in a project-prefixed S3 bucket (memory, mail, steps, sessions).

Provenance: Arrmlet/tracecraft (MIT), release ``tracecraft-ai`` 0.2.5 = report commit 97c6b74
(fidelity note ../shared/fidelity/tracecraft.md). Covered: config/registration, shared memory
(live + snapshots), direct/broadcast mail with the ``--new`` cursor, steps (claim, complete, handoff,
wait-for), artifacts, and session mirroring (file-tail and Hermes harnesses, redaction, parts, meta,
list/show/stop/compact). Pure helpers live in :mod:`systems.tracecraft.protocol` (a file beyond the
common set, named after upstream's module so the conformance test reads side by side).
"""

from systems.tracecraft.protocol import (
    CURSOR_GRACE_NS,
    CURSOR_LEAF,
    SEEN_CAP,
    STALE_AFTER_S,
    TracecraftError,
    advance_stream,
    append_key,
    direct_children,
    is_data_leaf,
    key_sender,
    key_ts_ns,
    load_stream_cursor,
    merge_counts,
    normalize_step_id,
    redact,
    unseen_keys,
)

__all__ = [
    "CURSOR_GRACE_NS", "CURSOR_LEAF", "SEEN_CAP", "STALE_AFTER_S", "TracecraftError", "advance_stream",
    "append_key", "direct_children", "is_data_leaf", "key_sender", "key_ts_ns", "load_stream_cursor",
    "merge_counts", "normalize_step_id", "redact", "unseen_keys",
]  # fmt: skip
