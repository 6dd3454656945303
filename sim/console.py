"""Console helpers the command runners share (issue 41): they sit below the runners and the command line
(:mod:`sim.cli`), so that no runner imports the command line that calls it."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def report_console(width: int) -> Any:
    """A rich Console for a command's report on stdout. On a closed pipe rich would exit 1 (a failed
    verdict, by the contract); this one raises ``BrokenPipeError``, which ends the command with 141."""
    from rich.console import Console

    class _ReportConsole(Console):
        def on_broken_pipe(self) -> None:
            self.quiet = True
            raise BrokenPipeError(32, "Broken pipe")

    return _ReportConsole(width=width, highlight=False)


def outputs_written(*paths: Path | None) -> list[Path]:
    return [p for p in paths if p is not None]
