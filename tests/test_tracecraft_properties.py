"""Tracecraft's pure checkers on hand-written histories (empty, holding, violated)."""

from __future__ import annotations

from systems.tracecraft import properties as pr


def test_transcript_equals() -> None:
    """Only the whole source holds: an empty upload (the mirror switched off), a partial one, a duplicated
    line and a late start are violated."""
    src = b"l1\nl2\n"

    assert pr.check_transcript_equals(src, src).holds
    assert not pr.check_transcript_equals(b"", src).holds
    assert not pr.check_transcript_equals(b"l1\n", src).holds
    assert not pr.check_transcript_equals(b"l1\nl1\nl2\n", src).holds
    assert "byte 1" in pr.check_transcript_equals(b"l2\n", src).detail


def test_no_secrets() -> None:
    """A redacted transcript holds; a whole AWS key is named."""
    assert pr.check_no_secrets(b"[REDACTED:aws_access_key]").holds
    assert "aws_access_key" in pr.check_no_secrets(b"x AKIAIOSFODNN7EXAMPLE").detail


def test_exactly_once() -> None:
    """Every sent key shown once holds; a reader that shows nothing and one without a cursor (everything
    shown on every read) are violated, per reader too."""
    assert pr.check_exactly_once([], []).holds
    assert pr.check_exactly_once(["a"], ["a", "junk"]).holds
    assert "never shown" in pr.check_exactly_once(["a"], []).detail
    assert "shown 2 times" in pr.check_exactly_once(["a", "b"], ["a", "b", "a", "b"]).detail
    assert pr.check_exactly_once_per_reader(["a"], {"r1": ["a"], "r2": ["a"]}).holds
    assert not pr.check_exactly_once_per_reader(["a"], {"r1": ["a"], "r2": []}).holds


def test_meta_matches_listing() -> None:
    """Parts log equals the listing; a dropped last_compacted_at after a compact is violated."""
    meta = {"parts": [{"seq": 0, "uuid": "u0"}], "last_compacted_at": "t"}

    assert pr.check_meta_matches_listing(meta, [(0, "u0")], compacted=True).holds
    assert not pr.check_meta_matches_listing(meta, [(0, "u0"), (1, "u1")], compacted=False).holds
    assert not pr.check_meta_matches_listing({"parts": [{"seq": 0, "uuid": "u0"}]}, [(0, "u0")], True).holds


def test_single_winner() -> None:
    """Exactly one winner who is the stored owner."""
    assert pr.check_single_winner({"a": True, "b": False}, "a").holds
    assert not pr.check_single_winner({"a": True, "b": True}, "b").holds
    assert not pr.check_single_winner({"a": True}, "b").holds
    assert not pr.check_single_winner({}, None).holds


def test_live_history_liveness_delivery() -> None:
    """The small checkers: live vs newest, append-only history, stale agents, deliveries."""
    assert pr.check_history_append_only(["x"], ["x", "y"]).holds
    assert not pr.check_history_append_only(["x", "y"], ["y"]).holds
    assert not pr.check_history_append_only([], [], ": v0").holds  # a set that wrote nothing
    assert pr.check_not_stale([{"id": "a", "status": "stale"}], []).holds
    assert pr.check_not_stale([{"id": "a", "status": "active"}], ["a"]).holds
    assert not pr.check_not_stale([{"id": "a", "status": "stale"}], ["a"]).holds
    assert not pr.check_not_stale([], ["a"]).holds  # an agents listing that lists nothing
    assert pr.check_delivered([]).holds
    assert not pr.check_delivered([("x", False)]).holds


def test_register() -> None:
    """get and history --limit 1 must agree on a value no later acknowledged set supersedes; a store that
    writes nothing, or the older of two sequential sets (a skewed clock's order), is violated."""
    seq = [("v0", 0.0, 2.0, True), ("v1", 3.0, 5.0, True)]
    overlap = [("v0", 0.0, 2.0, True), ("v1", 1.0, 3.0, True)]

    assert pr.check_register(seq, "v1", "v1").holds
    assert pr.check_register(overlap, "v0", "v0").holds
    assert pr.check_register([("v0", 0.0, 1.0, False)], None, None).holds  # a crashed set may vanish
    assert not pr.check_register(seq, "v0", "v0").holds
    assert not pr.check_register(seq, None, None).holds
    assert not pr.check_register(seq, "v1", "v0").holds


def test_save_facts_policy_is_seeded() -> None:
    """The saver keeps everything at lossiness 0 and drops about half at 0.5, reproducibly."""
    import random

    from systems.tracecraft.policies import Cadence, SaveFacts

    keep_all = SaveFacts(0.0, random.Random(1))
    half = [SaveFacts(0.5, random.Random(1)).keep(f"t{i}") for i in range(1)]
    lossy = SaveFacts(0.5, random.Random(1))
    kept = sum(lossy.keep(f"t{i}") for i in range(200))

    assert all(keep_all.keep(f"t{i}") for i in range(50))
    assert 60 < kept < 140
    assert half == [SaveFacts(0.5, random.Random(1)).keep("t0")]
    assert Cadence().flush_s == 5.0
