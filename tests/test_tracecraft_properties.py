"""Tracecraft's pure checkers on hand-written histories (empty, holding, violated)."""

from __future__ import annotations

from systems.tracecraft import properties as pr


def test_transcript_prefix() -> None:
    """Empty and exact prefixes hold; a duplicated line or a late start is violated."""
    src = b"l1\nl2\n"

    assert pr.check_transcript_is_prefix(b"", src).holds
    assert pr.check_transcript_is_prefix(b"l1\n", src).holds
    assert not pr.check_transcript_is_prefix(b"l1\nl1\n", src).holds
    assert "byte 1" in pr.check_transcript_is_prefix(b"l2\n", src).detail


def test_no_secrets() -> None:
    """A redacted transcript holds; a whole AWS key is named."""
    assert pr.check_no_secrets(b"[REDACTED:aws_access_key]").holds
    assert "aws_access_key" in pr.check_no_secrets(b"x AKIAIOSFODNN7EXAMPLE").detail


def test_shown_at_most_once() -> None:
    """Per reader: distinct keys hold; a key shown twice to one reader is violated."""
    assert pr.check_shown_at_most_once({}).holds
    assert pr.check_shown_at_most_once({"r1": ["a"], "r2": ["a"]}).holds
    assert not pr.check_shown_at_most_once({"r1": ["a", "b", "a"]}).holds


def test_all_shown() -> None:
    """Every sent key must be shown."""
    assert pr.check_all_shown([], []).holds
    assert pr.check_all_shown(["a"], ["a", "b"]).holds
    assert "1 message(s)" in pr.check_all_shown(["a", "c"], ["a"]).detail


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
    assert pr.check_live_is_newest("v", "v").holds
    assert not pr.check_live_is_newest("v1", "v2").holds
    assert pr.check_history_append_only(["x"], ["x", "y"]).holds
    assert not pr.check_history_append_only(["x", "y"], ["y"]).holds
    assert pr.check_not_stale([{"id": "a", "status": "stale"}], ["b"]).holds
    assert pr.check_not_stale([{"id": "a", "status": "active"}], ["a"]).holds
    assert not pr.check_not_stale([{"id": "a", "status": "stale"}], ["a"]).holds
    assert pr.check_delivered([]).holds
    assert not pr.check_delivered([("x", False)]).holds


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
