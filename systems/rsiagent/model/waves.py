"""Parallel waves (RT-RTE-learning-admission annotation): ``explore/phase1_wave.py`` @ 586733a8 and the
completed-boundary resume check of ``explore/phase1_boundary_recovery.py``."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import simpy

from sim.engine import Simulation
from systems.rsiagent.model.admission import atomic_install_memory
from systems.rsiagent.model.common import (
    BRANCH_ID_RE,
    PROJECT_ROOT,
    SYSTEM,
    PracticeInfrastructureError,
    VerifierProtocolError,
)
from systems.rsiagent.model.functions import manifest, tree_sha256
from systems.rsiagent.model.phases import (
    ActorContext,
    ProjectSpec,
    actor_work,
    commit_learning,
    distill,
    push_canonical,
    reconcile,
    reset_null_vm,
    verify,
)
from systems.rsiagent.model.records import (
    checkpoint,
    memory_changes,
    wave_outcomes_text,
    write_wave_outcome,
)
from systems.rsiagent.model.transport import pull_terminal_memory
from systems.rsiagent.model.volumes import GuestVM, Host
from systems.rsiagent.state import Bank, CommitRecord


@dataclass(frozen=True)
class WaveProject:
    """One published project: its id and instruction (stripped)."""

    project_id: str
    instruction: str


@dataclass(frozen=True)
class WaveDecision:
    """A parsed wave publication: ``WAVE``, ``SATURATED`` or ``STALLED``, the rationale and the projects."""

    decision: str
    rationale: str
    projects: tuple[WaveProject, ...]
    raw: str


def parse_wave_handoff(text: str) -> WaveDecision | None:
    """Upstream ``parse_wave_handoff``: None (the publication is rejected) unless *text* is a JSON object
    whose ``decision`` is ``WAVE|SATURATED|STALLED``, ``rationale`` a non-blank string and ``projects`` a
    list, empty for a non-WAVE decision and non-empty for a WAVE, each a dict with a unique string ``id``
    matching ``[a-z0-9][a-z0-9_-]{0,63}`` (``fullmatch``) and a non-blank string ``instruction`` naming the
    project root. The rationale and instructions are stored stripped. The wave's width is not limited
    (``max_parallel`` is scheduling capacity)."""
    try:
        value = json.loads(text)
    except (TypeError, ValueError):
        return None
    if not isinstance(value, dict):
        return None
    decision, rationale, projects = value.get("decision"), value.get("rationale"), value.get("projects")
    if (
        decision not in ("WAVE", "SATURATED", "STALLED")
        or not isinstance(rationale, str)
        or not rationale.strip()
        or not isinstance(projects, list)
    ):
        return None
    if decision != "WAVE":
        return None if projects else WaveDecision(decision, rationale.strip(), (), text)
    if not projects:
        return None
    parsed: list[WaveProject] = []
    seen: set[str] = set()
    for record in projects:
        if not isinstance(record, dict):
            return None
        pid, instruction = record.get("id"), record.get("instruction")
        if (
            not isinstance(pid, str)
            or not BRANCH_ID_RE.fullmatch(pid)
            or pid in seen
            or not isinstance(instruction, str)
            or not instruction.strip()
            or PROJECT_ROOT not in instruction
        ):
            return None
        seen.add(pid)
        parsed.append(WaveProject(pid, instruction.strip()))
    return WaveDecision(decision, rationale.strip(), tuple(parsed), text)


@dataclass
class WaveResult:
    """The outcome of one wave: per-branch commit records and ``memory_changes``, and whether the wave's
    ``outcomes.md`` was written."""

    snapshot: Bank
    commits: list[CommitRecord] = field(default_factory=list)
    changes: list[dict[str, list[str]]] = field(default_factory=list)
    contexts: list[ActorContext] = field(default_factory=list)
    outcome_written: bool = False
    aborted: str = ""


def _merge_sibling_changes(candidate: Bank, current: Bank, snapshot: Bank) -> tuple[Bank, list[str]]:
    """(fixed variant ``wave-sibling-check``) keep sibling-changed files: a branch's overwrite or delete
    of a file a sibling changed since the pre-wave snapshot is merged (line union onto the current
    text)."""
    out = dict(candidate)
    conflicts = []
    for name, cur in current.items():
        if snapshot.get(name) == cur:
            continue
        mine = candidate.get(name)
        if mine == cur or (mine is not None and mine.startswith(cur)):
            continue
        conflicts.append(name)
        have = cur.split(b"\n")
        extra = [ln for ln in (mine or b"").split(b"\n") if ln and ln not in have]
        out[name] = b"\n".join([cur.rstrip(b"\n"), *extra]) if extra else cur
    return out, sorted(conflicts)


def evolve_parallel_phase1(
    sim: Simulation,
    host: Host,
    specs: Sequence[ProjectSpec],
    *,
    rationale: str = "Explore independent projects in parallel.",
    vm_kind: str = "memory",
) -> WaveResult:
    """One wave of ``evolve_parallel_phase1`` (RT-RTE-learning-admission annotation).

    The Curriculum's publication (``curriculum_decision.json``) is parsed by :func:`parse_wave_handoff`;
    the pre-wave canonical bank is installed as the wave's ``memory_snapshot``. Branches run as SimPy
    processes, at most ``max_parallel`` at once (scheduling capacity, not wave width: upstream's
    ``ThreadPoolExecutor(max_workers=min(max_parallel, n))``), each from the snapshot (push snapshot →
    Actor → Verifier → push the snapshot again); all are drained before any commit and any branch error
    aborts the wave (``finish("infra")``). Commits are serialized in assignment order
    (``_commit_branch_memory``): ``memory_before_commit`` (a staged copy of the canonical tree), push the
    **latest canonical** bank into the branch, distillation and reconciliation, pull, audit (the target
    direction), journal (``phase1-parallel-terminal-memory``), install, ``memory_after_commit``, then the
    branch's ``outcome.json`` / ``outcome.md`` and its checkpoint. A rejection at branch k quarantines the
    run with branches 1..k-1 installed and no ``outcomes.md``; a completed wave writes ``outcomes.md`` and
    ``state.json`` (schema 2). Counterfactual ``push-at-wave-start``: no push at commit. Fixes:
    ``wave-sibling-check``, ``stage-wave`` (commits go to a wave stage published once).
    Not modeled: the retry of a branch after a pre-verdict physical failure; branch fixtures.
    Not modeled: boundary errors raised inside a branch (transcript audits) and their precedence over
    infra errors in the drain (the first branch error aborts the wave).
    Not modeled: the Curriculum's wave authoring (its segments, drafts and fixture checks): the publication
    is given.
    """
    host.protocol = "waves"
    pub = {
        "decision": "WAVE",
        "rationale": rationale,
        "projects": [{"id": s.wave_id, "instruction": s.instruction} for s in specs],
    }
    raw = json.dumps(pub, indent=2)
    decision = parse_wave_handoff(raw)
    if decision is None:
        raise ValueError("the wave publication is not a valid WAVE handoff")
    host.waves += 1
    wave = host.waves
    wave_dir = f"{host.WAVES}/wave_{wave:03d}"
    host.volume.write(f"{wave_dir}/curriculum_decision.json", raw.encode("utf-8"))
    snapshot = host.canonical()
    atomic_install_memory(sim, host, snapshot, f"{wave_dir}/memory_snapshot")
    base = host.projects
    result = WaveResult(snapshot)
    vms = [GuestVM(sim, f"branch-{k + 1}", vm_kind) for k in range(len(specs))]
    contexts: list[ActorContext | None] = [None] * len(specs)
    verdicts: list[tuple[str, str]] = [("", "")] * len(specs)
    errors: list[str] = []
    slots = simpy.Resource(sim.env, capacity=max(1, min(host.max_parallel, len(specs))))

    def branch(k: int, spec: ProjectSpec) -> Any:
        vm = vms[k]
        with slots.request() as slot:
            yield slot
            try:
                reset_null_vm(sim, vm)
                push_canonical(sim, vm, snapshot)
                ctx = actor_work(sim, host, vm, spec, route="wave")
                yield sim.timeout(spec.actor.duration_s)
                cand = vm.volume.tree.read_bytes(f"{vm.PROJECT}/result.txt")
                verdicts[k] = verify(sim, spec, cand, agent=f"verifier-{k + 1}")
                yield sim.timeout(10.0)
                push_canonical(sim, vm, snapshot)
                contexts[k] = ctx
            except (PracticeInfrastructureError, VerifierProtocolError) as exc:
                errors.append(f"branch {k + 1}: {exc}")

    procs = [sim.process(branch(k, s)) for k, s in enumerate(specs)]
    sim.run(until=sim.env.all_of(procs))
    if errors:
        result.aborted = errors[0]
        sim.trace.op(SYSTEM, "evolve_parallel_phase1", agent=host.agent, phase="fail", error=errors[0])
        host.finish("infra", errors[0])
        return result
    staged = host.variant.has("stage-wave")
    target = host.WAVE_STAGE if staged else host.CANONICAL
    if staged:
        host.volume.rmtree(target)
        host.volume.mkdir(target)
        for n, d in snapshot.items():
            host.volume.write(f"{target}/{n}", d)
    rendered: list[str] = []
    for k, spec in enumerate(specs):
        vm, ctx = vms[k], contexts[k]
        assert ctx is not None
        index = base + k + 1
        ep = f"{host.EPISODES}/ep{index:03d}"
        result.contexts.append(ctx)
        latest = host.volume.read_tree(target)
        atomic_install_memory(sim, host, latest, f"{ep}/memory_before_commit")
        verdict, report = verdicts[k]
        try:
            if not host.variant.has("push-at-wave-start"):
                push_canonical(sim, vm, latest)
            distill(sim, vm, ctx, spec.distiller, verdict, report)
            reconcile(sim, vm, ctx, spec.reconciler)
            files = pull_terminal_memory(sim, vm, variant=host.variant)
        except PracticeInfrastructureError as exc:
            host.finish("infra", str(exc))
            result.aborted = str(exc)
            return result
        conflicts: list[str] = []
        if host.variant.has("wave-sibling-check"):
            files, conflicts = _merge_sibling_changes(files, latest, snapshot)
        rec = commit_learning(
            sim,
            host,
            vm,
            index,
            verdict,
            authorized=host.audit_surface(),
            kind="phase1-parallel-terminal-memory",
            files=files,
            install_path=target,
        )
        if conflicts:
            rec = CommitRecord(
                rec.episode, rec.outcome, rec.verdict, rec.before, rec.after, conflicts=tuple(conflicts)
            )
        result.commits.append(rec)
        result.changes.append(memory_changes(rec.before_bank, rec.after_bank))
        if rec.outcome != "installed":  # a boundary error: quarantined, the branch records stop here
            sim.trace.op(
                SYSTEM,
                "evolve_parallel_phase1",
                agent=host.agent,
                phase="fail",
                rejected_branch=k + 1,
                installed=k,
            )
            return result
        atomic_install_memory(sim, host, rec.after_bank, f"{ep}/memory_after_commit")
        rendered.append(
            write_wave_outcome(
                host,
                wave,
                index,
                spec.wave_id,
                spec.instruction,
                ctx.handoff,
                verdict,
                report,
                snapshot,
                rec,
            )
        )
        host.projects = index
        checkpoint(sim, host, index)
    if staged:
        atomic_install_memory(sim, host, host.volume.read_tree(target))
        host.volume.rmtree(target)
    host.volume.write(
        f"{wave_dir}/outcomes.md", wave_outcomes_text(wave, decision.rationale, rendered).encode("utf-8")
    )
    host.write_running_state()
    result.outcome_written = True
    sim.trace.op(
        SYSTEM,
        "evolve_parallel_phase1",
        agent=host.agent,
        branches=len(specs),
        canonical=tree_sha256(host.canonical()),
    )
    return result


def wave_resume_allowed(host: Host) -> bool:
    """The completed-boundary resume check of ``phase1_boundary_recovery.validate_boundary``: ``state.json``
    stopped ``infra`` (a quarantined lineage never resumes) with ``last_project == projects`` and the
    run's target; the canonical bank equals the state's manifest; episodes 1..projects closed
    (PASS/FAIL, ``outcome.md`` present) with a continuous ``memory_before`` → ``memory_after`` chain ending
    at the canonical bank; the state's wave counter at the last completed wave (or one past it); every
    completed wave has its decision and ``outcomes.md`` and its projects in ledger order; no later
    episode has an outcome.
    Not modeled: the event log (``PHASE1_WAVE_COMPLETED``), ``memory_frozen``, later phases, the protocol
    fields and the Curriculum transcripts."""
    vol = host.volume
    if not vol.tree.exists(host.STATE):
        return False
    state = json.loads(vol.tree.read_text(host.STATE))
    count = state.get("projects")
    if (
        state.get("status") != "infra"
        or type(count) is not int
        or count < 0
        or state.get("last_project") != count
        or state.get("target_sha256") != host.target_sha256()
    ):
        return False
    memory = manifest(host.canonical())
    if memory != state.get("memory_manifest"):
        return False
    records = []
    before: dict[str, Any] = {}
    for index in range(1, count + 1):
        ep = f"{host.EPISODES}/ep{index:03d}"
        if not vol.tree.exists(f"{ep}/outcome.json") or not vol.tree.exists(f"{ep}/outcome.md"):
            return False
        record = json.loads(vol.tree.read_text(f"{ep}/outcome.json"))
        if (
            record.get("project_index") != index
            or record.get("terminal_outcome") not in ("PASS", "FAIL")
            or record.get("memory_before") != before
        ):
            return False
        before = record["memory_after"]
        records.append(record)
    if before != memory:
        return False
    last_wave = records[-1].get("wave_index", 0) if records else 0
    if state.get("waves") not in (last_wave, last_wave + 1):
        return False
    assignments = []
    for wave in range(1, last_wave + 1):
        wave_dir = f"{host.WAVES}/wave_{wave:03d}"
        if not vol.tree.exists(f"{wave_dir}/curriculum_decision.json"):
            return False
        decision = parse_wave_handoff(vol.tree.read_text(f"{wave_dir}/curriculum_decision.json"))
        if decision is None or decision.decision != "WAVE" or not vol.tree.exists(f"{wave_dir}/outcomes.md"):
            return False
        assignments += [(wave, p.project_id) for p in decision.projects]
    if assignments != [(r.get("wave_index"), r.get("project_id")) for r in records]:
        return False
    later = f"{host.EPISODES}/ep{count + 1:03d}/outcome.json"
    return not vol.tree.exists(later)
