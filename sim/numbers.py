"""Bounded parsing of numbers from text a user or a file supplies.

Python's ``int()`` refuses a string of more than 4,300 digits with a ``ValueError`` whose message is about
the interpreter, not the input, and converts any length below that in time quadratic in it; ``float()``
accepts ``"nan"``, ``"inf"`` and ``"1_000"``. Every place where input text becomes a number goes through
:func:`parse_int` or :func:`parse_float` instead: the text is checked against a short pattern (at most
:data:`MAX_DIGITS` digits) and a range before it is converted, and anything else is one
:class:`~sim.errors.UsageError` line naming the input.
"""

from __future__ import annotations

import math
import os
import re

from sim.errors import UsageError

#: The most digits an integer in input text may have (2**63 has 19; room for a readable error beyond).
MAX_DIGITS = 20
_D = f"[0-9]{{1,{MAX_DIGITS}}}"
_INT = re.compile(rf"[+-]?{_D}")
_FLOAT = re.compile(rf"[+-]?(?:{_D}(?:\.[0-9]{{0,{MAX_DIGITS}}})?|\.{_D})(?:[eE][+-]?[0-9]{{1,3}})?")


def _shown(text: str) -> str:
    return repr(text if len(text) <= 40 else text[:40] + "...")


def parse_int(text: str, what: str, *, lo: int | None = None, hi: int | None = None) -> int:
    """*text* (surrounding whitespace aside) as an integer of at most :data:`MAX_DIGITS` digits within
    ``[lo, hi]``; anything else is a :class:`UsageError` naming *what*."""
    t = text.strip()
    if not _INT.fullmatch(t):
        if re.fullmatch(r"[+-]?[0-9]+", t):
            raise UsageError(f"{what}: {_shown(t)} has {len(t.lstrip('+-')):,} digits; at most {MAX_DIGITS}")
        raise UsageError(f"{what}: {_shown(t)} is not an integer")
    n = int(t)
    _check_range(n, what, lo, hi)
    return n


def parse_float(text: str, what: str, *, lo: float | None = None, hi: float | None = None) -> float:
    """*text* as a finite decimal number (at most :data:`MAX_DIGITS` digits on each side of the point, an
    exponent of at most three digits) within ``[lo, hi]``; NaN, the infinities and anything else are a
    :class:`UsageError` naming *what*."""
    t = text.strip()
    if not _FLOAT.fullmatch(t):
        raise UsageError(f"{what}: {_shown(t)} is not a number (at most {MAX_DIGITS} digits)")
    x = float(t)
    if not math.isfinite(x):
        raise UsageError(f"{what}: {_shown(t)} is not a finite number")
    _check_range(x, what, lo, hi)
    return x


def _check_range(x: float, what: str, lo: float | None, hi: float | None) -> None:
    if lo is not None and x < lo:
        raise UsageError(f"{what}: {x:g} is below the minimum {lo:g}")
    if hi is not None and x > hi:
        raise UsageError(f"{what}: {x:g} is above the maximum {hi:g}")


def env_seconds(name: str, default: float, *, hi: float = 3600.0) -> float:
    """A wait bound in seconds from environment variable *name* (tests shorten it), else *default*."""
    raw = os.environ.get(name)
    if raw is None or not raw.strip():
        return default
    return parse_float(raw, name, lo=0.01, hi=hi)
