"""WORK LOG folding and the stalled restart (MEM-RTE-worklog-fold, MEM-OBJ-work-log, RT-OBJ-loop-result):
``core/loop.py``."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from sim.engine import Simulation
from sim.text import extract_facts
from sim.variant import FAITHFUL, Variant
from systems.rsiagent.model.attachment import memory_revisit
from systems.rsiagent.model.common import (
    ELIGIBLE_STALL,
    RESUME_MIN_ITERS,
    RESUME_MIN_WALL_S,
    REVIEW_LOG_CAP,
    REVIEW_MESSAGE_CHARS,
    REVIEW_MESSAGES,
    REVIEW_OUT_CAP,
    REVIEW_TAIL_CAP,
    SYNTH_MESSAGES,
    SYSTEM,
)
from systems.rsiagent.model.functions import _effective_keep_sizes, cap_worklog, digest_lines, fold_input
from systems.rsiagent.policies import (
    Reviewer,
    Summarizer,
)
from systems.rsiagent.state import (
    FoldEvent,
    Handoff,
    LoopConfig,
    LoopResult,
    Message,
)

ROLE_DEFAULTS: dict[str, LoopConfig] = {
    "config": LoopConfig(),
    "actor": LoopConfig(max_resumes=0, max_iters=2000, wall_clock_secs=86_400, agent_decided_stop=True),
    "target": LoopConfig(
        history_keep_pairs=80,
        keep_chars=500_000,
        ctx_high_water=900_000,
        ctx_low_water=500_000,
        fold_batch=10,
        worklog_max_chars=500_000,
        max_resumes=1,
        resume_synthesize_worklog=True,
        max_iters=500,
        wall_clock_secs=36_000,
        agent_decided_stop=True,
        escalation_model="moonshotai/kimi-k3",
    ),
    "verifier": LoopConfig(max_resumes=0, max_iters=2000, wall_clock_secs=86_400, agent_decided_stop=True),
    "practice_verifier": LoopConfig(
        keep_chars=500_000,
        ctx_high_water=900_000,
        ctx_low_water=500_000,
        max_resumes=0,
        max_iters=2000,
        wall_clock_secs=86_400,
        agent_decided_stop=True,
    ),
    "escalation": LoopConfig(max_resumes=0, max_iters=2000, wall_clock_secs=86_400, agent_decided_stop=True),
}
"""§2.18: the Config defaults and the role YAML overrides ("–" cells inherit the Config value).
Not modeled: a separate evaluation role YAML (evaluation runs use the target role's loop settings).
Not modeled: role keys outside the loop (actor practice_mode and independent_verify; target
verifier_persist_scratch, rollback_mirror and private paths).
Not modeled: the streak counters behind the stalled status (the max_consec_* limits are recorded; a loop
result carries its status)."""


def phase_cfg(cfg: LoopConfig) -> LoopConfig:
    """Upstream ``_phase_cfg``: practice, memory and handoff phases never fold or restart."""

    return replace(cfg, history_keep_pairs=0, max_resumes=0)


FOLD_SYSTEM = (
    "Summarize the folded turns into the WORK LOG: current state, key values, next steps. "
    "Keep the existing log's facts."
)
TASK_HEADER = "TASK (verbatim, as first given):"
WORKLOG_HEADER = "WORK LOG (summary of earlier turns):"


def render_fold(batch: Sequence[Message], complete: bool = False) -> str:
    """The summarizer's view of a batch: ``[YOU]``/``[ENV]`` plus :func:`fold_input` (reasoning is never
    rendered). ``complete`` (fixed variant ``complete-fold-input``) renders the whole content.
    Not modeled: the fixed variant's per-chunk summarizer calls (one call sees every chunk)."""
    return "\n\n".join(
        ("[YOU]\n" if m.role == "assistant" else "[ENV]\n")
        + (str(m.content) if complete else fold_input(m.content))
        for m in batch
    )


def digest_fallback(worklog: str, batch: Sequence[Message], max_chars: int, trim_digest: bool = False) -> str:
    """The blank-summary fallback: append the digest lines; over the cap keep the newest tail at a line
    boundary, which can erase the old log. ``trim_digest`` (fixed variant) trims the digest instead."""
    lines = digest_lines(batch)
    if trim_digest:
        room = max_chars - len(worklog) - (1 if worklog else 0)
        kept: list[str] = []
        for ln in reversed(lines):
            if room - len(ln) - (1 if kept else 0) < 0:
                break
            room -= len(ln) + (1 if kept else 0)
            kept.insert(0, ln)
        return "\n".join(([worklog] if worklog else []) + kept)
    text = "\n".join(([worklog] if worklog else []) + lines)
    if len(text) > max_chars:
        tail = text[-max_chars:]
        nl = tail.find("\n")
        text = tail[nl + 1 :] if nl != -1 else tail
    return text


class ActorLoop:
    """One ``core/loop.py`` segment with folding (MEM-RTE-worklog-fold): the task, the history of
    (assistant, env) pairs, the WORK LOG and how many pairs it covers.

    Size is ``len(summary)`` plus content and reasoning of the unfolded messages, kept as prefix sums so
    a fold decision costs what it keeps. Folding happens only when ``history_keep_pairs > 0``.
    """

    def __init__(
        self,
        sim: Simulation,
        cfg: LoopConfig,
        summarizer: Summarizer,
        *,
        task: str,
        agent: str = "actor",
        variant: Variant = FAITHFUL,
        system_prompt: str = "",
        env_memory_dir: str | None = None,
        rng_name: str = "rsiagent.summarizer",
    ) -> None:
        self.sim = sim
        self.cfg = cfg
        self.summarizer = summarizer
        self.task = task
        self.agent = agent
        self.variant = variant
        self.system_prompt = system_prompt
        self.env_memory_dir = env_memory_dir
        self.rng = sim.rng(rng_name)
        self.messages: list[Message] = []
        self._cum: list[int] = [0]
        self._pair_content: list[int] = []
        self.covered = 0
        self.summary = ""
        self.folds: list[FoldEvent] = []
        self._nudge: str | None = None
        self.prior: tuple[Message, ...] = ()  # earlier attempts' history (``history + h2``)

    @property
    def pairs(self) -> int:
        return len(self.messages) // 2

    def add_pair(self, assistant: Message, env: Message) -> list[FoldEvent]:
        """Append one turn (the Actor's reply and the environment's observation), then maybe fold."""
        for m in (assistant, env):
            self.messages.append(m)
            self._cum.append(self._cum[-1] + len(m.content) + len(m.reasoning))
        self._pair_content.append(len(assistant.content) + len(env.content))
        return self.maybe_fold()

    def size(self) -> int:
        """``len(summary)`` + content + reasoning of the unfolded messages."""
        return len(self.summary) + self._cum[-1] - self._cum[2 * self.covered]

    def keep(self) -> int:
        """The effective keep window over all pairs."""
        c = self.cfg
        return _effective_keep_sizes(self._pair_content, c.history_keep_pairs, c.keep_chars, c.keep_ceiling)

    def foldable(self) -> int:
        return self.pairs - self.keep() - self.covered

    def maybe_fold(self) -> list[FoldEvent]:
        """Fold per the high/low-water hysteresis (or the legacy pair count when ``ctx_high_water`` is 0).

        High water: above it, fold exactly ``fold_batch`` oldest pairs while size > low and at least a
        batch is foldable (fixed variant ``partial-fold-batch`` folds a partial last batch), which can
        stop above high. Legacy: once a batch is foldable, fold all foldable pairs in one call.
        """
        c = self.cfg
        if not c.folding:
            return []
        out: list[FoldEvent] = []
        if c.ctx_high_water <= 0:
            n = self.foldable()
            if n >= c.fold_batch:
                out.append(self._fold_once(n))
            return out
        size = self.size()
        if size <= c.ctx_high_water:
            return out
        low = c.ctx_low_water or c.ctx_high_water // 2
        keep = self.keep()
        while size > low:
            n = self.pairs - keep - self.covered
            if n < c.fold_batch:
                if not (self.variant.has("partial-fold-batch") and n > 0):
                    break
            else:
                n = c.fold_batch
            out.append(self._fold_once(n))
            size = self.size()
        if size > c.ctx_high_water:
            self.sim.trace.op(
                SYSTEM,
                "fold_guard",
                agent=self.agent,
                phase="info",
                size=size,
                high=c.ctx_high_water,
                foldable=self.pairs - keep - self.covered,
            )
        return out

    def _fold_once(self, n: int) -> FoldEvent:
        """Upstream ``_fold_once``: summarize the *n* oldest unfolded pairs into the WORK LOG."""
        first = self.covered
        batch = self.messages[2 * first : 2 * (first + n)]
        rendered = render_fold(batch, complete=self.variant.has("complete-fold-input"))
        self.sim.request(
            SYSTEM, "loop.fold", [FOLD_SYSTEM, self.summary, rendered], agent=self.agent, pairs=n
        )
        out = self.summarizer.summarize(self.summary, rendered, self.rng)
        if out.strip():
            self.summary = cap_worklog(out, self.cfg.worklog_max_chars)
            mode = "summary"
        else:
            self.summary = digest_fallback(
                self.summary, batch, self.cfg.worklog_max_chars, self.variant.has("trim-digest")
            )
            mode = "digest"
        seen: set[str] = set()
        for m in batch:
            seen |= extract_facts(m.content)
        lost = tuple(sorted(seen - extract_facts(rendered)))
        self.covered += n
        ev = FoldEvent(first, n, mode, len(self.summary), lost)
        self.folds.append(ev)
        self._nudge = memory_revisit(self.env_memory_dir, "fold")
        self.sim.trace.op(
            SYSTEM,
            "fold_once",
            agent=self.agent,
            first_pair=first,
            pairs=n,
            mode=mode,
            summary_chars=len(self.summary),
            lost_middle_facts=list(lost),
        )
        return ev

    def context(self, question: str = "") -> list[str]:
        """The model context: system prompt, the task (+ the WORK LOG as one user message after a fold),
        the unfolded messages, any pending memory-revisit note and *question*."""
        head = (
            self.task
            if not self.summary
            else f"{TASK_HEADER}\n{self.task}\n\n{WORKLOG_HEADER}\n{self.summary}"
        )
        parts = ([self.system_prompt] if self.system_prompt else []) + [head]
        parts += [m.content for m in self.messages[2 * self.covered :]]
        if self._nudge:
            parts.append(self._nudge)
            self._nudge = None
        if question:
            parts.append(question)
        return parts

    def request(self, question: str = "", route: str = "loop.step", **detail: Any) -> list[str]:
        """Assemble the next model context and record it with ``sim.request``."""
        parts = self.context(question)
        self.sim.request(SYSTEM, route, parts, agent=self.agent, **detail)
        return parts

    def result(self, status: str, surface_delta: str = "") -> LoopResult:
        """The segment's ``LoopResult`` (its ``worklog`` is this segment's log)."""
        return LoopResult(status, self.pairs, self.summary, self.prior + tuple(self.messages), surface_delta)


def resume_eligible(res: LoopResult, resumes: int, cfg: LoopConfig, wall_left_s: float) -> bool:
    """``run_with_resume`` eligibility: status ``stalled`` (never safety_ceiling, budget or
    stalled_quiescent), ``resumes < max_resumes``, at least 10 iterations and 300 s left."""
    return (
        res.status == ELIGIBLE_STALL
        and resumes < cfg.max_resumes
        and cfg.max_iters - res.iters >= RESUME_MIN_ITERS
        and wall_left_s >= RESUME_MIN_WALL_S
    )


def synthesize_worklog(history: Sequence[Message], max_chars: int) -> str:
    """The synthesized handoff log: the last 60 messages, each through :func:`fold_input`, capped at
    ``worklog_max_chars`` (rendered as a fold batch)."""
    return cap_worklog(render_fold(list(history)[-SYNTH_MESSAGES:]), max_chars)


def handoff_message(worklog: str) -> str:
    """The factual restart handoff.

    Not modeled: the exact wording of the restart and pivot handoff messages.
    """
    return "You are resuming on the same machine. WORK LOG from your previous attempt:\n" + worklog


def pivot_handoff_message(review: str, worklog: str) -> str:
    """The pivot handoff: the strategy review, then the log.

    Not modeled: the exact wording of the restart and pivot handoff messages.
    """
    return f"STRATEGY PIVOT.\n{review}\n\nWORK LOG from your previous attempt:\n{worklog}"


def stalled_handoff(
    sim: Simulation,
    cfg: LoopConfig,
    res: LoopResult,
    history: Sequence[Message],
    *,
    variant: Variant = FAITHFUL,
    reviewer: Reviewer | None = None,
    agent: str = "actor",
) -> Handoff:
    """Build the restart handoff of ``run_with_resume`` (MEM-OBJ-work-log, MEM-RTE-worklog-fold).

    ``wl`` is ``res.worklog`` (or, when empty and synthesis is on, the synthesized log). On the pivot path
    (``strategy_pivot`` and no file delta) the strategy review sees the last 6 messages (≤1,500 chars
    each, ≤6,000 in all) and ``res.worklog`` (≤8,000), not ``wl``; the handoff is
    ``pivot_handoff_message(review, wl[:6000])``, otherwise ``handoff_message(wl[:12000])``. Fixes:
    ``review-gets-wl`` and ``handoff-cap-worklog`` (cap at ``worklog_max_chars``).
    """
    reviewer = reviewer or Reviewer()
    wl = res.worklog if cfg.resume_with_worklog else ""
    if not wl and cfg.resume_synthesize_worklog:
        wl = synthesize_worklog(history, cfg.worklog_max_chars)
    fix_cap = variant.has("handoff-cap-worklog")
    if cfg.strategy_pivot and res.surface_delta == "":
        review_log = (wl if variant.has("review-gets-wl") else res.worklog)[:REVIEW_LOG_CAP]
        tail = "\n\n".join(
            ("[YOU]\n" if m.role == "assistant" else "[ENV]\n") + m.content[:REVIEW_MESSAGE_CHARS]
            for m in list(history)[-REVIEW_MESSAGES:]
        )[:REVIEW_TAIL_CAP]
        sim.request(
            SYSTEM,
            "loop.strategy_review",
            ["Review the stalled attempt and propose a different strategy.", review_log, tail],
            agent=agent,
        )
        review = reviewer.review(review_log, tail)[:REVIEW_OUT_CAP]
        msg = pivot_handoff_message(review, wl[: cfg.worklog_max_chars if fix_cap else cfg.pivot_cap])
        out = Handoff(msg, wl, True, review, review_log)
    else:
        msg = handoff_message(wl[: cfg.worklog_max_chars if fix_cap else cfg.handoff_cap])
        out = Handoff(msg, wl, False)
    sim.trace.op(
        SYSTEM, "stalled_handoff", agent=agent, pivot=out.pivot, worklog_chars=len(wl), handoff_chars=len(msg)
    )
    return out


def resume(loop: ActorLoop, handoff: Handoff) -> ActorLoop:
    """A fresh attempt: a new context on the same machine whose task carries the handoff; the old
    history is kept aside (``history + h2``) so a later synthesis sees both attempts."""
    fresh = ActorLoop(
        loop.sim,
        loop.cfg,
        loop.summarizer,
        task=f"{loop.task}\n\n{handoff.message}",
        agent=loop.agent,
        variant=loop.variant,
        system_prompt=loop.system_prompt,
        env_memory_dir=loop.env_memory_dir,
    )
    fresh._nudge = memory_revisit(loop.env_memory_dir, "resume")
    fresh.prior = loop.prior + tuple(loop.messages)
    loop.sim.trace.op(SYSTEM, "resume", agent=loop.agent, handoff_chars=len(handoff.message))
    return fresh
