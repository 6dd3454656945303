"""The window's benchmark adapter: every step's message into the chat history (:mod:`reference.common`),
and each request ``trim_messages(strategy="last")`` of the system prompt, the history and the question, to
``max_tokens = round(budget * window_fraction)`` (default: the whole provider window).

A lost evidence turn's reason (:meth:`Adapter.lost_reason`): ``trimmed-out-of-window`` (older than the
newest messages that fit), ``dropped-by-start-on-human`` (it fit, but came before the first human message
of the kept run, so ``start_on="human"`` cut it).
"""

from __future__ import annotations

from typing import Any

from reference.common import Message, MessageAdapter
from reference.window.design import Knobs
from reference.window.model import Window
from sim.engine import Simulation
from sim.variant import FAITHFUL, Variant
from sim.workload import Drawn


class Adapter(MessageAdapter):
    """The recency window at provider window *budget* (no switches: *variant* is upstream's)."""

    name = "window"
    route = "trim_messages.last"

    def __init__(
        self, sim: Simulation, budget: int, drawn: Drawn, *, variant: Variant = FAITHFUL, knobs: Any = None
    ) -> None:
        super().__init__()
        k: Knobs = knobs if knobs is not None else Knobs.model_validate({})
        self.window = Window(self.system, max(1, round(budget * k.window_fraction)),
                             start_on_human=k.start_on_human)  # fmt: skip

    def add(self, msg: Message) -> None:
        self.window.add(msg)

    def context(self, question: Message | None) -> list[Message]:
        return self.window.context(question)

    def lost_reason(self, turn_id: str) -> str:
        """Why conversation turn *turn_id* is not in the last question's request."""
        return self.window.lost_reason(turn_id)
