"""Nemsy's registration: the design memsim's registry loads (``memsim.designs`` entry point), and the
benchmark knobs its adapter honours (``memsim bench --knob nemsy.KEY=VALUE``)."""

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from sim.registry import Design, Report
from sim.variant import Switches
from systems.nemsy.model.constants import CONTEXT_CHARS, INGEST_PAGES, WIKI_DIR
from systems.nemsy.state import FIXES, OFFS


class NemsyKnobs(BaseModel):
    """What a benchmark run of Nemsy may change (defaults: upstream's)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    route: Literal["query", "reasoning", "web_query", "web_chat"] = Field(
        default="query",
        description="the route whose request each step returns: CLI query, query -r, /api/query or "
        "/api/chat (every observation is ingested through the CLI either way)",
    )
    pages: int | None = Field(
        default=None,
        ge=0,
        le=10_000,
        description="pages that route loads beside the whole index (None: upstream's 30, or 20 for web_chat)",
    )
    ingest_pages: int = Field(
        default=INGEST_PAGES,
        ge=0,
        le=10_000,
        description="pages an ingest prompt loads (upstream 10, --wide 50)",
    )
    context_chars: int = Field(
        default=CONTEXT_CHARS, ge=100, le=100_000_000, description="the shared-context-budget fix's budget"
    )
    wiki_path: str = Field(
        default="/" + WIKI_DIR, min_length=1, max_length=300, description="the Wiki path the prompts name"
    )
    step_seconds: float = Field(default=60.0, gt=0, le=86_400, description="simulated seconds per step")
    page_tokens: int = Field(
        default=1_500,
        ge=1,
        le=10_000_000,
        description="real conversations: the ingest stand-in's page keeps the session's turns verbatim, "
        "whole turns up to N tokens",
    )


DESIGN = Design(
    name="nemsy",
    package="systems.nemsy",
    title="a Markdown wiki with an ingest ledger and a recency page loader (10/20/30/50 pages plus the "
    "whole index)",
    report=Report.from_package("systems.nemsy"),
    switches=Switches("nemsy", fixes=FIXES, off=OFFS),
    knobs=NemsyKnobs,
    colour="#E69F00",
    demo_scenario="nemsy_recency_window",
    markers={"ingest": "ingest", "chat_trim": "chat trim", "_archive_query_result": "archive"},
)
