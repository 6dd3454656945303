"""The cells of a benchmark sweep: which design variant, with which knobs, at which budget and seed.

A design on the command line is ``NAME`` (upstream's design), ``NAME:fixed`` (every declared fix on),
``NAME:fix=A+B`` (those fixes), or any variant spec :meth:`sim.variant.Switches.parse` accepts after the
colon. Knobs (``--knob NAME.KEY=VALUE``) are validated by the design's own knob model. A cell runs in
any process: it carries only names and plain values, and rebuilds its design from the registry.
"""

from __future__ import annotations

import importlib
import json
import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

from sim.bench.metrics import Metrics
from sim.bench.oracle import OracleAdapter
from sim.cache import ProviderConfig
from sim.engine import Simulation
from sim.errors import UsageError
from sim.values import parse_cli_value
from sim.variant import FAITHFUL, Variant
from sim.workload import Workload, drive, shared_workload, shared_workload_file

ORACLE = "oracle"


@dataclass(frozen=True)
class DesignSpec:
    """A design variant as the benchmark runs it: its label, design name, variant and knobs."""

    label: str
    design: str
    variant: Variant = FAITHFUL
    knobs: tuple[tuple[str, Any], ...] = ()

    @property
    def knob_dict(self) -> dict[str, Any]:
        return dict(self.knobs)


def _conversation_baselines() -> tuple[str, ...]:
    """The conversation benchmark's baselines (:data:`sim.names.BASELINE_NAMES`): refused by name on the
    fact-token benchmark, which has none of them but the oracle."""
    from sim.names import BASELINE_NAMES

    return tuple(b for b in BASELINE_NAMES if b != ORACLE)


def parse_designs(text: str | None, knobs: Iterable[str] = ()) -> list[DesignSpec]:
    """The design variants of ``--designs`` (every installed design if None) with ``--knob`` values."""
    from sim.registry import design, designs

    labels = [x.strip() for x in text.split(",") if x.strip()] if text else list(designs())
    if text is not None and not labels:
        raise UsageError("--designs is empty")
    per_design: dict[str, dict[str, Any]] = {}
    for k in knobs:
        name, dot, rest = k.partition(".")
        key, eq, raw = rest.partition("=")
        if not dot or not eq or not key:
            raise UsageError(f"--knob takes DESIGN.KEY=VALUE, not {k!r}")
        d = design(name)
        value = parse_cli_value(raw, f"--knob {d.name}.{key}")
        per_design.setdefault(d.name, {})[key] = value
    out: list[DesignSpec] = []
    for label in labels:
        if label == ORACLE:
            continue
        if label in _conversation_baselines():
            raise UsageError(
                f"--designs: {label} is a baseline of conversation workloads (--workload longmemeval:FILE or "
                "locomo:FILE), where it always runs; the fact-token benchmark's bound is the oracle"
            )
        name, _, spec = label.partition(":")
        d = design(name)
        variant = d.switches.parse(spec) if spec else FAITHFUL
        values = per_design.get(d.name, {})
        knobs_model = d.parse_knobs(values)
        out.append(DesignSpec(label, d.name, variant, tuple(sorted(knobs_model.model_dump().items()))))
    if len({s.label for s in out}) != len(out):
        raise UsageError("--designs names a design variant twice")
    for name in per_design:
        if name not in {s.design for s in out}:
            raise UsageError(f"--knob sets {name} knobs but --designs does not run {name}")
    return [*out, DesignSpec(ORACLE, ORACLE)]


@dataclass(frozen=True)
class Task:
    """One cell of the sweep: a design variant at a budget on one seed's workload (or a user workload)."""

    design: str
    budget: int
    seed: int
    steps: int | None = None
    spec: DesignSpec | None = None
    workload_file: str | None = None
    cell: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)
    #: The provider whose prompt cache prices the cell's requests (``--provider``; None: ``none``).
    provider: ProviderConfig | None = None

    def affinity(self) -> Any:
        """What the cell shares with others within a process: its seed's workload, or the user's workload
        file (the same workload at every seed)."""
        return self.workload_file if self.workload_file is not None else self.seed


def tasks_for(
    designs: Iterable[str | DesignSpec],
    budgets: Iterable[int],
    seeds: int,
    steps: int | None,
    workload_file: str | None = None,
    provider: ProviderConfig | None = None,
) -> list[Task]:
    """The sweep's cells, seed-major (a worker given a seed's cells reuses its workload and caches), each
    priced by *provider*'s cache when one is given."""
    specs = [d if isinstance(d, DesignSpec) else _spec(d) for d in designs]
    return [
        Task(s.label, b, seed, steps, s, workload_file, provider=provider)
        for seed in range(seeds)
        for b in budgets
        for s in specs
    ]


def _spec(label: str) -> DesignSpec:
    if label == ORACLE:
        return DesignSpec(ORACLE, ORACLE)
    return parse_designs(label)[0]


def workload_of(task: Task) -> Workload:
    """The task's workload: the user's file, or the seed's generated one (each made once per process:
    the cells of one seed share it, :func:`sim.workload.shared_workload`)."""
    if task.workload_file is not None:
        return shared_workload_file(task.workload_file)
    return shared_workload(task.seed, task.steps)


def build_adapter(spec: DesignSpec, sim: Simulation, budget: int, workload: Workload) -> Any:
    """The adapter of *spec* built in *sim* (the oracle, or the design's own with its variant and knobs)."""
    if spec.design == ORACLE:
        return OracleAdapter(sim, budget, workload.drawn)
    from sim.registry import design

    d = design(spec.design)
    knobs = d.knobs.model_validate(spec.knob_dict)  # validated by parse_designs; this is its own dump
    return d.adapter_class()(sim, budget, workload.drawn, variant=spec.variant, knobs=knobs)


def run_task(task: Task, trace_path: str | None = None) -> dict[str, Any]:
    """Run one cell and reduce it to metrics plus the per-request series (nothing else is kept). A task
    that brings its own ``run_cell`` (a conversation unit, :class:`sim.conversations.run.ConvTask`) runs
    that instead."""
    run_cell = getattr(task, "run_cell", None)
    if run_cell is not None:
        return run_cell()  # type: ignore[no-any-return]
    importlib.import_module("sim.registry")
    spec = task.spec or _spec(task.design)
    workload = workload_of(task)
    t0 = time.perf_counter()
    sim = Simulation(task.seed, trace_path=trace_path, keep_trace=False, provider=task.provider)
    sim.trace.set_meta(design=spec.label, budget=task.budget, drawn=asdict(workload.drawn))
    adapter = build_adapter(spec, sim, task.budget, workload)
    metrics = Metrics(task.budget, sim.cache)
    drive(adapter, sim, workload, metrics)
    storage = adapter.storage()
    seconds = time.perf_counter() - t0
    sim.trace.close(complete=True)
    sim.close()
    cell = {
        "design": spec.label,
        "budget": task.budget,
        "seed": task.seed,
        "variant": spec.variant.label(),
        "knobs": json.dumps(spec.knob_dict, sort_keys=True),
    }
    return metrics.row(cell, workload.drawn, storage, seconds)
