"""Saved progress of an exhaustive run (``memsim claims --exhaustive --resume DIR``).

The directory holds ``PROGRESS`` (a marker naming the format) and one JSON file per finished task, named by
a hash of the task's key (claim, direction, bound, range, reduction, scope fingerprint) and memsim's
version. Each file is written to a hidden temporary name and renamed, so a killed run leaves whole files
or none. A new directory appears with its marker already in it (it is made under a hidden name and
renamed), so two runs started together on one new directory both see a progress directory.

A resumed run uses a file only if it parses, names the same task and holds what :func:`run_task` writes,
values included (:class:`SavedResult`: counts within the task's range, the first counterexample's index
inside it, finite seconds); any other file is ignored and its task run again, so a changed scope (another
fingerprint) or an edited file never reaches the verdicts. A saved result that is not a regular file (a
directory, a FIFO) is bad input: one line, before any task runs.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import tempfile
from contextlib import suppress
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from sim.errors import UsageError

MARKER = "PROGRESS"
FORMAT = "memsim-exhaustive-progress 1"
#: The largest saved result read back (a result with Hypothesis' example is a few kB).
MAX_RESULT_BYTES = 4 << 20

_STRICT = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False)


class SavedHypothesis(BaseModel):
    """Hypothesis' search beside a must-fail task (:func:`sim.exhaustive.runner.run_task`)."""

    model_config = _STRICT

    example: Any = None
    summary: str
    same: bool
    in_scope: bool
    size: list[int] | None = None


class SavedResult(BaseModel):
    """One saved task result, as :func:`sim.exhaustive.runner.run_task` writes it."""

    model_config = _STRICT

    key: str
    cases: int = Field(ge=0)
    skipped: dict[Literal["symmetry", "duplicates"], int]
    first: int | None
    detail: str
    seconds: float = Field(ge=0)
    cpu: float = Field(default=0.0, ge=0)
    hypothesis: SavedHypothesis | None = None


def check_result(data: Any, key: str, span: tuple[int, int] | None = None) -> bool:
    """Whether *data* is a saved result of the task *key* (its range *span*) as its writer writes it."""
    if not isinstance(data, dict) or data.get("key") != key:
        return False
    try:
        r = SavedResult.model_validate(data)
    except ValidationError:
        return False
    if any(v < 0 for v in r.skipped.values()):
        return False
    if span is None:
        return True
    start, stop = span
    if r.cases + sum(r.skipped.values()) > stop - start:
        return False
    return r.first is None or start <= r.first < stop


class Progress:
    """A progress directory (None: progress is not saved)."""

    def __init__(self, root: Path | None) -> None:
        self.root = root
        if root is None:
            return
        if root.exists() and not root.is_dir():
            raise UsageError(f"--resume {root}: not a directory")
        if root.is_dir() and not self._is_progress(root):
            raise UsageError(f"--resume {root}: not a progress directory of `memsim claims --exhaustive`")
        if not root.parent.is_dir():
            raise UsageError(f"--resume {root}: the parent directory does not exist")

    @staticmethod
    def _is_progress(root: Path) -> bool:
        """An empty directory (hidden temporaries aside: another run's marker on its way) or one with the
        marker."""
        if (root / MARKER).is_file():
            return True
        return not any(not (p.name.startswith(".") and p.name.endswith(".tmp")) for p in root.iterdir())

    def open(self) -> None:
        """Create the directory and its marker (when the run starts, after its input is validated): a new
        directory is made whole under a hidden name and renamed, so it is never seen without its marker."""
        if self.root is None:
            return
        root = self.root
        try:
            if not root.exists():
                staging = Path(
                    tempfile.mkdtemp(prefix=f".{root.name[:100]}.", suffix=".tmp", dir=root.parent)
                )
                try:
                    _atomic_write(staging / MARKER, FORMAT + "\n")
                    os.rename(staging, root)
                except OSError:
                    if not root.is_dir():  # not another run's directory in the meantime: a real failure
                        raise
                finally:
                    shutil.rmtree(staging, ignore_errors=True)
            marker = root / MARKER
            if not marker.is_file():
                _atomic_write(marker, FORMAT + "\n")
        except OSError as exc:
            raise UsageError(
                f"--resume {root}: cannot create the progress directory: {exc.strerror or exc}"
            ) from exc
        if not self._is_progress(root):
            raise UsageError(f"--resume {root}: not a progress directory of `memsim claims --exhaustive`")

    def _path(self, key: str) -> Path:
        from sim import __version__

        assert self.root is not None
        digest = hashlib.sha256(f"{__version__}|{key}".encode()).hexdigest()[:32]
        return self.root / f"{digest}.json"

    def get(self, key: str, span: tuple[int, int] | None = None) -> dict[str, Any] | None:
        """The saved result of the task *key* (over the case range *span*), or None."""
        if self.root is None:
            return None
        path = self._path(key)
        try:
            st = os.stat(path)
        except OSError:
            return None
        if not stat.S_ISREG(st.st_mode):
            raise UsageError(f"--resume {self.root}: saved result {path.name} is not a regular file")
        if st.st_size > MAX_RESULT_BYTES:
            return None
        try:
            with open(path, "rb") as fh:
                data = json.loads(fh.read(MAX_RESULT_BYTES + 1).decode("utf-8"))
        except (OSError, ValueError, RecursionError):
            return None
        return data if check_result(data, key, span) else None  # type: ignore[no-any-return]

    def put(self, key: str, result: dict[str, Any]) -> None:
        """Save the result of the task *key* (atomically)."""
        if self.root is not None:
            path = self._path(key)
            try:
                _atomic_write(path, json.dumps(result, sort_keys=True, default=str) + "\n")
            except IsADirectoryError as exc:
                raise UsageError(f"--resume {self.root}: saved result {path.name} is a directory") from exc


def _atomic_write(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with suppress(OSError):
            tmp.unlink()
        raise
