"""Progress on long runs, on stderr, so stdout stays a deterministic report.

:func:`progress_bar` is a transient bar for a known number of steps (claims, benchmark cells) on a
terminal, and off one (a CI log, a notebook, a pipe) a plain line when the work starts, about every
:data:`EVERY_S` seconds while it runs and when it ends; :func:`phase` is one such line for a step of a
longer command (the demo's parts). :func:`run_progress` is a status line for a scenario run, fed by the
trace every few thousand records (a terminal only). Progress time comes from a monotonic clock and only
ever reaches stderr: no output file or stdout line depends on it.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

#: Off a terminal, the longest silence between two progress lines, in seconds.
EVERY_S = 10.0


def phase(text: str, *, enabled: bool = True) -> None:
    """One progress line on stderr (``memsim: TEXT``), on a terminal or not."""
    if enabled:
        sys.stderr.write(f"memsim: {text}\n")
        sys.stderr.flush()


class LineProgress:
    """The bar's interface off a terminal: a line at the start, then about every :data:`EVERY_S` seconds,
    and at the end (``LABEL: 12/40 done, 31 s``)."""

    def __init__(self, label: str, total: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.label, self.total, self.done, self.clock = label, total, 0, clock
        self.t0 = self.last = clock()
        phase(f"{label}: {total:,} to run")

    def update(self, task: Any = None, *, description: str | None = None, **_: Any) -> None:
        """Like rich's ``Progress.update``; the description is quoted in the next line."""
        if description:
            self.label = description.split(":")[0] if ":" in description else description

    def advance(self, task: Any = None, advance: float = 1) -> None:
        self.done += int(advance)
        now = self.clock()
        if now - self.last >= EVERY_S and self.done < self.total:
            self.last = now
            phase(f"{self.label}: {self.done:,}/{self.total:,} done, {now - self.t0:,.0f} s")

    def finish(self) -> None:
        phase(f"{self.label}: {self.done:,}/{self.total:,} done in {self.clock() - self.t0:,.0f} s")


@contextmanager
def progress_bar(label: str, total: int, *, enabled: bool = True) -> Iterator[tuple[Any, TaskID]]:
    """A progress display of *total* steps: yields the bar and its task id (``bar.advance(task)``): rich's
    transient bar on a terminal, :class:`LineProgress` off one; nothing when not *enabled*."""
    if enabled and not sys.stderr.isatty():
        lines = LineProgress(label, total)
        yield lines, TaskID(0)
        lines.finish()
        return
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
    """A status line for a scenario run; yields the hook ``(records, sim_seconds)`` (None when off). Off a
    terminal the hook writes a line about every :data:`EVERY_S` seconds."""
    if not enabled:
        yield None
        return
    if not sys.stderr.isatty():
        last = [time.monotonic()]

        def line(records: int, now: float) -> None:
            if time.monotonic() - last[0] >= EVERY_S:
                last[0] = time.monotonic()
                phase(f"run {name}: simulation time {now:,.0f} s, {records:,} trace records")

        yield line
        return
    console = Console(stderr=True)
    with console.status(f"run {name}") as status:

        def hook(records: int, now: float) -> None:
            status.update(f"run {name}: simulation time {now:,.0f} s, {records:,} trace records")

        yield hook
