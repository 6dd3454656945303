"""Reading a conversation file as a stream of instances, with bounds and one-line errors (issue 28).

A LongMemEval or LoCoMo file is one JSON list of instances; LongMemEval's ``_m`` runs to gigabytes, so
the list is read one element at a time with `ijson <https://pypi.org/project/ijson/>`_ (its yajl2 C
backend where installed, else the pure-Python one; ``ijson.backend`` names the one in use), never with
``json.load``: memory holds one instance, whatever the file's size. Each element is validated fully
before it is yielded, and the first bad one stops the read with a :class:`~sim.errors.UsageError` naming
the file, the instance's 0-based index and the field path, without reading the rest of the file.

Bounds (documented in docs/conversations.md, "Formats"): an instance is at most
:data:`MAX_INSTANCE_BYTES` of JSON and opens at most :data:`MAX_CONTAINERS` lists and objects (counted
on the raw bytes, at C speed, so a file of nested brackets cannot build billions of empty lists before
the check); a file holds at most :data:`MAX_INSTANCES` instances; the per-field bounds are below. Lists and
objects nest at most :data:`~sim.limits.MAX_DEPTH` levels, refused as soon as one opens deeper.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO, TypeVar

from sim.errors import UsageError
from sim.limits import MAX_DEPTH, require_file

#: The most JSON bytes one instance may take (a LongMemEval ``_m`` instance is about 5.5 MB).
MAX_INSTANCE_BYTES = 64 << 20
#: The most ``[`` and ``{`` bytes one instance may hold (brackets inside its strings count too): room
#: for :data:`MAX_TURNS` turns, each an object, with their sessions and questions.
MAX_CONTAINERS = 500_000
#: The most instances in a file (LongMemEval's files hold 500, LoCoMo's 10).
MAX_INSTANCES = 1_000_000
#: The most sessions in an instance (``_m``: about 500), turns in an instance, and questions in one.
MAX_SESSIONS = 10_000
MAX_TURNS = 200_000
MAX_QUESTIONS = 100_000
#: The most evidence ids of one question, and the longest id (a question, session, turn or sample id).
MAX_EVIDENCE = 10_000
MAX_ID_CHARS = 1_000
#: The longest text of one turn, question or answer (characters), as a workload line's observation.
MAX_TEXT_CHARS = 1 << 20

_READ = 1 << 16
_BOM = b"\xef\xbb\xbf"


class Bad(Exception):
    """An invalid field inside one instance: its path (``haystack_sessions[3][2].role``) and why."""

    def __init__(self, path: str, why: str) -> None:
        super().__init__(f"{path}: {why}" if path else why)


class _InstanceTooBig(Exception):
    def __init__(self, why: str) -> None:
        super().__init__(why)


class CountingReader:
    """A binary file wrapper that counts the bytes read (in all, and since :meth:`mark`) and the lists
    and objects opened since the mark, raising once an instance exceeds its bounds. ``read_bytes``
    is what a test checks to see that a bad instance stopped the read early."""

    def __init__(self, fh: BinaryIO, prefix: bytes = b"") -> None:
        self._fh = fh
        self._prefix = prefix
        self.read_bytes = len(prefix)
        self._since = len(prefix)
        self._opens = prefix.count(b"[") + prefix.count(b"{")

    def mark(self) -> None:
        """An instance ended: its successor's bounds start here (to within one read-ahead buffer)."""
        self._since = 0
        self._opens = 0

    def read(self, n: int = -1) -> bytes:
        if n == 0:  # ijson probes the type of what read returns with read(0)
            return b""
        if self._prefix:
            data, self._prefix = self._prefix, b""
        else:
            data = self._fh.read(n if n and n > 0 else _READ)
            self.read_bytes += len(data)
            self._since += len(data)
            self._opens += data.count(b"[") + data.count(b"{")
        if self._since > MAX_INSTANCE_BYTES + 2 * _READ:
            raise _InstanceTooBig(f"is over the {MAX_INSTANCE_BYTES:,}-byte limit of one instance")
        if self._opens > MAX_CONTAINERS:
            raise _InstanceTooBig(f"opens more than {MAX_CONTAINERS:,} lists and objects")
        return data


def _json_reason(exc: BaseException) -> str:
    """The first line of a parser's error (yajl's messages continue with a picture of the input)."""
    text = exc.args[0] if exc.args else str(exc)
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    first = str(text).strip().splitlines()[0] if str(text).strip() else type(exc).__name__
    if "UTF8" in first or "utf-8" in first.lower():
        return "not UTF-8 text"
    return f"not valid JSON: {' '.join(first.split())}"


T = TypeVar("T")


def iter_json_list(
    kind: str,
    path: str | os.PathLike[str],
    build: Callable[[Any, int], T],
    *,
    reader: list[Any] | None = None,
) -> Iterator[T]:
    """``build(element, index)`` for each element of the JSON list in *path*, in file order.

    *build* raises :class:`Bad` for an invalid field; that, malformed JSON, non-UTF-8 bytes, an empty
    file, a file that is not a list, an instance over its bounds and an empty list all become one
    :class:`UsageError` line: ``KIND FILE: instance N: FIELD: why``. *reader*, if given, receives the
    :class:`CountingReader` (tests read its byte count)."""
    import ijson

    what = f"{kind} {path}"
    p = Path(path)
    require_file(p, f"{kind} file")
    try:
        fh = open(p, "rb")  # noqa: SIM115 (closed in the finally below, after the generator ends)
    except OSError as exc:
        raise UsageError(f"cannot read {what}: {exc.strerror or exc}") from exc
    try:
        head = fh.read(_READ)
        if head.startswith(_BOM):
            head = head[len(_BOM) :]
        stripped = head.lstrip()
        while not stripped:  # blank space only so far: read on (a stream, whatever its length)
            more = fh.read(_READ)
            if not more:
                raise UsageError(f"{what} is empty")
            head, stripped = more, more.lstrip()
        if not stripped.startswith(b"["):
            shown = stripped[:1].decode("latin-1")
            raise UsageError(f"{what} is not a JSON list of instances (it starts with {shown!r})")
        counted = CountingReader(fh, head)
        if reader is not None:
            reader.append(counted)
        index = 0
        items = _elements(ijson.basic_parse(counted, use_float=True, buf_size=_READ))
        while True:
            try:
                element = next(items)
            except StopIteration:
                break
            except _InstanceTooBig as exc:
                raise UsageError(f"{what}: instance {index} {exc}") from None
            except UsageError:
                raise
            except Exception as exc:  # ijson's JSONError, a decoding error of the pure-Python backend
                raise UsageError(f"{what}: instance {index}: {_json_reason(exc)}") from None
            if index >= MAX_INSTANCES:
                raise UsageError(f"{what} has more than {MAX_INSTANCES:,} instances")
            try:
                built = build(element, index)
            except Bad as exc:
                raise UsageError(f"{what}: instance {index}: {exc}") from None
            del element
            counted.mark()
            yield built
            index += 1
        if index == 0:
            raise UsageError(f"{what} holds no instances (an empty list)")
    finally:
        fh.close()


_SCALARS = frozenset({"string", "number", "integer", "double", "boolean", "null"})


def _elements(events: Iterator[tuple[str, Any]]) -> Iterator[Any]:
    """The elements of the top-level JSON list whose parser *events* (ijson ``basic_parse``) are given,
    built one at a time; a list or object nested deeper than :data:`~sim.limits.MAX_DEPTH` levels is
    refused the moment it opens. (Not ``ijson.items``: it keeps a path string per open level, so a few
    hundred thousand nested brackets take gigabytes before any bound could be checked.)"""
    if next(events, ("", None))[0] != "start_array":  # the caller saw a "[" first
        return
    top: Any = None  # the innermost open list or object of the element being built (None: between)
    is_map = False
    key: Any = None
    saved: list[tuple[Any, bool, Any]] = []  # the enclosing (top, is_map, key) of each open level
    for event, value in events:  # ordered by frequency: keys and scalars, then the brackets
        if event == "map_key":
            key = value
        elif event in _SCALARS:
            if top is None:
                yield value
            elif is_map:
                top[key] = value
            else:
                top.append(value)
        elif event == "start_map" or event == "start_array":
            if len(saved) >= MAX_DEPTH:
                raise _InstanceTooBig(f"is nested deeper than {MAX_DEPTH} levels")
            new: Any = {} if event == "start_map" else []
            if top is not None:
                if is_map:
                    top[key] = new
                else:
                    top.append(new)
            saved.append((top, is_map, key))
            top, is_map, key = new, event == "start_map", None
        elif top is not None:  # end_map or end_array of an open level (not of the top-level list)
            done = top
            top, is_map, key = saved.pop()
            if top is None:
                yield done


# -- field checks shared by the formats ------------------------------------------------------------------
_TYPE_NAMES = {str: "a string", list: "a list", dict: "an object", int: "an integer", bool: "true or false"}


def field(obj: dict[str, Any], key: str, kind: type, path: str) -> Any:
    """``obj[key]``, which must be present and of *kind* (an int is not a bool); :class:`Bad` if not."""
    at = f"{path}.{key}" if path else key
    if key not in obj:
        raise Bad(at, "missing")
    return check(obj[key], kind, at)


def check(value: Any, kind: type, at: str) -> Any:
    """*value* if it is of *kind*; :class:`Bad` naming *at* otherwise. Strings are bounded in length."""
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise Bad(at, f"expected {_TYPE_NAMES.get(kind, kind.__name__)}, got {_shown_type(value)}")
    if isinstance(value, str) and len(value) > MAX_TEXT_CHARS:
        raise Bad(at, f"longer than {MAX_TEXT_CHARS:,} characters")
    return value


def ident(value: Any, at: str) -> str:
    """*value* as an id: a non-empty string of at most :data:`MAX_ID_CHARS` characters."""
    check(value, str, at)
    if not value:
        raise Bad(at, "empty")
    if len(value) > MAX_ID_CHARS:
        raise Bad(at, f"longer than {MAX_ID_CHARS:,} characters")
    return str(value)


def answer_text(value: Any, at: str) -> str:
    """A gold answer as a string: the released files hold strings and, now and then, a bare number
    (LoCoMo's ``"answer": 2022``), which is read as its JSON text."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise Bad(at, f"expected a string or a number, got {_shown_type(value)}")
    if isinstance(value, str):
        return check(value, str, at)  # type: ignore[no-any-return]
    return str(value)


def bounded(items: Any, limit: int, at: str, what: str) -> list[Any]:
    """*items* if there are at most *limit* of them."""
    if len(items) > limit:
        raise Bad(at, f"more than {limit:,} {what}")
    return items


def _shown_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true/false"
    return {str: "a string", list: "a list", dict: "an object", int: "a number", float: "a number"}.get(
        type(value), type(value).__name__
    )
