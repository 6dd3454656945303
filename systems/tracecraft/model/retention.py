"""What the benchmark host keeps of its transcript: the bytes later reads need, not the whole history.

A long bench cell appends one JSONL line a step to the host's claude-code session file, mirrors it as a
part (RT-RTE-session-mirror, MEM-OBJ-session-parts) and every ``compact_every`` flushes merges every
part into one (RT-RTE-session-compact, ``keep_tail`` 0), so the bucket's merged part, like the host's
file, holds the whole transcript: it grew by a line a step (about 6 KB at seed 0), twice over, and each
compaction copied all of it. Upstream keeps both forever (a file on disk, an S3 object). The host's
later behaviour reads neither head again: the mirror reads its file from its cursor to EOF
(``cli/session.py:273-371``), ``session show --tail N`` prints only the last N lines of the parts'
concatenation (``cli/session.py:452-474``) and ``session compact`` only concatenates its targets and
uploads the result (``:557-575``). So the bench host holds:

* :class:`HostTree`, its home directory, in which a file lets go of the bytes before an offset
  (:meth:`HostTree.release`, called with the mirror's new cursor): its size and mtime stay exact;
* :class:`TailStore`, its bucket, in which ``session compact``'s merged body (:meth:`TailStore.concat`)
  keeps only its last ``keep_lines`` whole lines (:class:`HeadlessBody`): its length stays exact, so
  every figure (``uploaded_bytes``, bytes written, durable bytes) and every printed tail is the same.

A read that reaches a byte let go raises :class:`DroppedBytes` instead of answering wrongly (no path of
the bench host does: tests/test_tracecraft_adapter.py runs it with a tail the store keeps and checks the
requests against a full store's).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from sim.errors import MemsimError
from sim.files import MemoryTree, MtimeSource, normalize
from sim.objects import MemoryStore, PreconditionFailed


class DroppedBytes(MemsimError):
    """A read reached bytes the bench host let go (a body's head, a file's mirrored bytes)."""


class HeadlessBody:
    """A stored body of *size* bytes of which only the last ``len(tail)`` are held.

    ``len()`` is the full size; a slice that stays within the tail returns its bytes, any other read
    raises :class:`DroppedBytes`.
    """

    __slots__ = ("size", "tail")

    def __init__(self, size: int, tail: bytes) -> None:
        if len(tail) > size:
            raise ValueError("the tail is longer than the body")
        self.size = size
        self.tail = tail

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, index: slice) -> bytes:
        if not isinstance(index, slice):
            raise DroppedBytes("a headless body is read by slices of its tail")
        start, stop, step = index.indices(self.size)
        head = self.size - len(self.tail)
        if step != 1 or (start < head and start < stop):
            held = len(self.tail)
            raise DroppedBytes(f"bytes {start}..{stop} of a {self.size}-byte body: only its last {held} held")
        return self.tail[max(start - head, 0) : max(stop - head, 0)]

    def __repr__(self) -> str:
        return f"HeadlessBody(size={self.size}, tail={len(self.tail)} bytes)"


Body = bytes | HeadlessBody


def held(chunks: Sequence[Body]) -> int:
    """How many bytes off the end of the chunks' concatenation can be read (all of it without a headless
    body)."""
    n = 0
    for c in reversed(chunks):
        if type(c) is HeadlessBody:
            return n + len(c.tail)
        n += len(c)
    return n


def join(chunks: Sequence[Body]) -> bytes:
    """``b"".join(chunks)``; raises :class:`DroppedBytes` when a chunk is headless."""
    if any(type(c) is HeadlessBody for c in chunks):
        raise DroppedBytes("a transcript part keeps only its tail")
    return b"".join(chunks)  # type: ignore[arg-type]


#: Objects a :class:`TailStore` holds in memory (the newest written); older ones live in its cold tier.
HOT_OBJECTS = 4096
#: Objects moved to the cold tier at once (one transaction).
SPILL_BATCH = 1024


class TailStore(MemoryStore):
    """The bench host's bucket: :meth:`concat` keeps only a merged part's last *keep_lines* whole lines,
    and objects written long ago live in a cold tier on disk.

    Every memory fact is a new live key and a new snapshot (MEM-OBJ-memory-live, -history) that the host
    reads back only while it is among its newest keys, yet the bucket keeps it (an S3 bucket keeps every
    object). The :data:`HOT_OBJECTS` newest written objects stay in memory as in
    :class:`~sim.objects.MemoryStore`; older ones move, whole, to a private temporary SQLite database
    (deleted when the store closes), keyed by their UTF-8 bytes, so a GET, a LIST (S3 order: byte
    order), a conditional PUT, a DELETE or the durable byte count reach them exactly as before: only
    where they are held changes. A LIST whose prefix no cold key can start with never reads the tier.
    """

    def __init__(self, keep_lines: int, hot_objects: int | None = None) -> None:
        super().__init__()
        self.keep_lines = max(1, keep_lines)
        self.hot_objects = max(1, HOT_OBJECTS if hot_objects is None else hot_objects)
        self._cold: sqlite3.Connection | None = None
        self._cold_range = ("", "")  # lowest and highest key ever moved to the cold tier

    # -- the cold tier ---------------------------------------------------------------------------------
    def _may_be_cold(self, key: str) -> bool:
        lo, hi = self._cold_range
        return self._cold is not None and lo <= key <= hi

    def _cold_get(self, key: str) -> bytes | None:
        if not self._may_be_cold(key):
            return None
        assert self._cold is not None
        row = self._cold.execute("SELECT body FROM cold WHERE key = ?", (key.encode("utf-8"),)).fetchone()
        return None if row is None else bytes(row[0])

    def _spill(self) -> None:
        """Move the oldest written objects (never a headless body) to the cold tier."""
        if self._cold is None:
            self._cold = sqlite3.connect("")  # a private temporary database, deleted on close
            self._cold.execute("PRAGMA journal_mode=OFF")
            self._cold.execute("PRAGMA synchronous=OFF")
            self._cold.execute("CREATE TABLE cold (key BLOB PRIMARY KEY, body BLOB NOT NULL) WITHOUT ROWID")
        objects = self._objects
        moved: list[tuple[str, bytes]] = []
        kept: list[tuple[str, bytes]] = []
        target = self.hot_objects - min(SPILL_BATCH, self.hot_objects // 2)
        while objects and len(objects) > target:
            key = next(iter(objects))
            body = objects.pop(key)
            if type(body) is HeadlessBody:
                kept.append((key, body))
            else:
                moved.append((key, body))
        for key, body in kept:
            objects[key] = body
        if not moved:
            return
        with self._cold:
            self._cold.executemany(
                "INSERT INTO cold (key, body) VALUES (?, ?)", [(k.encode("utf-8"), b) for k, b in moved]
            )
        gone = {k for k, _ in moved}
        self._sorted = [k for k in self._sorted if k not in gone]
        lo, hi = self._cold_range
        keys = sorted(gone)
        self._cold_range = (min(lo, keys[0]) if lo else keys[0], max(hi, keys[-1]))

    # -- the store's extension points --------------------------------------------------------------------
    def _put(self, key: str, body: bytes, if_none_match: bool) -> None:
        objects = self._objects
        if key not in objects and self._cold_get(key) is not None:
            if if_none_match:
                raise PreconditionFailed(key)
            assert self._cold is not None
            with self._cold:
                self._cold.execute("DELETE FROM cold WHERE key = ?", (key.encode("utf-8"),))
        elif key in objects:
            if if_none_match:
                raise PreconditionFailed(key)
            objects[key] = objects.pop(key)  # the newest written last (the spill takes the oldest)
        if type(body) is HeadlessBody:
            super()._put(key, b"", if_none_match)  # the key's bookkeeping, as for bytes
            objects[key] = body  # type: ignore[assignment]
        else:
            super()._put(key, body, if_none_match)
        if len(objects) > self.hot_objects:
            self._spill()

    def _get(self, key: str) -> bytes | None:
        body = self._objects.get(key)
        return body if body is not None else self._cold_get(key)

    def _delete(self, key: str) -> None:
        if key in self._objects:
            super()._delete(key)
        elif self._may_be_cold(key):
            assert self._cold is not None
            with self._cold:
                self._cold.execute("DELETE FROM cold WHERE key = ?", (key.encode("utf-8"),))

    def _cold_under(self, prefix: str) -> bool:
        """Whether a cold key may start with *prefix* (the keys that do sort together)."""
        lo, hi = self._cold_range
        return self._cold is not None and hi >= prefix and (lo < prefix or lo.startswith(prefix))

    def _cold_keys(self, prefix: str, start_after: str | None) -> list[str]:
        if not self._cold_under(prefix):
            return []
        assert self._cold is not None
        high = prefix.encode("utf-8") + b"\xff"  # no UTF-8 byte is 0xff: above every key with the prefix
        if start_after is not None and start_after >= prefix:
            sql, low = "SELECT key FROM cold WHERE key > ? AND key < ? ORDER BY key", start_after
        else:
            sql, low = "SELECT key FROM cold WHERE key >= ? AND key < ? ORDER BY key", prefix
        return [bytes(r[0]).decode("utf-8") for r in self._cold.execute(sql, (low.encode("utf-8"), high))]

    def _keys(self, prefix: str, start_after: str | None) -> list[str]:
        hot = super()._keys(prefix, start_after)
        cold = self._cold_keys(prefix, start_after)
        return sorted(hot + cold) if cold else hot

    def total_bytes(self, prefix: str = "") -> int:
        hot = sum(len(self._objects[k]) for k in super()._keys(prefix, None))
        if not self._cold_under(prefix):
            return hot
        assert self._cold is not None
        (cold,) = self._cold.execute(
            "SELECT COALESCE(SUM(LENGTH(body)), 0) FROM cold WHERE key >= ? AND key < ?",
            (prefix.encode("utf-8"), prefix.encode("utf-8") + b"\xff"),
        ).fetchone()
        return hot + int(cold)

    def close(self) -> None:
        if self._cold is not None:
            self._cold.close()
            self._cold = None
        super().close()

    def concat(self, chunks: Sequence[Body]) -> Body:
        """The concatenation of *chunks*: whole when it has at most ``keep_lines + 1`` line breaks, else a
        :class:`HeadlessBody` whose tail starts at its ``keep_lines + 1``-th ``\\n`` from the end (so the
        tail holds ``keep_lines`` whole lines)."""
        need = self.keep_lines + 1
        size = sum(len(c) for c in chunks)
        pieces: list[bytes] = []
        for c in reversed(chunks):
            data = c.tail if type(c) is HeadlessBody else c
            end = len(data)
            while need:
                end = data.rfind(b"\n", 0, end)  # type: ignore[union-attr]
                if end < 0:
                    break
                need -= 1
            if not need:
                pieces.append(data[end:])  # type: ignore[index]
                tail = b"".join(reversed(pieces))
                return HeadlessBody(size, tail) if len(tail) < size else tail
            if type(c) is HeadlessBody:
                raise DroppedBytes(f"a merged part keeps fewer than {self.keep_lines} lines")
            pieces.append(data)  # type: ignore[arg-type]
        return b"".join(reversed(pieces))


class HostTree(MemoryTree):
    """The bench host's home directory in memory: :meth:`release` lets a file go of its head.

    The file keeps its size, its mtime and every byte from the released offset on; appending, reading
    from an offset at or after it, and rewriting the file behave as in :class:`~sim.files.MemoryTree`.
    """

    def __init__(self, mtime: MtimeSource | None = None) -> None:
        super().__init__(mtime)
        self._base: dict[str, int] = {}  # path -> offset of its first held byte

    def release(self, path: str, upto: int) -> None:
        """Let *path* go of its bytes before offset *upto* (nothing when it holds none of them)."""
        p = normalize(path)
        base = self._base.get(p, 0)
        if upto > base and p in self._files:
            data = self._files[p]
            self._files[p] = bytearray(memoryview(data)[min(upto - base, len(data)) :])
            self._base[p] = min(upto, base + len(data))

    def _size(self, path: str) -> int:
        return self._base.get(path, 0) + len(self._files[path])

    def _read_from(self, path: str, offset: int) -> tuple[bytes, int]:
        base = self._base.get(path, 0)
        if offset < base:
            raise DroppedBytes(f"{path} holds bytes from {base} on, not from {offset}")
        data, size = super()._read_from(path, offset - base)
        return data, base + size

    def _read(self, path: str) -> bytes:
        if self._base.get(path):
            raise DroppedBytes(f"{path} holds bytes from {self._base[path]} on")
        return super()._read(path)

    def _write(self, path: str, data: bytes, append: bool) -> None:
        if not append:
            self._base.pop(path, None)
        super()._write(path, data, append)

    def _write_from(self, path: str, offset: int, data: bytes) -> None:
        base = self._base.get(path, 0)
        if offset < base:
            raise DroppedBytes(f"{path} holds bytes from {base} on, not from {offset}")
        super()._write_from(path, offset - base, data)

    def _delete(self, path: str) -> None:
        self._base.pop(path, None)
        super()._delete(path)

    def _rename(self, src: str, dst: str) -> None:
        base = self._base.pop(src, 0)
        self._base.pop(dst, None)
        super()._rename(src, dst)
        if base:
            self._base[dst] = base
