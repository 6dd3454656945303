"""Tracecraft's pure functions against the exact examples of the fidelity note (§2.1, §2.3, §2.6)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from systems.tracecraft import (
    CURSOR_GRACE_NS,
    SEEN_CAP,
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
from systems.tracecraft.protocol import PART_RE, PART_RE_WIDE, heartbeat_age_s, part_name

P = "messages/bob/"
T = 1_767_571_200_000_000_000  # 19 digits


def test_append_key_layout() -> None:
    """append_key is <prefix><ts>_<agent>_<uuid8>.json, so string order is ts, agent, uuid."""
    expected = "messages/bob/1767571200000000000_alice_0a1b2c3d.json"

    actual = append_key(P, "alice", T, "0a1b2c3d")

    assert expected == actual


def test_key_ts_ns_reads_leading_digits() -> None:
    """key_ts_ns is the leaf before the first '_' as an int, else None."""
    assert key_ts_ns(f"{P}{T}_alice_0a1b2c3d.json", P) == T
    assert key_ts_ns(f"{P}abc_alice_x.json", P) is None


def test_key_sender_allows_underscores() -> None:
    """The sender is the middle parts joined with '_' (agent ids may contain '_')."""
    assert key_sender(f"{P}{T}_team_lead_0a1b2c3d.json", P) == "team_lead"
    assert key_sender(f"{P}{T}_x.json", P) is None
    assert key_sender(f"{P}{T}_a_b.txt", P) is None


def test_is_data_leaf_and_direct_children() -> None:
    """Cursor, nested and empty leaves are not data; direct_children keeps only data leaves."""
    keys = [f"{P}_cursor.json", f"{P}{T}_a_x.json", f"{P}nested/{T}_a_x.json", P]

    assert [f"{P}{T}_a_x.json"] == direct_children(keys, P)
    assert not is_data_leaf("") and not is_data_leaf("_x") and not is_data_leaf("a/b")


def test_normalize_step_id_collides() -> None:
    """A.1, a-1 and A-1 all normalize to a-1; blank ids and '/' are rejected; no strip."""
    assert {"a-1"} == {normalize_step_id(s) for s in ("A.1", "a-1", "A-1")}
    assert normalize_step_id(" A.1") == " a-1"
    for bad in ("", "  ", "a/b"):
        with pytest.raises(TracecraftError):
            normalize_step_id(bad)


def test_load_stream_cursor_formats() -> None:
    """Dict gives watermark+seen (non-strings dropped), a legacy string gives a watermark, else empty."""
    doc = {"direct": {"watermark": "w", "seen": ["a", 3, "b"]}, "broadcast": "legacy"}

    assert load_stream_cursor(doc, "direct") == {"watermark": "w", "seen": ["a", "b"]}
    assert load_stream_cursor(doc, "broadcast") == {"watermark": "legacy", "seen": []}
    assert load_stream_cursor(None, "direct") == {"watermark": None, "seen": []}


def test_unseen_keys_uses_string_comparison() -> None:
    """Unseen = above the watermark (string order) and not in seen."""
    k1, k2 = f"{P}{T}_a_1.json", f"{P}{T + 1}_a_2.json"

    assert [k2] == unseen_keys([k1, k2], {"watermark": None, "seen": [k1]})
    assert [k1] == unseen_keys([k1], {"watermark": f"{P}{T}", "seen": []})  # a longer key sorts above
    assert unseen_keys([k1], {"watermark": f"{P}{T + 1}", "seen": []}) == []


def test_advance_stream_horizon_and_no_regress() -> None:
    """The watermark is prefix + (max ts - 300 s) and never regresses; seen keeps keys above it."""
    k_old, k_new = f"{P}{T}_a_1.json", f"{P}{T + 400 * 10**9}_a_2.json"

    s1 = advance_stream({"watermark": None, "seen": []}, [k_old, k_new], P)
    s2 = advance_stream(s1, [k_old], P)

    assert f"{P}{T + 100 * 10**9}" == s1["watermark"]
    assert [k_new] == s1["seen"]
    assert s1["watermark"] == s2["watermark"]


def test_advance_stream_unchanged_on_empty_and_unparseable() -> None:
    """An empty listing returns the stream; unparseable keys keep the watermark and extend seen."""
    stream = {"watermark": "w", "seen": ["x"]}

    assert stream is advance_stream(stream, [], P)
    assert {"watermark": "w", "seen": [f"{P}junk.json", "x"]} == advance_stream(stream, [f"{P}junk.json"], P)


def test_short_timestamps_blind_the_mailbox() -> None:
    """A horizon with fewer digits than the keys sorts above every 19-digit key (note §2.3 model note)."""
    short = f"{P}{10**12}_a_1.json"  # a 13-digit ts

    stream = advance_stream({"watermark": None, "seen": []}, [short], P)

    assert stream["watermark"] is None or stream["watermark"] > f"{P}{T}_a_1.json"


def test_seen_cap_default_and_parameter() -> None:
    """SEEN_CAP is 1,000; the cap keeps the newest keys."""
    keys = [f"{P}{T + i}_a_{i:04d}.json" for i in range(5)]

    capped = advance_stream({"watermark": None, "seen": []}, keys, P, seen_cap=2)

    assert SEEN_CAP == 1000
    assert keys[-2:] == capped["seen"]
    assert CURSOR_GRACE_NS == 300 * 10**9


def test_seen_cap_fix_raises_watermark() -> None:
    """The seen-cap-watermark fix raises the watermark to the largest evicted key."""
    keys = [f"{P}{T + i}_a_{i:04d}.json" for i in range(5)]

    fixed = advance_stream({"watermark": None, "seen": []}, keys, P, seen_cap=2, raise_on_evict=True)

    assert keys[2] == fixed["watermark"]
    assert unseen_keys(keys[:3], fixed) == []


def test_redact_whole_and_split_secret() -> None:
    """A whole AWS key is replaced and counted; the note's split halves are not redacted."""
    whole, counts = redact(b'{"k":"AKIAIOSFODNN7EXAMPLE"}')
    first, c1 = redact(b'{"k":"AKIAIOSFOD')
    second, c2 = redact(b'NN7EXAMPLE"}')

    assert (whole, counts) == (b'{"k":"[REDACTED:aws_access_key]"}', {"aws_access_key": 1})
    assert (c1, c2) == ({}, {})
    assert b"AKIAIOSFODNN7EXAMPLE" in first + second


def test_merge_counts_sums() -> None:
    """merge_counts sums per pattern."""
    assert merge_counts({"a": 1}, {"a": 2, "b": 1}) == {"a": 3, "b": 1}


def test_part_re_six_digit_seq() -> None:
    """part-100000 has 6 digits: PART_RE does not match it, the wide fix does."""
    name = part_name(100_000, "0a1b2c3d")

    assert name == "part-100000-0a1b2c3d.jsonl"
    assert PART_RE.match(name) is None
    assert PART_RE_WIDE.match(name) is not None


def test_heartbeat_age() -> None:
    """Age in whole seconds, never negative; None for missing or naive timestamps."""
    import datetime as dt

    now = dt.datetime(2026, 1, 5, 0, 10, tzinfo=dt.UTC)

    assert heartbeat_age_s("2026-01-05T00:00:00+00:00", now) == 600
    assert heartbeat_age_s("2026-01-05T01:00:00+00:00", now) == 0
    assert heartbeat_age_s("2026-01-05T00:00:00", now) is None
    assert heartbeat_age_s(None, now) is None


def test_tail_lines_matches_splitlines() -> None:
    """tail_lines equals splitlines()[-n:] on bodies larger than its first window, CRLF included."""
    from systems.tracecraft.model import tail_lines

    body = b"".join(b"line %d\r\n" % i if i % 3 else b"row %d\n" % i for i in range(20_000))

    for n in (1, 5, 1000, 30_000):
        assert tail_lines(body, n) == body.splitlines()[-n:]


JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(10**20), 10**20)
    | st.floats(allow_nan=False)
    | st.text(max_size=8),
    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=4), kids, max_size=4),
    max_leaves=30,
)


@given(JSON)
def test_indent2_is_json_dumps_indent_2(doc: object) -> None:
    """The bucket's encoder gives json.dumps(doc, indent=2) character for character (upstream's body),
    also the second time, when nested entries come from its memo."""
    from systems.tracecraft.model.bucket import indent2

    wrapped = {"parts": [doc, {"seq": 1, "doc": doc}]}

    assert indent2(doc) == json.dumps(doc, indent=2)
    assert indent2(wrapped) == json.dumps(wrapped, indent=2)
    assert indent2(wrapped) == json.dumps(wrapped, indent=2)


def test_shared_reads_never_hide_a_change() -> None:
    """Every shared read is a GET: a body another writer changed is decoded anew; an unchanged one is not."""
    from sim.objects import MemoryStore
    from systems.tracecraft.model import Bucket

    store = MemoryStore()
    mine, other = Bucket(store, "p"), Bucket(store, "p")
    mine.put_json("memory/k.json", {"value": "v1"})
    first = mine.get_shared("memory/k.json")
    gets = store.ops["get"]

    assert mine.get_shared("memory/k.json") is first and store.ops["get"] == gets + 1
    other.put_json("memory/k.json", {"value": "v2"})
    assert mine.get_shared("memory/k.json") == {"value": "v2"}
    assert other.get_shared("memory/k.json") == {"value": "v2"}
    other.delete("memory/k.json")
    assert mine.get_shared("memory/k.json") is None
