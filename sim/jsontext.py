"""JSON texts exactly as ``json.dumps`` writes them with its arguments named, without building an encoder
per call; and the indented form (``indent=2``, :func:`indent_json`) mostly in C.

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


# -- the indented form: json.dumps(value, indent=2, ensure_ascii=False) ----------------------------------
_DEPTH = 64
_OPEN = ["\n" + "  " * (n + 1) for n in range(_DEPTH)]  # the newline and indent before an item at level n
_CLOSE = ["\n" + "  " * n for n in range(_DEPTH)]  # the newline and indent before a closing bracket
_SCALARS = frozenset((str, int, float, bool, type(None)))


def json_str(value: str) -> str:
    """``encode_basestring`` (non-ASCII kept literal). The ASCII-only encoder is about three times faster
    and writes the same text unless it wrote a ``\\u`` escape (a non-ASCII, DEL or rare control
    character, or a false alarm on an escaped backslash before ``u``); then the text is redone."""
    s = _ASCII(value)
    return _UNICODE(value) if "\\u" in s else s


def _flat_encoder(level: int, strings: Callable[[str], str]) -> Any:
    """The C encoder writing a container of scalars at *level* with the indented form's separators
    between items (the caller fixes up its brackets); None without the C accelerator."""
    if _C_ENCODER is None:
        return None
    sep = "," + _OPEN[level]
    return _C_ENCODER(None, json.JSONEncoder().default, strings, None, ": ", sep, False, False, True)


_FLAT_ASCII = [_flat_encoder(n, _ASCII) for n in range(_DEPTH)]
_FLAT_UNICODE = [_flat_encoder(n, _UNICODE) for n in range(_DEPTH)]


def _stdlib(value: Any, level: int) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False).replace("\n", _CLOSE[level])


def indent_json(value: Any, level: int = 0) -> str:
    """``json.dumps(value, indent=2, ensure_ascii=False)`` nested at *level* (every line after the first
    indented by ``2 * level`` more spaces). A dict or list whose values are all scalars is one call of the
    C encoder with the indented separators; a dict with other containers recurses by item; anything else
    (scalar subclasses, non-string keys among containers, nesting past 63 levels) is the standard
    library's own encoding, re-indented (raw newlines never occur inside JSON text, so the re-indent is
    exact)."""
    t = type(value)
    if t is str:
        return json_str(value)
    if t is dict or t is list or t is tuple:
        if not value:
            return "{}" if t is dict else "[]"
        if level >= _DEPTH - 1:
            return _stdlib(value, level)
        items = value.values() if t is dict else value
        flat = _FLAT_ASCII[level]
        if flat is not None and _SCALARS.issuperset(map(type, items)):
            s = "".join(flat(value, 0))
            if "\\u" in s:
                s = "".join(_FLAT_UNICODE[level](value, 0))
            return s[0] + _OPEN[level] + s[1:-1] + _CLOSE[level] + s[-1]
        inner = level + 1
        body = []
        if t is dict:
            for k, v in value.items():
                if type(k) is not str:
                    return _stdlib(value, level)
                e = _ASCII(k)
                if "\\u" in e:
                    e = _UNICODE(k)
                if type(v) is str:
                    s = _ASCII(v)
                    body.append(e + ": " + (_UNICODE(v) if "\\u" in s else s))
                else:
                    body.append(e + ": " + indent_json(v, inner))
            return "{" + _OPEN[level] + ("," + _OPEN[level]).join(body) + _CLOSE[level] + "}"
        for v in value:
            if type(v) is str:
                s = _ASCII(v)
                body.append(_UNICODE(v) if "\\u" in s else s)
            else:
                body.append(indent_json(v, inner))
        return "[" + _OPEN[level] + ("," + _OPEN[level]).join(body) + _CLOSE[level] + "]"
    if t is int:
        return int.__repr__(value)
    if value is None:
        return "null"
    if t is bool:
        return "true" if value else "false"
    return _stdlib(value, level)
