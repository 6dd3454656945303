"""Hostile cases of round four (issue 37), one test per case, named by the class it belongs to:

- ``test_outputs_*``: one output-path rule for every writer (an existing device, FIFO or socket, or a file
  the same command reads, is bad input: exit 2, nothing written);
- ``test_reads_*``: what memsim reads back is checked against its writer's schema, values included;
- ``test_numbers_*``: digit strings are bounded before ``int()``;
- ``test_waits_*``: every external wait has a bound (set short here through its environment variable);
- ``test_races_*`` and ``test_names_*``: resume directories appear with their marker; baseline names are
  reserved;
- ``test_help_*`` and ``test_paths_*``: help and usage into a closed pipe; ``new design --path``.

Most cases run ``memsim`` in-process (``fuzzing.run_cli``); the closed-pipe cases run the console script
with this checkout first on ``PYTHONPATH``. No case sleeps or times anything: a wait that must end is
bounded by its own short limit and the subprocess timeout.
"""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import stat
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from fuzzing import Result, run_cli, snapshot

ROOT = Path(__file__).resolve().parent.parent
CHEAP_CLAIM = "tracecraft.history-not-immutable"  # an exhaustive scope of a few tasks


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """A minimal environment for a ``memsim`` subprocess that runs this checkout."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path), "TMPDIR": str(tmp_path),
           "LANG": "C.UTF-8", "PYTHONPATH": str(ROOT)}  # fmt: skip
    return {**env, **extra}


def refused(r: Result, *fragments: str) -> None:
    """Exit 2, nothing on stdout, one ``memsim: error:`` line naming the problem."""
    assert r.code == 2, r
    assert r.out == "", r
    assert r.err.count("\n") == 1 and r.err.startswith("memsim: error: "), r
    assert "internal error" not in r.err and "Traceback" not in r.err, r
    for f in fragments:
        assert f in r.err, r


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> SimpleNamespace:
    """A bench output directory, a small LoCoMo file and its conversation sweep, made once."""
    base = tmp_path_factory.mktemp("round4")
    r = run_cli(["bench", "--designs", "tracecraft", "--budgets", "8000", "--seeds", "1", "--steps", "10",
                 "--no-plots", "--out", "bench"], base)  # fmt: skip
    assert r.code == 0, r
    r = run_cli(["workload", "synth", "locomo", "--instances", "1", "--sessions", "2", "--turns", "4",
                 "--out", "w.json"], base)  # fmt: skip
    assert r.code == 0, r
    r = run_cli(["bench", "--workload", "locomo:w.json", "--designs", "tracecraft", "--budgets", "8000",
                 "--out", "conv", "--no-plots"], base)  # fmt: skip
    assert r.code == 0, r
    return SimpleNamespace(base=base, bench=base / "bench", locomo=base / "w.json", conv=base / "conv")


def copy_dir(src: Path, dst: Path) -> Path:
    import shutil

    shutil.copytree(src, dst)
    return dst


# -- 1. outputs that destroy what they replace ---------------------------------------------------------------
@pytest.mark.parametrize("source", ["bench", "conv"])
def test_outputs_report_refuses_to_replace_its_input_database(
    made: SimpleNamespace, tmp_path: Path, source: str
) -> None:
    """``memsim report DIR -o DIR/results.db`` replaced the database with the page (exit 0)."""
    d = copy_dir(getattr(made, source), tmp_path / source)
    before = snapshot(tmp_path)

    r = run_cli(["report", str(d), "-o", str(d / "results.db")], tmp_path)

    refused(r, "would overwrite", "results.db")
    assert snapshot(tmp_path) == before


def _fifo(path: Path) -> Path:
    os.mkfifo(path)
    return path


@pytest.mark.parametrize(
    "argv",
    [
        ["workload", "synth", "locomo", "--instances", "1", "--out", "{t}"],
        ["report", "{bench}", "-o", "{t}"],
        ["claims", "--claim", "merchantbench.suffix-eviction", "--json", "{t}"],
    ],
    ids=["synth --out", "report -o", "claims --json"],
)
def test_outputs_a_fifo_target_is_refused_not_replaced(
    made: SimpleNamespace, tmp_path: Path, argv: list[str]
) -> None:
    """An output path that is a FIFO was replaced by a regular file (exit 0)."""
    target = _fifo(tmp_path / "target")
    bench = copy_dir(made.bench, tmp_path / "b")
    before = snapshot(tmp_path)

    r = run_cli([a.format(t=target, bench=bench) for a in argv], tmp_path)

    refused(r, "not a regular file")
    assert stat.S_ISFIFO(os.lstat(target).st_mode) and snapshot(tmp_path) == before


def test_outputs_a_device_target_is_refused(made: SimpleNamespace, tmp_path: Path) -> None:
    """``-o /dev/null`` as root replaced the system's /dev/null with the page. The case plants its own
    device node (a copy of /dev/null's numbers, needs CAP_MKNOD), never the system's: run before the fix,
    the test must not do the damage it checks for."""
    node = tmp_path / "null"
    try:
        os.mknod(node, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except (PermissionError, OSError):
        pytest.skip("cannot create a device node here (needs CAP_MKNOD)")
    bench = copy_dir(made.bench, tmp_path / "b")

    r = run_cli(["report", str(bench), "-o", str(node)], tmp_path)

    refused(r, "not a regular file")
    assert stat.S_ISCHR(os.lstat(node).st_mode)


def test_outputs_a_hard_link_to_the_input_is_the_input(made: SimpleNamespace, tmp_path: Path) -> None:
    """The same file under another name (a hard link) is still the command's input."""
    d = copy_dir(made.bench, tmp_path / "b")
    os.link(d / "results.db", tmp_path / "alias.html")
    before = snapshot(tmp_path)

    refused(run_cli(["report", str(d), "-o", str(tmp_path / "alias.html")], tmp_path), "would overwrite")
    assert snapshot(tmp_path) == before


def test_outputs_stage_refuses_a_special_file_for_writers_without_a_check(tmp_path: Path) -> None:
    """Every writer stages through :class:`sim.outputs.Outputs`: a FIFO in the way is refused there too."""
    from sim.errors import UsageError
    from sim.outputs import Outputs

    _fifo(tmp_path / "x.csv")
    with pytest.raises(UsageError, match="not a regular file"):
        Outputs().write_text(tmp_path / "x.csv", "a\n")
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


# -- 2. reads that trust what they read ----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("column", "value"),
    [("lost", "not json"), ("budget", "lots"), ("request_tokens", "NaN"), ("lost", '[["D1:1", 2]]'),
     ("answer_in_context", 7), ("evidence_in_context", 99)],
)  # fmt: skip
def test_reads_the_questions_table_is_checked(
    made: SimpleNamespace, tmp_path: Path, column: str, value: object
) -> None:
    """An edited ``questions`` table gave JSONDecodeError/ValueError/TypeError (exit 1)."""
    d = copy_dir(made.conv, tmp_path / "c")
    con = sqlite3.connect(d / "results.db")
    con.execute(f"UPDATE questions SET {column} = ?", (value,))
    con.commit()
    con.close()
    before = snapshot(tmp_path)

    r = run_cli(["report", str(d), "-o", str(tmp_path / "p.html")], tmp_path)

    refused(r, "table questions row 1")
    assert snapshot(tmp_path) == before


def _resume(tmp_path: Path, d: Path, *more: str) -> Result:
    return run_cli(["claims", "--exhaustive", "--claim", CHEAP_CLAIM, "--resume", str(d), *more], tmp_path)


def _verdicts(ledger: Path) -> list[Any]:
    """Each direction's verdict, case count and first counterexample (not seconds, not Hypothesis' search,
    whose shrinking may differ between runs)."""
    row = json.loads(ledger.read_text())["claims"][0]
    return [(d, row[d]["ok"], row[d]["examples"], row[d]["example"]) for d in ("faithful", "fixed", "off")]


def _saved(d: Path) -> list[Path]:
    return sorted(p for p in d.iterdir() if p.suffix == ".json")


@pytest.fixture(scope="module")
def progress(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("progress")
    r = _resume(base, base / "p")
    assert r.code == 0, r
    return base / "p"


@pytest.mark.parametrize(
    "edit",
    [{"first": 999}, {"skipped": {"symmetry": "many"}}, {"cpu": "fast"}, {"cases": -1}, {"seconds": True}],
    ids=["first=999", "skipped=many", "cpu=fast", "cases=-1", "seconds=true"],
)
def test_reads_resume_checks_saved_values(progress: Path, tmp_path: Path, edit: dict[str, Any]) -> None:
    """Saved results with values their writer never writes gave IndexError/ValueError (exit 1): now they
    are not trusted, their task runs again, and the ledger is the fresh run's."""
    d = copy_dir(progress, tmp_path / "p")
    for p in _saved(d):
        p.write_text(json.dumps({**json.loads(p.read_text()), **edit}))
    fresh = _resume(tmp_path, tmp_path / "fresh", "--json", "fresh.json")

    r = _resume(tmp_path, d, "--json", "resumed.json")

    assert (r.code, fresh.code) == (0, 0), r
    assert _verdicts(tmp_path / "resumed.json") == _verdicts(tmp_path / "fresh.json")


def test_reads_a_saved_result_replaced_by_a_directory(progress: Path, tmp_path: Path) -> None:
    """A saved result replaced by a directory gave IsADirectoryError and left a ``.tmp`` behind."""
    d = copy_dir(progress, tmp_path / "p")
    victim = _saved(d)[0]
    victim.unlink()
    victim.mkdir()
    before = snapshot(tmp_path)

    r = _resume(tmp_path, d)

    refused(r, "is not a regular file", victim.name)
    assert snapshot(tmp_path) == before and not list(d.glob(".*"))


def test_reads_a_result_path_that_became_a_directory_leaves_no_temporary(tmp_path: Path) -> None:
    """The write side: a directory where a result goes is one error line, and its temporary is removed."""
    from sim.errors import UsageError
    from sim.exhaustive.progress import Progress

    store = Progress(tmp_path / "p")
    store.open()
    store._path("k").mkdir()
    with pytest.raises(UsageError, match="is a directory"):
        store.put("k", {"key": "k"})
    assert not list((tmp_path / "p").glob(".*"))


# -- 3. numbers ----------------------------------------------------------------------------------------------
def test_numbers_a_locomo_evidence_id_with_5000_digits(made: SimpleNamespace, tmp_path: Path) -> None:
    """``"D" + "9"*5000 + ":1"`` reached int(): "internal error: ValueError: Exceeds the limit"."""
    doc = json.loads(made.locomo.read_text())
    doc[0]["qa"][0]["evidence"] = ["D" + "9" * 5000 + ":1"]
    (tmp_path / "w.json").write_text(json.dumps(doc))
    before = snapshot(tmp_path)

    r = run_cli(["bench", "--workload", "locomo:w.json", "--designs", "tracecraft", "--out", "c"], tmp_path)

    refused(r, "longer than")
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize(
    "argv",
    [
        ["bench", "--provider", "anthropic", "--cache-ttl", "9" * 5000],
        ["bench", "--budgets", "9" * 5000],
        ["bench", "--provider", "anthropic", "--price", "9" * 5000],
        ["bench", "--executor", "dask", "--scheduler", "tcp://127.0.0.1:" + "9" * 5000],
    ],
    ids=["--cache-ttl", "--budgets", "--price", "--scheduler"],
)
def test_numbers_a_5000_digit_option(tmp_path: Path, argv: list[str]) -> None:
    """A 5,000-digit ``--cache-ttl`` gave "internal error: ValueError: Exceeds the limit (4300 digits)"."""
    r = run_cli([*argv, "--out", "o"], tmp_path)

    refused(r)
    assert "4300" not in r.err and not (tmp_path / "o").exists()


def test_numbers_a_scenario_file_with_a_5000_digit_integer(tmp_path: Path) -> None:
    """TOML integers reach ``int()`` inside tomllib: "internal error: ValueError: Exceeds the limit"."""
    (tmp_path / "s.toml").write_text(f'scenario = "tracecraft_cursor_reuse"\nseed = {"9" * 5000}\n')

    refused(run_cli(["run", "s.toml", "--out", "o"], tmp_path), "too many digits")
    assert not (tmp_path / "o").exists()


def test_numbers_parse_int_and_parse_float_are_bounded() -> None:
    from sim.errors import UsageError
    from sim.numbers import parse_float, parse_int

    assert (parse_int(" 42 ", "n"), parse_float("1.5e3", "x")) == (42, 1500.0)
    for bad in ("9" * 5000, "1_0", "٣", "", "0x10"):
        with pytest.raises(UsageError):
            parse_int(bad, "n")
    for bad in ("nan", "inf", "1e999", "9" * 5000, "1_0"):
        with pytest.raises(UsageError):
            parse_float(bad, "x")


# -- 4. waits that never end ---------------------------------------------------------------------------------
@pytest.fixture
def silent_port() -> Iterator[int]:
    """A local port that accepts connections (the kernel's backlog) and never answers."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(16)
        yield s.getsockname()[1]


@pytest.mark.parametrize("sweep", ["facts", "conversations"])
def test_waits_a_scheduler_that_accepts_and_never_answers(
    made: SimpleNamespace, tmp_path: Path, silent_port: int, sweep: str
) -> None:
    """``--executor dask --scheduler tcp://127.0.0.1:PORT`` hung (still hung at 400 s): only the TCP
    connect was checked. Now the handshake has a deadline (0.3 s here, through its variable)."""
    pytest.importorskip("distributed")
    workload = ["--workload", f"locomo:{made.locomo}"] if sweep == "conversations" else ["--steps", "10"]
    argv = ["bench", *workload, "--designs", "tracecraft", "--budgets", "8000", "--out", "o", "--no-plots",
            "--executor", "dask", "--scheduler", f"tcp://127.0.0.1:{silent_port}"]  # fmt: skip

    proc = subprocess.run(  # a subprocess: before the fix this hung, and only its timeout ended it
        [sys.executable, "-m", "sim.cli", *argv], cwd=tmp_path,
        env=_env(tmp_path, MEMSIM_SCHEDULER_TIMEOUT="0.3"), capture_output=True, text=True, timeout=120,
    )  # fmt: skip

    refused(Result(proc.returncode, proc.stdout, proc.stderr), "did not answer within 0.3 s")
    assert not (tmp_path / "o").exists()


@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")  # moto's dead thread
def test_waits_the_moto_server_start_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """moto's ``start`` waits without a bound for a server thread that died (its port taken)."""
    pytest.importorskip("moto")
    from moto.moto_server import threaded_moto_server

    from sim.errors import UsageError
    from sim.objects import MotoServer

    def no_server(*args: Any, **kwargs: Any) -> Any:
        raise OSError(98, "Address already in use")

    monkeypatch.setattr(threaded_moto_server, "make_server", no_server)
    monkeypatch.setenv("MEMSIM_MOTO_TIMEOUT", "0.2")
    outcome: list[BaseException | None] = []

    def start() -> None:
        try:
            MotoServer()
            outcome.append(None)
        except BaseException as exc:
            outcome.append(exc)

    starter = threading.Thread(target=start, daemon=True)  # before the fix this waited forever
    starter.start()
    starter.join(120)

    assert outcome and isinstance(outcome[0], UsageError), outcome
    assert "did not start within 0.2 s" in str(outcome[0])


# -- 5. races and names --------------------------------------------------------------------------------------
def test_races_a_new_resume_directory_is_never_seen_without_its_marker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two ``claims --exhaustive --resume D`` on a new D: one was refused "not a progress directory" when
    it looked between the other's mkdir and its marker. Here the second run looks at exactly that moment
    (while the first renames its marker into place) and must accept D."""
    from sim.exhaustive import progress as pg

    root = tmp_path / "D"
    looked: list[str] = []
    real_replace = os.replace

    def replace_after_a_look(src: Any, dst: Any) -> None:
        if Path(dst).name == pg.MARKER and not looked:
            pg.Progress(root)  # the other run's check, at the worst moment
            looked.append("ok")
        real_replace(src, dst)

    monkeypatch.setattr(pg.os, "replace", replace_after_a_look)
    first = pg.Progress(root)
    second = pg.Progress(root)
    first.open()
    second.open()  # the directory exists by now: its marker is in it

    assert looked == ["ok"] and (root / pg.MARKER).is_file()
    assert [p.name for p in root.iterdir()] == [pg.MARKER]
    assert not [p for p in tmp_path.iterdir() if p.name != "D"]


@pytest.mark.parametrize("name", ["full", "oracle", "oracle-sessions"])
def test_names_a_plugin_cannot_take_a_baseline_name(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """A plugin design named ``full`` was accepted; ``--designs full`` then ran the baseline twice and never
    the plugin (the aggregate counted 10 questions for 5). It is now skipped as a broken plugin is, and
    naming it is one error line."""
    from sim import registry
    from sim.errors import UsageError
    from sim.registry import Design, Report
    from sim.variant import Switches

    plugin = Design(
        name=name, package="x", title="t", report=Report("r", record_ids=("X-1",)),
        switches=Switches(name, fixes=("a",), off=("a-off",)),
    )  # fmt: skip
    ep = SimpleNamespace(name=name, value="x.design:DESIGN", group=registry.DESIGNS_GROUP, dist=None,
                         load=lambda: plugin)  # fmt: skip
    real = registry._entry_points
    monkeypatch.setattr(
        registry, "_entry_points", lambda g: [*real(g), ep] if g == registry.DESIGNS_GROUP else real(g)
    )
    monkeypatch.setattr(registry, "_BROKEN", {})
    monkeypatch.setattr(registry, "_BROKEN_DESIGNS", {})
    registry.designs.cache_clear()
    try:
        assert name not in registry.designs()
        assert any("reserved" in m for m in registry.broken().values())
        with pytest.raises(UsageError, match="reserved"):
            registry.design(name)
    finally:
        registry.designs.cache_clear()


def test_names_the_reserved_set_covers_every_baseline() -> None:
    from sim.bench.tasks import ORACLE
    from sim.conversations.baselines import BASELINES
    from sim.names import RESERVED_DESIGN_NAMES

    assert {ORACLE, *BASELINES} <= RESERVED_DESIGN_NAMES


@pytest.mark.parametrize("name", ["oracle", "full"])
def test_names_new_design_refuses_a_baseline_name(tmp_path: Path, name: str) -> None:
    r = run_cli(["new", "design", name, "--path", str(tmp_path / "d")], tmp_path)

    refused(r, "reserved")
    assert not list(tmp_path.iterdir())


# -- 6. help and usage into a closed pipe --------------------------------------------------------------------
@pytest.mark.parametrize(
    "args", [["--help"], ["--version"], ["bench", "--help"], [], ["new"], ["workload"]],
    ids=["--help", "--version", "bench --help", "bare", "new", "workload"],
)  # fmt: skip
def test_help_into_a_closed_pipe_is_quiet_141(tmp_path: Path, args: list[str]) -> None:
    """Help with stdout's reader gone said "code memsim ran ... called sys.exit(1)" (exit 2), or printed a
    BrokenPipeError traceback (exit 1). The contract: 141, nothing on stderr."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "sim.cli", *args], cwd=tmp_path, env=_env(tmp_path),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    err = proc.stderr.read()
    proc.wait(timeout=120)

    assert (proc.returncode, err) == (141, "")


# -- 7. new design --path ------------------------------------------------------------------------------------
def test_paths_new_design_follows_a_symlink_to_an_empty_directory(tmp_path: Path) -> None:
    """A symlink to an empty directory is a legitimate place (it was an internal error)."""
    (tmp_path / "empty").mkdir()
    (tmp_path / "link").symlink_to("empty")

    r = run_cli(["new", "design", "zqlinked", "--path", str(tmp_path / "link")], tmp_path)

    assert r.code == 0, r
    assert (tmp_path / "link").is_symlink() and (tmp_path / "empty" / "pyproject.toml").is_file()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


@pytest.mark.parametrize("case", ["dangling", "proc", "proc-self"])
def test_paths_new_design_refuses_a_place_it_cannot_use(tmp_path: Path, case: str) -> None:
    """A dangling symlink and a path under /proc were internal errors (exit 1)."""
    if case == "dangling":
        (tmp_path / "link").symlink_to(tmp_path / "nowhere")
        path = str(tmp_path / "link")
    else:
        path = "/proc/memsim-new" if case == "proc" else "/proc/self/memsim-new"
    before = snapshot(tmp_path)

    refused(run_cli(["new", "design", "zqplace", "--path", path], tmp_path))
    assert snapshot(tmp_path) == before


def test_paths_new_design_with_a_long_name_stages_under_a_short_one(tmp_path: Path) -> None:
    """A 250-byte target name made the hidden staging name pass 255 bytes (ENAMETOOLONG, exit 1)."""
    target = tmp_path / ("d" * 250)

    r = run_cli(["new", "design", "zqlong", "--path", str(target)], tmp_path)

    assert r.code == 0, r
    assert (target / "pyproject.toml").is_file()
    assert [p.name for p in tmp_path.iterdir()] == [target.name]


def test_paths_new_design_with_a_name_over_255_bytes_is_refused(tmp_path: Path) -> None:
    r = run_cli(["new", "design", "zqlong", "--path", str(tmp_path / ("d" * 256))], tmp_path)

    refused(r, "255")
    assert not list(tmp_path.iterdir())
