"""Same seed, same trace bytes: one scenario per design, run in two fresh processes whose string hashing
differs (``PYTHONHASHSEED``), must write byte-identical trace databases and print identical summaries."""

import os
import subprocess
import sys

import pytest

SCENARIOS = [
    "merchantbench_suffix_eviction",
    "nemsy_title_collision",
    "rsiagent_wave_conflict",
    "tracecraft_skewed_team",
]


def _run(name: str, out, hashseed: str) -> str:
    env = {**os.environ, "PYTHONHASHSEED": hashseed}
    proc = subprocess.run(
        [sys.executable, "-m", "sim.cli", "run", name, "--out", str(out)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


@pytest.mark.slow
@pytest.mark.parametrize("name", SCENARIOS)
def test_trace_is_byte_identical_across_processes(name, tmp_path) -> None:
    """Two processes with different hash seeds write the same trace bytes."""
    first = _run(name, tmp_path / "a", "1")
    second = _run(name, tmp_path / "b", "2")

    assert first == second
    assert (tmp_path / "a" / f"{name}.db").read_bytes() == (tmp_path / "b" / f"{name}.db").read_bytes()
