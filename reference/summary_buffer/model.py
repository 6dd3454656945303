"""The summary buffer: LangChain's ``ConversationSummaryBufferMemory`` over the chat history.

Semantics (langchain-ai/langchain ``libs/langchain/langchain/memory/summary_buffer.py`` at commit
00863ce: ``ConversationSummaryBufferMemory``, default ``max_token_limit = 2000`` at line 13,
``load_memory_variables`` at lines 29-43, ``save_context`` at 58-61, ``prune`` at 63-74; read
2026-12-06; the API reference page
https://python.langchain.com/api_reference/langchain/memory/langchain.memory.summary_buffer.ConversationSummaryBufferMemory.html,
read 2026-12-06, marks the class deprecated since 0.3.1 in favour of LangGraph persistence and the
summarization middleware, which keeps the same shape: recent messages verbatim, older ones summarized):

1. ``save_context`` appends the new messages to the buffer, then ``prune``: if the buffer's token count
   is over ``max_token_limit``, messages are popped from the front until it is at most the limit (a newest
   message over the limit on its own is popped too: the buffer can be left empty), and the popped
   messages and the previous summary go to ``predict_new_summary``, whose result is the new summary;
2. ``load_memory_variables`` returns the summary as one system message (``summary_message_cls``, default
   ``SystemMessage``) before the buffer, when the summary is not empty.

The request is the system prompt, the summary message, the buffer and the question. Token counts are
memsim's exact cl100k counts per message, summed (``get_num_tokens_from_messages`` with no per-message
overhead). ``predict_new_summary`` is the seeded stand-in
:class:`~reference.summary_buffer.policies.Summarizer`.
"""

from __future__ import annotations

from collections import deque

from reference.common import SYSTEM, Message, message
from reference.summary_buffer.policies import Summarizer
from reference.summary_buffer.state import NO_SUMMARY_LOST


class SummaryBuffer:
    """Recent messages up to *limit* tokens, older ones folded into *summarizer*'s running summary (or
    dropped when *summarize* is False: the ``no-summary`` off switch)."""

    def __init__(
        self, system: Message, limit: int, summarizer: Summarizer, *, summarize: bool = True
    ) -> None:
        self.system, self.limit, self.summarizer, self.summarize = system, limit, summarizer, summarize
        self.buffer: deque[Message] = deque()
        self.total = 0
        self.folds = 0
        self.pruned_without_summary: dict[str, int] = {}
        self._summary: tuple[int, Message | None] = (0, None)  # (fold, summary message) cache

    def add(self, msg: Message) -> None:
        """``save_context`` then ``prune``."""
        self.buffer.append(msg)
        self.total += msg.tokens
        if self.total <= self.limit:
            return
        pruned: list[Message] = []
        while self.total > self.limit:
            old = self.buffer.popleft()
            self.total -= old.tokens
            pruned.append(old)
        self.folds += 1
        if self.summarize:
            self.summarizer.fold(pruned, self.folds)
        else:
            for m in pruned:
                if m.turn_id is not None:
                    self.pruned_without_summary[m.turn_id] = self.folds

    def summary(self) -> Message | None:
        """The summary as a system message (None while it is empty)."""
        if self._summary[0] != self.folds:
            text = self.summarizer.text()
            self._summary = (self.folds, message(SYSTEM, text) if text else None)
        return self._summary[1]

    def context(self, question: Message | None) -> list[Message]:
        """The request: the system prompt, the summary, the buffer, the question."""
        summary = self.summary() if self.summarize else None
        return [self.system, *([summary] if summary else []), *self.buffer, *([question] if question else [])]

    def lost_reason(self, turn_id: str) -> str:
        """Why turn *turn_id* is not in the last request: ``<code>@fold<k>``."""
        if turn_id in self.pruned_without_summary:
            return f"{NO_SUMMARY_LOST}@fold{self.pruned_without_summary[turn_id]}"
        if turn_id in self.summarizer.lost:
            code, k = self.summarizer.lost[turn_id]
            return f"{code}@fold{k}"
        return "not-in-request"
