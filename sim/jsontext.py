"""JSON texts exactly as ``json.dumps`` writes them with its arguments named, without building an encoder
per call.

``json.dumps`` with any non-default argument (and ``JSONEncoder.encode`` itself) makes a new C encoder on
every call: several times the cost of encoding a small record, and the largest single cost of recording
a modeled operation (:meth:`sim.trace.Trace.op`). Here each C encoder is made once. The ASCII-only string
encoder is about three times faster than the one that keeps non-ASCII text literal, and writes the same
text unless it wrote a ``\\u`` escape (a non-ASCII, DEL or rare control character, or a false alarm on an
escaped backslash before ``u``); then the value is encoded again the other way.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

_C_ENCODER: Any = getattr(json.encoder, "c_make_encoder", None)
_ASCII: Any = json.encoder.encode_basestring_ascii  # type: ignore[attr-defined]
_UNICODE: Any = json.encoder.encode_basestring  # type: ignore[attr-defined]


def encoder(
    *, ascii_only: bool, sort_keys: bool, default: Callable[[Any], Any] | None
) -> Callable[[Any], str]:
    """``json.dumps(value, ensure_ascii=ascii_only, sort_keys=sort_keys, default=default)``, one C encoder
    made once (the standard library itself without the C accelerator)."""
    if _C_ENCODER is None:
        return lambda v: json.dumps(v, ensure_ascii=ascii_only, sort_keys=sort_keys, default=default)
    fallback = default or json.JSONEncoder().default
    strings = _ASCII if ascii_only else _UNICODE
    enc = _C_ENCODER({}, fallback, strings, None, ": ", ", ", sort_keys, False, True)
    markers = enc.markers

    def dumps(value: Any) -> str:
        if markers:  # an earlier call raised mid-way: the circular-reference check starts clean
            markers.clear()
        return "".join(enc(value, 0))

    return dumps


def literal(sort_keys: bool, default: Callable[[Any], Any] | None = None) -> Callable[[Any], str]:
    """``json.dumps(value, ensure_ascii=False, sort_keys=sort_keys, default=default)``."""
    fast = encoder(ascii_only=True, sort_keys=sort_keys, default=default)
    slow = encoder(ascii_only=False, sort_keys=sort_keys, default=default)

    def dumps(value: Any) -> str:
        s = fast(value)
        return slow(value) if "\\u" in s else s

    return dumps


record_json: Callable[[Any], str] = literal(True, str)
"""``json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)``: every detail, meta value and id
list a trace records."""
