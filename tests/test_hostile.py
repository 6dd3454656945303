"""Hostile input through the real console script: every refusal says so with its contracted exit code.

The exit-code contract (README, "Exit codes"): 0 every verdict as expected; 1 a verdict failed; 2 bad
input (exactly one ``memsim: error:`` line on stderr, nothing on stdout, nothing written); 130 interrupted.
This module holds the refused inputs (exit 2) and the failed verdicts (exit 1); signals, endpoints, full
disks and the other runtime hazards are in ``test_hostile_runtime.py``, the sandbox in ``hostile_box.py``.
Every case snapshots the sandbox before and after: nothing may change outside the run's own output
directory (for a refused input: nothing at all).
"""

from __future__ import annotations

import os
from collections.abc import Callable

import pytest
from hostile_box import (
    NO_STORE,
    PLUGIN_ENV,
    SUFFIX_CLAIM,
    TOY_CLAIM,
    Sandbox,
    assert_refused,
    changed,
    edit,
    saved_example,
    trace_of_toy,
    write,
)

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
        ("skew", "NaN and infinities are refused"),
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
        ("--markdown", "ot a directory"),
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
