"""Fidelity bookkeeping: which model element and tests cover each report record ID, or why not.

Every system's ``fidelity.py`` declares ``RECORDS: dict[str, Coverage]`` (one entry per record ID in its
report), ``OPERATIONS: list[Operation]`` and ``NOT_MODELED: list[str]``. The record IDs that appear in the
four reports ship as data (``sim/data/records.json``), so coverage is checked against the reports, not
against what a system chose to list.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
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


@lru_cache(maxsize=1)
def report_records() -> dict[str, dict[str, Any]]:
    """System name to ``{"seed": file, "records": [ids]}`` for the four reports."""
    data: dict[str, dict[str, Any]] = json.loads(
        resources.files("sim").joinpath("data/records.json").read_text(encoding="utf-8")
    )
    return data


def system_module(system: str, name: str) -> Any:
    """``systems.<system>.<name>``, or None if that system has not been built yet."""
    if importlib.util.find_spec(f"systems.{system}") is None:
        return None
    if importlib.util.find_spec(f"systems.{system}.{name}") is None:
        return None
    return importlib.import_module(f"systems.{system}.{name}")


def coverage(system: str) -> list[tuple[str, Coverage | None]]:
    """Every record ID of *system*'s report with its coverage (None when the system does not cover it)."""
    mod = system_module(system, "fidelity")
    table: dict[str, Coverage] = getattr(mod, "RECORDS", {}) if mod else {}
    return [(rid, table.get(rid)) for rid in report_records()[system]["records"]]
