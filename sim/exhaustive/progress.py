"""Saved progress of an exhaustive run (``memsim claims --exhaustive --resume DIR``).

The directory holds ``PROGRESS`` (a marker naming the format) and one JSON file per finished task, named by
a hash of the task's key (claim, direction, bound, range, reduction, scope fingerprint) and memsim's
version. Each file is written to a hidden temporary name and renamed, so a killed run leaves whole files
or none. A resumed run uses a file only if it parses and names the same task; a changed scope has another
fingerprint, so its old files are ignored rather than trusted.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from sim.errors import UsageError

MARKER = "PROGRESS"
FORMAT = "memsim-exhaustive-progress 1"


class Progress:
    """A progress directory (None: progress is not saved)."""

    def __init__(self, root: Path | None) -> None:
        self.root = root
        if root is None:
            return
        if root.exists() and not root.is_dir():
            raise UsageError(f"--resume {root}: not a directory")
        if root.is_dir() and any(root.iterdir()) and not (root / MARKER).is_file():
            raise UsageError(f"--resume {root}: not a progress directory of `memsim claims --exhaustive`")
        if not root.parent.is_dir():
            raise UsageError(f"--resume {root}: the parent directory does not exist")

    def open(self) -> None:
        """Create the directory and its marker (when the run starts, after its input is validated)."""
        if self.root is None:
            return
        self.root.mkdir(exist_ok=True)
        marker = self.root / MARKER
        if not marker.is_file():
            _atomic_write(marker, FORMAT + "\n")

    def _path(self, key: str) -> Path:
        from sim import __version__

        assert self.root is not None
        digest = hashlib.sha256(f"{__version__}|{key}".encode()).hexdigest()[:32]
        return self.root / f"{digest}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        """The saved result of the task *key*, or None."""
        if self.root is None:
            return None
        try:
            data = json.loads(self._path(key).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(data, dict) or data.get("key") != key or not _well_formed(data):
            return None
        return data

    def put(self, key: str, result: dict[str, Any]) -> None:
        """Save the result of the task *key* (atomically)."""
        if self.root is not None:
            _atomic_write(self._path(key), json.dumps(result, sort_keys=True, default=str) + "\n")


def _well_formed(data: dict[str, Any]) -> bool:
    return (
        isinstance(data.get("cases"), int)
        and isinstance(data.get("skipped"), dict)
        and (data.get("first") is None or isinstance(data.get("first"), int))
        and isinstance(data.get("seconds"), (int, float))
    )


def _atomic_write(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
