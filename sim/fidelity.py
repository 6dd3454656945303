"""Fidelity bookkeeping: which model element and tests cover each report record ID, or why not, and every
remaining deviation from upstream.

Every design's ``fidelity`` module declares ``COVERAGE: dict[str, Coverage]`` (one entry per record ID
of its report), ``OPERATIONS: list[Operation]`` and ``NOT_MODELED: list[str]``. The record IDs come from
the design's declared :class:`~sim.registry.Report` (its ``report.json``), so coverage is checked against
the report, not against what the design chose to list. ``DEVIATIONS: list[Deviation]`` states each
remaining difference from upstream moto-style (upstream's behaviour, memsim's, why, and the measured
effect on any figure memsim reports); ``memsim doc fidelity`` prints them with the ``NOT_MODELED`` lines.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

#: The kinds of deviation: memsim behaves otherwise; memsim's own words stand for an upstream text (at its
#: cl100k size); a mechanism of upstream memsim leaves out.
DEVIATION_KINDS = ("behaviour", "wording", "not modeled")


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


@dataclass(frozen=True)
class Deviation:
    """One remaining difference from upstream: what upstream does (*upstream*, with its path:line), what
    memsim does (*memsim*), *why*, and its measured *effect* on the figures memsim reports (say how it was
    measured; "none" is a measurement too).

    A ``wording`` deviation names the upstream text and gives its exact cl100k count in *tokens*; *text*
    returns memsim's stand-in, so the count is measured, not typed (``memsim doc fidelity`` and the tests
    count it and compare).
    """

    name: str
    kind: str
    upstream: str
    memsim: str
    why: str
    effect: str
    tokens: int | None = None
    text: Callable[[], str] | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if self.kind not in DEVIATION_KINDS:
            raise ValueError(f"deviation {self.name!r}: kind {self.kind!r} is not one of {DEVIATION_KINDS}")
        if (self.kind == "wording") != (self.tokens is not None and self.text is not None):
            raise ValueError(f"deviation {self.name!r}: a wording deviation (only) gives tokens and text")

    def measured_tokens(self) -> int | None:
        """The cl100k count of memsim's text now (None unless this is a wording deviation)."""
        if self.text is None:
            return None
        from sim.tokens import count_tokens

        return count_tokens(self.text())


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


def deviations(system: str) -> list[Deviation]:
    """*system*'s declared deviations from upstream (``DEVIATIONS`` of its fidelity module)."""
    mod = fidelity_module(system)
    return list(getattr(mod, "DEVIATIONS", [])) if mod else []
