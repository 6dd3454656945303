"""The summary buffer's benchmark adapter: every step's message into the buffer (:mod:`reference.common`),
``max_token_limit = round(budget * buffer_fraction)`` (knob; LangChain's default is 2,000 tokens whatever
the window), the summary stand-in capped at ``round(budget * summary_fraction)``, and each request the
system prompt, the summary, the buffer and the question. With the defaults (0.6 and 0.25) the request
fits the window but for a long question.

A lost evidence turn's reason (:meth:`Adapter.lost_reason`): ``dropped-in-summary@fold<k>`` (fold k
pruned it and the stand-in did not keep it), ``squeezed-from-summary@fold<k>`` (kept, then squeezed out by
the cap at fold k), ``pruned-no-summary@fold<k>`` (the ``no-summary`` off switch: pruned and gone).
"""

from __future__ import annotations

from typing import Any

from reference.common import Message, MessageAdapter
from reference.summary_buffer.design import Knobs
from reference.summary_buffer.model import SummaryBuffer
from reference.summary_buffer.policies import Summarizer
from reference.summary_buffer.state import NO_SUMMARY, PIN_FACTS
from sim.engine import Simulation
from sim.variant import FAITHFUL, Variant
from sim.workload import Drawn


class Adapter(MessageAdapter):
    """The summary buffer at provider window *budget*, as *variant*, with *knobs*."""

    name = "summary-buffer"
    route = "summary_buffer.load"

    def __init__(
        self, sim: Simulation, budget: int, drawn: Drawn, *, variant: Variant = FAITHFUL, knobs: Any = None
    ) -> None:
        super().__init__()
        k: Knobs = knobs if knobs is not None else Knobs.model_validate({})
        limit = (
            k.max_token_limit if k.max_token_limit is not None else max(1, round(budget * k.buffer_fraction))
        )
        keep = k.summary_keep if k.summary_keep is not None else 1.0 - drawn.lossiness
        summarizer = Summarizer(keep, max(1, round(budget * k.summary_fraction)),
                                sim.rng("summary-buffer.adapter.summarizer"),
                                pin_facts=variant.has(PIN_FACTS))  # fmt: skip
        self.memory = SummaryBuffer(self.system, limit, summarizer, summarize=not variant.has(NO_SUMMARY))

    def add(self, msg: Message) -> None:
        self.memory.add(msg)

    def context(self, question: Message | None) -> list[Message]:
        return self.memory.context(question)

    def lost_reason(self, turn_id: str) -> str:
        """Why conversation turn *turn_id* is not in the last question's request."""
        return self.memory.lost_reason(turn_id)
