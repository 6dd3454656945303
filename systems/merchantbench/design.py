"""MerchantBench's registration: the design memsim's registry loads (``memsim.designs`` entry point)."""

from sim.registry import Design, Report
from sim.variant import Switches
from systems.merchantbench.knobs import Knobs
from systems.merchantbench.state import FIXES, OFF

DESIGN = Design(
    name="merchantbench",
    package="systems.merchantbench",
    title="a whole-document memory tool and a ReAct loop that trims history to a recency suffix "
    "(160k trigger, 30k keep)",
    report=Report.from_package("systems.merchantbench"),
    switches=Switches("merchantbench", fixes=FIXES, off=OFF),
    knobs=Knobs,
    colour="#0072B2",
    demo_scenario="merchantbench_suffix_eviction",
    markers={"compaction_trigger": "reminder", "compact": "compaction", "force_end_of_step": "forced end"},
)
