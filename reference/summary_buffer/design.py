"""The summary buffer's registration (``memsim.designs`` entry point ``summary-buffer``), labelled a
reference design of a documented algorithm (``kind="reference"``), and the benchmark adapter's knobs."""

from pydantic import BaseModel, ConfigDict, Field

from reference.summary_buffer.state import SWITCHES
from sim.registry import REFERENCE, Design, Report


class Knobs(BaseModel):
    """``memsim bench --knob summary-buffer.KEY=VALUE``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_token_limit: int | None = Field(
        None,
        ge=1,
        le=10_000_000,
        description="the buffer's token limit (None: buffer_fraction of the window)",
    )
    buffer_fraction: float = Field(
        0.6, gt=0.0, le=1.0, description="max_token_limit as a fraction of the window"
    )
    summary_fraction: float = Field(
        0.25, gt=0.0, le=1.0, description="the summary stand-in's cap, a fraction of the window"
    )
    summary_keep: float | None = Field(
        None,
        ge=0.0,
        le=1.0,
        description="the stand-in keeps each folded fact token, or a folded turn whole, with this "
        "probability (seeded; None: 1 - the workload's lossiness, 1.0 on real conversations)",
    )


DESIGN = Design(
    name="summary-buffer",
    package="reference.summary_buffer",
    title="recent messages up to a token limit, older ones folded into a running summary "
    "(LangChain ConversationSummaryBufferMemory)",
    report=Report.from_package("reference.summary_buffer"),
    switches=SWITCHES,
    knobs=Knobs,
    kind=REFERENCE,
    colour="#D55E00",
    markers={"fold": "fold"},
)
