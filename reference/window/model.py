"""The recency window: ``trim_messages(..., strategy="last")`` on the chat history at every request.

Semantics (langchain-core 1.x, ``libs/core/langchain_core/messages/utils.py``: ``trim_messages`` and
``_last_max_tokens``, read 2026-12-06; the API reference page
https://python.langchain.com/api_reference/core/messages/langchain_core.messages.utils.trim_messages.html,
read 2026-12-06), with the options this design fixes: ``strategy="last"``, ``include_system=True``,
``start_on="human"``, ``allow_partial=False``, no ``end_on``:

1. a leading system message is set aside and always kept; its tokens come off ``max_tokens`` first
   (``max(0, max_tokens - system)``);
2. of the other messages, the longest *newest* run whose token count is at most what remains is kept
   (upstream reverses the list and binary-searches the longest prefix within the limit; with a counter
   that sums per-message counts that is the newest suffix that fits). A message that does not fit
   whole is dropped (no partial message);
3. ``start_on="human"``: from the oldest kept message on, messages are dropped until the first is a human
   message (none kept if none is);
4. the system message goes back in front.

**Token counter.** ``trim_messages`` takes ``token_counter(messages) -> int``; this design's counter is
``sum(count_tokens(m.content) for m in messages)``: memsim's exact cl100k count of each message's text
(:func:`sim.tokens.count_tokens`), summed, with no per-message overhead (LangChain's
``count_tokens_approximately`` would add about 3 per message; a chat template's tokens are not counted
anywhere in memsim). ``tests/test_reference_window.py`` checks this against ``trim_messages`` itself.

The history grows as the conversation does (LangChain keeps the whole chat history and trims each
request); messages that can no longer be kept (older than the newest run that fits without any question)
are forgotten, since later messages only push the window forward.
"""

from __future__ import annotations

from collections.abc import Sequence

from reference.common import HUMAN, SYSTEM, Message
from reference.window.state import START_ON, TRIMMED


def trim_last(messages: Sequence[Message], max_tokens: int, *, start_on_human: bool = True) -> list[Message]:
    """The messages ``trim_messages(messages, max_tokens=..., strategy="last", include_system=True,
    start_on="human" if start_on_human else None, allow_partial=False)`` keeps, with the summed
    per-message counts as the token counter."""
    msgs = list(messages)
    system: Message | None = None
    if msgs and msgs[0].role == SYSTEM:
        system, msgs = msgs[0], msgs[1:]
    remaining = max(0, max_tokens - system.tokens) if system is not None else max_tokens
    start, total = len(msgs), 0
    while start > 0 and total + msgs[start - 1].tokens <= remaining:
        start -= 1
        total += msgs[start].tokens
    if start_on_human:
        while start < len(msgs) and msgs[start].role != HUMAN:
            start += 1
    kept = msgs[start:]
    return [system, *kept] if system is not None else kept


class Window:
    """A chat history trimmed to the newest messages that fit *max_tokens* at each request."""

    def __init__(self, system: Message, max_tokens: int, *, start_on_human: bool = True) -> None:
        self.system = system
        self.max_tokens = max_tokens
        self.start_on_human = start_on_human
        self.history: list[Message] = []
        self.total = 0
        self.seen: set[str] = set()
        self._last: tuple[set[str], set[str]] = (set(), set())  # (kept, cut by start_on) turn ids

    def add(self, msg: Message) -> None:
        """Append a message; forget the messages no request can keep any more."""
        self.history.append(msg)
        if msg.turn_id is not None:
            self.seen.add(msg.turn_id)
        self.total += msg.tokens
        room = max(0, self.max_tokens - self.system.tokens)
        drop = 0
        while self.total > room and drop < len(self.history):
            self.total -= self.history[drop].tokens
            drop += 1
        if drop:
            del self.history[:drop]

    def context(self, question: Message | None) -> list[Message]:
        """The request: ``trim_last`` of the system prompt, the history and the question. A question that
        does not fit the window on its own is appended anyway (the request then exceeds the window):
        upstream would send the trimmed list without it, and a request must carry its question."""
        msgs = [self.system, *self.history, *([question] if question is not None else [])]
        kept = trim_last(msgs, self.max_tokens, start_on_human=self.start_on_human)
        cut: set[str] = set()
        if self.start_on_human:  # the messages start_on="human" cut: those the plain suffix has beyond kept
            uncut = trim_last(msgs, self.max_tokens, start_on_human=False)
            n_cut = len(uncut) - len(kept)
            cut = {m.turn_id for m in uncut[1 : 1 + n_cut] if m.turn_id is not None}
        self._last = ({m.turn_id for m in kept if m.turn_id is not None}, cut)
        if question is not None and kept[-1] is not question:
            kept.append(question)
        return kept

    def lost_reason(self, turn_id: str) -> str:
        """Why turn *turn_id* is not in the last request."""
        kept, cut = self._last
        if turn_id in cut:
            return START_ON
        if turn_id in self.seen and turn_id not in kept:
            return TRIMMED
        return "not-in-request"
