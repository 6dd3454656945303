"""Where a sweep's cells run: in this process, in local worker processes, or on a Dask cluster.

Cells are grouped by (seed, design) (:func:`group_tasks`): a design's cells at the windows of one seed
share most of their texts (the same messages, pages and logs), so they stay together and a process counts
each text once (splitting by window instead cost 65% more CPU on the default sweep). ``--workers N`` is
this process plus N - 1 fresh worker processes (:func:`run_shared`; on Linux, forks of this one made before
any cell runs), each taking its next group from a shared queue when it is free (:class:`_Queue`): the
groups of the seed it holds while there are any (a seed's workload is generated once per process,
:func:`sim.workload.shared_workload`), then a seed no other worker holds, the costliest first, and at the
end a share of the last seeds, so the workers finish together.
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
    """Task indices in groups of one design's cells on one workload (every window of a seed), the
    costliest estimated seed first and in each seed its costliest groups first (:func:`work_estimate`;
    ties keep task order). With one worker, whole seeds.

    A design's cells at the windows of one seed share most of their texts, so they never split. Whole
    seeds as groups (issue 30) could not be balanced: a seed's cost depends on its designs in ways its
    workload's volume does not show (the bm25 reference design's cells cost 10 to 20 times another
    design's, twice as much on seed 1 as on seed 0), and the worker given the dearest seed ran alone at
    the end (the default sweep's seed 1 was 55% of its CPU: 2 workers 1.64x). :class:`_Queue` keeps a
    worker on the seed it started (its workload and texts are made once per process) and moves it to
    another seed only when its own has no group left."""
    cost = {i: work_estimate(t) for i, t in enumerate(tasks)}
    seeds: dict[Any, dict[str, list[int]]] = {}
    for i, t in enumerate(tasks):
        seeds.setdefault(_affinity(t), {}).setdefault(t.design if workers > 1 else "", []).append(i)

    def size(g: list[int]) -> float:
        return sum(cost[i] for i in g)

    order = sorted(seeds.values(), key=lambda d: -sum(size(g) for g in d.values()))  # stable
    return [g for d in order for g in sorted(d.values(), key=lambda g: -size(g))]


def _affinity(task: Task) -> Any:
    """What a task's cells share within a process (:meth:`Task.affinity`)."""
    return task.affinity()


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
    """The groups still to run, shared by this process and the feeder thread; each worker takes its next
    one with :meth:`take`.

    A worker keeps to the seed (workload) of its last group while that seed has groups left, so a seed's
    workload and shared texts are made in one process; a worker whose seed is done starts the costliest
    seed no other worker is on, and when every seed left is another worker's, it takes the costliest group
    left (the end of the sweep: the workers share the last seeds and finish together). The first
    estimate of a group is its workload's volume (:func:`work_estimate`), which knows nothing of how much
    a design costs per token. Every finished cell reports its seconds (:meth:`learn`), so the queue learns
    each design's seconds per unit of volume and estimates what is left with it (a design not seen yet
    costs the mean rate of those seen): the costly groups of a seed go first and the last to run are
    really the small ones."""

    def __init__(self, groups: list[Group]) -> None:
        import threading

        self._groups = list(groups)
        self._volume = {i: work_estimate(t) for g in groups for i, t in g}
        self._design = {i: t.design for g in groups for i, t in g}
        self._rates: dict[str, float] = {}
        self._spent: dict[str, float] = {}
        self._seen: dict[str, float] = {}
        self._held: dict[int, Any] = {}
        self._lock = threading.Lock()

    def _cost(self, g: Group) -> float:
        rates = self._rates
        if not rates:
            return sum(self._volume[i] for i, _t in g)
        default = sum(rates.values()) / len(rates)
        return sum(rates.get(self._design[i], default) * self._volume[i] for i, _t in g)

    def take(self, worker: int = 0) -> Group | None:
        """The next group for *worker* (0 is this process; each worker process its own number), or None
        when none is left."""
        with self._lock:
            if not self._groups:
                return None
            costs = [self._cost(g) for g in self._groups]
            keys = [_affinity(g[0][1]) for g in self._groups]
            mine = self._held.get(worker)
            pick = [j for j, k in enumerate(keys) if k == mine and mine is not None]
            if not pick:
                others = {k for w, k in self._held.items() if w != worker}
                free = [j for j, k in enumerate(keys) if k not in others]
                if free:
                    seed_cost: dict[Any, float] = {}
                    for j in free:
                        seed_cost[keys[j]] = seed_cost.get(keys[j], 0.0) + costs[j]
                    start = max(seed_cost, key=lambda k: seed_cost[k])  # ties: the first seen
                    pick = [j for j in free if keys[j] == start]
                else:
                    pick = list(range(len(self._groups)))
            j = max(pick, key=lambda j: (costs[j], -j))  # ties keep their order
            self._held[worker] = keys[j]
            return self._groups.pop(j)

    def learn(self, index: int, row: dict[str, Any]) -> None:
        """Task *index* took ``row["seconds"]``: re-estimate the groups left."""
        design = self._design.get(index)
        if design is None:
            return
        with self._lock:
            self._spent[design] = self._spent.get(design, 0.0) + float(row.get("seconds") or 0.0)
            self._seen[design] = self._seen.get(design, 0.0) + self._volume[index]
            self._rates = {d: self._spent[d] / v for d, v in self._seen.items() if v > 0}


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
    running: dict[Future[list[tuple[int, dict[str, Any]]]], int] = {}  # each running group's worker
    try:
        # With fork, every worker starts at the first submit, from this thread, signals held meanwhile.
        with procs.forking(ex), procs.quiet_children():
            for w in range(1, workers):
                if (g := todo.take(w)) is None:
                    break
                running[ex.submit(_run_group, g)] = w
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
    running: dict[Future[list[tuple[int, dict[str, Any]]]], int],
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
        # A pool process runs one group at a time, so the worker number of a finished group is the idle
        # process's: its next group keeps to the seed it holds (:meth:`_Queue.take`). The finished
        # group's seconds are learned here, before the next take, not when this process next looks.
        free = sorted(set(range(1, workers)) - set(running.values()), reverse=True)
        try:
            while not stop.is_set():
                while free and (g := take(free[-1])) is not None:
                    running[ex.submit(_run_group, g)] = free.pop()
                if not running:
                    break
                done, _ = wait(running, return_when=FIRST_COMPLETED)
                for fut in done:
                    free.append(running.pop(fut))
                    if not fut.cancelled() and fut.exception() is None:
                        for i, row in fut.result():
                            todo.learn(i, row)
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
                yield from item.result()

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
