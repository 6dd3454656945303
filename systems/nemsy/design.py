"""Nemsy's registration: the design memsim's registry loads (``memsim.designs`` entry point)."""

from sim.registry import Design, Report
from sim.variant import Switches
from systems.nemsy.state import FIXES, OFFS

DESIGN = Design(
    name="nemsy",
    package="systems.nemsy",
    title="a Markdown wiki with an ingest ledger and a recency page loader (10/20/30/50 pages plus the "
    "whole index)",
    report=Report.from_package("systems.nemsy"),
    switches=Switches("nemsy", fixes=FIXES, off=OFFS),
    demo_scenario="nemsy_recency_window",
    markers={"ingest": "ingest", "chat_trim": "chat trim", "_archive_query_result": "archive"},
)
