"""Fuzzing memsim's input surfaces: run a command in-process, check the exit-code contract, and mutate
valid documents so a fuzzer reaches deep fields rather than only the first parse.

The pieces (each fuzz test combines them; ``tests/test_fuzz_*.py``):

``run_cli(argv, cwd)``
    Runs ``memsim ARGV`` in this process with *cwd* as the working directory, through
    :func:`sim.cli.main` (the console script's entry, with the same dispatch, exit codes and error line;
    ``test_fuzz_cli.py`` checks it against the console script), and returns ``Result(code, out, err)``.
``assert_contract(result, before, after, ok=(0, 2))``
    The contract every input must meet: an exit code in *ok* (never 1, an internal error), no traceback;
    on 2 nothing on stdout, exactly one ``memsim: error:`` line on stderr, and the directory snapshots
    *before* and *after* equal (nothing written).
``Workspace(base, files)``
    A working directory for many examples: ``check(argv, inputs, ok)`` writes the example's input files,
    runs the command, asserts the contract and removes whatever the example left.
``snapshot(directory)``
    Every path under *directory* with its kind and content hash (for "nothing written").
``mutated(doc)``
    A strategy of *doc* (a JSON-like value) with one to three mutations at any depth: a key or an item
    dropped, a leaf retyped (to null, a bool, an int, a float including NaN and the infinities, a string,
    a list or an object), an object or a list extended with a new entry. Unchanged some of the time.
``encoded(text)``
    A strategy of the bytes of *text*: UTF-8 as is (most of the time), with a byte-order mark,
    truncated at any byte, as UTF-16, with a NUL or an invalid byte inserted.
``json_text(doc)`` / ``toml_text(doc)``
    *doc* written as JSON (NaN spelled as JSON readers see it) or as TOML (a top-level table of scalars,
    arrays and sub-tables, what a scenario file holds).
``fuzz_settings(ci, thorough)``
    Hypothesis settings with *ci* examples under the ``ci`` and ``quick`` profiles and *thorough* under
    ``thorough``, derandomized as the profile is.

Sizes are bounded by the strategies (a handful of keys, strings of at most 40 characters), so a fuzzed
command never hangs on its input's size.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import math
import os
import shutil
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hypothesis import settings
from hypothesis import strategies as st

#: Text of Unicode scalar values (a lone surrogate cannot be written as UTF-8 or TOML at all).
TEXT = st.text(st.characters(codec="utf-8"), max_size=40)
#: Leaves a retyped field may become.
LEAVES = (
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.sampled_from([0, 1, -1, 2**63, 0.5, -0.0, 1e308, math.nan, math.inf, -math.inf])
    | st.floats(allow_nan=True, allow_infinity=True)
    | TEXT
    | st.sampled_from(["", "true", "1", "nan", "FACT-0001=amber", "../x", "\x1b[31m", "\u202e"])
)


@dataclass
class Result:
    """A finished in-process command."""

    code: int
    out: str
    err: str


@contextlib.contextmanager
def _cwd(path: Path) -> Iterator[None]:
    old = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(old)


def run_cli(argv: list[str], cwd: Path) -> Result:
    """``memsim ARGV`` in this process, in *cwd* (see the module docstring)."""
    from sim.cli import main

    out, err = io.StringIO(), io.StringIO()
    code: Any = 0
    with _cwd(cwd), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(list(argv), own_process=False)
        except SystemExit as exc:
            code = exc.code
    return Result(code if isinstance(code, int) else 1, out.getvalue(), err.getvalue())


def snapshot(directory: Path) -> dict[str, str]:
    """Every path under *directory*: its kind, and for a file a hash of its bytes."""
    found: dict[str, str] = {}
    for dirpath, dirs, files in os.walk(directory):
        for name in dirs + files:
            p = Path(dirpath) / name
            rel = p.relative_to(directory).as_posix()
            if p.is_symlink():
                found[rel] = "link:" + os.readlink(p)
            elif p.is_dir():
                found[rel] = "dir"
            elif not p.is_file():  # a FIFO, a socket, a device: never opened (a FIFO would block)
                found[rel] = f"special:{stat.S_IFMT(p.lstat().st_mode):o}"
            else:
                found[rel] = hashlib.sha256(p.read_bytes()).hexdigest()
    return found


def assert_contract(
    result: Result, before: dict[str, str], after: dict[str, str], ok: tuple[int, ...] = (0, 2)
) -> None:
    """The exit-code contract for one fuzzed input (see the module docstring)."""
    assert result.code in ok, result
    assert "Traceback" not in result.err and "internal error" not in result.err, result
    if result.code == 2:
        assert result.out == "", result
        assert result.err.count("\n") == 1 and result.err.startswith("memsim: error: "), result
        assert result.err[:-1].isprintable(), result
        assert before == after, sorted(set(before.items()) ^ set(after.items()))


class Workspace:
    """A working directory the fuzzed commands run in, reset after each example: the files it was made
    with stay, everything else (inputs written for the example, outputs of a command that succeeded) is
    removed. ``check(argv, inputs)`` writes *inputs* (name to bytes), runs ``memsim ARGV`` in-process and
    asserts the contract (:func:`assert_contract`); it returns the :class:`Result`."""

    def __init__(self, base: Path, files: dict[str, bytes] | None = None) -> None:
        self.base = base
        base.mkdir(parents=True, exist_ok=True)
        for name, data in (files or {}).items():
            (base / name).write_bytes(data)
        self._keep = set(snapshot(base))

    def check(
        self, argv: list[str], inputs: dict[str, bytes] | None = None, ok: tuple[int, ...] = (0, 2)
    ) -> Result:
        try:
            for name, data in (inputs or {}).items():
                (self.base / name).parent.mkdir(parents=True, exist_ok=True)
                (self.base / name).write_bytes(data)
            before = snapshot(self.base)
            result = run_cli(argv, self.base)
            assert_contract(result, before, snapshot(self.base), ok)
            return result
        finally:
            self.reset()

    def reset(self) -> None:
        for name in os.listdir(self.base):
            p = self.base / name
            if name in self._keep:
                continue
            if p.is_dir() and not p.is_symlink():
                shutil.rmtree(p)
            else:
                p.unlink()


# -- mutations -----------------------------------------------------------------------------------------
def _paths(doc: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path into *doc* (the empty path is the document itself)."""
    out = [prefix]
    if isinstance(doc, dict):
        for k, v in doc.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            out += _paths(v, (*prefix, i))
    return out


def _get(doc: Any, path: tuple[Any, ...]) -> Any:
    for p in path:
        doc = doc[p]
    return doc


def _copy(doc: Any) -> Any:
    if isinstance(doc, dict):
        return {k: _copy(v) for k, v in doc.items()}
    if isinstance(doc, list):
        return [_copy(v) for v in doc]
    return doc


@st.composite
def _mutate_once(draw: st.DrawFn, doc: Any) -> Any:
    doc = _copy(doc)
    path = draw(st.sampled_from(_paths(doc)))
    kind = draw(st.sampled_from(["drop", "retype", "extend"]))
    if kind == "drop" and path:
        parent = _get(doc, path[:-1])
        del parent[path[-1]]
        return doc
    target = _get(doc, path)
    if kind == "extend" and isinstance(target, dict):
        target[draw(TEXT)] = draw(LEAVES)
        return doc
    if kind == "extend" and isinstance(target, list):
        copy_first: bool = bool(target) and draw(st.booleans())
        target.append(_copy(target[0]) if copy_first else draw(LEAVES))
        return doc
    containers: st.SearchStrategy[Any] = st.lists(LEAVES, max_size=3) | st.dictionaries(
        TEXT, LEAVES, max_size=3
    )
    new = draw(LEAVES | containers)
    if not path:
        return new
    _get(doc, path[:-1])[path[-1]] = new
    return doc


@st.composite
def mutated(draw: st.DrawFn, doc: Any) -> Any:
    """*doc* with zero to three mutations at any depth (see the module docstring)."""
    for _ in range(draw(st.integers(0, 3))):
        doc = draw(_mutate_once(doc))
    return doc


@st.composite
def encoded(draw: st.DrawFn, text: str) -> bytes:
    """The bytes of *text*, as is or re-encoded, truncated or damaged (see the module docstring)."""
    data = text.encode("utf-8", "surrogatepass")
    # Mostly intact (a damaged encoding stops at the first parse; the fuzzers aim at the deep fields). A
    # band inside the range, since Hypothesis draws an integer's bounds more often than the rest.
    how = "utf-8"
    if 40 <= draw(st.integers(0, 99)) < 70:
        how = draw(st.sampled_from(["bom", "truncate", "utf-16", "nul", "invalid"]))
    if how == "utf-8":
        return data
    if how == "bom":
        return b"\xef\xbb\xbf" + data
    if how == "truncate":
        return data[: draw(st.integers(0, len(data)))]
    if how == "utf-16":
        return text.encode("utf-16", "surrogatepass")
    at = draw(st.integers(0, len(data)))
    return data[:at] + (b"\x00" if how == "nul" else b"\xff") + data[at:]


def json_text(doc: Any) -> str:
    """*doc* as JSON (NaN and the infinities as Python's writer spells them: what a careless tool writes)."""
    return json.dumps(doc, ensure_ascii=False)


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x) for x in v if x is not None) + "]"
    if isinstance(v, dict):
        return (
            "{"
            + ", ".join(f"{json.dumps(str(k))} = {_toml_value(x)}" for k, x in v.items() if x is not None)
            + "}"
        )
    return '""'  # TOML has no null: an empty string stands in


def toml_text(doc: Any) -> str:
    """*doc* (an object) as a TOML document: scalars and arrays first, then one table per object value.
    A null is left out (TOML has none); a document that is not an object becomes one key ``value``."""
    if not isinstance(doc, dict):
        doc = {"value": doc}
    head = [
        f"{json.dumps(str(k))} = {_toml_value(v)}"
        for k, v in doc.items()
        if v is not None and not isinstance(v, dict)
    ]
    tables = [
        f"[{json.dumps(str(k))}]\n"
        + "".join(f"{json.dumps(str(kk))} = {_toml_value(vv)}\n" for kk, vv in v.items() if vv is not None)
        for k, v in doc.items()
        if isinstance(v, dict)
    ]
    return "\n".join(head) + "\n" + "\n".join(tables)


def fuzz_settings(ci: int, thorough: int) -> settings:
    """Settings for a fuzz test: *ci* examples (``ci``, ``quick``) or *thorough* (``thorough``)."""
    profile = os.environ.get("HYPOTHESIS_PROFILE", "ci")
    return settings(max_examples=thorough if profile == "thorough" else ci)
