"""Named invariants of the RSIAgent model as pure checkers (Maelstrom style): each takes recorded state
or history and returns a :class:`sim.claims.Verdict` naming the offending records; none raises.

Each property asserts the mechanism's *service* (the lesson reaches the bank, the tree is installed and
journaled, the fact reaches the request, the memory is delivered) as well as the absence of the claimed
failure, so a design with the mechanism switched off (the claim's off switch) fails it too.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from sim.claims import Verdict
from sim.text import extract_facts
from systems.rsiagent.model import bank_facts, tree_sha256
from systems.rsiagent.state import Bank


def _facts(text: str) -> frozenset[str]:
    return extract_facts(text)


def check_lessons_committed(
    work_lessons: Mapping[str, bytes], added: Mapping[str, bytes], withdrawn: Iterable[str], committed: Bank
) -> Verdict:
    """Every fact the Actor wrote into the bank during work, and every fact distillation added, reaches
    the committed bank, unless the Actor withdrew that file later."""
    gone = set(withdrawn)
    want: dict[str, str] = {}
    for kind, files in (("work-phase lesson", work_lessons), ("distilled lesson", added)):
        for name, data in files.items():
            if name not in gone:
                for f in _facts(data.decode("utf-8", "ignore")):
                    want.setdefault(f, kind)
    have = bank_facts(committed)
    lost = sorted(f for f in want if f not in have)
    if lost:
        return Verdict.violated(f"{want[lost[0]]} facts lost: {lost}")
    return Verdict.ok()


def check_journal_recoverable(
    journaled: Sequence[tuple[str, int, Bank]],
    archives: Mapping[tuple[str, int], Bank],
    lines: Mapping[str, int],
) -> Verdict:
    """Every tree handed to ``journal`` can be recovered from its journal's episode archive, and every
    journal has one ``journal.jsonl`` line per call. *journaled* holds (journal root, episode, tree)."""
    calls: dict[str, int] = {}
    for i, (root, episode, tree) in enumerate(journaled):
        calls[root] = calls.get(root, 0) + 1
        got = archives.get((root, episode))
        if got != tree:
            return Verdict.violated(
                f"journal call {i} ({root}/ep{episode:03d}) is not recoverable: the archive holds facts "
                f"{sorted(bank_facts(got or {}))}, not {sorted(bank_facts(tree))}"
            )
    for root, n in calls.items():
        if lines.get(root, 0) != n:
            return Verdict.violated(f"{root}: {lines.get(root, 0)} journal lines for {n} journal calls")
    return Verdict.ok()


def check_journal_matches_installs(journaled: Sequence[Bank], installed: Sequence[Bank]) -> Verdict:
    """The journal lines (their archived trees, in order) are exactly the trees installed as the canonical
    bank, in order: no line for a tree that was never installed, no install without its line."""
    got = [tree_sha256(t) for t in journaled]
    want = [tree_sha256(t) for t in installed]
    for i, (g, w) in enumerate(zip(got, want)):
        if g != w:
            return Verdict.violated(f"journal line {i + 1} describes a tree that was not install {i + 1}")
    if len(got) > len(want):
        return Verdict.violated(f"journal line {len(want) + 1} claims a tree that was never installed")
    if len(got) < len(want):
        return Verdict.violated(f"install {len(got) + 1} has no journal line")
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
            return Verdict.violated(f"branch {k + 1}'s committed facts lost: {lost}")
    return Verdict.ok()


def check_facts_reach_request(observed: frozenset[str], request: str) -> Verdict:
    """Every observed fact reaches the next model request (the WORK LOG or the verbatim history)."""
    lost = sorted(observed - _facts(request))
    return Verdict.violated(f"facts missing from the request: {lost}") if lost else Verdict.ok()


def check_fold_ran(pairs: int, keep: int, covered: int, batch: int) -> Verdict:
    """The fold compacted what the trigger says it must: fewer than a batch of pairs is left unfolded
    outside the keep window (legacy count trigger)."""
    left = pairs - keep - covered
    if left >= batch:
        return Verdict.violated(f"{left} foldable pairs left unfolded (batch {batch}): nothing was folded")
    return Verdict.ok()


def check_log_and_batch_kept(old_log: str, observed: frozenset[str], request: str) -> Verdict:
    """A fold keeps what the WORK LOG held and what it folded: every old log fact and every observed fact
    is in the next request (the log or the verbatim history)."""
    have = _facts(request)
    erased = sorted(_facts(old_log) - have)
    if erased:
        return Verdict.violated(f"old WORK LOG facts erased: {erased}")
    lost = sorted(observed - have)
    return Verdict.violated(f"folded observation facts lost: {lost}") if lost else Verdict.ok()


def check_fold_guard(
    sizes: Sequence[tuple[int, bool]], folds: Sequence[int], high: int, batch: int
) -> Verdict:
    """Upstream's floor guard holds (every fold folds exactly ``fold_batch`` pairs: at most one fold per
    batch of turns) and the fold serves its purpose: the context is not above high water for more than
    ``fold_batch`` consecutive model calls while the 6-pair floor and the WORK LOG fit under low water.
    *sizes* holds, per model call, (context size after the fold, whether the floor fit under low water)."""
    bad = [n for n in folds if n != batch]
    if bad:
        return Verdict.violated(f"a fold of {bad[0]} pairs (fold_batch {batch}): the floor guard is gone")
    run = 0
    for i, (size, fits) in enumerate(sizes):
        run = run + 1 if size > high and fits else 0
        if run > batch:
            return Verdict.violated(
                f"context above high water {high} for {run} consecutive calls (call {i + 1}: {size} chars)"
            )
    return Verdict.ok()


def check_handoff_keeps_log(worklog: str, handoff: str) -> Verdict:
    """Every fact of the handed-over WORK LOG reaches the fresh attempt."""
    lost = sorted(_facts(worklog) - _facts(handoff))
    return Verdict.violated(f"handoff truncated facts: {lost}") if lost else Verdict.ok()


def check_review_sees_log(worklog: str, review_input: str) -> Verdict:
    """The strategy review is fed the worklog that is handed over (its first 8,000 characters)."""
    lost = sorted(_facts(worklog.strip()[:8000]) - _facts(review_input))
    return Verdict.violated(f"strategy review blind to {lost}") if lost else Verdict.ok()


def check_memory_names_confined(
    files: Bank, safe: bool, bank: Bank, old: Bank, outside: Sequence[str]
) -> Verdict:
    """A direct memory write keeps every name inside the bank: nothing lands beside the bank or outside the
    run root (*outside*: those writes, by resolved target); a candidate that may be written (*safe*) is
    written in full; any other is refused whole, leaving the bank as it was (*old*)."""
    if outside:
        return Verdict.violated(f"memory writes landed outside the bank: {list(outside)}")
    if safe and bank != files:
        return Verdict.violated(f"bank holds {sorted(bank)}, not the written {sorted(files)}")
    if not safe and bank != old:
        return Verdict.violated(f"an unaudited or unsafe candidate replaced the bank: {sorted(bank)}")
    return Verdict.ok()


def check_bank_written(
    files: Bank, admissible: bool, bank: Bank, old: Bank, outside: Sequence[str], journaled: Sequence[Bank]
) -> Verdict:
    """A direct bank write of an *admissible* candidate (safe names, no audit hit) installs exactly it and
    journals it; an inadmissible one leaves the bank unchanged; nothing lands outside the bank
    (:func:`check_memory_names_confined`), no partial bank is left, and every journal line's archive still
    holds its tree (no overwritten episode)."""
    verdict = check_memory_names_confined(files, admissible, bank, old, outside)
    if not verdict.holds:
        return verdict
    if admissible and files != old and (not journaled or journaled[-1] != files):
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


def check_installed(bank: Bank, new: Bank, orphans: Sequence[str]) -> Verdict:
    """A completed install leaves exactly the new tree and no orphaned backup."""
    if bank != new:
        return Verdict.violated(f"after the install the bank holds {sorted(bank)}, not {sorted(new)}")
    return Verdict.violated(f"orphaned backup {list(orphans)}") if orphans else Verdict.ok()


def check_wave_atomic(
    canonical: Bank, snapshot: Bank, outcome_written: bool, committed_facts: frozenset[str], clean: bool
) -> Verdict:
    """A wave publishes all of its branches (outcome written, every branch's facts in the bank) or leaves
    the canonical bank unchanged; a wave with no leaking branch publishes."""
    if not outcome_written and canonical != snapshot:
        return Verdict.violated("canonical bank changed by a wave that never wrote its outcome")
    if clean and not outcome_written:
        return Verdict.violated("a wave with no leaking branch did not publish")
    if outcome_written:
        lost = sorted(committed_facts - bank_facts(canonical))
        if lost:
            return Verdict.violated(f"published wave lost branch facts: {lost}")
    return Verdict.ok()


def check_memory_claim(
    memory_mode: str, delivered: bool, env_memory_dir: str | None, pushed: bool
) -> Verdict:
    """An evaluation record claims memory (and nudges name ``~/.memory``) only when it was delivered, and
    a working push delivers the bank and says so."""
    if not delivered and (memory_mode != "off" or env_memory_dir):
        return Verdict.violated(
            f"record says {memory_mode!r} (env_memory_dir={env_memory_dir!r}) but no memory was delivered"
        )
    if pushed and not (delivered and memory_mode != "off" and env_memory_dir):
        return Verdict.violated(f"the push worked but the Actor got no memory (record {memory_mode!r})")
    return Verdict.ok()


def check_diagnosis_not_promoted(
    installed: Mapping[str, str], reconciled: Mapping[str, str], distilled: frozenset[str], committed: Bank
) -> Verdict:
    """The installed bank is the bank at reconciliation end (name to sha256 maps; diagnosis-phase edits
    are not promoted) and it holds every distilled lesson fact."""
    extra = sorted(n for n in set(installed) | set(reconciled) if reconciled.get(n) != installed.get(n))
    if extra:
        return Verdict.violated(f"installed bank differs from the reconciled one in: {extra}")
    lost = sorted(distilled - bank_facts(committed))
    return Verdict.violated(f"distilled lesson facts not installed: {lost}") if lost else Verdict.ok()


def check_pull_commit(guest: Bank, committed: Bank | None, pull_worked: bool) -> Verdict:
    """A commit never replaces a non-empty guest bank with an empty canonical bank, and a commit whose pull
    worked installs the guest bank. *committed* is None when the commit was refused (infra)."""
    if committed is not None and guest and not committed:
        return Verdict.violated(f"guest held {len(guest)} files; an empty bank was installed")
    if pull_worked and committed is None:
        return Verdict.violated(
            f"the pull worked but the commit was refused (the guest held {sorted(guest)})"
        )
    if pull_worked and committed != guest:
        return Verdict.violated(f"the pull worked but the commit installed {sorted(committed or {})}")
    return Verdict.ok()


def check_fold_keeps_prefix_cached(
    calls: Sequence[tuple[int, int, int, frozenset[str], frozenset[str]]],
    bound: int,
    minimum: int = 1024,
    increment: int = 128,
) -> Verdict:
    """always("the fold bounds the request, keeps the facts and the cache serves the stable prefix"): each
    model call is (cache read tokens, stable tokens, unfolded pairs, facts observed so far, facts in the
    request). Every call carries at most *bound* unfolded pairs (the fold's service: the context stays
    bounded), shows every fact observed so far (in the WORK LOG or verbatim), and reads from the provider's
    cache at least half of its stable tokens: the system prompt, the task and the WORK LOG as the previous
    call sent it, which no fold changes in meaning, whenever they are enough to be cached (*minimum* plus
    two *increment*: the last block may close differently, and hits are counted in increments)."""
    for i, (read, stable, unfolded, observed, shown) in enumerate(calls, start=1):
        if unfolded > bound:
            return Verdict.violated(f"call {i} carries {unfolded} unfolded pairs (the fold keeps {bound})")
        lost = sorted(observed - shown)
        if lost:
            return Verdict.violated(f"call {i}: facts missing from the request: {lost}")
        if i > 1 and stable >= minimum + 2 * increment and read < stable / 2:
            return Verdict.violated(
                f"call {i}: the cache served {read:,} tokens, under half of the {stable:,} tokens of system "
                "prompt, task and WORK LOG the previous call sent"
            )
    return Verdict.ok()
