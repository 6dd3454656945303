"""A MemGPT/Letta-style pager (PAGER-OBJ-core-block, PAGER-RTE-fifo-eviction, PAGER-OBJ-recall-store,
PAGER-RTE-recall-search).

The algorithm as documented: Packer et al., "MemGPT: Towards LLMs as Operating Systems" (arXiv:2310.08560,
section 2: main context = system instructions, working context and a FIFO queue; a queue manager evicts
the oldest messages into recall storage under memory pressure and writes a recursive summary; recall
storage is searched by function call, results paginated), and Letta's "Agent memory & architecture"
page (https://docs.letta.com/guides/agents/architectures/memgpt: system instructions, memory blocks and
recent messages in context; older evicted messages in recall memory, searched with the
``conversation_search`` tool), both read 2026-12-06; constants from MemGPT's ``memgpt/constants.py``
and Letta's ``letta/constants.py`` (:mod:`reference.pager.state`).

* the request is the system prompt, the fixed **core block**, the eviction note (once anything was
  evicted), the **FIFO queue** of messages, and at a question the question then the search **page**
  (the function result of the ``conversation_search`` call a model would make);
* every message is also written to the **recall store** (MemGPT keeps the whole history there);
* after a message is queued, when system + core + note + queue exceed ``evict_at`` of the window
  (MemGPT's MESSAGE_SUMMARY_WARNING_FRAC, 0.75) the oldest messages are evicted until ``evict_fraction``
  of the queue's tokens (MESSAGE_SUMMARY_TRUNC_TOKEN_FRAC, 0.75) are gone, keeping the newest
  ``keep_last`` (MESSAGE_SUMMARY_TRUNC_KEEP_N_LAST, 3);
* at a question the recall store is searched and the first ``page_size`` hits (Letta's
  RETRIEVAL_QUERY_DEFAULT_PAGE_SIZE, 5) page into the request, each while it fits the window
  (``cut-by-budget`` otherwise). ``keyword`` search (default) scores a message by how many distinct query
  words it contains, ties newest first; ``bm25`` uses :mod:`reference.retrieval` (or the user's retriever).

Stand-ins (no model runs): the search **query** is the question's text (a model would write its own
keywords); the recursive **summary** is a note of how many messages were evicted and keeps none of their
text; the core block is a fixed text (a model would edit it with ``core_memory_append``).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from reference.pager.state import (
    MESSAGE_SUMMARY_TRUNC_KEEP_N_LAST,
    MESSAGE_SUMMARY_TRUNC_TOKEN_FRAC,
    MESSAGE_SUMMARY_WARNING_FRAC,
    NO_SEARCH,
    RETRIEVAL_QUERY_DEFAULT_PAGE_SIZE,
    STOPWORDS_FIX,
    Message,
)
from reference.retrieval import STOPWORDS, make_index, search, tokenize
from sim.tokens import count_tokens
from sim.variant import FAITHFUL, Variant

SYSTEM_PROMPT = (
    "You are a helpful assistant with a core memory, a conversation queue and a recall memory you can "
    "search. Answer the question at the end from what you see."
)
CORE_BLOCK = (
    "<persona>I am a helpful assistant who remembers what the user tells me.</persona>\n"
    "<human>The user has not told me their name yet.</human>"
)
PAGE_HEADER = "conversation_search results (page 1):"


def eviction_note(n: int) -> str:
    """The stand-in of the recursive summary: the count of evicted messages, none of their text."""
    return (
        f"Note: {n} prior messages have been hidden from view due to conversation memory constraints. "
        "They are in recall memory (conversation_search)."
    )


@dataclass(frozen=True)
class Settings:
    """The pager's settings (the design's knobs)."""

    page_size: int = RETRIEVAL_QUERY_DEFAULT_PAGE_SIZE
    evict_at: float = MESSAGE_SUMMARY_WARNING_FRAC
    evict_fraction: float = MESSAGE_SUMMARY_TRUNC_TOKEN_FRAC
    keep_last: int = MESSAGE_SUMMARY_TRUNC_KEEP_N_LAST
    search: str = "keyword"
    tokenizer: str = "words"
    retriever: str = "bm25"
    index_speaker: bool = False


class Pager:
    """Core block, FIFO queue, recall store; the last question's page, ranking and reasons."""

    def __init__(self, budget: int, settings: Settings | None = None, *, variant: Variant = FAITHFUL) -> None:
        self.budget = budget
        self.settings = settings or Settings()
        self.variant = variant
        self.recall: list[Message] = []
        self.queue: deque[int] = deque()
        self.queue_tokens = 0
        self.evicted = 0
        self.fixed_tokens = count_tokens(SYSTEM_PROMPT) + count_tokens(CORE_BLOCK)
        self.last_ranked: list[str] = []
        self.last_reasons: dict[str, str] = {}
        self._words: list[frozenset[str]] = []  # each message's words (keyword search)

    def note(self) -> list[str]:
        return [eviction_note(self.evicted)] if self.evicted else []

    def _context_tokens(self) -> int:
        return self.fixed_tokens + sum(count_tokens(n) for n in self.note()) + self.queue_tokens

    def add(self, turn_id: str, session_id: str, role: str, speaker: str, text: str) -> None:
        """Queue a message (and write it to recall); evict the oldest under memory pressure."""
        shown = f"{speaker}: {text}" if speaker else text
        searched = shown if self.settings.index_speaker else text
        self.recall.append(Message(turn_id, session_id, role, shown, count_tokens(shown), searched))
        self._words.append(frozenset(tokenize(searched, self.settings.tokenizer)))
        self.queue.append(len(self.recall) - 1)
        self.queue_tokens += self.recall[-1].tokens
        s = self.settings
        if self._context_tokens() > s.evict_at * self.budget:
            target = s.evict_fraction * self.queue_tokens
            gone = 0
            while gone < target and len(self.queue) > s.keep_last:
                i = self.queue.popleft()
                gone += self.recall[i].tokens
                self.queue_tokens -= self.recall[i].tokens
                self.evicted += 1

    def search(self, query: str) -> list[int]:
        """The recall store's hits for *query* (positions, best first)."""
        s = self.settings
        if self.variant.has(NO_SEARCH) or not self.recall:
            return []
        drop = self.variant.has(STOPWORDS_FIX)
        if s.search == "keyword" and s.retriever == "bm25":
            words = {w for w in tokenize(query, s.tokenizer) if not (drop and w.lower() in STOPWORDS)}
            scored = [(len(words & w), i) for i, w in enumerate(self._words)]
            return [i for n, i in sorted(scored, key=lambda x: (-x[0], -x[1])) if n > 0]
        index = make_index(s.retriever, [m.raw for m in self.recall], tokenizer=s.tokenizer, stopwords=drop)
        return [i for i, _ in search(index, query, len(self.recall))]

    def request(self, question: str) -> list[str]:
        """The request at a question: context, the search page that fits, the question."""
        s = self.settings
        hits = self.search(question)
        left = self.budget - self._context_tokens() - count_tokens(question) - count_tokens(PAGE_HEADER)
        page: list[int] = []
        reasons: dict[int, str] = {}
        for r, i in enumerate(hits[: s.page_size], 1):
            if self.recall[i].tokens > left:
                reasons[i] = f"cut-by-budget@rank {r}"
                continue
            left -= self.recall[i].tokens
            page.append(i)
        rank = {i: r for r, i in enumerate(hits, 1)}
        shown = set(page) | set(self.queue)
        for i, m in enumerate(self.recall):
            if i in shown:
                why = "in-request"
            elif i in reasons:
                why = reasons[i]
            elif self.variant.has(NO_SEARCH):
                why = "not-retrieved@search off"
            elif i in rank:
                why = f"not-retrieved@rank {rank[i]} > page {s.page_size}"
            else:
                why = "not-retrieved@no match"
            self.last_reasons[m.turn_id] = why
        hit_set = set(hits)
        self.last_ranked = [self.recall[i].turn_id for i in hits] + [
            m.turn_id for i, m in enumerate(self.recall) if i not in hit_set
        ]
        paged = [PAGE_HEADER, *(self.recall[i].text for i in page)] if page else []
        return [*self.context(), question, *paged]

    def context(self) -> list[str]:
        """The request between questions: system prompt, core block, eviction note, queue."""
        return [SYSTEM_PROMPT, CORE_BLOCK, *self.note(), *(self.recall[i].text for i in self.queue)]
