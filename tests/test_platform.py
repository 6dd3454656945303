"""An open platform: a fifth design from `memsim new design`, user scenarios from any path, the benchmark as
an instrument (variants, knobs, a user's workload), and a core that names no design."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from sim.errors import UsageError
from sim.registry import design, designs

ROOT = Path(__file__).resolve().parent.parent
MEMSIM = [sys.executable, "-m", "sim.cli"]


def memsim(
    *args: str, env: dict[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*MEMSIM, *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        cwd=cwd,
        timeout=600,
    )


def _pythons() -> list[str]:
    """This interpreter, then each one named in ``MEMSIM_TEST_PYTHONS`` (os.pathsep-separated; .ci/run
    sets it to a Python 3.12 venv with memsim installed from this tree when the machine has one)."""
    extra = [p for p in os.environ.get("MEMSIM_TEST_PYTHONS", "").split(os.pathsep) if p]
    return [sys.executable, *extra]


def _usable(python: str) -> str:
    """Why *python* cannot run this tree's memsim ("" when it can): it must import memsim from here."""
    probe = "import sim, sys; print(sim.__file__); print('%d.%d' % sys.version_info[:2])"
    try:
        proc = subprocess.run([python, "-c", probe], capture_output=True, text=True, timeout=120)
    except OSError as exc:
        return f"{python}: {exc}"
    if proc.returncode != 0:
        return f"{python} cannot import memsim: {proc.stderr.strip().splitlines()[-1:]}"
    where = Path(proc.stdout.splitlines()[0]).resolve()
    if ROOT not in where.parents:
        return f"{python} imports memsim from {where.parent}, not from this tree"
    return ""


@pytest.fixture(scope="module", params=_pythons(), ids=lambda p: "this-python" if p == sys.executable else p)
def toy(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """`memsim new design toy`, installed with pip (offline, into a target directory on PYTHONPATH), for
    each interpreter of :func:`_pythons`."""
    python = request.param
    why = _usable(python)
    if why:
        pytest.skip(why)
    base = tmp_path_factory.mktemp("toy")
    cmd = [python, "-m", "sim.cli"]
    proc = subprocess.run([*cmd, "new", "design", "toy", "--path", str(base / "src")], capture_output=True,
                          text=True, timeout=600)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    site = base / "site"
    pip = subprocess.run(
        [python, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--target", str(site),
         str(base / "src")],
        capture_output=True,
        text=True,
    )  # fmt: skip
    assert pip.returncode == 0, pip.stderr[-2000:]
    path = os.pathsep.join([str(site), *filter(None, [os.environ.get("PYTHONPATH")])])
    return {"PYTHONPATH": path, "SRC": str(base / "src"), "PYTHON": python}


def _in(toy: dict[str, str], *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """``memsim ARGS`` under the toy's interpreter with the toy installed."""
    return subprocess.run(
        [toy["PYTHON"], "-m", "sim.cli", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": toy["PYTHONPATH"]},
        cwd=cwd,
        timeout=600,
    )


@pytest.mark.slow
def test_a_new_design_runs_everywhere_with_no_edit_to_memsim(toy: dict[str, str], tmp_path: Path) -> None:
    """The generated design's whole cycle: doc, claims (four directions, exit 0) with --save, replay of every
    saved example, run (its committed output) and bench (with :fixed), on every supported interpreter."""
    doc = _in(toy, "doc", "systems")
    claims = _in(toy, "claims", "--system", "toy", "--json", str(tmp_path / "c.json"), "--save",
                 str(tmp_path / "ex"))  # fmt: skip
    saved = sorted((tmp_path / "ex").glob("*.json"))
    replays = [_in(toy, "replay", str(p), cwd=tmp_path) for p in saved]
    run = _in(toy, "run", "toy_eviction", "--out", str(tmp_path / "run"))
    sweep = ["--seeds", "1", "--steps", "20", "--budgets", "4000", "--out", str(tmp_path / "b"), "--no-plots"]
    bench = _in(toy, "bench", "--designs", "toy,toy:fixed", *sweep)

    assert doc.returncode == 0 and "toy: toy: a last-K-tokens context buffer" in doc.stdout
    assert "report: toy design notes (not shipped)" in doc.stdout
    assert claims.returncode == 0, claims.stdout[-2000:] + claims.stderr
    row = json.loads((tmp_path / "c.json").read_text())["claims"][0]
    assert [row[f"{d}_ok"] for d in ("faithful", "fixed", "off", "combined")] == [True] * 4
    assert [p.name for p in saved] == ["toy.recency-loss.json", "toy.recency-loss.off.json"]
    for p, replay in zip(saved, replays):
        assert replay.returncode == 0 and "replay as expected" in replay.stdout, (p.name, replay.stderr)
    expected = (Path(toy["SRC"]) / "toy" / "scenarios" / "toy_eviction.out").read_text()
    assert run.returncode == 0 and run.stdout == expected, run.stderr
    assert "FACT-0001 LOST" in run.stdout and "FACT-0001 present" in run.stdout
    assert bench.returncode == 0, bench.stderr
    designs_run = {r.split(",")[0] for r in (tmp_path / "b" / "results.csv").read_text().splitlines()[1:]}
    assert designs_run == {"toy", "toy:fixed", "oracle"}


@pytest.mark.slow
def test_the_generated_package_tests_pass(toy: dict[str, str]) -> None:
    """The new package's own tests (every sim.testing conformance check, its claim in every direction)
    pass, and they name the design's record IDs after it."""
    proc = subprocess.run(
        [toy["PYTHON"], "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
        cwd=toy["SRC"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": toy["PYTHONPATH"]},
        timeout=600,
    )
    tests = (Path(toy["SRC"]) / "tests" / "test_toy.py").read_text()
    report = json.loads((Path(toy["SRC"]) / "toy" / "report.json").read_text())

    assert proc.returncode == 0, proc.stdout[-3000:]
    for check in ("adapter", "report", "coverage", "scenarios", "colour", "bench", "claims"):
        assert f"check_{check}(" in tests
    assert report["record_ids"] == ["TOY-OBJ-buffer", "TOY-RTE-eviction"] and report["path"] == ""


#: memsim's design-level conformance tests (marked ``design_level``), rerun with a plugin installed.
DESIGN_LEVEL = ["tests/test_readme.py", "tests/test_coverage.py", "tests/test_scenarios.py",
                "tests/test_bench.py", "tests/test_conformance.py"]  # fmt: skip


@pytest.mark.slow
def test_memsims_design_level_tests_pass_with_the_new_design_installed(toy: dict[str, str]) -> None:
    """README's tables, the claims page, coverage, scenario outputs, bench labels and conformance hold with
    a conforming plugin installed beside memsim's four (and check it too)."""
    if toy["PYTHON"] != sys.executable:
        pytest.skip("once, with this interpreter")
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-v", "-p", "no:cacheprovider", "-m", "design_level", *DESIGN_LEVEL],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": toy["PYTHONPATH"]},
        timeout=600,
    )  # fmt: skip

    assert proc.returncode == 0, proc.stdout[-3000:]
    for test in ("test_every_design_has_a_colour_of_its_own[toy]", "test_report_record_ids_are_complete[toy]",
                 "test_scenario_output_matches_committed[toy_eviction-memory]"):  # fmt: skip
        assert f"{test} PASSED" in proc.stdout


def test_new_design_refuses_bad_names_and_busy_paths(tmp_path: Path) -> None:
    """A name that is not an identifier, an installed design or an importable module is refused."""
    from sim.newdesign import create

    for bad in ("Toy", "1x", "class", "json", next(iter(designs()))):
        with pytest.raises(UsageError):
            create(bad, tmp_path / bad)
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "f").write_text("x")
    with pytest.raises(UsageError, match="not an empty directory"):
        create("toyb", tmp_path / "busy")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["busy"]


def test_sim_names_no_design() -> None:
    """No module of the core imports or names a built-in design: they are found through entry points. A
    reference design named by a common word (``window``) is checked by its package instead (issue 39)."""
    names = "|".join(re.escape(n) for n, d in designs().items() if d.kind != "reference")
    packages = "|".join(re.escape(d.package) for d in designs().values())
    pattern = rf"\b({names})\b|\b({packages})\b|^\s*(from|import) reference\b"
    hits = []
    for path in sorted((ROOT / "sim").rglob("*.py")):
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if re.search(pattern, line, re.IGNORECASE):
                hits.append(f"{path.relative_to(ROOT)}:{i}: {line.strip()}")

    assert hits == []


def test_an_unknown_design_lists_the_installed_ones_and_how_to_add_one() -> None:
    with pytest.raises(UsageError) as exc:
        design("nope")

    assert all(n in str(exc.value) for n in designs())
    assert "memsim new design" in str(exc.value)


# -- user scenarios ---------------------------------------------------------------------------------
@pytest.fixture
def script(tmp_path: Path) -> Path:
    """A built-in scenario copied outside the tree."""
    target = tmp_path / "elsewhere" / "x.py"
    target.parent.mkdir()
    shutil.copy(ROOT / "scenarios" / "merchantbench_id_aliasing.py", target)
    return target


def test_a_scenario_script_runs_from_any_path(script: Path, tmp_path: Path) -> None:
    """`memsim run ELSEWHERE/x.py --seed 3 --out D` and `python ELSEWHERE/x.py --seed 3` print the same."""
    out = tmp_path / "D"

    via_cli = memsim("run", str(script), "--seed", "3", "--out", str(out))
    direct = subprocess.run(
        [sys.executable, str(script), "--seed", "3"], capture_output=True, text=True, timeout=300
    )

    assert via_cli.returncode == 0, via_cli.stderr
    assert direct.returncode == 0, direct.stderr
    assert via_cli.stdout == direct.stdout and via_cli.stdout.strip()
    assert (out / "x.db").exists()


def test_a_script_trace_replays_only_with_the_script_named_on_the_command_line(
    script: Path, tmp_path: Path
) -> None:
    """Replay never runs a script a trace names; with --scenario it reproduces the trace."""
    assert memsim("run", str(script), "--out", str(tmp_path)).returncode == 0

    refused = memsim("replay", str(tmp_path / "x.db"))
    replayed = memsim("replay", str(tmp_path / "x.db"), "--scenario", str(script))

    assert refused.returncode == 2 and "--scenario PATH" in refused.stderr
    assert replayed.returncode == 0 and "identical trace" in replayed.stdout


def test_a_scenario_file_may_name_a_script_relative_to_itself(script: Path, tmp_path: Path) -> None:
    toml = script.parent / "s.toml"
    toml.write_text('scenario = "x.py"\nseed = 5\n')

    assert memsim("run", str(toml)).stdout == memsim("run", str(script), "--seed", "5").stdout


def test_doc_params_lists_types_defaults_and_bounds() -> None:
    """`memsim doc params SCENARIO` shows each parameter with its type, default and bounds."""
    from sim.scenario import scenarios

    with_params = next(s for s in scenarios().values() if s.params.model_fields)
    proc = memsim("doc", "params", with_params.name)

    assert proc.returncode == 0
    for name in with_params.params.model_fields:
        assert re.search(rf"^  {name}: \w+", proc.stdout, re.MULTILINE), proc.stdout


# -- the benchmark as an instrument -----------------------------------------------------------------
def _workload(path: Path, lines: list[dict]) -> Path:
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


def test_bench_runs_variants_knobs_and_a_user_workload(tmp_path: Path) -> None:
    """`--designs d,d:fixed --knob d.KEY=V --workload W.jsonl` runs side by side (the first design's knob)."""
    d = next(iter(designs().values()))
    knob = next(iter(d.knobs.model_fields), None)
    lines = [{"observation": "the shop opened", "facts": ["FACT-0001=amber"]}]
    lines += [{"observation": "a quiet hour " * 20} for _ in range(6)]
    lines += [
        {"observation": "a customer asks", "probe": "FACT-0001"},
        {"observation": "calm", "phase": "calm"},
    ]
    w = _workload(tmp_path / "w.jsonl", lines)
    args = ["bench", "--designs", f"{d.name},{d.name}:fixed", "--workload", str(w), "--seeds", "1"]
    args += ["--budgets", "4000", "--out", str(tmp_path / "b"), "--no-plots"]
    if knob is not None:
        default = d.knobs.model_fields[knob].default
        args += ["--knob", f"{d.name}.{knob}={json.dumps(default)}"]

    proc = memsim(*args)

    assert proc.returncode == 0, proc.stderr
    rows = (tmp_path / "b" / "results.csv").read_text().splitlines()
    assert len(rows) == 1 + 3 and rows[1].startswith(f"{d.name},")


def test_a_user_workload_runs_once_per_window_unless_more_runs_are_asked_for(tmp_path: Path) -> None:
    """The file is the same in every run: by default one run per window; `--seeds 2` reruns it and the table
    says that only the designs' own randomness, seeded per run, differs."""
    d = next(iter(designs()))
    lines = [{"observation": "the shop opened", "facts": ["FACT-0001=amber"]}]
    lines += [{"observation": "a quiet hour " * 20} for _ in range(4)] + [
        {"observation": "q", "probe": "FACT-0001"}
    ]
    w = _workload(tmp_path / "w.jsonl", lines)
    base = ["bench", "--designs", d, "--workload", str(w), "--budgets", "4000", "--no-plots"]

    once = memsim(*base, "--out", str(tmp_path / "once"))
    twice = memsim(*base, "--seeds", "2", "--out", str(tmp_path / "twice"))

    assert once.returncode == 0 and twice.returncode == 0, once.stderr + twice.stderr
    rows = {k: (tmp_path / k / "results.csv").read_text().splitlines()[1:] for k in ("once", "twice")}
    assert len(rows["once"]) == 2 and len(rows["twice"]) == 4  # the design and the oracle, per run
    assert "on w.jsonl (one run per window" in " ".join(once.stdout.split())
    assert "only the designs' own randomness seeded per run" in " ".join(twice.stdout.split())


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (
            ['{"observation": "x", "probe": "FACT-0009"}'],
            "line 1: probe: FACT-0009 was not carried by an earlier line",
        ),
        (['{"observation": "x"}', "not json"], "line 2: not a JSON object"),
        (
            ['{"observation": "x", "facts": ["FACT-1=amber"]}'],
            "line 1: facts: 'FACT-1=amber' is not a fact token",
        ),
        (['{"observation": "x", "colour": 1}'], "line 1: colour: Extra inputs are not permitted"),
        (['{"observation": 5}'], "line 1: observation: Input should be a valid string"),
        ([], "has no steps"),
    ],
)
def test_a_bad_workload_file_is_one_line_numbered_error(
    tmp_path: Path, lines: list[str], message: str
) -> None:
    w = tmp_path / "w.jsonl"
    w.write_text("".join(x + "\n" for x in lines))

    proc = memsim("bench", "--workload", str(w), "--out", str(tmp_path / "b"))

    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and message in proc.stderr, proc.stderr
    assert not (tmp_path / "b").exists()


@pytest.mark.parametrize(
    ("designs_arg", "knob", "message"),
    [
        ("nope", None, "unknown design 'nope'"),
        ("{d}:fix=not-a-fix", None, "unknown {d} fix 'not-a-fix'"),
        ("{d}", "{d}.not_a_knob=1", "invalid knob {d}.not_a_knob"),
        ("{d}", "{d}", "--knob takes DESIGN.KEY=VALUE"),
    ],
)
def test_bad_designs_and_knobs_are_one_line_errors(
    tmp_path: Path, designs_arg: str, knob: str | None, message: str
) -> None:
    d = next(iter(designs()))
    args = ["bench", "--designs", designs_arg.format(d=d), "--out", str(tmp_path / "b")]
    if knob:
        args += ["--knob", knob.format(d=d)]

    proc = memsim(*args)

    assert proc.returncode == 2 and message.format(d=d) in proc.stderr, proc.stderr


# -- a broken plugin ---------------------------------------------------------------------------------
@pytest.fixture
def broken_plugin(tmp_path: Path) -> dict[str, str]:
    """An installed distribution ``memsim-badplug`` whose design and scenarios raise on import."""
    site = tmp_path / "site"
    (site / "badplug").mkdir(parents=True)
    (site / "badplug" / "__init__.py").write_text('raise RuntimeError("boom")\n')
    info = site / "memsim_badplug-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: memsim-badplug\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        "[memsim.designs]\nbadplug = badplug.design:DESIGN\n\n"
        "[memsim.scenarios]\nbadplug = badplug.scenarios\n"
    )
    return {"PYTHONPATH": os.pathsep.join([str(site), *filter(None, [os.environ.get("PYTHONPATH")])])}


def test_a_broken_plugin_is_skipped_with_one_warning_line(
    broken_plugin: dict[str, str], tmp_path: Path
) -> None:
    """A command that does not need the broken design runs (exit 0), after one warning line naming the
    plugin and its error; memsim's own designs and scenarios are all there."""
    from sim.scenario import scenarios

    first = next(iter(scenarios()))
    run = memsim("run", first, "--out", str(tmp_path / "r"), env=broken_plugin)
    doc = memsim("doc", "systems", env=broken_plugin)

    for proc in (run, doc):
        assert proc.returncode == 0, proc.stderr
        warnings = [line for line in proc.stderr.splitlines() if line.startswith("memsim: warning:")]
        assert len(warnings) == 1 and "plugin memsim-badplug was skipped" in warnings[0]
        assert "RuntimeError: boom" in warnings[0]
    assert run.stdout == memsim("run", first, "--out", str(tmp_path / "r2")).stdout
    assert all(f"{name}: " in doc.stdout for name in designs())


@pytest.mark.parametrize(
    "args",
    [
        ("claims", "--system", "badplug"),
        ("bench", "--designs", "badplug", "--out", "{out}"),
        ("doc", "claims", "--system", "badplug"),
    ],
)
def test_a_command_naming_a_broken_plugin_is_one_error_line(
    broken_plugin: dict[str, str], tmp_path: Path, args: tuple[str, ...]
) -> None:
    """Naming the broken design is bad input: exit 2, exactly one line (the error says what broke)."""
    proc = memsim(*(a.format(out=tmp_path / "o") for a in args), env=broken_plugin)

    assert proc.returncode == 2 and proc.stdout == "", proc.stderr
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("memsim: error: design 'badplug'")
    assert "RuntimeError: boom" in proc.stderr
    assert not (tmp_path / "o").exists()
