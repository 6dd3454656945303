"""The design registry: what a design is, and how memsim finds the installed ones.

A design is a Python package that declares one :class:`Design` value and registers it under the
``memsim.designs`` entry-point group, e.g. in its ``pyproject.toml``::

    [project.entry-points."memsim.designs"]
    toy = "toy.design:DESIGN"

memsim registers its own four designs the same way, so nothing in ``sim/`` names a design: every command
(``bench``, ``claims``, ``doc``, ``run``, ``replay``, ``report``) asks :func:`designs`. A design package
has the same file set as the built-ins (see DESIGN.md "Adding a design"): ``design.py`` (this
declaration), ``claims.py`` (``CLAIMS``) and ``adapter.py`` (``Adapter``) are what the registry loads;
``fidelity.py`` (``OPERATIONS``, ``NOT_MODELED``, ``COVERAGE``) and ``faults.py`` (declared fault points)
are optional.

Scenarios are found the same way, under ``memsim.scenarios``: an entry point names a scenario module or a
package of scenario modules (memsim's own ``scenarios`` package is registered as ``builtin``).
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from types import MappingProxyType, ModuleType
from typing import Any

from pydantic import BaseModel, ConfigDict

from sim.errors import UsageError
from sim.names import reserved_reason
from sim.variant import Switches

DESIGNS_GROUP = "memsim.designs"
SCENARIOS_GROUP = "memsim.scenarios"

HOW_TO_ADD = (
    "add one with `memsim new design NAME --path DIR` and `pip install -e DIR` (DESIGN.md, 'Adding a design')"
)


#: What a design is (:attr:`Design.kind`): a model of a real system, or a reference design of a
#: documented algorithm (the field's own designs, issue 39), labelled so wherever designs are listed.
KINDS = ("design", "reference")
REFERENCE = "reference"
REFERENCE_LABEL = "reference design of a documented algorithm"


class NoKnobs(BaseModel):
    """A design without benchmark knobs."""

    model_config = ConfigDict(extra="forbid", frozen=True)


@dataclass(frozen=True)
class Report:
    """The analysis report a design models: its title, where it is, and its record IDs."""

    title: str
    path: str = ""
    record_ids: tuple[str, ...] = ()
    analysis_id: str = ""

    @classmethod
    def from_package(cls, package: str, resource: str = "report.json") -> Report:
        """The report declared in *package*'s ``report.json`` (title, path, analysis id, record IDs)."""
        import json
        from importlib import resources

        data = json.loads(resources.files(package).joinpath(resource).read_text(encoding="utf-8"))
        return cls(
            data["title"],
            data.get("path", ""),
            tuple(data.get("record_ids", ())),
            data.get("analysis_id", ""),
        )


@dataclass(frozen=True)
class Design:
    """One installed design.

    *package* is the import path of the design package; *adapter*, *claims*, *fidelity* and *faults*
    name its modules (``module`` or ``module:attribute``, relative to *package*). *knobs* is a pydantic
    model of the benchmark adapter's tunable settings (types, defaults, bounds; ``--knob NAME.KEY=V``).
    *demo_scenario* is the scenario ``memsim demo`` shows for it; *markers* maps operation names in its
    traces to the labels a report's timeline marks them with (compactions, reminders, folds...).
    *transfer* (``module:function``) replays a saved example on the real system (:mod:`sim.transfer`),
    *real_system* names it (``"package 1.2.3"``) and *transfer_notes* (``module:attribute``, a dict claim id
    to note) says how each claim's counterexample transfers; the ledger shows it.
    *colour* (``#rrggbb``) is the design's colour in every plot and report (default: a palette colour no
    other installed design has, :func:`colours`). *kind* says what the design is: ``"design"`` (a model of
    a real system: memsim's four seed designs, a plugin) or ``"reference"`` (:data:`REFERENCE`: a
    reference design of a documented algorithm, e.g. LangChain's ``trim_messages``; issue 39), which
    listings, bench outputs and pages label as such (:func:`label`).
    """

    name: str
    package: str
    title: str
    report: Report
    switches: Switches
    knobs: type[BaseModel] = NoKnobs
    adapter: str = "adapter:Adapter"
    claims_module: str = "claims:CLAIMS"
    fidelity: str = "fidelity"
    faults: str = "faults"
    demo_scenario: str = ""
    transfer: str = ""
    real_system: str = ""
    transfer_notes: str = ""
    colour: str = ""
    kind: str = "design"
    markers: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"design {self.name!r}: kind {self.kind!r} is not one of {', '.join(KINDS)}")

    def _resolve(self, spec: str, default_attr: str | None = None) -> Any:
        mod_name, _, attr = spec.partition(":")
        mod = importlib.import_module(f"{self.package}.{mod_name}")
        attr = attr or (default_attr or "")
        return getattr(mod, attr) if attr else mod

    def module(self, spec: str) -> ModuleType | None:
        """The design's module *spec* (relative to its package), or None if it has none."""
        try:
            mod: ModuleType = importlib.import_module(f"{self.package}.{spec}")
        except ModuleNotFoundError as exc:
            if exc.name is not None and exc.name.startswith(f"{self.package}.{spec}"):
                return None
            raise
        return mod

    def adapter_class(self) -> type:
        """The benchmark adapter class."""
        cls: type = self._resolve(self.adapter, "Adapter")
        return cls

    def claims(self) -> list[Any]:
        """The design's claims (``CLAIMS`` of its claims module; none if it has no claims module)."""
        mod_name = self.claims_module.partition(":")[0]
        if self.module(mod_name) is None:
            return []
        return list(self._resolve(self.claims_module, "CLAIMS"))

    def transfer_note(self, claim_id: str) -> str:
        """How *claim_id*'s counterexample transfers to the real system ("" when none is declared)."""
        if not self.transfer_notes:
            return ""
        notes: Mapping[str, str] = self._resolve(self.transfer_notes)
        return notes.get(claim_id, "")

    def load_faults(self) -> None:
        """Import the design's fault-point declarations (if it has any)."""
        self.module(self.faults)

    def parse_knobs(self, values: Mapping[str, Any]) -> BaseModel:
        """The design's knobs with *values* overriding the defaults; raises :class:`UsageError`."""
        from sim.values import validate_strict  # the rule --param and scenario files share

        return validate_strict(self.knobs, values, f"invalid knob {self.name}.")


def _entry_points(group: str) -> list[Any]:
    from importlib.metadata import entry_points

    return sorted(entry_points(group=group), key=lambda ep: ep.name)


@cache
def designs() -> Mapping[str, Design]:
    """Every installed design that loads, by name, in name order.

    An entry point that raises, or names something that is not a :class:`Design`, is skipped and noted
    (:func:`broken`): a command that does not need it runs (the CLI warns once), and :func:`design`
    refuses its name with the error. Two designs of one name are a usage error (nothing could choose).
    """
    out: dict[str, Design] = {}
    for ep in _entry_points(DESIGNS_GROUP):
        try:
            obj = ep.load()
            if callable(obj) and not isinstance(obj, Design):
                obj = obj()
        except Exception as exc:
            _note_broken(ep, f"design {ep.name!r} ({ep.value}) failed to load: {type(exc).__name__}: {exc}")
            continue
        if not isinstance(obj, Design):
            _note_broken(ep, f"design entry point {ep.name!r} ({ep.value}) is not a sim.registry.Design")
        elif obj.name != ep.name:
            _note_broken(ep, f"design entry point {ep.name!r} declares a design named {obj.name!r}")
        elif (why := reserved_reason(ep.name)) is not None:
            _note_broken(ep, f"design {ep.name!r} ({ep.value}) cannot be used: {why}")
        elif ep.name in out:
            raise UsageError(f"two installed packages register a design named {ep.name!r}")
        else:
            out[ep.name] = obj
    return MappingProxyType(out)


#: Plugins that failed to load: distribution name -> the first error (one line each).
_BROKEN: dict[str, str] = {}
#: Broken design names -> their error (a command naming one is refused with it).
_BROKEN_DESIGNS: dict[str, str] = {}


def _distribution(ep: Any) -> str:
    dist = getattr(ep, "dist", None)
    return str(getattr(dist, "name", "") or ep.value.partition(".")[0].partition(":")[0])


def _note_broken(ep: Any, message: str) -> None:
    if ep.group == DESIGNS_GROUP:
        _BROKEN_DESIGNS.setdefault(ep.name, message)
    _BROKEN.setdefault(_distribution(ep), message)


def note_broken_scenarios(ep_name: str, message: str) -> None:
    """Note that the ``memsim.scenarios`` entry point *ep_name* failed to load (:mod:`sim.scenario`)."""
    for ep in _entry_points(SCENARIOS_GROUP):
        if ep.name == ep_name:
            _note_broken(ep, message)
            return


def broken() -> dict[str, str]:
    """Installed plugins (by distribution) skipped because they failed to load, with their error."""
    return dict(_BROKEN)


def registered_by(name: str) -> str:
    """The distribution that registers design *name* (``memsim`` for memsim's own)."""
    for ep in _entry_points(DESIGNS_GROUP):
        if ep.name == name:
            return _distribution(ep)
    raise UsageError(f"unknown design {name!r}")


def is_reference(name: str) -> bool:
    """Whether the installed design *name* is a reference design (False for an unknown name: a baseline,
    the oracle)."""
    found = designs().get(name.partition(":")[0])
    return found is not None and found.kind == REFERENCE


def label(name: str) -> str:
    """*name* as listings show it: a reference design carries ``(reference design of a documented
    algorithm)``; any other name is itself."""
    return f"{name} ({REFERENCE_LABEL})" if is_reference(name) else name


def reference_note(labels: Iterable[str]) -> str:
    """The line a table or page shows under its designs when some are reference designs ("" when none is):
    which ones are reference designs of documented algorithms, not seed systems."""
    refs = list(dict.fromkeys(n.partition(":")[0] for n in labels if is_reference(n)))
    if not refs:
        return ""
    return f"Reference designs of documented algorithms (not seed systems): {', '.join(refs)}."


def names() -> list[str]:
    """The installed designs' names."""
    return list(designs())


def design(name: str) -> Design:
    """The installed design *name*; an unknown name lists the installed ones and how to add one."""
    found = designs()
    if name not in found:
        if name in _BROKEN_DESIGNS:
            raise UsageError(_BROKEN_DESIGNS[name])
        have = ", ".join(found) or "(none)"
        raise UsageError(f"unknown design {name!r}: installed designs are {have}; {HOW_TO_ADD}")
    return found[name]


#: Colours for designs that declare none (Okabe-Ito, then Tableau), and the oracle's grey.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#8C564B", "#BCBD22",
           "#17BECF", "#9467BD", "#2CA02C", "#F0E442", "#FF7F0E", "#E377C2")  # fmt: skip
ORACLE_COLOUR = "#444444"


@cache
def colours() -> Mapping[str, str]:
    """Every installed design's colour (``#rrggbb``), all different.

    A design's declared :attr:`Design.colour` wins; a design without one gets a palette colour chosen
    by a stable hash of its name and moved on past every colour already taken (declared ones, the
    oracle's, and those given to designs earlier in name order), so it depends only on which designs are
    installed, never on which run beside it. Past the palette, colours are spaced around the hue wheel.
    """
    import colorsys
    import hashlib

    found = designs()
    taken = {ORACLE_COLOUR.lower()} | {d.colour.lower() for d in found.values() if d.colour}
    out: dict[str, str] = {}
    for name, d in found.items():
        if d.colour:
            out[name] = d.colour
            continue
        start = int(hashlib.sha256(name.encode()).hexdigest(), 16)
        pick = next(
            (PALETTE[(start + i) % len(PALETTE)] for i in range(len(PALETTE))
             if PALETTE[(start + i) % len(PALETTE)].lower() not in taken),
            None,
        )  # fmt: skip
        hue = (start % 360) / 360
        while pick is None or pick.lower() in taken:
            r, g, b = colorsys.hls_to_rgb(hue, 0.45, 0.65)
            pick = f"#{round(r * 255):02X}{round(g * 255):02X}{round(b * 255):02X}"
            hue = (hue + 0.618033988749895) % 1.0
        taken.add(pick.lower())
        out[name] = pick
    return MappingProxyType(out)


def scenario_sources() -> list[tuple[str, str]]:
    """``(entry-point name, module path)`` of every registered scenario module or package."""
    return [(ep.name, ep.value) for ep in _entry_points(SCENARIOS_GROUP)]
