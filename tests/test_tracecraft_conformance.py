"""Conformance of the model's pure functions with the released package (tracecraft-ai 0.2.5).

Hypothesis feeds the same generated keys, listings, cursor documents and byte blobs to
``systems.tracecraft`` and to ``tracecraft.protocol`` / ``tracecraft.redact`` and asserts identical results
(errors included). The package is in the project's test extra; no upstream code is copied.
"""

from __future__ import annotations

from typing import Any
from unittest import mock

import pytest
import strategies_tracecraft as tst
from hypothesis import given
from hypothesis import strategies as st

import systems.tracecraft as model

WHY = "tracecraft-ai 0.2.5 (the test extra) is not installed"
up = pytest.importorskip("tracecraft.protocol", reason=WHY)
up_redact = pytest.importorskip("tracecraft.redact", reason=WHY)


def _outcome(fn: Any, *args: Any) -> tuple[str, Any]:
    try:
        return ("ok", fn(*args))
    except Exception as exc:
        return ("error", type(exc).__name__ != "")


def test_constants_match() -> None:
    """CURSOR_LEAF, CURSOR_GRACE_NS, SEEN_CAP and STALE_AFTER_S equal upstream's."""
    expected = (up.CURSOR_LEAF, up.CURSOR_GRACE_NS, up.SEEN_CAP, up.STALE_AFTER_S)

    actual = (model.CURSOR_LEAF, model.CURSOR_GRACE_NS, model.SEEN_CAP, model.STALE_AFTER_S)

    assert expected == actual


@given(st.text(tst.LEAF_CHARS, max_size=10))
def test_is_data_leaf(leaf: str) -> None:
    """is_data_leaf agrees on arbitrary leaves."""
    assert up.is_data_leaf(leaf) == model.is_data_leaf(leaf)


@given(tst.prefixes, st.lists(tst.keys(), max_size=10))
def test_direct_children(prefix: str, keys: list[str]) -> None:
    """direct_children agrees on mixed listings (foreign prefixes, nested and reserved leaves)."""
    assert list(up.direct_children(keys, prefix)) == model.direct_children(keys, prefix)


@given(tst.prefixes, tst.agents, tst.ts_values, tst.hex8)
def test_append_key(prefix: str, agent: str, ts: int, suffix: str) -> None:
    """append_key agrees with time.time_ns and uuid.uuid4 patched to the same values."""
    fake_uuid = mock.Mock(hex=suffix + "0" * 24)
    with mock.patch("time.time_ns", return_value=ts), mock.patch("uuid.uuid4", return_value=fake_uuid):
        expected = up.append_key(prefix, agent)

    assert expected == model.append_key(prefix, agent, ts, suffix)


@given(tst.prefixes, tst.keys())
def test_key_ts_ns_and_sender(prefix: str, key: str) -> None:
    """key_ts_ns and key_sender agree on well-formed and junk keys."""
    assert _outcome(up.key_ts_ns, key, prefix) == _outcome(model.key_ts_ns, key, prefix)
    assert _outcome(up.key_sender, key, prefix) == _outcome(model.key_sender, key, prefix)


@given(st.text("aA.b-_ /Z1 \t", max_size=6))
def test_normalize_step_id(step_id: str) -> None:
    """normalize_step_id agrees, including which inputs are rejected."""
    assert _outcome(up.normalize_step_id, step_id) == _outcome(model.normalize_step_id, step_id)


@given(tst.cursor_docs(), st.sampled_from(["direct", "broadcast"]))
def test_load_stream_cursor(doc: object, name: str) -> None:
    """load_stream_cursor agrees on current, legacy and junk cursor documents."""
    assert _outcome(up.load_stream_cursor, doc, name) == _outcome(model.load_stream_cursor, doc, name)


@given(st.data())
def test_unseen_and_advance(data: st.DataObject) -> None:
    """unseen_keys and advance_stream agree exactly (watermark and seen) on generated listings."""
    prefix = data.draw(tst.prefixes)
    stream = data.draw(tst.streams(prefix))
    listed = data.draw(tst.listings(prefix))

    assert up.unseen_keys(listed, stream) == model.unseen_keys(listed, stream)
    assert up.advance_stream(stream, listed, prefix) == model.advance_stream(stream, listed, prefix)


@given(st.data())
def test_advance_over_the_seen_cap(data: st.DataObject) -> None:
    """advance_stream agrees when the listing exceeds SEEN_CAP (1,000 keys)."""
    prefix = "messages/bob/"
    base = data.draw(tst.ts_values)
    n = data.draw(st.integers(990, 1010))
    listed = sorted(f"{prefix}{base + i}_a_{i:08x}.json" for i in range(n))
    stream = data.draw(tst.streams(prefix))

    assert up.advance_stream(stream, listed, prefix) == model.advance_stream(stream, listed, prefix)


@given(tst.blobs())
def test_redact(blob: bytes) -> None:
    """redact agrees on bytes (redacted bytes and counts)."""
    assert up_redact.redact(blob) == model.redact(blob)


@given(tst.counts, tst.counts)
def test_merge_counts(a: dict[str, int], b: dict[str, int]) -> None:
    """merge_counts agrees."""
    assert up_redact.merge_counts(a, b) == model.merge_counts(a, b)
