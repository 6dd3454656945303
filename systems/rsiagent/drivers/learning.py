"""Drivers of the learning claims: the work-phase lesson, diagnosis-phase edits and the failed pull
(RT-RTE-learning-admission)."""

from __future__ import annotations

import hashlib
from typing import Annotated, Any

from hypothesis import strategies as st
from pydantic import Field
from typing_extensions import TypedDict

from sim.claims import Verdict
from sim.engine import Simulation
from sim.variant import Variant
from systems.rsiagent import faults as fp
from systems.rsiagent import properties as props
from systems.rsiagent.drivers.common import INSTRUCTION, NAMES, Name, arm, bank_of, fact, new_host
from systems.rsiagent.model import (
    GuestVM,
    PracticeInfrastructureError,
    ProjectSpec,
    bank_facts,
    commit_learning,
    evolve_practice_project,
)
from systems.rsiagent.policies import ActorWork, Diagnosis, Distiller, Reconciler


# -- 1. work-phase lesson lost -----------------------------------------------------------------------------
class WorkLessonExample(TypedDict):
    """Work-phase lessons (file, fact), whether distillation recalls them, distilled adds, withdrawals."""

    lessons: Annotated[list[tuple[Name, Annotated[int, Field(ge=1, le=9)]]], Field(max_length=3)]
    recall: bool
    add: Annotated[list[tuple[Name, Annotated[int, Field(ge=10, le=19)]]], Field(max_length=2)]
    delete: Annotated[list[Name], Field(max_length=3)]


def work_lesson_examples() -> Any:
    return st.fixed_dictionaries(
        {
            "lessons": st.lists(st.tuples(st.sampled_from(NAMES), st.integers(1, 9)), max_size=3),
            "recall": st.booleans(),
            "add": st.lists(st.tuples(st.sampled_from(NAMES), st.integers(10, 19)), max_size=2),
            "delete": st.lists(st.sampled_from(NAMES), max_size=2, unique=True),
        }
    )


def check_work_lesson(sim: Simulation, ex: dict[str, Any], variant: Variant) -> Verdict:
    """Every lesson the Actor writes into ~/.memory while working, and every distilled lesson, reaches the
    committed bank (unless withdrawn)."""
    host = new_host(sim, variant)
    lessons = [(n, fact(i)) for n, i in ex["lessons"]]
    adds = [(n, fact(i)) for n, i in ex["add"]]
    spec = ProjectSpec(
        1,
        INSTRUCTION,
        ActorWork(lessons=tuple(lessons)),
        distiller=Distiller(add=tuple(adds), delete=tuple(ex["delete"]), recall_work=ex["recall"]),
    )
    rec = evolve_practice_project(sim, host, spec)
    return props.check_lessons_committed(bank_of(lessons), bank_of(adds), ex["delete"], rec.after_bank)


# -- 15. diagnosis-phase edits promoted --------------------------------------------------------------------
class DiagnosisExample(TypedDict):
    """Files distillation adds a lesson to, and files the learning diagnosis edits."""

    add: Annotated[list[Name], Field(max_length=2)]
    edits: Annotated[list[Name], Field(max_length=2)]


def diagnosis_examples() -> Any:
    return st.fixed_dictionaries(
        {
            "add": st.lists(st.sampled_from(NAMES), max_size=2),
            "edits": st.lists(st.sampled_from(NAMES), max_size=2),
        }
    )


def check_diagnosis(sim: Simulation, ex: dict[str, Any], variant: Variant) -> Verdict:
    """The installed bank is the bank at reconciliation end, distilled lessons included."""
    host = new_host(sim, variant)
    adds = tuple((n, fact(i + 1)) for i, n in enumerate(ex["add"]))
    spec = ProjectSpec(
        1,
        INSTRUCTION,
        ActorWork(),
        distiller=Distiller(add=adds),
        reconciler=Reconciler(),
        diagnosis=Diagnosis(bank_edits=tuple((n, fact(50 + i)) for i, n in enumerate(ex["edits"]))),
    )
    rec = evolve_practice_project(sim, host, spec)
    reconciled = [op.data["bank"] for op in sim.trace.data.ops if op.op == "reconcile"][-1]
    installed = {n: hashlib.sha256(d).hexdigest() for n, d in rec.after_bank.items()}
    distilled = bank_facts(bank_of(adds))
    return props.check_diagnosis_not_promoted(installed, reconciled, distilled, rec.after_bank)


# -- 16. a failed pull looks empty -------------------------------------------------------------------------
class PullExample(TypedDict):
    """The guest bank's files and how many pull attempts fail (3 or more: every attempt)."""

    guest: Annotated[list[Name], Field(max_length=3)]
    failures: Annotated[int, Field(ge=0, le=5)]


def pull_examples() -> Any:
    return st.fixed_dictionaries(
        {
            "guest": st.lists(st.sampled_from(NAMES), max_size=3, unique=True),
            "failures": st.integers(0, 5),  # 3 or more: every attempt fails
        }
    )


def check_pull(sim: Simulation, ex: dict[str, Any], variant: Variant) -> Verdict:
    """A commit never replaces a non-empty guest bank by an empty canonical bank, and one whose pull worked
    installs the guest bank."""
    host = new_host(sim, variant)
    vm = GuestVM(sim, "vm-ep001")
    vm.volume.mkdir(vm.MEMORY)
    for i, n in enumerate(ex["guest"]):
        vm.write_bank_file(n, fact(i + 1).encode())
    guest = vm.bank()
    arm(sim, [f"fail@{fp.PULL_ATTEMPT}#{i}" for i in range(1, ex["failures"] + 1)])
    try:
        rec = commit_learning(sim, host, vm, 1, "PASS", authorized=host.target)
        committed = rec.after_bank if rec.outcome == "installed" else None
    except PracticeInfrastructureError:
        committed = None  # the terminal pull refused: infra
    return props.check_pull_commit(guest, committed, ex["failures"] < 3)
