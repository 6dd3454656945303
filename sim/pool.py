"""A process pool for claims and benchmark cells that a Ctrl-C stops within a second.

:func:`ordered_pool` yields each result as its task finishes. On ``KeyboardInterrupt`` (or any error) it
cancels the pending tasks, terminates the workers instead of waiting for their current task, and
re-raises, so ``memsim bench --workers N`` and ``memsim claims --workers N`` exit promptly with code 130
and their partial outputs removed by the caller.

A terminal's Ctrl-C reaches every process of the foreground group, workers included. A worker still
starting up (importing, before it can ignore SIGINT) would die printing a traceback onto the user's
terminal, so helper processes are started with :func:`quiet_children`: their stderr is ``/dev/null``.
What a worker has to say travels back as its result or exception.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
import tempfile
import threading
from collections.abc import Callable, Generator, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from contextlib import contextmanager, suppress
from typing import Any, TypeVar

T = TypeVar("T")
R = TypeVar("R")


def _ignore_sigint() -> None:
    # Workers leave Ctrl-C to the parent, which terminates them; otherwise each prints a traceback. A
    # forked worker also inherits the parent's SIGTERM handler (cleanup, then exit 143), which would turn
    # the parent's terminate() into an exception the worker returns and survives: it must just die.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOP_SIGNALS)  # blocked across a fork: see forking()


#: The longest AF_UNIX socket path (``sun_path`` is 108 bytes on Linux, 104 on macOS).
_SUN_PATH_MAX = 104


def _context(fork: bool = False) -> Any:
    """The fork server where it can run, else spawn. The fork server listens on a socket under the
    temporary directory, so a long ``TMPDIR`` (over about 60 bytes) rules it out.

    With *fork*, a plain ``fork`` of this process where that is safe: on Linux, and only while this
    process runs a single thread (a fork beside other threads can inherit a lock one of them holds). The
    caller forks before its first task, so the workers start with the imports and the encoding already
    loaded and with caches as empty as a fresh interpreter's (what :func:`run_shared
    <sim.bench.executors.run_shared>` needs: a fresh worker spends a few tenths of a second of a short sweep
    starting up)."""
    methods = multiprocessing.get_all_start_methods()
    if fork and sys.platform == "linux" and "fork" in methods and threading.active_count() == 1:
        return multiprocessing.get_context("fork")
    # multiprocessing names it TMPDIR/pymp-<8 random characters>/listener-<8 random characters>
    socket_path = len(os.fsencode(tempfile.gettempdir())) + len("/pymp-xxxxxxxx/listener-xxxxxxxx")
    if "forkserver" in methods and socket_path < _SUN_PATH_MAX:
        return multiprocessing.get_context("forkserver")
    return multiprocessing.get_context("spawn")


_STOP_SIGNALS = {signal.SIGINT, signal.SIGTERM}


def forks(pool: ProcessPoolExecutor) -> bool:
    """Whether *pool*'s workers are forks of this process (:func:`executor` with ``fork``)."""
    context = getattr(pool, "_mp_context", None)
    return context is not None and context.get_start_method() == "fork"


@contextmanager
def forking(pool: ProcessPoolExecutor) -> Iterator[None]:
    """Around the ``submit`` that forks *pool*'s workers: Ctrl-C and SIGTERM wait until it is over, and
    this process's objects are out of the garbage collector's reach meanwhile.

    A fork starts with this process's signal handlers, so a Ctrl-C in the moment before the worker's
    initializer ignores it would kill the worker half-started (or, with SIGTERM, run this process's
    cleanup in the worker). Blocked across the fork, a signal stays pending: the worker's initializer
    discards it (SIGINT) or dies of it (SIGTERM), and this process takes it at the end of the block, at a
    point where its caller can stop the pool. The heap is frozen (``gc.freeze``) for the fork and thawed
    after it here, so a worker's collector never scans what it inherited: a collection that did would
    write to every inherited object and copy the whole shared heap into the worker. Without fork this
    does nothing (a blocked mask would outlive ``exec`` in a fork server)."""
    if not forks(pool):
        yield
        return
    import gc

    previous = signal.pthread_sigmask(signal.SIG_BLOCK, _STOP_SIGNALS)
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


@contextmanager
def quiet_children() -> Iterator[None]:
    """Start child processes inside this block with file descriptor 2 pointing at ``/dev/null``.

    They inherit that stderr; this process's own is restored at the end of the block (errors inside it
    are raised, not printed, so nothing of memsim's is lost).
    """
    sys.stderr.flush()
    saved = os.dup(2)
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)


def executor(workers: int, *, fork: bool = False) -> ProcessPoolExecutor:
    """A pool of *workers* fresh processes (``forkserver``; with *fork*, forks of this one where
    :func:`_context` finds that safe) that leave Ctrl-C to this process; stop it with :func:`terminate`
    on an error, as :func:`ordered_pool` does. With ``fork`` the workers all start at the first
    ``submit``, in the submitting thread, so submit first from the main thread before starting others."""
    return ProcessPoolExecutor(max_workers=workers, mp_context=_context(fork), initializer=_ignore_sigint)


def terminate(pool: ProcessPoolExecutor) -> None:
    """Stop *pool*'s workers now, without waiting for their current task; what has not started is
    cancelled.

    The cancelling is left to the pool's own thread (``shutdown(cancel_futures=True)``). A future cancelled
    here as well could be failed by that thread as it cleans up after the stopped workers, which on
    Python 3.11 raises ``InvalidStateError`` in it and prints a traceback beside the command's one error
    line (CPython gh-107219, fixed in 3.12; 1 Ctrl-C in 30 of ``claims --workers 2``).

    A worker stopped while it was sending a result (a sweep group's rows outgrow a pipe's buffer) leaves
    the pool's reader thread waiting for the rest of that message for ever, and this process's exit
    joining the thread. The stopped workers' ends of the result pipe close as they die; closing this
    process's own copy, which it never writes to, lets the reader see the end of the pipe and stop."""
    writer = getattr(getattr(pool, "_result_queue", None), "_writer", None)  # shutdown() drops the queue
    for proc in list((getattr(pool, "_processes", None) or {}).values()):
        proc.terminate()
    pool.shutdown(wait=False, cancel_futures=True)
    if writer is not None:
        with suppress(OSError):
            writer.close()


def ordered_pool(
    fn: Callable[[T], R], items: Sequence[T], workers: int, *, fork: bool = False
) -> PoolResults[R]:
    """Run ``fn(item)`` for every item in *workers* processes; yield results as they finish.

    Workers start from a clean interpreter (``forkserver``), not from a fork of the parent, so a
    worker's caches hold only what its own tasks put there. With *fork* they are forks of this process
    where :func:`_context` finds that safe, started **now**, before this returns: the caller imports what
    the tasks need first (the workers then skip their start-up) and calls this before it starts a
    thread such as a progress bar. Iterating starts nothing more; :meth:`close` on the iterator stops the
    workers if the results are never read.
    """
    pool = executor(workers, fork=fork)
    pending: set[Future[R]] = set()
    try:
        with forking(pool), quiet_children():  # the fork server, the resource tracker and the workers
            pending = {pool.submit(fn, item) for item in items}
    except BaseException:
        terminate(pool)
        raise
    return PoolResults(pool, _results(pool, pending))


class PoolResults(Iterator[R]):
    """:func:`ordered_pool`'s results; :meth:`close` stops the workers if they were never read."""

    def __init__(self, pool: ProcessPoolExecutor, results: Generator[R, None, None]) -> None:
        self._pool, self._results, self._started = pool, results, False

    def __next__(self) -> R:
        self._started = True
        return next(self._results)

    def close(self) -> None:
        if not self._started:
            terminate(self._pool)
        self._results.close()


def _results(pool: ProcessPoolExecutor, pending: set[Future[R]]) -> Generator[R, None, None]:
    try:
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for fut in done:
                yield fut.result()
    except BaseException:
        terminate(pool)
        raise
    pool.shutdown(wait=True)
