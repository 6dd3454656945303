"""MerchantBench's benchmark knobs (``memsim bench --knob merchantbench.KEY=VALUE``): how the adapter scales
upstream's 160k/160k/30k settings to the bench window, the provider's tokenizer, the tool-schema size and
the host policy. Declarations only (pydantic at the edge); the adapter reads them."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

UPSTREAM_SCHEMA_TOKENS = 4_127
"""The same number as :data:`systems.merchantbench.model.tools.UPSTREAM_SCHEMA_TOKENS` (kept here so the
declaration imports nothing of the model)."""


class Knobs(BaseModel):
    """The adapter's tunable settings; the defaults are upstream's ratios and sizes."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    window_scale: float = Field(
        1.0,
        ge=0.05,
        le=20.0,
        description="B = round(budget * window_scale) estimated tokens (upstream: B = window)",
    )
    trigger_ratio: float = Field(
        1.0, ge=0.05, le=20.0, description="T = round(B * trigger_ratio) (upstream 160,000/160,000 = 1)"
    )
    keep: int | None = Field(
        None,
        ge=1,
        le=10_000_000,
        description="K in estimated tokens (default round(B * 30 / 160), upstream's ratio)",
    )
    schema_tokens: int = Field(
        UPSTREAM_SCHEMA_TOKENS,
        ge=298,
        le=200_000,
        description="cl100k size of the published tool schemas (upstream's 26 tools: 4,127)",
    )
    provider: Literal["cl100k", "estimate"] = Field(
        "cl100k", description="what usage.prompt_tokens counts: exact cl100k, or the design's own estimate"
    )
    save: Literal["never", "reminder", "direct", "every_k", "oversize"] = Field(
        "reminder", description="the host policy's save behaviour (policies.SavePolicy)"
    )
    save_every: int = Field(24, ge=1, le=100_000, description="with save=every_k: save at every n-th step")
    read_on_probe: bool = Field(True, description="the host policy reads the memory document at a probe")
    max_hops: int = Field(30, ge=1, le=200, description="upstream's max_hops per step")
    conversation_save_tokens: int = Field(
        2_000,
        ge=1,
        le=1_000_000,
        description="real conversations: a save writes the visible messages verbatim, the newest up to N "
        "tokens",
    )
