"""A process pool for claims and benchmark cells that a Ctrl-C stops within a second.

:func:`ordered_pool` yields each result as its task finishes. On ``KeyboardInterrupt`` (or any error) it
cancels the pending tasks, terminates the workers instead of waiting for their current task, and
re-raises, so ``memsim bench --workers N`` and ``memsim claims --workers N`` exit promptly with code 130
and their partial outputs removed by the caller.
"""

from __future__ import annotations

import multiprocessing
import signal
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from typing import Any, TypeVar

T = TypeVar("T")
R = TypeVar("R")


def _ignore_sigint() -> None:
    # Workers leave Ctrl-C to the parent, which terminates them; otherwise each prints a traceback.
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _context() -> Any:
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")


def executor(workers: int) -> ProcessPoolExecutor:
    """A pool of *workers* fresh processes (``forkserver``) that leave Ctrl-C to this process; stop it
    with :func:`terminate` on an error, as :func:`ordered_pool` does."""
    return ProcessPoolExecutor(max_workers=workers, mp_context=_context(), initializer=_ignore_sigint)


def terminate(pool: ProcessPoolExecutor, pending: Iterable[Future[Any]] = ()) -> None:
    """Cancel *pending* and stop *pool*'s workers now, without waiting for their current task."""
    for fut in pending:
        fut.cancel()
    for proc in list(getattr(pool, "_processes", {}).values()):
        proc.terminate()
    pool.shutdown(wait=False, cancel_futures=True)


def ordered_pool(fn: Callable[[T], R], items: Sequence[T], workers: int) -> Iterator[R]:
    """Run ``fn(item)`` for every item in *workers* fresh processes; yield results as they finish.

    Workers start from a clean interpreter (``forkserver``), not from a fork of the parent, so a
    worker's caches hold only what its own tasks put there.
    """
    pool = executor(workers)
    pending: set[Future[R]] = set()
    try:
        pending = {pool.submit(fn, item) for item in items}
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for fut in done:
                yield fut.result()
    except BaseException:
        terminate(pool, pending)
        raise
    pool.shutdown(wait=True)
