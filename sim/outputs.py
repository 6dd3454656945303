"""Atomic outputs: every file memsim writes appears whole under its final name, or not at all.

:class:`Outputs` is the set of files one command writes. Its paths are validated before any work starts
(:meth:`Outputs.dir` and :meth:`Outputs.file` raise :class:`~sim.errors.UsageError` with one line for an
output that could never be written: a path under a file, an unwritable directory, a directory where a
file must go, two outputs naming one file). One rule holds for every writer: an output is a regular file
or a directory memsim creates, so an existing device, FIFO or socket (:func:`refuse_special`) and a file
the same command reads, by any name (:meth:`Outputs.reads`), are refused, in :meth:`Outputs.file` and
again when a file is staged. Each file is first written to a hidden temporary name in its
target directory (``.NAME.partial-PID``); :meth:`Outputs.commit` renames them all into place at the end,
and :meth:`Outputs.abort` (on any error or interrupt) removes the temporaries and any directory the
command created. A directory output (a run root, :meth:`Outputs.stage_dir`) is staged and committed the
same way. A process killed with ``kill -9`` can leave a ``.partial`` file, never a file under its final
name; a trace's completeness marker (:mod:`sim.trace`) makes even that partial file unreadable as a trace.
"""

from __future__ import annotations

import errno
import os
import shutil
import sqlite3
import stat
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from sim.errors import UsageError
from sim.files import NAME_MAX, PATH_MAX


class OutputFailed(UsageError):
    """An output could not be written after all (a full disk, a quota, a file system gone read-only):
    one line and exit code 2, like an output path refused up front; nothing is left under final names."""


#: The errors of a write that the output location, not memsim, is to blame for.
WRITE_ERRNOS = frozenset(
    {errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EIO, errno.EFBIG, errno.EACCES, errno.EPERM}
)
#: SQLite's primary result codes for the same: SQLITE_READONLY, SQLITE_IOERR, SQLITE_FULL, SQLITE_CANTOPEN.
SQLITE_WRITE_CODES = frozenset({8, 10, 13, 14})


def is_write_failure(exc: BaseException) -> bool:
    """Whether *exc* says the output location cannot take the write (not a bug of memsim's)."""
    if isinstance(exc, OSError):
        return exc.errno in WRITE_ERRNOS
    if isinstance(exc, sqlite3.Error):
        return (getattr(exc, "sqlite_errorcode", 0) & 0xFF) in SQLITE_WRITE_CODES
    return False


def write_failure(exc: BaseException, target: object) -> OutputFailed:
    """The one-line :class:`OutputFailed` for *exc* raised while writing *target*."""
    reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    return OutputFailed(f"cannot write {target}: {reason}")


def normalize(path: str | os.PathLike[str]) -> Path:
    """*path* made absolute with ``..`` folded lexically (``a/../d`` never creates a stray ``a/``)."""
    text = os.fspath(path)
    if "\x00" in text:
        raise UsageError(f"invalid path {text!r}: contains a NUL character")
    if not text:
        raise UsageError("empty output path")
    p = Path(os.path.abspath(text))
    try:
        parts = [len(os.fsencode(part)) for part in p.parts]
        total = len(os.fsencode(str(p)))
    except UnicodeEncodeError as exc:
        raise UsageError(f"invalid path {text[:60]!r}: {exc.reason}") from exc
    if max(parts) > NAME_MAX:
        raise UsageError(f"{text[:60]}...: a path component is longer than {NAME_MAX} bytes")
    if total >= PATH_MAX:
        raise UsageError(f"{text[:60]}...: the path is longer than {PATH_MAX - 1} bytes")
    return p


def _probe_writable(directory: Path, shown: str) -> None:
    try:
        fd, name = tempfile.mkstemp(prefix=".memsim-probe-", dir=directory)
    except OSError as exc:
        raise UsageError(f"cannot write to {shown}: {exc.strerror or exc}") from exc
    os.close(fd)
    os.unlink(name)


def check_dir(path: str | os.PathLike[str], what: str = "--out") -> Path:
    """Validate an output directory (it may not exist yet); returns its normalized path."""
    p = normalize(path)
    shown = f"{what} {path}"
    try:
        base = p
        while not os.path.lexists(base) and base.parent != base:
            base = base.parent
        if not base.exists():
            raise UsageError(f"{shown}: {base} is a symlink to nothing")
        if not base.is_dir():
            if base == p:
                raise UsageError(f"{shown} exists and is not a directory")
            raise UsageError(f"{shown}: {base} is not a directory")
    except OSError as exc:
        raise UsageError(f"cannot use {shown}: {exc.strerror or exc}") from exc
    _probe_writable(base, shown)
    return p


def refuse_special(p: Path, what: str, shown: object) -> None:
    """The one output-path rule for an existing target: an output is a regular file (or a directory)
    memsim creates, so a device node, a FIFO, a socket or a directory where a file goes is refused, never
    replaced (as root, ``-o /dev/null`` would otherwise replace the system's ``/dev/null``)."""
    try:
        st = os.stat(p)
    except FileNotFoundError:
        if os.path.islink(p):
            raise UsageError(f"{what} {shown} is a symlink to nothing") from None
        return
    except OSError as exc:
        raise UsageError(f"cannot use {what} {shown}: {exc.strerror or exc}") from exc
    if stat.S_ISDIR(st.st_mode):
        raise UsageError(f"{what} {shown} is a directory")
    if not stat.S_ISREG(st.st_mode):
        raise UsageError(f"{what} {shown} exists and is not a regular file (a device, a FIFO or a socket)")


def check_file(path: str | os.PathLike[str], what: str) -> Path:
    """Validate an output file path (its directory may not exist yet); returns its normalized path."""
    p = normalize(path)
    refuse_special(p, what, path)
    if len(p.name.encode()) > 240:
        raise UsageError(f"{what} {path}: the file name is longer than 240 bytes")
    check_dir(p.parent, what)
    return p


@contextmanager
def locked(directories: set[Path]) -> Iterator[None]:
    """An exclusive advisory lock (``flock``) on each of *directories* (in path order, so two commands
    never wait on each other crosswise), held for the block. The lock is on the directory itself: nothing
    is written for it. Where the file system cannot lock (some network mounts) the block runs unlocked."""
    import fcntl

    fds: list[int] = []
    try:
        for d in sorted(directories):
            try:
                fd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
            except OSError:
                continue
            fds.append(fd)
            with suppress(OSError):
                fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        for fd in reversed(fds):
            os.close(fd)  # closing the last descriptor releases its lock


class Outputs:
    """The files one command writes, committed together at the end (see the module docstring)."""

    def __init__(self) -> None:
        self._pending: list[tuple[Path, Path]] = []  # (temporary, final)
        self._pending_dirs: list[tuple[Path, Path]] = []  # (temporary, final)
        self._made_dirs: list[Path] = []
        self._claimed: dict[Path, str] = {}  # final path -> the option that names it
        self._inputs: dict[tuple[int, int], str] = {}  # (device, inode) of a file read -> what it is

    # -- inputs --------------------------------------------------------------------------------------
    def reads(self, path: str | os.PathLike[str], what: str = "input") -> None:
        """Record *path* as a file this command reads: an output naming it (the same file by any path,
        a hard link included) is refused, before anything is written. A path that is not a regular
        file is ignored (the command's own input check refuses it)."""
        with suppress(OSError, ValueError):
            st = os.stat(path)
            if stat.S_ISREG(st.st_mode):
                self._inputs[(st.st_dev, st.st_ino)] = f"{what} {os.fspath(path)}"
                for final, option in self._claimed.items():
                    self._refuse_input(final, option)

    def _refuse_input(self, p: Path, what: str) -> None:
        try:
            st = os.stat(p)
        except (OSError, ValueError):
            return
        source = self._inputs.get((st.st_dev, st.st_ino))
        if source is not None:
            raise UsageError(f"{what} {p} would overwrite the command's {source}")

    # -- validation ----------------------------------------------------------------------------------
    def dir(self, path: str | os.PathLike[str], what: str = "--out") -> Path:
        """Validate an output directory now; it is created when the first file in it is staged."""
        return check_dir(path, what)

    def file(self, path: str | os.PathLike[str], what: str) -> Path:
        """Validate an output file path now; two outputs of one command may not name the same file."""
        p = check_file(path, what)
        key = Path(os.path.realpath(p))
        if key in self._claimed and self._claimed[key] != what:
            raise UsageError(f"{what} and {self._claimed[key]} name the same file {path}")
        self._claimed.setdefault(key, what)
        self._refuse_input(p, what)
        return p

    # -- staging -------------------------------------------------------------------------------------
    def _ensure_dir(self, d: Path) -> None:
        missing = []
        p = d
        while not p.exists():
            missing.append(p)
            p = p.parent
        for m in reversed(missing):
            try:
                m.mkdir()
            except FileExistsError:  # another command made it meanwhile: it is theirs to remove
                if not m.is_dir():
                    raise
                continue
            self._made_dirs.append(m)

    def stage(self, final: str | os.PathLike[str]) -> Path:
        """A temporary path to write *final*'s content to; it is renamed into place by :meth:`commit`."""
        final = normalize(final)
        refuse_special(final, "output", final)
        self._refuse_input(final, "output")
        self._ensure_dir(final.parent)
        tmp = final.parent / f".{final.name}.partial-{os.getpid()}"
        if tmp.exists():
            tmp.unlink()
        self._pending.append((tmp, final))
        return tmp

    def stage_dir(self, final: str | os.PathLike[str], what: str) -> Path:
        """A temporary directory path (not yet created) standing in for directory *final* until the
        commit, which replaces *final* (a directory an earlier run left) with it, if it was created; the
        abort removes it. Refuses now a *final* that exists and is not a directory."""
        final = normalize(final)
        if final.exists() and not final.is_dir():
            raise UsageError(f"{what} {final} exists and is not a directory")
        tmp = final.parent / f".{final.name}.partial-{os.getpid()}"
        if tmp.exists():
            shutil.rmtree(tmp)
        self._pending_dirs.append((tmp, final))
        return tmp

    def write_text(self, final: str | os.PathLike[str], text: str) -> Path:
        """Stage *text* (UTF-8) for *final*."""
        return self.write_bytes(final, text.encode("utf-8"))

    def write_bytes(self, final: str | os.PathLike[str], data: bytes) -> Path:
        """Stage *data* for *final*."""
        return self.write_with(final, lambda tmp: tmp.write_bytes(data))

    def write_with(self, final: str | os.PathLike[str], writer: Callable[[Path], object]) -> Path:
        """Stage *final* by calling ``writer(temporary_path)`` (sqlite, matplotlib...); a full disk or a
        read-only file system on the way is :class:`OutputFailed`."""
        try:
            writer(self.stage(final))
        except (OSError, sqlite3.Error) as exc:
            if not is_write_failure(exc):
                raise
            raise write_failure(exc, final) from exc
        return normalize(final)

    def staged_path(self, final: str | os.PathLike[str]) -> Path:
        """The temporary path staged for *final* (to read a file back before the commit)."""
        target = normalize(final)
        for tmp, f in self._pending:
            if f == target:
                return tmp
        raise KeyError(f"{final} is not staged")

    @property
    def paths(self) -> list[Path]:
        """The final paths staged so far."""
        return [f for _, f in self._pending]

    # -- the end -------------------------------------------------------------------------------------
    def commit(self) -> list[Path]:
        """Rename every staged file into place; returns their final paths.

        The renames run under an exclusive lock on each target directory (:func:`locked`), so two commands
        writing into one directory commit one after the other, each as a unit: the last one's files and
        run root are what remain, never one's trace beside the other's root. A directory output moves its
        predecessor aside before it takes the name and deletes it after, so nothing is deleted under a
        name another process may be renaming to."""
        done = []
        old: list[Path] = []
        try:
            with locked({f.parent for _, f in self._pending + self._pending_dirs}):
                for tmp, final in self._pending:
                    if tmp.exists():
                        os.replace(tmp, final)
                        done.append(final)
                for tmp, final in self._pending_dirs:
                    if tmp.is_dir():
                        if final.is_symlink():
                            final.unlink()
                        elif final.is_dir():
                            aside = tmp.with_name(tmp.name.replace(".partial-", ".old-", 1))
                            os.replace(final, aside)
                            old.append(aside)
                        os.replace(tmp, final)
                        done.append(final)
            for aside in old:
                shutil.rmtree(aside, ignore_errors=True)
        except OSError as exc:
            self._pending = [(t, f) for t, f in self._pending if f not in done]
            self._pending_dirs = [(t, f) for t, f in self._pending_dirs if f not in done]
            self.abort()
            raise write_failure(exc, exc.filename or "the outputs") from exc
        self._pending = []
        self._pending_dirs = []
        self._made_dirs = []
        return done

    def abort(self) -> None:
        """Remove every staged temporary and every directory this command created (if left empty)."""
        for tmp, _ in self._pending:
            with suppress(OSError):
                tmp.unlink()
        self._pending = []
        for tmp, _ in self._pending_dirs:
            shutil.rmtree(tmp, ignore_errors=True)
        self._pending_dirs = []
        for d in reversed(self._made_dirs):
            with suppress(OSError):
                d.rmdir()
        self._made_dirs = []

    @contextmanager
    def transaction(self) -> Iterator[Outputs]:
        """``with outputs.transaction():`` commits on success, aborts on any exception (incl. Ctrl-C)."""
        try:
            yield self
        except BaseException:
            self.abort()
            raise
        self.commit()
