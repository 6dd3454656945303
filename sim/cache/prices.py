"""The price table: a named model's list price per provider, with the page and the date it was read.

Costs are kept in two units. *Input-token equivalents* price every prompt token as a fraction or multiple
of one uncached input token (``uncached + read_multiplier * read + write_multiplier * write``): they do not
move when a list price changes. *Dollars* are the equivalents times the model's input list price
(``--price`` overrides it, in USD per million input tokens).

Sources (the providers' own pages, read 2026-12-02):

* Anthropic, https://platform.claude.com/docs/en/about-claude/pricing ("Model pricing"): Claude Opus 4.8
  base input $5 / MTok, 5m cache writes $6.25 / MTok (1.25x), 1h cache writes $10 / MTok (2x), cache hits
  and refreshes $0.50 / MTok (0.1x).
* OpenAI, https://developers.openai.com/api/docs/pricing: gpt-5 input $1.25 / 1M tokens, cached input
  $0.125 / 1M tokens (0.1x); cache writes cost nothing extra ("no additional fees",
  https://developers.openai.com/api/docs/guides/prompt-caching).

Not modeled: output tokens (memsim's model is a seeded policy; what it writes is not priced), batch and
long-context price bands, regional or partner-cloud prices.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Price:
    """One model's input list price and its cache multipliers (of the input price)."""

    provider: str
    model: str
    input_usd_per_mtok: float
    read_multiplier: float
    #: Write multiplier by TTL tier: the 5-minute tier and the 1-hour tier (Anthropic); 0 when writes are
    #: free (OpenAI).
    write_multiplier_5m: float
    write_multiplier_1h: float
    read_on: str
    page: str


#: The declared price of each provider's named model (``--price`` overrides the input price).
PRICES: dict[str, Price] = {
    "anthropic": Price(
        "anthropic", "claude-opus-4-8", 5.0, 0.1, 1.25, 2.0, "2026-12-02",
        "https://platform.claude.com/docs/en/about-claude/pricing",
    ),
    "openai": Price(
        "openai", "gpt-5", 1.25, 0.1, 0.0, 0.0, "2026-12-02", "https://developers.openai.com/api/docs/pricing",
    ),
}  # fmt: skip
