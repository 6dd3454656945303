"""OpenAI prompt caching: automatic prefix caching for prompts of at least 1,024 tokens, hits in 128-token
increments, a retention window.

Rules (the provider's own pages, read 2026-12-02):

* https://developers.openai.com/api/docs/guides/prompt-caching: "Caching is enabled automatically for
  prompts that are 1024 tokens or longer"; hits need an exact prefix match; no code changes and "no
  additional fees" (a write costs nothing extra); in-memory retention: cached prefixes are cleared after
  5 to 10 minutes of inactivity and always within one hour (``prompt_cache_retention: "in_memory"``, the
  default; ``"24h"`` is the extended tier);
* https://developers.openai.com/cookbook/examples/prompt_caching_201: "cache hits occurring in increments
  of 128 tokens" (1,024, 1,152, 1,280...), reported as ``usage.prompt_tokens_details.cached_tokens``.

memsim takes the lower bound of the inactivity window (:data:`DEFAULT_TTL_S`, 300 s; ``--cache-ttl`` sets
it) and the one-hour cap (:data:`MAX_AGE_S`). Every prefix a request sends is cached after it, at part
boundaries. The match is token-level upstream; memsim matches whole parts, and one more case: a part that
*grew* (its text starts with the text the same position held in the stream's latest request with this
prefix, e.g. a document appended to, possibly without the blank line that closed it) matches up to the end
of the old text, whose count is already cached (no re-tokenizing; the cut may differ from the provider's by
a token, far below the 128-token increments). Not modeled: any other partial match inside a part (a part
that changed in the middle counts as a miss from its start, so a hit can be undercounted by up to that
part's tokens, rounded down to 128); the routing by prefix hash and ``prompt_cache_key`` (one stream is one
machine here: the best case; above about 15 requests a minute per prefix the provider overflows to other
machines).
"""

from __future__ import annotations

from collections.abc import Sequence

#: Prompts shorter than this are never cached.
MIN_TOKENS = 1024
#: Cache hits are a multiple of this many tokens past the minimum.
INCREMENT = 128
#: Seconds of inactivity after which a prefix is gone (the lower bound of "5 to 10 minutes").
DEFAULT_TTL_S = 300
#: A prefix is gone an hour after it was first cached, however often it is hit.
MAX_AGE_S = 3600


def charge(
    entries: dict[int, tuple[float, float]],
    grown: dict[int, tuple[str, int]],
    parts: Sequence[str],
    keys: Sequence[int],
    cum: Sequence[int],
    now: float,
    *,
    ttl_s: float,
    max_age_s: float = MAX_AGE_S,
) -> int:
    """The cached (read) tokens of one request, updating *entries* (prefix key -> (expiry, born)) and
    *grown* (prefix key -> the next part's text and cumulative tokens in the latest request with it).

    *keys* [i] identifies the prefix of *parts* 0..i and *cum* [i] its tokens."""

    def alive(k: int) -> bool:
        e = entries.get(k)
        return e is not None and e[0] > now

    matched, parent = 0, 0
    for i, k in enumerate(keys):
        if cum[i] >= MIN_TOKENS and not alive(k):
            old = grown.get(parent)  # the part this position held before: did it grow into this one?
            if old is not None and alive(hash((parent, old[0]))):
                text, stem = old[0], old[0].rstrip()
                if parts[i].startswith(text):
                    matched = old[1]
                elif stem != text and parts[i].startswith(stem):
                    matched = old[1] - 1  # its closing whitespace (a section's blank line) is one token
            break
        if cum[i] >= MIN_TOKENS:
            matched = cum[i]
        parent = k
    total = cum[-1] if cum else 0
    read = 0
    if total >= MIN_TOKENS and matched >= MIN_TOKENS:
        read = MIN_TOKENS + (matched - MIN_TOKENS) // INCREMENT * INCREMENT
    parent = 0
    for i, k in enumerate(keys):
        if cum[i] >= MIN_TOKENS:
            e = entries.get(k)
            born = e[1] if e is not None and e[0] > now else now
            entries[k] = (min(now + ttl_s, born + max_age_s), born)
            grown[parent] = (parts[i], cum[i])
        parent = k
    return read
