"""What every RSIAgent claim driver shares: the corpus of another benchmark task and the run's target
direction, the project instruction, bank file names and the fact tokens examples are made of."""

from __future__ import annotations

from typing import Any, Literal

from sim.engine import Simulation
from sim.faults import FaultPlan
from sim.variant import Variant
from systems.rsiagent.model import Host, build_corpus
from systems.rsiagent.state import Bank

OTHER_TASK = (
    "Open the quarterly budget spreadsheet and sort the second column by date in descending order, "
    "then export it as a PDF named report."
)
#: The run's target direction: another benchmark instruction, in the corpus and authorized by every audit.
TARGET = "Record the weekly standup in the screen recorder and save the video as an mp4 file on the desktop."
CORPUS = build_corpus([OTHER_TASK, TARGET])
INSTRUCTION = "Build a small command line tool under /home/user/evolution_project that counts words."
NAMES = ("a.md", "b.md", "c.md")
Name = Literal["a.md", "b.md", "c.md"]
FILL = "lorem ipsum dolor sit amet "


def fact(i: int, value: str = "teal") -> str:
    """A fact token ``FACT-NNNN=value``."""
    return f"FACT-{i:04d}={value}"


def bank_of(items: Any) -> Bank:
    """A bank from (name, text) pairs."""
    return {n: t.encode("utf-8") for n, t in items}


def new_host(sim: Simulation, variant: Variant, **kw: Any) -> Host:
    """A host with the claims' corpus and target direction, as *variant*."""
    return Host(sim, corpus=CORPUS, variant=variant, target=TARGET, **kw)


def arm(sim: Simulation, specs: list[str]) -> None:
    """Arm the fault specs *specs* in *sim*."""
    sim.faults = FaultPlan.parse(specs)
