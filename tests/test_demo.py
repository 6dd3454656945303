"""`memsim demo` (the README's first command) runs end to end on the embedded defaults."""

import subprocess
import sys

import pytest


@pytest.mark.slow
def test_demo_runs_end_to_end(tmp_path) -> None:
    """The demo prints the claims ledger and the benchmark table, and leaves traces and plots behind."""
    out = tmp_path / "demo"

    proc = subprocess.run(
        [sys.executable, "-m", "sim.cli", "demo", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=600,
    )

    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "counterexamples found on upstream's designs" in proc.stdout
    assert "context-budget benchmark" in proc.stdout
    assert "oracle" in proc.stdout
    assert (out / "bench" / "results.db").exists()
    assert (out / "bench" / "recall_vs_budget.png").exists()
    assert (out / "bench" / "tokens_over_time.png").exists()
    traces = sorted((out / "traces").glob("*.db"))
    assert traces and all(t.with_suffix(".html").exists() for t in traces)
    assert (out / "index.html").exists() and (out / "claims.html").exists()
    assert not list(out.rglob(".*.partial-*"))
    try:  # the conversation benchmark joins the demo once its loaders are installed (issue 28)
        import sim.conversations.formats  # noqa: F401
    except ImportError:
        pass
    else:
        assert "real conversations" in proc.stdout
        assert (out / "conversations" / "questions.csv").exists()
        assert (out / "conversations" / "index.html").exists()
    # README: it ends by printing the path of index.html; every file it wrote is listed, each once.
    lines = proc.stdout.rstrip("\n").splitlines()
    assert lines[-1] == f"report: {out / 'index.html'}"
    listed = [line.removeprefix("wrote ") for line in lines if line.startswith("wrote ")]
    on_disk = sorted(str(p) for p in out.rglob("*") if p.is_file())
    assert sorted(listed) == on_disk
