"""The :class:`Simulation`: a SimPy environment plus everything a run needs to be reproducible.

A simulation owns the run seed and its named random streams (:mod:`sim.rng`), one modeled wall clock per
agent (:mod:`sim.clock`, with skew and drift from the fault plan), the fault plan (:mod:`sim.faults`),
the trace (:mod:`sim.trace`) and the run root directory (a fresh temporary directory unless given).
Simulation time is in seconds. Nothing in a model may read the host clock or an unseeded generator.
"""

from __future__ import annotations

import random
import tempfile
from collections.abc import Generator, Sequence
from pathlib import Path
from typing import Any

import simpy

from sim.cache.model import ProviderCache, ProviderConfig
from sim.clock import AgentClock
from sim.faults import FaultPlan
from sim.files import DiskTree, FileTree, MemoryTree
from sim.rng import Streams
from sim.text import extract_facts
from sim.tokens import count_tokens
from sim.trace import RequestRecord, Trace


class Simulation:
    """One seeded run: ``env``, ``seed``, ``rng(name)``, ``clock(agent)``, ``faults``, ``trace``, ``root``.

    *trace_path* streams the trace to SQLite; *keep_trace* keeps records in memory for checkers.
    *root* is the run root for disk-backed trees (a temporary directory is made on first use if None).
    *provider* selects a provider's prompt cache (:mod:`sim.cache`): every request then records how its
    prompt splits into cache reads, writes and uncached tokens, and what it costs.
    """

    def __init__(
        self,
        seed: int = 0,
        *,
        faults: FaultPlan | Sequence[str] | None = None,
        trace_path: str | Path | None = None,
        keep_trace: bool = True,
        root: str | Path | None = None,
        provider: ProviderConfig | None = None,
    ) -> None:
        if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
            raise ValueError(f"seed must be a non-negative integer, not {seed!r}")
        self.env = simpy.Environment()
        self.seed = seed
        self.streams = Streams(seed)
        if faults is None:
            self.faults = FaultPlan()
        elif isinstance(faults, FaultPlan):
            self.faults = faults
        else:
            self.faults = FaultPlan.parse(list(faults))
        self.trace = Trace(trace_path, keep=keep_trace, now=lambda: self.env.now)
        self.trace.set_meta(seed=seed, faults=[str(f) for f in self.faults.faults])
        self._root = Path(root) if root is not None else None
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        self._clocks: dict[str, AgentClock] = {}
        #: The provider's prompt cache (``--provider``), or None: then requests carry no cache data and the
        #: trace is what it was before providers existed.
        self.cache: ProviderCache | None = None
        if provider is not None:
            self.use_provider(provider)

    def use_provider(self, provider: ProviderConfig) -> ProviderCache:
        """Select *provider*'s prompt cache for every request recorded from now on (a fresh cache; the
        trace's ``provider`` meta says which). A claim that prices requests calls it on its run's
        simulation."""
        self.cache = ProviderCache(provider)
        self.trace.set_meta(provider=provider.meta())
        return self.cache

    # -- time and randomness -------------------------------------------------------------------------
    @property
    def now(self) -> float:
        """Simulation time in seconds."""
        return float(self.env.now)

    def rng(self, name: str) -> random.Random:
        """The named random stream (independent of every other name)."""
        return self.streams.get(name)

    def clock(self, agent: str) -> AgentClock:
        """The modeled wall clock of *agent* (created on first use, with its armed skew and drift)."""
        c = self._clocks.get(agent)
        if c is None:
            c = self._clocks[agent] = AgentClock(
                lambda: self.env.now,
                name=agent,
                offset_s=self.faults.skew(agent),
                drift=self.faults.drift(agent),
            )
        return c

    # -- processes -----------------------------------------------------------------------------------
    def process(self, generator: Generator[Any, Any, Any]) -> simpy.Process:
        """Start a SimPy process."""
        return self.env.process(generator)

    def timeout(self, delay: float) -> simpy.Timeout:
        """A SimPy timeout of *delay* simulated seconds."""
        return self.env.timeout(delay)

    def run(self, until: float | simpy.Event | None = None) -> None:
        """Run the event loop (to *until*, or until no events remain)."""
        self.env.run(until=until)

    # -- storage -------------------------------------------------------------------------------------
    @property
    def root(self) -> Path:
        """The run root directory (a temporary directory unless one was given)."""
        if self._root is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="memsim-")
            self._root = Path(self._tmp.name)
        return self._root

    def tree(self, kind: str = "memory", *, agent: str = "", subdir: str = "") -> FileTree:
        """A file tree (``memory`` or ``disk`` under the run root) whose default mtime is *agent*'s clock.

        *subdir* (disk only) is a relative path inside the run root: ``..``, an absolute path, or a
        symlink leading out of the run root raises :class:`~sim.files.PathEscape`.
        """
        clock = self.clock(agent)
        if kind == "memory":
            return MemoryTree(mtime=clock.seconds)
        if kind == "disk":
            return DiskTree(self.root, mtime=clock.seconds, subdir=subdir)
        raise ValueError(f"unknown file tree kind {kind!r} (memory or disk)")

    # -- model requests ------------------------------------------------------------------------------
    def request(
        self,
        system: str,
        route: str,
        parts: Sequence[str],
        *,
        agent: str = "",
        estimate: int | None = None,
        needed: frozenset[str] | set[str] = frozenset(),
        kinds: Sequence[str] | None = None,
        breakpoints: Sequence[int] | None = None,
        **detail: Any,
    ) -> RequestRecord:
        """Record a model request made of *parts* (message texts, schemas...).

        The exact cost is the sum of each part's cached cl100k count; the facts are those present in any
        part. *kinds* labels each part (``system``, ``tools``, ``message``, ``memory``...): the request's
        detail then carries ``tokens_by_kind``, which a report's context-window timeline stacks. With a
        provider selected, the detail also carries ``cache`` (:meth:`sim.cache.CacheCharge.detail`):
        *breakpoints* are the part indices the design marked with ``cache_control`` (Anthropic reads
        them; without a provider they are ignored).
        """
        counts: list[int] | None = [] if self.cache is not None else None
        exact = 0
        facts: set[str] = set()
        by_kind: dict[str, int] | None = None
        if kinds is not None:
            if len(kinds) != len(parts):
                raise ValueError(f"{len(kinds)} kinds for {len(parts)} parts")
            by_kind = {}
        for i, p in enumerate(parts):
            n = count_tokens(p)
            exact += n
            if counts is not None:
                counts.append(n)
            facts |= extract_facts(p)
            if by_kind is not None and kinds is not None:
                by_kind[kinds[i]] = by_kind.get(kinds[i], 0) + n
        if by_kind is not None:
            detail["tokens_by_kind"] = by_kind
        if self.cache is not None and counts is not None:
            charge = self.cache.charge((system, agent, route), parts, counts, breakpoints, self.now)
            detail["cache"] = charge.detail()
        return self.trace.request(
            system,
            route,
            agent=agent,
            exact_tokens=exact,
            estimate=estimate,
            messages=len(parts),
            facts=frozenset(facts),
            needed=needed,
            **detail,
        )

    def request_counted(
        self,
        system: str,
        route: str,
        *,
        exact_tokens: int,
        parts: int,
        facts: frozenset[str],
        agent: str = "",
        estimate: int | None = None,
        needed: frozenset[str] | set[str] = frozenset(),
        tokens_by_kind: dict[str, int] | None = None,
        **detail: Any,
    ) -> RequestRecord:
        """Record a model request whose *parts* the caller has already counted: *exact_tokens* is the sum of
        the parts' cl100k counts, *facts* the fact ids present in them, *tokens_by_kind* those counts by
        kind. The same record :meth:`request` makes for the same parts, for a design that keeps per-part
        counts and a window's facts as running totals instead of re-reading its texts.

        With a provider selected the request is charged as wholly uncached: without its parts' texts no
        prefix can be matched (the benchmark records every request through :meth:`request`)."""
        if self.cache is not None:
            detail["cache"] = self.cache.charge_unkeyed(exact_tokens).detail()
        if tokens_by_kind is not None:
            detail["tokens_by_kind"] = tokens_by_kind
        return self.trace.request(
            system,
            route,
            agent=agent,
            exact_tokens=exact_tokens,
            estimate=estimate,
            messages=parts,
            facts=facts,
            needed=needed,
            **detail,
        )

    def close(self, complete: bool = False) -> None:
        """Flush the trace (*complete*: with its completeness marker) and remove the temporary run root
        (even when the flush fails)."""
        try:
            self.trace.close(complete=complete)
        finally:
            if self._tmp is not None:
                self._tmp.cleanup()
                self._tmp = None

    def __enter__(self) -> Simulation:
        return self

    def __exit__(self, exc_type: object, *exc: object) -> None:
        self.close(complete=exc_type is None)
