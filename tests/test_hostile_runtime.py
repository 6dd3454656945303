"""Hostile conditions at run time through the real console script: Ctrl-C, SIGTERM and ``kill -9`` on
running commands (exit 130/143, partial outputs removed, no worker left behind), endpoints a file names or
that never answer, read-only and full disks, a closed stdout (141), Hypothesis' home, the scenario
script hook, and, in-process, the units behind the refusals (the clock's range, the outputs' checks).

Waiting for a subprocess to reach a state (its partial trace exists, its workers are up) polls that state,
and a command's group is waited out on one pidfd per member; no assertion depends on how long anything
takes, except that an interrupt or a dead endpoint must end the command within the subprocess timeout.
The sandbox and the console-script runner are in ``hostile_box.py``.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path

import pytest
from hostile_box import (
    MEMSIM,
    NO_STORE,
    PLUGIN_ENV,
    SUFFIX_CLAIM,
    Run,
    Sandbox,
    assert_one_error_line,
    assert_refused,
    changed,
    edit,
    outside,
    progress_removed,
    trace_of_toy,
    write,
)


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
    """Poll *cond* until it holds (the process must still be running); fail after *limit* seconds. A file
    appearing or a worker forking sends no event to wait on, so this re-checks every 20 ms."""
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
    """Ctrl-C as a terminal sends it (to the whole process group); the command must end in seconds. If it
    does not, the failure shows where each of its threads waits (the sandbox sets PYTHONFAULTHANDLER, so
    a SIGABRT dumps their stacks on stderr)."""
    os.killpg(proc.pid, signal.SIGINT)
    try:
        out, err = proc.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        os.kill(proc.pid, signal.SIGABRT)
        _out, err = proc.communicate(timeout=20)
        with suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)  # its workers
        pytest.fail(f"memsim did not end within 20 s of its Ctrl-C; its threads:\n{err[-8000:]}")
    return Run(proc.returncode, out, err)


def group_members(pgid: int) -> list[int]:
    """The live processes of group *pgid* (Linux /proc; a zombie has exited and is not counted)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        state, _ppid, pgrp = stat[stat.rindex(")") + 2 :].split()[:3]
        if int(pgrp) == pgid and state != "Z":
            found.append(int(entry))
    return found


def assert_group_gone(pgid: int, limit: float = 20) -> None:
    """No process of the command's group survives it (workers are stopped, not orphaned): waits on a
    pidfd per member until each has exited, for *limit* seconds at most, then kills the group and fails."""
    import select

    deadline = time.monotonic() + limit
    while members := group_members(pgid):
        left = deadline - time.monotonic()
        if left <= 0:
            os.killpg(pgid, signal.SIGKILL)
            pytest.fail("a worker outlived the interrupted command")
        poller, fds = select.poll(), []
        for pid in members:
            with suppress(ProcessLookupError):
                fds.append(os.pidfd_open(pid))
                poller.register(fds[-1], select.POLLIN)
        try:
            poller.poll(left * 1000)  # until one of them exits
        finally:
            for fd in fds:
                os.close(fd)


@pytest.mark.skipif(not hasattr(os, "pidfd_open"), reason="needs Linux pidfds")
def test_a_group_is_gone_once_its_members_exit_and_a_survivor_fails() -> None:
    """``assert_group_gone`` returns once every member has exited (an unreaped zombie has), and fails
    on a member that lives on, which it kills."""
    code = "import sys; sys.stdin.read()"  # lives until its stdin closes
    ends = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, start_new_session=True)
    assert ends.stdin is not None
    ends.stdin.close()
    assert_group_gone(ends.pid)
    assert ends.wait(timeout=20) == 0

    lives = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, start_new_session=True)
    try:
        with pytest.raises(pytest.fail.Exception, match="outlived"):
            assert_group_gone(lives.pid, limit=0.2)
        assert lives.wait(timeout=20) == -signal.SIGKILL
    finally:
        lives.kill()
        lives.communicate()


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


def test_dask_logs_stay_off_stderr_after_the_cluster_closes() -> None:
    """What a Ctrl-C made Dask log after its cluster had closed (3 of 80 runs of ``bench --executor dask``
    interrupted as its workers start, here) never reaches stderr beside the one error line: a closed
    comm at INFO with a traceback (``distributed.batched``), a failed start-up task collected unread
    (``asyncio``). Dask's own handler is set up as Dask sets it, in a fresh interpreter."""
    code = (
        "import logging, sys\n"
        "handler = logging.StreamHandler(sys.stderr)\n"
        "logging.getLogger('distributed').addHandler(handler)\n"
        "logging.getLogger('distributed').setLevel(logging.INFO)\n"
        "from sim.bench.executors import _quiet_dask_logs\n"
        "def emit():\n"
        "    try:\n"
        "        raise OSError('Stream is closed')\n"
        "    except OSError:\n"
        "        logging.getLogger('distributed.batched').info('Batched Comm Closed', exc_info=True)\n"
        "    logging.getLogger('asyncio').error('Task exception was never retrieved')\n"
        "    logging.getLogger('tornado.application').error('Exception in callback')\n"
        "emit()\n"
        "print('---', file=sys.stderr)\n"
        "_quiet_dask_logs()\n"
        "emit()\n"
        "logging.getLogger('sim').warning('not a Dask logger')\n"
    )
    err = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stderr
    before, after = err.split("---\n")
    assert all(line in before for line in ("Batched Comm Closed", "never retrieved", "Exception in callback"))
    assert after == "not a Dask logger\n"


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


def test_progress_is_plain_lines_when_stderr_is_not_a_terminal(box: Sandbox) -> None:
    """With stderr a pipe, a long run, a claim run and a bench run print no progress bar, no carriage
    return, no escape sequence and no blank line on stderr: only their named output lines and plain
    progress lines (``memsim: claims: 1 to run``)."""
    from sim.registry import designs

    runs = [
        box.run("run", "toy.py", "--param", "steps=20000", "--out", "o"),
        box.run("claims", "--claim", SUFFIX_CLAIM, "--profile", "quick", "--json", "c.json"),
        box.run("bench", "--seeds", "1", "--budgets", "8000", "--steps", "20", "--out", "b", "--no-plots"),
    ]

    for run in runs:
        assert run.code == 0, run
        assert "\r" not in run.err and "\x1b" not in run.err and "\n\n" not in run.err, run.err
        named = ("trace: ", "wrote ", "memsim: ")
        assert all(line.startswith(named) for line in run.err.splitlines()), run.err
        assert "memsim: error" not in run.err
    cells = 1 + len(designs())  # the oracle and every installed design at one window and seed
    assert "memsim: claims: 1 to run" in runs[1].err and f"memsim: bench: {cells} to run" in runs[2].err


# -- stdout that cannot take the report ----------------------------------------------------------------
@pytest.mark.parametrize(
    "args",
    [["doc", "coverage"], ["run", "toy.py", "--param", "steps=3000"], ["claims", "--system", "hostiletoy"]],
    ids=["doc", "run", "claims"],
)
def test_closed_stdout_pipe_ends_quietly_with_141(box: Sandbox, args: list[str]) -> None:
    """``memsim ... | head`` where the reader has gone: exit 141 (as SIGPIPE would), nothing on stderr but
    progress lines; not 1, which would say a verdict failed."""
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

    assert (proc.returncode, progress_removed(err)) == (141, "")


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


_POOL = None  # the pool of the test below, for its forked worker


def _send_half_a_result(ready_fd: int) -> None:
    """In a forked worker: start a 1 MiB result message on the pool's result pipe, write a few bytes of it,
    say so on *ready_fd*, and wait to be stopped (as a worker stopped mid-send leaves the pipe)."""
    import struct

    assert _POOL is not None
    os.write(_POOL._result_queue._writer.fileno(), struct.pack("!i", 1 << 20) + b"the first bytes")
    os.write(ready_fd, b"x")
    signal.pause()


@pytest.mark.skipif(sys.platform != "linux", reason="the worker reaches its pool through a fork")
def test_a_worker_stopped_mid_result_does_not_hang_its_pool() -> None:
    """``sim.pool.terminate`` on a worker stopped half-way through sending its result: the pool's reader
    thread, waiting for the rest of the message, sees the end of the pipe and stops (it waited for ever,
    and so did the process's exit: a Ctrl-C at the end of ``memsim bench --workers 2`` hung)."""
    import multiprocessing
    import threading
    from concurrent.futures import ProcessPoolExecutor

    from sim import pool as procs

    global _POOL
    ready_r, ready_w = os.pipe()
    _POOL = pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("fork"))
    try:
        pool.submit(_send_half_a_result, ready_w)
        assert os.read(ready_r, 1) == b"x"  # the half message is in the pipe
        reader: threading.Thread = pool._executor_manager_thread

        procs.terminate(pool)
        reader.join(timeout=60)  # a hang guard, not a timing: it ends or never does

        assert not reader.is_alive()
    finally:
        if pool._executor_manager_thread is not None and pool._executor_manager_thread.is_alive():
            pool._result_queue._writer.close()  # what the fix does: let this test's process exit
        _POOL = None
        os.close(ready_r)
        os.close(ready_w)


def _wait_for_ever(ready_fd: int) -> None:
    """In a forked worker: say so on *ready_fd*, then wait to be stopped."""
    os.write(ready_fd, b"x")
    signal.pause()


@pytest.mark.skipif(sys.platform != "linux", reason="the pool's workers are forks")
def test_a_stopped_pool_cancels_only_in_its_own_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    """``sim.pool.terminate`` leaves cancelling what has not started to the pool's own thread, which then
    ends every future itself (cancelled, or failed with ``BrokenProcessPool`` if it saw the stopped
    worker first). A future this process cancelled too could be failed by that
    thread as it cleaned up after the stopped worker: on Python 3.11 that raised ``InvalidStateError`` in
    it and printed a traceback beside ``memsim: error: interrupted`` (CPython gh-107219; 1 Ctrl-C in 30
    of ``claims --workers 2``)."""
    import multiprocessing
    import threading
    from concurrent.futures import Future, ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    from sim import pool as procs

    cancelled_in: list[str] = []
    original = Future.cancel

    def cancel(fut: Future[None]) -> bool:
        cancelled_in.append(threading.current_thread().name)
        return original(fut)

    monkeypatch.setattr(Future, "cancel", cancel)
    ready_r, ready_w = os.pipe()
    pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("fork"))
    try:
        futures = [pool.submit(_wait_for_ever, ready_w) for _ in range(4)]  # 1 runs, 1 queued, 2 wait
        assert os.read(ready_r, 1) == b"x"
        manager: threading.Thread = pool._executor_manager_thread
        me = threading.current_thread().name

        procs.terminate(pool)
        manager.join(timeout=60)  # a hang guard, not a timing

        assert not manager.is_alive()
        assert me not in cancelled_in
        assert all(f.cancelled() or isinstance(f.exception(), BrokenProcessPool) for f in futures)
    finally:
        os.close(ready_r)
        os.close(ready_w)
