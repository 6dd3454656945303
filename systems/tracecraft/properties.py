"""Named invariants of Tracecraft as pure checkers: ``check_x(...) -> Verdict``, never raising.

Each takes plain values recorded from a run (transcripts, shown message keys, listings, meta documents,
claim outcomes) and says whether the invariant held, naming the offending records when it did not. Each
asserts the feature's *service* (the transcript uploaded whole, every message shown exactly once, the
acknowledged value live), so a design with the feature switched off fails it as upstream's design does.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from sim.claims import Verdict
from systems.tracecraft.protocol import secret_matches


def check_transcript_equals(transcript: bytes, expected: bytes) -> Verdict:
    """The mirrored transcript is exactly *expected* (the source uploaded whole, each byte once, in order).

    An empty or partial upload is a violation, as is a duplicated or unredacted byte.
    """
    if transcript == expected:
        return Verdict.ok()
    at = next((i for i, (a, b) in enumerate(zip(transcript, expected, strict=False)) if a != b),
              min(len(transcript), len(expected)))  # fmt: skip
    return Verdict.violated(
        f"transcript ({len(transcript)} B) is not the expected {len(expected)} B: first difference at byte "
        f"{at}: {transcript[max(0, at - 8) : at + 16]!r} vs {expected[max(0, at - 8) : at + 16]!r}"
    )


def check_no_secrets(transcript: bytes) -> Verdict:
    """No redaction pattern matches anywhere in the concatenated transcript."""
    found = secret_matches(transcript)
    return Verdict.violated(f"unredacted {', '.join(found)} in the transcript") if found else Verdict.ok()


def check_lines_equal(shown: Sequence[str], expected: Sequence[str]) -> Verdict:
    """``session show --tail`` printed exactly the expected lines."""
    if list(shown) == list(expected):
        return Verdict.ok()
    return Verdict.violated(f"show printed {list(shown)!r}, the source has {list(expected)!r}")


def check_exactly_once(sent: Iterable[str], shown: Sequence[str], reader: str = "the reader") -> Verdict:
    """Every sent message key was shown by ``inbox --new`` exactly once (neither hidden nor shown again)."""
    counts = Counter(shown)
    for k in sorted(set(sent)):
        if counts[k] != 1:
            what = "never shown" if counts[k] == 0 else f"shown {counts[k]} times"
            return Verdict.violated(f"{k} was {what} by {reader}'s --new")
    return Verdict.ok()


def check_exactly_once_per_reader(sent: Iterable[str], shown: Mapping[str, Sequence[str]]) -> Verdict:
    """Each reader's ``inbox --new`` showed every sent message key exactly once."""
    keys = list(sent)
    for reader, seen in sorted(shown.items()):
        v = check_exactly_once(keys, seen, f"reader {reader}")
        if not v.holds:
            return v
    return Verdict.ok()


def check_meta_matches_listing(meta: Mapping[str, Any], listed: Iterable[tuple[int, str]],
                               compacted: bool) -> Verdict:  # fmt: skip
    """meta's parts log names exactly the listed parts, and a finished compact left ``last_compacted_at``."""
    logged = {(p.get("seq"), p.get("uuid")) for p in meta.get("parts") or []}
    present = set(listed)
    if logged != present:
        return Verdict.violated(
            f"meta lists {sorted(logged - present)} not in the bucket and misses {sorted(present - logged)}"
        )
    if compacted and "last_compacted_at" not in meta:
        return Verdict.violated("a finished compact's last_compacted_at was dropped by a later meta rebuild")
    return Verdict.ok()


def check_single_winner(outcomes: Mapping[str, bool], stored_owner: str | None) -> Verdict:
    """Exactly one claimant won, and the stored owner is the declared winner (contention_bench)."""
    winners = sorted(a for a, won in outcomes.items() if won)
    if len(winners) != 1:
        return Verdict.violated(f"{len(winners)} winners {winners}; stored owner {stored_owner}")
    if stored_owner != winners[0]:
        return Verdict.violated(f"declared winner {winners[0]} but stored owner {stored_owner}")
    return Verdict.ok()


def check_history_append_only(
    before: Sequence[str], after: Sequence[str], added: str | None = None
) -> Verdict:
    """Every history line shown earlier is still shown, unchanged; a line ending in *added* (the value of
    a ``memory set`` that just succeeded) is shown too."""
    lost = [ln for ln in before if ln not in set(after)]
    if lost:
        return Verdict.violated(f"history lost or changed {lost[0]!r}")
    if added is not None and not any(ln.endswith(added) for ln in after):
        return Verdict.violated(f"an acknowledged memory set{added} is not in the history")
    return Verdict.ok()


def check_register(
    sets: Sequence[tuple[str, float, float, bool]], live: str | None, newest: str | None
) -> Verdict:
    """``memory get`` and ``history --limit 1`` agree, and show a value no later write supersedes.

    *sets* are ``(value, start, end, acknowledged)`` (end: when the set returned, or crashed). The live
    value must be the value of a set that no *acknowledged* set started after (real-time order, as a
    linearizable register); if any set was acknowledged there must be a live value.
    """
    if live != newest:
        return Verdict.violated(f"live value {live!r} but newest history entry {newest!r}")
    if live is None:
        acked = [v for v, _, _, ok in sets if ok]
        return Verdict.violated(f"acknowledged set(s) {acked} but no live value") if acked else Verdict.ok()
    writers = [s for s in sets if s[0] == live]
    if not writers:
        return Verdict.violated(f"live value {live!r} was never set")
    _, _, end, _ = writers[0]
    later = [v for v, start, _, ok in sets if ok and start > end]
    if later:
        return Verdict.violated(f"live value {live!r} although {later[-1]!r} was set after it completed")
    return Verdict.ok()


def check_not_stale(agents: Iterable[Mapping[str, Any]], active: Iterable[str]) -> Verdict:
    """Every agent that ran a command within the stale window is listed, and not as stale."""
    rows = {a.get("id"): a for a in agents}
    missing = sorted(a for a in set(active) if a not in rows)
    if missing:
        return Verdict.violated(f"active agent(s) not listed: {missing}")
    stale = sorted(a for a in set(active) if rows[a].get("status") == "stale")
    return Verdict.violated(f"active agent(s) reported stale: {stale}") if stale else Verdict.ok()


def check_delivered(deliveries: Iterable[tuple[str, bool]]) -> Verdict:
    """Every (what, delivered) pair was delivered."""
    lost = [w for w, ok in deliveries if not ok]
    return Verdict.violated(f"not delivered: {lost[0]}") if lost else Verdict.ok()
