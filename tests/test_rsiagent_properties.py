"""The RSIAgent checkers on hand-written histories (Maelstrom style: empty, holding, violated), each
including the degenerate design that switches the mechanism off (it must be rejected too)."""

from systems.rsiagent import properties as p

A = {"a.md": b"FACT-0001=red"}
B = {"b.md": b"FACT-0002=tan"}
F1 = frozenset({"FACT-0001"})


def test_lessons_checker() -> None:
    """Work-phase and distilled lessons must be committed unless withdrawn; committing nothing fails."""
    assert p.check_lessons_committed({}, {}, [], {}).holds
    assert p.check_lessons_committed(A, B, [], {**A, **B}).holds
    assert p.check_lessons_committed(A, {}, ["a.md"], {}).holds
    assert "work-phase" in p.check_lessons_committed(A, {}, [], B).detail
    assert "distilled" in p.check_lessons_committed({}, B, [], {}).detail  # commit-off


def test_journal_checkers() -> None:
    """Archives must hold each journaled tree with one line per call; lines and installs pair up."""
    r = "lineage/memory_journal"
    assert p.check_journal_recoverable([], {}, {}).holds
    assert p.check_journal_recoverable([(r, 1, A)], {(r, 1): A}, {r: 1}).holds
    assert not p.check_journal_recoverable([(r, 1, A), (r, 1, B)], {(r, 1): B}, {r: 2}).holds
    assert not p.check_journal_recoverable([(r, 1, A)], {}, {}).holds  # journal-off
    assert not p.check_journal_recoverable([(r, 1, A)], {(r, 1): A}, {r: 2}).holds
    assert p.check_journal_matches_installs([A, B], [A, B]).holds
    assert not p.check_journal_matches_installs([A], []).holds  # journaled, never installed
    assert not p.check_journal_matches_installs([], [A]).holds  # journal-off
    assert not p.check_journal_matches_installs([B], [A]).holds


def test_wave_checkers() -> None:
    """Sibling facts survive unless withdrawn; a wave is all or nothing and a clean one publishes."""
    assert p.check_sibling_facts_survive([(F1, frozenset())], A).holds
    assert p.check_sibling_facts_survive([(F1, F1)], {}).holds
    assert not p.check_sibling_facts_survive([(F1, frozenset())], B).holds  # lost, or commit-off
    assert p.check_wave_atomic(A, {}, True, F1, True).holds
    assert p.check_wave_atomic({}, {}, False, F1, False).holds
    assert not p.check_wave_atomic(A, {}, False, F1, False).holds
    assert not p.check_wave_atomic({}, {}, False, F1, True).holds
    assert not p.check_wave_atomic({}, {}, True, F1, True).holds  # commit-off: published, nothing in it


def test_fold_checkers() -> None:
    """Observed and old-log facts reach the request; the fold runs; the guard keeps full batches and
    brings the context under high water within a batch of calls."""
    assert p.check_facts_reach_request(F1, "WORK LOG - FACT-0001=red").holds
    assert not p.check_facts_reach_request(F1, "").holds
    assert p.check_fold_ran(10, 1, 8, 2).holds and not p.check_fold_ran(10, 1, 0, 2).holds  # fold-off
    assert p.check_log_and_batch_kept("FACT-0001=red", frozenset(), "x FACT-0001=red").holds
    assert "erased" in p.check_log_and_batch_kept("FACT-0001=red", frozenset(), "[env] x").detail
    assert "lost" in p.check_log_and_batch_kept("", F1, "").detail  # digest-off
    above, fits = (5000, True), (1000, True)
    assert p.check_fold_guard([above, above, fits], [2], 4000, 2).holds
    assert not p.check_fold_guard([fits], [1], 4000, 2).holds  # a partial batch: the guard is gone
    assert not p.check_fold_guard([above] * 3, [], 4000, 2).holds  # stuck, or fold-off
    assert p.check_fold_guard([(5000, False)] * 5, [], 4000, 2).holds  # the floor alone is too big


def test_handoff_checkers() -> None:
    """Handoff and review must carry the worklog's facts."""
    assert p.check_handoff_keeps_log("FACT-0001=red", "h FACT-0001=red").holds
    assert not p.check_handoff_keeps_log("FACT-0001=red", "h").holds
    assert p.check_review_sees_log("", "").holds
    assert not p.check_review_sees_log("FACT-0001=red", "").holds


def test_bank_and_record_checkers() -> None:
    """Bank writes, notes, install reads, memory claims, diagnosis and pulls."""
    assert p.check_bank_written(A, True, A, B, [], [A]).holds
    assert not p.check_bank_written(A, True, A, B, ["lineage/x.md"], [A]).holds
    assert not p.check_bank_written(A, True, A, B, [], []).holds  # no journal entry
    assert not p.check_bank_written(A, True, B, B, [], []).holds  # write-memory-off
    assert not p.check_bank_written(A, False, A, B, [], [A]).holds  # an unaudited leak installed
    assert p.check_notes_current("H", "H").holds and not p.check_notes_current("", "H").holds
    assert p.check_reads_old_or_new([("x", A), ("y", B)], A, B).holds
    assert not p.check_reads_old_or_new([("between", {})], A, B).holds
    assert p.check_installed(B, B, []).holds and not p.check_installed(A, B, []).holds  # install-off
    assert not p.check_installed(B, B, ["lineage/.memory.backup-1"]).holds
    assert p.check_memory_claim("off", False, None, False).holds
    assert p.check_memory_claim("frozen_host_snapshot_copy_in_only", True, "~/.memory", True).holds
    assert not p.check_memory_claim("frozen_host_snapshot_copy_in_only", False, "~/.memory", False).holds
    assert not p.check_memory_claim("off", True, None, True).holds  # osworld-memory-off
    assert p.check_diagnosis_not_promoted({"a": "1"}, {"a": "1"}, frozenset(), {}).holds
    assert not p.check_diagnosis_not_promoted({"a": "1", "d": "2"}, {"a": "1"}, frozenset(), {}).holds
    assert not p.check_diagnosis_not_promoted({}, {}, F1, {}).holds  # commit-off
    assert p.check_pull_commit(A, A, True).holds and p.check_pull_commit(A, None, False).holds
    assert not p.check_pull_commit(A, {}, False).holds
    assert not p.check_pull_commit(A, None, True).holds  # pull-off


def test_fold_cache_checker() -> None:
    """Over the bound, a lost latest value, or a cold cache on a cacheable stable prefix each fail."""
    f = frozenset({"FACT-0001=teal"})
    assert p.check_fold_keeps_prefix_cached([(0, 1400, 1, f, f), (1152, 1400, 1, f, f)], 1).holds
    assert not p.check_fold_keeps_prefix_cached([(0, 40, 2, f, f)], 1).holds
    assert not p.check_fold_keeps_prefix_cached([(0, 40, 1, f, frozenset())], 1).holds
    assert not p.check_fold_keeps_prefix_cached([(0, 1400, 1, f, f), (0, 1400, 1, f, f)], 1).holds
    assert p.check_fold_keeps_prefix_cached([(0, 1200, 1, f, f), (0, 1200, 1, f, f)], 1).holds
