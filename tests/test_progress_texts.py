"""Commands that talk while they work, and the words they use (issue 40): progress lines on stderr off a
terminal, the summary before a long table, `workload synth`'s size warning, the plugin author's gaps
and the text bugs."""

from __future__ import annotations

import io
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from sim import claims as cl
from sim import ledger
from sim.cli import main

ROOT = Path(__file__).resolve().parents[1]
CLAIM = "nemsy.duplicate-index-on-reingest"


def _run(argv: list[str]) -> int:
    try:
        main(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    return 0


def test_progress_off_a_terminal_is_a_line_per_phase_and_about_every_ten_seconds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Item 4: off a terminal the bar is plain lines: one at the start, one per EVERY_S of the monotonic
    clock while it runs, one at the end; nothing when disabled."""
    from sim import progress

    err = io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    now = [0.0]
    with progress.progress_bar("claims", 5) as (bar, task):
        bar.clock = lambda: now[0]  # the test's clock: no sleeping
        bar.t0 = bar.last = 0.0
        for step in (1.0, 4.0, 12.0, 13.0, 30.0):
            now[0] = step
            bar.advance(task)
    lines = err.getvalue().splitlines()
    assert lines == [
        "memsim: claims: 5 to run",
        "memsim: claims: 3/5 done, 12 s",
        "memsim: claims: 5/5 done in 30 s",
    ]
    err.truncate(0)
    with progress.progress_bar("claims", 5, enabled=False) as (bar, task):
        bar.advance(task)
    assert err.getvalue().strip("\0") == ""


def test_claims_reports_progress_off_a_terminal_and_prints_its_summary_before_the_table() -> None:
    """Item 4 and 6: `memsim claims` in a pipe: progress on stderr, the headline before the table, the
    table's last column labelled "seconds"."""
    proc = subprocess.run(
        [sys.executable, "-m", "sim.cli", "claims", "--profile", "quick", "--claim", CLAIM],
        capture_output=True, text=True, cwd=ROOT, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "memsim: claims: 1 to run" in proc.stderr and "memsim: claims: 1/1 done in" in proc.stderr
    out = proc.stdout.splitlines()
    assert out[0].startswith("1 claim: ") and "1 claims" not in proc.stdout
    table = next(i for i, ln in enumerate(out) if "memsim claims ledger" in ln)
    assert table > 0 and "seconds" in proc.stdout


def test_workload_synth_states_size_and_time_first_and_defaults_to_about_a_minute(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Item 9: the size and the bench time are stated before writing; the default is about a minute."""
    from sim.conversations.synth import DEFAULT_INSTANCES, plan

    size, seconds = plan("longmemeval", DEFAULT_INSTANCES, 48, 10, 0)
    assert 30 <= seconds <= 120 and size < 100e6
    out = tmp_path / "lme.json"
    assert _run(["workload", "synth", "longmemeval", "--out", str(out), "--instances", "3"]) == 0
    cap = capsys.readouterr()
    said = re.search(
        r"workload synth: 3 longmemeval instances .* about ([\d.]+) MB; .* about (\d+) s", cap.err
    )
    assert said is not None
    assert abs(float(said.group(1)) * 1e6 - out.stat().st_size) < 0.1 * out.stat().st_size
    assert _run(["workload", "synth", "--help"]) == 0
    assert re.search(rf"\[default:\s+{DEFAULT_INSTANCES};", capsys.readouterr().out)


def test_check_claims_shows_the_counterexample_of_a_failing_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    """Item 10: a fixed direction that fails names the example it fails on and why."""
    from sim import conformance, search

    def fake(claim: Any, direction: str, profile: str = "ci", seed: int = 0) -> search.Outcome:
        ok = direction != cl.FIXED
        return search.Outcome(claim.id, direction, ok, 7, 0.0, 0, {"x": 1}, '{"x": 1}', "FACT-0001 lost")

    monkeypatch.setattr(search, "run_direction", fake)
    problems = conformance.check_claims("nemsy")
    assert problems and all('fails on {"x": 1} (FACT-0001 lost)' in p for p in problems)


def test_the_ledger_words_a_design_with_no_upstream_and_counts_in_the_singular(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Item 10: "1 claim", and a design whose report names no source is not called upstream's."""
    c = cl.get(CLAIM)
    row = ledger.new_row(c, 0)
    for d in cl.DIRECTIONS:
        row.directions[d] = ledger.Direction(d, True, 1, 0.0)
    assert ledger.headline([row], "quick", 0).startswith("1 claim: 1/1 counterexamples found on upstream's")
    monkeypatch.setattr(ledger, "has_upstream", lambda system: False)
    text = ledger.headline([row], "quick", 0)
    assert "upstream" not in text.replace("(no upstream)", "") and "on the designs as written" in text


def test_text_bugs_are_gone() -> None:
    """Item 10: "a outside the scope one", "over 1 seeds", "holds: " with nothing after it."""
    d = ledger.Direction(cl.FAITHFUL, True, 3, 0.0, summary="[1]", exhaustive=True, cases=3, total=9)
    d.first_counterexample = [1]
    d.hypothesis = {"summary": "[5]", "in_scope": False}
    assert d.text().endswith("; Hypothesis shrank to one outside the scope: [5]")
    d.hypothesis = {"summary": "[2]", "in_scope": True}
    assert d.text().endswith("; Hypothesis shrank to a larger one: [2]")
    from sim.report.bench import _seeds

    assert _seeds(1) == "1 seed" and _seeds(2) == "2 seeds"
    source = (ROOT / "sim" / "replay.py").read_text()
    assert 'f"{claim.id} [{v}]: {state}: {verdict.detail}"' not in source


def test_report_of_a_results_database_says_pass_the_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Item 10: `memsim report DIR/results.db` points to the directory; --help describes the default."""
    from sim import bench, bench_outputs

    rows = bench.run_sweep(bench.tasks_for(["oracle"], [4000], 1, 10), progress=False)
    bench_outputs.write_outputs(rows, tmp_path / "b", plots=False)
    assert _run(["report", str(tmp_path / "b" / "results.db")]) == 2
    err = capsys.readouterr().err
    assert "pass the directory that holds it" in err and "meta is missing" not in err
    assert _run(["report", "--help"]) == 0
    assert "DIR/index.html" in re.sub(r"\s+", " ", capsys.readouterr().out).replace("│", "")


def test_the_scaffold_installs_pytest_and_its_claim_driver_records_a_request() -> None:
    """Item 10: the scaffold's README install brings pytest; its claim records a model request; the
    workload text it depends on is documented and matches the source."""
    from sim import workload
    from sim.text import FACT_VALUES

    template = ROOT / "sim" / "newdesign" / "template"
    assert 'pip install -e ".[test]"' in (template / "README.md").read_text()
    assert 'test = ["pytest' in (template / "pyproject.toml.tmpl").read_text()
    assert "sim.request(SYSTEM" in (template / "__PKG__" / "drivers.py.tmpl").read_text()
    doc = (ROOT / "docs" / "workload-text.md").read_text()
    w = workload.make_workload(3, 40)
    asked = next(s for s in w.steps if s.question)
    assert asked.question == f"Question: what is the value of {asked.probe}?"
    assert "Question: what is the value of FACT-0017?" in doc
    assert all(f"`{v}`" in doc for v in FACT_VALUES)
    assert (ROOT / "sim" / "data" / "words.txt").read_text().count("\n") - 1 == 2000 and "2,000 words" in doc


def test_cache_docstrings_cite_pages_not_the_tool() -> None:
    """A citation names the page and the date read, never how it was looked up."""
    for p in (ROOT / "sim" / "cache").glob("*.py"):
        assert "search`` tool" not in p.read_text() and "stored cop" not in p.read_text(), p
