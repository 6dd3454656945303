"""The phases of one practice project (RT-RTE-task-execution, RT-RTE-learning-admission,
MEM-OBJ-learning-diagnosis): ``evolve_practice`` and ``_promote_learning``."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sim.engine import Simulation
from systems.rsiagent import faults as fp
from systems.rsiagent.model.admission import admit, atomic_install_memory, audit_candidate, journal
from systems.rsiagent.model.common import SYSTEM, PracticeInfrastructureError
from systems.rsiagent.model.functions import inventory_listing, parse_verdict, tree_sha256
from systems.rsiagent.model.records import checkpoint, write_outcome
from systems.rsiagent.model.texts import actor_charter
from systems.rsiagent.model.transport import pull_memory, pull_terminal_memory, push_memory
from systems.rsiagent.model.volumes import GuestVM, Host
from systems.rsiagent.policies import (
    ActorWork,
    Diagnosis,
    Distiller,
    Reconciler,
    VerifierPolicy,
)
from systems.rsiagent.state import (
    Bank,
    CommitRecord,
    frozen_bank,
)


@dataclass(frozen=True)
class ProjectSpec:
    """One practice project: its episode id (``project_index``), instruction and the phase policies.

    A ``diagnosis`` selects the ``_promote_learning`` route (a learning-diagnosis free phase follows
    reconciliation)."""

    episode: int
    instruction: str
    actor: ActorWork
    verifier: VerifierPolicy = field(default_factory=lambda: VerifierPolicy())
    distiller: Distiller = field(default_factory=lambda: Distiller())
    reconciler: Reconciler = field(default_factory=lambda: Reconciler())
    diagnosis: Diagnosis | None = None
    project_id: str = ""

    @property
    def wave_id(self) -> str:
        """The wave publication's project id (``[a-z0-9][a-z0-9_-]{0,63}``)."""
        return self.project_id or f"p{self.episode:03d}"


@dataclass
class ActorContext:
    """What the Actor holds in its context after the work phase (the same context distills)."""

    observed: tuple[str, ...] = ()
    handoff: str = ""
    read: dict[str, bytes] = field(default_factory=dict)
    work_lessons: dict[str, bytes] = field(default_factory=dict)
    withdrawn: set[str] = field(default_factory=set)


def reset_null_vm(sim: Simulation, vm: GuestVM) -> None:
    """Upstream ``_reset_null_vm``: delete the project root, every handoff file (curriculum notes and the
    learning diagnosis included) and ``~/.memory`` (RT-RTE-task-execution)."""
    vol = vm.volume
    for d in (vm.PROJECT, vm.MEMORY):
        vol.rmtree(d)
    for f in (vm.NOTES, vm.DIAGNOSIS):
        if vol.tree.exists(f):
            vol.tree.delete(f)
    sim.trace.op(SYSTEM, "reset_null_vm", agent=vm.name)


def push_canonical(sim: Simulation, vm: GuestVM, files: Mapping[str, bytes]) -> None:
    """``_push_canonical_memory``: a failed push is :class:`PracticeInfrastructureError` (practice, waves,
    unified evolution)."""
    if not push_memory(sim, vm, files):
        raise PracticeInfrastructureError("canonical memory push failed")


def actor_work(
    sim: Simulation, host: Host, vm: GuestVM, spec: ProjectSpec, route: str = "practice"
) -> ActorContext:
    """The Actor's work phase (RT-RTE-task-execution, RT-BAP-actor-method): the charter
    (``self_evolving_actor_charter`` + ``_actor_runtime_contract``) fences the names-and-sizes inventory
    and says work-phase edits are discarded; the Actor reads the bank files it chooses, writes lessons into
    ``~/.memory`` and submits a candidate with its handoff (``STATUS: SUBMIT``)."""
    bank = vm.bank()
    charter = actor_charter(spec.instruction, inventory_listing(bank, route))
    head, _, rest = charter.partition("DURABLE MEMORY FILES:\n---\n")
    inventory, _, tail = rest.partition("\n---")
    sim.request(
        SYSTEM,
        "actor.work",
        [head + "DURABLE MEMORY FILES:\n---\n", inventory + "\n---", tail],
        agent=vm.name,
        kinds=["system", "memory", "message"],
    )
    ctx = ActorContext(observed=spec.actor.observed, handoff=f"STATUS: SUBMIT\n{spec.actor.candidate}")
    for name in spec.actor.reads:
        if name in bank:
            ctx.read[name] = bank[name]
    for name, text in spec.actor.lessons:
        data = text.encode("utf-8")
        vm.write_bank_file(name, data)
        ctx.work_lessons[name] = data
    vm.volume.write(f"{vm.PROJECT}/result.txt", spec.actor.candidate.encode("utf-8"))
    sim.trace.op(
        SYSTEM,
        "actor_work",
        agent=vm.name,
        episode=spec.episode,
        reads=sorted(ctx.read),
        work_lessons=sorted(ctx.work_lessons),
        status="SUBMIT",
    )
    return ctx


def verify(sim: Simulation, spec: ProjectSpec, candidate: bytes, agent: str = "verifier") -> tuple[str, str]:
    """The Verifier on a fresh VM with the candidate (RT-RTE-candidate-verification): exactly one
    ``VERDICT: PASS|FAIL`` outside code fences. Returns the verdict and the verbatim report."""
    report = spec.verifier.report()
    sim.request(
        SYSTEM,
        "verifier.judge",
        ["You are the Verifier.", candidate.decode("utf-8", "replace")],
        agent=agent,
        kinds=["system", "message"],
    )
    verdict = parse_verdict(report)
    sim.trace.op(SYSTEM, "verify", agent=agent, episode=spec.episode, verdict=verdict)
    return verdict, report


def _append(old: bytes | None, text: str) -> bytes:
    line = text.encode("utf-8")
    return line if not old else old.rstrip(b"\n") + b"\n" + line


def distill(
    sim: Simulation, vm: GuestVM, ctx: ActorContext, policy: Distiller, verdict: str, report: str
) -> None:
    """The distillation free phase in the same Actor context (RT-RTE-learning-admission): given the
    outcome and the verbatim report, the Actor adds, revises or deletes bank files (``allow_noop_done``).
    Not modeled: the FAIL-is-not-success rule is an instruction, not a check."""
    bank = vm.bank()
    sim.request(
        SYSTEM,
        "actor.distill",
        [
            f"Outcome: {verdict}\n{report}",
            f"Update your durable memory at ~/.memory.\n{inventory_listing(bank)}",
            " ".join(ctx.observed),
        ],
        agent=vm.name,
        kinds=["message", "memory", "message"],
    )
    for name, text in policy.rewrite_read:
        if name in ctx.read:
            vm.write_bank_file(name, _append(ctx.read[name], text))
    for name, text in policy.add:
        vm.write_bank_file(name, _append(vm.bank().get(name), text))
    for name, text in policy.revise:
        vm.write_bank_file(name, _append(vm.bank().get(name), text))
    if policy.recall_work:
        for name, data in ctx.work_lessons.items():
            cur = vm.bank().get(name)
            if cur is None or data not in cur:
                vm.write_bank_file(name, data if cur is None else cur.rstrip(b"\n") + b"\n" + data)
    for name in policy.delete:
        vm.delete_bank_file(name)
        ctx.withdrawn.add(name)
    sim.trace.op(
        SYSTEM,
        "distill",
        agent=vm.name,
        visible=sorted(bank),
        add=[n for n, _ in policy.add],
        revise=[n for n, _ in policy.revise],
        delete=list(policy.delete),
        recall_work=policy.recall_work,
        rewrite_read=[n for n, _ in policy.rewrite_read],
    )


def reconcile(sim: Simulation, vm: GuestVM, ctx: ActorContext, policy: Reconciler) -> None:
    """Whole-corpus reconciliation (free phase): the Actor withdraws files it judges stale."""
    sim.request(
        SYSTEM,
        "actor.reconcile",
        [
            "Look for conflicting assertions, unsupported causal explanations, stale environment "
            "assumptions, and conclusions broader than the observed evidence.",
            inventory_listing(vm.bank()),
        ],
        agent=vm.name,
        kinds=["message", "memory"],
    )
    for name in policy.delete:
        vm.delete_bank_file(name)
        ctx.withdrawn.add(name)
    bank = vm.bank()
    sim.trace.op(
        SYSTEM,
        "reconcile",
        agent=vm.name,
        delete=list(policy.delete),
        bank={n: hashlib.sha256(d).hexdigest() for n, d in sorted(bank.items())},
    )


def learning_diagnosis(sim: Simulation, vm: GuestVM, policy: Diagnosis) -> str:
    """The learning-diagnosis free phase of ``_promote_learning`` (MEM-OBJ-learning-diagnosis): the Actor
    writes ``learning_diagnosis.md`` (conclusions for the Curriculum) and may still edit the bank."""
    sim.request(
        SYSTEM,
        "actor.learning_diagnosis",
        [
            "Do not include private chain-of-thought or a turn-by-turn transcript: provide only the "
            "concise conclusions and hypotheses you choose to communicate."
        ],
        agent=vm.name,
        kinds=["message"],
    )
    vm.volume.write(vm.DIAGNOSIS, policy.text.encode("utf-8"))
    for name, text in policy.bank_edits:
        vm.write_bank_file(name, _append(vm.bank().get(name), text))
    sim.trace.op(SYSTEM, "learning_diagnosis", agent=vm.name, bank_edits=[n for n, _ in policy.bank_edits])
    return policy.text


def commit_learning(
    sim: Simulation,
    host: Host,
    vm: GuestVM,
    episode: int,
    verdict: str,
    *,
    authorized: str,
    kind: str = "practice-terminal-memory",
    files: Bank | None = None,
    install_path: str | None = None,
) -> CommitRecord:
    """The commit (RT-RTE-learning-admission, MEM-OBJ-memory-journal; ``practice_loop.py:1690-1712``):
    pull (``_pull_terminal_memory``, or the raw ``pull_memory`` under the ``raw-pull`` counterfactual) →
    silent audit of *authorized* (corpus required) → whole-candidate rejection (quarantine, no journal,
    bank unchanged) → journal (``{kind, terminal_outcome}``) → staged install. Off switch ``commit-off``:
    the candidate is replaced by the tree it would replace (nothing new is learned). Raises
    :class:`PracticeInfrastructureError` on a failed terminal pull."""
    path = install_path or host.CANONICAL
    before = host.volume.read_tree(path)
    if files is None:
        v = host.variant
        files = (
            pull_memory(sim, vm, variant=v) if v.has("raw-pull") else pull_terminal_memory(sim, vm, variant=v)
        )
    if host.variant.has("commit-off"):
        files = dict(before)
    meta = {"kind": kind, "terminal_outcome": verdict}
    outcome = _admit_at(sim, host, files, episode, authorized, meta, path)
    after = host.volume.read_tree(path)
    rec = CommitRecord(episode, outcome, verdict, frozen_bank(before), frozen_bank(after))
    host.commits.append(rec)
    sim.trace.op(
        SYSTEM,
        "commit_learning",
        agent=host.agent,
        episode=episode,
        outcome=outcome,
        before=tree_sha256(before),
        after=tree_sha256(after),
    )
    return rec


def _admit_at(
    sim: Simulation,
    host: Host,
    files: Bank,
    episode: int,
    authorized: str,
    meta: Mapping[str, Any],
    path: str,
) -> str:
    if path == host.CANONICAL:
        return admit(sim, host, files, episode=episode, authorized=authorized, meta=meta)
    accepted, rejected = audit_candidate(sim, host, files, authorized)
    if accepted != files:
        host.quarantine("terminal memory failed the target boundary", files=rejected, episode=episode)
        return "quarantined"
    journal(sim, host, episode, files, meta)
    atomic_install_memory(sim, host, files, path)
    return "installed"


def evolve_practice_project(
    sim: Simulation, host: Host, spec: ProjectSpec, *, vm_kind: str = "memory"
) -> CommitRecord:
    """One phase-gated project of ``evolve_practice`` / ``_promote_learning`` (RT-RTE-task-execution,
    RT-RTE-learning-admission, MEM-OBJ-memory, MEM-OBJ-learning-diagnosis).

    Fresh VM → push canonical → Actor work → Verifier (fresh VM) → reset (fresh VM, candidate replayed,
    canonical pushed again: work-phase edits discarded) → distillation → reconciliation → [learning
    diagnosis, whose bank edits are still pulled] → commit, authorizing the host's target direction
    (``_promote_learning``: its audit surface) → [checkpoint] → ``outcome.json`` / ``outcome.md`` →
    ``state.json``. A rejection quarantines the run (``finish``). Fixed variants: ``draft-work-delta``
    (the work-phase delta is carried into the reset bank as a visible draft), ``diagnosis-snapshot`` (the
    candidate is pulled at reconciliation end). Raises :class:`PracticeInfrastructureError`.
    Not modeled: the Curriculum's fixture capture and the evidence view (programs, traces, SHA256SUMS).
    """
    vm = GuestVM(sim, f"vm-ep{spec.episode:03d}", vm_kind)
    before = host.canonical()
    reset_null_vm(sim, vm)
    push_canonical(sim, vm, before)
    ctx = actor_work(sim, host, vm, spec)
    work_bank = vm.bank()
    candidate = vm.volume.tree.read_bytes(f"{vm.PROJECT}/result.txt")
    verdict, report = verify(sim, spec, candidate)
    reset_null_vm(sim, vm)
    vm.volume.write(f"{vm.PROJECT}/result.txt", candidate)
    push_canonical(sim, vm, host.canonical())
    if host.variant.has("draft-work-delta"):
        for name, data in sorted(work_bank.items()):
            if before.get(name) != data:
                vm.write_bank_file(name, data)
    distill(sim, vm, ctx, spec.distiller, verdict, report)
    reconcile(sim, vm, ctx, spec.reconciler)
    files: Bank | None = None
    promote = spec.diagnosis is not None
    diagnosis = ""
    if spec.diagnosis is not None:
        if host.variant.has("diagnosis-snapshot"):
            files = pull_terminal_memory(sim, vm, variant=host.variant)
        diagnosis = learning_diagnosis(sim, vm, spec.diagnosis)
    rec = commit_learning(
        sim,
        host,
        vm,
        spec.episode,
        verdict,
        authorized=host.audit_surface(promote),
        kind="unified-practice-project" if promote else "practice-terminal-memory",
        files=files,
    )
    if rec.outcome == "installed":
        host.volume.point(sim, fp.CHECKPOINT)
        host.projects = spec.episode
        checkpoint(sim, host, spec.episode)
        write_outcome(
            host,
            spec.episode,
            spec.instruction,
            ctx.handoff,
            verdict,
            report,
            rec,
            diagnosis=diagnosis if promote else None,
        )
        host.write_running_state()
    return rec


def evolve_practice(
    sim: Simulation, host: Host, specs: Sequence[ProjectSpec], *, vm_kind: str = "memory"
) -> list[CommitRecord]:
    """``evolve_practice``'s outer loop over *specs* (the Curriculum's projects, in order): the
    ``checkpoint(0)`` of the start, one :func:`evolve_practice_project` each, and ``finish()`` on every
    exit: ``quarantined`` at a rejection, ``infra`` on an infrastructure error, ``converged`` (the
    Curriculum's terminal decision) after the last project.
    Not modeled: the Curriculum phases between projects (see :func:`curriculum_turn`)."""
    out: list[CommitRecord] = []
    try:
        checkpoint(sim, host, 0)
        for spec in specs:
            rec = evolve_practice_project(sim, host, spec, vm_kind=vm_kind)
            out.append(rec)
            if rec.outcome != "installed":
                return out  # the quarantine already wrote finish()
    except PracticeInfrastructureError as exc:
        host.finish("infra", str(exc))
        return out
    host.finish("converged", "Curriculum Agent terminal decision")
    return out
