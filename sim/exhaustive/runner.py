"""The exhaustive runner: every case of each claim's scope, in canonical order, in all four directions.

A run is split into tasks: faithful and off are one task each (they stop at the first counterexample, which
the canonical order makes minimal, and run Hypothesis' search beside it to compare); fixed and combined are
split into chunks of :data:`CHUNK` cases in canonical order (each runs its cases and stops at its first
failure). Tasks run in this process, in ``--workers N`` processes (:func:`sim.pool.ordered_pool`, which
Ctrl-C stops at once) or on Dask (the benchmark's Dask runner, :mod:`sim.bench.executors`); they are pure
functions of (claim, direction, bound, range), so the ledger is the same whatever ran where. With a progress
directory each finished task is saved as one file, written atomically (:mod:`sim.exhaustive.progress`),
and a resumed run skips it.

Reductions are computed in the canonical order from the whole scope, so every process agrees: a case
whose symmetry class (or driver-declared canonical form) was already run earlier is skipped and counted.
A skipped case has the verdict of an earlier one, so the first counterexample and "holds for all" are
unchanged (``tests/test_exhaustive.py`` checks that on small scopes).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

from sim import claims as cl
from sim.errors import UsageError
from sim.exhaustive.declared import scope_of
from sim.exhaustive.scope import Bound, Scope, ScopeError, enumerate_cases, size, validate

#: Cases per task of a direction that must hold.
CHUNK = 200


@dataclass(frozen=True)
class Task:
    """One unit of work: *direction* of *claim* over canonical indices ``start`` to ``stop``."""

    claim: str
    direction: str
    bound: Bound
    start: int
    stop: int
    fingerprint: str
    reduce: bool = True
    compare: bool = True  # faithful/off: run Hypothesis' search too
    profile: str = "ci"
    seed: int = 0

    @property
    def key(self) -> str:
        span = f"{self.start}-{self.stop}"
        return f"{self.claim}|{self.direction}|{self.bound}|{span}|{self.reduce}|{self.fingerprint}"


def _plan(claim_id: str, bound: Bound, reduce: bool) -> tuple[list[Any], list[str]]:
    """The scope's cases in canonical order and, per case, "" (run it) or the reduction that skips it
    (cached per process while the declared scope is unchanged)."""
    scope = scope_of(claim_id)
    key = (claim_id, bound, reduce, scope.fingerprint(bound), id(scope.symmetry), id(scope.canonical))
    if key not in _PLANS:
        try:
            cases = enumerate_cases(scope, bound)
        except ScopeError as exc:
            raise UsageError(f"the scope of {claim_id}: {exc}") from exc
        if len(_PLANS) >= 8:
            _PLANS.pop(next(iter(_PLANS)))
        _PLANS[key] = (cases, reasons(scope, cases, reduce))
    return _PLANS[key]


_PLANS: dict[tuple[Any, ...], tuple[list[Any], list[str]]] = {}


def reasons(scope: Scope, cases: list[Any], reduce: bool = True) -> list[str]:
    """Per case in canonical order: "" to run it, ``symmetry`` or ``duplicates`` when an earlier case
    that was run has the same symmetry class or canonical form."""
    out = [""] * len(cases)
    if not reduce or (scope.symmetry is None and scope.canonical is None):
        return out
    seen_sym: set[str] = set()
    seen_canon: set[str] = set()
    for i, case in enumerate(cases):
        ks = _key(scope.symmetry(case)) if scope.symmetry is not None else None
        kc = _key(scope.canonical(case)) if scope.canonical is not None else None
        if ks is not None and ks in seen_sym:
            out[i] = "symmetry"
        elif kc is not None and kc in seen_canon:
            out[i] = "duplicates"
        else:
            if ks is not None:
                seen_sym.add(ks)
            if kc is not None:
                seen_canon.add(kc)
    return out


def _key(x: Any) -> str:
    return json.dumps(x, sort_keys=True, default=str)


def run_task(task: Task) -> dict[str, Any]:
    """Run *task*; a JSON-able result (the first counterexample's canonical index, or None)."""
    from sim.search import use_private_home

    claim = cl.get(task.claim)
    cases, why = _plan(task.claim, task.bound, task.reduce)
    t0, c0 = time.perf_counter(), time.process_time()
    if task.direction == cl.FIXED:  # every case of the scope is validated once, by the fixed chunks
        try:
            validate(scope_of(task.claim), claim.example_type, cases=cases[task.start : task.stop])
        except ScopeError as exc:
            raise UsageError(f"the scope of {task.claim}: {exc}") from exc
    run = 0
    skipped: dict[str, int] = {}
    first: int | None = None
    detail = ""
    for i in range(task.start, task.stop):
        if why[i]:
            skipped[why[i]] = skipped.get(why[i], 0) + 1
            continue
        run += 1
        verdict = claim.run(claim.decode(cases[i]), task.direction)
        if not verdict.holds:
            first, detail = i, verdict.detail
            break
    out: dict[str, Any] = {
        "key": task.key, "cases": run, "skipped": skipped, "first": first, "detail": detail,
        "seconds": round(time.perf_counter() - t0, 3), "cpu": round(time.process_time() - c0, 3),
    }  # fmt: skip
    if task.compare and not cl.EXPECT_HOLDS[task.direction]:
        from sim.search import find_counterexample

        use_private_home()
        o = find_counterexample(claim, task.profile, task.seed, task.direction)
        if o.passed:
            example = json.loads(json.dumps(claim.encode(o.example), default=str))
            where = size(scope_of(task.claim), example, task.bound)
            out["hypothesis"] = {
                "example": example,
                "summary": o.summary,
                "same": first is not None and _key(example) == _key(cases[first]),
                "in_scope": where is not None,
                "size": None if where is None else list(where),
            }
        else:
            out["hypothesis"] = {
                "example": None,
                "summary": "",
                "same": False,
                "in_scope": False,
                "size": None,
            }
    return out


def consistent(task: Task, result: dict[str, Any]) -> bool:
    """Whether a saved *result* (well-formed: :func:`sim.exhaustive.progress.check_result`) is what
    :func:`run_task` gives for *task*: its counts are the plan's up to its first counterexample (or over
    the whole range), and that first counterexample, a case the plan runs, fails when run again (one case,
    not the task). A result that "holds" over its range cannot be checked short of rerunning it."""
    _cases, why = _plan(task.claim, task.bound, task.reduce)
    first = result["first"]
    end = task.stop if first is None else first + 1
    if first is not None and why[first]:
        return False
    skipped: dict[str, int] = {}
    for i in range(task.start, end):
        if why[i]:
            skipped[why[i]] = skipped.get(why[i], 0) + 1
    if result["cases"] != (end - task.start) - sum(skipped.values()) or result["skipped"] != skipped:
        return False
    if first is None:
        return result["detail"] == ""
    claim = cl.get(task.claim)
    verdict = claim.run(claim.decode(_cases[first]), task.direction)
    return not verdict.holds and verdict.detail == result["detail"]


def tasks_of(
    claim: cl.Claim, bound: Bound, *, reduce: bool = True, compare: bool = True, profile: str = "ci",
    seed: int = 0,
) -> list[Task]:  # fmt: skip
    """The tasks of *claim*: one per must-fail direction, chunks of :data:`CHUNK` per must-hold one."""
    scope = scope_of(claim.id)
    try:
        total = scope.count(bound)
        if total > 2_000_000:
            raise ScopeError(f"{total:,} cases, over the limit of 2,000,000")
    except ScopeError as exc:
        raise UsageError(f"the scope of {claim.id}: {exc}") from exc
    fp = scope.fingerprint(bound)
    out = []
    for d in cl.DIRECTIONS:
        if cl.EXPECT_HOLDS[d]:
            out += [Task(claim.id, d, bound, a, min(a + CHUNK, total), fp, reduce, compare, profile, seed)
                    for a in range(0, total, CHUNK)]  # fmt: skip
        else:
            out.append(Task(claim.id, d, bound, 0, total, fp, reduce, compare, profile, seed))
    return out


def direction_result(claim: cl.Claim, direction: str, bound: Bound, results: list[dict[str, Any]],
                     reduce: bool = True) -> Any:  # fmt: skip
    """The ledger's :class:`~sim.ledger.Direction` of *direction* from its tasks' results (in range order)."""
    from sim.ledger import Direction

    scope = scope_of(claim.id)
    cases, _why = _plan(claim.id, bound, reduce)
    run = 0
    skipped: dict[str, int] = {}
    first: int | None = None
    detail = ""
    seconds = 0.0
    hyp = None
    cpu = 0.0
    for r in results:
        seconds += float(r["seconds"])
        cpu += float(r.get("cpu", 0.0))
        hyp = r.get("hypothesis", hyp)
        if first is not None:
            continue  # past the first counterexample: not part of the verdict
        run += int(r["cases"])
        for k, v in r["skipped"].items():
            skipped[k] = skipped.get(k, 0) + int(v)
        if r["first"] is not None:
            first, detail = int(r["first"]), str(r["detail"])
    holds = first is None
    expect = cl.EXPECT_HOLDS[direction]
    example = cases[first] if first is not None else None
    summary = claim.summarize(claim.decode(example)) if example is not None else ""
    return Direction(
        direction, holds == expect, run, round(seconds, 3), example, summary, detail,
        exhaustive=True, scope=scope.describe(bound), cases=run + sum(skipped.values()), total=len(cases),
        holds_all=holds, first_counterexample=example,
        reductions={k: skipped.get(k, 0) for k in ("symmetry", "duplicates")}, hypothesis=hyp,
        cpu_seconds=round(cpu, 3),
    )  # fmt: skip
