"""Runnable scenarios: readable scripts in ``scenarios/`` that set up a design, drive it and summarize.

A scenario module (see ``scenarios/README.md``) has a docstring with ``Covers:`` and ``Scenario:``, a
``SYSTEM`` name, a ``SEED``, an optional pydantic ``Params`` model (defaults are the embedded values) and
``run(ctx) -> list[str]`` returning the deterministic summary lines. Each has a committed ``<name>.out``
that a test compares with the output of the default run. A scenario *file* (TOML) selects a scenario and
overrides its seed, faults, store and parameters; it is validated by :class:`ScenarioFile`.
"""

from __future__ import annotations

import importlib
import pkgutil
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from sim.engine import Simulation
from sim.errors import UsageError
from sim.faults import FaultPlan
from sim.objects import ObjectStore, open_store


class NoParams(BaseModel):
    """A scenario without parameters."""

    model_config = ConfigDict(extra="forbid")


class ScenarioFile(BaseModel):
    """A scenario file: which scenario to run, and what to override."""

    model_config = ConfigDict(extra="forbid")

    scenario: str = Field(description="name of a scenario in `memsim doc scenarios`")
    seed: int | None = Field(default=None, ge=0, description="run seed (default: the scenario's SEED)")
    faults: list[str] = Field(default_factory=list, description="fault specs, see `memsim doc faults`")
    store: str = Field(default="memory", description="object store: memory, moto, moto-server or a URL")
    params: dict[str, Any] = Field(default_factory=dict, description="overrides of the scenario's Params")


@dataclass
class Context:
    """What a scenario's ``run`` gets: the simulation, its parameters and the chosen store kind."""

    sim: Simulation
    params: Any
    store_kind: str = "memory"

    def open_store(self) -> ObjectStore:
        """A fresh object store of the chosen kind (close it when done)."""
        return open_store(self.store_kind)


@dataclass(frozen=True)
class Scenario:
    """A registered scenario module."""

    name: str
    system: str
    seed: int
    doc: str
    params: type[BaseModel]
    run: Callable[[Context], list[str]]
    module: ModuleType

    @property
    def title(self) -> str:
        return (self.doc.strip().splitlines() or [self.name])[0]

    @property
    def expected_path(self) -> Path:
        return Path(self.module.__file__ or "").with_suffix(".out")


def scenarios() -> dict[str, Scenario]:
    """Every scenario module in the ``scenarios`` package, by name."""
    import scenarios as pkg

    out: dict[str, Scenario] = {}
    for info in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda i: i.name):
        if info.name.startswith("_"):
            continue
        mod = importlib.import_module(f"scenarios.{info.name}")
        if not hasattr(mod, "run"):
            continue
        out[info.name] = Scenario(
            info.name,
            getattr(mod, "SYSTEM", "?"),
            int(getattr(mod, "SEED", 0)),
            mod.__doc__ or "",
            getattr(mod, "Params", NoParams),
            mod.run,
            mod,
        )
    return out


def get(name: str) -> Scenario:
    """The scenario *name*; raises :class:`UsageError`."""
    found = scenarios()
    if name not in found:
        raise UsageError(f"unknown scenario {name!r}: expected one of {', '.join(found) or '(none)'}")
    return found[name]


def load_file(path: str | Path) -> ScenarioFile:
    """Parse and validate a scenario file; raises :class:`UsageError` with one line."""
    p = Path(path)
    try:
        data = tomllib.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise UsageError(f"scenario file not found: {p}") from exc
    except OSError as exc:  # a directory, no permission...
        raise UsageError(f"cannot read scenario file {p}: {exc.strerror or exc}") from exc
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise UsageError(f"malformed scenario file {p}: {exc}") from exc
    try:
        return ScenarioFile.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(x) for x in err["loc"]) or "file"
        raise UsageError(f"invalid scenario file {p}: {where}: {err['msg']}") from exc


def parse_params(scenario: Scenario, values: dict[str, Any]) -> BaseModel:
    """Validate parameter overrides against the scenario's Params model."""
    try:
        return scenario.params.model_validate(values)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(x) for x in err["loc"]) or "params"
        raise UsageError(f"invalid parameter for scenario {scenario.name}: {where}: {err['msg']}") from exc


def execute(
    name: str,
    *,
    seed: int | None = None,
    faults: list[str] | None = None,
    store: str = "memory",
    params: dict[str, Any] | None = None,
    trace_path: str | Path | None = None,
    root: str | Path | None = None,
) -> list[str]:
    """Run scenario *name* and return its summary lines (validating everything first)."""
    sc = get(name)
    parsed = parse_params(sc, params or {})
    plan = FaultPlan.parse(faults or [])
    if store not in ("memory", "moto", "moto-server") and not store.startswith(("http://", "https://")):
        raise UsageError(f"unknown store {store!r}: expected memory, moto, moto-server or an http(s):// URL")
    run_seed = sc.seed if seed is None else seed
    # Scenarios summarize from the in-memory trace, so keep it even when it is also streamed to disk.
    sim = Simulation(run_seed, faults=plan, trace_path=trace_path, keep_trace=True, root=root)
    sim.trace.set_meta(scenario=name, store=store, params=parsed.model_dump(mode="json"))
    try:
        return sc.run(Context(sim, parsed, store))
    finally:
        sim.close()


def main(module_name: str) -> None:
    """Entry point for ``python -m scenarios.<name>``: run it with defaults and print the summary."""
    name = module_name.rsplit(".", 1)[-1]
    for line in execute(name):
        print(line)
