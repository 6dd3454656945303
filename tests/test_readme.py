"""The README is a contract: its test command is exactly what .ci/run runs, its generated blocks (designs,
claim counts, scenarios, the CLI synopsis) are current, and its scenario skeleton runs."""

import re
import subprocess
import sys
from pathlib import Path

from sim.docgen import readme_blocks, update_readme

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_ci_runs_the_readme_test_command() -> None:
    """The pytest invocation in .ci/run appears verbatim in the README's test command."""
    ci = (ROOT / ".ci" / "run").read_text()
    ci_cmd = next(line for line in ci.splitlines() if "pytest" in line and not line.startswith("#"))
    assert ci_cmd.strip() in README
    assert 'install -q -e ".[test]"' in ci and 'pip install -e ".[test]"' in README


def test_generated_blocks_are_current() -> None:
    """Counts, tables and the synopsis are generated (`python dev/gendocs.py`), never typed."""
    assert set(readme_blocks()) <= set(re.findall(r"<!-- memsim:(\w+) -->", README))
    assert update_readme(README) == README, "README is stale: run `python dev/gendocs.py`"


def test_the_scenario_skeleton_runs(tmp_path: Path) -> None:
    """The "Writing a scenario" skeleton is a runnable script: its parameters are listed with bounds."""
    block = README.split("## Writing a scenario", 1)[1]
    code = re.search(r"```python\n(.*?)```", block, re.DOTALL).group(1)  # type: ignore[union-attr]
    script = tmp_path / "my_scenario.py"
    script.write_text(code)

    doc = subprocess.run(
        [sys.executable, "-m", "sim.cli", "doc", "params", str(script)], capture_output=True, text=True
    )
    run = subprocess.run([sys.executable, str(script), "--seed", "3"], capture_output=True, text=True)

    assert doc.returncode == 0 and "observation_tokens: int = 4000  (>= 1, <= 100,000)" in doc.stdout, (
        doc.stderr
    )
    assert run.returncode == 0 and run.stdout.startswith("summary line"), run.stderr
