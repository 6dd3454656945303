"""House style is enforced where it is checked: ruff (lint and format) and mypy run clean on the tree."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _tool(name: str) -> list[str]:
    exe = Path(sys.executable).with_name(name)
    if exe.exists():
        return [str(exe)]
    found = shutil.which(name)
    assert found, f"{name} is part of the test extra"
    return [found]


@pytest.mark.slow
@pytest.mark.parametrize("args", [["check", "."], ["format", "--check", "."]], ids=["lint", "format"])
def test_ruff_is_clean(args) -> None:
    """`ruff check .` and `ruff format --check .` report nothing."""
    proc = subprocess.run([*_tool("ruff"), *args], cwd=ROOT, capture_output=True, text=True)

    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-1000:]


@pytest.mark.slow
def test_mypy_is_clean() -> None:
    """`mypy` (configured in pyproject.toml for sim/ and systems/) reports no errors."""
    proc = subprocess.run([*_tool("mypy"), "--no-incremental"], cwd=ROOT, capture_output=True, text=True)

    assert proc.returncode == 0, proc.stdout[-3000:]
