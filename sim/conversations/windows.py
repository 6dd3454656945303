"""Windows fitted to the corpus (issue 38): the windows a conversation sweep runs when ``--budgets`` is
not given.

Fixed windows tell nothing on a corpus they do not cut: every LoCoMo conversation is under 22k tokens,
so at 32k and 128k most designs recall everything and only 8k separates them. So without ``--budgets``
a conversation workload runs at :data:`FRACTIONS` (1/2, 1 and 2) of the **median instance length**,
each rounded to the nearest multiple of :data:`GRID` tokens (500) and at least 500 (memsim's smallest
window), duplicates dropped. An instance's length is the exact cl100k count of its turns' texts (the
dataset's text, :func:`sim.tokens.count_tokens`, summed; no request framing). At half the median a
design must choose what to keep; at the median about half the instances fit whole; at twice it nearly
every instance fits, so what a design still loses there it loses by its own policy, not by the window.
A smaller fraction measures little but each design's fixed prompt: a quarter of LoCoMo's median
(4,500 tokens) is about one seed design's fixed prompt alone (26 tool schemas and a system prompt),
and there its agent compacts at every step (55 s of CPU for one real conversation, against 16 s for
the whole file at the three windows of this rule).

The windows, the median and the rule are printed before the sweep runs and recorded with its outputs
(``meta``: ``windows``, ``windows_rule``); ``--budgets`` sets them explicitly, as before.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction

from sim.conversations.model import Instance
from sim.tokens import count_tokens

#: The fractions of the median instance length, and the grid the windows are rounded to.
FRACTIONS = (Fraction(1, 2), Fraction(1, 1), Fraction(2, 1))
GRID = 500
MIN_WINDOW, MAX_WINDOW = 500, 2_000_000
RULE = (
    "1/2, 1 and 2 x the median instance length (exact cl100k tokens of its turns' texts), each rounded "
    f"to the nearest {GRID} tokens (at least {MIN_WINDOW})"
)


@dataclass(frozen=True)
class Fitted:
    """The windows fitted to a corpus of *instances* whose median length is *median* tokens."""

    windows: tuple[int, ...]
    median: int
    instances: int

    def describe(self) -> str:
        """One line for the console and the outputs' meta."""
        s = "s" if self.instances != 1 else ""
        return (
            f"windows fitted to the corpus: {', '.join(f'{w:,}' for w in self.windows)} tokens ({RULE}; "
            f"median {self.median:,} tokens over {self.instances:,} instance{s})"
        )

    def short(self) -> str:
        """The windows and the median in one short line (the demo's)."""
        windows = ", ".join(f"{w:,}" for w in self.windows)
        return (
            f"windows {windows} tokens: 1/2, 1 and 2 x the median instance ({self.median:,} tokens), "
            f"to the nearest {GRID}"
        )


def instance_tokens(instance: Instance) -> int:
    """The exact cl100k length of *instance*: its turns' texts, counted and summed."""
    return sum(count_tokens(t.text) for t in instance.turns)


def fit(lengths: Iterable[int]) -> Fitted:
    """The windows of :data:`RULE` for instances of these *lengths* (tokens)."""
    values = list(lengths)
    if not values:
        raise ValueError("no instances to fit windows to")
    median = Fraction(statistics.median(values))
    out: list[int] = []
    for f in FRACTIONS:
        w = int((median * f + Fraction(GRID, 2)) // GRID) * GRID  # nearest; a half rounds up
        w = min(MAX_WINDOW, max(MIN_WINDOW, w))
        if w not in out:
            out.append(w)
    return Fitted(tuple(out), int(median + Fraction(1, 2)), len(values))


def fit_file(kind: str, path: str) -> Fitted:
    """The windows fitted to the instances of *path* (read, and so validated, once)."""
    from sim.conversations.formats import iter_instances

    return fit(instance_tokens(inst) for inst in iter_instances(kind, path))
