"""`memsim demo` (the README's first command) runs end to end on the embedded defaults."""

import re
import subprocess
import sys

import pytest


@pytest.mark.slow
def test_demo_runs_end_to_end(tmp_path) -> None:
    """The demo prints a short summary (under 60 lines: the claims headline, the benchmark per window, the
    findings per design, the page to open) and leaves traces, plots and pages behind; the index opens with
    the findings."""
    out = tmp_path / "demo"

    proc = subprocess.run(
        [sys.executable, "-m", "sim.cli", "demo", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=900,
    )

    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = proc.stdout.rstrip("\n").splitlines()
    assert len(lines) < 60, proc.stdout
    assert "counterexamples found on upstream's designs" in proc.stdout
    assert "context-budget benchmark" in proc.stdout
    assert "oracle" in proc.stdout
    assert "findings per design" in proc.stdout and "recall" in proc.stdout
    assert "┏" not in proc.stdout  # the full tables are behind --verbose
    # issue 40: it talks while it works (stderr, off a terminal too), names its workload, and says per
    # design how many failure modes were reproduced and what a run costs with a provider's cache.
    assert [ln for ln in proc.stderr.splitlines() if ln.startswith("memsim: demo ")] == [
        "memsim: demo 1/4: each design's scenario",
        "memsim: demo 2/4: the claims ledger (quick profile)",
        "memsim: demo 3/4: the context-budget benchmark (priced as anthropic)",
        "memsim: demo 4/4: the conversation benchmark and the index",
    ]
    assert "60 load steps + a 10-step calm tail (70 steps per cell)" in proc.stdout
    found = [ln for ln in lines if re.match(r"  (merchantbench|nemsy|rsiagent|tracecraft): ", ln)]
    assert len(found) == 4 and all("failure modes reproduced on upstream's design" in ln for ln in found)
    assert all(re.search(r"\$\d+\.\d\d/run, cache hit ratio [01]\.\d{3}", ln) for ln in found), found
    assert (out / "bench" / "results.db").exists()
    assert (out / "bench" / "recall_vs_budget.png").exists()
    assert (out / "bench" / "tokens_over_time.png").exists()
    traces = sorted((out / "traces").glob("*.db"))
    assert traces and all(t.with_suffix(".html").exists() for t in traces)
    assert (out / "index.html").exists() and (out / "claims.html").exists()
    assert 'id="findings"' in (out / "index.html").read_text()
    assert not list(out.rglob(".*.partial-*"))
    try:  # the conversation benchmark joins the demo once its loaders are installed (issue 28)
        import sim.conversations.formats  # noqa: F401
    except ImportError:
        pass
    else:
        assert "real conversations" in proc.stdout
        for kind in ("longmemeval", "locomo"):
            assert (out / "conversations" / kind / "questions.csv").exists()
            assert (out / "conversations" / kind / "index.html").exists()
        # Issue 38: at the windows fitted to each demo sample the designs differ (not "all 1.00"), and the
        # recall quoted is the window-enforced one.
        quoted = [ln for ln in lines if "turn recall at the" in ln]
        assert len(quoted) == 2
        for ln in quoted:
            values = set(re.findall(r" (\d\.\d{3})(?:,|$)", ln))
            assert len(values) > 1, ln
    # README: it ends by printing the path of index.html; it says how many files it wrote.
    assert lines[-1] == f"report: {out / 'index.html'}"
    wrote = next(re.match(r"wrote (\d+) files under (.+?) \(", ln) for ln in lines if ln.startswith("wrote "))
    on_disk = sorted(str(p) for p in out.rglob("*") if p.is_file())
    assert wrote is not None and int(wrote.group(1)) == len(on_disk) and wrote.group(2) == str(out)
