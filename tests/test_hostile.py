"""Hostile input through the real console script: every failure says so with its contracted exit code.

Each case runs ``memsim`` (the installed console script) in a subprocess whose ``HOME``, ``TMPDIR`` and
working directory are inside a fresh sandbox directory, with a minimal environment. The exit-code
contract (README, "Exit codes"): 0 every verdict as expected; 1 a verdict failed; 2 bad input (exactly one
``memsim: error:`` line on stderr, nothing on stdout, nothing written); 130 interrupted (one line, partial
outputs removed; 143 for SIGTERM). Every case also snapshots the sandbox before and after: nothing may
change outside the run's own output directory (for a refused input: nothing at all).

The scenario used is ``tests/data/hostile_toy.py``, copied into the sandbox and run by path as a user's
script would be; its loose ``step_s`` bound lets the clock's own limit be what refuses a step. Saved
examples belong to the toy design ``tests/data/plugin/hostiletoy`` (visible through ``PYTHONPATH``, as an
installed design would be): its one claim never fails and bounds its step costs, so neither a claim run
nor a replay depends on the built-in designs. Waiting for a subprocess to reach a state (its partial trace
exists, its workers are up) polls that state; no assertion depends on how long anything takes, except
that an interrupt or a dead endpoint must end the command within the subprocess timeout. The last section
tests, in-process, the units behind the refusals (the clock's range, the outputs' checks).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

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


@pytest.fixture
def box(tmp_path: Path) -> Sandbox:
    return Sandbox(tmp_path)


def assert_one_error_line(err: str, *fragments: str) -> None:
    """Exactly one line on stderr, a ``memsim: error:`` line, no traceback, no blank line, no control
    character (a terminal escape in the input is shown escaped)."""
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


NO_STORE = '''"""A script without an object store.

Covers: nothing.
Scenario: one step.
"""

SYSTEM = "tracecraft"

def run(ctx):
    ctx.sim.clock("alice")
    return ["one step"]
'''

# Each case: a setup that returns the argument list (it may create files in the sandbox), and the
# fragments the one error line must contain. Cases run with the toy script, a scenario file, a trace
# or a saved example; all of them must be refused with exit code 2 and leave the sandbox as it was.
Setup = Callable[[Sandbox], list[str]]


def _a(*args: str) -> Setup:
    return lambda box: list(args)


def _under_afile(*args: str) -> Setup:
    """*args*, with ``afile`` a regular file in the working directory."""

    def setup(box: Sandbox) -> list[str]:
        write(box, "afile", "keep")
        return list(args)

    return setup


def _db_is_dir(box: Sandbox) -> list[str]:
    (box.work / "D" / "toy.db").mkdir(parents=True)
    return ["run", "toy.py", "--out", "D"]


def _with_dir(directory: str, *args: str) -> Setup:
    """*args*, with *directory* (where an output file must go) an existing directory."""

    def setup(box: Sandbox) -> list[str]:
        (box.work / directory).mkdir(parents=True)
        return list(args)

    return setup


def _root_is_file(box: Sandbox) -> list[str]:
    (box.work / "D").mkdir()
    write(box, "D/toy-root", "not a directory")
    return ["run", "toy.py", "--out", "D"]


def _toml(text: str | bytes, name: str = "s.toml") -> Setup:
    def setup(box: Sandbox) -> list[str]:
        write(box, name, text)
        return ["run", name, "--out", "o"]

    return setup


def _zero_link(box: Sandbox) -> list[str]:
    os.symlink("/dev/zero", box.work / "zero.toml")
    return ["run", "zero.toml"]


def _trace(*sql: str) -> Setup:
    def setup(box: Sandbox) -> list[str]:
        db = trace_of_toy(box)
        edit(db, *sql)
        return ["replay", str(db), "--scenario", "toy.py", "--out", "r"]

    return setup


def _truncated(box: Sandbox) -> list[str]:
    db = trace_of_toy(box)
    data = db.read_bytes()
    db.write_bytes(data[: len(data) // 2])
    return ["replay", str(db), "--scenario", "toy.py"]


def _example(example: object, **fields: object) -> Setup:
    def setup(box: Sandbox) -> list[str]:
        return ["replay", str(saved_example(box, example, **fields)), "--out", "r"]

    return setup


def _example_text(text: str | bytes) -> Setup:
    def setup(box: Sandbox) -> list[str]:
        box.extra_env = PLUGIN_ENV
        return ["replay", str(write(box, "example.json", text)), "--out", "r"]

    return setup


def _script(text: str) -> Setup:
    def setup(box: Sandbox) -> list[str]:
        write(box, "user.py", text)
        return ["run", "user.py", "--out", "o"]

    return setup


def _no_store(box: Sandbox) -> list[str]:
    write(box, "nostore.py", NO_STORE)
    return ["run", "nostore.py", "--store", "moto"]


def _same_output(box: Sandbox) -> list[str]:
    return ["claims", "--claim", SUFFIX_CLAIM, "--json", "same.out", "--markdown", "same.out"]


DEEP_JSON = '{"claim": "' + TOY_CLAIM + '", "example": ' + "[" * 200_000 + "]" * 200_000 + "}"
DEEP_TOML = 'scenario = "toy.py"\nx = ' + "[" * 100_000 + "]" * 100_000 + "\n"
DEEP_TABLES = 'scenario = "toy.py"\n' + "a." * 50_000 + "b = 1\n"
BIG_TOML = 'scenario = "toy.py"\n' + "# padding\n" * 200_000

REFUSED: dict[str, tuple[Setup, tuple[str, ...]]] = {
    # scenario parameters and the clock
    "param step_s=Infinity": (_a("run", "toy.py", "--param", "step_s=Infinity", "--out", "o"), ("step_s",)),
    "param step_s=NaN": (_a("run", "toy.py", "--param", "step_s=NaN"), ("step_s",)),
    "param step_s=1e300 (clock)": (
        _a("run", "toy.py", "--param", "step_s=1e300", "--out", "o"),
        ("cannot represent",),
    ),
    "param step_s=1e12 (clock)": (_a("run", "toy.py", "--param", "step_s=1e12", "--out", "o"), ("2262",)),
    "param steps=true": (_a("run", "toy.py", "--param", "steps=true"), ("steps", "integer")),
    'param steps="7"': (_a("run", "toy.py", "--param", 'steps="7"'), ("steps", "integer")),
    "param steps over its bound": (_a("run", "toy.py", "--param", "steps=100000000"), ("steps",)),
    "unknown param": (_a("run", "toy.py", "--param", "colour=red"), ("no parameter 'colour'",)),
    "param without =": (_a("run", "toy.py", "--param", "steps"), ("KEY=VALUE",)),
    "option carrying a terminal escape": (_a("run", "toy.py", "--\x1b[2Jcolour"), ("\\x1b[2J",)),
    "seed over 2**63": (_a("run", "toy.py", "--seed", "99999999999999999999"), ("--seed",)),
    # faults
    "fault skew 1e400": (
        _a("run", "toy.py", "--fault", "skew:alice=1e400", "--out", "o"),
        ("skew must be within",),
    ),
    "fault drift 1e300": (_a("run", "toy.py", "--fault", "drift:alice=1e300"), ("drift rate",)),
    "fault skews adding up": (
        _a("run", "toy.py", "--fault", "skew:alice=9e8", "--fault", "skew:alice=9e8"),
        ("add up",),
    ),
    "fault drifts stopping the clock": (
        _a("run", "toy.py", "--fault", "drift:alice=-0.9", "--fault", "drift:alice=-0.9"),
        ("add up",),
    ),
    "fault on an unknown agent": (
        _a("run", "toy.py", "--fault", "skew:bob=100", "--out", "o"),
        ("skew:bob=100", "never created", "alice"),
    ),
    "second reader nobody": (_a("run", "toy.py", "--fault", "second-reader:nobody"), ("never created",)),
    "point of another design": (
        _a("run", "toy.py", "--fault", "crash@nemsy.ingest.after_index"),
        ("another design",),
    ),
    "unknown fault point": (
        _a("run", "toy.py", "--fault", "crash@tracecraft.no.where"),
        ("unknown fault point",),
    ),
    "occurrence #0": (_a("run", "toy.py", "--fault", "crash@nemsy.ingest.after_index#0"), ("occurrence",)),
    # stores
    "store http://": (_a("run", "toy.py", "--store", "http://", "--out", "o"), ("invalid endpoint URL",)),
    "store http://[::1": (_a("run", "toy.py", "--store", "http://[::1"), ("invalid endpoint URL",)),
    "store port out of range": (
        _a("run", "toy.py", "--store", "http://127.0.0.1:99999"),
        ("invalid endpoint",),
    ),
    "store of an unknown kind": (_a("run", "toy.py", "--store", "ftp://x"), ("unknown store",)),
    "store URL with a password": (
        _a("run", "toy.py", "--store", "http://me:s3cret@127.0.0.1:9"),
        ("credentials",),
    ),
    "store on a scenario without one": (_no_store, ("uses no object store",)),
    # output paths
    "--out under a file": (_under_afile("run", "toy.py", "--out", "afile/sub"), ("not a directory",)),
    "--out where NAME.db is a directory": (_db_is_dir, ("is a directory",)),
    "--out where NAME-root is a file": (_root_is_file, ("toy-root", "not a directory")),
    "--html where NAME.html is a directory": (
        _with_dir("D/toy.html", "run", "toy.py", "--out", "D", "--html"),
        ("toy.html is a directory",),
    ),
    "--out with a NUL-free overlong name": (_a("run", "toy.py", "--out", "x" * 300), ("255 bytes",)),
    # scenario files and scripts
    "run /dev/zero": (_a("run", "/dev/zero"), ("/dev/zero",)),
    "scenario file linked to /dev/zero": (_zero_link, ("not a regular file",)),
    "scenario file over 1 MiB": (_toml(BIG_TOML), ("limit",)),
    "TOML nested 100k deep": (_toml(DEEP_TOML), ("nested deeper",)),
    "TOML dotted keys 50k deep": (_toml(DEEP_TABLES), ("nested deeper",)),
    'TOML seed = "7"': (_toml('scenario = "toy.py"\nseed = "7"\n'), ("seed",)),
    "TOML seed = true": (_toml('scenario = "toy.py"\nseed = true\n'), ("seed",)),
    'TOML param steps = "7"': (_toml('scenario = "toy.py"\n[params]\nsteps = "7"\n'), ("steps",)),
    "TOML param step_s = inf": (_toml('scenario = "toy.py"\n[params]\nstep_s = inf\n'), ("step_s",)),
    "TOML with a datetime param": (_toml('scenario = "toy.py"\n[params]\nsteps = 2026-01-01\n'), ("steps",)),
    "binary TOML": (_toml(b"\x00\x01scenario"), ("binary",)),
    "missing script": (_a("run", "missing.py"), ("not found",)),
    "script exits at import": (_script("import sys\nsys.exit(3)\n"), ("exited while being imported",)),
    "script raises in run": (
        _script('SYSTEM = "tracecraft"\n\n\ndef run(ctx):\n    raise ValueError("boom")\n'),
        ("raised ValueError at line 5", "boom"),
    ),
    "script returns a number": (
        _script('SYSTEM = "tracecraft"\n\n\ndef run(ctx):\n    return 5\n'),
        ("list of lines",),
    ),
    "script of an unknown design": (
        _script('SYSTEM = "nope"\n\n\ndef run(ctx):\n    return []\n'),
        ("nope",),
    ),
    # traces
    "trace with a renamed column": (
        _trace("ALTER TABLE ops RENAME COLUMN detail TO details"),
        ("not a memsim trace",),
    ),
    "trace without its ops table": (_trace("DROP TABLE ops"), ("not a memsim trace",)),
    "trace meta seed abc": (_trace("UPDATE meta SET value = 'abc' WHERE key = 'seed'"), ("seed",)),
    "trace meta seed -1": (_trace("UPDATE meta SET value = '-1' WHERE key = 'seed'"), ("seed",)),
    "trace meta params {not json": (
        _trace("UPDATE meta SET value = '{not json' WHERE key = 'params'"),
        ("params",),
    ),
    "trace meta params over the bounds": (
        _trace("""UPDATE meta SET value = '{"steps": 100000000}' WHERE key = 'params'"""),
        ("steps",),
    ),
    "trace meta faults naming nobody": (
        _trace("""UPDATE meta SET value = '["skew:nobody=1"]' WHERE key = 'faults'"""),
        ("never created",),
    ),
    "trace meta faults not a list": (
        _trace("""UPDATE meta SET value = '"x"' WHERE key = 'faults'"""),
        ("faults",),
    ),
    "incomplete trace": (_trace("DELETE FROM meta WHERE key = 'complete'"), ("incomplete",)),
    "trace of another schema": (
        _trace("UPDATE meta SET value = '1' WHERE key = 'schema_version'"),
        ("schema",),
    ),
    "truncated trace": (_truncated, ("not a memsim trace",)),
    "trace whose ops is an endless view": (
        _trace(
            "ALTER TABLE ops RENAME TO ops_real",
            "CREATE VIEW ops AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) "
            "SELECT x AS seq, 0.0 AS time, 'a' AS agent, 's' AS system, 'o' AS op, 'ok' AS phase, "
            "'{}' AS detail FROM c",
        ),
        ("ops is a view",),
    ),
    "trace with a 2 MiB meta value": (
        _trace("INSERT INTO meta VALUES ('junk', replace(hex(zeroblob(1048576)), '00', 'xx'))"),
        ("limit",),
    ),
    "trace with 2,000 meta keys": (
        _trace(
            "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 2000) "
            "INSERT INTO meta SELECT 'k' || x, 'v' FROM c"
        ),
        ("meta table",),
    ),
    "trace of a script, replayed without it": (
        lambda box: ["replay", str(trace_of_toy(box))],
        ("--scenario PATH",),
    ),
    # saved examples
    "example 42": (_example(42), ("does not fit",)),
    "example [[1,2,3]]": (_example([[1, 2, 3]]), ("does not fit",)),
    "example with a 10**15 step (would run for days)": (_example([10**15]), ("does not fit", "1000")),
    "example with 21 steps (max 20)": (_example([1] * 21), ("does not fit",)),
    "example of an unknown claim": (_example({}, claim="nope.nothing"), ("unknown claim",)),
    "example with seed as a string": (_example({}, seed="7"), ("seed",)),
    "example with an unknown variant": (_example({}, variant="sideways"), ("variant",)),
    "example 200k deep": (_example_text(DEEP_JSON), ("nested deeper",)),
    "example with NaN": (_example_text('{"claim": "' + TOY_CLAIM + '", "example": [NaN]}'), ("NaN",)),
    "example with a 5,000-digit integer": (
        _example_text('{"claim": "' + TOY_CLAIM + '", "example": [1' + "0" * 5000 + "]}"),
        ("not valid JSON",),
    ),
    "binary example": (_example_text(b"\x00\x01\xff\xfe" * 64), ("binary",)),
    "example not UTF-8": (_example_text(b'{"claim": "\xff"}'), ("UTF-8",)),
    "example over 1 MiB": (_example_text(" " * (2 << 20)), ("limit",)),
    "replay /dev/zero": (_a("replay", "/dev/zero"), ("not a regular file",)),
    "replay a directory": (_a("replay", "."), ("not a regular file",)),
    # claims outputs: refused before any claim runs
    "claims --json under /proc": (_a("claims", "--json", "/proc/memsim.json"), ("--json",)),
    "claims --markdown under a file": (
        _under_afile("claims", "--markdown", "afile/x.md"),
        ("not a directory",),
    ),
    "claims --save under /proc": (_a("claims", "--save", "/proc/memsim-examples"), ("--save",)),
    "claims --json and --markdown on one file": (_same_output, ("same file",)),
    "claims --json onto a directory": (_a("claims", "--json", "."), ("is a directory",)),
    # bench options
    "bench --scheduler without dask": (_a("bench", "--scheduler", "tcp://127.0.0.1:1"), ("--executor dask",)),
    "bench dask scheduler refusing": (
        _a("bench", "--executor", "dask", "--scheduler", "tcp://127.0.0.1:1", "--out", "b"),
        ("cannot reach the Dask scheduler",),
    ),
    "bench dask scheduler malformed": (
        _a("bench", "--executor", "dask", "--scheduler", "udp://x:y", "--out", "b"),
        ("invalid Dask scheduler address",),
    ),
    "bench --steps 100000000": (_a("bench", "--steps", "100000000"), ("--steps",)),
    "bench --budgets 1e400": (_a("bench", "--budgets", "1e400"), ("--budgets",)),
    "bench --budgets too many": (
        _a("bench", "--budgets", ",".join(str(500 + i) for i in range(40))),
        ("at most",),
    ),
    "bench --seeds 0": (_a("bench", "--seeds", "0"), ("--seeds",)),
    "bench --workers 1000": (_a("bench", "--workers", "1000"), ("--workers",)),
    "bench --out under a file": (_under_afile("bench", "--out", "afile/x"), ("not a directory",)),
    "bench --workload /dev/zero": (_a("bench", "--workload", "/dev/zero"), ("not a regular file",)),
    "bench --out where results.csv is a directory": (
        _with_dir("B/results.csv", "bench", "--out", "B", "--seeds", "1"),
        ("results.csv is a directory",),
    ),
    "bench unknown design": (_a("bench", "--designs", "nope"), ("unknown design",)),
    # report
    "report of /dev/zero": (_a("report", "/dev/zero", "-o", "r.html"), ("not a regular file",)),
    "report of a JSON that is not a ledger": (
        lambda box: ["report", str(write(box, "x.json", "[1]")), "-o", "r.html"],
        ("not a claims ledger",),
    ),
    "report onto its own input": (
        lambda box: ["report", str(write(box, "l.json", '{"claims": []}')), "-o", "l.json"],
        ("overwrite",),
    ),
}


@pytest.mark.parametrize("case", list(REFUSED), ids=list(REFUSED))
def test_refused_input(box: Sandbox, case: str) -> None:
    """Bad input: exit code 2, nothing on stdout, one ``memsim: error:`` line, the sandbox unchanged."""
    setup, fragments = REFUSED[case]
    args = setup(box)
    before = box.snapshot()

    run = box.run(*args, timeout=60)

    assert_refused(run, *fragments)
    assert changed(before, box.snapshot()) == set()


# -- exit code 1: a verdict failed ----------------------------------------------------------------------
def test_replay_of_a_trace_missing_one_op_differs(box: Sandbox) -> None:
    """Deleting one row of ``ops`` makes the replay print ``TRACE DIFFERS`` and exit 1 (not 0)."""
    db = edit(trace_of_toy(box), "DELETE FROM ops WHERE seq = (SELECT max(seq) FROM ops)")

    run = box.run("replay", str(db), "--scenario", "toy.py")

    assert run.code == 1, run
    assert "TRACE DIFFERS" in run.out
    assert "memsim: error" not in run.err


def test_replay_of_an_identical_trace_exits_0(box: Sandbox) -> None:
    """The control: the same trace untouched replays identically, exit 0."""
    db = trace_of_toy(box)

    run = box.run("replay", str(db), "--scenario", "toy.py")

    assert run.code == 0, run
    assert "identical trace" in run.out


def test_saved_example_that_does_not_violate_exits_1(box: Sandbox) -> None:
    """A faithful example that does not violate its claim prints NOT AS EXPECTED and exits 1; the same
    example replayed as fixed (it must hold, and does) exits 0."""
    example = saved_example(box, [1, 2])

    faithful = box.run("replay", str(example))
    fixed = box.run("replay", str(example), "--variant", "fixed")

    assert faithful.code == 1, faithful
    assert "NOT AS EXPECTED" in faithful.out
    assert (fixed.code, "replay as expected" in fixed.out) == (0, True), fixed


def test_claim_whose_faithful_search_finds_nothing_exits_1(box: Sandbox) -> None:
    """``memsim claims`` on a claim whose faithful property never fails prints the ledger and exits 1
    (it exited 0 before), and saves no example (there is none to save)."""
    box.extra_env = PLUGIN_ENV

    run = box.run("claims", "--system", "hostiletoy", "--profile", "quick", "--save", "examples")

    assert run.code == 1, run
    assert "0/1 counterexamples found" in run.out
    assert "memsim: error" not in run.err
    assert not (box.work / "examples").exists()


def test_fault_that_never_fires_exits_1(box: Sandbox) -> None:
    """``crash@POINT#999`` on a run that reaches the point fewer times: the run's report, then exit 1."""
    run = box.run("run", "nemsy_title_collision", "--fault", "crash@nemsy.ingest.after_index#999")

    assert run.code == 1, run
    assert run.out
    assert run.err.count("memsim: error: ") == 1 and "never fired" in run.err


# -- exit code 130 and kill -9: no partial output survives ------------------------------------------------
def descendants(pid: int) -> list[int]:
    """The processes below *pid* (Linux /proc)."""
    out: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for t in tasks:
        try:
            kids = Path(f"/proc/{pid}/task/{t}/children").read_text().split()
        except OSError:
            continue
        for k in kids:
            out += [int(k), *descendants(int(k))]
    return out


def wait_for(cond: Callable[[], bool], what: str, proc: subprocess.Popen[str], limit: float = 120) -> None:
    """Poll *cond* until it holds (the process must still be running); fail after *limit* seconds."""
    deadline = time.monotonic() + limit
    while not cond():
        if proc.poll() is not None:
            _out, err = proc.communicate()
            pytest.fail(f"memsim ended ({proc.returncode}) before {what}: {err[-2000:]}")
        if time.monotonic() > deadline:
            proc.kill()
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.02)


def partials(d: Path) -> list[Path]:
    """The staged (hidden, ``.partial-PID``) files under *d*, without SQLite's journal files."""
    found = d.rglob(".*.partial-*") if d.exists() else []
    return sorted(p for p in found if not p.name.endswith("-journal"))


def interrupt(proc: subprocess.Popen[str]) -> Run:
    """Ctrl-C as a terminal sends it (to the whole process group); the command must end in seconds."""
    os.killpg(proc.pid, signal.SIGINT)
    out, err = proc.communicate(timeout=20)
    return Run(proc.returncode, out, err)


def assert_group_gone(pgid: int) -> None:
    """No process of the command's group survives it (workers are stopped, not orphaned)."""
    deadline = time.monotonic() + 20
    while True:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return
        if time.monotonic() > deadline:
            os.killpg(pgid, signal.SIGKILL)
            pytest.fail("a worker outlived the interrupted command")
        time.sleep(0.02)


def started_after(args: list[str]) -> int:
    """How many processes below memsim mean its workers run: ``bench --workers 2`` on Linux forks its one
    worker (nothing else starts); a fork server (claims) or a Dask cluster starts its own process first."""
    local_bench = args[0] == "bench" and "dask" not in args
    return 1 if local_bench and sys.platform == "linux" else 2


needs_proc = pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="needs Linux /proc")


@needs_proc
def test_ctrl_c_during_run_exits_130_and_leaves_no_trace(box: Sandbox) -> None:
    """Ctrl-C while ``memsim run --out D`` writes its trace: exit 130, one line, nothing left in D."""
    before = box.snapshot()
    proc = box.popen("run", "toy.py", "--param", "steps=10000000", "--out", "D")
    wait_for(lambda: bool(partials(box.work / "D")), "the trace is being written", proc)

    run = interrupt(proc)

    assert run.code == 130, run
    assert run.out == ""
    assert_one_error_line(run.err, "interrupted")
    assert not (box.work / "D").exists()
    assert changed(before, box.snapshot()) == set()


@needs_proc
@pytest.mark.parametrize(
    "args",
    [
        ["bench", "--workers", "2", "--out", "B", "--no-plots"],
        ["claims", "--workers", "2", "--json", "C/ledger.json", "--save", "C/examples"],
        ["bench", "--executor", "dask", "--workers", "2", "--out", "B", "--no-plots"],
    ],
    ids=["bench --workers 2", "claims --workers 2", "bench --executor dask"],
)
def test_ctrl_c_with_workers_exits_130_promptly(box: Sandbox, args: list[str]) -> None:
    """Ctrl-C once the worker processes run: exit 130 within seconds, one line, no output file, and no
    worker left behind."""
    before = box.snapshot()
    proc = box.popen(*args)
    wait_for(lambda: len(descendants(proc.pid)) >= started_after(args), "the workers have started", proc)

    run = interrupt(proc)

    assert run.code == 130, run
    assert run.out == ""
    assert_one_error_line(run.err, "interrupted")
    assert_group_gone(proc.pid)
    assert outside(changed(before, box.snapshot()), "home/.cache/memsim") == set()


@needs_proc
@pytest.mark.parametrize(
    "args",
    [
        ["run", "toy.py", "--param", "steps=10000000", "--out", "D"],
        ["bench", "--workers", "2", "--out", "D", "--no-plots"],
    ],
    ids=["run", "bench --workers 2"],
)
def test_sigterm_cleans_up_like_ctrl_c(box: Sandbox, args: list[str]) -> None:
    """SIGTERM to memsim alone (what ``timeout`` and a cancelled CI job send): exit 143, one line,
    nothing left under D, no worker left behind."""
    before = box.snapshot()
    proc = box.popen(*args)
    if args[0] == "run":
        wait_for(lambda: bool(partials(box.work / "D")), "the trace is being written", proc)
    else:
        wait_for(lambda: len(descendants(proc.pid)) >= started_after(args), "the workers have started", proc)

    os.kill(proc.pid, signal.SIGTERM)
    out, err = proc.communicate(timeout=20)

    assert proc.returncode == 143, err
    assert out == ""
    assert_one_error_line(err, "terminated")
    assert_group_gone(proc.pid)
    assert not (box.work / "D").exists()
    assert outside(changed(before, box.snapshot()), "home/.cache/memsim") == set()


@needs_proc
def test_kill_9_leaves_no_trace_anything_accepts(box: Sandbox) -> None:
    """``kill -9`` mid-run: no file under the trace's name; the partial file is refused by read_trace and
    by ``memsim replay`` (it has no completeness marker)."""
    from sim.trace import TraceError, read_trace

    proc = box.popen("run", "toy.py", "--param", "steps=10000000", "--out", "D")
    wait_for(
        lambda: bool(partials(box.work / "D")) and partials(box.work / "D")[0].stat().st_size > 200_000,
        "ops are flushed to the partial trace",
        proc,
    )

    os.killpg(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=20)

    assert not (box.work / "D" / "toy.db").exists()
    (partial,) = partials(box.work / "D")
    with pytest.raises(TraceError):
        read_trace(partial)
    assert_refused(box.run("replay", str(partial), "--scenario", "toy.py"))


# -- replay and stores never dial what a file names ----------------------------------------------------
@pytest.fixture
def listener() -> socket.socket:
    """A TCP listener on 127.0.0.1 that never answers (its backlog accepts, nobody reads)."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(("127.0.0.1", 0))
    s.listen(8)
    s.setblocking(False)
    yield s
    s.close()


def was_dialled(s: socket.socket) -> bool:
    try:
        conn, _ = s.accept()
    except BlockingIOError:
        return False
    conn.close()
    return True


CREDENTIALS = {"AWS_ACCESS_KEY_ID": "memsim", "AWS_SECRET_ACCESS_KEY": "memsim-secret"}


def test_replay_never_dials_the_store_in_a_trace(box: Sandbox, listener: socket.socket) -> None:
    """A trace whose meta names an endpoint replays on memory: the endpoint is never connected to."""
    url = f"http://127.0.0.1:{listener.getsockname()[1]}"
    db = edit(trace_of_toy(box), f"UPDATE meta SET value = '{url}' WHERE key = 'store'")

    run = box.run("replay", str(db), "--scenario", "toy.py", **CREDENTIALS)

    assert run.code == 0, run
    assert "store memory" in run.err
    assert not was_dialled(listener)


def test_black_holed_endpoint_fails_in_seconds(box: Sandbox, listener: socket.socket) -> None:
    """``--store`` naming an endpoint that accepts but never answers: one line, exit 2, within the
    subprocess timeout (the first requests have short timeouts), and no output written. The listener
    saw the connection, which shows the replay test above can see one."""
    url = f"http://127.0.0.1:{listener.getsockname()[1]}"
    before = box.snapshot()

    run = box.run("run", "toy.py", "--store", url, "--out", "o", timeout=30, **CREDENTIALS)

    assert_refused(run, "cannot use the S3 endpoint")
    assert was_dialled(listener)
    assert changed(before, box.snapshot()) == set()


def test_refused_endpoint_is_one_line(box: Sandbox) -> None:
    """A refused connection (nothing listens on port 1): exit 2, one line, no --out directory."""
    run = box.run("run", "toy.py", "--store", "http://127.0.0.1:1", "--out", "o", **CREDENTIALS)

    assert_refused(run, "cannot use the S3 endpoint")
    assert not (box.work / "o").exists()


def test_endpoint_password_is_never_echoed(box: Sandbox) -> None:
    """An endpoint URL with ``USER:PASSWORD@`` is refused without printing the password."""
    run = box.run("run", "toy.py", "--store", "http://me:s3cret@127.0.0.1:9", "--out", "o")

    assert_refused(run, "credentials")
    assert "s3cret" not in run.err


# -- read-only outputs ----------------------------------------------------------------------------------
@pytest.fixture
def readonly_dir(box: Sandbox) -> Path:
    """A directory nobody can write to (mode 555, and immutable when running as root)."""
    d = box.work / "ro"
    d.mkdir()
    d.chmod(0o555)
    immutable = False
    if os.access(d, os.W_OK):  # root ignores the mode bits
        if shutil.which("chattr") is None or subprocess.run(["chattr", "+i", str(d)]).returncode != 0:
            d.chmod(0o755)
            pytest.skip("cannot make a read-only directory here")
        immutable = True
    yield d
    if immutable:
        subprocess.run(["chattr", "-i", str(d)], check=True)
    d.chmod(0o755)


@pytest.mark.parametrize(
    "args",
    [
        ["run", "toy.py", "--out", "ro"],
        ["run", "toy.py", "--out", "ro/sub"],
        ["claims", "--json", "ro/ledger.json"],
        ["claims", "--markdown", "ro/ledger.md"],
        ["claims", "--save", "ro/examples"],
        ["bench", "--out", "ro/bench"],
    ],
    ids=lambda a: " ".join(a),
)
def test_read_only_output_is_refused_before_work(box: Sandbox, readonly_dir: Path, args: list[str]) -> None:
    """An output under a read-only directory: exit 2 and one line, before anything runs."""
    before = box.snapshot()

    assert_refused(box.run(*args), "cannot write")
    assert changed(before, box.snapshot()) == set()


@pytest.fixture
def full_disk(box: Sandbox) -> Path:
    """A 32 kB tmpfs mounted in the sandbox (root only; skipped where mounting is not allowed)."""
    d = box.work / "full"
    d.mkdir()
    if (
        os.geteuid() != 0
        or subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=32k", "tmpfs", str(d)], capture_output=True
        ).returncode
    ):
        pytest.skip("cannot mount a small file system here")
    yield d
    subprocess.run(["umount", str(d)], check=True)


@pytest.mark.parametrize(
    "args",
    [
        ["run", "toy.py", "--param", "steps=100000", "--out", "full/D"],
        ["bench", "--seeds", "1", "--budgets", "8000", "--steps", "20", "--out", "full/B"],
    ],
    ids=["run", "bench"],
)
def test_full_disk_is_one_line_and_leaves_nothing(box: Sandbox, full_disk: Path, args: list[str]) -> None:
    """A disk that fills up during the write: exit 2, one ``cannot write`` line, and nothing left on it
    (no partial file, no directory)."""
    run = box.run(*args, MEMSIM_DEBUG=os.environ.get("MEMSIM_DEBUG", ""))

    assert_refused(run, "cannot write")
    assert list(full_disk.iterdir()) == []


# -- outputs that work ----------------------------------------------------------------------------------
def test_out_with_dot_dot_creates_no_stray_directory(box: Sandbox) -> None:
    """``--out a/../dd`` writes dd/toy.db and creates no ``a/``."""
    before = box.snapshot()

    run = box.run("run", "toy.py", "--out", "a/../dd")

    assert run.code == 0, run
    assert (box.work / "dd" / "toy.db").is_file()
    assert not (box.work / "a").exists()
    assert outside(changed(before, box.snapshot()), "work/dd") == set()


def test_two_runs_into_one_out(box: Sandbox) -> None:
    """Two runs into one --out: both succeed, the second replaces the first's trace, which replays."""
    from sim.trace import read_trace

    first = box.run("run", "toy.py", "--out", "D", "--seed", "1")
    second = box.run("run", "toy.py", "--out", "D", "--seed", "2")

    assert (first.code, second.code) == (0, 0), (first, second)
    assert sorted(p.name for p in (box.work / "D").iterdir()) == ["toy.db"]
    assert read_trace(box.work / "D" / "toy.db").meta["seed"] == "2"


def test_run_writes_nothing_outside_its_out(box: Sandbox) -> None:
    """A successful run with --out changes nothing but --out (no __pycache__ beside the script, no
    temporary run root left in TMPDIR); without --out it changes nothing at all."""
    before = box.snapshot()
    assert box.run("run", "toy.py").code == 0
    assert changed(before, box.snapshot()) == set()

    assert box.run("run", "toy.py", "--out", "o").code == 0
    assert outside(changed(before, box.snapshot()), "work/o") == set()


# -- Hypothesis' home, progress output ------------------------------------------------------------------
@pytest.mark.parametrize(
    "args",
    [
        ["claims", "--claim", SUFFIX_CLAIM, "--profile", "quick"],
        ["demo", "--out", "demo"],
    ],
    ids=["claims", "demo"],
)
def test_no_hypothesis_directory_in_cwd(box: Sandbox, args: list[str]) -> None:
    """``memsim claims`` and ``memsim demo`` write no ``.hypothesis/`` into the working directory: its
    home is memsim's cache directory. Nothing else changes outside the outputs and that cache."""
    before = box.snapshot()

    run = box.run(*args, timeout=600)

    assert run.code == 0, run
    assert not (box.work / ".hypothesis").exists()
    # matplotlib keeps its font cache and config in the user's home, as it does for any program
    mpl = ("home/.cache/matplotlib", "home/.config/matplotlib")
    assert outside(changed(before, box.snapshot()), "work/demo", "home/.cache/memsim", *mpl) == set()


def test_no_progress_output_when_stderr_is_not_a_terminal(box: Sandbox) -> None:
    """With stderr a pipe, a long run, a claim run and a bench run print no progress bar, no carriage
    return, no escape sequence and no blank line on stderr: only their named output lines."""
    runs = [
        box.run("run", "toy.py", "--param", "steps=20000", "--out", "o"),
        box.run("claims", "--claim", SUFFIX_CLAIM, "--profile", "quick", "--json", "c.json"),
        box.run("bench", "--seeds", "1", "--budgets", "8000", "--steps", "20", "--out", "b", "--no-plots"),
    ]

    for run in runs:
        assert run.code == 0, run
        assert "\r" not in run.err and "\x1b" not in run.err and "\n\n" not in run.err, run.err
        assert all(line.startswith(("trace: ", "wrote ")) for line in run.err.splitlines()), run.err


# -- stdout that cannot take the report ----------------------------------------------------------------
@pytest.mark.parametrize(
    "args",
    [["doc", "coverage"], ["run", "toy.py", "--param", "steps=3000"], ["claims", "--system", "hostiletoy"]],
    ids=["doc", "run", "claims"],
)
def test_closed_stdout_pipe_ends_quietly_with_141(box: Sandbox, args: list[str]) -> None:
    """``memsim ... | head`` where the reader has gone: exit 141 (as SIGPIPE would), nothing on stderr;
    not 1, which would say a verdict failed."""
    box.extra_env = PLUGIN_ENV
    proc = subprocess.Popen(
        [*MEMSIM, *args],
        cwd=box.work,
        env=box.env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    err = proc.stderr.read()
    proc.wait(timeout=120)

    assert (proc.returncode, err) == (141, "")


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_stdout_on_a_full_device_is_one_line(box: Sandbox) -> None:
    """Stdout on a device that refuses every write (``> /dev/full``): exit 2 and one ``cannot write`` line,
    not an internal error."""
    with open("/dev/full", "w") as full:
        proc = subprocess.run(
            [*MEMSIM, "doc", "coverage"],
            cwd=box.work,
            env=box.env(),
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
        )

    assert proc.returncode == 2
    assert_one_error_line(proc.stderr, "cannot write the output", "No space left on device")


# -- the scenario script hook --------------------------------------------------------------------------
def test_script_main_hook_runs_like_memsim_run(box: Sandbox) -> None:
    """``python toy.py ARGS`` and ``python -m toy ARGS`` run the script as ``memsim run toy.py ARGS``."""
    via_memsim = box.run("run", "toy.py", "--seed", "3")
    via_python = box.call([sys.executable, "toy.py", "--seed", "3"])
    via_module = box.call([sys.executable, "-m", "toy", "--seed", "3"], PYTHONPATH=str(box.work))

    assert via_memsim.code == 0 and via_memsim.out
    assert (via_python.code, via_python.out) == (0, via_memsim.out), via_python
    assert (via_module.code, via_module.out) == (0, via_memsim.out), via_module


def test_script_main_hook_bad_input_is_one_line(box: Sandbox) -> None:
    """A bad option through the script hook is refused like ``memsim run``'s."""
    before = box.snapshot()

    run = box.call([sys.executable, "toy.py", "--param", "steps=true"])

    assert_refused(run, "steps")
    assert changed(before, box.snapshot()) == set()


def test_builtin_scenario_module_hook(box: Sandbox) -> None:
    """``python -m scenarios.NAME`` with a bad seed: exit 2 and one line (not a lookup of ``__main__``)."""
    run = box.call([sys.executable, "-m", "scenarios.merchantbench_id_aliasing", "--seed", "x"])

    assert_refused(run, "--seed")


def test_unguarded_main_call_runs_once(box: Sandbox) -> None:
    """A script that calls ``main(__name__)`` without the ``__main__`` guard still runs once, not
    recursively, under ``memsim run``."""
    write(box, "loose.py", NO_STORE + "\nfrom sim.scenario import main\n\nmain(__name__)\n")

    run = box.run("run", "loose.py")

    assert (run.code, run.out, run.err) == (0, "one step\n", "")


def test_worker_pools_run_with_a_long_tmpdir(box: Sandbox) -> None:
    """A ``TMPDIR`` too long for the fork server's socket (AF_UNIX paths stop near 104 bytes) does not
    break ``--workers``: the pool starts its workers with spawn instead."""
    long_tmp = box.tmp / ("t" * 90)
    long_tmp.mkdir()

    run = box.run(
        "bench", "--workers", "2", "--seeds", "2", "--budgets", "8000", "--steps", "20",
        "--out", "b", "--no-plots", TMPDIR=str(long_tmp),
    )  # fmt: skip

    assert run.code == 0, run
    assert (box.work / "b" / "results.csv").is_file()


# -- the units behind the refusals (in-process) ---------------------------------------------------------
@pytest.mark.parametrize(
    ("now", "offset_s", "drift"),
    [
        (1e300, 0.0, 0.0),
        (1e12, 0.0, 0.0),
        (float("inf"), 0.0, 0.0),
        (float("nan"), 0.0, 0.0),
        (0.0, -2e9, 0.0),
    ],
    ids=["1e300 s", "1e12 s", "inf", "nan", "before 1970"],
)
def test_clock_refuses_what_it_cannot_represent(now: float, offset_s: float, drift: float) -> None:
    """A reading outside 1970..2262 (64-bit nanoseconds) raises ClockRange, a one-line usage error."""
    from sim.clock import AgentClock, ClockRange

    clock = AgentClock(lambda: now, name="bob", offset_s=offset_s, drift=drift)

    with pytest.raises(ClockRange) as exc:
        clock.iso()
    assert "\n" not in str(exc.value) and "bob" in str(exc.value)


@pytest.mark.parametrize(
    "kwargs",
    [{"offset_s": float("inf")}, {"offset_s": 1e300}, {"drift": -1.0}, {"drift": float("nan")}],
    ids=["offset inf", "offset 1e300", "drift -1 (stopped)", "drift nan"],
)
def test_clock_refuses_an_offset_or_drift_it_cannot_represent(kwargs: dict[str, float]) -> None:
    """An infinite or 1e300 s offset, or a drift that stops the clock, is refused when the clock is made."""
    from sim.clock import AgentClock, ClockRange

    with pytest.raises(ClockRange):
        AgentClock(lambda: 0.0, name="bob", **kwargs)


def test_clock_at_the_edges_of_its_range() -> None:
    """The last representable reading works; a skew of the largest allowed fault size works both ways."""
    from sim.clock import EPOCH_NS, MAX_NS, AgentClock
    from sim.faults import MAX_SKEW_S

    edge = (MAX_NS - EPOCH_NS) / 1e9 - 1.0
    assert AgentClock(lambda: edge).iso().startswith("2262-04-11")
    assert AgentClock(lambda: 0.0, offset_s=-MAX_SKEW_S).date() == "1994-04-28"
    assert AgentClock(lambda: 0.0, offset_s=MAX_SKEW_S).date() == "2057-09-13"


def test_outputs_refuse_one_file_named_twice(tmp_path: Path) -> None:
    """Two options of one command naming the same file (even through a symlinked directory) is an error."""
    from sim.errors import UsageError
    from sim.outputs import Outputs

    (tmp_path / "d").mkdir()
    os.symlink(tmp_path / "d", tmp_path / "alias")
    outputs = Outputs()
    outputs.file(tmp_path / "d" / "x.json", "--json")

    with pytest.raises(UsageError, match="same file"):
        outputs.file(tmp_path / "alias" / "x.json", "--markdown")


def test_staged_directory_replaces_the_old_one_only_on_commit(tmp_path: Path) -> None:
    """A staged directory output leaves an earlier run's directory alone until the commit, which
    replaces it whole; an abort removes the staged one and keeps the old."""
    from sim.outputs import Outputs

    final = tmp_path / "run-root"
    (final / "old").mkdir(parents=True)
    aborted = Outputs()
    staged = aborted.stage_dir(final, "run root")
    (staged / "new").mkdir(parents=True)
    aborted.abort()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run-root"]
    assert [p.name for p in final.iterdir()] == ["old"]

    committed = Outputs()
    (committed.stage_dir(final, "run root") / "new").mkdir(parents=True)
    committed.commit()
    assert [p.name for p in final.iterdir()] == ["new"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run-root"]
