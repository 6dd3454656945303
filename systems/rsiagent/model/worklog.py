"""WORK LOG folding and the stalled restart (MEM-RTE-worklog-fold, MEM-OBJ-work-log, RT-OBJ-loop-result):
``core/loop.py``."""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from sim.engine import Simulation
from sim.text import extract_facts
from sim.variant import FAITHFUL, Variant
from systems.rsiagent.model.common import (
    ELIGIBLE_STALL,
    KEEP_FLOOR,
    RESUME_MIN_ITERS,
    RESUME_MIN_WALL_S,
    REVIEW_MESSAGE_CHARS,
    REVIEW_MESSAGES,
    REVIEW_OUT_CAP,
    SYNTH_MESSAGES,
    SYSTEM,
)
from systems.rsiagent.model.functions import _effective_keep_sizes, cap_worklog, digest_lines, fold_input
from systems.rsiagent.model.texts import (
    REVIEW_SYSTEM,
    SUMMARIZER_SYSTEM,
    TASK_HEADER,
    WORKLOG_HEADER,
    fold_request,
    handoff_message,
    memory_revisit,
    opening_message,
    pivot_handoff_message,
    strategy_review_ask,
)
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


def render_turn(m: Message, content: str) -> str:
    """One rendered message: ``[YOU]`` for the assistant, ``[ENV]`` for anything else."""
    return ("[YOU]\n" if m.role == "assistant" else "[ENV]\n") + content


def render_fold(batch: Sequence[Message], complete: bool = False) -> str:
    """The summarizer's view of a batch (``_fold_once``): ``[YOU]``/``[ENV]`` plus :func:`fold_input`
    (reasoning is never rendered), joined by blank lines. ``complete`` (fixed variant
    ``complete-fold-input``) renders the whole content.
    Not modeled: the fixed variant's per-chunk summarizer calls (one call sees every chunk)."""
    return "\n\n".join(render_turn(m, str(m.content) if complete else fold_input(m.content)) for m in batch)


def digest_fallback(worklog: str, batch: Sequence[Message], max_chars: int) -> str:
    """``_fold_once``'s blank-summary fallback: ``summary + "\n" + digest`` (so it starts with ``"\n"``
    when the log is empty); over the cap it keeps what follows the first newline at or after
    ``len - cap`` (the newest tail), or the last ``cap`` characters, which can erase the old log."""
    combined = worklog + "\n" + "\n".join(digest_lines(batch))
    if len(combined) > max_chars:
        b = combined.find("\n", len(combined) - max_chars)
        combined = combined[b + 1 :] if b >= 0 else combined[-max_chars:]
    return combined


class ActorLoop:
    """One ``run_attempt`` segment with WORK LOG folding (MEM-RTE-worklog-fold), aligned as upstream's:
    ``history`` is ``[user, assistant, user, assistant, ...]`` whose pair 0 is the opening TASK message and
    the first reply; ``pending`` is the user message about to be sent (the observation, a nudge), which is
    not in the history until its model call returns, so it is neither counted nor foldable.

    Each :meth:`call` is one model call: fold first (``_fold_summary``, when ``history_keep_pairs > 0``),
    append the ``fold`` memory note to the pending message if the fold advanced ``covered``, assemble the
    context, then ``history += [pending, reply]``. Size is ``len(summary)`` plus content and reasoning of
    the unfolded messages, kept as prefix sums so a fold decision costs what it keeps. *record_folds*
    False leaves the summarizer calls out of the trace (the benchmark adapter: the harness records one
    request per workload step). *keep_folded* False lets folded messages go once the WORK LOG stands in for
    them (the benchmark adapter, issue 33; since issue 42 the messages themselves, their prefix sums and
    all but the newest ``history_keep_pairs`` pair sizes, not only their texts): nothing in a segment reads
    a folded message again while the log is non-empty (the context shows the pairs from ``covered`` on, a
    fold reads the oldest unfolded pairs, ``_effective_keep`` at most ``history_keep_pairs`` newest pair
    sizes), so the segment's memory stays flat at any length; :attr:`history` then starts at the oldest
    pair kept, while :attr:`pairs`, :attr:`covered` and fold indices count the whole history. A restart's
    :func:`stalled_handoff` reads ``history[-6:]`` (never folded: the keep floor is 6 pairs) and
    ``history[-60:]`` only to synthesize a log when the log is empty (then nothing was let go), so its
    handoff is byte-identical; :meth:`result` and :func:`resume` carry the pairs kept. Upstream keeps
    ``history`` whole (``core/loop.py``).
    *keep_fold_events* False (issue 42) keeps in :attr:`folds` only the folds of the latest call (a long
    run reads them as they happen); :attr:`fold_count` and :attr:`fold_ends` (``covered`` after each
    fold, 8 bytes a fold) cover every fold.
    Not modeled: the Verifier bounce and the repeat and cycle detectors of ``run_attempt``; their
    ``verifier`` and ``stagnation`` memory notes are appended with :meth:`note` by the caller.
    """

    def __init__(
        self,
        sim: Simulation,
        cfg: LoopConfig,
        summarizer: Summarizer,
        *,
        instruction: str,
        opening_extra: str = "",
        agent: str = "actor",
        variant: Variant = FAITHFUL,
        system_prompt: str = "",
        memory_prompt: str = "",
        env_memory_dir: str | None = None,
        rng_name: str = "rsiagent.summarizer",
        record_folds: bool = True,
        keep_folded: bool = True,
        keep_fold_events: bool = True,
    ) -> None:
        self.sim = sim
        self.record_folds = record_folds
        self.keep_folded = keep_folded
        self.keep_fold_events = keep_fold_events
        self._base = 0  # folded pairs let go from the front of the history (``keep_folded`` False)
        self.cfg = cfg
        self.summarizer = summarizer
        self.instruction = instruction
        self.agent = agent
        self.variant = variant
        self.system_prompt = system_prompt
        self.memory_prompt = memory_prompt
        self.env_memory_dir = env_memory_dir
        self.rng = sim.rng(rng_name)
        self.history: list[Message] = []
        # machine integers (8 bytes each, not a 36-byte int object and its pointer): ``_cum[j]`` is the
        # size of the history's messages before message ``2 * _base + j``; ``_pair_content`` the content
        # length of the newest pairs (all of them, or with ``keep_folded`` False at least the keep window's)
        self._cum = array("q", [0])
        self._pair_content = array("q")
        self.covered = 0
        self.summary = ""
        self.entries: list[str] = []  # fixed variant ``append-only-worklog``: the log's entries, oldest first
        self.folds: list[FoldEvent] = []  # every fold, or (``keep_fold_events`` False) the last call's
        self.fold_count = 0  # every fold
        self.fold_ends = array("q")  # ``covered`` after each fold: fold k covers [ends[k-1], ends[k])
        self.sized = 0  # the size the last model call's fold left (upstream's ``size()`` at the call)
        opening = opening_message(instruction)
        self.pending: str | None = f"{opening_extra}\n\n{opening}" if opening_extra else opening
        self.opening = self.pending  # the TASK message as first sent (``append-only-worklog`` keeps it)
        self.prior: tuple[Message, ...] = ()  # earlier attempts' history (``history + h2``)

    @property
    def pairs(self) -> int:
        return self._base + len(self.history) // 2

    @property
    def messages(self) -> list[Message]:
        """The history (``[user, assistant, ...]``; with ``keep_folded`` False, from pair ``pairs - len // 2``
        on: the folded pairs let go)."""
        return self.history

    def observe(self, text: str) -> None:
        """The next user message (an observation, a bounce, a nudge): pending until the next model call."""
        self.pending = text

    def note(self, event: str) -> str:
        """Append the ``event`` memory-revisit note to the pending message (it then enters the history);
        returns the note ("" when no memory is attached)."""
        text = memory_revisit(self.env_memory_dir, event)
        if text:
            self.pending = (self.pending or "") + text
        return text

    def call(
        self, reply: str, *, question: str = "", route: str = "loop.step", record: bool = True, **detail: Any
    ) -> list[str]:
        """One model call: fold, assemble and (optionally) record the context, then append the pending
        user message and *reply* to the history. Returns the context parts. *question* is a transient part
        after the pending message (the benchmark's probe; it never enters the history)."""
        if self.pending is None:
            raise ValueError("no pending user message: observe() first")
        before = self.covered
        if not self.keep_fold_events:
            self.folds.clear()
        if self.cfg.folding:
            self.maybe_fold()
            if self.covered > before:
                self.note("fold")
        self.sized = self.size()
        parts, kinds = self._context(question)
        if record:
            self.sim.request(SYSTEM, route, parts, agent=self.agent, kinds=kinds, **detail)
        self._append(Message("user", self.pending), Message("assistant", reply or "(empty reply)"))
        self.pending = None
        return parts

    def _append(self, user: Message, assistant: Message) -> None:
        for m in (user, assistant):
            self.history.append(m)
            self._cum.append(self._cum[-1] + len(m.content) + len(m.reasoning))
        sizes = self._pair_content
        sizes.append(len(user.content) + len(assistant.content))
        if not self.keep_folded:  # only the newest ``history_keep_pairs`` are read (``_effective_keep``)
            need = max(self.cfg.history_keep_pairs, KEEP_FLOOR)
            if len(sizes) > 2 * need + 64:
                del sizes[: len(sizes) - need]

    def message_chars(self, i: int) -> int:
        """Content plus reasoning length of history message *i* (``IndexError`` for a message let go)."""
        j = i - 2 * self._base
        if j < 0:
            raise IndexError(f"history message {i} was folded and let go")
        return self._cum[j + 1] - self._cum[j]

    def _release_folded(self) -> None:
        """``keep_folded`` False: let the folded messages go (their texts and their prefix sums) once the
        WORK LOG is non-empty (with an empty log the context shows the whole history, so they stay until a
        fold writes one; a non-empty log never becomes empty again). The pair indices stay those of the
        whole history (``_base`` pairs are gone from its front)."""
        if self.keep_folded or not self.summary or self._base >= self.covered:
            return
        drop = 2 * (self.covered - self._base)
        del self.history[:drop]
        del self._cum[:drop]
        self._base = self.covered

    def size(self) -> int:
        """``len(summary)`` + content + reasoning of the unfolded messages (the pending one excluded)."""
        return len(self.summary) + self._cum[-1] - self._cum[2 * (self.covered - self._base)]

    @property
    def pair_sizes(self) -> list[int]:
        """The content length of each (user, assistant) pair (what ``_effective_keep`` sums; with
        ``keep_folded`` False, of the newest pairs only)."""
        return list(self._pair_content)

    def keep(self) -> int:
        """``_effective_keep`` over every pair of the history. Fixed variant ``keep-under-low-water``: with
        high water set, the keep window is character-budgeted at most to the low-water mark minus the WORK
        LOG (the 6-pair floor and the ``history_keep_pairs`` ceiling stay), so a fold can bring the
        context there."""
        c = self.cfg
        budget = c.keep_chars
        if c.ctx_high_water > 0 and self.variant.has("keep-under-low-water"):
            room = max(1, (c.ctx_low_water or c.ctx_high_water // 2) - len(self.summary))
            budget = min(budget, room) if budget > 0 else room
        return _effective_keep_sizes(self._pair_content, c.history_keep_pairs, budget, c.keep_ceiling)

    def foldable(self) -> int:
        return self.pairs - self.keep() - self.covered

    def maybe_fold(self) -> list[FoldEvent]:
        """``_fold_summary``: with ``ctx_high_water`` set, above it fold exactly ``fold_batch`` oldest pairs
        while size > low and a full batch lies outside the keep window (the v11 floor guard, deliberate:
        at most one fold per ``fold_batch`` turns), which can stop above high water; with
        ``ctx_high_water`` 0, once a batch is foldable fold every foldable pair in one call. Off switch
        ``fold-off``: never fold."""
        c = self.cfg
        out: list[FoldEvent] = []
        if self.variant.has("fold-off"):
            return out
        if c.ctx_high_water <= 0:
            n = self.pairs - self.keep() - self.covered
            if n >= c.fold_batch:
                ev = self._fold_once(n)
                if ev is not None:
                    out.append(ev)
            return out
        size = self.size()
        if size <= c.ctx_high_water:
            return out
        keep = self.keep()  # (pure: upstream computes it first; only needed above high water)
        low = c.ctx_low_water or c.ctx_high_water // 2
        while size > low and self.pairs - keep - self.covered >= c.fold_batch:
            ev = self._fold_once(c.fold_batch)
            if ev is None:
                break
            out.append(ev)
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

    def _fold_once(self, n: int) -> FoldEvent | None:
        """``_fold_once``: one summarizer call folds the *n* oldest unfolded pairs into the WORK LOG; a
        non-blank answer becomes ``_cap_worklog(out.strip(), cap)``, a blank one the digest fallback.
        Fixed variant ``digest-keeps-log``: a blank answer whose digest would overflow the cap leaves the
        batch unfolded (verbatim in the context; the next fold retries) and returns None. Off switches:
        ``fold-input-off`` shows the summarizer nothing, ``digest-off`` drops a blank answer's batch."""
        first = self.covered
        batch = self.history[2 * (first - self._base) : 2 * (first + n - self._base)]
        rendered = render_fold(batch, complete=self.variant.has("complete-fold-input"))
        if self.variant.has("fold-input-off"):
            rendered = ""
        if self.record_folds:
            self.sim.request(
                SYSTEM,
                "loop.fold",
                [SUMMARIZER_SYSTEM, fold_request(self.summary, rendered)],
                agent=self.agent,
                kinds=["system", "worklog"],
                pairs=n,
            )
        out = self.summarizer.summarize(self.summary, rendered, self.rng)
        if out.strip() and self.variant.has("append-only-worklog"):
            self._append_entry(out.strip())
            mode = "summary"
        elif out.strip():
            self.summary = cap_worklog(out.strip(), self.cfg.worklog_max_chars)
            mode = "summary"
        elif self.variant.has("digest-off"):
            mode = "dropped"
        elif self.variant.has("digest-keeps-log") and (
            len(self.summary) + 1 + len("\n".join(digest_lines(batch))) > self.cfg.worklog_max_chars
        ):
            self.sim.trace.op(
                SYSTEM, "fold_deferred", agent=self.agent, phase="info", first_pair=first, pairs=n
            )
            return None
        else:
            digest = digest_fallback(self.summary, batch, self.cfg.worklog_max_chars)
            if self.variant.has("append-only-worklog"):
                self._append_entry(digest)
            else:
                self.summary = digest
            mode = "digest"
        seen: set[str] = set()
        for m in batch:
            seen |= extract_facts(m.content)
        lost = tuple(sorted(seen - extract_facts(rendered)))
        self.covered += n
        self._release_folded()
        ev = FoldEvent(first, n, mode, len(self.summary), lost, self.pairs)
        self.folds.append(ev)
        self.fold_count += 1
        self.fold_ends.append(self.covered)
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

    def _append_entry(self, updated: str) -> None:
        """Fixed variant ``append-only-worklog``: the summarizer is asked for the new entries only (modeled
        as the lines of its updated log the current log lacks), appended as one new entry after the old
        ones, which stay byte for byte; a log that would overflow the cap is rewritten once, as upstream
        rewrites it (``_cap_worklog`` of the whole answer), and starts a new series of entries. The request
        then keeps the opening TASK message as first sent instead of upstream's ``TASK (verbatim…)``
        header (:meth:`_context`); like that header, it is not counted in :meth:`size`, so a fixed request
        is that much longer than :meth:`size` says (the opening paragraph: 317 characters here)."""
        old = set(self.summary.splitlines())
        new = "\n".join(line for line in updated.splitlines() if line not in old)
        if not self.entries:
            self.entries = [self.summary] if self.summary else []
        joined = "\n".join([*self.entries, new]) if new else self.summary
        if len(joined) > self.cfg.worklog_max_chars:
            self.summary = cap_worklog(updated, self.cfg.worklog_max_chars)
            self.entries = [self.summary]
        elif new:
            self.entries.append(new)
            self.summary = joined

    def _context(self, question: str = "") -> tuple[list[str], list[str]]:
        parts: list[str] = []
        kinds: list[str] = []
        for text, kind in ((self.system_prompt, "system"), (self.memory_prompt, "memory")):
            if text:
                parts.append(text)
                kinds.append(kind)
        if self.cfg.folding and self.summary and self.variant.has("append-only-worklog"):
            # the TASK message as first sent, then each WORK LOG entry as its own message, oldest first
            entries = self.entries or [self.summary]
            parts += [self.opening or "", WORKLOG_HEADER.lstrip("\n") + entries[0], *entries[1:]]
            kinds += ["message"] + ["worklog"] * len(entries)
            tail = self.history[2 * (self.covered - self._base) :]
        elif self.cfg.folding and self.summary:
            parts.append(TASK_HEADER + self.instruction + WORKLOG_HEADER + self.summary)
            kinds.append("worklog")
            tail = self.history[2 * (self.covered - self._base) :]
        else:
            tail = self.history
        parts += [m.content for m in tail]
        kinds += ["message"] * len(tail)
        if self.pending is not None:
            parts.append(self.pending)
            kinds.append("message")
        if question:
            parts.append(question)
            kinds.append("message")
        return parts, kinds

    def context(self, question: str = "") -> list[str]:
        """The context of the next model call as it stands (no fold): system prompt, the TASK + WORK LOG
        message after a fold, the unfolded history, the pending message and *question*."""
        return self._context(question)[0]

    def result(self, status: str, surface_delta: str = "") -> LoopResult:
        """The segment's ``LoopResult`` (its ``worklog`` is this segment's log; its ``history`` without the
        folded pairs let go, with ``keep_folded`` False)."""
        return LoopResult(status, self.pairs, self.summary, self.prior + tuple(self.history), surface_delta)


def resume_eligible(res: LoopResult, resumes: int, cfg: LoopConfig, wall_left_s: float) -> bool:
    """``run_with_resume`` eligibility: status ``stalled`` (never safety_ceiling, budget or
    stalled_quiescent), ``resumes < max_resumes``, at least 10 iterations and 300 s left."""
    return (
        res.status == ELIGIBLE_STALL
        and resumes < cfg.max_resumes
        and cfg.max_iters - res.iters >= RESUME_MIN_ITERS
        and wall_left_s >= RESUME_MIN_WALL_S
    )


def synthesize_worklog(
    sim: Simulation,
    summarizer: Summarizer,
    history: Sequence[Message],
    max_chars: int,
    *,
    rng_name: str = "rsiagent.summarizer",
    agent: str = "actor",
) -> str:
    """``_synthesize_worklog``: one summarizer call (temperature 0) over ``history[-60:]``, each message
    through :func:`fold_input`, with an empty current log; the result is
    ``_cap_worklog((out or "").strip(), worklog_max_chars)``, so a blank answer gives "".
    Not modeled: the transport pause and retry around the call (``_call_with_transport_pause``)."""
    rendered = render_fold(list(history)[-SYNTH_MESSAGES:])
    sim.request(
        SYSTEM,
        "loop.synthesize_worklog",
        [SUMMARIZER_SYSTEM, fold_request("", rendered)],
        agent=agent,
        kinds=["system", "worklog"],
    )
    out = summarizer.summarize("", rendered, sim.rng(rng_name))
    return cap_worklog((out or "").strip(), max_chars)


def stalled_handoff(
    sim: Simulation,
    cfg: LoopConfig,
    res: LoopResult,
    history: Sequence[Message],
    *,
    variant: Variant = FAITHFUL,
    reviewer: Reviewer | None = None,
    summarizer: Summarizer | None = None,
    env_memory_dir: str | None = None,
    agent: str = "actor",
) -> Handoff:
    """Build the restart handoff of ``run_with_resume`` (MEM-OBJ-work-log, MEM-RTE-worklog-fold).

    ``wl`` is ``res.worklog`` (or, when empty, synthesis is on and the history is not, the synthesized
    log: one summarizer call). On the pivot path (``strategy_pivot`` and no file delta) the strategy
    review sees the last 6 messages (≤1,500 chars each) and ``res.worklog`` (≤8,000, ``review_cap``), not
    ``wl``; its answer is cut at 2,500; the handoff is
    ``pivot_handoff_message(review, wl)`` (log ≤6,000), otherwise ``handoff_message(wl)`` (≤12,000), each
    log section left out when blank, then the ``recovery`` memory note. Fixes: ``review-gets-wl`` and
    ``handoff-cap-worklog`` (cap at ``worklog_max_chars``). Off switches: ``handoff-log-off`` hands no log
    over, ``review-off`` asks the review about nothing.
    """
    reviewer = reviewer or Reviewer()
    wl = res.worklog if cfg.resume_with_worklog else ""
    if not wl and cfg.resume_synthesize_worklog and history:
        wl = synthesize_worklog(sim, summarizer or Summarizer(), history, cfg.worklog_max_chars, agent=agent)
    fix_cap = variant.has("handoff-cap-worklog")
    handed = "" if variant.has("handoff-log-off") else wl
    if cfg.strategy_pivot and res.surface_delta == "":
        review_log = wl if variant.has("review-gets-wl") else res.worklog
        tail = "\n\n".join(
            render_turn(m, str(m.content)[:REVIEW_MESSAGE_CHARS]) for m in list(history)[-REVIEW_MESSAGES:]
        )
        ask = (
            strategy_review_ask("", "")
            if variant.has("review-off")
            else strategy_review_ask(review_log, tail, cfg.review_cap)
        )
        sim.request(
            SYSTEM, "loop.strategy_review", [REVIEW_SYSTEM, ask], agent=agent, kinds=["system", "worklog"]
        )
        review = (reviewer.review(ask, "") or "").strip()[:REVIEW_OUT_CAP]
        msg = pivot_handoff_message(review, handed, cfg.worklog_max_chars if fix_cap else cfg.pivot_cap)
        out = Handoff(msg, wl, True, review, ask)
    else:
        msg = handoff_message(handed, cfg.worklog_max_chars if fix_cap else cfg.handoff_cap)
        out = Handoff(msg, wl, False)
    note = memory_revisit(env_memory_dir, "recovery")
    if note:
        out = replace(out, message=out.message + note)
    sim.trace.op(
        SYSTEM,
        "stalled_handoff",
        agent=agent,
        pivot=out.pivot,
        worklog_chars=len(wl),
        handoff_chars=len(out.message),
    )
    return out


def resume(loop: ActorLoop, handoff: Handoff) -> ActorLoop:
    """A fresh attempt (``run_attempt(opening_extra=extra)``): a new context on the same machine whose
    opening message starts with the handoff; the old history is kept aside (``history + h2``) so a later
    synthesis sees both attempts."""
    fresh = ActorLoop(
        loop.sim,
        loop.cfg,
        loop.summarizer,
        instruction=loop.instruction,
        opening_extra=handoff.message,
        agent=loop.agent,
        variant=loop.variant,
        system_prompt=loop.system_prompt,
        memory_prompt=loop.memory_prompt,
        env_memory_dir=loop.env_memory_dir,
    )
    fresh.prior = loop.prior + tuple(loop.history)
    loop.sim.trace.op(SYSTEM, "resume", agent=loop.agent, handoff_chars=len(handoff.message))
    return fresh
