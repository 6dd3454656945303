"""Frozen value records of the RSIAgent model: messages, loop configuration, results and receipts.

A bank is a plain ``dict[str, bytes]`` (relpath to bytes), as upstream transports it; everything else
that crosses an operation boundary is one of the frozen records below.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from sim.variant import Switches

Bank = dict[str, bytes]

#: The fixes: each a minimal repair of one claimed failure mode (``systems.rsiagent.claims``).
FIXES = (
    "draft-work-delta", "journal-after-install", "wave-sibling-check", "complete-fold-input",
    "digest-keeps-log", "keep-under-low-water", "handoff-cap-worklog", "review-gets-wl",
    "admit-direct-writes", "confine-memory-names", "empty-notes-clear", "exchange-install", "stage-wave",
    "osworld-record-off", "diagnosis-snapshot", "append-only-worklog",
)  # fmt: skip
#: The counterfactual weakenings: designs upstream does not ship, used by the claims that show why
#: upstream chose what it did.
COUNTERFACTUALS = ("push-at-wave-start", "raw-pull", "shared-cycle-root")
#: The off switches: each empties the mechanism one or more claims' properties are about (the property
#: must reject it: it asserts the mechanism's service, not only the absence of the failure).
OFF = (
    "commit-off", "journal-off", "fold-input-off", "digest-off", "fold-off", "handoff-log-off",
    "review-off", "write-memory-off", "notes-off", "install-off", "osworld-memory-off", "pull-off",
)  # fmt: skip
#: The declared switches; ``SWITCHES.fixed(...)`` / ``SWITCHES.variant(...)`` build validated variants.
SWITCHES = Switches("rsiagent", fixes=FIXES, counterfactuals=COUNTERFACTUALS, off=OFF)


@dataclass(frozen=True)
class Message:
    """One chat message: ``role`` is ``user``, ``assistant`` (or ``system``); reasoning is never folded."""

    role: str
    content: str
    reasoning: str = ""
    images: tuple[dict[str, str], ...] = ()


@dataclass(frozen=True)
class LoopConfig:
    """The fold/restart knobs of ``core/loop.py`` for one role (§2.18 of the fidelity note).

    ``keep_ceiling`` is the ceiling of :func:`effective_keep`; None means ``history_keep_pairs``.
    ``handoff_cap`` / ``pivot_cap`` are upstream's literal 12,000 / 6,000 handoff slices and
    ``review_cap`` the strategy review's literal 8,000-character slice of the WORK LOG (parameters here
    so that examples can be small and scale them together; the defaults are upstream's).
    ``max_consec_*`` are the streak limits behind the ``stalled`` status (dry / degenerate / failed-done /
    repeat); the streaks themselves are not modeled (a loop result carries its status).
    """

    history_keep_pairs: int = 0
    keep_chars: int = 0
    keep_ceiling: int | None = None
    ctx_high_water: int = 0
    ctx_low_water: int = 0
    fold_batch: int = 10
    worklog_max_chars: int = 40_000
    max_resumes: int = 1
    resume_with_worklog: bool = True
    resume_synthesize_worklog: bool = False
    strategy_pivot: bool = True
    max_iters: int = 24
    wall_clock_secs: int = 7200
    agent_decided_stop: bool = False
    max_consec_dry: int = 3
    max_consec_degenerate: int = 3
    max_consec_done: int = 3
    max_consec_repeat: int = 16
    escalation_model: str = ""
    handoff_cap: int = 12_000
    pivot_cap: int = 6_000
    review_cap: int = 8_000

    @property
    def folding(self) -> bool:
        """Whether the loop folds at all (``history_keep_pairs > 0``)."""
        return self.history_keep_pairs > 0

    def scaled(self, factor: float) -> LoopConfig:
        """The same role with every character-denominated role setting multiplied by *factor* (the 12,000 /
        6,000-character handoff slices are literals in upstream code, not role settings: unscaled)."""

        def s(v: int) -> int:
            return max(1, round(v * factor)) if v > 0 else v

        return replace(
            self,
            keep_chars=s(self.keep_chars),
            ctx_high_water=s(self.ctx_high_water),
            ctx_low_water=s(self.ctx_low_water),
            worklog_max_chars=s(self.worklog_max_chars),
        )


@dataclass(frozen=True)
class FoldEvent:
    """One ``_fold_once`` call: which pairs it covered and how the WORK LOG came out."""

    first_pair: int
    pairs: int
    mode: str  # "summary" or "digest"
    summary_chars: int
    lost_middle_facts: tuple[str, ...] = ()
    at_pairs: int = 0  # history pairs when it ran (= the index of the model call it preceded)


@dataclass(frozen=True)
class LoopResult:
    """What a loop segment returns (the part of ``RT-OBJ-loop-result`` this model needs)."""

    status: str
    iters: int
    worklog: str
    history: tuple[Message, ...] = ()
    surface_delta: str = ""


@dataclass(frozen=True)
class Handoff:
    """A stalled-restart handoff: the message, the worklog it was built from, and the review text."""

    message: str
    worklog: str
    pivot: bool
    review: str = ""
    review_input_worklog: str = ""


@dataclass(frozen=True)
class JournalLine:
    """One ``journal.jsonl`` line, decoded."""

    episode: int
    files: int
    bytes: int
    ts: str
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class InstallReceipt:
    """The outcome of one staged install: stage and backup names, and what was fsynced."""

    path: str
    stage: str
    backup: str | None
    files: int
    fsyncs: tuple[str, ...] = ()


@dataclass(frozen=True)
class WriteMemoryResult:
    """The outcome of the direct ``write_memory`` API: the names it wrote, those that landed outside the bank,
    and the resolved targets of the writes that left the run root (recorded by the sandboxed tree, never
    made)."""

    written: tuple[str, ...]
    escaped: tuple[str, ...] = ()
    outside: tuple[str, ...] = ()


@dataclass(frozen=True)
class CommitRecord:
    """One learning commit: the episode, the verdict, and the canonical bank before and after."""

    episode: int
    outcome: str  # "installed", "quarantined", "infra"
    verdict: str
    before: tuple[tuple[str, bytes], ...]
    after: tuple[tuple[str, bytes], ...]
    rejected: tuple[str, ...] = ()
    conflicts: tuple[str, ...] = ()

    @property
    def before_bank(self) -> Bank:
        return dict(self.before)

    @property
    def after_bank(self) -> Bank:
        return dict(self.after)


def frozen_bank(bank: Bank) -> tuple[tuple[str, bytes], ...]:
    """A bank as a sorted tuple of items (hashable, for records)."""
    return tuple(sorted(bank.items()))
