"""The RSIAgent adapter for the cross-design context-budget benchmark: a target-role Actor loop with WORK LOG
folding (MEM-RTE-worklog-fold), a frozen bank shown as a names-and-sizes inventory (RT-BAP-actor-method).

What matches upstream (``core/loop.py`` ``run_attempt`` / ``_fold_summary`` @ 57c8ac28): the history is
(user, assistant) pairs whose pair 0 is the opening TASK message; the fold runs before each model call
and the pending observation is neither counted nor foldable; the keep window (``_effective_keep``: the
6-pair floor, the character budget, the ``history_keep_pairs`` ceiling), the high/low-water hysteresis in
full ``fold_batch`` batches (the floor guard), the head/tail fold input, the stripped and capped summary,
the digest fallback, the fold memory note appended to the pending message, and the context after a fold
(``TASK (verbatim, unchanged ...)`` + the raw instruction + the WORK LOG as one message, then the unfolded
history, then the pending message). The variant (``--designs rsiagent:fixed``) switches the fold fixes on;
the knobs (:class:`systems.rsiagent.design.Knobs`) set the loop settings.

Host policy assumed (not upstream):

* The run is a target (evaluation) run, the only route where upstream folds: the target role's loop
  settings (``ROLE_DEFAULTS["target"]``, or the knobs) with its character thresholds scaled to the budget.
  **The scaling is our assumption, not upstream behaviour**: upstream's ``keep_chars`` (500,000),
  ``ctx_high_water`` (900,000), ``ctx_low_water`` (500,000) and ``worklog_max_chars`` (500,000) are
  fixed character counts that know nothing of the provider window. We assume they were sized for a
  262,144-token window (900,000 chars ≈ 3.4 chars/token × 262,144) and multiply each by
  ``budget / 262_144`` (:func:`scaled_target`; knob ``scale=false`` turns it off). Pair counts
  (``history_keep_pairs`` 80, ``fold_batch`` 10, the 6-pair keep floor) are not scaled.
* **Finding, kept faithful: small windows overflow.** At an 8,000-token window 466 of the 572 requests
  over seeds 0-2 of ``memsim bench --designs rsiagent --budgets 8000`` exceed the window (202 of 220 for
  seed 0; 429 before the fold's alignment was corrected: the pending observation is never foldable and
  pair 0 is the TASK message). The design cannot fit there: ``_effective_keep`` never keeps fewer than
  6 pairs, and folds come in whole batches of ``fold_batch`` = 10 pairs once size passes high water
  (fewer foldable pairs than a batch fold nothing, the v11 floor guard), so the unfolded history holds
  6 to 30 pairs of ~1,100-token observations: in 442 of the 466 the unfolded history and the pending
  observation alone exceed the window, in 134 the six newest observations alone do. (The workload is
  ~4.7 chars/token, so the scaled high water of 27,466 chars is ~5,800 tokens.) We do not shrink the
  floor or the batch to make it fit. At 32,000 tokens 2 of 572 requests overflow (a large pending
  observation), at 128,000 none; with every fix on (``rsiagent:fixed``) 460 of 572 at 8,000.
* Pair 0 is the opening TASK message and a first reconnaissance reply, made before the workload (not a
  workload step, so not recorded). Each workload step is then one model call: its observation is the
  pending user message, the reply is a short ``PROGRAM:``; the summarizer keeps every fact token it sees
  minus ``drawn.lossiness`` of the new ones (stream ``rsiagent.adapter.summarizer``). Its calls are not
  recorded (the harness records one request per step).
* The frozen bank is attached at the start (a small lesson tree with no workload facts, shown through
  ``memory_preamble``) and is not written during the run (phase-3 freeze, no writeback); the Actor never
  re-reads it here.
* No stall occurs, so no restart; the probe question is a transient last part (it never enters the
  history).
* The request is: the charter, the bank inventory, ``TASK (verbatim…)`` + WORK LOG as one message (after a
  fold), the unfolded history, the pending observation (with any fold note), and the question. RSIAgent
  has no token estimator (its budgets are characters), so ``estimate`` is None.
* Storage: the frozen bank copy, the raw transcript archive (every message appended) and the saved WORK
  LOG artifact (rewritten at each fold).
* The loop lets a folded message go once the WORK LOG stands in for it (``keep_folded=False``, issue 33;
  since issue 42 the message itself, not only its text) and counts its folds instead of keeping them
  (``keep_fold_events=False``): nothing here reads them again (a lost turn's reason needs only the
  turn's length, kept beside its pair, and the fold ends), so a long cell's memory stays flat; the
  transcript archive is counted in bytes, as before.

**Real conversations** (:mod:`sim.conversations`; turn steps carry ``turn_id``): a user turn is the
pending user message and the assistant turn after it is the model's reply, so each (user, assistant)
exchange is one model call and one history pair, folded as upstream folds pairs. A user turn with no
assistant reply before the next user turn (or a question) is answered with an empty reply; an
assistant turn with no user turn before it follows a ``(continue)`` user message. Sessions and dates
change nothing (a target run has no clock-driven memory). The fold summary stand-in is
:class:`~systems.rsiagent.policies.VerbatimSummarizer` (knob ``conversation_summary_chars``): upstream's
head/tail fold input kept verbatim, then upstream's WORK LOG cap. A question is asked from the state
the turns left, without entering the history: the context as it stands (no fold runs for it) with the
question as the last part. Not modeled: the fold the question's own call would run first (the state
was folded at the last turn's call). A lost evidence turn's reason (:meth:`Adapter.lost_reason`):
``elided-in-fold-input@fold<k>`` (the turn was longer than upstream's 1,500 + 2,500-character fold
input, so no summary of it holds the whole text) or ``folded-out-of-worklog@fold<k>`` (folded whole,
then cut by the WORK LOG cap or the summary's budget); ``k`` counts folds from 1.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import replace
from typing import Any

from sim.engine import Simulation
from sim.variant import FAITHFUL, Variant
from sim.workload import Drawn, ModelRequest, StorageStats, WorkStep
from systems.rsiagent.design import Knobs
from systems.rsiagent.model import ROLE_DEFAULTS, ActorLoop, inventory_listing
from systems.rsiagent.model.functions import fold_elides
from systems.rsiagent.policies import Summarizer, VerbatimSummarizer
from systems.rsiagent.state import LoopConfig

#: The window we assume upstream's target-role character thresholds were sized for (tokens).
UPSTREAM_WINDOW_TOKENS = Knobs.model_validate({}).upstream_window

CHARTER = (
    "You are the Actor on a target run. Your durable memory at ~/.memory is attached read-only evidence; "
    "read files through Programs if useful."
)
FROZEN_BANK = {
    "INDEX.md": b"Lessons from practice. Read what is relevant; nothing here is privileged.\n",
    "lessons/verify-before-submit.md": b"Re-probe the machine before submitting; the log may be stale.\n",
    "tools/probe.py": b"import os\nprint(sorted(os.listdir('.')))\n",
}


def scaled_target(budget: int, knobs: Knobs | None = None) -> LoopConfig:
    """The target role's loop settings (as set by *knobs*, upstream's by default) with its character
    thresholds scaled to *budget* tokens by ``budget / upstream_window`` (our assumption, not upstream
    behaviour) unless ``knobs.scale`` is false."""
    k = knobs or Knobs.model_validate({})
    cfg = replace(
        ROLE_DEFAULTS["target"],
        history_keep_pairs=k.history_keep_pairs,
        keep_chars=k.keep_chars,
        ctx_high_water=k.ctx_high_water,
        ctx_low_water=k.ctx_low_water,
        fold_batch=k.fold_batch,
        worklog_max_chars=k.worklog_max_chars,
    )
    return cfg.scaled(budget / k.upstream_window) if k.scale else cfg


class Adapter:
    """RSIAgent under the benchmark's workload (see the module docstring for the host policy)."""

    name = "rsiagent"

    def __init__(
        self, sim: Simulation, budget: int, drawn: Drawn, *, variant: Variant = FAITHFUL, knobs: Any = None
    ) -> None:
        self.sim = sim
        self.variant = variant
        self.knobs = knobs if isinstance(knobs, Knobs) else Knobs.model_validate(knobs or {})
        self.budget = budget
        self.cfg = scaled_target(budget, self.knobs)
        self.loop = ActorLoop(
            sim,
            self.cfg,
            Summarizer(lossiness=drawn.lossiness),
            instruction="Complete the target task; answer questions about values you observed.",
            agent="actor",
            variant=variant,
            system_prompt=CHARTER,
            memory_prompt=inventory_listing(FROZEN_BANK, "ale"),
            env_memory_dir="~/.memory",
            rng_name="rsiagent.adapter.summarizer",
            record_folds=False,
            keep_folded=False,  # issue 33: a folded message is never read again here
            keep_fold_events=False,  # issue 42: folds are counted (fold_count, fold_ends), not kept
        )
        # pair 0: the opening TASK message and the first (reconnaissance) reply, before the workload
        self.loop.call("PROGRAM: recon", record=False)
        bank_bytes = sum(len(d) for d in FROZEN_BANK.values())
        self._durable_bank = bank_bytes
        self._transcript = 0
        self._worklog = 0
        self._written = bank_bytes
        self._ops = len(FROZEN_BANK)
        # real conversations: the pending user turn's id, and each turn's (pair, its message's characters)
        self._pending_turn: str | None = None
        self._pair_of: dict[str, tuple[int, int]] = {}

    def step(self, step: WorkStep) -> ModelRequest:
        """One Actor turn: the observation is the pending user message; the model call folds first (the
        pending observation is not foldable), then the context is assembled with the probe question as a
        transient last part, and the observation and the reply join the history. A conversation's turn
        and question steps are mapped as the module docstring says."""
        if step.turn_id is not None:
            return self._turn(step)
        if step.question_id is not None:
            self._flush()
            return ModelRequest(tuple(self.loop.context(step.question)), None, "rsiagent.target.step")
        self.loop.observe(step.observation)
        return self._call(step.observation, f"PROGRAM: inspect step {step.index}", step.question)

    def _call(self, user: str, reply: str, question: str = "") -> ModelRequest:
        folds = self.loop.fold_count
        parts = tuple(self.loop.call(reply, question=question, record=False))
        added = len(user.encode()) + len(reply.encode())
        self._transcript += added
        self._written += added
        self._ops += 2
        for _ in range(self.loop.fold_count - folds):
            self._worklog = len(self.loop.summary.encode())
            self._written += self._worklog
            self._ops += 1
        return ModelRequest(parts, None, "rsiagent.target.step")

    def _turn(self, step: WorkStep) -> ModelRequest:
        """A conversation turn: a user turn waits as the pending message; an assistant turn is its reply."""
        if not isinstance(self.loop.summarizer, VerbatimSummarizer):
            self.loop.summarizer = VerbatimSummarizer(self.knobs.conversation_summary_chars)
        if step.role != "assistant":
            self._flush()
            self.loop.observe(step.observation)
            self._pending_turn = step.turn_id
            return ModelRequest(tuple(self.loop.context()), None, "rsiagent.target.step")
        if self.loop.pending is None:
            self.loop.observe("(continue)")
        user = self.loop.pending or ""
        req = self._call(user, step.observation or "(empty reply)")
        pair = self.loop.pairs - 1
        if self._pending_turn is not None:
            self._pair_of[self._pending_turn] = (pair, self.loop.message_chars(2 * pair))
            self._pending_turn = None
        assert step.turn_id is not None
        self._pair_of[step.turn_id] = (pair, self.loop.message_chars(2 * pair + 1))
        return req

    def _flush(self) -> None:
        """A pending user turn with no reply yet gets an empty one (its pair then joins the history)."""
        if self.loop.pending is None or self._pending_turn is None:
            return
        self._call(self.loop.pending, "")
        pair = self.loop.pairs - 1
        self._pair_of[self._pending_turn] = (pair, self.loop.message_chars(2 * pair))
        self._pending_turn = None

    def lost_reason(self, turn_id: str) -> str:
        """Why conversation turn *turn_id* is not in the last question's request (the fold that took it)."""
        where = self._pair_of.get(turn_id)
        if where is None:
            return "not-in-request"
        pair, chars = where
        if pair >= self.loop.covered:
            return "not-in-request"
        k = bisect_right(self.loop.fold_ends, pair) + 1  # fold k covers pairs [ends[k-2], ends[k-1])
        # the message itself is gone (keep_folded=False): its length decides (no reasoning here)
        if fold_elides(chars) and not self.variant.has("complete-fold-input"):
            return f"elided-in-fold-input@fold{k}"
        return f"folded-out-of-worklog@fold{k}"

    def storage(self) -> StorageStats:
        """Frozen bank copy + raw transcript archive + the saved WORK LOG."""
        return StorageStats(self._durable_bank + self._transcript + self._worklog, self._written, self._ops)
