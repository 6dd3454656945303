"""The writers of the ledger's and the token log's JSON files (``.nemsy/ingest_log.json``,
``.nemsy/token_log.json``): upstream's whole-file ``json.dumps`` rewrites, written on the tree as only the
bytes that changed (issue 33). Moved out of :mod:`.ledger` (issue 41) so that :mod:`.base`, which holds
them, does not import the layer built on it.
"""

from __future__ import annotations

import json
from array import array
from typing import Any

from sim.jsontext import indent_json
from sim.spill import PathTable


def _indented(value: Any, level: int) -> str:
    """``json.dumps(value, ensure_ascii=False, indent=2)`` with every line after the first indented by
    *level* more spaces (how the value reads nested inside the whole document): an even *level* is
    :func:`sim.jsontext.indent_json`'s nesting, the same bytes mostly from the C encoder."""
    if level % 2 == 0:
        return indent_json(value, level // 2)
    return json.dumps(value, ensure_ascii=False, indent=2).replace("\n", "\n" + " " * level)


#: What :class:`LedgerFile` and :class:`TokenLogFile` hold for a document they wrote and then dropped.
_DROPPED = object()


class LedgerFile:
    """Writes ``ingest_log.json`` as ``json.dumps(document, ensure_ascii=False, indent=2)`` (upstream's
    whole-file rewrite) while rewriting on the tree only the bytes that changed: when the document is the
    one written last and one record was added at its end or replaced, only the text from that record on
    is rewritten (:meth:`sim.files.FileTree.write_from`); anything else is written whole. The file's bytes
    are the same either way; :meth:`forget` after anyone else writes the file. Only each record's encoded
    length is kept (issue 33: a long run's ledger is not held twice); a replaced record's successors are
    encoded again from the document, which holds them unchanged (records are replaced, never edited in
    place), so they are the bytes written before.

    :meth:`drop` lets go of the document itself (the benchmark's installation, ``hold_ledger``): the file
    then is the document, :meth:`get` reads one record back from it by key (an index of keys and record
    lengths stays) and :meth:`put` adds or replaces one, writing the bytes the whole document's rewrite
    would end with."""

    _HEAD = '{\n  "version": %s,\n  "files": {\n'
    _FOOT = "\n  }\n}"

    def __init__(self) -> None:
        self.forget()

    def forget(self) -> None:
        """Drop what is known about the file (it was written behind this writer's back)."""
        self._doc: object = None
        #: the records' keys in order, each key's id its position (issue 42: compact, and found by hash)
        self._keys = PathTable()
        self._lens = _Lengths()  # each record's encoded length, in order, with their prefix sums
        self._head = 0  # the bytes before the first record
        self._end = 0  # the byte offset just after the last record (where the footer starts)

    def drop(self) -> None:
        """Stop holding the document written last (only one written record by record, with records)."""
        if self._doc is not None and self._doc is not _DROPPED and self._keys:
            self._doc = _DROPPED

    @property
    def droppable(self) -> bool:
        """Whether :meth:`drop` would let the document go (it was written record by record)."""
        return self._doc is _DROPPED or (self._doc is not None and bool(self._keys))

    @property
    def dropped(self) -> bool:
        """Whether the file, not a held document, is what this writer knows (:meth:`drop`)."""
        return self._doc is _DROPPED

    def adopt(self, data: dict[str, Any]) -> None:
        """Hold *data* again, parsed from the file this writer wrote and dropped (it encodes to the file)."""
        if self._doc is _DROPPED:
            self._doc = data

    def _index(self, key: str) -> int | None:
        """Where record *key* is in the document (None: it has none): its id in the key table."""
        i = self._keys.find(key)
        return i if i >= 0 else None

    def _start(self, i: int) -> int:
        """Where record *i* starts: the head and the records before it with their ``,\\n`` separators."""
        return self._head + self._lens.before(i) + 2 * i

    def get(self, tree: Any, path: str, key: str, default: Any = None) -> Any:
        """Record *key* of the dropped document read back from the file (*default* when it has none)."""
        i = self._index(key)
        if i is None:
            return default
        piece = tree.peek(path, self._start(i), self._lens[i])
        return json.loads(b"{" + piece + b"}")[key]

    def put(self, tree: Any, path: str, key: str, value: Any, clock: Any) -> int:
        """Set record *key* of the dropped document to *value* (appended when new); returns the new size."""
        piece = self._piece(key, value)
        i = self._index(key)
        if i is None:
            start, tail = self._append(key, piece)
            tail += self._FOOT.encode()
            tree.write_from(path, start, tail, clock=clock)
            return start + len(tail)
        # the record replaced in place (issue 42: the successors' bytes stay where the tree keeps them)
        start, old = self._start(i), self._lens[i]
        tree.splice(path, start, old, piece, clock=clock)
        self._end += len(piece) - old
        self._lens[i] = len(piece)
        return self._end + len(self._FOOT)

    def _append(self, key: str, piece: bytes) -> tuple[int, bytes]:
        """Index *piece* (record *key*) as the last record; where it is written from, and what."""
        self._keys.add(key)
        self._lens.append(len(piece))
        start = self._end
        self._end += 2 + len(piece)
        return start, b",\n" + piece

    def write(self, tree: Any, path: str, data: dict[str, Any], changed: str | None, clock: Any) -> int:
        """Write *data* (whose record *changed* is the only change since the last write, when known) to
        *path*; returns the file's new size."""
        files = data.get("files")
        same = data is self._doc and list(data) == ["version", "files"]
        if same and changed is not None and isinstance(files, dict) and changed in files:
            n = len(self._keys)
            appended = self._keys.find(changed) < 0 and n and len(files) == n + 1
            if appended and next(reversed(files)) == changed:
                return self._splice(tree, path, n, changed, files, clock)
            i = self._index(changed)
            if i is not None and len(files) == n:
                return self._splice(tree, path, i, changed, files, clock)
        return self._whole(tree, path, data, clock)

    def _piece(self, key: str, value: Any) -> bytes:
        return f"    {json.dumps(key, ensure_ascii=False)}: {_indented(value, 4)}".encode()

    def _whole(self, tree: Any, path: str, data: dict[str, Any], clock: Any) -> int:
        self.forget()
        files = data.get("files")
        if list(data) != ["version", "files"] or not isinstance(files, dict) or not files:
            text = json.dumps(data, ensure_ascii=False, indent=2).encode()
            tree.write_bytes(path, text, clock=clock)
            return len(text)
        head = (self._HEAD % json.dumps(data["version"], ensure_ascii=False)).encode()
        pieces = []
        for k, v in files.items():
            self._keys.add(k)
            pieces.append(self._piece(k, v))
            self._lens.append(len(pieces[-1]))
        body = b",\n".join(pieces)
        text = head + body + self._FOOT.encode()
        tree.write_bytes(path, text, clock=clock)
        self._doc, self._head, self._end = data, len(head), len(head) + len(body)
        return len(text)

    def _splice(self, tree: Any, path: str, i: int, key: str, files: dict[str, Any], clock: Any) -> int:
        """Rewrite from record *i* on: appended after the last record, or replaced (where it starts is
        the head and the records before it with their ``,\\n`` separators, summed in C)."""
        piece = self._piece(key, files[key])
        if i == len(self._keys):
            start, tail = self._append(key, piece)
        else:
            start = self._start(i)
            self._end += len(piece) - self._lens[i]
            self._lens[i] = len(piece)
            later = (self._keys.path(k) for k in range(i + 1, len(self._keys)))
            tail = b",\n".join([piece, *(self._piece(k, files[k]) for k in later)])
        tail += self._FOOT.encode()
        tree.write_from(path, start, tail, clock=clock)
        return start + len(tail)


class TokenLogFile:
    """Writes ``token_log.json`` as ``json.dumps(records, ensure_ascii=False, indent=2)`` while rewriting on
    the tree only the appended record (and the closing bracket) when the list written last grew by one."""

    def __init__(self) -> None:
        self.forget()

    def forget(self) -> None:
        """Drop what is known about the file."""
        self._records: object = None
        self._count = 0
        self._end = 0  # the byte offset of the closing "\n]"

    def drop(self) -> None:
        """Stop holding the list written last: its records are in the file, and :meth:`append` adds to it."""
        if self._records is not None:
            self._records = _DROPPED

    def append(self, tree: Any, path: str, record: dict[str, Any], clock: Any) -> int | None:
        """Append *record* to the file as :meth:`write` of the dropped list plus *record* would; returns
        the file's new size, or None when no dropped list is known (write the whole list instead)."""
        if self._records is not _DROPPED or not self._count:
            return None
        piece = f",\n  {_indented(record, 2)}\n]".encode()
        tree.write_from(path, self._end, piece, clock=clock)
        self._end += len(piece) - 2
        self._count += 1
        return self._end + 2

    def write(self, tree: Any, path: str, records: list[dict[str, Any]], clock: Any) -> int:
        """Write *records* to *path*; returns the file's new size."""
        if records is self._records and len(records) == self._count + 1 and self._count:
            piece = f",\n  {_indented(records[-1], 2)}\n]".encode()
            tree.write_from(path, self._end, piece, clock=clock)
            self._end += len(piece) - 2
        else:
            body = ",\n".join(f"  {_indented(r, 2)}" for r in records)
            text = (f"[\n{body}\n]" if records else "[]").encode()
            tree.write_bytes(path, text, clock=clock)
            self._end = len(text) - 2
        self._records, self._count = records, len(records)
        return self._end + 2


class _Lengths:
    """The records' encoded lengths in order, with a Fenwick tree of them, so where record *i* starts is
    found in O(log n) (issue 42: a replaced record in the middle of a long ledger summed every length
    before it)."""

    def __init__(self) -> None:
        self._len = array("q")
        self._tree = array("q", [0])  # 1-based Fenwick tree over _len

    def __len__(self) -> int:
        return len(self._len)

    def __getitem__(self, i: int) -> int:
        return self._len[i]

    def before(self, i: int) -> int:
        """The sum of the first *i* lengths."""
        t, total = self._tree, 0
        while i > 0:
            total += t[i]
            i &= i - 1
        return total

    def append(self, n: int) -> None:
        m = len(self._len) + 1
        self._len.append(n)
        self._tree.append(n + self.before(m - 1) - self.before(m - (m & -m)))

    def __setitem__(self, i: int, n: int) -> None:
        delta = n - self._len[i]
        self._len[i] = n
        t, m = self._tree, i + 1
        while m < len(t):
            t[m] += delta
            m += m & -m
