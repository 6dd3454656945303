"""The ``bm25`` benchmark adapter: each step's text is one stored turn; a question step (a conversation's
question, or a fact-token probe) is answered by retrieving the top K documents by the question text and
packing them beside the recent tail (:class:`~reference.bm25.model.Bm25Memory`); any other step's request
is the system prompt and the recent tail.

A fact-token step is a turn of role ``user`` with id ``step-<index>`` and no session (each step its own
session at session granularity); a probe step stores its observation before the question is answered.
A conversation question is not stored (questions are independent). ``ranking()`` is the last question's
ranking for the retrieval metrics (:mod:`sim.conversations.retrieval`); ``lost_reason(turn_id)`` says where
a turn went: ``in-request``, ``not-retrieved@rank R > K k``, ``not-retrieved@no match``, ``cut-by-budget@rank
R``, ``not-indexed@role`` or ``not-retrieved@retrieval off``.
"""

from __future__ import annotations

from typing import Any

from reference.bm25.model import Bm25Memory, Settings
from reference.retrieval import load_retriever
from sim.conversations.retrieval import Ranking
from sim.engine import Simulation
from sim.variant import FAITHFUL, Variant
from sim.workload import Drawn, ModelRequest, StorageStats, WorkStep


class Adapter:
    name = "bm25"

    def __init__(
        self, sim: Simulation, budget: int, drawn: Drawn, *, variant: Variant = FAITHFUL, knobs: Any = None
    ) -> None:
        from reference.bm25.design import Knobs

        k = knobs if knobs is not None else Knobs.model_validate({})
        load_retriever(k.retriever)  # a bad name is refused before the run
        self.budget = budget
        self.memory = Bm25Memory(
            Settings(k.k, k.tail, k.granularity, k.roles, k.order, k.tokenizer, k.retriever, k.index_speaker),
            variant=variant,
        )
        self.written = 0
        self._ranked = False

    def step(self, step: WorkStep) -> ModelRequest:
        m = self.memory
        if step.observation:
            tid = step.turn_id or f"step-{step.index}"
            sid = step.session_id if step.session_id is not None else (tid if step.turn_id is None else "")
            m.add(tid, sid, step.role or "user", step.speaker or "", step.observation)
            self.written += len(step.observation.encode())
        if step.question:
            parts = m.request(step.question, self.budget)
            self._ranked = True
            return ModelRequest(tuple(parts), None, "retrieve")
        return ModelRequest(tuple(m.recent(self.budget)), None, "recent")

    def ranking(self) -> Ranking | None:
        if not self._ranked:
            return None
        return Ranking(self.memory.settings.granularity, tuple(self.memory.last_ranked))

    def lost_reason(self, turn_id: str) -> str:
        return self.memory.last_reasons.get(turn_id, "not-stored")

    def storage(self) -> StorageStats:
        return StorageStats(0, self.written, len(self.memory.turns))
