"""Where a sweep's cells run: in this process, in local worker processes, or on a Dask cluster.

Cells are grouped by seed (then split by budget when there are fewer groups than twice the workers), and
each group runs in one worker, so a worker generates a seed's workload once and its token caches serve
every design of that seed. Workers are fresh processes (:mod:`sim.pool`), and Ctrl-C cancels what is
pending and stops the workers at once; a local Dask cluster's workers are killed rather than closed
gracefully, start with their stderr on ``/dev/null`` (:func:`sim.pool.quiet_children`) and keep their
scratch space in a temporary directory that is removed. A ``--scheduler`` address is checked with one TCP
connect first, so a wrong one fails at once. Results come back in task order whatever ran where.
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import tempfile
from collections.abc import Iterable
from contextlib import suppress
from typing import Any

from sim.bench.metrics import add_relative_recall
from sim.bench.tasks import Task, run_task
from sim.errors import UsageError


def group_tasks(tasks: list[Task], workers: int) -> list[list[int]]:
    """Task indices grouped by seed, split by (seed, budget) when that gives the workers too few groups."""
    by_seed: dict[int, list[int]] = {}
    for i, t in enumerate(tasks):
        by_seed.setdefault(t.seed, []).append(i)
    groups = list(by_seed.values())
    if len(groups) < 2 * workers:
        finer: dict[tuple[int, int], list[int]] = {}
        for i, t in enumerate(tasks):
            finer.setdefault((t.seed, t.budget), []).append(i)
        groups = list(finer.values())
    return groups


def _run_group(group: list[tuple[int, Task]]) -> list[tuple[int, dict[str, Any]]]:
    return [(i, run_task(t)) for i, t in group]


def run_sweep(
    tasks: list[Task],
    *,
    workers: int = 1,
    executor: str = "local",
    scheduler: str | None = None,
    progress: bool = True,
) -> list[dict[str, Any]]:
    """Run *tasks* locally (processes) or on Dask; rows in task order, with relative recall set."""
    from sim.progress import progress_bar

    results: dict[int, dict[str, Any]] = {}
    with progress_bar("bench", len(tasks), enabled=progress) as (bar, job):
        if executor == "dask":
            for i, row in _run_dask(tasks, workers, scheduler):
                results[i] = row
                bar.advance(job)
        elif workers <= 1:
            for i, t in enumerate(tasks):
                results[i] = run_task(t)
                bar.advance(job)
        else:
            from sim.pool import ordered_pool

            groups = [[(i, tasks[i]) for i in g] for g in group_tasks(tasks, workers)]
            groups.sort(key=len, reverse=True)
            for done in ordered_pool(_run_group, groups, workers):
                for i, row in done:
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


def check_scheduler(address: str) -> None:
    """Refuse a ``--scheduler`` address that is malformed or that nothing listens on, in one line."""
    from distributed.comm import parse_address
    from distributed.comm.addressing import parse_host_port

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


def _run_dask(tasks: list[Task], workers: int, scheduler: str | None) -> Iterable[tuple[int, dict[str, Any]]]:
    try:
        from dask.distributed import Client, LocalCluster, as_completed
    except ImportError as exc:
        raise UsageError("--executor dask needs the dask extra: pip install 'memsim[dask]'") from exc
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
        futs = client.map(run_task, tasks, pure=False)
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


def _cleanup(scratch: tempfile.TemporaryDirectory[str] | None) -> None:
    if scratch is not None:
        with suppress(OSError):
            scratch.cleanup()
