"""RSIAgent's registration: the design memsim's registry loads (``memsim.designs`` entry point), and the
benchmark adapter's knobs."""

from pydantic import BaseModel, ConfigDict, Field

from sim.registry import Design, Report
from systems.rsiagent.state import SWITCHES


class Knobs(BaseModel):
    """The benchmark adapter's target-role loop settings (``core/loop.py``; §2.18 of the fidelity note).

    The defaults are upstream's target role. Character settings are scaled to the benchmark budget by
    ``budget / upstream_window`` when ``scale`` is true (our assumption, not upstream behaviour: upstream's
    character thresholds know nothing of the provider window); pair counts are never scaled.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    history_keep_pairs: int = Field(
        80, ge=1, le=10_000, description="most (user, assistant) pairs kept verbatim (the keep ceiling)"
    )
    keep_chars: int = Field(
        500_000, ge=0, le=50_000_000, description="character budget of the keep window (0: keep pairs)"
    )
    ctx_high_water: int = Field(
        900_000, ge=0, le=50_000_000, description="context characters above which the loop folds (0: count)"
    )
    ctx_low_water: int = Field(
        500_000, ge=0, le=50_000_000, description="context characters folding stops at (0: high water / 2)"
    )
    fold_batch: int = Field(
        10, ge=1, le=1_000, description="pairs per fold (full batches only, the v11 guard)"
    )
    worklog_max_chars: int = Field(500_000, ge=100, le=50_000_000, description="WORK LOG character cap")
    upstream_window: int = Field(
        262_144, ge=1_000, le=10_000_000, description="window (tokens) the character settings are sized for"
    )
    scale: bool = Field(True, description="scale the character settings by budget / upstream_window")
    conversation_summary_chars: int = Field(
        0,
        ge=0,
        le=50_000_000,
        description="real conversations: the fold summary stand-in keeps the first N characters of each "
        "fold's input verbatim (0: all of it; the WORK LOG cap still applies)",
    )


DESIGN = Design(
    name="rsiagent",
    package="systems.rsiagent",
    title="a phase-gated, audited memory bank with journal snapshots, parallel waves and WORK LOG folding",
    report=Report.from_package("systems.rsiagent"),
    switches=SWITCHES,
    knobs=Knobs,
    colour="#009E73",
    demo_scenario="rsiagent_wave_conflict",
    markers={
        "quarantine": "quarantine",
        "journal": "journal",
        "atomic_install_memory": "install",
        "fold_once": "fold",
    },
)
