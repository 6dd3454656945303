"""The price table: a named model's list price per provider, with the page and the date it was read.

Costs are kept in two units. *Input-token equivalents* price every prompt token as a fraction or multiple
of one uncached input token (``uncached + read_multiplier * read + write_multiplier * write``): they do not
move when a list price changes. *Dollars* are the equivalents times the model's input list price
(``--price`` overrides it, in USD per million input tokens).

Sources (the providers' own pages, read 2026-12-02 unless a line says otherwise):

* Anthropic, https://platform.claude.com/docs/en/about-claude/pricing ("Model pricing"): Claude Opus 4.8
  base input $5 / MTok, 5m cache writes $6.25 / MTok (1.25x), 1h cache writes $10 / MTok (2x), cache hits
  and refreshes $0.50 / MTok (0.1x).
* OpenAI, https://developers.openai.com/api/docs/pricing: gpt-5 input $1.25 / 1M tokens, cached input
  $0.125 / 1M tokens (0.1x); cache writes cost nothing extra ("no additional fees",
  https://developers.openai.com/api/docs/guides/prompt-caching).
* Anthropic, https://platform.claude.com/docs/zh-CN/models/haiku-4-5/overview (read 2026-12-06): Claude
  Haiku 4.5 input $1 / MTok; its cache writes and hits carry the multipliers every model has
  (:mod:`sim.cache.anthropic`: 1.25x, 2x, 0.1x of the input price).

A run prices one model (``--model``, one of :data:`MODELS`; default: the provider's entry in
:data:`PRICES`); :func:`basis` is the one line printed beside every cost figure.

Not modeled: output tokens (memsim's model is a seeded policy; what it writes is not priced), batch and
long-context price bands, regional or partner-cloud prices.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


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


#: Every priced model by name (``--model``; ``--price`` overrides its input price).
MODELS: dict[str, Price] = {
    "claude-opus-4-8": Price(
        "anthropic", "claude-opus-4-8", 5.0, 0.1, 1.25, 2.0, "2026-12-02",
        "https://platform.claude.com/docs/en/about-claude/pricing",
    ),
    "claude-haiku-4-5": Price(
        "anthropic", "claude-haiku-4-5", 1.0, 0.1, 1.25, 2.0, "2026-12-06",
        "https://platform.claude.com/docs/zh-CN/models/haiku-4-5/overview",
    ),
    "gpt-5": Price(
        "openai", "gpt-5", 1.25, 0.1, 0.0, 0.0, "2026-12-02", "https://developers.openai.com/api/docs/pricing",
    ),
}  # fmt: skip

#: Each provider's default model (the one priced when ``--model`` is not given).
PRICES: dict[str, Price] = {"anthropic": MODELS["claude-opus-4-8"], "openai": MODELS["gpt-5"]}


def models_of(provider: str) -> list[str]:
    """The names of *provider*'s priced models, in table order."""
    return [m for m, p in MODELS.items() if p.provider == provider]


#: What no cost figure includes (printed with every one).
EXCLUDED = "output tokens not priced (memsim's model is a seeded policy: it writes nothing to price)"
#: How requests over the window are priced: the conversation benchmark as a provider does (it refuses
#: them), the fact-token benchmark as sent (its cost per run compares what each design sends).
OVER_WINDOW = {
    "refused": "a request over the window is refused by the provider: $0, counted apart",
    "priced": "requests over the window are priced as sent (a provider would refuse them)",
}


def basis(cfg: Any, over_window: str = "priced") -> str:
    """The price basis of a :class:`~sim.cache.model.ProviderConfig` (or its ``meta()`` dict) as one
    line: model, $/M input, read and write multipliers, TTL, and what is excluded (*over_window*: a key
    of :data:`OVER_WINDOW`)."""
    d: dict[str, Any] = cfg if isinstance(cfg, dict) else cfg.meta()
    get = d.__getitem__
    return (
        f"price basis: {get('name')} {get('model')} at ${float(get('input_usd_per_mtok')):g}/M input tokens, "
        f"cache reads x{float(get('read_multiplier')):g}, cache writes x{float(get('write_multiplier')):g}, "
        f"TTL {int(get('ttl_s')):,} s; {EXCLUDED}; {OVER_WINDOW[over_window]}"
    )
