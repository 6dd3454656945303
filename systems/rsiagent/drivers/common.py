"""What every RSIAgent claim driver shares: the corpus of another benchmark task, the project instruction,
bank file names and the fact tokens examples are made of."""

from __future__ import annotations

from typing import Any

from sim.engine import Simulation
from sim.faults import FaultPlan
from systems.rsiagent.model import build_corpus
from systems.rsiagent.state import Bank

OTHER_TASK = (
    "Open the quarterly budget spreadsheet and sort the second column by date in descending order, "
    "then export it as a PDF named report."
)
CORPUS = build_corpus([OTHER_TASK])
INSTRUCTION = "Build a small command line tool under /home/user/evolution_project that counts words."
NAMES = ("a.md", "b.md", "c.md")
FILL = "lorem ipsum dolor sit amet "


def fact(i: int, value: str = "teal") -> str:
    """A fact token ``FACT-NNNN=value``."""
    return f"FACT-{i:04d}={value}"


def bank_of(items: Any) -> Bank:
    """A bank from (name, text) pairs."""
    return {n: t.encode("utf-8") for n, t in items}


def arm(sim: Simulation, specs: list[str]) -> None:
    """Arm the fault specs *specs* in *sim*."""
    sim.faults = FaultPlan.parse(specs)
