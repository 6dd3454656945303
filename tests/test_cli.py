"""The ``memsim`` command line: help and docs work, and every bad input is one line on stderr, exit code 2,
no traceback, and nothing written.

Most cases call :func:`sim.cli.main` in-process against a toy scenario (``coretoy``) put in front of the
scenario registry, so they do not depend on the four systems' scenarios; a few run ``python -m sim.cli``
in a subprocess to check the real process: exit status and stderr as a user sees them.
"""

from __future__ import annotations

import subprocess
import sys
import types
from pathlib import Path

import pytest
from pydantic import BaseModel, ConfigDict

from sim import scenario_core as sc
from sim.cli import main
from sim.faults import declare_point

ROOT = Path(__file__).resolve().parent.parent
TOY_POINT = declare_point("coretoy.step.after_write", "after the toy scenario's write")


class ToyParams(BaseModel):
    """The toy scenario's parameters."""

    model_config = ConfigDict(extra="forbid")
    steps: int = 3


def toy_run(ctx: sc.Context) -> list[str]:
    """Write a few trace ops at simulated times; crash at the toy point if armed."""
    lines = []
    for i in range(ctx.params.steps):
        ctx.sim.run(until=float(i + 1))
        ctx.sim.faults.point(TOY_POINT)
        draw = ctx.sim.rng("coretoy").randint(0, 999)
        ctx.sim.trace.op("coretoy", "step", agent="a", i=i, draw=draw, at=ctx.sim.clock("a").iso())
        lines.append(f"step {i}: {draw}")
    return lines


TOY = sc.Scenario(
    "coretoy",
    "coretoy",
    7,
    "A toy scenario for the CLI tests.",
    ToyParams,
    toy_run,
    types.ModuleType("scenarios.coretoy"),
)


@pytest.fixture(autouse=True)
def toy_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    """The scenario registry holds only ``coretoy`` during these tests."""
    monkeypatch.setattr(sc, "scenarios", lambda: {"coretoy": TOY})


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """Run ``memsim ARGS`` in-process: (exit code, stdout, stderr)."""
    try:
        main(list(args))
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def assert_usage_error(result: tuple[int, str, str], *fragments: str) -> None:
    """Exit code 2, nothing on stdout, exactly one ``memsim: error:`` line on stderr, no traceback."""
    code, out, err = result
    assert code == 2, err
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("memsim: error: "), err
    assert "Traceback" not in err
    for f in fragments:
        assert f in err


# -- working commands --------------------------------------------------------------------------------
def test_help_lists_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    """``memsim --help`` exits 0 and lists the commands."""
    code, out, _err = cli(capsys, "--help")

    assert code == 0
    for command in ("run", "claims", "replay", "doc", "demo", "bench"):
        assert command in out


def test_no_arguments_prints_help(capsys: pytest.CaptureFixture[str]) -> None:
    """``memsim`` alone prints the help and exits 0."""
    code, out, _err = cli(capsys)

    assert code == 0
    assert "Usage" in out


@pytest.mark.parametrize("command", ["run", "claims", "replay", "doc", "demo", "bench"])
def test_every_command_has_help(capsys: pytest.CaptureFixture[str], command: str) -> None:
    """``memsim COMMAND --help`` exits 0 and documents each option in one line."""
    code, out, _err = cli(capsys, command, "--help")

    assert code == 0
    assert "Usage" in out


@pytest.mark.parametrize(
    "topic", ["systems", "operations", "faults", "claims", "scenarios", "coverage", "fidelity"]
)
def test_doc_topics(capsys: pytest.CaptureFixture[str], topic: str) -> None:
    """Every ``memsim doc`` topic renders from the registries and exits 0."""
    code, out, err = cli(capsys, "doc", topic)

    assert (code, err) == (0, "")
    assert out.strip()


def test_doc_scenarios_lists_the_registry(capsys: pytest.CaptureFixture[str]) -> None:
    """``doc scenarios`` prints each scenario's name, system, seed and title."""
    assert cli(capsys, "doc", "scenarios") == (
        0,
        "coretoy (coretoy, seed 7): A toy scenario for the CLI tests.\n",
        "",
    )


def test_run_prints_summary_and_writes_trace(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """``run`` prints the scenario's lines; with --out the trace database goes there and replays
    identically."""
    out_dir = tmp_path / "out"

    code, out, err = cli(capsys, "run", "coretoy", "--seed", "3", "--out", str(out_dir))

    assert code == 0
    assert out.count("\n") == 3 and out.startswith("step 0: ")
    assert err == f"trace: {out_dir / 'coretoy.db'}\n"
    code, out, _err = cli(capsys, "replay", str(out_dir / "coretoy.db"))
    assert code == 0
    assert out.endswith(f"replay of coretoy.db: identical trace ({out_dir / 'coretoy.replay.db'})\n")


def test_run_from_a_scenario_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """A TOML scenario file selects the scenario and overrides seed and params."""
    f = tmp_path / "toy.toml"
    f.write_text('scenario = "coretoy"\nseed = 3\n[params]\nsteps = 1\n')

    code, out, _err = cli(capsys, "run", str(f))
    assert code == 0
    assert out == cli(capsys, "run", "coretoy", "--seed", "3", "--param", "steps=1")[1]
    assert out.count("\n") == 1


# -- bad input: one line, exit 2, nothing written ------------------------------------------------------
BAD_RUNS = {
    "unknown scenario": (["run", "nope"], "unknown scenario 'nope'"),
    "negative seed": (["run", "coretoy", "--seed", "-1"], "--seed"),
    "non-numeric seed": (["run", "coretoy", "--seed", "abc"], "--seed"),
    "unknown fault name": (
        ["run", "coretoy", "--fault", "explode@coretoy.step.after_write"],
        "unknown fault",
    ),
    "malformed fault": (["run", "coretoy", "--fault", "skew:bob"], "unknown fault"),
    "unknown fault point": (
        ["run", "coretoy", "--fault", "crash@coretoy.step.nowhere"],
        "unknown fault point",
    ),
    "unknown store": (["run", "coretoy", "--store", "floppy"], "unknown store 'floppy'"),
    "unknown parameter": (["run", "coretoy", "--param", "colour=red"], "colour"),
    "badly typed parameter": (["run", "coretoy", "--param", "steps=many"], "steps"),
    "param without =": (["run", "coretoy", "--param", "steps"], "KEY=VALUE"),
    "missing scenario file": (["run", "missing.toml"], "not found"),
    "unknown option": (["run", "coretoy", "--colour"], "--colour"),
    "unknown command": (["frobnicate"], "frobnicate"),
}


@pytest.mark.parametrize("case", list(BAD_RUNS), ids=list(BAD_RUNS))
def test_bad_run_input(capsys: pytest.CaptureFixture[str], tmp_path: Path, case: str) -> None:
    """Bad ``run`` input: one line on stderr, exit 2, and the --out directory is not created."""
    args, fragment = BAD_RUNS[case]
    out_dir = tmp_path / "out"

    result = cli(capsys, *args, *(["--out", str(out_dir)] if args[0] == "run" else []))

    assert_usage_error(result, fragment)
    assert not out_dir.exists()


BAD_FILES: dict[str, tuple[str | bytes, str]] = {
    "malformed TOML": ('scenario = "coretoy\nseed = 1\n', "malformed scenario file"),
    "not UTF-8": (b"\xff\xfe scenario", "is not UTF-8 text"),
    "unknown key": ('scenario = "coretoy"\ncolour = "red"\n', "colour: Extra inputs are not permitted"),
    "seed of wrong type": ('scenario = "coretoy"\nseed = "abc"\n', "seed:"),
    "negative seed": ('scenario = "coretoy"\nseed = -1\n', "seed:"),
    "faults not a list": ('scenario = "coretoy"\nfaults = "crash@x"\n', "faults:"),
    "missing scenario": ("seed = 1\n", "scenario: Field required"),
    "unknown scenario": ('scenario = "nope"\n', "unknown scenario 'nope'"),
    "unknown fault": ('scenario = "coretoy"\nfaults = ["explode"]\n', "unknown fault 'explode'"),
    "unknown fault point": ('scenario = "coretoy"\nfaults = ["fail@coretoy.x.y"]\n', "unknown fault point"),
    "unknown store": ('scenario = "coretoy"\nstore = "floppy"\n', "unknown store"),
    "bad parameter": ('scenario = "coretoy"\n[params]\nsteps = "many"\n', "steps"),
    "empty file": ("", "scenario: Field required"),
}


@pytest.mark.parametrize("case", list(BAD_FILES), ids=list(BAD_FILES))
def test_bad_scenario_file(capsys: pytest.CaptureFixture[str], tmp_path: Path, case: str) -> None:
    """A malformed or invalid scenario file: one line on stderr naming the problem, exit 2, nothing
    written."""
    content, fragment = BAD_FILES[case]
    f = tmp_path / "bad.toml"
    if isinstance(content, bytes):
        f.write_bytes(content)
    else:
        f.write_text(content)
    out_dir = tmp_path / "out"

    assert_usage_error(cli(capsys, "run", str(f), "--out", str(out_dir)), fragment)
    assert not out_dir.exists()


def test_scenario_file_that_is_a_directory(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """``memsim run some.toml`` where some.toml is a directory is a usage error, not an internal one."""
    (tmp_path / "dir.toml").mkdir()

    assert_usage_error(cli(capsys, "run", str(tmp_path / "dir.toml")), "dir.toml")


def test_out_that_is_a_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """``--out`` naming an existing file is refused, and the file is left alone."""
    f = tmp_path / "taken"
    f.write_text("keep")

    assert_usage_error(cli(capsys, "run", "coretoy", "--out", str(f)), "not a directory")
    assert f.read_text() == "keep"


BAD_OTHER = {
    "unknown doc topic": (["doc", "nope"], "unknown doc topic 'nope'"),
    "doc of unknown system": (["doc", "claims", "--system", "nope"], "unknown design 'nope'"),
    "unknown profile": (["claims", "--profile", "nope"], "unknown profile 'nope'"),
    "unknown system": (["claims", "--system", "nope"], "unknown design 'nope'"),
    "negative claims seed": (["claims", "--seed", "-3"], "--seed"),
    "bench seeds below 1": (["bench", "--seeds", "0"], "--seeds"),
}


@pytest.mark.parametrize("case", list(BAD_OTHER), ids=list(BAD_OTHER))
def test_bad_doc_and_claims_input(capsys: pytest.CaptureFixture[str], tmp_path: Path, case: str) -> None:
    """Unknown doc topics, systems and profiles: one line, exit 2; ``claims`` writes no --json/--markdown."""
    args, fragment = BAD_OTHER[case]
    extra = (
        [
            "--json",
            str(tmp_path / "c.json"),
            "--markdown",
            str(tmp_path / "c.md"),
            "--save",
            str(tmp_path / "saved"),
        ]
        if args[0] == "claims"
        else []
    )

    assert_usage_error(cli(capsys, *args, *extra), fragment)
    assert list(tmp_path.iterdir()) == []


def non_trace_sqlite(path: Path) -> Path:
    import sqlite3

    con = sqlite3.connect(path)
    con.execute("create table t (a)")
    con.commit()
    con.close()
    return path


BAD_REPLAYS = {
    "missing file": (lambda d: d / "missing.json", "not found"),
    "a directory": (lambda d: d, "is not a regular file"),
    "plain text": (lambda d: write(d / "x.json", "hello"), "is not valid JSON"),
    "empty file": (lambda d: write(d / "x.json", ""), "is not valid JSON"),
    "JSON without a claim": (lambda d: write(d / "x.json", '{"example": [1]}'), "not a saved claim example"),
    "SQLite but not a trace": (lambda d: non_trace_sqlite(d / "x.db"), "not a memsim trace database"),
}


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


@pytest.mark.parametrize("case", list(BAD_REPLAYS), ids=list(BAD_REPLAYS))
def test_bad_replay_input(capsys: pytest.CaptureFixture[str], tmp_path: Path, case: str) -> None:
    """Replaying something that is not a saved example or scenario trace: one line, exit 2, no output
    directory created."""
    make, fragment = BAD_REPLAYS[case]
    src = tmp_path / "src"
    src.mkdir()
    target = make(src)
    before = sorted(src.iterdir())

    assert_usage_error(cli(capsys, "replay", str(target), "--out", str(tmp_path / "out")), fragment)
    assert not (tmp_path / "out").exists()
    assert sorted(src.iterdir()) == before


def test_replay_refuses_to_overwrite_its_source(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Replaying ``x.replay.db`` into its own directory would overwrite the source: refused."""
    assert cli(capsys, "run", "coretoy", "--out", str(tmp_path))[0] == 0
    (tmp_path / "coretoy.db").rename(tmp_path / "coretoy.replay.db")
    src = tmp_path / "coretoy.replay.db"
    (tmp_path / "coretoy.db").symlink_to(src)
    original = src.read_bytes()

    assert_usage_error(cli(capsys, "replay", str(tmp_path / "coretoy.db")), "overwrite")
    assert src.read_bytes() == original


# -- the real process --------------------------------------------------------------------------------
def memsim(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``python -m sim.cli ARGS`` in a subprocess."""
    return subprocess.run(
        [sys.executable, "-m", "sim.cli", *args], capture_output=True, text=True, cwd=cwd, timeout=120
    )


def test_process_help_and_bad_seed(tmp_path: Path) -> None:
    """As a process: ``--help`` exits 0; a bad seed exits 2 with one stderr line and no traceback; an
    unknown scenario with --out exits 2 and creates nothing."""
    ok = memsim("--help", cwd=ROOT)
    bad_seed = memsim("run", "whatever", "--seed", "abc", cwd=ROOT)
    unknown = memsim("run", "no-such-scenario", "--out", str(tmp_path / "out"), cwd=ROOT)

    assert ok.returncode == 0 and "Usage" in ok.stdout
    for proc in (bad_seed, unknown):
        assert proc.returncode == 2
        assert proc.stdout == ""
        assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("memsim: error: ")
    assert "unknown scenario 'no-such-scenario'" in unknown.stderr
    assert list(tmp_path.iterdir()) == []


def test_a_finished_command_still_runs_exit_hooks_and_flushes_stdout(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A command that finished leaves without the interpreter's teardown (``sim.cli._leave``), yet every
    exit hook runs, stdout arrives whole (as in-process) and the exit code is the command's."""
    code = (
        "import atexit, sys\n"
        "atexit.register(lambda: open('hook-ran', 'w').close())\n"
        "sys.argv = ['memsim', 'doc', 'knobs']\n"
        "from sim.cli import main\n"
        "main()\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=120
    )
    with pytest.raises(SystemExit) as exit_:
        main(["doc", "knobs"])
    here = capsys.readouterr().out

    assert (proc.returncode, exit_.value.code) == (0, 0), proc.stderr
    assert proc.stdout == here and len(here) > 1000
    assert (tmp_path / "hook-ran").exists()


def test_leaving_early_waits_for_no_thread() -> None:
    """With another thread running, ``_leave`` does not end the process: it returns, and the caller exits
    the usual way (joining what must be joined)."""
    import threading

    from sim import cli

    release = threading.Event()
    other = threading.Thread(target=release.wait)
    other.start()
    try:
        assert cli._leave(0) is None
    finally:
        release.set()
        other.join()
