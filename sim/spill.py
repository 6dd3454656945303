"""A memory file tree that keeps the bodies of chosen write-once files in an unlinked temp file (issue 33).

:class:`SpillTree` is a :class:`~sim.files.MemoryTree` in every observable way (paths, bytes, mtimes,
``ops``, errors), except where the bytes of some files live: a file written whole at a path the *spill*
predicate accepts has its body appended to one anonymous temporary file (unlinked on creation, closed with
the tree) and keeps only its offset and length in memory; a read fetches it back with one ``pread``. An
append or a partial rewrite of such a file first brings its body back into memory. A long run whose design
keeps every raw document forever (a Nemsy vault's ``origin-sources/``, read once at ingest and never again
by the benchmark) then holds a few dozen bytes per document instead of the document. The temp file only
grows (a rewritten or deleted body leaves its old bytes behind); it is the host's disk, not the model's.
"""

from __future__ import annotations

import os
import tempfile
import weakref
from collections.abc import Callable

from sim.files import MemoryTree, MtimeSource

#: A spilled file's entry in :attr:`MemoryTree._files` (its bytes are elsewhere; never mutated).
_SPILLED = bytearray()


class SpillTree(MemoryTree):
    """A :class:`~sim.files.MemoryTree` whose files at paths *spill* accepts keep their bodies on disk."""

    def __init__(self, mtime: MtimeSource | None = None, *, spill: Callable[[str], bool]) -> None:
        super().__init__(mtime)
        self._spill = spill
        self._cold: dict[str, tuple[int, int]] = {}  # path -> (offset, length) in the temp file
        self._closer: weakref.finalize | None = None  # closes the temp file's descriptor
        self._fdno = -1
        self._end = 0

    def close(self) -> None:
        """Close (and so free) the temp file (done anyway when the tree is collected); a spilled file
        cannot be read afterwards."""
        if self._closer is not None:
            self._closer()

    def _fd(self) -> int:
        if self._closer is None or not self._closer.alive:
            fd, name = tempfile.mkstemp(prefix="memsim-spill-")
            os.unlink(name)  # anonymous from now on: the bytes go when the descriptor closes
            self._fdno, self._closer = fd, weakref.finalize(self, os.close, fd)
        return self._fdno

    def _load(self, path: str) -> bytes:
        offset, length = self._cold[path]
        fd, out, got = self._fd(), bytearray(), 0
        while got < length:
            chunk = os.pread(fd, length - got, offset + got)
            if not chunk:
                raise OSError(f"spill file truncated reading {path!r}")
            out += chunk
            got += len(chunk)
        return bytes(out)

    def _warm(self, path: str) -> None:
        """Bring a spilled body back into memory (before it is appended to or partly rewritten)."""
        if path in self._cold:
            data = self._load(path)
            del self._cold[path]
            self._files[path] = bytearray(data)

    # -- MemoryTree extension points -----------------------------------------------------------------
    def _size(self, path: str) -> int:
        cold = self._cold.get(path)
        return cold[1] if cold is not None else super()._size(path)

    def _read(self, path: str) -> bytes:
        return self._load(path) if path in self._cold else super()._read(path)

    def _read_from(self, path: str, offset: int) -> tuple[bytes, int]:
        if path in self._cold:
            data = self._load(path)
            return data[offset:], len(data)
        return super()._read_from(path, offset)

    def _write(self, path: str, data: bytes, append: bool) -> None:
        if append:
            self._warm(path)
            super()._write(path, data, append)
            return
        if not self._spill(path):
            self._cold.pop(path, None)
            super()._write(path, data, append)
            return
        fd, offset = self._fd(), self._end
        view = memoryview(data)
        while view:
            view = view[os.pwrite(fd, view, offset + len(data) - len(view)) :]
        self._end += len(data)
        super()._write(path, b"", append=False)  # the path, its directories and the empty entry
        self._files[path] = _SPILLED
        self._cold[path] = (offset, len(data))

    def _write_from(self, path: str, offset: int, data: bytes) -> None:
        self._warm(path)
        super()._write_from(path, offset, data)

    def _delete(self, path: str) -> None:
        self._cold.pop(path, None)
        super()._delete(path)

    def _rename(self, src: str, dst: str) -> None:
        self._cold.pop(dst, None)
        cold = self._cold.pop(src, None)
        super()._rename(src, dst)
        if cold is not None:
            self._cold[dst] = cold

    def total_bytes(self, directory: str = "") -> int:
        """The bytes stored under *directory* (spilled bodies by their recorded length, not read back)."""
        return sum(self._size(p) for p in self.list(directory))
