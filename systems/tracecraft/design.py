"""Tracecraft's registration: the design memsim's registry loads (``memsim.designs`` entry point)."""

from sim.registry import Design, Report
from sim.variant import Switches
from systems.tracecraft.state import FIXES, OFF

DESIGN = Design(
    name="tracecraft",
    package="systems.tracecraft",
    title="agents coordinating through an S3 bucket: shared values with history, mail with inbox "
    "cursors, claims and handoffs, transcript mirroring",
    report=Report.from_package("systems.tracecraft"),
    switches=Switches("tracecraft", fixes=FIXES, off=OFF),
    demo_scenario="tracecraft_cursor_reuse",
    transfer="transfer:transfer",
    markers={"send": "mail sent", "inbox": "inbox", "claim": "claim", "mirror": "mirror"},
)
