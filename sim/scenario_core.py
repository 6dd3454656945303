"""Runnable scenarios: readable scripts that set up a design, drive it and summarize what happened.

A scenario module has a docstring with ``Covers:`` and ``Scenario:``, a ``SYSTEM`` (an installed design),
a ``SEED``, an optional ``Params`` model (a subclass of :class:`Params`: unknown keys, infinities and NaN
are refused; every field documents its bounds) and ``run(ctx) -> list[str]`` returning the deterministic
summary lines. Optional: ``STORES`` (the object stores it can run on; a scenario without it uses none, and
``--store`` is then an error) and ``KEEP_TRACE = False`` (the summary is computed without the in-memory
trace, so a long run streams its trace to disk in flat memory).

Scenarios come from three places, all runnable with every option (``--seed``, ``--fault``, ``--store``,
``--param``, ``--out``) and replayable:

* registered names: modules or packages of modules under the ``memsim.scenarios`` entry-point group
  (memsim's own ``scenarios`` package is ``builtin``);
* a script path: ``memsim run path/to/script.py`` or ``python path/to/script.py`` (the script ends with
  ``if __name__ == "__main__": main(__name__)``);
* a scenario file (TOML, :class:`ScenarioFile`) whose ``scenario`` is a name or a script path relative
  to the file.

Scripts import these names and ``main`` from :mod:`sim.scenario`, which sits above the command line (this
module, below it, was ``sim/scenario.py`` until issue 41).
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import pkgutil
import shutil
import sys
from collections.abc import Callable, Iterable
from contextlib import suppress
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from sim.engine import Simulation
from sim.errors import MemsimError, UsageError
from sim.faults import Crash, FaultPlan
from sim.limits import decode_text, load_toml, read_bounded
from sim.objects import ObjectStore, open_store
from sim.outputs import Outputs, is_write_failure, write_failure

#: The object-store kinds ``--store`` accepts besides an ``http(s)://`` endpoint URL.
STORE_KINDS = ("memory", "moto", "moto-server")


class Params(BaseModel):
    """The base of every scenario's parameters: unknown keys, infinities and NaN are errors."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, frozen=True)


NoParams = Params


class ScenarioFile(BaseModel):
    """A scenario file: which scenario to run (a name or a script path), and what to override."""

    model_config = ConfigDict(extra="forbid", strict=True)

    scenario: str = Field(
        description="a scenario name (`memsim doc scenarios`) or a .py path relative to the file"
    )
    seed: int | None = Field(
        default=None, ge=0, le=2**63 - 1, description="run seed (default: the scenario's SEED)"
    )
    faults: list[str] = Field(
        default_factory=list, max_length=100, description="fault specs, `memsim doc faults`"
    )
    store: str | None = Field(default=None, description="object store: memory, moto, moto-server or a URL")
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
    """A runnable scenario module (registered, or a script loaded from a path)."""

    name: str
    system: str
    seed: int
    doc: str
    params: type[BaseModel]
    run: Callable[[Context], list[str]]
    module: ModuleType
    stores: tuple[str, ...] = ()
    keep_trace: bool = True
    path: str = ""  # the script path, for a scenario loaded from a file

    @property
    def title(self) -> str:
        return (self.doc.strip().splitlines() or [self.name])[0]

    @property
    def expected_path(self) -> Path:
        return Path(self.module.__file__ or "").with_suffix(".out")


def from_module(mod: ModuleType, name: str, path: str = "") -> Scenario:
    """The scenario defined by module *mod*; raises :class:`UsageError` if it is not one."""
    from sim.registry import design

    where = path or mod.__name__
    if not callable(getattr(mod, "run", None)):
        raise UsageError(f"{where} is not a scenario: it defines no run(ctx) function")
    system = getattr(mod, "SYSTEM", None)
    if not isinstance(system, str):
        raise UsageError(f"{where} is not a scenario: it declares no SYSTEM (the design it runs)")
    design(system)  # an unknown design lists the installed ones
    seed = getattr(mod, "SEED", 0)
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise UsageError(f"{where}: SEED must be a non-negative integer, not {seed!r}")
    params = getattr(mod, "Params", Params)
    if not (isinstance(params, type) and issubclass(params, BaseModel)):
        raise UsageError(f"{where}: Params must be a pydantic model (subclass sim.scenario.Params)")
    stores = tuple(getattr(mod, "STORES", ()))
    return Scenario(
        name, system, seed, mod.__doc__ or "", params, mod.run, mod, stores,
        bool(getattr(mod, "KEEP_TRACE", True)), path,
    )  # fmt: skip


@cache
def scenarios() -> dict[str, Scenario]:
    """Every registered scenario, by name (from the ``memsim.scenarios`` entry points)."""
    from sim.registry import note_broken_scenarios, scenario_sources

    out: dict[str, Scenario] = {}
    for ep_name, target in scenario_sources():
        try:
            found = _source(ep_name, target)
        except Exception as exc:  # a broken plugin: skipped and noted (the CLI warns), the rest still run
            why = str(exc) if isinstance(exc, UsageError) else f"{type(exc).__name__}: {exc}"
            _BROKEN_SOURCES[ep_name] = f"scenario source {ep_name!r} ({target}) failed to load: {why}"
            note_broken_scenarios(ep_name, _BROKEN_SOURCES[ep_name])
            continue
        for name, sc in found.items():
            if name in out:
                raise UsageError(f"two registered scenarios are named {name!r}")
            out[name] = sc
    return dict(sorted(out.items()))


#: Scenario entry points that failed to load -> their error (named by an unknown-scenario error).
_BROKEN_SOURCES: dict[str, str] = {}


def _source(ep_name: str, target: str) -> dict[str, Scenario]:
    """The scenarios of one ``memsim.scenarios`` entry point (a module or a package of modules)."""
    mod = importlib.import_module(target)
    found: list[tuple[str, ModuleType]] = []
    if hasattr(mod, "__path__"):
        for info in sorted(pkgutil.iter_modules(mod.__path__), key=lambda i: i.name):
            if info.name.startswith("_"):
                continue
            sub = importlib.import_module(f"{target}.{info.name}")
            if hasattr(sub, "run"):
                found.append((info.name, sub))
    else:
        found.append((target.rsplit(".", 1)[-1], mod))
    out: dict[str, Scenario] = {}
    for name, sub in found:
        if name in out:
            raise UsageError(f"two registered scenarios are named {name!r}")
        out[name] = from_module(sub, name)
    return out


def get(name: str) -> Scenario:
    """The registered scenario *name*; raises :class:`UsageError`."""
    found = scenarios()
    if name not in found:
        skipped = "".join(f"; {why}" for why in _BROKEN_SOURCES.values())
        raise UsageError(
            f"unknown scenario {name!r}: expected one of {', '.join(found) or '(none)'} or a path to a .py "
            f"script or .toml file{skipped}"
        )
    return found[name]


def load_script(path: str | os.PathLike[str]) -> Scenario:
    """The scenario defined by the Python script at *path* (a registered scenario's file maps to it)."""
    p = Path(path)
    read_bounded(p, "scenario script")  # a regular, bounded file
    resolved = p.resolve()
    for sc in scenarios().values():
        if Path(sc.module.__file__ or "").resolve() == resolved:
            return sc
    mod_name = f"memsim_script_{abs(hash(str(resolved))):x}"
    spec = importlib.util.spec_from_file_location(mod_name, resolved)
    if spec is None or spec.loader is None:
        raise UsageError(f"cannot load scenario script {path}")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[mod_name] = mod
    no_bytecode = sys.dont_write_bytecode
    sys.dont_write_bytecode = True  # no __pycache__ beside the user's script
    try:
        spec.loader.exec_module(mod)
    except UsageError:
        sys.modules.pop(mod_name, None)
        raise
    except SystemExit as exc:
        sys.modules.pop(mod_name, None)
        raise UsageError(f"scenario script {path} exited while being imported (code {exc.code})") from exc
    except Exception as exc:
        sys.modules.pop(mod_name, None)
        raise UsageError(f"scenario script {path} failed to import: {type(exc).__name__}: {exc}") from exc
    finally:
        sys.dont_write_bytecode = no_bytecode
    return from_module(mod, p.stem, str(resolved))


def resolve(spec: str) -> Scenario:
    """A scenario from a name or a ``.py`` script path."""
    if spec.endswith(".py"):
        return load_script(spec)
    if os.sep in spec or (os.altsep and os.altsep in spec) or Path(spec).suffix:
        raise UsageError(f"{spec!r} is neither a scenario name nor a .py script or .toml file")
    return get(spec)


def load_file(path: str | os.PathLike[str]) -> tuple[ScenarioFile, Scenario]:
    """Parse and validate a scenario file and the scenario it names; one-line errors."""
    p = Path(path)
    text = decode_text(read_bounded(p, "scenario file"), "scenario file", p)
    data = load_toml(text, "scenario file", p)
    try:
        spec = ScenarioFile.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(x) for x in err["loc"]) or "file"
        raise UsageError(f"invalid scenario file {p}: {where}: {err['msg']}") from exc
    target = spec.scenario
    if target.endswith(".py"):
        script = Path(target)
        if not script.is_absolute():
            script = p.parent / script
        return spec, load_script(script)
    return spec, resolve(target)


def parse_params(scenario: Scenario, values: dict[str, Any]) -> BaseModel:
    """Validate parameter overrides against the scenario's Params model (unknown keys are errors; values
    are not coerced: ``"7"`` or ``true`` for an integer parameter is an error)."""
    known = set(scenario.params.model_fields)
    for k in values:
        if k not in known:
            hint = f"; its parameters are {', '.join(sorted(known))}" if known else "; it has no parameters"
            raise UsageError(
                f"scenario {scenario.name} has no parameter {k!r}{hint} (`memsim doc params {scenario.name}`)"
            )
    from sim.values import validate_strict

    return validate_strict(scenario.params, values, f"invalid parameter for scenario {scenario.name}: ")


def check_store(scenario: Scenario, store: str | None) -> str:
    """The store kind to run *scenario* on (``memory`` unless given); refuses one it cannot use."""
    if store is None:
        return "memory"
    if store not in STORE_KINDS and not store.startswith(("http://", "https://")):
        raise UsageError(f"unknown store {store!r}: expected memory, moto, moto-server or an http(s):// URL")
    if not scenario.stores:
        raise UsageError(f"scenario {scenario.name} uses no object store, so --store does not apply")
    if store not in STORE_KINDS:
        from sim.objects import check_endpoint

        check_endpoint(store)
    return store


@dataclass
class Result:
    """A finished run: the summary lines, the committed trace path, and problems found after the run."""

    lines: list[str]
    trace_path: Path | None = None
    unfired: list[str] = field(default_factory=list)
    crashed: str = ""


@dataclass
class Plan:
    """A validated run: everything checked before anything is written."""

    scenario: Scenario
    seed: int
    faults: FaultPlan
    store: str
    params: BaseModel


def plan(
    scenario: Scenario | str,
    *,
    seed: int | None = None,
    faults: list[str] | None = None,
    store: str | None = None,
    params: dict[str, Any] | None = None,
) -> Plan:
    """Validate a run of *scenario* (a name, a script path or a :class:`Scenario`)."""
    sc = resolve(scenario) if isinstance(scenario, str) else scenario
    parsed = parse_params(sc, params or {})
    fault_plan = FaultPlan.parse(faults or [])
    fault_plan.check_system(sc.system)
    if seed is not None and not (isinstance(seed, int) and 0 <= seed < 2**63):
        raise UsageError(f"seed must be an integer between 0 and 2**63 - 1, not {seed!r}")
    return Plan(sc, sc.seed if seed is None else seed, fault_plan, check_store(sc, store), parsed)


def execute(
    scenario: Scenario | str,
    *,
    seed: int | None = None,
    faults: list[str] | None = None,
    store: str | None = None,
    params: dict[str, Any] | None = None,
    trace_path: str | Path | None = None,
    root: str | Path | None = None,
    outputs: Outputs | None = None,
) -> list[str]:
    """Run a scenario and return its summary lines (validating everything first; see :func:`run_plan`)."""
    p = plan(scenario, seed=seed, faults=faults, store=store, params=params)
    result = run_plan(p, trace_path=trace_path, root=root, outputs=outputs)
    return result.lines


def run_plan(
    p: Plan,
    *,
    trace_path: str | Path | None = None,
    root: str | Path | None = None,
    outputs: Outputs | None = None,
    progress: Callable[[int, float], None] | None = None,
) -> Result:
    """Run a validated plan. The trace and the run root (*root*, where disk trees live) are staged and
    committed only if the run ends (normally or at an injected crash), each replacing what an earlier run
    left under its name; a fault naming an agent the run never created is a :class:`UsageError` after the
    run, with nothing written. With *outputs* the caller commits; otherwise this commits its own."""
    own = outputs is None
    out = outputs or Outputs()
    staged = out.stage(trace_path) if trace_path is not None else None
    staged_root = out.stage_dir(root, "run root") if root is not None else None
    sc = p.scenario
    result = Result([])
    sim: Simulation | None = None
    try:
        sim = Simulation(
            p.seed, faults=p.faults, trace_path=staged, keep_trace=sc.keep_trace, root=staged_root
        )
        sim.trace.progress = progress
        meta: dict[str, Any] = {
            "scenario": sc.name,
            "store": p.store,
            "params": p.params.model_dump(mode="json"),
        }
        if sc.path:
            meta["script"] = Path(sc.path).name
        sim.trace.set_meta(**meta)
        try:
            result.lines = _summary(sc, sc.run(Context(sim, p.params, p.store)))
        except Crash as exc:
            sim.trace.op(sc.system, "crash", phase="crash", point=exc.point)
            result.crashed = exc.point
            result.lines = [
                f"crashed at {exc.point} (simulation time {sim.now:g} s): the run stops there; the trace "
                "holds every write made before it"
            ]
        except MemsimError:
            raise
        except SystemExit as exc:  # not an Exception: it would end memsim with the script's exit code
            raise ScriptFailed(_script_failure(sc, exc)) from None
        except Exception as exc:
            if is_write_failure(exc) or not sc.path:
                raise  # a full disk (below), or a registered scenario's bug: exit 1, "internal error"
            raise ScriptFailed(_script_failure(sc, exc)) from exc
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # GeneratorExit or a BaseException subclass of the script's own
            raise ScriptFailed(_script_failure(sc, exc)) from None
        unknown = p.faults.unknown_agents()
        if unknown:
            raise UsageError(
                f"fault {unknown[0]} names an agent scenario {sc.name} never created "
                f"(its agents: {', '.join(sorted(p.faults.queried)) or 'none'})"
            )
        for f in p.faults.unfired():
            result.unfired.append(
                f"fault {f} never fired: {f.target} was reached {p.faults.hits(f.target)} time(s)"
            )
        sim.close(complete=True)
    except BaseException as exc:
        if sim is not None:
            with suppress(Exception):  # the trace may be what cannot be written
                sim.close()
        if own:
            out.abort()
        elif staged_root is not None:
            shutil.rmtree(staged_root, ignore_errors=True)
        if isinstance(exc, Exception) and is_write_failure(exc):  # a full disk, a read-only file system
            where = getattr(exc, "filename", None) or f"the trace {trace_path}"
            raise write_failure(exc, where) from exc
        raise
    if own:
        out.commit()
    result.trace_path = Path(trace_path) if trace_path is not None else None
    return result


class ScriptFailed(UsageError):
    """A scenario script given by path raised an exception or returned something that is not lines."""


def _summary(sc: Scenario, lines: Any) -> list[str]:
    """The summary lines *run* returned (a list of lines; a string or a number is an error)."""
    if isinstance(lines, str | bytes) or not isinstance(lines, Iterable):
        kind = type(lines).__name__
        raise ScriptFailed(f"scenario {sc.name}: run(ctx) must return a list of lines, not {kind}")
    return [str(line) for line in lines]


def _script_failure(sc: Scenario, exc: BaseException) -> str:
    """One line naming the script line where *exc* was raised (the deepest frame in the script file); a
    ``sys.exit`` is named as such (a scenario returns its lines; memsim alone sets the exit code)."""
    import traceback

    where = ""
    target = Path(sc.path or sc.module.__file__ or "").resolve()
    for frame in traceback.extract_tb(exc.__traceback__):
        if Path(frame.filename).resolve() == target:
            where = f" at line {frame.lineno}"
    who = f"scenario script {sc.path}" if sc.path else f"scenario {sc.name}"
    if isinstance(exc, SystemExit):
        return (
            f"{who} called sys.exit({exc.code!r}){where} in run(ctx): a scenario returns its summary lines "
            "and memsim alone sets the exit code"
        )
    return f"{who} raised {type(exc).__name__}{where}: {exc}"
