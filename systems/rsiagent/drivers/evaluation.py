"""Drivers of the curriculum-notes and OSWorld attachment claims (MEM-OBJ-curriculum-notes,
RT-RTE-task-execution)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from hypothesis import strategies as st
from pydantic import Field
from typing_extensions import TypedDict

from sim.claims import Verdict
from sim.engine import Simulation
from sim.variant import Variant
from systems.rsiagent import faults as fp
from systems.rsiagent import properties as props
from systems.rsiagent.drivers.common import (
    INSTRUCTION,
    NAMES,
    Name,
    arm,
    fact,
    new_host,
)
from systems.rsiagent.model import (
    GuestVM,
    curriculum_turn,
    memory_revisit,
    osworld_attach_memory,
)
from systems.rsiagent.policies import (
    CurriculumTurn,
)

# -- 11. stale curriculum notes ----------------------------------------------------------------------------
ACTIONS = ("write", "empty", "blank", "corrupt", "none")


class NotesExample(TypedDict):
    """What each Curriculum turn does to ``curriculum_notes.md``."""

    turns: Annotated[
        list[Literal["write", "empty", "blank", "corrupt", "none"]], Field(min_length=1, max_length=4)
    ]


def notes_examples() -> Any:
    return st.fixed_dictionaries({"turns": st.lists(st.sampled_from(ACTIONS), min_size=1, max_size=4)})


def check_notes(sim: Simulation, ex: dict[str, Any], variant: Variant) -> Verdict:
    """The next Curriculum charter shows the notes as the last turn left the file."""
    host = new_host(sim, variant)
    vm = GuestVM(sim, "curriculum")
    expected = ""
    for i, action in enumerate(ex["turns"]):
        text = f"Hypothesis {i}: {fact(i + 1)}"
        curriculum_turn(
            sim, host, vm, CurriculumTurn(notes_action=action, notes_text=text, instruction=INSTRUCTION)
        )
        expected = {"write": text, "empty": "", "blank": "  \n", "corrupt": "", "none": expected}[action]
        v = props.check_notes_current(host.notes, expected)
        if not v.holds:
            return Verdict.violated(f"after turn {i + 1} ({action}): {v.detail}")
    return Verdict.ok()


# -- 14. OSWorld misreports memory -------------------------------------------------------------------------
class OsworldExample(TypedDict):
    """The frozen bank's files and which step of the push fails (None: it works)."""

    files: Annotated[list[Name], Field(max_length=3)]
    fail: Literal["upload", "extract"] | None


def osworld_examples() -> Any:
    return st.fixed_dictionaries(
        {
            "files": st.lists(st.sampled_from(NAMES), max_size=3, unique=True),
            "fail": st.none() | st.sampled_from(["upload", "extract"]),
        }
    )


def check_osworld(sim: Simulation, ex: dict[str, Any], variant: Variant) -> Verdict:
    """An OSWorld record claims memory, and nudges name ~/.memory, only when the bank was delivered; a
    working push delivers it."""
    if ex["fail"] == "upload":
        arm(sim, [f"fail@{fp.OSWORLD_PUSH}"])
    elif ex["fail"] == "extract":
        arm(sim, [f"fail@{fp.PUSH_EXTRACT}"])
    vm = GuestVM(sim, "osworld")
    bank = {n: fact(i + 1).encode() for i, n in enumerate(ex["files"])}
    rec = osworld_attach_memory(sim, vm, bank, variant)
    nudge = memory_revisit(rec.env_memory_dir, "fold")
    delivered = vm.bank() == bank  # what the Actor's machine actually holds
    pushed = ex["fail"] is None or (ex["fail"] == "extract" and not bank)  # no file: nothing to extract
    return props.check_memory_claim(rec.memory_mode, delivered, rec.env_memory_dir if nudge else None, pushed)
