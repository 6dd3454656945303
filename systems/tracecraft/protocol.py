"""Tracecraft's pure protocol helpers and redaction, written from the fidelity note (§2.1, §2.3, §2.6).

Upstream's names and argument order (``tracecraft.protocol``, ``tracecraft.redact`` 0.2.5). The only
deliberate difference: ``append_key`` takes the writer's clock (``ts_ns``) and the 8 hex characters
(``suffix``) as arguments instead of reading ``time.time_ns()`` and ``uuid4()``. The cursor helpers take
keyword-only switches for the named fixes (faithful defaults), and a ``seen_cap`` parameter whose default
is upstream's ``SEEN_CAP``. tests/test_tracecraft_conformance.py checks them against the real package.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

CURSOR_LEAF = "_cursor.json"
CURSOR_GRACE_NS = 300 * 10**9
SEEN_CAP = 1000
STALE_AFTER_S = 300


class TracecraftError(Exception):
    """A CLI error (upstream's ``click.ClickException`` or a non-zero exit); ``str()`` is the message."""


# -- keys ------------------------------------------------------------------------------------------
def is_data_leaf(leaf: str) -> bool:
    """Whether *leaf* is a data object: non-empty, no ``/``, not starting with ``_``."""
    return bool(leaf) and "/" not in leaf and not leaf.startswith("_")


def direct_children(keys: Iterable[str], prefix: str) -> list[str]:
    """The keys whose remainder after *prefix* is a data leaf (drops cursors and nested junk).

    As upstream, the remainder is the key with ``len(prefix)`` characters cut, without checking that the
    key starts with *prefix* (listings always do).
    """
    return [k for k in keys if is_data_leaf(k[len(prefix) :])]


def append_key(prefix: str, agent_id: str, ts_ns: int, suffix: str) -> str:
    """``<prefix><ts_ns>_<agent>_<suffix>.json``: ts (19 digits), writer, then 8 random hex chars."""
    return f"{prefix}{ts_ns}_{agent_id}_{suffix}.json"


def _leaf(key: str, prefix: str) -> str:
    return key[len(prefix) :]


def _all_digits(text: str) -> bool:
    return bool(text) and text.isdigit() and text.isascii()


def key_ts_ns(key: str, prefix: str) -> int | None:
    """The leaf's text before the first ``_`` as an int when it is all digits, else None."""
    head = _leaf(key, prefix).split("_", 1)[0]
    return int(head) if _all_digits(head) else None


def key_sender(key: str, prefix: str) -> str | None:
    """The sender in ``<ts>_<sender>_<uuid>.json`` (senders may contain ``_``), else None."""
    leaf = _leaf(key, prefix)
    if not leaf.endswith(".json"):
        return None
    parts = leaf[: -len(".json")].split("_")
    if len(parts) < 3 or not _all_digits(parts[0]):
        return None
    return "_".join(parts[1:-1])


def normalize_step_id(step_id: str) -> str:
    """Lower-case, then ``.`` to ``-``; raises :class:`TracecraftError` on a blank id or one with ``/``."""
    if not step_id or not step_id.strip():
        raise TracecraftError("Step id cannot be empty")
    if "/" in step_id:
        raise TracecraftError("Step ids may not contain '/'")
    return step_id.lower().replace(".", "-")


def cursor_key(agent_id: str) -> str:
    """``messages/<agent>/_cursor.json``."""
    return f"messages/{agent_id}/{CURSOR_LEAF}"


# -- the inbox cursor ------------------------------------------------------------------------------
def load_stream_cursor(cursor_doc: Any, name: str) -> dict[str, Any]:
    """One stream of a cursor document: ``{watermark, seen}`` (dict), legacy string, or empty."""
    value = (cursor_doc or {}).get(name)  # a truthy non-dict document raises, as upstream
    if isinstance(value, dict):
        seen = value.get("seen") or []
        return {
            "watermark": value.get("watermark"),
            "seen": [s for s in seen if isinstance(s, str)] if isinstance(seen, list) else [],
        }
    if isinstance(value, str):
        return {"watermark": value, "seen": []}
    return {"watermark": None, "seen": []}


def unseen_keys(listed: Iterable[str], stream: dict[str, Any]) -> list[str]:
    """The listed keys above the watermark (string comparison) and not in ``seen``."""
    wm = stream.get("watermark")
    seen = set(stream.get("seen") or [])
    return [k for k in listed if (wm is None or k > wm) and k not in seen]


def advance_stream(
    stream: dict[str, Any],
    listed: list[str],
    prefix: str,
    *,
    seen_cap: int = SEEN_CAP,
    raise_on_evict: bool = False,
    now_ns: int | None = None,
) -> dict[str, Any]:
    """The stream after reading *listed*: watermark = max ts − grace (never regressing), capped seen.

    Faithful by default. *raise_on_evict* (fix ``seen-cap-watermark``) raises the watermark to the
    largest key evicted by the cap; *now_ns* (fix ``future-guard``) ignores keys stamped after
    ``now_ns + grace`` and clamps the horizon to ``min(max_ts, now_ns) − grace``.
    """
    if not listed:
        return stream
    old = stream.get("watermark")
    known = sorted(set(stream.get("seen") or []) | set(listed))
    stamps = [t for t in (key_ts_ns(k, prefix) for k in listed) if t is not None]
    if now_ns is not None:
        stamps = [t for t in stamps if t <= now_ns + CURSOR_GRACE_NS]
    if not stamps:
        wm = old
        seen = known
    else:
        top = max(stamps) if now_ns is None else min(max(stamps), now_ns)
        horizon = top - CURSOR_GRACE_NS
        wm = prefix + str(horizon) if horizon > 0 else None
        if old and (wm is None or wm < old):
            wm = old
        seen = [k for k in known if wm is None or k > wm]
    if raise_on_evict and len(seen) > seen_cap:
        evicted = seen[: len(seen) - seen_cap][-1]
        if wm is None or evicted > wm:
            wm = evicted
    return {"watermark": wm, "seen": seen[-seen_cap:] if seen_cap > 0 else []}


#: The mailbox-stamp and history-is-live fixes ignore keys stamped more than this far ahead of the
#: writer's clock (a fast clock or a junk leaf must not drag every later stamp forward).
STAMP_MAX_AHEAD_NS = 1800 * 10**9


def stamp_above(
    own_ns: int, listed: Iterable[str], prefix: str, *, max_ahead_ns: int = STAMP_MAX_AHEAD_NS
) -> int:
    """A writer's stamp that sorts above every listed key (a hybrid logical clock over a LIST):
    ``max(own_ns, newest ts + 1)`` over the direct-child keys stamped at most *max_ahead_ns* after
    *own_ns*; *own_ns* itself when the stamp would leave 19 digits. Not upstream: the fixes' helper."""
    top = max(
        (
            ts
            for k in direct_children(listed, prefix)
            if (ts := key_ts_ns(k, prefix)) is not None and ts <= own_ns + max_ahead_ns
        ),
        default=None,
    )
    if top is None or top < own_ns or top + 1 >= 10**19:
        return own_ns
    return top + 1


# -- redaction -------------------------------------------------------------------------------------
#: The 8 patterns, applied in this order; each match becomes ``[REDACTED:<name>]``.
PATTERNS: tuple[tuple[str, re.Pattern[bytes]], ...] = (
    ("aws_access_key", re.compile(rb"AKIA[0-9A-Z]{16}")),
    ("aws_session_token", re.compile(rb"ASIA[0-9A-Z]{16}")),
    ("anthropic_key", re.compile(rb"sk-ant-[A-Za-z0-9_-]{20,}")),
    ("openai_key", re.compile(rb"sk-(?:proj-|svcacct-)?[A-Za-z0-9]{20,}")),
    ("hf_token", re.compile(rb"hf_[A-Za-z0-9]{30,}")),
    ("github_pat", re.compile(rb"gh[pousr]_[A-Za-z0-9]{30,}")),
    ("slack_token", re.compile(rb"xox[abprs]-[A-Za-z0-9-]{10,}")),
    ("bearer_token", re.compile(rb"Bearer\s+[A-Za-z0-9_.\-]{20,}")),
)


def redact(blob: bytes) -> tuple[bytes, dict[str, int]]:
    """*blob* with every pattern match replaced in order, and the non-zero counts per pattern."""
    counts: dict[str, int] = {}
    for name, pattern in PATTERNS:
        blob, n = pattern.subn(b"[REDACTED:" + name.encode() + b"]", blob)
        if n:
            counts[name] = n
    return blob, counts


def merge_counts(a: dict[str, int], b: dict[str, int]) -> dict[str, int]:
    """The per-pattern sum of two count maps."""
    out = dict(a)
    for k, v in b.items():
        out[k] = out.get(k, 0) + v
    return out


def secret_matches(blob: bytes) -> list[str]:
    """The names of the patterns that still match anywhere in *blob* (for checkers)."""
    return [name for name, pattern in PATTERNS if pattern.search(blob)]


# -- session parts ---------------------------------------------------------------------------------
PART_RE = re.compile(r"part-(\d{5})-[a-f0-9]{8}\.jsonl$")
PART_RE_WIDE = re.compile(r"part-(\d{5,})-[a-f0-9]{8}\.jsonl$")


def part_name(seq: int, suffix: str) -> str:
    """``part-{seq:05d}-{uuid8}.jsonl`` (a 6-digit seq once seq reaches 100000)."""
    return f"part-{seq:05d}-{suffix}.jsonl"


def heartbeat_age_s(heartbeat: Any, now: Any) -> int | None:
    """``max(0, whole seconds since heartbeat)``; None when missing, unparseable or naive."""
    import datetime as _dt

    if not isinstance(heartbeat, str) or not heartbeat:
        return None
    try:
        hb = _dt.datetime.fromisoformat(heartbeat)
        return max(0, int((now - hb).total_seconds()))
    except (ValueError, TypeError):
        return None
