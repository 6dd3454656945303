"""The seeded summarizer stand-in: which facts and evidence survive a fold into the running summary.

There is no model, so ``predict_new_summary(pruned, previous)`` is replaced by an explicit, seeded policy
(as the seed designs' stand-ins are, e.g. RSIAgent's ``conversation_summary_chars``):

* **what a fold keeps** (knob ``summary_keep`` = p, default ``1 - drawn.lossiness``, the fact benchmark's
  lossiness as the seed designs' stand-ins use it; 1.0 on real conversations): of a folded message that
  carries fact tokens, each fact token is kept with probability p; a folded conversation turn (no fact
  tokens) is kept whole, verbatim, with probability p; a message with neither keeps nothing. Each coin
  comes from the stream ``<design>.adapter.summarizer`` in fold order;
* **how long the summary may grow** (knob ``summary_fraction`` of the window): after a fold, the oldest
  kept items are squeezed out while the summary's items sum to more than the cap (a summary an LLM
  rewrites stays short);
* with the ``pin-fact-tokens`` fix every fact token is kept and never squeezed.
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass

from reference.common import Message
from sim.text import extract_fact_values
from sim.tokens import count_tokens

SUMMARY_HEAD = "Summary of the conversation so far:"


@dataclass(frozen=True, slots=True)
class Item:
    """One thing the summary keeps: a fact token or a turn's text, its count, the turn it came from, and
    whether it is pinned (never squeezed)."""

    text: str
    tokens: int
    turn_id: str | None
    pinned: bool


class Summarizer:
    """The running summary: items kept by the folds, oldest first, within *cap* tokens."""

    def __init__(self, keep: float, cap: int, rng: random.Random, *, pin_facts: bool = False) -> None:
        self.keep, self.cap, self.rng, self.pin_facts = keep, cap, rng, pin_facts
        self.items: deque[Item] = deque()
        self.total = 0
        self.head = count_tokens(SUMMARY_HEAD)
        #: turn id -> (reason code, fold) for turns a fold dropped or the cap squeezed out
        self.lost: dict[str, tuple[str, int]] = {}

    def fold(self, pruned: Sequence[Message], k: int) -> None:
        """Fold the *pruned* messages (fold *k*) into the summary, then squeeze it to the cap."""
        from reference.summary_buffer.state import DROPPED, SQUEEZED

        for m in pruned:
            facts = extract_fact_values(m.text)
            if facts:
                for fid, value in facts.items():
                    if self.pin_facts or self.rng.random() < self.keep:
                        self._add(
                            Item(f"{fid}={value}", count_tokens(f"{fid}={value}"), None, self.pin_facts)
                        )
            elif m.turn_id is not None:
                if self.rng.random() < self.keep:
                    self._add(Item(m.text, m.tokens, m.turn_id, False))
                else:
                    self.lost[m.turn_id] = (DROPPED, k)
        kept: deque[Item] = deque()
        while self.items and self.head + self.total > self.cap:
            it = self.items.popleft()
            if it.pinned:
                kept.append(it)
                continue
            self.total -= it.tokens
            if it.turn_id is not None:
                self.lost[it.turn_id] = (SQUEEZED, k)
        self.items.extendleft(reversed(kept))

    def _add(self, item: Item) -> None:
        self.items.append(item)
        self.total += item.tokens

    def text(self) -> str:
        """The summary as the system message LangChain puts before the buffer ("" when it is empty)."""
        return "\n".join((SUMMARY_HEAD, *(it.text for it in self.items))) if self.items else ""
