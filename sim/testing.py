"""Conformance checks a design's own tests call: the adapter contract and each claim's scope, mechanically.

:func:`check_adapter` drives a design's benchmark adapter through a small seeded workload twice and
returns the list of broken conventions (empty when it conforms), so a test reads::

    def test_adapter_conforms():
        assert check_adapter("toy") == []

It checks what ``sim.workload.DesignAdapter`` promises: the adapter is built as
``Adapter(sim, budget, drawn, variant=..., knobs=...)`` for upstream's design and for every-fix-on; its
``name`` is the design's; it returns one :class:`~sim.workload.ModelRequest` per step with non-empty
string parts and an integer (or None) estimate; at a probe the question is inside the request; it
records no requests itself; and the same seed gives the same requests.

The rest of the design-level checks (report, coverage, scenario outputs, colour, benchmark labels,
claims) live in :mod:`sim.conformance` and are re-exported here, beside :func:`check_design` (all
but the claims): memsim's own suite runs them on every installed design, and a plugin's tests call them.

:func:`check_scope` checks a claim's exhaustive scope (:mod:`sim.exhaustive`): declared, finite, every
example valid for the claim's ``example_type``, and a faithful counterexample inside it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sim.conformance import (
    check_bench,
    check_claims,
    check_colour,
    check_coverage,
    check_report,
    check_scenario,
    check_scenarios,
)
from sim.engine import Simulation
from sim.variant import FAITHFUL, Variant
from sim.workload import ModelRequest, StorageStats, Workload, drive, make_workload

__all__ = [
    "check_adapter",
    "check_bench",
    "check_claims",
    "check_colour",
    "check_conversation",
    "check_coverage",
    "check_design",
    "check_report",
    "check_scenario",
    "check_scenarios",
    "check_scope",
]


def _run(adapter_cls: type, name: str, variant: Variant, knobs: Any, budget: int, workload: Workload,
         problems: list[str]) -> list[ModelRequest]:  # fmt: skip
    sim = Simulation(workload.drawn.seed, keep_trace=True)
    try:
        adapter = adapter_cls(sim, budget, workload.drawn, variant=variant, knobs=knobs)
    except TypeError as exc:
        problems.append(f"Adapter(sim, budget, drawn, *, variant, knobs) failed: {exc}")
        return []
    if getattr(adapter, "name", None) != name:
        problems.append(f"adapter.name is {getattr(adapter, 'name', None)!r}, not the design's name {name!r}")
    requests: list[ModelRequest] = []
    recorded_by_adapter = 0

    def on_request(step: Any, req: ModelRequest, rec: Any) -> None:
        requests.append(req)

    before = len(sim.trace.data.requests)
    steps = drive(adapter, sim, workload, on_request)
    recorded_by_adapter = len(sim.trace.data.requests) - before - steps
    if recorded_by_adapter:
        problems.append(
            f"the adapter recorded {recorded_by_adapter} request(s) itself (the harness records them)"
        )
    if len(requests) != len(workload):
        problems.append(f"{len(requests)} requests for {len(workload)} steps (one per step expected)")
    for step, req in zip(workload.iter_steps(), requests):
        if not isinstance(req, ModelRequest):
            problems.append(f"step {step.index}: step() returned {type(req).__name__}, not ModelRequest")
            break
        if not req.parts or not all(isinstance(p, str) for p in req.parts):
            problems.append(f"step {step.index}: the request has no parts, or a part that is not a string")
            break
        if req.estimate is not None and (not isinstance(req.estimate, int) or req.estimate < 0):
            problems.append(f"step {step.index}: estimate {req.estimate!r} is neither None nor an int >= 0")
            break
        if step.probe and not any(step.question in p for p in req.parts):
            problems.append(f"step {step.index}: the probe question is not inside the request")
            break
    storage = adapter.storage()
    if not isinstance(storage, StorageStats):
        problems.append(f"storage() returned {type(storage).__name__}, not StorageStats")
    sim.close()
    return requests


def check_adapter(design: str, *, budget: int = 6000, seed: int = 1, steps: int = 24) -> list[str]:
    """The broken adapter conventions of the installed design *design* (empty: it conforms)."""
    from sim.registry import design as lookup

    d = lookup(design)
    cls = d.adapter_class()
    knobs = d.parse_knobs({})
    problems: list[str] = []
    workload = make_workload(seed, steps)
    for variant in (FAITHFUL, d.switches.all_fixes()):
        first = _run(cls, d.name, variant, knobs, budget, workload, problems)
        second = _run(cls, d.name, variant, knobs, budget, make_workload(seed, steps), problems)
        if first != second:
            problems.append(f"{variant.label()}: the same seed gave different requests")
        if problems:
            break
    if not problems:
        problems += check_conversation(cls, d.name, knobs)
    return problems


def check_conversation(adapter_cls: type, name: str, knobs: Any, budget: int = 6000) -> list[str]:
    """The conversation half of the contract (:mod:`sim.conversations`, issue 28) on a tiny conversation:
    one request of string parts per turn and question step, the question inside its request, the same
    requests whatever the evidence labels say (they never reach the adapter), where the adapter
    declares ``lost_reason(turn_id)``, a non-empty string for every turn, and where it declares
    ``ranking()``, a well-formed ranking after each question."""
    from sim.conversations.run import conversation_steps, drawn_for
    from sim.conversations.toy import tiny_instance

    problems: list[str] = []
    seen: list[list[tuple[str, ...]]] = []
    for inst in (tiny_instance(), tiny_instance(("s1:1",), "the dog")):
        sim = Simulation(0, keep_trace=False)
        adapter = adapter_cls(sim, budget, drawn_for(inst), variant=FAITHFUL, knobs=knobs)
        reqs: list[tuple[str, ...]] = []
        for step in conversation_steps(inst):
            req = adapter.step(step)
            if (
                not isinstance(req, ModelRequest)
                or not req.parts
                or not all(isinstance(p, str) for p in req.parts)
            ):
                problems.append(f"conversation step {step.index}: not a ModelRequest of string parts")
                break
            if step.question_id is not None and not any(step.question in p for p in req.parts):
                problems.append("conversation: the question is not inside its request")
            if step.question_id is not None:
                problems += _check_ranking(adapter, inst)
            reqs.append(tuple(req.parts))
        explain = getattr(adapter, "lost_reason", None)
        if explain is not None:
            for t in inst.turns:
                why = explain(t.turn_id)
                if not isinstance(why, str) or not why:
                    problems.append(f"lost_reason({t.turn_id!r}) returned {why!r}, not a non-empty string")
                    break
        seen.append(reqs)
        sim.close()
        if problems:
            return problems
    if seen[0] != seen[1]:
        problems.append(
            f"{name}: the requests changed with the evidence labels (labels must not reach a design)"
        )
    return problems


def _check_ranking(adapter: Any, inst: Any) -> list[str]:
    """Where the adapter declares ``ranking()`` (:mod:`sim.conversations.retrieval`): None, or a level
    ``turn``/``session`` and distinct ids of that level's documents of the instance."""
    from sim.conversations.retrieval import LEVELS, ranking_of

    try:
        r = ranking_of(adapter)
    except (TypeError, ValueError) as exc:
        return [f"ranking() did not return (level, ids) or None: {exc}"]
    if r is None:
        return []
    known = {t.turn_id for t in inst.turns} if r.level == "turn" else set(inst.sessions)
    if r.level not in LEVELS:
        return [f"ranking() level {r.level!r} is not one of {LEVELS}"]
    if len(set(r.ids)) != len(r.ids) or not set(r.ids) <= known:
        return [f"ranking() ids are not distinct {r.level} ids of the conversation"]
    return []


def check_scope(claim_id: str, *, max_cases: int = 2000, bound: int | str | None = None) -> list[str]:
    """The problems of claim *claim_id*'s exhaustive scope (empty: it conforms).

    The scope must be declared (``SCOPES`` in the design's drivers), finite and within the case limit,
    every example in it valid for the claim's ``example_type``, and non-trivial: a faithful counterexample
    among its first *max_cases* cases in canonical order (the run stops at the first, so a design's test
    stays cheap; ``memsim claims --exhaustive`` checks every case and every direction). *bound* is the
    scope's bound (``"deep"``: the deep profile, whose cases are validated at the two ends of the canonical
    order, the first and last *max_cases*)::

        @pytest.mark.parametrize("claim", sorted(claims.registry("toy")))
        def test_scope_conforms(claim):
            assert check_scope(claim) == []
    """
    from sim import claims as cl
    from sim.errors import UsageError
    from sim.exhaustive.declared import scope_of
    from sim.exhaustive.scope import ScopeError, enumerate_cases, validate

    claim = cl.get(claim_id)
    try:
        scope = scope_of(claim_id)
        cases = enumerate_cases(scope, bound)
        ends = cases if bound is None else cases[:max_cases] + cases[-max_cases:]
        validate(scope, claim.example_type, cases=ends)
    except (UsageError, ScopeError) as exc:
        return [str(exc)]
    for case in cases[:max_cases]:
        if not claim.run(claim.decode(case), cl.FAITHFUL).holds:
            return []
    within = "its" if len(cases) <= max_cases else f"the first {max_cases} of its"
    return [f"no faithful counterexample in {within} {len(cases)} cases: the scope misses the failure"]


def check_design(design: str, root: Path | None = None) -> list[str]:
    """Every design-level check but the claims' search (:func:`check_claims`, slower): the adapter
    contract (:func:`sim.testing.check_adapter`), report, coverage, scenarios, colour and benchmark."""
    return [
        *check_adapter(design),
        *check_report(design, root),
        *check_coverage(design, root),
        *check_scenarios(design),
        *check_colour(design),
        *check_bench(design),
    ]
