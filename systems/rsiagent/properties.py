"""Named invariants of the RSIAgent model as pure checkers (Maelstrom style): each takes recorded state
or history and returns a :class:`sim.claims.Verdict` naming the offending records; none raises.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from sim.claims import Verdict
from sim.text import extract_facts
from systems.rsiagent.model import bank_facts, tree_sha256
from systems.rsiagent.state import Bank, JournalLine


def _facts(text: str) -> frozenset[str]:
    return extract_facts(text)


def check_work_lessons_kept(
    work_lessons: Mapping[str, bytes], withdrawn: Iterable[str], committed: Bank
) -> Verdict:
    """Every fact the Actor wrote into the bank during work reaches the committed bank, unless the Actor
    explicitly withdrew that file later."""
    gone = set(withdrawn)
    want: set[str] = set()
    for name, data in work_lessons.items():
        if name not in gone:
            want |= _facts(data.decode("utf-8", "ignore"))
    lost = sorted(want - bank_facts(committed))
    return Verdict.violated(f"work-phase lesson facts lost: {lost}") if lost else Verdict.ok()


def check_journal_recoverable(journaled: Sequence[tuple[int, Bank]], archives: Mapping[int, Bank]) -> Verdict:
    """Every tree handed to ``journal`` can be recovered from its episode archive."""
    for i, (episode, tree) in enumerate(journaled):
        got = archives.get(episode)
        if got != tree:
            return Verdict.violated(
                f"journal call {i} (ep{episode:03d}) is not recoverable: the archive "
                f"holds {sorted(got or {})}, not {sorted(tree)}"
            )
    return Verdict.ok()


def check_journal_matches_installs(
    lines: Sequence[JournalLine], archives: Mapping[int, Bank], installed: Sequence[Bank]
) -> Verdict:
    """Every journal line describes a tree that was actually installed as the canonical bank."""
    seen = {tree_sha256(t) for t in installed}
    for line in lines:
        tree = archives.get(line.episode, {})
        if tree_sha256(tree) not in seen:
            return Verdict.violated(
                f"journal line ep{line.episode:03d} claims a tree that was never installed"
            )
    return Verdict.ok()


def check_sibling_facts_survive(
    committed: Sequence[tuple[frozenset[str], frozenset[str]]], final: Bank
) -> Verdict:
    """Facts committed by each branch of a wave survive to the end of the wave, unless a later branch
    explicitly withdrew them. *committed* holds (facts added by branch k, facts withdrawn after it)."""
    have = bank_facts(final)
    for k, (added, withdrawn) in enumerate(committed):
        lost = sorted(added - withdrawn - have)
        if lost:
            return Verdict.violated(f"branch {k + 1}'s committed facts lost by a later branch: {lost}")
    return Verdict.ok()


def check_fold_keeps_facts(folded_facts: frozenset[str], worklog: str) -> Verdict:
    """Every fact in the folded messages is in the WORK LOG after the fold (lossless summarizer)."""
    lost = sorted(folded_facts - _facts(worklog))
    return Verdict.violated(f"facts folded away: {lost}") if lost else Verdict.ok()


def check_log_kept(old_log: str, new_log: str) -> Verdict:
    """A fold never drops facts that the previous WORK LOG held."""
    lost = sorted(_facts(old_log) - _facts(new_log))
    return Verdict.violated(f"old WORK LOG facts erased: {lost}") if lost else Verdict.ok()


def check_fold_guard(size: int, high: int, foldable: int) -> Verdict:
    """After a fold step the context is at or below high water, or nothing is left to fold."""
    if size > high and foldable > 0:
        return Verdict.violated(f"size {size} > high water {high} with {foldable} foldable pairs unfolded")
    return Verdict.ok()


def check_handoff_keeps_log(worklog: str, handoff: str) -> Verdict:
    """Every fact of the handed-over WORK LOG reaches the fresh attempt."""
    lost = sorted(_facts(worklog) - _facts(handoff))
    return Verdict.violated(f"handoff truncated facts: {lost}") if lost else Verdict.ok()


def check_review_sees_log(worklog: str, review_input: str) -> Verdict:
    """The strategy review is fed the worklog that is handed over (its first 8,000 characters)."""
    lost = sorted(_facts(worklog[:8000]) - _facts(review_input))
    return Verdict.violated(f"strategy review blind to {lost}") if lost else Verdict.ok()


def check_bank_admitted(
    bank: Bank, outside: Sequence[str], journaled: bool, hits: Sequence[str], wrote: bool
) -> Verdict:
    """A bank write leaves nothing outside the bank, no audit hit in it, and a journal entry when it wrote."""
    if outside:
        return Verdict.violated(f"written outside the bank: {list(outside)}")
    if hits:
        return Verdict.violated(f"unaudited leak installed in {list(hits)}")
    if wrote and bank and not journaled:
        return Verdict.violated("bank replaced without a journal entry")
    return Verdict.ok()


def check_notes_current(shown: str, expected: str) -> Verdict:
    """The next Curriculum charter shows the notes as the last turn left them."""
    if shown != expected:
        return Verdict.violated(f"charter shows {shown!r}, the notes file last held {expected!r}")
    return Verdict.ok()


def check_reads_old_or_new(observed: Sequence[tuple[str, Bank]], old: Bank, new: Bank) -> Verdict:
    """Every read of the bank during an install sees the old or the new tree, never a third one."""
    for point, tree in observed:
        if tree != old and tree != new:
            return Verdict.violated(f"read at {point} saw {sorted(tree)} (neither old nor new)")
    return Verdict.ok()


def check_wave_atomic(canonical: Bank, snapshot: Bank, outcome_written: bool) -> Verdict:
    """A wave publishes all of its branches (outcome written) or leaves the canonical bank unchanged."""
    if not outcome_written and canonical != snapshot:
        return Verdict.violated("canonical bank changed by a wave that never wrote its outcome")
    return Verdict.ok()


def check_memory_claim(memory_mode: str, delivered: bool, env_memory_dir: str | None) -> Verdict:
    """An evaluation record claims memory (and nudges name ``~/.memory``) only when it was delivered."""
    if not delivered and (memory_mode != "off" or env_memory_dir):
        return Verdict.violated(
            f"record says {memory_mode!r} (env_memory_dir={env_memory_dir!r}) but no memory was delivered"
        )
    return Verdict.ok()


def check_diagnosis_not_promoted(installed: Mapping[str, str], reconciled: Mapping[str, str]) -> Verdict:
    """The installed bank is the bank at reconciliation end (name to sha256 maps; diagnosis-phase edits
    are not promoted)."""
    extra = sorted(n for n in set(installed) | set(reconciled) if reconciled.get(n) != installed.get(n))
    return Verdict.violated(f"diagnosis-phase edits promoted: {extra}") if extra else Verdict.ok()


def check_no_silent_empty(guest: Bank, committed: Bank, outcome: str) -> Verdict:
    """A commit never replaces a non-empty guest bank with an empty canonical bank."""
    if outcome == "installed" and guest and not committed:
        return Verdict.violated(f"guest held {len(guest)} files; an empty bank was installed")
    return Verdict.ok()
