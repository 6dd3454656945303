"""The cross-design workload and the adapter protocol the context-budget benchmark drives.

A :class:`Workload` is a seeded sequence of :class:`WorkStep`: each carries an observation of a drawn size
with embedded fact tokens; some later steps are *probes* that need one specific earlier fact. Each seed
also draws the budget pressure, message sizes, summarizer lossiness and clock skew (swarm style), and
:class:`Drawn` logs what it drew. An adapter per design (``systems/<name>/adapter.py``) maps the
workload onto that design's own mechanics and returns, per step, the :class:`ModelRequest` the design
would send to the model.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Protocol

from sim.engine import Simulation
from sim.rng import derive_seed
from sim.text import fact_id, fact_token, fact_value, observation
from sim.trace import RequestRecord


@dataclass(frozen=True)
class WorkStep:
    """One workload step: an observation (with fact tokens) and, for probes, the fact it needs."""

    index: int
    observation: str
    facts: tuple[str, ...] = ()
    probe: str | None = None
    question: str = ""
    phase: str = "load"  # "load" (budget pressure) or "calm" (pressure dropped; liveness)


@dataclass(frozen=True)
class Drawn:
    """What one seed drew (logged with every result)."""

    seed: int
    steps: int
    obs_tokens_mean: int
    obs_tokens_max: int
    facts_per_step: float
    probe_every: int
    lossiness: float
    skew_s: float
    calm_steps: int


class Workload:
    """A seeded workload: the drawn parameters and the steps, generated lazily (100,000 steps fit)."""

    def __init__(self, drawn: Drawn) -> None:
        self.drawn = drawn
        self._steps: tuple[WorkStep, ...] | None = None

    def __repr__(self) -> str:
        return f"Workload({self.drawn!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Workload) and self.drawn == other.drawn and self.steps == other.steps

    __hash__ = None  # type: ignore[assignment]

    def __len__(self) -> int:
        return self.drawn.steps + self.drawn.calm_steps

    @property
    def steps(self) -> tuple[WorkStep, ...]:
        """Every step, materialized (use :meth:`iter_steps` for long workloads)."""
        if self._steps is None:
            self._steps = tuple(self.iter_steps())
        return self._steps

    def iter_steps(self) -> Iterator[WorkStep]:
        """The steps, generated one at a time from the seed."""
        if self._steps is not None:
            yield from self._steps
            return
        d = self.drawn
        r = random.Random(derive_seed(d.seed, "workload.steps"))
        next_fact = 1
        seen: list[str] = []
        for i in range(d.steps + d.calm_steps):
            calm = i >= d.steps
            mean = 80 if calm else d.obs_tokens_mean
            size_tokens = min(d.obs_tokens_max, max(20, int(r.expovariate(1.0 / mean))))
            n_facts = 0 if calm else int(d.facts_per_step) + (1 if r.random() < d.facts_per_step % 1 else 0)
            facts = []
            for _ in range(n_facts):
                facts.append(fact_token(next_fact, fact_value(r)))
                seen.append(fact_id(next_fact))
                next_fact += 1
            probe = None
            question = ""
            if seen and i > 0 and i % d.probe_every == 0:
                probe = r.choice(seen)
                question = f"Question: what is the value of {probe}?"
            text = observation(r, int(size_tokens * 4.8), facts)
            yield WorkStep(i, text, tuple(facts), probe, question, "calm" if calm else "load")

    @property
    def facts(self) -> dict[str, str]:
        """Every fact id to its token."""
        out: dict[str, str] = {}
        for s in self.iter_steps():
            for f in s.facts:
                out[f.split("=")[0]] = f
        return out


def draw(seed: int, steps: int | None = None) -> Drawn:
    """Swarm-style draw of a workload's parameters from *seed*."""
    r = random.Random(derive_seed(seed, "workload.draw"))
    n = steps if steps is not None else r.choice([120, 160, 200])
    return Drawn(
        seed=seed,
        steps=n,
        obs_tokens_mean=r.choice([300, 600, 1200, 2400]),
        obs_tokens_max=r.choice([4000, 8000, 16000]),
        facts_per_step=r.choice([0.5, 1.0, 2.0]),
        probe_every=r.choice([5, 8, 12]),
        lossiness=r.choice([0.0, 0.25, 0.5]),
        skew_s=r.choice([0.0, 30.0, 400.0]),
        calm_steps=max(10, n // 10),
    )


def make_workload(seed: int, steps: int | None = None, drawn: Drawn | None = None) -> Workload:
    """The workload of *seed* (or of explicitly drawn parameters)."""
    return Workload(drawn or draw(seed, steps))


@dataclass(frozen=True)
class ModelRequest:
    """What a design sends to the model at one step: the parts (messages), its own estimate, a route."""

    parts: tuple[str, ...]
    estimate: int | None
    route: str


@dataclass(frozen=True)
class StorageStats:
    """A design's durable footprint after a run."""

    durable_bytes: int
    bytes_written: int
    ops: int


class DesignAdapter(Protocol):
    """The protocol every ``systems/<name>/adapter.py`` implements as ``Adapter``.

    ``__init__(sim, budget, drawn)`` builds the design in *sim* with a provider window of *budget*
    tokens; ``step(step)`` applies one workload step with the design's own mechanics and returns the
    request the model sees for it (the probe question, if any, is part of that request);
    ``storage()`` reports the durable footprint.
    """

    name: str

    def step(self, step: WorkStep) -> ModelRequest: ...

    def storage(self) -> StorageStats: ...


AdapterFactory = type


def run_adapter(factory: type, sim: Simulation, workload: Workload, budget: int) -> list[ModelRequest]:
    """Drive *factory*'s adapter through *workload*, recording each request; returns the requests."""
    out: list[ModelRequest] = []
    drive(factory(sim, budget, workload.drawn), sim, workload, lambda step, req, rec: out.append(req))
    return out


def drive(
    adapter: DesignAdapter,
    sim: Simulation,
    workload: Workload,
    on_request: Callable[[WorkStep, ModelRequest, RequestRecord], None] | None = None,
) -> int:
    """Drive an adapter through *workload*, recording each request in ``sim.trace``; returns the steps.

    Nothing is kept here: *on_request* sees each step, request and record as it happens (metrics are
    accumulated by the caller), so a 100,000-step run holds one step at a time.
    """
    n = 0
    for step in workload.iter_steps():
        req = adapter.step(step)
        rec = sim.request(
            adapter.name,
            req.route,
            req.parts,
            estimate=req.estimate,
            needed=frozenset({step.probe}) if step.probe else frozenset(),
            step=step.index,
            phase=step.phase,
        )
        if on_request is not None:
            on_request(step, req, rec)
        n += 1
    return n
