"""The README is a contract: its test command is exactly what .ci/run runs."""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_ci_runs_the_readme_test_command() -> None:
    """The pytest invocation in .ci/run appears verbatim in the README's test command."""
    ci = (ROOT / ".ci" / "run").read_text()
    readme = (ROOT / "README.md").read_text()
    ci_cmd = next(line for line in ci.splitlines() if "pytest" in line and not line.startswith("#"))
    assert ci_cmd.strip() in readme
    assert 'install -q -e ".[test]"' in ci and 'pip install -e ".[test]"' in readme
