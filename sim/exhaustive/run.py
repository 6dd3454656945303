"""``memsim claims --exhaustive``: the ledger's rows from every case of each claim's declared scope."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from sim import claims as cl
from sim.errors import UsageError
from sim.exhaustive.declared import scope_of
from sim.exhaustive.progress import Progress
from sim.exhaustive.runner import Task, consistent, direction_result, run_task, tasks_of
from sim.exhaustive.scope import Bound

EXECUTORS = ("local", "dask")


def check_scopes(selected: list[cl.Claim], bound: Bound) -> None:
    """Refuse, before the run, a selected claim without a scope or with one over the case limit."""
    for c in selected:
        scope_of(c.id)
    for c in selected:
        tasks_of(c, bound)


def run_ledger(
    selected: list[cl.Claim],
    bound: Bound = None,
    *,
    workers: int = 1,
    executor: str = "local",
    scheduler: str | None = None,
    resume: Path | None = None,
    profile: str = "ci",
    seed: int = 0,
    reduce: bool = True,
    compare: bool = True,
    progress: bool = False,
) -> list[Any]:
    """One :class:`~sim.ledger.Row` per selected claim, every direction run over its whole scope.

    Identical whatever *workers*, *executor* or *resume* (seconds aside)."""
    from sim.ledger import new_row
    from sim.progress import progress_bar

    if executor not in EXECUTORS:
        raise UsageError(f"unknown executor {executor!r}: expected one of {', '.join(EXECUTORS)}")
    store = Progress(resume)
    check_scopes(selected, bound)
    tasks = [t for c in selected for t in tasks_of(c, bound, reduce=reduce, compare=compare, profile=profile,
                                                    seed=seed)]  # fmt: skip
    store.open()
    results: dict[str, dict[str, Any]] = {}
    todo: list[Task] = []
    for t in tasks:
        saved = store.get(t.key, (t.start, t.stop))
        if saved is not None and consistent(t, saved):
            results[t.key] = saved
        else:
            todo.append(t)
    # Must-fail tasks first (each also runs Hypothesis' search), then the chunks, claim by claim.
    todo.sort(key=lambda t: cl.EXPECT_HOLDS[t.direction])
    with progress_bar("exhaustive", len(tasks), enabled=progress) as (bar, job):
        bar.advance(job, len(results))
        for key, res in _execute(todo, workers, executor, scheduler):
            store.put(key, res)
            results[key] = res
            bar.advance(job)
    rows = []
    for c in selected:
        t0 = time.perf_counter()
        row = new_row(c, seed)
        mine = [t for t in tasks if t.claim == c.id]
        for d in cl.DIRECTIONS:
            ranged = sorted((t for t in mine if t.direction == d), key=lambda t: t.start)
            row.directions[d] = direction_result(c, d, bound, [results[t.key] for t in ranged], reduce)
        row.seconds = round(sum(x.seconds for x in row.directions.values()) + time.perf_counter() - t0, 3)
        rows.append(row)
    return rows


def _execute(todo: list[Task], workers: int, executor: str, scheduler: str | None) -> Any:
    """``(task key, result)`` for every task, as each finishes."""
    if executor == "dask":
        from sim.bench.executors import _run_dask

        for i, res in _run_dask(todo, workers, scheduler, fn=run_task):
            yield todo[i].key, res
    elif workers <= 1:
        for t in todo:
            yield t.key, run_task(t)
    else:
        from sim.pool import ordered_pool

        yield from ordered_pool(_keyed, todo, workers)


def _keyed(task: Task) -> tuple[str, dict[str, Any]]:
    from sim.search import use_private_home

    use_private_home()
    return task.key, run_task(task)
