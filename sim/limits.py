"""Bounds on everything a user or a file supplies: file sizes, nesting depth, and the readers that use them.

Scenario files and saved examples are small; memsim refuses anything larger than :data:`MAX_INPUT_BYTES`
or nested deeper than :data:`MAX_DEPTH` with one line, instead of reading ``/dev/zero`` until memory runs
out or recursing until the interpreter gives up. Scenario parameters, benchmark options and fault values
carry their own documented bounds (``memsim doc params SCENARIO``, ``memsim bench --help``).
"""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path
from typing import Any

from sim.errors import UsageError

#: The largest scenario file, saved example or workload line memsim reads (1 MiB).
MAX_INPUT_BYTES = 1 << 20
#: The deepest nesting of lists and tables in a scenario file or saved example.
MAX_DEPTH = 32


def require_file(path: str | os.PathLike[str], what: str) -> os.stat_result:
    """The stat of the regular file *path*; a missing file, directory or device is a one-line error."""
    try:
        st = Path(path).stat()
    except FileNotFoundError as exc:
        raise UsageError(f"{what} not found: {path}") from exc
    except OSError as exc:
        raise UsageError(f"cannot read {what} {path}: {exc.strerror or exc}") from exc
    if not stat.S_ISREG(st.st_mode):
        raise UsageError(f"{what} {path} is not a regular file")
    return st


def read_bounded(path: str | os.PathLike[str], what: str, limit: int = MAX_INPUT_BYTES) -> bytes:
    """The bytes of the regular file *path*, refusing devices, directories and files over *limit*."""
    p = Path(path)
    st = require_file(p, what)
    if st.st_size > limit:
        raise UsageError(f"{what} {path} is {st.st_size:,} bytes; the limit is {limit:,}")
    try:
        with open(p, "rb") as fh:
            data = fh.read(limit + 1)
    except OSError as exc:
        raise UsageError(f"cannot read {what} {path}: {exc.strerror or exc}") from exc
    if len(data) > limit:
        raise UsageError(f"{what} {path} is over the {limit:,}-byte limit")
    return data


#: The UTF-8 byte-order mark. Editors on Windows write it; memsim accepts one at the start of a text
#: input (as JSON's RFC 8259 and most TOML tools allow) and reads the text after it.
BOM = b"\xef\xbb\xbf"


def decode_text(data: bytes, what: str, path: str | os.PathLike[str]) -> str:
    """*data* as UTF-8 text, without a leading byte-order mark; binary input is a one-line error."""
    if b"\x00" in data:
        raise UsageError(f"{what} {path} is binary, not text")
    try:
        return data.removeprefix(BOM).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"{what} {path} is not UTF-8 text: {exc.reason} at byte {exc.start}") from exc


def depth(value: Any, limit: int = MAX_DEPTH) -> int:
    """The nesting depth of a parsed JSON/TOML value (stops counting past *limit*)."""
    best = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, dict):
            children: Any = v.values()
        elif isinstance(v, list | tuple):
            children = v
        else:
            continue
        best = max(best, d)
        if best > limit:
            return best
        stack.extend((c, d + 1) for c in children)
    return best


def _prescan_depth(text: str, limit: int) -> None:
    """Refuse bracket nesting deeper than *limit* before a recursive parser sees it."""
    level = 0
    in_str: str | None = None
    escape = False
    for ch in text:
        if in_str:
            if escape:
                escape = False
            elif ch == "\\":
                escape = True
            elif ch == in_str:
                in_str = None
            continue
        if ch in "\"'":
            in_str = ch
        elif ch in "[{":
            level += 1
            if level > limit:
                raise UsageError(f"nested deeper than {limit} levels")
        elif ch in "]}":
            level -= 1


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


_DOTTED = re.compile(r"[A-Za-z0-9_S-]+(?:[ \t]*\.[ \t]*[A-Za-z0-9_S-]+)+")


def _toml_skeleton(text: str) -> str:
    """*text* with every TOML string replaced by ``S`` and comments dropped (what keys are made of)."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == "#":
            j = text.find("\n", i)
            i = n if j < 0 else j
            continue
        if ch in "\"'":
            quote = text[i : i + 3] if text.startswith(ch * 3, i) else ch
            i += len(quote)
            while i < n and not text.startswith(quote, i):
                i += 2 if ch == '"' and text[i] == "\\" else 1
            i += len(quote)
            out.append("S")
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def _prescan_toml_keys(text: str, limit: int) -> None:
    """Refuse a dotted key with more than *limit* parts (``a.a.a...``): tomllib takes time quadratic in
    the parts (50,000 of them, a 100 kB file, take 40 s), and each part is a level of nesting."""
    if text.count(".") <= limit:
        return
    for m in _DOTTED.finditer(_toml_skeleton(text)):
        if m.group().count(".") >= limit:
            raise UsageError(
                f"nested deeper than {limit} levels (a dotted key of {m.group().count('.') + 1} parts)"
            )


def load_json(text: str, what: str, path: str | os.PathLike[str]) -> Any:
    """Parse JSON text with the nesting limit; one-line errors. ``NaN`` and ``Infinity`` (which Python's
    parser accepts but JSON does not) are refused, as are integers over 4,300 digits."""
    try:
        _prescan_depth(text, MAX_DEPTH)
        value = json.loads(text, parse_constant=_no_constant)
    except UsageError as exc:
        raise UsageError(f"{what} {path} is {exc}") from exc
    except (ValueError, RecursionError) as exc:
        reason = " ".join(str(exc).split(";")[0].split())
        raise UsageError(f"{what} {path} is not valid JSON: {reason}") from exc
    if depth(value) > MAX_DEPTH:
        raise UsageError(f"{what} {path} is nested deeper than {MAX_DEPTH} levels")
    return value


def load_toml(text: str, what: str, path: str | os.PathLike[str]) -> dict[str, Any]:
    """Parse TOML text with the nesting limit; one-line errors."""
    import tomllib

    try:
        _prescan_depth(text, MAX_DEPTH)
        _prescan_toml_keys(text, MAX_DEPTH)
        value = tomllib.loads(text)
    except UsageError as exc:
        raise UsageError(f"{what} {path} is {exc}") from exc
    except (tomllib.TOMLDecodeError, RecursionError) as exc:
        raise UsageError(f"malformed {what} {path}: {exc}") from exc
    except ValueError as exc:  # an integer over Python's 4,300-digit limit (issue 37)
        reason = " ".join(str(exc).split(":")[0].split())
        raise UsageError(f"malformed {what} {path}: {reason} (an integer with too many digits)") from exc
    if depth(value) > MAX_DEPTH:
        raise UsageError(f"{what} {path} is nested deeper than {MAX_DEPTH} levels")
    return value
