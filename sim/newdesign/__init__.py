"""``memsim new design NAME``: write an installable design package to start from.

The package (``memsim-NAME``, import name ``NAME``) has the same file set as memsim's built-in designs,
registers itself under the ``memsim.designs`` and ``memsim.scenarios`` entry points, and holds a small
runnable design (a plain last-K-tokens buffer), one real claim (faithful fails, fixed holds, off fails,
combined holds), its benchmark adapter, a scenario with its committed output, and tests that run every
conformance check of :mod:`sim.testing` (the ones memsim's own suite runs on its designs). Record IDs are
named after the design (``NAME-OBJ-buffer``). After ``pip install -e DIR`` it appears in ``memsim bench``,
``memsim claims --system NAME``, ``memsim run`` and ``memsim doc`` with no edit to memsim.
"""

from __future__ import annotations

import importlib.util
import keyword
import os
import re
import shutil
import tempfile
from importlib import resources
from pathlib import Path

from sim.errors import UsageError

NAME_RE = re.compile(r"[a-z][a-z0-9_]{1,39}")


def check_name(name: str) -> str:
    """*name*, if it can be a design and package name that shadows nothing installed."""
    from sim.names import reserved_reason
    from sim.registry import designs

    if not NAME_RE.fullmatch(name) or keyword.iskeyword(name):
        raise UsageError(
            f"design name {name!r}: use 2 to 40 lower-case letters, digits and _, starting with a letter"
        )
    why = reserved_reason(name)
    if why is not None:
        raise UsageError(f"design name {why}; choose another name")
    if name in designs():
        raise UsageError(f"a design named {name!r} is already installed")
    if importlib.util.find_spec(name) is not None:
        raise UsageError(f"{name!r} is already an importable module; choose another name")
    return name


def create(name: str, path: Path | None = None) -> Path:
    """Write the package for design *name* under *path* (default ``./memsim-NAME``); returns the path."""
    check_name(name)
    target = _target(path if path is not None else Path(f"memsim-{name}"))
    title = f"{name}: a last-K-tokens context buffer"
    try:
        staging = Path(tempfile.mkdtemp(prefix=_staging_prefix(target), dir=target.parent))
        umask = os.umask(0o022)
        os.umask(umask)
        os.chmod(staging, 0o777 & ~umask)  # a directory as mkdir makes it, not mkdtemp's private 0700
    except OSError as exc:
        raise UsageError(f"cannot create {target}: {exc.strerror or exc}") from exc
    try:
        root = resources.files("sim.newdesign").joinpath("template")
        ident = name.upper().replace("_", "")[:16]  # record IDs are named after the design: TOY-OBJ-buffer
        _copy(root, staging, {"__PKG__": name, "__NAME__": name, "__TITLE__": title, "__ID__": ident})
        if target.exists():
            target.rmdir()
        os.replace(staging, target)
    except OSError as exc:
        shutil.rmtree(staging, ignore_errors=True)
        raise UsageError(f"cannot create {target}: {exc.strerror or exc}") from exc
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return target


def _target(path: str | os.PathLike[str]) -> Path:
    """Where the package goes: *path* absolute, a symlink followed to the directory it names (a link to an
    empty directory is a fine place), refused in one line if it exists and is not an empty directory, is
    a symlink to nothing, or lies in a directory memsim cannot write (``/proc``, a read-only mount)."""
    from sim.outputs import check_dir, normalize

    target = normalize(path)
    try:
        if target.is_symlink():
            if not target.exists():
                raise UsageError(f"--path {path} is a symlink to nothing")
            target = Path(os.path.realpath(target))
        if target.exists() and (not target.is_dir() or any(target.iterdir())):
            raise UsageError(f"{target} exists and is not an empty directory")
        if not target.parent.is_dir():
            raise UsageError(f"{target.parent} is not a directory")
    except OSError as exc:
        raise UsageError(f"cannot use --path {path}: {exc.strerror or exc}") from exc
    check_dir(target.parent, "--path")
    return target


#: The longest hidden staging name's prefix (a file name has at most 255 bytes; mkdtemp adds 8 more).
_MAX_PREFIX_BYTES = 200


def _staging_prefix(target: Path) -> str:
    """The hidden staging directory's name prefix: after *target*'s name when that fits, else a fixed one."""
    prefix = f".{target.name}.partial-"
    return prefix if len(os.fsencode(prefix)) <= _MAX_PREFIX_BYTES else ".memsim-new-design.partial-"


def _copy(src: object, dst: Path, subst: dict[str, str]) -> None:
    for entry in sorted(src.iterdir(), key=lambda e: e.name):  # type: ignore[attr-defined]
        name = entry.name
        if name == "__pycache__":
            continue
        for k, v in subst.items():
            name = name.replace(k, v)
        name = name.removesuffix(".tmpl")
        out = dst / name
        if entry.is_dir():
            out.mkdir()
            _copy(entry, out, subst)
        else:
            text = entry.read_text(encoding="utf-8")
            for k, v in subst.items():
                text = text.replace(k, v)
            out.write_text(text, encoding="utf-8")
