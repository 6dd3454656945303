"""Fidelity bookkeeping: which model element and tests cover each report record ID, or why not.

Every design's ``fidelity`` module declares ``COVERAGE: dict[str, Coverage]`` (one entry per record ID
of its report), ``OPERATIONS: list[Operation]`` and ``NOT_MODELED: list[str]``. The record IDs come from
the design's declared :class:`~sim.registry.Report` (its ``report.json``), so coverage is checked against
the report, not against what the design chose to list.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Coverage:
    """How one record ID is covered: model elements and tests, or a "Not modeled:" reason."""

    elements: tuple[str, ...] = ()
    tests: tuple[str, ...] = ()
    not_modeled: str = ""

    @property
    def covered(self) -> bool:
        return bool(self.elements and self.tests) or bool(self.not_modeled)


@dataclass(frozen=True)
class Operation:
    """A modeled operation: its upstream name, the record IDs it cites and a one-line summary."""

    name: str
    records: tuple[str, ...]
    summary: str
    faults: tuple[str, ...] = field(default=())


def fidelity_module(system: str) -> Any:
    """The design's fidelity module, or None if it has none."""
    from sim.registry import design

    d = design(system)
    return d.module(d.fidelity)


def coverage(system: str) -> list[tuple[str, Coverage | None]]:
    """Every record ID of *system*'s report with its coverage (None when the design does not cover it)."""
    from sim.registry import design

    mod = fidelity_module(system)
    table: dict[str, Coverage] = getattr(mod, "COVERAGE", {}) if mod else {}
    return [(rid, table.get(rid)) for rid in design(system).report.record_ids]
