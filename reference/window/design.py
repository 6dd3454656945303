"""The window's registration (``memsim.designs`` entry point ``window``), labelled a reference design of a
documented algorithm (``kind="reference"``), and the benchmark adapter's knobs."""

from pydantic import BaseModel, ConfigDict, Field

from reference.window.state import SWITCHES
from sim.registry import REFERENCE, Design, Report


class Knobs(BaseModel):
    """``memsim bench --knob window.KEY=VALUE``. The defaults are the most-recent-turns baseline."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    window_fraction: float = Field(
        1.0, gt=0.0, le=1.0, description="trim_messages' max_tokens as a fraction of the provider window"
    )
    start_on_human: bool = Field(True, description="trim_messages' start_on='human' (False: start_on=None)")


DESIGN = Design(
    name="window",
    package="reference.window",
    title="the most recent messages that fit the window (LangChain trim_messages, strategy 'last')",
    report=Report.from_package("reference.window"),
    switches=SWITCHES,
    knobs=Knobs,
    kind=REFERENCE,
    colour="#56B4E9",
)
