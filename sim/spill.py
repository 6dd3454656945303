"""A memory file tree that keeps the bytes of chosen files in unlinked temp files (issue 33).

:class:`SpillTree` is a :class:`~sim.files.MemoryTree` in every observable way (paths, bytes, mtimes,
``ops``, errors); only where some files' bytes live differs, so a long run whose design keeps every file
it ever wrote (a wiki vault: every raw source, page, ledger record and log line) holds no memory per
spilled file and a few bytes per tail file:

* a **spilled** file (a path the *spill* predicate accepts: files written whole and then mostly left
  alone) stays in memory while it is among the *hot* newest such writes, then its body moves to one shared
  temp file and its path, offset, length and mtime to a row of a private temporary SQLite database (no
  entry in the tree's file and mtime tables; issue 42); a read fetches it back with one lookup and one
  ``pread``, an append or a partial rewrite first brings it back into memory;
* a **tail** file (a path the *tail* predicate accepts: a file that only grows or has its tail rewritten,
  such as a log or a JSON document spliced at its end) lives in its own temp file: appends and tail
  rewrites write there, reads read there, and only its size stays in memory.

Temp files are unlinked as soon as they are made and closed with the tree (:meth:`SpillTree.close`, or
when it is collected), the database with them. The shared spill file only grows (a rewritten or deleted
body leaves its old bytes behind); it is the host's disk, not the model's.
"""

from __future__ import annotations

import bisect
import os
import sqlite3
import struct
import tempfile
import weakref
from array import array
from collections import deque
from collections.abc import Callable, Iterator
from itertools import accumulate

from sim.files import MemoryTree, MtimeSource, PathConflict, normalize

#: Above any file's length (1 TiB): a spilled file's offset and length packed in one int.
_SPAN = 1 << 40
#: A cold file's int: ``(offset * _SPAN + length) << 64`` plus its mtime's IEEE-754 bits (exact).
_MASK = (1 << 64) - 1
_DOUBLE, _BITS = struct.Struct("<d"), struct.Struct("<Q")


def _bits(mtime: float) -> int:
    return int(_BITS.unpack(_DOUBLE.pack(mtime))[0])


def _unbits(bits: int) -> float:
    return float(_DOUBLE.unpack(_BITS.pack(bits & _MASK))[0])


#: The :attr:`MemoryTree._files` entry of a file whose bytes live in a temp file (never mutated).
_ELSEWHERE = bytearray()


def _never(path: str) -> bool:
    return False


def _close_all(fds: set[int], cold: _ColdFiles) -> None:
    for fd in fds:
        os.close(fd)
    fds.clear()
    cold.close()


def _pread(fd: int, length: int, offset: int) -> bytes:
    out = bytearray()
    while len(out) < length:
        chunk = os.pread(fd, length - len(out), offset + len(out))
        if not chunk:
            raise OSError(f"spill file ended {length - len(out)} bytes early")
        out += chunk
    return bytes(out)


def _pwrite(fd: int, data: bytes, offset: int) -> None:
    view = memoryview(data)
    while view:
        n = os.pwrite(fd, view, offset + len(data) - len(view))
        view = view[n:]


class PathTable:
    """Paths interned as ids 0, 1, 2... in the order they were first added, held compactly (issue 42): each
    path's directory once in a small table, its basename's UTF-8 bytes in one shared buffer, and per path
    only machine integers (where its basename ends, its directory and an open-addressing slot): about 20
    bytes plus the basename, against a ``str`` key of a dict (about 130 bytes plus the path).
    An id is never reused or removed: its owner keeps whether the path is live. Lookups hash the ``str``
    (as a dict does); no order depends on the hash."""

    def __init__(self) -> None:
        self._dir_ids: dict[str, int] = {}
        self._dirs: list[str] = []
        self._blob = bytearray()
        self._ends = array("q")  # where each path's basename ends in the buffer
        self._dir = array("i")  # each path's directory id
        self._slots = array("i", [-1]) * 8  # open addressing, linear probing: a path id or -1

    def __len__(self) -> int:
        return len(self._ends)

    def find(self, path: str) -> int:
        """The id of *path*, or -1 when it was never added."""
        d, _, base = path.rpartition("/")
        dir_id = self._dir_ids.get(d)
        if dir_id is None:
            return -1
        h = hash(path)
        slots, mask = self._slots, len(self._slots) - 1
        i = h & mask
        encoded = None
        while True:
            j = slots[i]
            if j < 0:
                return -1
            if self._dir[j] == dir_id:
                encoded = encoded if encoded is not None else base.encode("utf-8", "surrogatepass")
                if self._blob[self._ends[j - 1] if j else 0 : self._ends[j]] == encoded:
                    return j
            i = (i + 1) & mask

    def add(self, path: str) -> int:
        """The id of *path*, added when new."""
        j = self.find(path)
        if j >= 0:
            return j
        d, _, base = path.rpartition("/")
        dir_id = self._dir_ids.setdefault(d, len(self._dirs))
        if dir_id == len(self._dirs):
            self._dirs.append(d)
        j = len(self._ends)
        self._blob += base.encode("utf-8", "surrogatepass")
        self._ends.append(len(self._blob))
        self._dir.append(dir_id)
        if 2 * (j + 1) > len(self._slots):  # the paths hashed again (no hash kept per path)
            self._slots = array("i", [-1]) * (2 * len(self._slots))
            for k in range(j):
                self._place(k, hash(self.path(k)))
        self._place(j, hash(path))
        return j

    def _place(self, j: int, h: int) -> None:
        slots, mask = self._slots, len(self._slots) - 1
        i = h & mask
        while slots[i] >= 0:
            i = (i + 1) & mask
        slots[i] = j

    def path(self, j: int) -> str:
        """The path of id *j*."""
        base = self._blob[self._ends[j - 1] if j else 0 : self._ends[j]].decode("utf-8", "surrogatepass")
        d = self._dirs[self._dir[j]]
        return f"{d}/{base}" if d else base


#: The page cache of the spilled-file table's database, in KiB (SQLite's default); the rest is on disk.
COLD_CACHE_KIB = 2000
_GET = "SELECT off, span, mtime FROM cold WHERE path = ? AND span >= 0"


class _ColdFiles:
    """The spilled files' table of :class:`SpillTree`: path -> the int packing its offset in the shared
    file, its length and its mtime, as a dict would map them, held in a private temporary SQLite database
    (issue 42: a dict of ``str`` keys held about 190 bytes a spilled file, a :class:`PathTable` with three
    integer columns about 120, most of what a million-step wiki cell still grew by; the database keeps
    its pages on disk past a bounded page cache). In memory stay only the live count and each directory's
    summed lengths (:meth:`total`). A popped path keeps its row, marked not cold, so iteration stays in the
    order paths were first spilled."""

    def __init__(self) -> None:
        self._db: sqlite3.Connection | None = None
        self._live = 0
        self._dir_bytes: dict[str, int] = {}  # directory -> the summed lengths of its cold files

    def _conn(self) -> sqlite3.Connection:
        if self._db is None:
            db = sqlite3.connect("")  # a private temporary database, deleted when closed
            db.execute("PRAGMA journal_mode=OFF")
            db.execute("PRAGMA synchronous=OFF")
            db.execute(f"PRAGMA cache_size=-{COLD_CACHE_KIB}")  # its pages in memory: at most this many KiB
            db.execute(
                "CREATE TABLE cold (path TEXT PRIMARY KEY, off INTEGER NOT NULL, span INTEGER NOT NULL, "
                "mtime INTEGER NOT NULL)"
            )
            self._db = db
        return self._db

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None

    def __len__(self) -> int:
        return self._live

    def get(self, path: str, default: int | None = None) -> int | None:
        if self._db is None:
            return default
        row = self._db.execute(_GET, (path,)).fetchone()
        if row is None:
            return default
        return (row[0] * _SPAN + row[1]) << 64 | (row[2] & _MASK)

    def __contains__(self, path: object) -> bool:
        return isinstance(path, str) and self.get(path) is not None

    def __getitem__(self, path: str) -> int:
        got = self.get(path)
        if got is None:
            raise KeyError(path)
        return got

    def __setitem__(self, path: str, packed: int) -> None:
        old = self.get(path)
        offset, span = divmod(packed >> 64, _SPAN)
        bits = packed & _MASK
        d = path.rpartition("/")[0]
        if old is None:
            self._live += 1
        else:
            self._dir_bytes[d] -= (old >> 64) % _SPAN
        self._dir_bytes[d] = self._dir_bytes.get(d, 0) + span
        self._conn().execute(
            "INSERT INTO cold VALUES (?, ?, ?, ?) ON CONFLICT(path) DO UPDATE SET off = excluded.off, "
            "span = excluded.span, mtime = excluded.mtime",
            (path, offset, span, bits - (1 << 64) if bits >> 63 else bits),
        )

    def pop(self, path: str, default: int | None = None, *, known: int | None = None) -> int | None:
        """Remove *path*'s entry and return it (*known*: the entry, already read, so it is not read again)."""
        got = known if known is not None else self.get(path)
        if got is None:
            return default
        self._conn().execute("UPDATE cold SET span = -1 WHERE path = ?", (path,))
        self._live -= 1
        self._dir_bytes[path.rpartition("/")[0]] -= (got >> 64) % _SPAN
        return got

    def __delitem__(self, path: str) -> None:
        if self.pop(path) is None:
            raise KeyError(path)

    def total(self, prefix: str) -> int:
        """The summed lengths of the cold files under *prefix* (a directory and ``/``, or ""), from the
        per-directory sums (no row read)."""
        return sum(n for d, n in self._dir_bytes.items() if not prefix or f"{d}/".startswith(prefix))

    def __iter__(self) -> Iterator[str]:
        if self._db is None:
            return iter(())
        rows = self._db.execute("SELECT path FROM cold WHERE span >= 0 ORDER BY rowid")
        return (path for (path,) in rows.fetchall())


#: A tail file's chunk (bytes) as written, and the slot it gets (room to grow in place by splices).
_CHUNK, _SLOT = 1 << 16, 1 << 17


class _Rope:
    """A tail file's bytes in its own temp file as a sequence of chunks, each in a slot with room to grow
    (issue 42): reading a range, truncating and appending cost the range, and replacing a few bytes in
    the middle (:meth:`splice`, a JSON record rewritten in place) costs the chunks it touches, not the
    bytes after it. A chunk that outgrows its slot moves to new slots at the end of the temp file."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self._slot = array("q")  # where each chunk's slot starts in the temp file
        self._cap = array("q")  # each slot's size
        self._len = array("q")  # each chunk's length
        self._ends: array[int] | None = array("q")  # each chunk's end in the file (None: to recompute)
        self._free = 0  # the temp file's end (where new slots go)
        self.size = 0

    def _chunk_ends(self) -> array[int]:
        if self._ends is None:
            self._ends = array("q", accumulate(self._len))
        return self._ends

    def _at(self, offset: int) -> tuple[int, int]:
        """The chunk holding byte *offset* (the number of chunks at the end) and where that chunk starts."""
        ends = self._chunk_ends()
        i = bisect.bisect_right(ends, offset)
        return i, (ends[i - 1] if i else 0)

    def read(self, offset: int, length: int) -> bytes:
        """At most *length* bytes from *offset*."""
        length = max(0, min(length, self.size - offset))
        out = bytearray()
        i, start = self._at(offset) if length else (0, 0)
        while len(out) < length:
            within = offset + len(out) - start
            take = min(self._len[i] - within, length - len(out))
            out += _pread(self.fd, take, self._slot[i] + within)
            start += self._len[i]
            i += 1
        return bytes(out)

    def _new_chunks(self, data: bytes) -> tuple[list[int], list[int], list[int]]:
        """Slots at the temp file's end holding *data* (a chunk of at most :data:`_CHUNK` bytes each)."""
        slots, caps, lens = [], [], []
        for k in range(0, len(data), _CHUNK):
            piece = data[k : k + _CHUNK]
            _pwrite(self.fd, piece, self._free)
            slots.append(self._free)
            caps.append(_SLOT)
            lens.append(len(piece))
            self._free += _SLOT
        return slots, caps, lens

    def _replace(self, i: int, k: int, data: bytes) -> None:
        """Chunks *i* to *k* (exclusive) become *data* (in place when it fits chunk *i*'s slot)."""
        if k == i + 1 and len(data) <= self._cap[i]:
            _pwrite(self.fd, data, self._slot[i])
            self._len[i] = len(data)
        else:
            slots, caps, lens = self._new_chunks(data)
            self._slot[i:k], self._cap[i:k], self._len[i:k] = (
                array("q", slots),
                array("q", caps),
                array("q", lens),
            )
        self._ends = None

    def write_at(self, offset: int, data: bytes) -> None:
        """Write *data* at *offset* (at most the size): the file then ends with it."""
        self.size = offset + len(data)
        i, start = self._at(offset)
        n = len(self._len)
        if i < n:  # the chunk holding the offset keeps its head; the chunks after it go
            head = offset - start
            del self._slot[i + 1 :], self._cap[i + 1 :], self._len[i + 1 :]
            room = self._cap[i] - head
            _pwrite(self.fd, data[:room], self._slot[i] + head)
            self._len[i] = head + len(data[:room])
            data = data[room:]
        elif n and self._len[-1] < self._cap[-1]:  # at the end: fill the last slot first
            room = self._cap[-1] - self._len[-1]
            _pwrite(self.fd, data[:room], self._slot[-1] + self._len[-1])
            self._len[-1] += len(data[:room])
            data = data[room:]
        if data:
            slots, caps, lens = self._new_chunks(data)
            self._slot.extend(slots)
            self._cap.extend(caps)
            self._len.extend(lens)
        self._ends = None

    def splice(self, offset: int, old: int, data: bytes) -> None:
        """Replace the *old* bytes at *offset* with *data* (the bytes after them follow it)."""
        old = max(0, min(old, self.size - offset))
        if offset + old >= self.size:
            self.write_at(offset, data)
            return
        i, start = self._at(offset)
        k, kstart = self._at(offset + old - 1) if old else (i, start)
        head = self.read(start, offset - start)
        tail = self.read(offset + old, kstart + self._len[k] - offset - old)
        size = self.size + len(data) - old
        self._replace(i, k + 1, head + data + tail)
        self.size = size


class SpillTree(MemoryTree):
    """A :class:`~sim.files.MemoryTree` that keeps spilled and tail files' bytes on disk (module docstring).

    *spill* and *tail* pick the paths; *hot* is how many of the newest spilled writes stay in memory.
    """

    def __init__(
        self,
        mtime: MtimeSource | None = None,
        *,
        spill: Callable[[str], bool] = _never,
        tail: Callable[[str], bool] = _never,
        hot: int = 0,
    ) -> None:
        super().__init__(mtime)
        self._spill, self._tail, self._hot = spill, tail, max(0, hot)
        #: spilled path -> its offset in the shared file, length and mtime packed in one int (not a tuple)
        self._cold = _ColdFiles()
        self._recent: deque[str] = deque()  # spilled writes still in memory, oldest first
        self._tails: dict[str, _Rope] = {}  # tail path -> its bytes in its own temp file
        self._fds: set[int] = set()
        self._closer = weakref.finalize(self, _close_all, self._fds, self._cold)
        self._shared = -1
        self._end = 0

    def close(self) -> None:
        """Close (and so free) the temp files (done anyway when the tree is collected); the files whose
        bytes lived there cannot be read afterwards."""
        self._closer()

    def _new_fd(self) -> int:
        fd, name = tempfile.mkstemp(prefix="memsim-spill-")
        os.unlink(name)  # anonymous from now on: the bytes go when the descriptor closes
        self._fds.add(fd)
        return fd

    # -- spilled files -------------------------------------------------------------------------------
    def _cold_get(self, path: str) -> int | None:
        """*path*'s packed entry when it is spilled (a path in the tree's own tables never is: no lookup)."""
        return None if path in self._files else self._cold.get(path)

    def _load(self, cold: int) -> bytes:
        """The body of the spilled file whose packed entry is *cold*."""
        offset, length = divmod(cold >> 64, _SPAN)
        return _pread(self._shared, length, offset)

    def _warm(self, path: str, *, body: bool = True) -> None:
        """Bring a spilled file back into the tree's tables (before it is appended to, partly rewritten,
        replaced, renamed or deleted), with its body unless *body* is False (it is about to go)."""
        cold = self._cold_get(path)
        if cold is not None:
            data = self._load(cold) if body else b""
            self._cold.pop(path, known=cold)
            self._files[path] = bytearray(data)
            self._mtimes[path] = _unbits(cold)

    def _cool(self) -> None:
        """Move the bodies of spilled writes beyond the *hot* newest to the shared file."""
        while len(self._recent) > self._hot:
            path = self._recent.popleft()
            body = self._files.get(path)
            if body is None or body is _ELSEWHERE:
                continue  # deleted, renamed away or already elsewhere
            if self._shared < 0:
                self._shared = self._new_fd()
            _pwrite(self._shared, bytes(body), self._end)
            mtime = self._mtimes.pop(path, 0.0)  # none yet when stamped after this (hot=0)
            self._cold[path] = (self._end * _SPAN + len(body)) << 64 | _bits(mtime)
            self._end += len(body)
            del self._files[path]

    # -- tail files ----------------------------------------------------------------------------------
    def _to_tail(self, path: str) -> _Rope:
        """Tail file *path*'s bytes, moved to its temp file first if they are elsewhere."""
        got = self._tails.get(path)
        if got is not None:
            return got
        self._warm(path)
        existing = self._read(path) if path in self._files else b""
        if path not in self._files:
            super()._write(path, b"", append=False)  # the path and its directories
        rope = _Rope(self._new_fd())
        rope.write_at(0, existing)
        self._tails[path] = rope
        self._files[path] = _ELSEWHERE
        return rope

    def _tail_write(self, path: str, offset: int, data: bytes) -> None:
        """Write *data* at *offset* of tail file *path*; the file then ends with it."""
        self._to_tail(path).write_at(offset, data)

    # -- MemoryTree extension points -----------------------------------------------------------------
    def _size(self, path: str) -> int:
        if path in self._tails:
            return self._tails[path].size
        cold = self._cold_get(path)
        return (cold >> 64) % _SPAN if cold is not None else super()._size(path)

    def _read(self, path: str) -> bytes:
        if path in self._tails:
            rope = self._tails[path]
            return rope.read(0, rope.size)
        cold = self._cold_get(path)
        return self._load(cold) if cold is not None else super()._read(path)

    def _read_range(self, path: str, offset: int, length: int) -> bytes:
        if path in self._tails:  # a long tail file (a history that grows with the square of a run): the range
            return self._tails[path].read(offset, length)
        return super()._read_range(path, offset, length)

    def _read_from(self, path: str, offset: int) -> tuple[bytes, int]:
        if path in self._tails:
            rope = self._tails[path]
            return rope.read(offset, rope.size - offset), rope.size
        cold = self._cold_get(path)
        if cold is not None:
            data = self._load(cold)
            return data[offset:], len(data)
        return super()._read_from(path, offset)

    def _write(self, path: str, data: bytes, append: bool) -> None:
        if path in self._tails or self._tail(path):
            self._tail_write(path, self._size(path) if append and self._exists(path) else 0, data)
            return
        self._warm(path, body=append)
        super()._write(path, data, append)
        if not append and self._spill(path):
            self._recent.append(path)
            self._cool()

    def _write_from(self, path: str, offset: int, data: bytes) -> None:
        if path in self._tails or self._tail(path):
            self._tail_write(path, min(offset, self._size(path)), data)  # as MemoryTree: no hole
            return
        self._warm(path)
        super()._write_from(path, offset, data)

    def _splice(self, path: str, offset: int, old: int, data: bytes) -> None:
        if path in self._tails or self._tail(path):
            self._to_tail(path).splice(min(offset, self._size(path)), old, data)
            return
        self._warm(path)
        super()._splice(path, offset, old, data)

    def _delete(self, path: str) -> None:
        self._warm(path, body=False)
        self._forget(path)
        super()._delete(path)

    def _forget(self, path: str) -> None:
        """*path*'s bytes are no longer kept elsewhere (it is deleted or replaced)."""
        if path not in self._files:
            self._cold.pop(path, None)
        got = self._tails.pop(path, None)
        if got is not None:
            os.close(got.fd)
            self._fds.discard(got.fd)

    def _rename(self, src: str, dst: str) -> None:
        if src != dst:
            self._warm(dst, body=False)
            self._forget(dst)
        cold = None if src in self._files else self._cold.pop(src, None)
        got = self._tails.pop(src, None)
        if cold is not None:  # the tables' entries move; the body stays where it is
            self._files[src], self._mtimes[src] = _ELSEWHERE, _unbits(cold)
        super()._rename(src, dst)
        if cold is not None:
            del self._files[dst], self._mtimes[dst]
            self._cold[dst] = cold
        if got is not None:
            self._tails[dst] = got

    def _exists(self, path: str) -> bool:
        return path in self._files or path in self._cold

    def _list(self) -> list[str]:
        return [*self._files, *self._cold]

    def _mtime(self, path: str) -> float:
        cold = self._cold_get(path)
        return _unbits(cold) if cold is not None else super()._mtime(path)

    def _set_mtime(self, path: str, mtime: float) -> None:
        cold = self._cold_get(path)
        super()._set_mtime(path, mtime)  # MemoryTree's rounding
        if cold is not None:
            self._cold[path] = cold >> 64 << 64 | _bits(self._mtimes.pop(path))

    def _check_file_path(self, p: str) -> None:
        for d in self._ancestors(p):
            if d not in self._files and d in self._cold:
                raise PathConflict(f"{d!r} is a file, so {p!r} cannot be created")
        super()._check_file_path(p)

    def total_bytes(self, directory: str = "") -> int:
        """The bytes stored under *directory* (files elsewhere by their recorded size, not read back; the
        spilled files' paths not listed: a long run's would be millions of strings at once)."""
        d = "" if not directory or directory == "." else normalize(directory).rstrip("/") + "/"
        return sum(self._size(p) for p in self._files if p.startswith(d)) + self._cold.total(d)
