"""Round three of hostile input (issue 26): the four escapes and the three error messages, one test each.

1. a scenario's ``run()`` (or any code memsim runs) calling ``sys.exit`` or raising ``SystemExit``;
2. knobs typed loosely (``true`` for an integer, ``"yes"`` for a bool) and NaN refused with the wrong rule;
3. two runs committing into one ``--out`` at once;
4. ``memsim report`` on a ledger, a bench database or a trace that is not what its writer produces.

Messages: a fact token's rule, NaN for a knob, a byte-order mark in a scenario file. Each test failed
before its fix. The console-script cases run in the sandbox of ``hostile_box.py``; the rest run
``memsim`` in-process through ``fuzzing.run_cli`` (the same entry and dispatch).
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest
from fuzzing import Result, assert_contract, run_cli, snapshot
from hostile_box import MEMSIM, Sandbox, assert_refused, changed, write

#: A user script that keeps a run root: ``n`` files under the disk tree, one op each.
ROOTFUL = '''"""A script that keeps a run root.

Covers: nothing.
Scenario: writes n files under the run root.
"""

from pydantic import Field

from sim.scenario import Params as BaseParams

SYSTEM = "tracecraft"
SEED = 1


class Params(BaseParams):
    n: int = Field(3, ge=1, le=1000, description="files")


def run(ctx):
    tree = ctx.sim.tree("disk", agent="alice")
    for i in range(ctx.params.n):
        tree.write_text(f"n{i}.txt", "x")
        ctx.sim.trace.op("tracecraft", "w", agent="alice", i=i)
    return [f"{ctx.params.n} files"]
'''


def _exiting(body: str) -> str:
    return f'''"""A script whose run() ends the process.

Covers: nothing.
Scenario: exits.
"""
import sys

SYSTEM = "tracecraft"


def run(ctx):
    ctx.sim.clock("alice")
    {body}
    return ["never"]
'''


# -- 1. sys.exit in user code ---------------------------------------------------------------------------
@pytest.mark.parametrize("body", ["sys.exit(0)", "sys.exit(3)", "raise SystemExit", "sys.exit('bye')"])
def test_sys_exit_in_run_is_refused_and_writes_nothing(box: Sandbox, body: str) -> None:
    """Exit 0 with no output and no trace before the fix; now exit 2 naming sys.exit and the line."""
    write(box, "ex.py", _exiting(body))
    before = box.snapshot()
    r = box.run("run", "ex.py", "--out", "o", "--html")
    assert_refused(r, "sys.exit", "at line 13", "memsim alone sets the exit code")
    assert changed(before, box.snapshot()) == set()


def test_a_base_exception_of_the_scripts_own_is_refused(box: Sandbox) -> None:
    """The class of escape 1: anything that is not an Exception (here a BaseException subclass)."""
    script = _exiting("raise Boom('out')").replace("import sys", "class Boom(BaseException):\n    pass")
    write(box, "ex.py", script)
    before = box.snapshot()
    assert_refused(box.run("run", "ex.py", "--out", "o"), "raised Boom", "out")
    assert changed(before, box.snapshot()) == set()


def test_sys_exit_in_a_params_validator_is_refused(box: Sandbox) -> None:
    """User code memsim runs outside run() (a Params validator) cannot decide the exit code either."""
    script = _exiting("pass").replace(
        'SYSTEM = "tracecraft"',
        'SYSTEM = "tracecraft"\n\nfrom pydantic import field_validator\n'
        "from sim.scenario import Params as P\n\n\n"
        "class Params(P):\n    n: int = 1\n\n    @field_validator('n')\n    @classmethod\n"
        "    def _v(cls, v):\n        sys.exit(0)\n",
    )
    write(box, "ex.py", script)
    before = box.snapshot()
    assert_refused(box.run("run", "ex.py", "--param", "n=2", "--out", "o"), "sys.exit(0)")
    assert changed(before, box.snapshot()) == set()


# -- 2. one strict rule for knobs, params and files --------------------------------------------------------
BENCH = ["bench", "--budgets", "8000", "--seeds", "1", "--steps", "10", "--no-plots", "--out", "b"]


@pytest.mark.parametrize(
    ("designs", "knob", "fragments"),
    [
        ("tracecraft", "tracecraft.memory_keys=true", ("memory_keys", "valid integer", "not true")),
        ("merchantbench", 'merchantbench.read_on_probe="yes"', ("read_on_probe", "valid boolean", '"yes"')),
        ("merchantbench", "merchantbench.read_on_probe=1", ("read_on_probe", "valid boolean", "not 1")),
        ("tracecraft", 'tracecraft.memory_keys="3"', ("memory_keys", "valid integer")),
        (
            "merchantbench",
            "merchantbench.window_scale=NaN",
            ("window_scale", "NaN and infinities are refused"),
        ),
        ("merchantbench", "merchantbench.window_scale=-Infinity", ("NaN and infinities are refused",)),
        ("merchantbench", "merchantbench.window_scale=inf", ("NaN and infinities are refused",)),
        ("merchantbench", "merchantbench.window_scale=1e999", ("NaN and infinities are refused",)),
        ("rsiagent", "rsiagent.fold_batch=nan", ("fold_batch", "NaN and infinities are refused")),
    ],
)
def test_knobs_follow_the_strict_rule(
    tmp_path: Path, designs: str, knob: str, fragments: tuple[str, ...]
) -> None:
    """Before the fix ``true`` ran as 1, ``"yes"`` as True, and NaN said 'less than or equal to 10'."""
    r = run_cli([*BENCH, "--designs", designs, "--knob", knob], tmp_path)
    _refused(r, *fragments)
    assert list(tmp_path.iterdir()) == []


def test_a_knob_still_takes_its_own_types(tmp_path: Path) -> None:
    """The strict rule refuses coercion, not values: an int fills a float knob, text fills a Literal."""
    r = run_cli(
        [*BENCH, "--designs", "merchantbench,nemsy", "--knob", "merchantbench.window_scale=1",
         "--knob", "nemsy.route=query", "--knob", "merchantbench.read_on_probe=false"],
        tmp_path,
    )  # fmt: skip
    assert r.code == 0, r


@pytest.mark.parametrize(
    ("args", "fragments"),
    [
        (["--param", "step_s=NaN"], ("step_s", "NaN and infinities are refused")),
        (["--param", "step_s=-inf"], ("step_s", "NaN and infinities are refused")),
        (["--param", "step_s=1e999"], ("step_s", "NaN and infinities are refused")),
        (["--param", "steps=true"], ("steps", "not true")),
        (["--fault", "drift:alice=1e999"], ("drift", "NaN and infinities are refused")),
    ],
)
def test_params_and_faults_say_which_rule(box: Sandbox, args: list[str], fragments: tuple[str, ...]) -> None:
    r = run_cli(["run", "toy.py", *args], box.work)
    _refused(r, *fragments)


def test_scenario_file_nan_says_so(box: Sandbox) -> None:
    write(box, "s.toml", 'scenario = "toy.py"\n[params]\nstep_s = nan\n')
    _refused(run_cli(["run", "s.toml"], box.work), "step_s", "NaN and infinities are refused")


# -- 3. concurrent runs into one --out ----------------------------------------------------------------
def test_a_commit_holds_its_directory_until_every_output_is_in_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While one run renames its trace and its run root into ``D``, no other run can commit into ``D``
    (before the fix the renames of two runs interleaved: one's trace beside the other's root, or a root
    deleted under a run renaming onto it)."""
    import fcntl

    from sim import outputs as so

    d = tmp_path / "D"
    out = so.Outputs()
    out.write_text(d / "t.db", "trace")
    root = out.stage_dir(d / "t-root", "run root")
    root.mkdir()
    (root / "f").write_text("x")
    (d / "t-root").mkdir()  # an earlier run's root
    seen: list[bool] = []
    real_replace = os.replace

    def replace(src: object, dst: object) -> None:
        fd = os.open(d, os.O_RDONLY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            seen.append(False)  # another process could have committed here
            fcntl.flock(fd, fcntl.LOCK_UN)
        except BlockingIOError:
            seen.append(True)
        finally:
            os.close(fd)
        real_replace(src, dst)  # type: ignore[arg-type]

    monkeypatch.setattr(so.os, "replace", replace)
    out.commit()
    assert seen and all(seen), seen
    assert (d / "t.db").read_text() == "trace" and (d / "t-root" / "f").read_text() == "x"
    assert sorted(p.name for p in d.iterdir()) == ["t-root", "t.db"]


def test_concurrent_runs_into_one_out_both_succeed_with_matching_outputs(box: Sandbox) -> None:
    """Three runs of a script that keeps a run root, into one ``--out`` at once: every one exits 0 and
    what remains is one run's trace beside that same run's root (before the fix one exited 2 with
    "cannot write n17.txt: No such file or directory" after its trace was renamed into place)."""
    write(box, "rootful.py", ROOTFUL)
    procs = [box.popen("run", "rootful.py", "--out", "D", "--param", f"n={n}") for n in (120, 90, 60)]
    results = [p.communicate(timeout=180) for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0], results
    d = box.work / "D"
    assert sorted(p.name for p in d.iterdir()) == ["rootful-root", "rootful.db"]
    con = sqlite3.connect(d / "rootful.db")
    (params,) = con.execute("SELECT value FROM meta WHERE key = 'params'").fetchone()
    (ops,) = con.execute("SELECT count(*) FROM ops").fetchone()
    con.close()
    n = json.loads(params)["n"]
    assert ops == n and len(list((d / "rootful-root").iterdir())) == n


# -- 4. report inputs validated against their writer's schema ------------------------------------------------
ROW = {
    "claim": "toy.thing", "system": "toy", "records": ["MEM-X"], "statement": "s", "fix": "f",
    "fixes": ["f"], "counterfactual": False, "intent": "", "seconds": 0.1,
    "faithful": {"ok": True, "examples": 3, "seconds": 0.1, "example": [1], "summary": "[1]", "detail": "d"},
    "fixed": None, "off": None, "combined": None,
}  # fmt: skip


@pytest.mark.parametrize(
    ("claims", "fragments"),
    [
        ([{**ROW, "records": 5}], ("claims.0.records", "valid list")),
        ([42], ("claims.0",)),
        ([{}], ("claims.0.claim", "Field required")),
        ([{**ROW, "faithful": {"ok": "yes", "examples": 1}}], ("claims.0.faithful.ok",)),
        ([{**ROW, "faithful": {"ok": True, "examples": "3"}}], ("claims.0.faithful.examples",)),
        ([{**ROW, "seconds": "slow"}], ("claims.0.seconds",)),
    ],
)
def test_report_refuses_a_ledger_its_writer_would_not_write(
    tmp_path: Path, claims: list[object], fragments: tuple[str, ...]
) -> None:
    """``"records": 5`` was "internal error: TypeError"; ``[42]`` and ``[{}]`` wrote a page."""
    (tmp_path / "l.json").write_text(json.dumps({"profile": "ci", "seed": 0, "claims": claims}))
    before = snapshot(tmp_path)
    r = run_cli(["report", "l.json"], tmp_path)
    _refused(r, "l.json", *fragments)
    assert_contract(r, before, snapshot(tmp_path))


def test_report_still_reads_a_valid_hand_written_ledger(tmp_path: Path) -> None:
    (tmp_path / "l.json").write_text(json.dumps({"profile": "ci", "seed": 0, "claims": [ROW]}))
    assert run_cli(["report", "l.json"], tmp_path).code == 0


@pytest.fixture(scope="module")
def bench_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small real bench output directory (one design, one budget, one seed)."""
    base = tmp_path_factory.mktemp("bench")
    r = run_cli([*BENCH[:-1], "b", "--designs", "tracecraft"], base)
    assert r.code == 0, r
    return base / "b"


@pytest.mark.parametrize(
    ("sql", "fragments"),
    [
        ("UPDATE aggregate SET budget = '8k'", ("table aggregate row 1", "budget", '"8k"')),
        ("UPDATE results SET budget = 'x'", ("table results row 1", "budget")),
        ("UPDATE results SET seed = 1.5", ("seed",)),
        ("UPDATE aggregate SET recall = 'high'", ("recall", "number")),
        ("UPDATE results SET design = NULL", ("design",)),
        ("UPDATE aggregate SET tokens_max = 9e999", ("tokens_max",)),
    ],
)
def test_report_refuses_a_bench_database_its_writer_would_not_write(
    bench_dir: Path, tmp_path: Path, sql: str, fragments: tuple[str, ...]
) -> None:
    """A non-integer budget was "internal error: ValueError"."""
    d = tmp_path / "b"
    shutil.copytree(bench_dir, d)
    con = sqlite3.connect(d / "results.db")
    con.execute(sql)
    con.commit()
    con.close()
    before = snapshot(tmp_path)
    r = run_cli(["report", "b"], tmp_path)
    _refused(r, "results.db", *fragments)
    assert_contract(r, before, snapshot(tmp_path))


@pytest.mark.parametrize(
    ("sql", "fragments"),
    [
        ("UPDATE ops SET time = 'noon' WHERE seq = (SELECT min(seq) FROM ops)", ("table ops", "time")),
        ("UPDATE ops SET detail = '{oops' WHERE seq = (SELECT min(seq) FROM ops)", ("detail",)),
        ("UPDATE ops SET time = 9e999 WHERE seq = (SELECT min(seq) FROM ops)", ("finite",)),
        ("UPDATE ops SET op = NULL WHERE seq = (SELECT min(seq) FROM ops)", ("op", "null")),
    ],
)
def test_report_refuses_a_trace_whose_rows_its_writer_would_not_write(
    box: Sandbox, sql: str, fragments: tuple[str, ...]
) -> None:
    from hostile_box import trace_of_toy

    db = trace_of_toy(box)
    con = sqlite3.connect(db)
    con.execute(sql)
    con.commit()
    con.close()
    before = snapshot(box.work)
    r = run_cli(["report", str(db)], box.work)
    _refused(r, *fragments)
    assert_contract(r, before, snapshot(box.work))


# -- messages that name their rule -------------------------------------------------------------------------
def test_a_fact_value_with_a_digit_names_the_rule(tmp_path: Path) -> None:
    """``FACT-123450=amber0`` said only "is not a fact token like FACT-0001=amber"."""
    (tmp_path / "w.jsonl").write_text(
        json.dumps({"observation": "x", "facts": ["FACT-123450=amber0"]}) + "\n"
    )
    r = run_cli(
        ["bench", "--designs", "tracecraft", "--budgets", "8000", "--workload", "w.jsonl", "--out", "b"],
        tmp_path,
    )
    _refused(r, "FACT-123450=amber0", "lower-case letters a-z only", "at least 4 digits")


def test_a_byte_order_mark_is_accepted_at_the_start_of_a_text_input(box: Sandbox, tmp_path: Path) -> None:
    """A UTF-8 BOM gave "Invalid statement (at line 1, column 1)": memsim now reads the text after it, in a
    scenario file, a claims ledger and a workload file alike."""
    write(box, "s.toml", b'\xef\xbb\xbfscenario = "toy.py"\n[params]\nsteps = 1\n')
    r = run_cli(["run", "s.toml"], box.work)
    assert r.code == 0 and "1 steps" in r.out, r
    (tmp_path / "l.json").write_bytes(b"\xef\xbb\xbf" + json.dumps({"claims": [ROW]}).encode())
    assert run_cli(["report", "l.json"], tmp_path).code == 0
    lines = [{"observation": "a", "facts": ["FACT-0001=amber"]}, {"observation": "b", "probe": "FACT-0001"}]
    text = "".join(json.dumps(x) + "\n" for x in lines * 6)
    (tmp_path / "w.jsonl").write_bytes(b"\xef\xbb\xbf" + text.encode())
    r = run_cli(["bench", "--designs", "tracecraft", "--budgets", "8000", "--workload", "w.jsonl",
                 "--no-plots", "--out", "b"], tmp_path)  # fmt: skip
    assert r.code == 0, r


def test_a_byte_order_mark_inside_a_scenario_file_is_refused_in_one_line(box: Sandbox) -> None:
    write(box, "s.toml", b'scenario = "toy.py"\n\xef\xbb\xbfseed = 1\n')
    _refused(run_cli(["run", "s.toml"], box.work), "s.toml")


# -- the in-process entry is the console script's --------------------------------------------------------
@pytest.mark.parametrize(
    "args",
    [
        ["run", "toy.py", "--param", "steps=true"],
        ["run", "toy.py", "--param", "steps=1"],
        ["report", "nope.json"],
    ],
)
def test_run_cli_matches_the_console_script(box: Sandbox, args: list[str]) -> None:
    """What the fuzzers see in-process (exit code, stdout, the error line) is what a user sees."""
    inproc = run_cli(args, box.work)
    proc = subprocess.run(
        [*MEMSIM, *args], cwd=box.work, env=box.env(), capture_output=True, text=True, timeout=120
    )
    assert (inproc.code, inproc.out, inproc.err) == (proc.returncode, proc.stdout, proc.stderr)


def _refused(r: Result, *fragments: str) -> None:
    assert r.code == 2, r
    assert r.out == "", r
    assert r.err.count("\n") == 1 and r.err.startswith("memsim: error: "), r
    for f in fragments:
        assert f in r.err, r
