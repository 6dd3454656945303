"""Where a run's results came from, recorded beside them so the run can be cited (issue 38, item 5).

One record per run, assembled here and written by every writer of ``memsim bench`` (the fact-token
benchmark and the conversation benchmark) in three forms:

* ``results.db``: a ``meta`` table (``key``, ``value``; each value JSON text), the shape a trace's meta
  table has;
* beside each CSV, ``<name>.csv.meta.json`` (the record, plus the CSV's own name, size and sha256). A
  sidecar, not a ``#`` header, because the CSV stays a plain CSV: pandas, R, DuckDB, spreadsheets and
  Python's :mod:`csv` read it with no option, and the sidecar names the exact bytes it describes;
* the report page's footer ("cite this run"), and ``memsim report``'s console block.

The record (:func:`collect`): the input file's path, size and sha256 (streamed, 1 MiB at a time: the
input may be gigabytes), its format; memsim's version (from the installed package's metadata, the one
source of truth: :data:`sim.__version__`) and, when memsim runs from a git checkout, the commit (read from
``.git`` on disk, never from the network; none when there is no checkout); the exact command line; every
setting the run was given (windows, designs, knobs, provider and price, seeds, workers...); the Python
version and the tiktoken encoding; the evidence ids a loader dropped as errata; and the date.

The date is the only wall-clock value memsim writes, and only here: rows, traces and aggregates never
carry it, so they stay byte-identical between runs. ``SOURCE_DATE_EPOCH`` (the reproducible-builds
convention, https://reproducible-builds.org/specs/source-date-epoch/, read 2026-12-06) fixes it: with it
set, two runs write byte-identical provenance too.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import platform
import shlex
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

#: The record's schema (a reader checks it before trusting the keys).
SCHEMA = "memsim.provenance/1"
#: The suffix of a CSV's sidecar.
SIDECAR_SUFFIX = ".meta.json"
_CHUNK = 1 << 20


def file_digest(path: str | os.PathLike[str]) -> tuple[int, str]:
    """*path*'s size in bytes and sha256 (hex), read in 1 MiB chunks (memory stays flat)."""
    h = hashlib.sha256()
    size = 0
    with open(path, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            h.update(chunk)
            size += len(chunk)
    return size, h.hexdigest()


def _git_dir(start: Path) -> Path | None:
    """The git directory of the checkout *start* is in (``.git`` a directory, or a worktree's ``.git``
    file naming one), or None."""
    for d in (start, *start.parents):
        dot = d / ".git"
        if dot.is_dir():
            return dot
        if dot.is_file():
            try:
                text = dot.read_text(encoding="utf-8", errors="replace").strip()
            except OSError:
                return None
            if text.startswith("gitdir:"):
                target = Path(text[len("gitdir:") :].strip())
                return target if target.is_absolute() else (d / target)
            return None
    return None


def _packed_ref(git: Path, ref: str) -> str | None:
    for base in (git, _common_dir(git)):
        try:
            lines = (base / "packed-refs").read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            continue
        for line in lines:
            sha, _, name = line.partition(" ")
            if name.strip() == ref and len(sha) == 40:
                return sha
    return None


def _common_dir(git: Path) -> Path:
    """A worktree's shared git directory (its ``commondir`` file), else *git* itself."""
    try:
        rel = (git / "commondir").read_text(encoding="utf-8").strip()
    except OSError:
        return git
    p = Path(rel)
    return p if p.is_absolute() else (git / p)


def git_commit(start: str | os.PathLike[str] | None = None) -> str | None:
    """The commit checked out where memsim's own source lives (or at *start*): read from ``.git``
    (``HEAD``, a loose ref, ``packed-refs``; a worktree's ``commondir``), with no git program and no
    network. None when memsim is not running from a checkout or anything is unreadable."""
    here = Path(start) if start is not None else Path(__file__).resolve().parent.parent
    try:
        git = _git_dir(here)
        if git is None:
            return None
        head = (git / "HEAD").read_text(encoding="utf-8", errors="replace").strip()
        if not head.startswith("ref:"):
            return head if len(head) == 40 else None
        ref = head[4:].strip()
        for base in (git, _common_dir(git)):
            f = base / ref
            if f.is_file():
                sha = f.read_text(encoding="utf-8", errors="replace").strip()
                return sha if len(sha) == 40 else None
        return _packed_ref(git, ref)
    except OSError:
        return None


def run_date() -> str:
    """The run's date, ISO 8601 UTC to the second: ``SOURCE_DATE_EPOCH`` when set (a whole number of
    seconds since 1970), else the wall clock. The only wall-clock value memsim records."""
    fixed = os.environ.get("SOURCE_DATE_EPOCH", "").strip()
    if fixed.isdigit():
        when = dt.datetime.fromtimestamp(int(fixed), dt.UTC)
    else:
        when = dt.datetime.now(dt.UTC)
    return when.replace(microsecond=0).isoformat().replace("+00:00", "Z")


#: The command line the running ``memsim`` command was given (:func:`set_argv`; None: ``sys.argv``).
_ARGV: list[str] | None = None


def set_argv(argv: list[str]) -> None:
    """Record the command being run (``sim.cli.main`` calls it with ``memsim`` and its arguments, also
    when a test or a program calls ``main(ARGS)`` in-process, where ``sys.argv`` is someone else's)."""
    global _ARGV
    _ARGV = list(argv)


def _argv(argv: Iterable[str] | None = None) -> list[str]:
    if argv is not None:
        return list(argv)
    return list(_ARGV) if _ARGV is not None else ["memsim", *sys.argv[1:]]


def command_line(argv: Iterable[str] | None = None) -> str:
    """The command as typed, shell-quoted: ``memsim`` and its arguments (``python -m sim.cli`` runs the
    same command)."""
    args = _argv(argv)
    return shlex.join(["memsim", *args[1:]])


def describe_input(path: str | os.PathLike[str] | None, fmt: str | None) -> dict[str, Any] | None:
    """The input file's record: path (absolute), size, sha256 and format; None without a file."""
    if path is None:
        return None
    p = Path(path).resolve()
    size, sha = file_digest(p)
    return {"path": str(p), "name": p.name, "bytes": size, "sha256": sha, "format": fmt}


def checkout_version(root: str | os.PathLike[str] | None = None) -> str | None:
    """The version ``pyproject.toml`` declares where memsim's source lives (a checkout), or None: a run
    from a checkout whose installed metadata is older records both."""
    import tomllib

    base = Path(root) if root is not None else Path(__file__).resolve().parent.parent
    try:
        with open(base / "pyproject.toml", "rb") as fh:
            doc = tomllib.load(fh)
    except (OSError, ValueError):
        return None
    project = doc.get("project")
    if not isinstance(project, dict) or project.get("name") != "memsim":
        return None
    version = project.get("version")
    return version if isinstance(version, str) else None


def collect(
    *,
    input_path: str | os.PathLike[str] | None,
    input_format: str | None,
    settings: Mapping[str, Any],
    errata: Iterable[Mapping[str, str]] = (),
    argv: Iterable[str] | None = None,
) -> dict[str, Any]:
    """The run's provenance record (JSON-ready, keys sorted when written)."""
    from sim.tokens import ENCODING_NAME
    from sim.version import __version__

    record = {
        "schema": SCHEMA,
        "memsim_version": __version__,
        "git_commit": git_commit(),
        "command": command_line(argv),
        "argv": _argv(argv),
        "input": describe_input(input_path, input_format),
        "settings": dict(settings),
        "python": platform.python_version(),
        "tiktoken_encoding": ENCODING_NAME,
        "errata_dropped": [dict(e) for e in errata],
        "date": run_date(),
    }
    source = checkout_version()
    if source is not None and source != __version__:
        record["checkout_version"] = source
    return record


def to_json(record: Mapping[str, Any]) -> str:
    """The record as canonical JSON text (sorted keys, non-ASCII kept, a final newline)."""
    return json.dumps(record, ensure_ascii=False, sort_keys=True, indent=2) + "\n"


def sidecar(record: Mapping[str, Any], name: str, data: bytes) -> str:
    """The sidecar of the CSV *name* whose bytes are *data*: the record and the CSV's size and sha256."""
    return to_json({**record, "describes": {"file": name, "bytes": len(data),
                                            "sha256": hashlib.sha256(data).hexdigest()}})  # fmt: skip


def write_db_meta(conn: Any, record: Mapping[str, Any]) -> None:
    """The record as a ``meta`` table (``key`` primary key, ``value`` JSON text) in the open SQLite
    connection *conn* (its caller commits)."""
    conn.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)")
    conn.executemany(
        "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
        [(k, json.dumps(v, ensure_ascii=False, sort_keys=True)) for k, v in sorted(record.items())],
    )


def read_db_meta(path: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The provenance record of a results database (None when it has none: an older run)."""
    import sqlite3

    try:
        conn = sqlite3.connect(f"file:{Path(path).resolve()}?mode=ro", uri=True)
        try:
            if (
                conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='meta'").fetchone()
                is None
            ):
                return None
            rows = conn.execute("SELECT key, value FROM meta").fetchall()
        finally:
            conn.close()
    except sqlite3.DatabaseError:
        return None
    out: dict[str, Any] = {}
    for k, v in rows:
        try:
            out[str(k)] = json.loads(v) if isinstance(v, str) else v
        except ValueError:
            out[str(k)] = v
    return out if out.get("schema") == SCHEMA else None


def _setting(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)


def cite_lines(record: Mapping[str, Any]) -> list[str]:
    """The "cite this run" block: what a methods section needs, one fact a line."""
    inp = record.get("input") or None
    commit = record.get("git_commit")
    source = record.get("checkout_version")
    lines = [
        f"memsim {record.get('memsim_version', '?')}"
        + (f" (git {commit})" if commit else "")
        + (f"; the checkout declares {source}" if source else ""),
        f"command: {record.get('command', '')}",
    ]
    if inp:
        lines.append(
            f"input: {inp.get('path')} ({inp.get('format')}, {int(inp.get('bytes') or 0):,} bytes, "
            f"sha256 {inp.get('sha256')})"
        )
    else:
        lines.append("input: generated (see settings)")
    settings = record.get("settings") or {}
    for k in sorted(settings):
        lines.append(f"  {k}: {_setting(settings[k])}")
    lines.append(
        f"python {record.get('python', '?')}, tiktoken encoding {record.get('tiktoken_encoding', '?')}"
    )
    dropped = record.get("errata_dropped") or []
    if dropped:
        where = ", ".join(f"{e.get('question')} {e.get('evidence')}" for e in dropped)
        lines.append(f"errata dropped: {len(dropped)} evidence ids ({where})")
    lines.append(f"date: {record.get('date', '?')}")
    return lines


def cite_text(record: Mapping[str, Any]) -> str:
    """:func:`cite_lines` as one text block."""
    return "\n".join(cite_lines(record))


def errata_warning(errata: Iterable[Mapping[str, str]], path: str | os.PathLike[str] = "") -> str | None:
    """The one stderr line naming the evidence ids a loader dropped as errata of the file *path* (None
    when none were)."""
    items = list(errata)
    if not items:
        return None
    where = ", ".join(f"{e.get('evidence')!s} in {e.get('question')!s}" for e in items)
    n = len(items)
    ids, were = ("ids name", "were") if n != 1 else ("id names", "was")
    return (
        f"memsim: warning: {n} evidence {ids} no turn and {were} dropped as known errata of the released "
        f"file{f' {path}' if path else ''}: {where} (recorded in the run's provenance)"
    )


def sidecar_name(csv_name: str) -> str:
    """The sidecar file name of the CSV *csv_name* (``questions.csv`` -> ``questions.csv.meta.json``)."""
    return csv_name + SIDECAR_SUFFIX


def write_csv(outputs: Any, path: Path, text: str, record: Mapping[str, Any] | None) -> None:
    """Stage the CSV *text* at *path* through *outputs* (:class:`sim.outputs.Outputs`) and, with a
    *record*, its sidecar beside it."""
    data = text.encode("utf-8")
    outputs.write_bytes(path, data)
    if record is not None:
        outputs.write_text(path.with_name(sidecar_name(path.name)), sidecar(record, path.name, data))


def cite_source(source: str | os.PathLike[str]) -> str | None:
    """The "cite this run" block of a bench output directory (``memsim report DIR`` prints it), or None
    when *source* is not one or its run recorded no provenance (an older memsim)."""
    db = Path(source) / "results.db"
    if not Path(source).is_dir() or not db.is_file():
        return None
    record = read_db_meta(db)
    if record is None:
        return None
    return "cite this run:\n" + "\n".join(f"  {line}" for line in cite_lines(record))
