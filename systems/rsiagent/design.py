"""RSIAgent's registration: the design memsim's registry loads (``memsim.designs`` entry point)."""

from sim.registry import Design, Report
from systems.rsiagent.state import SWITCHES

DESIGN = Design(
    name="rsiagent",
    package="systems.rsiagent",
    title="a phase-gated, audited memory bank with journal snapshots, parallel waves and WORK LOG folding",
    report=Report.from_package("systems.rsiagent"),
    switches=SWITCHES,
    demo_scenario="rsiagent_wave_conflict",
    markers={"quarantine": "quarantine", "journal": "journal", "atomic_install_memory": "install"},
)
