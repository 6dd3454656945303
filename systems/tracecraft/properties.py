"""Named invariants of Tracecraft as pure checkers: ``check_x(...) -> Verdict``, never raising.

Each takes plain values recorded from a run (transcripts, shown message keys, listings, meta documents,
claim outcomes) and says whether the invariant held, naming the offending records when it did not.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from sim.claims import Verdict
from systems.tracecraft.protocol import secret_matches


def check_transcript_is_prefix(transcript: bytes, source: bytes) -> Verdict:
    """The mirrored transcript is the source from byte 0, each byte once, in order (a prefix of it)."""
    if source.startswith(transcript):
        return Verdict.ok()
    at = next((i for i, (a, b) in enumerate(zip(transcript, source, strict=False)) if a != b),
              min(len(transcript), len(source)))  # fmt: skip
    return Verdict.violated(
        f"transcript ({len(transcript)} B) is not a prefix of the source ({len(source)} B): first "
        f"difference at byte {at}: {transcript[max(0, at - 8) : at + 16]!r}"
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


def check_shown_at_most_once(shown: Mapping[str, Sequence[str]]) -> Verdict:
    """Per reader, ``inbox --new`` shows each message key at most once."""
    for reader, keys in shown.items():
        dup = sorted(k for k, n in Counter(keys).items() if n > 1)
        if dup:
            return Verdict.violated(f"reader {reader} was shown {len(dup)} message(s) again: {dup[0]}")
    return Verdict.ok()


def check_all_shown(sent: Iterable[str], shown: Iterable[str]) -> Verdict:
    """Every sent message key was shown by some ``inbox --new``."""
    missing = sorted(set(sent) - set(shown))
    if missing:
        return Verdict.violated(f"{len(missing)} message(s) never shown by --new, e.g. {missing[0]}")
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


def check_live_is_newest(live: str | None, newest: str | None) -> Verdict:
    """``memory get`` equals the value of the newest ``history`` entry."""
    if live == newest:
        return Verdict.ok()
    return Verdict.violated(f"live value {live!r} but newest history entry {newest!r}")


def check_history_append_only(before: Sequence[str], after: Sequence[str]) -> Verdict:
    """Every history line shown earlier is still shown, unchanged."""
    lost = [ln for ln in before if ln not in set(after)]
    return Verdict.violated(f"history lost or changed {lost[0]!r}") if lost else Verdict.ok()


def check_not_stale(agents: Iterable[Mapping[str, Any]], active: Iterable[str]) -> Verdict:
    """No agent that ran a command within the stale window is reported stale."""
    stale = sorted(a["id"] for a in agents if a.get("status") == "stale" and a["id"] in set(active))
    return Verdict.violated(f"active agent(s) reported stale: {stale}") if stale else Verdict.ok()


def check_delivered(deliveries: Iterable[tuple[str, bool]]) -> Verdict:
    """Every (what, delivered) pair was delivered."""
    lost = [w for w, ok in deliveries if not ok]
    return Verdict.violated(f"not delivered: {lost[0]}") if lost else Verdict.ok()
