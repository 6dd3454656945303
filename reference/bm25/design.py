"""The ``bm25`` reference design's registration (``memsim.designs`` entry point, as a plugin's)."""

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from reference.bm25.state import FIXES, OFF
from sim.registry import REFERENCE, Design, Report
from sim.variant import Switches


class Knobs(BaseModel):
    """The ``bm25`` adapter's knobs (``memsim bench --knob bm25.KEY=VALUE``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    k: int = Field(5, ge=0, le=1000, description="how many hits (top K documents) are packed")
    tail: int = Field(4, ge=0, le=100_000, description="the most recent turns always sent (the recent tail)")
    granularity: Literal["turn", "session"] = Field("turn", description="index turns or whole sessions")
    roles: Literal["all", "user"] = Field(
        "all", description="index every turn, or user turns only (LongMemEval)"
    )
    order: Literal["chronological", "rank"] = Field(
        "chronological", description="the order of the retrieved turns in the request"
    )
    tokenizer: Literal["words", "split"] = Field(
        "words", description="words: lower-cased runs of word characters; split: LongMemEval's split(' ')"
    )
    index_speaker: bool = Field(False, description="index `speaker: text` (default: the turn's text only)")
    retriever: str = Field(
        "bm25", min_length=1, description="bm25, module:callable or a memsim.retrievers entry point"
    )


DESIGN = Design(
    name="bm25",
    package="reference.bm25",
    title="BM25 retrieval over past turns or sessions (Okapi BM25, as in LongMemEval's retrieval study)",
    report=Report.from_package("reference.bm25"),
    switches=Switches("bm25", fixes=FIXES, off=OFF),
    knobs=Knobs,
    kind=REFERENCE,
)
