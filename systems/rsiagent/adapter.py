"""The RSIAgent adapter for the cross-design context-budget benchmark: a target-role Actor loop with WORK LOG
folding (MEM-RTE-worklog-fold), a frozen bank shown as a names-and-sizes inventory (RT-BAP-actor-method).

Host policy assumed:

* The run is a target (evaluation) run, the only route where upstream folds: the target role's loop
  settings (``ROLE_DEFAULTS["target"]``) with its character thresholds scaled to the budget.
  **The scaling is our assumption, not upstream behaviour**: upstream's ``keep_chars`` (500,000),
  ``ctx_high_water`` (900,000), ``ctx_low_water`` (500,000) and ``worklog_max_chars`` (500,000) are
  fixed character counts that know nothing of the provider window. We assume they were sized for a
  262,144-token window (900,000 chars ≈ 3.4 chars/token × 262,144) and multiply each by
  ``budget / 262_144`` (:func:`scaled_target`). Pair counts (``history_keep_pairs`` 80, ``fold_batch``
  10, the 6-pair keep floor) and the literal 12,000 / 6,000-character handoff slices are not scaled.
* **Finding, kept faithful: small windows overflow.** At an 8,000-token window about three quarters of
  the requests exceed the window (429 of 572 over seeds 0-2 of ``memsim bench --designs rsiagent
  --budgets 8000``; 188 of 220 for seed 0). The design cannot fit there: ``_effective_keep`` never keeps
  fewer than 6 pairs, and folds come in whole batches of ``fold_batch`` = 10 pairs once size passes high
  water (fewer foldable pairs than a batch fold nothing, §3.7), so the unfolded tail holds 6 to 15 pairs
  (more while stuck) of ~1,100-token observations. The six newest observations alone exceed 8,000
  tokens in about a third of the overflowing requests, before the charter, WORK LOG and question are
  added. (The workload is ~4.7 chars/token, so the scaled high water of 27,466 chars is ~5,800 tokens.)
  We do not shrink the floor or the batch to make it fit; at 32,000 and 128,000 tokens nothing
  overflows.
* Each workload step is one Actor turn: a short ``PROGRAM:`` reply and the observation as the
  environment's message. The loop folds after each turn as upstream does; the summarizer keeps every fact
  token it sees minus ``drawn.lossiness`` of the new ones (stream ``rsiagent.adapter.summarizer``).
* The frozen bank is attached at the start (a push of a small lesson tree with no workload facts) and is
  not written during the run (phase-3 freeze, no writeback); the Actor never re-reads it here.
* No stall occurs, so no restart; the probe question is appended as the last part.
* The request is: system charter with the bank inventory, ``TASK (verbatim…)`` + WORK LOG as one message
  (after a fold), the unfolded pairs, any memory-revisit note, and the question. RSIAgent has no token
  estimator (its budgets are characters), so ``estimate`` is None.
* Storage: the frozen bank copy, the raw transcript archive (every message appended) and the saved WORK
  LOG artifact (rewritten at each fold).
"""

from __future__ import annotations

from typing import Any

from sim.engine import Simulation
from sim.variant import FAITHFUL, Variant
from sim.workload import Drawn, ModelRequest, StorageStats, WorkStep
from systems.rsiagent.model import ROLE_DEFAULTS, ActorLoop, inventory_listing
from systems.rsiagent.policies import Summarizer
from systems.rsiagent.state import LoopConfig

#: The window we assume upstream's target-role character thresholds were sized for (tokens).
UPSTREAM_WINDOW_TOKENS = 262_144

CHARTER = (
    "You are the Actor on a target run. Your durable memory at ~/.memory is attached read-only evidence; "
    "read files through Programs if useful."
)
FROZEN_BANK = {
    "INDEX.md": b"Lessons from practice. Read what is relevant; nothing here is privileged.\n",
    "lessons/verify-before-submit.md": b"Re-probe the machine before submitting; the log may be stale.\n",
    "tools/probe.py": b"import os\nprint(sorted(os.listdir('.')))\n",
}


def scaled_target(budget: int) -> LoopConfig:
    """The target role's loop settings with its character thresholds scaled to *budget* tokens
    (``budget / 262,144``: our assumption, not upstream behaviour)."""
    return ROLE_DEFAULTS["target"].scaled(budget / UPSTREAM_WINDOW_TOKENS)


class Adapter:
    """RSIAgent under the benchmark's workload (see the module docstring for the host policy)."""

    name = "rsiagent"

    def __init__(
        self, sim: Simulation, budget: int, drawn: Drawn, *, variant: Variant = FAITHFUL, knobs: Any = None
    ) -> None:
        self.sim = sim
        self.variant, self.knobs = variant, knobs  # switches and knobs: not used yet
        self.budget = budget
        self.cfg = scaled_target(budget)
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
        )
        # pair 0: the opening TASK message and the first (reconnaissance) reply, before the workload
        self.loop.call("PROGRAM: recon", record=False)
        bank_bytes = sum(len(d) for d in FROZEN_BANK.values())
        self._durable_bank = bank_bytes
        self._transcript = 0
        self._worklog = 0
        self._written = bank_bytes
        self._ops = len(FROZEN_BANK)

    def step(self, step: WorkStep) -> ModelRequest:
        """One Actor turn: the observation is the pending user message; the model call folds first (the
        pending observation is not foldable), then the context is assembled with the probe question as a
        transient last part, and the observation and the reply join the history."""
        folds = len(self.loop.folds)
        self.loop.observe(step.observation)
        reply = f"PROGRAM: inspect step {step.index}"
        parts = tuple(self.loop.call(reply, question=step.question, record=False))
        added = len(step.observation.encode()) + len(reply.encode())
        self._transcript += added
        self._written += added
        self._ops += 2
        for _ in range(len(self.loop.folds) - folds):
            self._worklog = len(self.loop.summary.encode())
            self._written += self._worklog
            self._ops += 1
        return ModelRequest(parts, None, "rsiagent.target.step")

    def storage(self) -> StorageStats:
        """Frozen bank copy + raw transcript archive + the saved WORK LOG."""
        return StorageStats(self._durable_bank + self._transcript + self._worklog, self._written, self._ops)
