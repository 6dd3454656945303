"""Seeded stand-ins for what a model or host decides around Tracecraft (no LLM).

Tracecraft itself never decides what to remember: the agent (a model following the shipped prompt,
RT-BAP-agent-prompt) chooses what to ``memory set``, when to read ``inbox --new`` and when to mirror.
These policies make those choices explicit and seeded; strategies draw their parameters.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported where used: the benchmark's adapter needs SaveFacts, not Hypothesis (60 ms)
    from hypothesis import strategies as st


@dataclass
class SaveFacts:
    """Save each fact token the agent sees with ``memory set``, dropping a *lossiness* fraction."""

    lossiness: float
    rng: random.Random = field(repr=False)

    def keep(self, token: str) -> bool:
        """Whether the saver copies *token* (one seeded draw per token)."""
        return self.rng.random() >= self.lossiness


@dataclass(frozen=True)
class Cadence:
    """How often an agent acts: send every *send_s*, read ``--new`` every *read_s*, mirror every *flush_s*."""

    send_s: float = 20.0
    read_s: float = 15.0
    flush_s: float = 5.0


def cadences() -> st.SearchStrategy[Cadence]:
    """Hypothesis strategy of agent cadences (seconds)."""
    from hypothesis import strategies as st

    seconds = st.sampled_from([1.0, 2.0, 5.0, 15.0, 60.0])
    return st.builds(Cadence, send_s=seconds, read_s=seconds, flush_s=seconds)


def savers(rng: random.Random) -> st.SearchStrategy[SaveFacts]:
    """Hypothesis strategy of savers over *rng* (lossiness 0 to 0.5, as the benchmark draws)."""
    from hypothesis import strategies as st

    return st.sampled_from([0.0, 0.25, 0.5]).map(lambda p: SaveFacts(p, rng))
