"""The RSIAgent checkers on hand-written histories (Maelstrom style: empty, holding, violated)."""

from systems.rsiagent import properties as p
from systems.rsiagent.state import JournalLine

A = {"a.md": b"FACT-0001=red"}
B = {"b.md": b"FACT-0002=tan"}


def test_work_lessons_checker() -> None:
    """Lost unless committed or explicitly withdrawn; empty is fine."""
    assert p.check_work_lessons_kept({}, [], {}).holds
    assert p.check_work_lessons_kept(A, [], A).holds
    assert p.check_work_lessons_kept(A, ["a.md"], {}).holds
    assert "FACT-0001" in p.check_work_lessons_kept(A, [], B).detail


def test_journal_checkers() -> None:
    """Archives must hold each journaled tree; each line's tree must have been installed."""
    assert p.check_journal_recoverable([], {}).holds
    assert p.check_journal_recoverable([(1, A)], {1: A}).holds
    assert not p.check_journal_recoverable([(1, A), (1, B)], {1: B}).holds
    line = JournalLine(1, 1, 13, "ts")
    assert p.check_journal_matches_installs([line], {1: A}, [{}, A]).holds
    assert not p.check_journal_matches_installs([line], {1: A}, [{}]).holds


def test_wave_checkers() -> None:
    """Sibling facts survive unless withdrawn; a wave is all or nothing."""
    f1 = frozenset({"FACT-0001"})
    assert p.check_sibling_facts_survive([(f1, frozenset())], A).holds
    assert p.check_sibling_facts_survive([(f1, f1)], {}).holds
    assert not p.check_sibling_facts_survive([(f1, frozenset())], B).holds
    assert p.check_wave_atomic(A, {}, True).holds
    assert p.check_wave_atomic({}, {}, False).holds
    assert not p.check_wave_atomic(A, {}, False).holds


def test_fold_checkers() -> None:
    """Folded facts must reach the log; the old log is kept; the guard leaves nothing foldable above high."""
    assert p.check_fold_keeps_facts(frozenset({"FACT-0001"}), "- FACT-0001=red").holds
    assert not p.check_fold_keeps_facts(frozenset({"FACT-0001"}), "").holds
    assert p.check_log_kept("FACT-0001=red", "x FACT-0001=red").holds
    assert not p.check_log_kept("FACT-0001=red", "[env] x").holds
    assert p.check_fold_guard(10, 5, 0).holds and p.check_fold_guard(4, 5, 3).holds
    assert not p.check_fold_guard(10, 5, 1).holds


def test_handoff_checkers() -> None:
    """Handoff and review must carry the worklog's facts."""
    assert p.check_handoff_keeps_log("FACT-0001=red", "h FACT-0001=red").holds
    assert not p.check_handoff_keeps_log("FACT-0001=red", "h").holds
    assert p.check_review_sees_log("", "").holds
    assert not p.check_review_sees_log("FACT-0001=red", "").holds


def test_bank_and_record_checkers() -> None:
    """Bank writes, notes, install reads, memory claims, diagnosis and empty pulls."""
    assert p.check_bank_admitted(A, [], True, [], True).holds
    assert not p.check_bank_admitted(A, ["lineage/x.md"], True, [], True).holds
    assert not p.check_bank_admitted(A, [], True, ["a.md"], True).holds
    assert not p.check_bank_admitted(A, [], False, [], True).holds
    assert p.check_notes_current("H", "H").holds and not p.check_notes_current("H", "").holds
    assert p.check_reads_old_or_new([("x", A), ("y", B)], A, B).holds
    assert not p.check_reads_old_or_new([("between", {})], A, B).holds
    assert p.check_memory_claim("off", False, None).holds
    assert p.check_memory_claim("frozen_host_snapshot_copy_in_only", True, "~/.memory").holds
    assert not p.check_memory_claim("frozen_host_snapshot_copy_in_only", False, "~/.memory").holds
    assert p.check_diagnosis_not_promoted({"a": "1"}, {"a": "1"}).holds
    assert not p.check_diagnosis_not_promoted({"a": "1", "d": "2"}, {"a": "1"}).holds
    assert p.check_no_silent_empty(A, A, "installed").holds
    assert p.check_no_silent_empty({}, {}, "installed").holds
    assert not p.check_no_silent_empty(A, {}, "installed").holds
