"""A file tree with one interface and two backends: in memory, or on disk under the run root.

Paths are POSIX-style and relative to the tree root (``agent/memory/agent_0.md``). Every mutating call
takes the writer's clock for the mtime, so modeled mtimes come from the agent clock, never the host.
Text writes store the UTF-8 bytes as given (Python text mode on POSIX does not translate ``\\n``);
:meth:`FileTree.read_text` applies universal-newline translation unless ``translate_newlines=False``
(``newline=""``). :meth:`FileTree.replace_atomic` is the temp-file + rename idiom: the temp file exists
under its own name until the rename, so a crash between the two steps leaves it behind.
:meth:`FileTree.fsync` records a durability point in :attr:`FileTree.fsyncs` (nothing is lost on a
modeled crash: the tree models a filesystem whose writes are durable once the call returns). A modeled
system that writes outside the root (upstream joins an unchecked ``../`` name) goes through
:meth:`FileTree.write_outside`: the write is recorded under its resolved target in
:attr:`FileTree.outside` and never made, so the host stays untouched.

Extension points for a backend: ``_read``, ``_write``, ``_delete``, ``_exists``, ``_list``,
``_rename``, ``_mtime``, ``_set_mtime``. :class:`DiskTree` refuses every path that resolves outside its
root (``..``, absolute paths, symlinks pointing out) and every file with more than one hard link. Names
follow POSIX (``a:b`` is a name); one over 255 bytes raises :class:`NameTooLong`, an ``OSError`` with
``errno.ENAMETOOLONG``, in both backends, as the OS would.
"""

from __future__ import annotations

import abc
import errno
import os
import posixpath
import re
import stat
from collections.abc import Callable
from pathlib import Path

from sim.errors import MemsimError

MtimeSource = Callable[[], float]


class PathEscape(MemsimError):
    """A path would resolve outside the tree's root."""


class FileMissing(MemsimError, FileNotFoundError):
    """The file does not exist."""


class PathConflict(MemsimError):
    """A path is needed as a file and as a directory at once, or a directory rename os.rename refuses."""


class HardLinked(PathEscape):
    """A file under the root has other hard links: reading or writing it could reach a file elsewhere."""


class NameTooLong(MemsimError, OSError):
    """A path component over :data:`NAME_MAX` bytes, or a whole path over :data:`PATH_MAX` (ENAMETOOLONG)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.errno = errno.ENAMETOOLONG


class InvalidName(MemsimError, ValueError):
    """A path the filesystem cannot encode (a lone surrogate)."""


#: The longest file name (one path component) in bytes, as on Linux, macOS and Windows filesystems.
NAME_MAX = 255
#: The longest whole path a system call takes on Linux, in bytes (with its NUL).
PATH_MAX = 4096

_DRIVE = re.compile(r"[A-Za-z]:[/\\]")
#: Every DiskTree open: no following of a final symlink, no blocking on a FIFO, not inherited.
_OPEN_FLAGS = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


#: Paths already normalized, to their canonical form (a pure function of the string; cleared when full).
_NORMALIZED: dict[str, str] = {}
_NORMALIZED_CAP = 4096


def normalize(path: str) -> str:
    """The canonical relative form of *path*; raises :class:`PathEscape` for absolute or escaping paths.

    Names are POSIX names: ``a:b`` is an ordinary file name, as on Linux and macOS (only a drive
    prefix such as ``C:/`` or ``C:\\``, an absolute path on Windows, is refused). A backslash is read
    as a separator. A name longer than :data:`NAME_MAX` bytes raises :class:`NameTooLong`, as the OS does.
    """
    if type(path) is not str:
        return _normalize(path)
    norm = _NORMALIZED.get(path)
    if norm is None:
        norm = _normalize(path)  # a refused path raises and is not remembered
        if len(_NORMALIZED) >= _NORMALIZED_CAP:
            _NORMALIZED.clear()
        _NORMALIZED[path] = norm
    return norm


def _normalize(path: str) -> str:
    if not isinstance(path, str) or path == "":
        raise PathEscape(f"invalid path {path!r}")
    if "\x00" in path:
        raise PathEscape(f"NUL byte in path {path!r}")
    if path.startswith(("/", "\\")) or _DRIVE.match(path):
        raise PathEscape(f"absolute path {path!r}")
    norm = posixpath.normpath(path.replace("\\", "/"))
    if norm == ".." or norm.startswith("../") or norm == ".":
        raise PathEscape(f"path {path!r} escapes the root")
    if len(norm) > NAME_MAX or not norm.isascii():
        _check_names(norm)
    return norm


def _check_names(norm: str) -> None:
    try:
        size = len(os.fsencode(norm))
    except UnicodeEncodeError as exc:
        raise InvalidName(f"path {norm[:60]!r} cannot be encoded as a file name: {exc.reason}") from exc
    if size <= NAME_MAX:
        return
    for part in norm.split("/"):
        n = len(os.fsencode(part))
        if n > NAME_MAX:
            raise NameTooLong(f"file name too long ({n} bytes; the limit is {NAME_MAX}): {part[:40]!r}...")


def escape_target(path: str) -> str | None:
    """Where *path* lands when it leaves the tree root, or None when it stays inside (or is no path).

    A relative path is resolved lexically, as the OS resolves ``root/path`` (``posixpath.normpath``):
    ``a/../../x`` gives ``../x``, relative to the root. An absolute path is its own target (``os.path.join``
    of a root and an absolute path is the absolute path). :meth:`FileTree.write_outside` records writes to
    such targets instead of making them.
    """
    if not isinstance(path, str) or not path or "\x00" in path:
        return None
    norm = posixpath.normpath(path.replace("\\", "/"))
    if path.startswith(("/", "\\")) or _DRIVE.match(path):
        return norm if not norm.startswith("//") else norm[1:]
    return norm if norm == ".." or norm.startswith("../") else None


def universal_newlines(text: str) -> str:
    """Universal-newline translation as Python's text mode reads: ``\\r\\n`` and ``\\r`` become ``\\n``."""
    if "\r" not in text:  # one scan, not two, for the usual text (the same string back)
        return text
    return text.replace("\r\n", "\n").replace("\r", "\n")


class FileTree(abc.ABC):
    """The interface of a file tree. Subclasses implement the underscore extension points."""

    def __init__(self, mtime: MtimeSource | None = None) -> None:
        self._default_mtime = mtime or (lambda: 0.0)
        self.fsyncs: list[str] = []
        self.ops = 0
        #: Writes that resolved outside the root, by resolved target (:func:`escape_target`): recorded, never
        #: made, so a modeled escape is visible without touching the host (:meth:`write_outside`).
        self.outside: dict[str, bytes] = {}

    # -- extension points ----------------------------------------------------------------------------
    @abc.abstractmethod
    def _read(self, path: str) -> bytes:
        """Extension point."""

    @abc.abstractmethod
    def _write(self, path: str, data: bytes, append: bool) -> None:
        """Extension point."""

    @abc.abstractmethod
    def _delete(self, path: str) -> None:
        """Extension point."""

    @abc.abstractmethod
    def _exists(self, path: str) -> bool:
        """Extension point."""

    @abc.abstractmethod
    def _list(self) -> list[str]:
        """Extension point."""

    @abc.abstractmethod
    def _rename(self, src: str, dst: str) -> None:
        """Extension point."""

    @abc.abstractmethod
    def _mtime(self, path: str) -> float:
        """Extension point."""

    @abc.abstractmethod
    def _set_mtime(self, path: str, mtime: float) -> None:
        """Extension point."""

    def _is_dir(self, path: str) -> bool:
        """Whether some file lives under *path* (override with something faster than a listing)."""
        return any(f.startswith(path + "/") for f in self._list())

    # -- public interface ----------------------------------------------------------------------------
    def _stamp(self, path: str, clock: MtimeSource | None) -> None:
        self._set_mtime(path, (clock or self._default_mtime)())

    def _check_file_path(self, p: str) -> None:
        """Raise PathConflict if an ancestor of *p* is a file or *p* is a directory."""
        parts = p.split("/")
        for i in range(1, len(parts)):
            if self._exists("/".join(parts[:i])):
                raise PathConflict(f"{'/'.join(parts[:i])!r} is a file, so {p!r} cannot be created")
        if self._is_dir(p):
            raise PathConflict(f"{p!r} is a directory")

    def write_bytes(self, path: str, data: bytes, *, clock: MtimeSource | None = None) -> None:
        """Create or truncate *path* and write *data*."""
        p = normalize(path)
        self._check_file_path(p)
        self.ops += 1
        self._write(p, data, append=False)
        self._stamp(p, clock)

    def write_text(self, path: str, text: str, *, clock: MtimeSource | None = None) -> int:
        """Create or truncate *path* and write *text* as UTF-8; returns the bytes written."""
        data = text.encode("utf-8")
        self.write_bytes(path, data, clock=clock)
        return len(data)

    def write_outside(self, path: str, data: bytes) -> str:
        """Record a write of *data* to *path*, which resolves outside the root (the modeled system writes
        there), without making it: :attr:`outside` maps the resolved target to the bytes, in both backends,
        and nothing outside the root is touched. Returns the target; raises :class:`PathEscape` for a path
        that stays inside the root (write it with :meth:`write_bytes`)."""
        target = escape_target(path)
        if target is None:
            raise PathEscape(f"path {path!r} does not leave the root")
        self.ops += 1
        self.outside[target] = bytes(data)
        return target

    def append_bytes(self, path: str, data: bytes, *, clock: MtimeSource | None = None) -> None:
        """Append *data* to *path*, creating it if missing."""
        p = normalize(path)
        self._check_file_path(p)
        self.ops += 1
        self._write(p, data, append=True)
        self._stamp(p, clock)

    def append_text(self, path: str, text: str, *, clock: MtimeSource | None = None) -> None:
        """Append *text* as UTF-8."""
        self.append_bytes(path, text.encode("utf-8"), clock=clock)

    def write_from(self, path: str, offset: int, data: bytes, *, clock: MtimeSource | None = None) -> None:
        """Replace the bytes of *path* from *offset* on with *data* (the file then ends with *data*): the
        same content as rewriting the whole file, at the cost of the changed tail. Creates *path* when it
        is missing (only *offset* 0 makes sense then)."""
        p = normalize(path)
        self._check_file_path(p)
        self.ops += 1
        if self._exists(p):
            self._write_from(p, max(0, offset), data)
        else:
            self._write(p, data, append=False)
        self._stamp(p, clock)

    def _write_from(self, path: str, offset: int, data: bytes) -> None:
        """Extension point with a default that reads and rewrites the whole file."""
        self._write(path, self._read(path)[:offset] + data, append=False)

    def splice(
        self, path: str, offset: int, old: int, data: bytes, *, clock: MtimeSource | None = None
    ) -> None:
        """Replace the *old* bytes of *path* at *offset* with *data*: what :meth:`write_from` of *offset*
        with *data* and the bytes after the replaced ones writes, as one write (issue 42: a tree that
        keeps a file in pieces need not move the bytes after them). *path* must exist."""
        p = normalize(path)
        if not self._exists(p):
            raise FileMissing(path)
        self.ops += 1
        self._splice(p, max(0, offset), max(0, old), data)
        self._stamp(p, clock)

    def _splice(self, path: str, offset: int, old: int, data: bytes) -> None:
        """Extension point with a default that rewrites from *offset* on."""
        self._write_from(path, offset, data + self._read_from(path, offset + old)[0])

    def read_bytes(self, path: str) -> bytes:
        """The whole content of *path*; raises :class:`FileMissing`."""
        p = normalize(path)
        self.ops += 1
        if not self._exists(p):
            raise FileMissing(path)
        return self._read(p)

    def read_from(self, path: str, offset: int) -> tuple[bytes, int]:
        """``(bytes from offset to EOF, file size)``: one read after a seek; raises :class:`FileMissing`.

        Past EOF the bytes are empty (the size tells the caller the file shrank).
        """
        p = normalize(path)
        self.ops += 1
        if not self._exists(p):
            raise FileMissing(path)
        return self._read_from(p, max(0, offset))

    def peek(self, path: str, offset: int, length: int) -> bytes:
        """At most *length* bytes of *path* from *offset*, counted as no operation: a model re-reading bytes
        it wrote itself in place of a copy it no longer holds (issue 33), not a read the system makes."""
        p = normalize(path)
        if not self._exists(p):
            raise FileMissing(path)
        return self._read_range(p, max(0, offset), max(0, length))

    def _read_range(self, path: str, offset: int, length: int) -> bytes:
        """Extension point: at most *length* bytes from *offset* (the default slices :meth:`_read_from`; a
        tree that keeps a file on disk reads only the range, so a peek never loads the file whole)."""
        return self._read_from(path, offset)[0][:length]

    def _read_from(self, path: str, offset: int) -> tuple[bytes, int]:
        """Extension point with a default that reads the whole file (override to skip the head)."""
        data = self._read(path)
        return data[offset:], len(data)

    def read_text(self, path: str, *, translate_newlines: bool = True) -> str:
        """The content decoded as UTF-8, with universal newlines unless *translate_newlines* is False."""
        text = self.read_bytes(path).decode("utf-8")
        return universal_newlines(text) if translate_newlines else text

    def read_text_or_none(self, path: str) -> str | None:
        """:meth:`read_text` of *path*, or None when it is not a file: ``exists()`` then ``read_text()`` with
        the path normalized once (one operation counted when it is read, none when it is missing)."""
        p = normalize(path)
        if not self._exists(p):
            return None
        self.ops += 1
        return universal_newlines(self._read(p).decode("utf-8"))

    def exists(self, path: str) -> bool:
        """Whether *path* is a file."""
        return self._exists(normalize(path))

    def delete(self, path: str) -> None:
        """Remove the file *path*; raises :class:`FileMissing`."""
        p = normalize(path)
        self.ops += 1
        if not self._exists(p):
            raise FileMissing(path)
        self._delete(p)

    def rename(self, src: str, dst: str) -> None:
        """Move *src* to *dst*, replacing *dst* (``os.replace``); the mtime moves with the file."""
        s, d = normalize(src), normalize(dst)
        self.ops += 1
        if not self._exists(s):
            raise FileMissing(src)
        if s == d:  # os.replace of a file onto itself changes nothing
            return
        if not self._exists(d):  # onto a directory, or under a file: refused, as os.replace refuses it
            self._check_file_path(d)
        self._rename(s, d)

    def rename_dir(self, src: str, dst: str) -> None:
        """Move every file under directory *src* to the same place under *dst* (``os.rename`` of a dir)."""
        s, d = normalize(src), normalize(dst)
        if d == s or d.startswith(s + "/"):
            raise PathConflict(f"cannot move directory {src!r} into itself ({dst!r})")
        if self.list(d):
            raise PathConflict(f"directory {dst!r} is not empty")
        self.ops += 1
        for path in self.list(s):
            self._rename(path, d + path[len(s) :])

    def replace_atomic(
        self,
        path: str,
        data: bytes,
        *,
        tmp_suffix: str = ".tmp",
        clock: MtimeSource | None = None,
        between: Callable[[], None] | None = None,
    ) -> None:
        """Write *data* to ``path + tmp_suffix``, then rename it over *path*.

        *between* runs after the temp file is written and before the rename (a crash point).
        """
        tmp = path + tmp_suffix
        self.write_bytes(tmp, data, clock=clock)
        if between is not None:
            between()
        self.rename(tmp, path)

    def fsync(self, path: str) -> None:
        """Record a durability point for *path* (a file or directory)."""
        self.fsyncs.append(normalize(path))

    def mtime(self, path: str) -> float:
        """The modeled mtime of *path* (seconds since the epoch, from the writer's clock)."""
        p = normalize(path)
        if not self._exists(p):
            raise FileMissing(path)
        return self._mtime(p)

    def size(self, path: str) -> int:
        """The size of *path* in bytes (a stat: counted as one operation, the content is not copied)."""
        p = normalize(path)
        self.ops += 1
        if not self._exists(p):
            raise FileMissing(path)
        return self._size(p)

    def _size(self, path: str) -> int:
        """The size of existing *path* (override with something cheaper than reading it)."""
        return len(self._read(path))

    def list(self, directory: str = "") -> list[str]:
        """Every file under *directory* (recursively), sorted by path."""
        files = self._list()
        if not directory or directory == ".":
            return sorted(files)
        d = normalize(directory).rstrip("/") + "/"
        return sorted(f for f in files if f.startswith(d))

    def is_dir(self, directory: str) -> bool:
        """Whether any file lives under *directory*."""
        return bool(self.list(directory))

    def rmtree(self, directory: str) -> int:
        """Delete every file under *directory*; returns how many."""
        paths = self.list(directory)
        for p in paths:
            self.delete(p)
        return len(paths)

    def total_bytes(self, directory: str = "") -> int:
        """The bytes stored under *directory*."""
        return sum(len(self._read(p)) for p in self.list(directory))


class MemoryTree(FileTree):
    """A file tree held in a dict: path to (bytes, mtime). The fast path for property tests."""

    def __init__(self, mtime: MtimeSource | None = None) -> None:
        super().__init__(mtime)
        self._files: dict[str, bytearray] = {}
        self._mtimes: dict[str, float] = {}
        self._dirs: dict[str, int] = {}  # directory -> number of files under it
        self._chains: dict[str, tuple[str, ...]] = {}  # parent directory -> its ancestors and itself

    def _ancestors(self, path: str) -> tuple[str, ...]:
        """The directories above *path*, outermost first (``("a", "a/b")`` for ``a/b/c``), kept per parent
        directory (cleared when full)."""
        parent = path.rpartition("/")[0]
        chain = self._chains.get(parent)
        if chain is None:
            parts = path.split("/")
            chain = tuple("/".join(parts[:i]) for i in range(1, len(parts)))
            if len(self._chains) >= _NORMALIZED_CAP:
                self._chains.clear()
            self._chains[parent] = chain
        return chain

    def _check_file_path(self, p: str) -> None:
        files = self._files
        for d in self._ancestors(p):
            if d in files:
                raise PathConflict(f"{d!r} is a file, so {p!r} cannot be created")
        if p in self._dirs:
            raise PathConflict(f"{p!r} is a directory")

    def _add_dirs(self, path: str, delta: int) -> None:
        dirs = self._dirs
        for d in self._ancestors(path):
            n = dirs.get(d, 0) + delta
            if n:
                dirs[d] = n
            else:
                del dirs[d]

    def _is_dir(self, path: str) -> bool:
        return path in self._dirs

    def _size(self, path: str) -> int:
        return len(self._files[path])

    def _read_from(self, path: str, offset: int) -> tuple[bytes, int]:
        data = self._files[path]
        return bytes(memoryview(data)[offset:]), len(data)

    def _read(self, path: str) -> bytes:
        return bytes(self._files[path])

    def _write(self, path: str, data: bytes, append: bool) -> None:
        if path not in self._files:
            self._add_dirs(path, 1)
            self._files[path] = bytearray(data)
        elif append:
            self._files[path] += data
        else:
            self._files[path] = bytearray(data)

    def _write_from(self, path: str, offset: int, data: bytes) -> None:
        buf = self._files[path]
        del buf[offset:]
        buf += data

    def _splice(self, path: str, offset: int, old: int, data: bytes) -> None:
        buf = self._files[path]
        offset = min(offset, len(buf))
        buf[offset : offset + old] = data

    def _delete(self, path: str) -> None:
        del self._files[path]
        del self._mtimes[path]
        self._add_dirs(path, -1)

    def _exists(self, path: str) -> bool:
        return path in self._files

    def _list(self) -> list[str]:
        return list(self._files)

    def _rename(self, src: str, dst: str) -> None:
        if dst not in self._files:
            self._add_dirs(dst, 1)
        self._files[dst] = self._files.pop(src)
        self._mtimes[dst] = self._mtimes.pop(src)
        self._add_dirs(src, -1)

    def _mtime(self, path: str) -> float:
        return self._mtimes[path]

    def _set_mtime(self, path: str, mtime: float) -> None:
        self._mtimes[path] = round(mtime * 1e9) / 1e9  # the same nanosecond grid as DiskTree


class DiskTree(FileTree):
    """A file tree on the real filesystem under *root* (or its relative *subdir*).

    Paths that resolve outside the root are refused (:class:`PathEscape`), and so is a file with more
    than one hard link (:class:`HardLinked`): a hard link planted in the root is the same file as one
    outside it, so reading, writing or stamping it would reach outside. Files are opened without
    following a final symlink (a link swapped in after the path was checked is refused too).
    """

    def __init__(
        self, root: str | os.PathLike[str], mtime: MtimeSource | None = None, *, subdir: str = ""
    ) -> None:
        super().__init__(mtime)
        base = Path(root).resolve()
        if subdir:
            self.root = self._inside(base, normalize(subdir), subdir)
            self.root.mkdir(parents=True, exist_ok=True)
            self.root = self._inside(base, normalize(subdir), subdir)  # a symlink may only now resolve
        else:
            base.mkdir(parents=True, exist_ok=True)
            self.root = base

    @staticmethod
    def _inside(base: Path, rel: str, shown: str) -> Path:
        try:
            real = (base / rel).resolve()
        except (RuntimeError, OSError) as exc:
            raise PathEscape(f"subdir {shown!r} cannot be resolved: {exc}") from exc
        if real != base and base not in real.parents:
            raise PathEscape(f"subdir {shown!r} resolves outside the run root")
        return real

    def _real(self, path: str) -> Path:
        try:
            real = (self.root / path).resolve()
        except (RuntimeError, OSError) as exc:  # a symlink loop (RuntimeError on Python < 3.13)
            raise PathEscape(f"path {path!r} cannot be resolved: {exc}") from exc
        if real != self.root and self.root not in real.parents:
            raise PathEscape(f"path {path!r} resolves outside the run root")
        if len(os.fsencode(str(real))) >= PATH_MAX:
            raise NameTooLong(
                f"path too long ({len(os.fsencode(str(real)))} bytes; the limit is {PATH_MAX - 1})"
            )
        return real

    def _open(self, path: str, real: Path, flags: int) -> int:
        """An fd for the regular file *real*, opened without following a final symlink and without
        blocking (a FIFO planted in the root would block an open forever); refused if hard-linked."""
        try:
            fd = os.open(real, flags | _OPEN_FLAGS, 0o666)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise PathEscape(f"path {path!r} became a symlink") from exc
            if exc.errno == errno.ENXIO:
                raise PathConflict(f"{path!r} is not a regular file") from exc
            raise
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            os.close(fd)
            raise PathConflict(f"{path!r} is not a regular file")
        if st.st_nlink > 1:
            os.close(fd)
            raise HardLinked(f"{path!r} has {st.st_nlink} hard links: it may be a file outside the run root")
        return fd

    def _read(self, path: str) -> bytes:
        with os.fdopen(self._open(path, self._real(path), os.O_RDONLY), "rb") as fh:
            return fh.read()

    def _write(self, path: str, data: bytes, append: bool) -> None:
        real = self._real(path)
        real.parent.mkdir(parents=True, exist_ok=True)
        # Re-check after mkdir: a symlinked directory component may only now resolve.
        real = self._real(path)
        fd = self._open(path, real, os.O_WRONLY | os.O_CREAT | (os.O_APPEND if append else 0))
        with os.fdopen(fd, "ab" if append else "wb") as fh:
            if not append:
                fh.truncate(0)  # only now: a refused hard link is left untouched
            fh.write(data)

    def _write_from(self, path: str, offset: int, data: bytes) -> None:
        with open(self._real(path), "r+b") as fh:
            fh.seek(offset)
            fh.write(data)
            fh.truncate()

    def _delete(self, path: str) -> None:
        self._real(path).unlink()
        self._prune(self._real(path).parent)

    def _prune(self, directory: Path) -> None:
        while directory != self.root and directory.is_dir() and not any(directory.iterdir()):
            directory.rmdir()
            directory = directory.parent

    def _exists(self, path: str) -> bool:
        return self._real(path).is_file()

    def _is_dir(self, path: str) -> bool:
        real = self._real(path)
        return real.is_dir() and any(real.iterdir())

    def _list(self) -> list[str]:
        out = []
        for dirpath, _dirs, files in os.walk(self.root):
            for f in files:
                full = Path(dirpath) / f
                if full.is_symlink():
                    continue
                out.append(full.relative_to(self.root).as_posix())
        return out

    def _rename(self, src: str, dst: str) -> None:
        d = self._real(dst)
        d.parent.mkdir(parents=True, exist_ok=True)
        s = self._real(src)
        os.replace(s, self._real(dst))
        self._prune(s.parent)

    def _stat(self, path: str) -> os.stat_result:
        fd = self._open(path, self._real(path), os.O_RDONLY)
        try:
            return os.fstat(fd)
        finally:
            os.close(fd)

    def _mtime(self, path: str) -> float:
        return self._stat(path).st_mtime_ns / 1e9

    def _size(self, path: str) -> int:
        return self._stat(path).st_size

    def _read_from(self, path: str, offset: int) -> tuple[bytes, int]:
        with os.fdopen(self._open(path, self._real(path), os.O_RDONLY), "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            fh.seek(offset)
            return fh.read(), size

    def _set_mtime(self, path: str, mtime: float) -> None:
        ns = round(mtime * 1e9)
        fd = self._open(path, self._real(path), os.O_RDONLY)
        try:
            os.utime(fd if os.utime in os.supports_fd else self._real(path), ns=(ns, ns))
        finally:
            os.close(fd)
