"""The ``pager`` reference design's registration (``memsim.designs`` entry point, as a plugin's)."""

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from reference.pager.state import (
    FIXES,
    MESSAGE_SUMMARY_TRUNC_KEEP_N_LAST,
    MESSAGE_SUMMARY_TRUNC_TOKEN_FRAC,
    MESSAGE_SUMMARY_WARNING_FRAC,
    OFF,
    RETRIEVAL_QUERY_DEFAULT_PAGE_SIZE,
)
from sim.registry import REFERENCE, Design, Report
from sim.variant import Switches


class Knobs(BaseModel):
    """The ``pager`` adapter's knobs (``memsim bench --knob pager.KEY=VALUE``); the defaults are MemGPT's."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    page_size: int = Field(
        RETRIEVAL_QUERY_DEFAULT_PAGE_SIZE, ge=0, le=1000, description="search hits paged in"
    )
    evict_at: float = Field(MESSAGE_SUMMARY_WARNING_FRAC, gt=0.0, le=1.0,
                            description="evict when the context passes this share of the window")  # fmt: skip
    evict_fraction: float = Field(MESSAGE_SUMMARY_TRUNC_TOKEN_FRAC, gt=0.0, le=1.0,
                                  description="share of the queue's tokens evicted at once")  # fmt: skip
    keep_last: int = Field(MESSAGE_SUMMARY_TRUNC_KEEP_N_LAST, ge=0, le=10_000,
                           description="newest messages never evicted")  # fmt: skip
    search: Literal["keyword", "bm25"] = Field("keyword", description="how the recall store is searched")
    tokenizer: Literal["words", "split"] = Field(
        "words", description="how texts and queries are split into words"
    )
    index_speaker: bool = Field(
        False, description="search `speaker: text` (default: the message's text only)"
    )
    retriever: str = Field("bm25", min_length=1,
                           description="bm25 (search as chosen), module:callable or a memsim.retrievers "
                                       "entry point")  # fmt: skip


DESIGN = Design(
    name="pager",
    package="reference.pager",
    title="MemGPT/Letta-style pager: core block, FIFO queue, searchable recall store",
    report=Report.from_package("reference.pager"),
    switches=Switches("pager", fixes=FIXES, off=OFF),
    knobs=Knobs,
    kind=REFERENCE,
)
