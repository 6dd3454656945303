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


def plain_metavars() -> None:
    """Arguments in help as a person writes them: typer (0.29) shows a required argument as
    ``{SCENARIO}`` in the usage line and appends its type (``SCENARIO <str>``) in the list; memsim's
    metavars already say what to write, so the usage reads ``SCENARIO`` (``[TOPIC]`` when optional)
    and the list ``SCENARIO``."""
    from typer.core import TyperArgument

    def usage(self: Any) -> str:
        name = str(self.display_name_raw)
        if not self.required and not name.startswith("["):
            name = f"[{name}]"
        return name + ("..." if self.nargs != 1 else "")

    if hasattr(TyperArgument, "_usage_display_name") and hasattr(TyperArgument, "display_type_rich"):
        TyperArgument._usage_display_name = usage  # type: ignore[method-assign]
        TyperArgument.display_type_rich = lambda self, ctx: None  # type: ignore[method-assign]
