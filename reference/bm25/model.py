"""BM25 retrieval memory (BM25-ALG-okapi-index, BM25-ALG-granularity, BM25-RTE-topk-pack,
BM25-RTE-recent-tail).

Every turn is stored as it arrives. At a question the store is indexed (once per new turn, lazily) at
the chosen *granularity*: ``turn`` (one document per turn) or ``session`` (one per session, its turns'
texts joined by newlines); a turn's own text is indexed, not its speaker's name (``index_speaker``:
``speaker: text``); with ``roles="user"`` only user turns are indexed, as LongMemEval's
``process_item_flat_index`` does (xiaowu0162/LongMemEval ``src/retrieval/run_retrieval.py``, read
2026-12-06). The retriever (:mod:`reference.retrieval`: rank-bm25's BM25Okapi by default, or the
user's) ranks the documents by the question text; the hits are the documents scoring above 0.

**Packing** (the request at a question, within the window): the system prompt and the question are
reserved first; then the recent tail (the last *tail* turns, newest first, while they fit); then the
top *k* hits in rank order, each whole (a turn, or a session's turns) when it fits in what is left and
skipped otherwise (``cut-by-budget``; a lower-ranked hit that fits is still taken); a turn already in the
tail is not repeated. The request is the system prompt, the retrieved turns in the stated *order*
(``chronological``, default: conversation order; or ``rank``: best hit first), the tail turns in
conversation order, then the question. Each turn is one part, ``speaker: text``.

With the ``neighbours`` fix a hit turn brings the turns right before and after it in its session (at
session granularity a hit is already the whole session); ``no-retrieval`` retrieves nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from reference.bm25.state import NEIGHBOURS, NO_RETRIEVAL, Stored
from reference.retrieval import Index, make_index, search
from sim.tokens import count_tokens
from sim.variant import FAITHFUL, Variant

SYSTEM_PROMPT = (
    "You are a helpful assistant. Below are past conversation turns retrieved for the question, then the "
    "most recent turns. Answer the question at the end from them."
)


@dataclass(frozen=True)
class Settings:
    """The memory's settings (the design's knobs)."""

    k: int = 5
    tail: int = 4
    granularity: str = "turn"
    roles: str = "all"
    order: str = "chronological"
    tokenizer: str = "words"
    retriever: str = "bm25"
    index_speaker: bool = False


class Bm25Memory:
    """The stored turns, their index and the last question's packing."""

    def __init__(self, settings: Settings | None = None, *, variant: Variant = FAITHFUL) -> None:
        self.settings = settings or Settings()
        self.variant = variant
        self.turns: list[Stored] = []
        self.position: dict[str, int] = {}
        self._docs: list[tuple[str, tuple[int, ...]]] = []  # (doc id, turn positions)
        self._index: Index | None = None
        self._indexed = -1
        self.last_ranked: list[str] = []  # every doc id, hits first (the last question's ranking)
        self.last_reasons: dict[str, str] = {}
        self.system_tokens = count_tokens(SYSTEM_PROMPT)

    # -- storing -------------------------------------------------------------------------------------
    def add(self, turn_id: str, session_id: str, role: str, speaker: str, text: str) -> None:
        shown = f"{speaker}: {text}" if speaker else text
        self.position[turn_id] = len(self.turns)
        indexed = shown if self.settings.index_speaker else text
        self.turns.append(Stored(turn_id, session_id, role, shown, count_tokens(shown), indexed))

    def _documents(self) -> list[tuple[str, tuple[int, ...]]]:
        s = self.settings
        keep = [i for i, t in enumerate(self.turns) if s.roles == "all" or t.role == "user"]
        if s.granularity == "turn":
            return [(self.turns[i].turn_id, (i,)) for i in keep]
        by: dict[str, list[int]] = {}
        for i in keep:
            by.setdefault(self.turns[i].session_id, []).append(i)
        return [(sid, tuple(ix)) for sid, ix in by.items()]

    def index(self) -> Index:
        """The index of the turns stored so far (rebuilt when a turn was added since)."""
        if self._index is None or self._indexed != len(self.turns):
            self._docs = self._documents()
            texts = ["\n".join(self.turns[i].raw for i in ix) for _, ix in self._docs]
            self._index = make_index(self.settings.retriever, texts, tokenizer=self.settings.tokenizer)
            self._indexed = len(self.turns)
        return self._index

    # -- answering -----------------------------------------------------------------------------------
    def hits(self, query: str) -> list[int]:
        """The documents the retriever returns for *query* (positions in the document list, best first)."""
        if self.variant.has(NO_RETRIEVAL) or not self.turns:
            self._docs = self._documents()
            return []
        idx = self.index()
        return [i for i, _ in search(idx, query, len(self._docs))]

    def _expand(self, ix: Sequence[int]) -> list[int]:
        if not self.variant.has(NEIGHBOURS) or self.settings.granularity != "turn":
            return list(ix)
        out: list[int] = []
        for i in ix:
            for j in (i - 1, i, i + 1):
                if 0 <= j < len(self.turns) and self.turns[j].session_id == self.turns[i].session_id:
                    out.append(j)
        return sorted(set(out))

    def request(self, question: str, budget: int) -> list[str]:
        """The parts of the request for *question* within *budget* tokens (and the reasons, ranking)."""
        s = self.settings
        q_tokens = count_tokens(question)
        left = budget - self.system_tokens - q_tokens
        chosen: set[int] = set()
        tail: list[int] = []
        for i in range(len(self.turns) - 1, max(-1, len(self.turns) - 1 - s.tail), -1):
            if self.turns[i].tokens > left:
                break
            left -= self.turns[i].tokens
            tail.append(i)
            chosen.add(i)
        hit_docs = self.hits(question)
        hit_set = set(hit_docs)
        rank_of_turn: dict[int, int] = {}
        for r, d in enumerate(hit_docs, 1):
            for i in self._docs[d][1]:
                rank_of_turn.setdefault(i, r)
        reasons: dict[int, str] = {}
        retrieved: list[int] = []  # in rank order
        for r, d in enumerate(hit_docs[: s.k], 1):
            new = [i for i in self._expand(self._docs[d][1]) if i not in chosen]
            cost = sum(self.turns[i].tokens for i in new)
            if cost > left:
                for i in new:
                    reasons.setdefault(i, f"cut-by-budget@rank {r}")
                continue
            left -= cost
            chosen.update(new)
            retrieved.extend(new)
        if s.order == "chronological":
            retrieved.sort()
        for i, t in enumerate(self.turns):
            if i in chosen:
                why = "in-request"
            elif i in reasons:
                why = reasons[i]
            elif self.variant.has(NO_RETRIEVAL):
                why = "not-retrieved@retrieval off"
            elif i in rank_of_turn:
                why = f"not-retrieved@rank {rank_of_turn[i]} > K {s.k}"
            elif s.roles == "user" and t.role != "user":
                why = "not-indexed@role"
            else:
                why = "not-retrieved@no match"
            self.last_reasons[t.turn_id] = why
        docs = [doc for doc, _ in self._docs]
        self.last_ranked = [docs[d] for d in hit_docs] + [
            docs[d] for d in range(len(docs)) if d not in hit_set
        ]
        return [
            SYSTEM_PROMPT,
            *(self.turns[i].text for i in retrieved),
            *(self.turns[i].text for i in sorted(tail)),
            question,
        ]

    def recent(self, budget: int) -> list[str]:
        """A request between questions: the system prompt and the recent tail (the newest turn always)."""
        left = budget - self.system_tokens
        tail: list[int] = []
        for i in range(len(self.turns) - 1, max(-1, len(self.turns) - 1 - max(1, self.settings.tail)), -1):
            if tail and self.turns[i].tokens > left:
                break
            left -= self.turns[i].tokens
            tail.append(i)
        return [SYSTEM_PROMPT, *(self.turns[i].text for i in sorted(tail))]
