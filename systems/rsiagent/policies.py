"""Seeded model stand-ins for RSIAgent's model calls (no LLM): Actor work, distillation, reconciliation,
learning diagnosis, the Verifier's verdict, the Curriculum's notes, the WORK LOG summarizer and the
strategy reviewer. Each is a frozen dataclass of explicit choices, drawn by Hypothesis strategies
(``tests/strategies_rsiagent.py``) or fixed in scenarios; randomness only through a passed stream.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

FACT_TOKEN = re.compile(r"FACT-\d{4}=[a-z]+")


def fact_tokens(text: str) -> list[str]:
    """The fact tokens of *text* in order of appearance (``FACT-0003=teal``)."""
    return FACT_TOKEN.findall(text)


@dataclass(frozen=True)
class ActorWork:
    """The Actor's work phase: lessons it writes to ``~/.memory`` while working (discarded upstream by the
    reset), bank files it reads (their content stays in its context), facts it observes, its candidate."""

    lessons: tuple[tuple[str, str], ...] = ()
    reads: tuple[str, ...] = ()
    observed: tuple[str, ...] = ()
    candidate: str = "project done"
    duration_s: float = 60.0


@dataclass(frozen=True)
class Distiller:
    """The distillation phase (same Actor context): may add, revise or delete bank files.

    ``add`` writes a lesson into a file (appending when the file is visible, creating it otherwise);
    ``revise`` appends a line to a file; ``delete`` withdraws files; ``recall_work`` re-records the
    work-phase lessons from the Actor's own context; ``rewrite_read`` rewrites a file the Actor read
    during work *from its context* (the content it read then) plus a new line.
    """

    add: tuple[tuple[str, str], ...] = ()
    revise: tuple[tuple[str, str], ...] = ()
    delete: tuple[str, ...] = ()
    recall_work: bool = False
    rewrite_read: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Reconciler:
    """Whole-corpus reconciliation: withdraws the files it judges stale."""

    delete: tuple[str, ...] = ()


@dataclass(frozen=True)
class Diagnosis:
    """The learning-diagnosis phase: its conclusions, and bank edits it makes (still pulled upstream)."""

    text: str = "Bottleneck: none identified."
    bank_edits: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class VerifierPolicy:
    """The Verifier's judgment: its verdict, optionally with a decoy verdict inside a code fence."""

    verdict: str = "PASS"
    fenced_decoy: bool = False

    def report(self) -> str:
        body = "Checked the project state on a fresh machine.\n"
        if self.fenced_decoy:
            other = "FAIL" if self.verdict == "PASS" else "PASS"
            body += f"```\nVERDICT: {other}\n```\n"
        return body + f"VERDICT: {self.verdict}\n"


@dataclass(frozen=True)
class CurriculumTurn:
    """One Curriculum turn: its decision and what it does to ``curriculum_notes.md``.

    ``notes_action``: ``write`` (the text), ``empty`` (a zero-size file), ``blank`` (whitespace only),
    ``corrupt`` (invalid UTF-8), or ``none`` (does not write the file; a fresh VM deleted it).
    """

    decision: str = "PROJECT"
    notes_action: str = "write"
    notes_text: str = ""
    instruction: str = "Build a small tool under /home/user/evolution_project."


@dataclass(frozen=True)
class Summarizer:
    """The WORK LOG summarizer (temperature 0): keeps every fact token it sees, old log first, then the new
    turns' tokens minus a *lossiness* fraction (drawn from the passed stream); ``blank`` returns "", and
    ``blank_rate`` returns "" on that fraction of calls (drawn from the same stream)."""

    lossiness: float = 0.0
    blank: bool = False
    blank_rate: float = 0.0

    def summarize(self, worklog: str, rendered: str, rng: random.Random | None = None) -> str:
        if self.blank or (self.blank_rate > 0 and rng is not None and rng.random() < self.blank_rate):
            return ""
        seen: dict[str, str] = {}
        for tok in fact_tokens(worklog):
            seen[tok.split("=")[0]] = tok
        for tok in fact_tokens(rendered):
            fid = tok.split("=")[0]
            if fid in seen:
                seen[fid] = tok
                continue
            if self.lossiness > 0 and rng is not None and rng.random() < self.lossiness:
                continue
            seen[fid] = tok
        return "WORK LOG\n" + "\n".join(f"- {t}" for t in seen.values())


@dataclass(frozen=True)
class Reviewer:
    """The strategy reviewer: restates the fact tokens it sees as a strategy note."""

    def review(self, worklog: str, tail: str) -> str:
        toks = list(dict.fromkeys(fact_tokens(worklog) + fact_tokens(tail)))
        return "STRATEGY REVIEW\nKnown: " + ", ".join(toks) if toks else "STRATEGY REVIEW\nNo known facts."


@dataclass(frozen=True)
class VerbatimSummarizer(Summarizer):
    """The WORK LOG summarizer for a real conversation (no fact tokens to keep): the old log, then the
    fold's input as the summarizer saw it (upstream's head/tail ``_fold_input`` of each message, rendered
    ``[ENV]``/``[YOU]``), verbatim, at most *fold_chars* characters of it (0: all). Upstream asks a
    model to write this; the stand-in is a declared knob (``rsiagent.conversation_summary_chars``) and
    reads nothing but the fold input (no evidence label reaches it)."""

    fold_chars: int = 0

    def summarize(self, worklog: str, rendered: str, rng: random.Random | None = None) -> str:
        new = rendered[: self.fold_chars] if self.fold_chars else rendered
        head = worklog if worklog.startswith("WORK LOG") else "WORK LOG"
        return head + "\n\n" + new
