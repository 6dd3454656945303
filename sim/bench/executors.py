"""Where a sweep's cells run: in this process, in local worker processes, or on a Dask cluster.

Cells are grouped by seed, and a seed is split by (seed, design) only when the workers would otherwise have
too few groups or one too big (:func:`group_tasks`); each group runs in one process, largest first.
``--workers N`` is this process plus N - 1 fresh worker processes (:func:`run_shared`; on Linux, forks of
this one made before any cell runs), each taking the next group when it is free. A seed's cells share its
workload, which a process generates once per seed (:func:`sim.workload.shared_workload`), and a design's
cells at the windows of one seed share most of their texts (the same messages, pages and logs), so they stay
together and a process counts each text once. Splitting by window instead cost 65% more CPU on the default
sweep (each worker re-counted the same design's texts); splitting every seed by design, 8%.
Workers hold only what their own cells put in their caches (:mod:`sim.pool`), and Ctrl-C cancels what is
pending and stops the workers at once; a local Dask cluster's workers are killed rather than closed
gracefully, start with their stderr on ``/dev/null`` (:func:`sim.pool.quiet_children`) and keep their scratch
space in a temporary directory that is removed. A ``--scheduler`` address is checked with one TCP connect
first, so a wrong one fails at once. Results come back in task order whatever ran where.
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import tempfile
from collections.abc import Callable, Generator, Iterable, Iterator
from concurrent.futures import Future
from contextlib import closing, nullcontext, suppress
from typing import Any

from sim.bench.metrics import add_relative_recall
from sim.bench.tasks import Task, run_task
from sim.errors import UsageError


def group_tasks(tasks: list[Task], workers: int) -> list[list[int]]:
    """Task indices grouped by seed, largest estimated work first (:func:`work_estimate`).

    A seed's cells share its workload and many of its texts, so a whole seed is the cheapest group. With
    too few groups for the workers (fewer than two each) or a seed too big for one worker's share, seeds
    are split by (seed, design), never by window, one at a time: the largest while one is over a
    worker's share, else the smallest. The whole seeds keep the workers busy and the small pieces of the
    split ones balance the end, while only the split seeds' workloads and shared texts are made in more
    than one process (on the default sweep, 3 seeds on 2 workers: the smallest seed is split, and the
    CPU the grouping costs, ``sweep.split_cost``, fell from 8% to 2-4%)."""
    cost = {i: work_estimate(t) for i, t in enumerate(tasks)}
    whole: dict[int, list[int]] = {}
    for i, t in enumerate(tasks):
        whole.setdefault(t.seed, []).append(i)
    pieces: list[list[int]] = []
    total = sum(cost.values())

    def size(g: list[int]) -> float:
        return sum(cost[i] for i in g)

    while whole and workers > 1:
        biggest = max(whole, key=lambda s: (size(whole[s]), -s))
        if size(whole[biggest]) > total / workers:
            seed = biggest
        elif len(whole) + len(pieces) < 2 * workers:
            seed = min(whole, key=lambda s: (size(whole[s]), -s))
        else:
            break
        finer: dict[str, list[int]] = {}
        for i in whole.pop(seed):
            finer.setdefault(tasks[i].design, []).append(i)
        pieces += finer.values()
    groups = sorted(whole.values(), key=min) + pieces
    return sorted(groups, key=lambda g: -size(g))  # stable: ties keep task order


def work_estimate(task: Task) -> float:
    """A cell's relative work: its workload's observation volume (steps times mean size; every cell on a
    user's file counts the same). Only the order of the estimates matters."""
    if task.workload_file is not None:
        return 1.0
    from sim.workload import draw

    d = draw(task.seed, task.steps)
    return float(d.steps * d.obs_tokens_mean + d.calm_steps * 80)


Group = list[tuple[int, Task]]


def _run_group(group: Group) -> list[tuple[int, dict[str, Any]]]:
    return [(i, run_task(t)) for i, t in group]


class _Queue:
    """The groups still to run, most estimated work first, shared by this process and the feeder thread.

    The first order is by workload volume (:func:`work_estimate`), which knows nothing of how much a
    design costs per token. Every finished cell reports its seconds (:meth:`learn`), so the queue learns
    each design's seconds per unit of volume and re-orders what is left: the last groups to run are then
    really the small ones, and the processes finish together (on the default sweep the last process
    waited about 0.3 s for the other, one design's group, before)."""

    def __init__(self, groups: list[Group]) -> None:
        import threading

        self._groups = list(groups)
        self._volume = {i: work_estimate(t) for g in groups for i, t in g}
        self._design = {i: t.design for g in groups for i, t in g}
        self._spent: dict[str, float] = {}
        self._seen: dict[str, float] = {}
        self._lock = threading.Lock()

    def take(self) -> Group | None:
        """The next group, or None when none is left."""
        with self._lock:
            return self._groups.pop(0) if self._groups else None

    def learn(self, index: int, row: dict[str, Any]) -> None:
        """Task *index* took ``row["seconds"]``: re-estimate the groups left (a design not seen yet costs
        the mean rate of those seen)."""
        design = self._design.get(index)
        if design is None:
            return
        with self._lock:
            self._spent[design] = self._spent.get(design, 0.0) + float(row.get("seconds") or 0.0)
            self._seen[design] = self._seen.get(design, 0.0) + self._volume[index]
            rates = {d: self._spent[d] / v for d, v in self._seen.items() if v > 0}
            if not rates or len(self._groups) < 2:
                return
            default = sum(rates.values()) / len(rates)

            def cost(g: Group) -> float:
                return sum(rates.get(self._design[i], default) * self._volume[i] for i, _t in g)

            self._groups.sort(key=cost, reverse=True)  # stable: ties keep their order


def run_shared(groups: list[Group], workers: int, aside: Callable[[], None] | None = None) -> _Shared:
    """Run *groups* (largest first) in this process and ``workers - 1`` worker processes; each takes the
    next group the moment it is free. Yields ``(task index, row)`` as cells finish.

    This process is one of the *workers*: it has the designs imported already and starts at once. The
    workers are started *now*, when this is called, not when iteration begins: on Linux, while this
    process runs one thread, they are forks of it made before any cell ran (:func:`sim.pool.executor`),
    so they start with the imports and the encoding loaded and with empty caches, as a fresh interpreter
    would but without its start-up; elsewhere they are fresh interpreters. Call it before starting a
    progress bar (a thread). A feeder thread hands a worker its next group as soon as it
    returns one, so no worker waits for this process to finish a cell, and none holds a queued group
    while another runs dry. On an error or Ctrl-C the pending groups are cancelled and the workers
    stopped at once.
    """
    from sim import pool as procs
    from sim.tokens import encoding

    todo = _Queue(groups)
    encoding()  # loaded once, here: forked workers inherit it
    ex = procs.executor(workers - 1, fork=True)
    running: set[Future[list[tuple[int, dict[str, Any]]]]] = set()
    try:
        # With fork, every worker starts at the first submit, from this thread, signals held meanwhile.
        with procs.forking(ex), procs.quiet_children():
            while len(running) < workers - 1 and (g := todo.take()) is not None:
                running.add(ex.submit(_run_group, g))
    except BaseException:
        procs.terminate(ex)
        raise
    return _Shared(_drive(ex, todo, running, workers, aside), ex)


class _Shared:
    """:func:`run_shared`'s rows; :meth:`close` stops the workers if the rows were never read."""

    def __init__(self, rows: Generator[tuple[int, dict[str, Any]], None, None], ex: Any) -> None:
        self._rows, self._ex, self._started = rows, ex, False

    def __iter__(self) -> Iterator[tuple[int, dict[str, Any]]]:
        self._started = True
        return self._rows

    def __next__(self) -> tuple[int, dict[str, Any]]:
        self._started = True
        return next(self._rows)

    def close(self) -> None:
        if not self._started:
            from sim import pool as procs

            procs.terminate(self._ex)
        self._rows.close()


def _drive(
    ex: Any,
    todo: _Queue,
    running: set[Future[list[tuple[int, dict[str, Any]]]]],
    workers: int,
    aside: Callable[[], None] | None,
) -> Generator[tuple[int, dict[str, Any]], None, None]:
    """The rest of :func:`run_shared`: this process's share of the groups, and the workers' rows."""
    import queue
    import threading
    from concurrent.futures import FIRST_COMPLETED, wait

    from sim import pool as procs

    finished: queue.Queue[Future[list[tuple[int, dict[str, Any]]]] | BaseException | None] = queue.Queue()
    stop = threading.Event()

    take = todo.take

    def feed() -> None:
        nonlocal running
        try:
            while not stop.is_set():
                while len(running) < workers - 1 and (g := take()) is not None:
                    running.add(ex.submit(_run_group, g))
                if not running:
                    break
                done, running = wait(running, return_when=FIRST_COMPLETED)
                for fut in done:
                    finished.put(fut)
        except BaseException as exc:  # a broken or stopped pool: the consumer re-raises it
            finished.put(exc)
        finally:
            finished.put(None)

    ended = False  # the feeder has put its last item

    def drain(block: bool) -> Iterator[tuple[int, dict[str, Any]]]:
        """Rows the workers returned; with *block*, every one until the feeder has ended."""
        nonlocal ended
        while True:
            try:
                item = finished.get(block=block and not ended)
            except queue.Empty:
                return
            if item is None:
                ended = True
            elif isinstance(item, BaseException):
                raise item
            else:
                for i, row in item.result():
                    todo.learn(i, row)
                    yield i, row

    feeder = threading.Thread(target=feed, name="bench-feeder", daemon=True)
    try:
        feeder.start()
        if aside is not None:
            aside()  # the caller's own work, while the workers run cells: the queue gives them more
        while (g := take()) is not None:
            for i, t in g:
                row = run_task(t)
                todo.learn(i, row)
                yield i, row
                yield from drain(block=False)
        yield from drain(block=True)
    except BaseException:
        stop.set()
        procs.terminate(ex)
        if feeder.is_alive():
            feeder.join(timeout=2)  # its wait() returns once the stopped workers' futures fail
        raise
    feeder.join()
    ex.shutdown(wait=True)


def run_sweep(
    tasks: list[Task],
    *,
    workers: int = 1,
    executor: str = "local",
    scheduler: str | None = None,
    progress: bool = True,
    aside: Callable[[], None] | None = None,
) -> list[dict[str, Any]]:
    """Run *tasks* locally (processes) or on Dask; rows in task order, with relative recall set. With
    local workers, *aside* is called once in this process as the workers start, before it takes its first
    group: work of the caller's own that then runs beside the workers' cells instead of after them, the
    queue handing the workers more groups meanwhile (``memsim bench`` loads its plotting library then)."""
    from sim.progress import progress_bar

    results: dict[int, dict[str, Any]] = {}
    shared = None
    if executor != "dask" and workers > 1:  # the workers start before the progress bar's thread does
        shared = run_shared([[(i, tasks[i]) for i in g] for g in group_tasks(tasks, workers)], workers, aside)
    with (
        closing(shared) if shared is not None else nullcontext(),
        progress_bar("bench", len(tasks), enabled=progress) as (bar, job),
    ):
        if executor == "dask":
            for i, row in _run_dask(tasks, workers, scheduler):
                results[i] = row
                bar.advance(job)
        elif workers <= 1:
            for i, t in enumerate(tasks):
                results[i] = run_task(t)
                bar.advance(job)
        else:
            assert shared is not None
            for i, row in shared:
                results[i] = row
                bar.advance(job)
    rows = [results[i] for i in range(len(tasks))]
    add_relative_recall(rows)
    return rows


def _kill_workers(cluster: Any) -> None:
    """Kill a local cluster's worker processes now (Ctrl-C: a graceful close waits for running cells)."""
    for nanny in list(getattr(cluster, "workers", {}).values()):
        pid = getattr(getattr(getattr(nanny, "process", None), "process", None), "pid", None)
        if isinstance(pid, int):
            with suppress(OSError):
                os.kill(pid, signal.SIGKILL)


#: How long a scheduler named by ``--scheduler`` gets to answer (connect and handshake), in seconds.
SCHEDULER_TIMEOUT_S = 5


#: The longest ``--scheduler`` address (a host name is at most 253 characters; the port is bounded by it too).
MAX_ADDRESS_CHARS = 300


def check_scheduler(address: str) -> None:
    """Refuse a ``--scheduler`` address that is malformed or that nothing listens on, in one line."""
    from distributed.comm import parse_address
    from distributed.comm.addressing import parse_host_port

    if len(address) > MAX_ADDRESS_CHARS:
        raise UsageError(
            f"invalid Dask scheduler address {address[:60]!r}...: over {MAX_ADDRESS_CHARS} characters"
        )
    try:
        scheme, loc = parse_address(address)
        if scheme not in ("tcp", "tls"):
            raise ValueError(f"scheme {scheme!r} (expected tcp:// or tls://)")
        host, port = parse_host_port(loc)
        if not 0 < int(port) < 65536:
            raise ValueError("port out of range")
    except (ValueError, TypeError) as exc:
        raise UsageError(f"invalid Dask scheduler address {address!r}: {exc}") from exc
    try:
        with socket.create_connection((host, int(port)), timeout=SCHEDULER_TIMEOUT_S):
            pass
    except OSError as exc:
        raise UsageError(f"cannot reach the Dask scheduler {address}: {exc.strerror or exc}") from exc
    if scheme == "tcp":  # tls would need security settings memsim does not take
        from sim.bench.scheduler import handshake

        handshake(address)


def _run_dask(
    tasks: list[Any], workers: int, scheduler: str | None, fn: Callable[[Any], Any] = run_task
) -> Iterable[tuple[int, Any]]:
    """``fn(task)`` for every task on a local Dask cluster of *workers* processes (or at *scheduler*), as
    ``(task index, result)`` in the order they finish (``memsim claims --exhaustive`` passes its own
    *fn*)."""
    try:
        from dask.distributed import Client, LocalCluster, as_completed
    except ImportError as exc:
        raise UsageError("--executor dask needs the dask extra: pip install 'memsim[dask]'") from exc
    _quiet_dask_logs()
    cluster = None
    scratch: tempfile.TemporaryDirectory[str] | None = None
    try:
        if scheduler:
            check_scheduler(scheduler)
            client = Client(scheduler, timeout=f"{SCHEDULER_TIMEOUT_S}s")
        else:
            import dask

            from sim.pool import quiet_children

            # The cluster's scratch space lives in a directory of its own, removed afterwards (Dask
            # would otherwise leave dask-scratch-space/ in the temporary directory).
            scratch = tempfile.TemporaryDirectory(prefix="memsim-dask-")
            with quiet_children(), dask.config.set({"temporary-directory": scratch.name}):
                cluster = LocalCluster(
                    n_workers=workers,
                    threads_per_worker=1,
                    processes=True,
                    dashboard_address=None,
                    host="127.0.0.1",
                    silence_logs=logging.CRITICAL,
                    local_directory=scratch.name,
                )
            client = Client(cluster)
    except (OSError, TimeoutError, ValueError) as exc:
        if cluster is not None:
            cluster.close()
        _cleanup(scratch)
        raise UsageError(f"cannot reach the Dask scheduler {scheduler or '(local cluster)'}: {exc}") from exc
    except BaseException:
        if cluster is not None:
            _kill_workers(cluster)
            cluster.close()
        _cleanup(scratch)
        raise
    try:
        futs = client.map(fn, tasks, pure=False)
        index = {f.key: i for i, f in enumerate(futs)}
        for fut in as_completed(futs):
            yield index[fut.key], fut.result()
    except BaseException:
        if cluster is not None:
            _kill_workers(cluster)
        raise
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
        _cleanup(scratch)


#: The loggers that speak for a Dask run in this process: Dask's own, and the event loop's and Tornado's
#: under it.
DASK_LOGGERS = ("distributed", "asyncio", "tornado")


def _quiet_dask_logs() -> None:
    """Keep Dask's log lines off this process's stderr, which carries only the command's own lines, for
    the rest of the process. ``LocalCluster(silence_logs=...)`` quiets ``distributed``'s handlers only
    while the cluster is open, and a Ctrl-C logs after that: the comms that close as it unwinds log at INFO
    with a traceback, and a worker whose start it cut short leaves a failed task on the event loop, which
    is logged when the task is collected ("Task exception was never retrieved"). A failure that matters
    reaches the command as an exception, and so its one error line."""
    for name in DASK_LOGGERS:
        logging.getLogger(name).setLevel(logging.CRITICAL + 1)


def _cleanup(scratch: tempfile.TemporaryDirectory[str] | None) -> None:
    if scratch is not None:
        with suppress(OSError):
            scratch.cleanup()
