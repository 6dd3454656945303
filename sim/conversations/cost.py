"""What a design costs on real conversations under a provider's prompt cache (issue 38, item 6).

``memsim bench --workload locomo:F --provider anthropic|openai [--model NAME]`` prices every request a
design sends, with the same cache and price model as the fact-token benchmark (:mod:`sim.cache`: a
:class:`~sim.cache.model.ProviderCache` per design, instance and window, keyed by the design's stream
and route, on the simulation clock that follows the dataset's dates):

* the request each design sends **at question time** is priced, in question order on the design's
  simulation clock (so a question's prefix can be read from the cache an earlier question wrote); a
  baseline's the same way (at the date of the last turn before the question, or the question's own).
  Not modeled: the requests a design makes while it reads the turns. In conversation mode the adapters
  return a stand-in for them (three of the four seed adapters a one-part placeholder), so pricing
  them would price the stand-in; the figures are the cost of answering the questions from the memory
  the turns left;
* a request **over the window** is refused by the provider (context length exceeded): it costs $0 and
  leaves the cache as it was, and is counted apart (``refused``). Nothing is credited for it;
* **output tokens are not priced** (memsim's model is a seeded policy and writes no answer); nor are
  batch or long-context price bands.

Per question (``questions.csv`` gains :data:`QUESTION_COST_COLUMNS`): the question's request, split
into cache-read, cache-write and uncached tokens, and its dollars. Per instance, design and window
(``cost.csv``, table ``cost``: :data:`INSTANCE_COLUMNS`): the sums over its questions. Per design and
window (:func:`summary`): the cache hit ratio (cache-read / prompt tokens of the accepted requests), $ per
question (mean over questions), $ per instance (mean over instances of their sums), the refused
requests. :func:`sim.cache.prices.basis` (model, $/M input, read/write multipliers, TTL, what is
excluded) is printed beside every figure.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sim.cache import ProviderCache, ProviderConfig

#: The columns a provider adds to each question row (after the question columns).
QUESTION_COST_COLUMNS = ("refused", "cache_read_tokens", "cache_write_tokens", "uncached_tokens", "cost_usd")
#: The columns of ``cost.csv`` (one row per instance, design and window).
INSTANCE_COLUMNS = (
    "workload", "instance", "design", "budget", "requests", "refused", "cache_read_tokens",
    "cache_write_tokens", "uncached_tokens", "cost_tokens", "cost_usd",
)  # fmt: skip
#: The columns of the per-design summary (``cost_summary`` table, console and page).
SUMMARY_COLUMNS = (
    "design", "budget", "provider", "instances", "questions", "requests", "refused_requests",
    "refused_questions", "cache_hit_ratio", "cost_usd_per_question", "cost_usd_per_instance",
    "cost_usd_total",
)  # fmt: skip


class Meter:
    """The provider cache of one design on one instance at one window, and its running totals."""

    def __init__(self, config: ProviderConfig, budget: int, system: str) -> None:
        self.cache = ProviderCache(config)
        self.budget = budget
        self.system = system
        self.requests = self.refused = 0
        self.usd = 0.0

    def charge(
        self,
        route: str,
        parts: Sequence[str],
        counts: Sequence[int],
        tokens: int,
        breakpoints: Sequence[int] | None,
        now: float,
    ) -> dict[str, Any]:
        """Price one request of *tokens* exact tokens (its *parts* with their *counts*) at simulation time
        *now*; the question columns of its charge. Over the window: refused, $0, the cache untouched."""
        self.requests += 1
        if tokens > self.budget:
            self.refused += 1
            return {"refused": 1, "cache_read_tokens": 0, "cache_write_tokens": 0, "uncached_tokens": 0,
                    "cost_usd": 0.0}  # fmt: skip
        c = self.cache.charge((self.system, "", route), parts, counts, breakpoints, now)
        self.usd += c.cost_usd
        return {"refused": 0, "cache_read_tokens": c.read, "cache_write_tokens": c.write,
                "uncached_tokens": c.uncached, "cost_usd": c.cost_usd}  # fmt: skip

    def row(self, workload: str, instance: str, design: str) -> dict[str, Any]:
        """The instance's ``cost.csv`` row."""
        c = self.cache
        return {
            "workload": workload, "instance": instance, "design": design, "budget": self.budget,
            "requests": self.requests, "refused": self.refused, "cache_read_tokens": c.read,
            "cache_write_tokens": c.write, "uncached_tokens": c.uncached,
            "cost_tokens": round(c.cost_tokens, 4), "cost_usd": round(self.usd, 9),
        }  # fmt: skip


def summary(
    rows: list[dict[str, Any]], costs: list[dict[str, Any]], config: ProviderConfig | dict[str, Any]
) -> list[dict[str, Any]]:
    """Per design and window (in the rows' order): the cache hit ratio, $ per question and per instance,
    requests and refusals (:data:`SUMMARY_COLUMNS`)."""
    meta = config if isinstance(config, dict) else config.meta()
    provider = f"{meta['name']}:{meta['model']}"
    order: dict[tuple[str, int], int] = {}
    questions: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for r in rows:
        key = (r["design"], r["budget"])
        order.setdefault(key, len(order))
        questions.setdefault(key, []).append(r)
    per: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for c in costs:
        per.setdefault((c["design"], c["budget"]), []).append(c)
    out = []
    for key in sorted(order, key=order.__getitem__):
        qs, cs = questions[key], per.get(key, [])
        read = sum(c["cache_read_tokens"] for c in cs)
        prompt = read + sum(c["cache_write_tokens"] + c["uncached_tokens"] for c in cs)
        total = sum(c["cost_usd"] for c in cs)
        out.append(
            {
                "design": key[0],
                "budget": key[1],
                "provider": provider,
                "instances": len(cs),
                "questions": len(qs),
                "requests": sum(c["requests"] for c in cs),
                "refused_requests": sum(c["refused"] for c in cs),
                "refused_questions": sum(int(q.get("refused") or 0) for q in qs),
                "cache_hit_ratio": round(read / prompt, 4) if prompt else 0.0,
                "cost_usd_per_question": round(sum(float(q.get("cost_usd") or 0) for q in qs) / len(qs), 6),
                "cost_usd_per_instance": round(total / len(cs), 4) if cs else 0.0,
                "cost_usd_total": round(total, 4),
            }
        )
    return out


def render(summ: list[dict[str, Any]], basis: str) -> Any:
    """The console table of :func:`summary`, its price basis under the title."""
    from rich.console import Group
    from rich.markup import escape
    from rich.table import Table

    t = Table(title="real conversations: what each design costs", title_justify="left")
    cols = (
        ("design", "design", None), ("budget", "window", 0), ("cache_hit_ratio", "cache hit ratio", 3),
        ("cost_usd_per_question", "$ / question", 5), ("cost_usd_per_instance", "$ / instance", 4),
        ("requests", "requests", 0), ("refused_requests", "refused ($0)", 0),
    )  # fmt: skip
    for key, title, _ in cols:
        t.add_column(title, justify="left" if key == "design" else "right")
    for r in summ:
        t.add_row(*(str(r[k]) if d is None else f"{r[k]:,.{d}f}" for k, _, d in cols))
    return Group(t, escape(basis))
