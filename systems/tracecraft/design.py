"""Tracecraft's registration: the design memsim's registry loads (``memsim.designs`` entry point)."""

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from sim.registry import Design, Report
from sim.variant import Switches
from systems.tracecraft.state import FIXES, OFF


class Knobs(BaseModel):
    """The benchmark adapter's host policy (``--knob tracecraft.KEY=VALUE``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    memory_keys: int = Field(20, ge=0, le=10_000, description="memory get of the last N keys the host set")
    tail_lines: int = Field(60, ge=0, le=100_000, description="session show --tail N, newest lines that fit")
    compact_every: int = Field(
        50, ge=0, le=1_000_000, description="session compact every N flushes (0: never)"
    )
    latency_s: float = Field(0.0, ge=0.0, le=10.0, description="simulated seconds per store round trip")
    conversation_save: Literal["user-turns", "none"] = Field(
        "user-turns",
        description="real conversations: the host saves each user turn verbatim with memory set "
        "(none: saves nothing)",
    )
    conversation_save_tokens: int = Field(
        300, ge=1, le=1_000_000, description="real conversations: a user turn over N tokens is not saved"
    )


DESIGN = Design(
    name="tracecraft",
    package="systems.tracecraft",
    title="agents coordinating through an S3 bucket: shared values with history, mail with inbox "
    "cursors, claims and handoffs, transcript mirroring",
    report=Report.from_package("systems.tracecraft"),
    switches=Switches("tracecraft", fixes=FIXES, off=OFF),
    knobs=Knobs,
    colour="#CC79A7",
    demo_scenario="tracecraft_cursor_reuse",
    transfer="transfer:transfer",
    real_system="tracecraft-ai 0.2.5",
    transfer_notes="transfer:REPRODUCES",
    markers={"send": "mail sent", "inbox": "inbox", "claim": "claim", "mirror": "mirror"},
)
