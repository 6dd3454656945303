"""Progress on long runs, on stderr and only on a terminal, so stdout stays a deterministic report.

:func:`progress_bar` is a transient bar for a known number of steps (claims, benchmark cells);
:func:`run_progress` is a status line for a scenario run, fed by the trace every few thousand records.
Neither draws anything when stderr is not a terminal (so an error stays one line).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn


@contextmanager
def progress_bar(label: str, total: int, *, enabled: bool = True) -> Iterator[tuple[Progress, TaskID]]:
    """A transient progress bar of *total* steps: yields the bar and its task id (``bar.advance(task)``)."""
    enabled = enabled and sys.stderr.isatty()
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        disable=not enabled,
        transient=True,
    ) as bar:
        yield bar, bar.add_task(label, total=total)


@contextmanager
def run_progress(name: str, *, enabled: bool = True) -> Iterator[Callable[[int, float], None] | None]:
    """A status line for a scenario run; yields the hook ``(records, sim_seconds)`` (None when off)."""
    if not (enabled and sys.stderr.isatty()):
        yield None
        return
    console = Console(stderr=True)
    with console.status(f"run {name}") as status:

        def hook(records: int, now: float) -> None:
            status.update(f"run {name}: simulation time {now:,.0f} s, {records:,} trace records")

        yield hook
