"""The toy design's declaration (tests only)."""

from sim.registry import Design, Report
from sim.variant import Switches

DESIGN = Design(
    name="hostiletoy",
    package="hostiletoy",
    title="Hostile toy (tests only)",
    report=Report("A toy report (tests only)", record_ids=("TOY-1",)),
    switches=Switches("hostiletoy", fixes=("cap",), off=("cap-off",)),
)
