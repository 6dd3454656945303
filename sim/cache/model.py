"""The provider cache of a run: per stream (one ``(system, agent, route)``), which prompt prefixes the
provider holds, and what each recorded request therefore costs.

A request is a sequence of parts already counted one by one (:meth:`sim.engine.Simulation.request`). A
prefix of parts is identified by a chained hash (the key of parts ``0..i`` hashes the key of ``0..i-1``
with part *i*'s text; CPython keeps a string's hash on the string, so a part sent again costs a tuple
hash, and nothing is re-tokenized): the longest cached prefix is found at part granularity, then cut to
the provider's rules (:mod:`sim.cache.anthropic`: breakpoints, lookback, minimum; :mod:`sim.cache.openai`:
minimum, 128-token increments). Providers key their caches by prefix hashes too; two different prefixes
with one 64-bit key (about 1 in 10^19 per pair) would count as a hit.

Everything is on the simulation clock: a request at time *t* sees the entries earlier requests of its
stream left that are still alive at *t*. Expired entries are dropped whenever a stream's table has doubled
since the last sweep, so memory follows the live prefixes, not the run's length.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sim.cache import anthropic, openai
from sim.cache.prices import MODELS, PRICES, Price


@dataclass(frozen=True)
class ProviderConfig:
    """The selected provider's cache rules and price (``memsim bench --provider``): plain values, so a
    benchmark cell carries it to any process."""

    name: str
    model: str
    ttl_s: int
    min_tokens: int
    input_usd_per_mtok: float
    read_multiplier: float
    write_multiplier: float

    @classmethod
    def of(
        cls, name: str, *, ttl_s: int | None = None, price: float | None = None, model: str | None = None
    ) -> ProviderConfig:
        """*name*'s documented defaults (:mod:`sim.cache.prices`, the provider modules), with a TTL in
        seconds, an input price in USD per million tokens and a *model* of the price table (one of
        *name*'s; default its first) overridden when given."""
        p: Price = PRICES[name] if model is None else MODELS[model]
        if p.provider != name:
            raise ValueError(f"model {p.model} is priced for {p.provider}, not {name}")
        if name == "anthropic":
            ttl = anthropic.DEFAULT_TTL_S if ttl_s is None else ttl_s
            write = p.write_multiplier_5m if ttl <= anthropic.DEFAULT_TTL_S else p.write_multiplier_1h
            minimum = anthropic.MIN_CACHEABLE[p.model]
        else:
            ttl = openai.DEFAULT_TTL_S if ttl_s is None else ttl_s
            write, minimum = p.write_multiplier_5m, openai.MIN_TOKENS
        usd = p.input_usd_per_mtok if price is None else price
        return cls(name, p.model, ttl, minimum, usd, p.read_multiplier, write)

    def meta(self) -> dict[str, Any]:
        """The run's ``provider`` meta value (what a trace records of the selection)."""
        return {
            "name": self.name, "model": self.model, "ttl_s": self.ttl_s, "min_tokens": self.min_tokens,
            "input_usd_per_mtok": self.input_usd_per_mtok, "read_multiplier": self.read_multiplier,
            "write_multiplier": self.write_multiplier,
        }  # fmt: skip


@dataclass(frozen=True)
class CacheCharge:
    """One request's prompt split three ways (``read + write + uncached`` is its exact tokens) and its
    cost in input-token equivalents and in dollars."""

    read: int
    write: int
    uncached: int
    cost_tokens: float
    cost_usd: float

    def detail(self) -> dict[str, Any]:
        """The request detail's ``cache`` value."""
        return {
            "cache_read_tokens": self.read, "cache_write_tokens": self.write,
            "uncached_tokens": self.uncached, "cost_tokens": self.cost_tokens, "cost_usd": self.cost_usd,
        }  # fmt: skip

    def usage(self, provider: str) -> dict[str, Any]:
        """The provider's own usage fields for this prompt: what a client reads cached tokens from."""
        total = self.read + self.write + self.uncached
        if provider == "anthropic":
            return {
                "input_tokens": self.uncached,
                "cache_creation_input_tokens": self.write,
                "cache_read_input_tokens": self.read,
            }
        return {"prompt_tokens": total, "prompt_tokens_details": {"cached_tokens": self.read}}


class ProviderCache:
    """The provider's cache over a run's streams, with running totals of every charge."""

    def __init__(self, config: ProviderConfig) -> None:
        self.config = config
        self._entries: dict[tuple[str, str, str], dict[int, Any]] = {}
        self._swept: dict[tuple[str, str, str], int] = {}
        self._grown: dict[tuple[str, str, str], dict[int, tuple[str, int]]] = {}
        self.read = self.write = self.uncached = self.requests = 0
        self.cost_tokens = 0.0
        #: The latest charge (what a streaming consumer such as the benchmark's metrics reads).
        self.last: CacheCharge | None = None

    def charge(
        self,
        stream: tuple[str, str, str],
        parts: Sequence[str],
        counts: Sequence[int],
        breakpoints: Sequence[int] | None,
        now: float,
    ) -> CacheCharge:
        """Charge one request of *stream*: *parts* with their cl100k *counts*, the part indices the design
        marked with ``cache_control`` (*breakpoints*; only Anthropic reads them) at simulation time
        *now*."""
        cfg = self.config
        keys: list[int] = []
        cum: list[int] = []
        k, total = 0, 0
        for p, n in zip(parts, counts):
            k = hash((k, p))
            total += n
            keys.append(k)
            cum.append(total)
        entries = self._entries.setdefault(stream, {})
        if cfg.name == "anthropic":
            bps = anthropic.check_breakpoints(breakpoints or (), len(parts))
            read, write = anthropic.charge(
                entries, keys, cum, bps, now, ttl_s=cfg.ttl_s, min_tokens=cfg.min_tokens
            )
        else:
            grown = self._grown.setdefault(stream, {})
            read = openai.charge(entries, grown, parts, keys, cum, now, ttl_s=cfg.ttl_s)
            write = 0
        self._sweep(stream, entries, now)
        return self._bill(read, write, total - read - write)

    def charge_unkeyed(self, tokens: int) -> CacheCharge:
        """Charge a request whose parts are not known (every token uncached)."""
        return self._bill(0, 0, tokens)

    def _bill(self, read: int, write: int, uncached: int) -> CacheCharge:
        cfg = self.config
        cost = round(uncached + read * cfg.read_multiplier + write * cfg.write_multiplier, 4)
        usd = round(cost * cfg.input_usd_per_mtok / 1_000_000, 9)
        self.read += read
        self.write += write
        self.uncached += uncached
        self.requests += 1
        self.cost_tokens += cost
        self.last = CacheCharge(read, write, uncached, cost, usd)
        return self.last

    def _sweep(self, stream: tuple[str, str, str], entries: dict[int, Any], now: float) -> None:
        if len(entries) < 2 * self._swept.get(stream, 512):
            return
        for key in [k for k, v in entries.items() if (v[0] if isinstance(v, tuple) else v) <= now]:
            del entries[key]
        grown = self._grown.get(stream)
        if grown:  # keep a parent's next part only while that prefix is still cached
            for key in [p for p, (text, _n) in grown.items() if hash((p, text)) not in entries]:
                del grown[key]
        self._swept[stream] = max(512, len(entries))
