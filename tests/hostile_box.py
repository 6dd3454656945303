"""What the hostile-input tests share (``test_hostile.py``, ``test_hostile_runtime.py``): the sandbox that
stands in for a user's machine, the ``memsim`` console script run inside it, the one-error-line checks and
the files the cases are made of (a toy trace, saved examples of the toy design).

Each command runs ``memsim`` (the installed console script) in a subprocess whose ``HOME``, ``TMPDIR`` and
working directory are inside a fresh sandbox directory, with a minimal environment. The scenario used is
``tests/data/hostile_toy.py``, copied into the sandbox and run by path as a user's script would be; its
loose ``step_s`` bound lets the clock's own limit be what refuses a step. Saved examples belong to the toy
design ``tests/data/plugin/hostiletoy`` (visible through ``PYTHONPATH``, as an installed design would be):
its one claim never fails and bounds its step costs, so neither a claim run nor a replay depends on the
built-in designs.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"
TOY = DATA / "hostile_toy.py"
_SCRIPT = Path(sys.executable).parent / "memsim"
MEMSIM = [str(_SCRIPT)] if _SCRIPT.exists() else [sys.executable, "-m", "sim.cli"]
SUFFIX_CLAIM = "merchantbench.suffix-eviction"  # a built-in claim with a small example
#: The toy design (tests/data/plugin/hostiletoy): a claim that never fails, with bounded step costs.
PLUGIN_ENV = {"PYTHONPATH": str(DATA / "plugin")}
TOY_CLAIM = "hostiletoy.never-fails"


@dataclass
class Run:
    """A finished ``memsim`` process."""

    code: int
    out: str
    err: str


class Sandbox:
    """A directory standing in for the user's machine: ``home/``, ``tmp/`` and the working dir ``work/``."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.home = base / "home"
        self.tmp = base / "tmp"
        self.work = base / "work"
        for d in (self.home, self.tmp, self.work):
            d.mkdir()
        self.toy = self.work / "toy.py"
        shutil.copyfile(TOY, self.toy)
        #: Extra environment of every command (a case that needs the toy design sets PLUGIN_ENV).
        self.extra_env: dict[str, str] = {}

    def env(self, **extra: str) -> dict[str, str]:
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.home),
            "TMPDIR": str(self.tmp),
            "LANG": "C.UTF-8",
            "COLUMNS": "200",
            "PYTHONFAULTHANDLER": "1",  # a command that hangs can be made to show its stacks (SIGABRT)
        }
        env.update(self.extra_env)
        env.update(extra)
        return env

    def popen(self, *args: str, **env: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [*MEMSIM, *args],
            cwd=self.work,
            env=self.env(**env),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,  # its own process group: killpg is a terminal's Ctrl-C
        )

    def run(self, *args: str, timeout: float = 180, **env: str) -> Run:
        return self.call([*MEMSIM, *args], timeout=timeout, **env)

    def call(self, argv: list[str], *, timeout: float = 180, **env: str) -> Run:
        proc = subprocess.run(
            argv, cwd=self.work, env=self.env(**env), capture_output=True, text=True, timeout=timeout
        )
        return Run(proc.returncode, proc.stdout, proc.stderr)

    def snapshot(self) -> dict[str, tuple[str, str]]:
        """Every path under the sandbox: its kind and (for files) a hash of its bytes."""
        out: dict[str, tuple[str, str]] = {}
        for dirpath, dirs, files in os.walk(self.base):
            for name in dirs + files:
                p = Path(dirpath) / name
                rel = p.relative_to(self.base).as_posix()
                if p.is_symlink():
                    out[rel] = ("link", os.readlink(p))
                elif p.is_dir():
                    out[rel] = ("dir", "")
                else:
                    try:
                        out[rel] = ("file", hashlib.sha256(p.read_bytes()).hexdigest())
                    except OSError:
                        out[rel] = ("special", "")
        return out


def changed(before: dict[str, tuple[str, str]], after: dict[str, tuple[str, str]]) -> set[str]:
    return {k for k in before.keys() | after.keys() if before.get(k) != after.get(k)}


def outside(paths: set[str], *allowed: str) -> set[str]:
    """The changed paths that lie outside every allowed directory (and are not its new parents)."""
    return {
        p for p in paths if not any(p == a or p.startswith(a + "/") or a.startswith(p + "/") for a in allowed)
    }


def progress_removed(err: str) -> str:
    """*err* without the progress lines a long command writes off a terminal (``sim.progress.phase``:
    ``memsim: `` then anything but ``error:``), which may precede an interruption's error line."""
    lines = err.splitlines(keepends=True)
    return "".join(ln for ln in lines if ln.startswith("memsim: error: ") or not ln.startswith("memsim: "))


def assert_one_error_line(err: str, *fragments: str) -> None:
    """Exactly one line on stderr besides progress lines, a ``memsim: error:`` line, no traceback, no
    blank line, no control character (a terminal escape in the input is shown escaped)."""
    err = progress_removed(err)
    assert err.count("\n") == 1 and err.endswith("\n"), err
    assert err.startswith("memsim: error: "), err
    assert err[:-1].isprintable(), err
    assert "Traceback" not in err
    for f in fragments:
        assert f in err, err


def assert_refused(run: Run, *fragments: str) -> None:
    """Exit code 2, nothing on stdout, one error line naming the problem."""
    assert run.code == 2, run
    assert run.out == "", run
    assert_one_error_line(run.err, *fragments)


# -- files the cases are made of ----------------------------------------------------------------------
def trace_of_toy(box: Sandbox) -> Path:
    """A complete trace of the toy scenario, in ``work/src/`` (written in-process: the command under
    test is the replay)."""
    from sim import scenario as sc

    path = box.work / "src" / "toy.db"
    sc.execute(sc.load_script(box.toy), trace_path=path)
    return path


def edit(db: Path, *sql: str) -> Path:
    con = sqlite3.connect(db)
    for statement in sql:
        con.execute(statement)
    con.commit()
    con.close()
    return db


def saved_example(box: Sandbox, example: object, **fields: object) -> Path:
    """A saved example of the toy design's claim (a list of step costs, each at most 1,000), with
    *example* in it; the toy design becomes visible to the box's commands."""
    box.extra_env = PLUGIN_ENV
    doc = {"claim": TOY_CLAIM, "variant": "faithful", "seed": 0, "example": example, **fields}
    path = box.work / "example.json"
    path.write_text(json.dumps(doc))
    return path


def write(box: Sandbox, name: str, content: str | bytes) -> Path:
    path = box.work / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    return path


#: A user script without an object store (one step).
NO_STORE = '''"""A script without an object store.

Covers: nothing.
Scenario: one step.
"""

SYSTEM = "tracecraft"

def run(ctx):
    ctx.sim.clock("alice")
    return ["one step"]
'''
