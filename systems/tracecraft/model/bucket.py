"""The project view of the bucket (upstream ``s3.py``/``hf.py``): ``<project>/`` keys and JSON documents."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from sim.objects import ObjectStore
from systems.tracecraft.model.retention import Body, join
from systems.tracecraft.protocol import TracecraftError


def indent2(doc: Any) -> str:
    """``json.dumps(doc, indent=2)``, the same characters, several times faster.

    The standard library falls back to its pure-Python encoder whenever ``indent`` is set; this walks
    dicts and lists itself and encodes every scalar with the C encoder. Anything unusual (a non-string
    key, a tuple, a float that is not finite) goes to ``json.dumps``. tests/test_tracecraft_functions.py
    checks it against ``json.dumps(indent=2)`` on generated documents.
    """
    out: list[str] = []
    try:
        _indent2(doc, "", out)
    except _Unusual:
        return json.dumps(doc, indent=2)
    return "".join(out)


#: The text of dicts nested two levels deep (meta's parts-log entries) by identity: a flush re-encodes the
#: same entries (decoded once, :meth:`Bucket.get_shared`) every time. Entries hold their dict, so an id is
#: never reused while it is here; the model never changes a dict once it has been stored.
_MEMO: dict[int, tuple[Any, str, str]] = {}
MEMO_ENTRIES = 8192


class _Unusual(Exception):
    pass


_STR = json.encoder.encode_basestring_ascii  # the C string encoder json.dumps uses (ensure_ascii)
_CONST = {True: "true", False: "false"}


def _indent2(x: Any, pad: str, out: list[str]) -> None:
    t = type(x)
    if t is str:
        out.append(_STR(x))
    elif t is dict:
        if not x:
            out.append("{}")
            return
        deep = len(pad) >= 4 and MEMO_ENTRIES > 0
        if deep:
            hit = _MEMO.get(id(x))
            if hit is not None and hit[0] is x and hit[1] == pad:
                out.append(hit[2])
                return
            mark = len(out)
        inner = pad + "  "
        sep = ",\n" + inner
        out.append("{\n" + inner)
        first = True
        for k, v in x.items():
            if type(k) is not str:
                raise _Unusual
            if not first:
                out.append(sep)
            first = False
            out.append(_STR(k) + ": ")
            _indent2(v, inner, out)
        out.append("\n" + pad + "}")
        if deep:
            if len(_MEMO) >= MEMO_ENTRIES:
                del _MEMO[next(iter(_MEMO))]
            _MEMO[id(x)] = (x, pad, "".join(out[mark:]))
    elif t is list:
        if not x:
            out.append("[]")
            return
        inner = pad + "  "
        sep = ",\n" + inner
        out.append("[\n" + inner)
        for i, v in enumerate(x):
            if i:
                out.append(sep)
            _indent2(v, inner, out)
        out.append("\n" + pad + "]")
    elif t is int:
        out.append(int.__repr__(x))
    elif t is bool:
        out.append(_CONST[x])
    elif x is None:
        out.append("null")
    elif t is float and x == x and x not in (float("inf"), float("-inf")):
        out.append(float.__repr__(x))
    else:
        raise _Unusual


def dumps(doc: Any) -> bytes:
    """A JSON document's stored bytes: ``json.dumps(doc, indent=2)``, ASCII-escaped, no trailing newline,
    as upstream's S3 and HF ``put_json`` and the mirror-state file (``s3.py:47-51``, ``hf.py:52-63``,
    ``cli/session.py:64-66``)."""
    return indent2(doc).encode("ascii")


#: The most body bytes a bucket's decode cache holds.
DECODE_CACHE_BYTES = 4 << 20
#: The most body bytes a bucket remembers having written with their documents (:meth:`Bucket.put_json`):
#: the newest writes, which are the ones read back; a body written longer ago is decoded when read.
WRITTEN_CACHE_BYTES = 1 << 20


def loads(body: bytes | None) -> Any:
    """A stored JSON document, None when missing or not JSON."""
    if body is None:
        return None
    try:
        return json.loads(body)
    except ValueError:
        return None


class Bucket:
    """The project view of the bucket (upstream ``s3.py``/``hf.py``): ``<project>/`` keys and JSON docs.

    ``backend="hf"`` models the HuggingFace backend's conditional put as exists-then-write with a store
    round trip between them (racy). The ``history-worm`` fix refuses overwrite/delete of snapshots.

    Every GET reaches the store. What is cached is only the work on the bytes it returns: a body equal to
    the one decoded last time for that key is not decoded again, and the very body this bucket wrote
    decodes to the document it encoded (:meth:`get_shared`; callers must not change what it returns); the
    indent-2 text of a body this bucket wrote is that body (:meth:`get_json_text`). A changed object is a
    different body, so no cache can hide a staleness the real system has. The decode cache holds at most
    :data:`DECODE_CACHE_BYTES` of bodies, the written ones :data:`WRITTEN_CACHE_BYTES` (a long bench cell
    writes a memory key and its snapshot a fact: before issue 33 every one stayed here).
    Not modeled: HF's listing/file API otherwise; S3 pagination is the core store's.
    """

    def __init__(self, store: ObjectStore, project: str, backend: str = "s3", *, worm: bool = False) -> None:
        if backend not in ("s3", "hf"):
            raise ValueError(f"backend must be s3 or hf, not {backend!r}")
        self.store = store
        self.project = project
        self.backend = backend
        self.worm = worm
        self.bytes_written = 0
        self._decoded: dict[str, tuple[bytes, Any]] = {}  # key -> (body, its decoded document)
        self._decoded_bytes = 0
        self._written: dict[str, tuple[bytes, Any]] = {}  # key -> the body put_json last wrote there, its doc
        self._written_bytes = 0

    def _k(self, key: str) -> str:
        return f"{self.project}/{key}"

    def _guard(self, key: str) -> None:
        if self.worm and key.startswith("memory/_history/") and self.store.exists(self._k(key)):
            raise TracecraftError(f"object lock: {key} is immutable")

    def put_bytes(self, key: str, body: Body, *, if_none_match: bool = False) -> None:
        """PUT raw bytes (``put_file``); conditional create with *if_none_match*."""
        self._guard(key)
        self.store.put(self._k(key), body, if_none_match=if_none_match)  # type: ignore[arg-type]
        self.bytes_written += len(body)
        self._forget_written(key)

    def put_json(self, key: str, doc: Any, *, if_none_match: bool = False) -> None:
        """PUT a JSON document (S3 ``IfNoneMatch="*"`` when *if_none_match*)."""
        body = dumps(doc)
        self.put_bytes(key, body, if_none_match=if_none_match)
        written = self._written
        while written and self._written_bytes + len(body) > WRITTEN_CACHE_BYTES:
            self._written_bytes -= len(written.pop(next(iter(written)))[0])  # first in, first out
        written[key] = (body, doc)
        self._written_bytes += len(body)

    def _forget_written(self, key: str) -> None:
        gone = self._written.pop(key, None)
        if gone is not None:
            self._written_bytes -= len(gone[0])

    def get_bytes(self, key: str) -> bytes | None:
        """GET raw bytes, None when missing (a part ``session compact`` merged in a
        :class:`~systems.tracecraft.model.retention.TailStore` may be headless)."""
        return self.store.get(self._k(key))

    def concat(self, bodies: Sequence[Body]) -> Body:
        """Part bodies joined as the store keeps a merged part (:meth:`TailStore.concat
        <systems.tracecraft.model.retention.TailStore.concat>`: only its tail), else ``b"".join``."""
        concat = getattr(self.store, "concat", None)
        return concat(bodies) if concat is not None else join(bodies)  # type: ignore[no-any-return]

    def get_json(self, key: str) -> Any:
        """GET a JSON document, None when missing (a fresh object the caller may change)."""
        return loads(self.get_bytes(key))

    def get_shared(self, key: str) -> Any:
        """GET a JSON document, decoded again only if its body changed: the caller must not change it."""
        return self.decode_shared(key, self.get_bytes(key))

    def decode_shared(self, key: str, body: bytes | None) -> Any:
        """*body* (just read from *key*) decoded, or the document decoded last time from an equal body."""
        if body is None:
            return None
        mine = self._written.get(key)
        if mine is not None and mine[0] is body:  # the very body this bucket wrote: its document
            return mine[1]
        hit = self._decoded.get(key)
        if hit is not None and (hit[0] is body or hit[0] == body):
            return hit[1]
        doc = loads(body)
        if hit is not None:
            self._decoded_bytes -= len(hit[0])
        if len(body) <= DECODE_CACHE_BYTES // 8:
            while self._decoded and self._decoded_bytes + len(body) > DECODE_CACHE_BYTES:
                oldest = next(iter(self._decoded))  # first in, first out
                self._decoded_bytes -= len(self._decoded.pop(oldest)[0])
            self._decoded[key] = (body, doc)
            self._decoded_bytes += len(body)
        else:
            self._decoded.pop(key, None)
        return doc

    def get_json_text(self, key: str) -> tuple[Any, str]:
        """GET a JSON document and its ``json.dumps(doc, indent=2)`` text (``null`` when missing)."""
        body = self.get_bytes(key)
        doc = loads(body)
        mine = self._written.get(key)
        if body is not None and mine is not None and body is mine[0]:
            return doc, body.decode("ascii")
        return doc, indent2(doc)

    def exists(self, key: str) -> bool:
        """HEAD."""
        return self.store.exists(self._k(key))

    def delete(self, key: str) -> None:
        """DELETE (missing is fine)."""
        self._guard(key)
        self.store.delete(self._k(key))
        self._forget_written(key)

    def list_keys(self, prefix: str = "", start_after: str | None = None) -> list[str]:
        """Project-relative keys under *prefix* (recursive), sorted, excluding keys ``<=`` *start_after*."""
        n = len(self.project) + 1
        after = self._k(start_after) if start_after else None
        return [k[n:] for k in self.store.list(self._k(prefix), after)]

    def compare_and_put_json(self, key: str, doc: Any, expected: bytes | None) -> bool:
        """PUT *doc* only if the body is still *expected* (an If-Match ETag write); False if it changed.

        Not modeled: the ETag itself; the GET and PUT are atomic because no process runs between them.
        """
        if self.store.get(self._k(key)) != expected:
            return False
        self.put_json(key, doc)
        return True
