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


@pytest.fixture(scope="module")
def toy(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """`memsim new design toy`, installed with pip (offline, into a target directory on PYTHONPATH)."""
    base = tmp_path_factory.mktemp("toy")
    proc = memsim("new", "design", "toy", "--path", str(base / "src"))
    assert proc.returncode == 0, proc.stderr
    site = base / "site"
    pip = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "--target",
            str(site),
            str(base / "src"),
        ],
        capture_output=True,
        text=True,
    )
    assert pip.returncode == 0, pip.stderr[-2000:]
    path = os.pathsep.join([str(site), *filter(None, [os.environ.get("PYTHONPATH")])])
    return {"PYTHONPATH": path, "SRC": str(base / "src")}


@pytest.mark.slow
def test_a_new_design_runs_everywhere_with_no_edit_to_memsim(toy: dict[str, str], tmp_path: Path) -> None:
    """The generated design appears in doc, claims (four directions, exit 0), run and bench (with :fixed)."""
    env = {"PYTHONPATH": toy["PYTHONPATH"]}

    doc = memsim("doc", "systems", env=env)
    claims = memsim("claims", "--system", "toy", "--json", str(tmp_path / "c.json"), env=env)
    run = memsim("run", "toy_eviction", "--out", str(tmp_path / "run"), env=env)
    sweep = ["--seeds", "1", "--steps", "20", "--budgets", "4000", "--out", str(tmp_path / "b"), "--no-plots"]
    bench = memsim("bench", "--designs", "toy,toy:fixed", *sweep, env=env)

    assert doc.returncode == 0 and "toy: toy: a plain last-K-tokens context buffer" in doc.stdout
    assert claims.returncode == 0, claims.stdout[-2000:] + claims.stderr
    row = json.loads((tmp_path / "c.json").read_text())["claims"][0]
    assert [row[f"{d}_ok"] for d in ("faithful", "fixed", "off", "combined")] == [True] * 4
    assert run.returncode == 0 and "FACT-0001 LOST" in run.stdout and "FACT-0001 present" in run.stdout
    assert bench.returncode == 0, bench.stderr
    designs_run = {r.split(",")[0] for r in (tmp_path / "b" / "results.csv").read_text().splitlines()[1:]}
    assert designs_run == {"toy", "toy:fixed", "oracle"}


@pytest.mark.slow
def test_the_generated_package_tests_pass(toy: dict[str, str]) -> None:
    """The new package's own test (adapter conformance and the claim in every direction) passes."""
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
        cwd=toy["SRC"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": toy["PYTHONPATH"]},
        timeout=600,
    )

    assert proc.returncode == 0, proc.stdout[-3000:]


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
    """No module of the core imports or names a built-in design: they are found through entry points."""
    names = "|".join(re.escape(n) for n in designs())
    hits = []
    for path in sorted((ROOT / "sim").rglob("*.py")):
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if re.search(rf"\b({names})\b", line, re.IGNORECASE):
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
