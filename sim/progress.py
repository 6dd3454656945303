"""Progress bars for long runs (rich), on stderr so that stdout stays a deterministic report."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn


@contextmanager
def progress_bar(label: str, total: int, *, enabled: bool = True) -> Iterator[tuple[Progress, TaskID]]:
    """A transient progress bar of *total* steps: yields the bar and its task id (``bar.advance(task)``)."""
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
