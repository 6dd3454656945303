"""Anthropic prompt caching: explicit ``cache_control`` breakpoints, a minimum cacheable prefix, a TTL
refreshed on every hit.

Rules (https://platform.claude.com/docs/en/build-with-claude/prompt-caching, read 2026-12-02; prices in
:mod:`sim.cache.prices`):

* a request marks at most :data:`MAX_BREAKPOINTS` (4) blocks with ``cache_control``; each marks the prefix
  up to and including its block (rendered tools, then system, then messages) as a cache entry;
* at each breakpoint the provider looks for an earlier entry at that block boundary and at the boundaries
  of up to :data:`LOOKBACK_BLOCKS` (20) blocks before it; the longest live one is read (``usage.
  cache_read_input_tokens``, billed at 0.1x the input price), and the prefix from there to the last
  breakpoint is written (``cache_creation_input_tokens``, 1.25x for the 5-minute TTL, 2x for 1 hour);
  the rest is ``input_tokens`` at 1x. The three sum to the prompt;
* a prefix shorter than the model's minimum (:data:`MIN_CACHEABLE`: 1,024 tokens for Claude Opus 4.8 and
  Sonnet 4.5, 4,096 for Haiku 4.5) is not cached even when marked;
* an entry lives :data:`DEFAULT_TTL_S` (5 minutes) after its last use; a hit refreshes it at no cost;
  ``ttl: "1h"`` (3,600 s) is the other tier.

In memsim a *block* is a request part (one message, the system prompt, the tool schemas); the same prefix
of parts is the same prefix of tokens, so hits are exact at part boundaries. Not modeled: a message of
several content blocks (text and tool-use blocks) counts as one block, so the 20-block lookback reaches
at least as far back as the provider's (a hit the provider misses after a long parallel tool turn is
counted here); the automatic top-level ``cache_control`` (no design memsim models sends it); the
per-organization cache isolation (a stream is one agent's requests, never shared).
"""

from __future__ import annotations

from collections.abc import Sequence

#: At most four ``cache_control`` breakpoints per request (a fifth is a 400 from the API).
MAX_BREAKPOINTS = 4
#: Block boundaries checked before each breakpoint.
LOOKBACK_BLOCKS = 20
#: The default TTL (seconds after last use); the other tier is one hour.
DEFAULT_TTL_S = 300
ONE_HOUR_TTL_S = 3600
#: Minimum cacheable prefix (tokens) per model.
MIN_CACHEABLE = {"claude-opus-4-8": 1024, "claude-sonnet-4-5": 1024, "claude-haiku-4-5": 4096}


def check_breakpoints(breakpoints: Sequence[int], parts: int) -> tuple[int, ...]:
    """*breakpoints* as a sorted tuple of part indices; more than four, or one outside the request, is a
    design's bug (a ``ValueError``: the real API answers it with a 400)."""
    bps = tuple(sorted(set(breakpoints)))
    if len(bps) > MAX_BREAKPOINTS:
        raise ValueError(f"{len(bps)} cache_control breakpoints; the API allows {MAX_BREAKPOINTS}")
    if bps and (bps[0] < 0 or bps[-1] >= parts):
        raise ValueError(f"a breakpoint outside the request's {parts} parts: {bps}")
    return bps


def charge(
    entries: dict[int, float],
    keys: Sequence[int],
    cum: Sequence[int],
    breakpoints: Sequence[int],
    now: float,
    *,
    ttl_s: float,
    min_tokens: int,
) -> tuple[int, int]:
    """The (read, write) tokens of one request, updating *entries* (prefix key -> expiry time).

    *keys* [i] identifies the prefix of parts 0..i, *cum* [i] its tokens; *breakpoints* are checked part
    indices. A pure function of the stream's earlier requests and the clock *now* (seconds)."""
    read_at = -1
    for b in breakpoints:
        for j in range(b, max(-1, b - LOOKBACK_BLOCKS - 1), -1):
            exp = entries.get(keys[j])
            if exp is not None and exp > now:
                if j > read_at:
                    read_at = j
                break
    read = cum[read_at] if read_at >= 0 else 0
    if read_at >= 0:
        entries[keys[read_at]] = now + ttl_s  # a hit refreshes the entry's TTL
    write_to = -1
    for b in breakpoints:
        if cum[b] >= min_tokens:
            if b > read_at:
                entries[keys[b]] = now + ttl_s
            else:
                exp = entries.get(keys[b])
                if exp is not None and exp > now:
                    entries[keys[b]] = now + ttl_s
            write_to = max(write_to, b)
    write = cum[write_to] - read if write_to > read_at else 0
    return read, write
