"""The ``pager`` benchmark adapter: each step's text is one message into the FIFO queue (and the recall
store); a question step (a conversation's question or a fact-token probe) searches the recall store by the
question text and pages the hits into the request (:class:`~reference.pager.model.Pager`); any other
step's request is the context as it stands.

Fact-token steps are ``user`` messages with id ``step-<index>``; a probe step queues its observation before
the question is answered; a conversation question is not queued (questions are independent).
``ranking()`` ranks the whole recall store for the retrieval metrics; ``lost_reason(turn_id)``:
``in-request``, ``not-retrieved@rank R > page P``, ``not-retrieved@no match``, ``cut-by-budget@rank R``,
``not-retrieved@search off``.
"""

from __future__ import annotations

from typing import Any

from reference.pager.model import Pager, Settings
from reference.retrieval import load_retriever
from sim.conversations.retrieval import Ranking
from sim.engine import Simulation
from sim.variant import FAITHFUL, Variant
from sim.workload import Drawn, ModelRequest, StorageStats, WorkStep


class Adapter:
    name = "pager"

    def __init__(
        self, sim: Simulation, budget: int, drawn: Drawn, *, variant: Variant = FAITHFUL, knobs: Any = None
    ) -> None:
        from reference.pager.design import Knobs

        k = knobs if knobs is not None else Knobs.model_validate({})
        load_retriever(k.retriever)
        settings = Settings(k.page_size, k.evict_at, k.evict_fraction, k.keep_last, k.search, k.tokenizer,
                            k.retriever, k.index_speaker)  # fmt: skip
        self.pager = Pager(budget, settings, variant=variant)
        self.written = 0
        self._ranked = False

    def step(self, step: WorkStep) -> ModelRequest:
        p = self.pager
        if step.observation:
            tid = step.turn_id or f"step-{step.index}"
            p.add(tid, step.session_id or "", step.role or "user", step.speaker or "", step.observation)
            self.written += len(step.observation.encode())
        if step.question:
            self._ranked = True
            return ModelRequest(tuple(p.request(step.question)), None, "search")
        return ModelRequest(tuple(p.context()), None, "queue")

    def ranking(self) -> Ranking | None:
        return Ranking("turn", tuple(self.pager.last_ranked)) if self._ranked else None

    def lost_reason(self, turn_id: str) -> str:
        return self.pager.last_reasons.get(turn_id, "not-stored")

    def storage(self) -> StorageStats:
        return StorageStats(0, self.written, len(self.pager.recall))
