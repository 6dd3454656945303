"""Provider prompt caching and pricing: which prefix of each request a provider serves from its cache,
and what the request costs (``memsim bench --provider none|anthropic|openai``).

One module per provider (:mod:`sim.cache.anthropic`, :mod:`sim.cache.openai`: each constant cited from
the provider's own page with the date it was read), the price table (:mod:`sim.cache.prices`) and the
run's cache over its streams (:mod:`sim.cache.model`). ``none`` (the default) selects nothing: requests
and bench rows are then exactly what they were before this package existed.
"""

from __future__ import annotations

import math

from sim.cache.model import CacheCharge, ProviderCache, ProviderConfig
from sim.errors import UsageError

PROVIDERS = ("none", "anthropic", "openai")
#: The longest TTL ``--cache-ttl`` accepts (a day: OpenAI's extended retention).
MAX_TTL_S = 86_400
#: The highest input price ``--price`` accepts (USD per million tokens).
MAX_PRICE = 1_000.0

__all__ = ["PROVIDERS", "CacheCharge", "ProviderCache", "ProviderConfig", "parse_provider"]


def parse_provider(
    name: str, ttl: str | None = None, price: str | None = None, model: str | None = None
) -> ProviderConfig | None:
    """The ``--provider``/``--cache-ttl``/``--price``/``--model`` options, validated once: None for
    ``none``; an unknown provider, a TTL that is not a positive whole number of seconds up to a day, a
    price that is not a finite number in [0, 1,000], or a model that is not one of the provider's in the
    price table (:data:`sim.cache.prices.MODELS`; the error lists them) is a one-line
    :class:`~sim.errors.UsageError`."""
    if name not in PROVIDERS:
        raise UsageError(f"unknown provider {name!r}: expected one of {', '.join(PROVIDERS)}")
    ttl_s: int | None = None
    if ttl is not None:
        from sim.numbers import parse_int

        text = ttl.strip()
        if not text.isdigit() or not text.isascii():
            raise UsageError(f"--cache-ttl must be a whole number of seconds, not {ttl[:40]!r}")
        ttl_s = parse_int(text, "--cache-ttl")
        if not 1 <= ttl_s <= MAX_TTL_S:
            raise UsageError(f"--cache-ttl must be between 1 and {MAX_TTL_S:,} seconds, not {ttl_s:,}")
    usd: float | None = None
    if price is not None:
        from sim.numbers import parse_float

        if price.strip().lower() in ("nan", "inf", "+inf", "-inf", "infinity", "+infinity", "-infinity"):
            raise UsageError(f"--price must be a finite number between 0 and {MAX_PRICE:,.0f}, not {price!r}")
        try:
            usd = parse_float(price, "--price")
        except UsageError as exc:
            raise UsageError(
                f"--price must be a number (USD per million tokens), not {price[:40]!r}"
            ) from exc
        if not math.isfinite(usd) or not 0 <= usd <= MAX_PRICE:
            raise UsageError(f"--price must be a finite number between 0 and {MAX_PRICE:,.0f}, not {price!r}")
    if name == "none":
        if ttl_s is not None or usd is not None or model is not None:
            raise UsageError("--cache-ttl, --price and --model need --provider anthropic or openai")
        return None
    if model is not None:
        from sim.cache.prices import models_of

        choices = models_of(name)
        if model not in choices:
            raise UsageError(
                f"--model {model[:60]!r} is not one of {name}'s models in the price table: expected one of "
                f"{', '.join(choices)}"
            )
    return ProviderConfig.of(name, ttl_s=ttl_s, price=usd, model=model)
