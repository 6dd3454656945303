"""What the reference designs share: the chat message a workload step becomes, and the adapter that
feeds steps into a message memory and builds the request from it (issue 39).

A reference design keeps a chat history as LangChain code does: a list of messages with a role
(``human``, ``ai``, ``system``) and a text, each counted once with memsim's exact cl100k count
(:func:`sim.tokens.count_tokens`, no per-message overhead). Workload steps map onto messages so:

* a fact-benchmark step (:mod:`sim.workload`) is one human message, its observation; at a probe the
  question is a separate human message after it, sent with that step's request and not kept;
* a conversation turn (:mod:`sim.conversations`) is a human message (role ``user``) or an AI message
  (role ``assistant``) whose text is ``speaker: text``, the session's header line (``[Session <id>
  (<date>)]``) before a session's first turn; a question is a human message ``Current date: <date>``
  then ``Question: <text>``, sent with its request and not kept (questions are independent). A turn
  step returns only the system prompt (the benchmark scores question requests, as MerchantBench's
  adapter does).

The request is the design's messages in order (system prompt first), one part per message, and carries
the exact count of its parts (``ModelRequest.exact``; the estimate is the same count: these designs
count tokens exactly).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sim.tokens import count_tokens
from sim.workload import ModelRequest, StorageStats, WorkStep

HUMAN, AI, SYSTEM = "human", "ai", "system"

#: The system prompt every reference design sends first (one system message).
SYSTEM_PROMPT = "You are a helpful assistant. Answer the last question from the conversation above."


@dataclass(frozen=True, slots=True)
class Message:
    """One chat message: its role, text, exact cl100k count (counted once), and the conversation turn it
    carries (None for a fact-benchmark observation, a question, a system message)."""

    role: str
    text: str
    tokens: int
    turn_id: str | None = None


def message(role: str, text: str, turn_id: str | None = None) -> Message:
    """A message of *role* with *text*, counted."""
    return Message(role, text, count_tokens(text), turn_id)


def _date(time_s: int | None) -> str:
    from sim.conversations.baselines import date_text

    return date_text(time_s)


def step_message(step: WorkStep) -> Message | None:
    """The message a turn or observation step adds to the history (None for a question step or an empty
    observation)."""
    if step.question_id is not None:
        return None
    if step.turn_id is not None:
        head = ""
        if step.new_session:
            when = _date(step.time_s)
            head = f"[Session {step.session_id}" + (f" ({when})" if when else "") + "]\n"
        role = AI if step.role == "assistant" else HUMAN
        return message(role, f"{head}{step.speaker}: {step.observation}", step.turn_id)
    return message(HUMAN, step.observation) if step.observation else None


def question_message(step: WorkStep) -> Message | None:
    """The transient human message a question or probe step asks (None when the step asks nothing)."""
    if step.question_id is not None:
        when = _date(step.time_s)
        return message(HUMAN, (f"Current date: {when}\n" if when else "") + f"Question: {step.question}")
    if step.probe and step.question:
        return message(HUMAN, step.question)
    return None


def request(messages: Sequence[Message], route: str) -> ModelRequest:
    """The request of *messages*: one part per message, with their exact summed count."""
    total = sum(m.tokens for m in messages)
    return ModelRequest(tuple(m.text for m in messages), total, route, exact=total)


class MessageAdapter:
    """The benchmark adapter of a message memory: a subclass supplies ``add(message)`` (keep a new
    history message) and ``context(question)`` (the request's messages, system prompt first, the
    question last when there is one), and ``route``. See the module docstring for the step mapping."""

    name = ""
    route = ""

    def __init__(self) -> None:
        self.system = message(SYSTEM, SYSTEM_PROMPT)
        self.written = 0
        self._turn_request = request((self.system,), f"{self.route}.turn")

    def add(self, msg: Message) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def context(self, question: Message | None) -> list[Message]:  # pragma: no cover - abstract
        raise NotImplementedError

    def step(self, step: WorkStep) -> ModelRequest:
        """Keep the step's message, then the request the model sees for it (see the module docstring)."""
        msg = step_message(step)
        if msg is not None:
            self.written += len(msg.text.encode())
            self.add(msg)
        if step.turn_id is not None:
            return self._turn_request
        return request(self.context(question_message(step)), self.route)

    def storage(self) -> StorageStats:
        """Nothing durable: the history is process memory, as LangChain's in-memory chat history."""
        return StorageStats(0, self.written, 0)
