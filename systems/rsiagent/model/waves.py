"""Parallel waves (RT-RTE-learning-admission annotation): ``explore/phase1_wave.py``."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sim.engine import Simulation
from systems.rsiagent.model.admission import atomic_install_memory
from systems.rsiagent.model.common import (
    BRANCH_ID_RE,
    MAX_PARALLEL,
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
from systems.rsiagent.model.transport import pull_terminal_memory
from systems.rsiagent.model.volumes import GuestVM, Host
from systems.rsiagent.state import (
    Bank,
    CommitRecord,
)


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


def memory_changes(before: Mapping[str, bytes], after: Mapping[str, bytes]) -> dict[str, list[str]]:
    """``memory_changes``: created / deleted / modified / unchanged names."""
    return {
        "created": sorted(set(after) - set(before)),
        "deleted": sorted(set(before) - set(after)),
        "modified": sorted(n for n in set(before) & set(after) if before[n] != after[n]),
        "unchanged": sorted(n for n in set(before) & set(after) if before[n] == after[n]),
    }


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
    sim: Simulation, host: Host, specs: Sequence[ProjectSpec], *, vm_kind: str = "memory"
) -> WaveResult:
    """One wave of ``evolve_parallel_phase1`` (RT-RTE-learning-admission annotation; ``max_parallel=4``).

    Branches run concurrently as SimPy processes from the pre-wave ``memory_snapshot`` (push snapshot →
    Actor → Verifier → push the snapshot again); all are drained before any commit and any exception
    aborts the wave. Commits are serialized in assignment order; each pushes the **latest canonical**
    bank into its branch before distillation and reconciliation, then pulls, audits, journals and
    installs, and writes ``memory_before_commit`` / ``memory_after_commit`` (manifests) and
    ``memory_changes`` under ``lineage/wave/branch-<k>/``. A rejection at branch k quarantines with
    branches 1..k-1 installed and no ``outcomes.md``.
    Counterfactual ``push-at-wave-start``: no push at commit. Fixes: ``wave-sibling-check``,
    ``stage-wave`` (commits go to a wave stage published once).
    Not modeled: the retry of a branch after a pre-verdict physical failure; branch fixtures.
    Not modeled: boundary errors raised inside a branch (transcript audits) and their precedence over
    infra errors in the drain (the first branch error aborts the wave).
    """
    if not 0 < len(specs) <= MAX_PARALLEL:
        raise ValueError(f"a wave has 1..{MAX_PARALLEL} projects")
    snapshot = host.canonical()
    host.volume.write(
        "lineage/state.json",
        json.dumps(
            {
                "state": host.state,
                "memory_tree_sha256": tree_sha256(snapshot),
                "phase1_completed": host.phase1_completed,
            },
            sort_keys=True,
        ).encode("utf-8"),
    )
    result = WaveResult(snapshot)
    vms = [GuestVM(sim, f"branch-{k + 1}", vm_kind) for k in range(len(specs))]
    contexts: list[ActorContext | None] = [None] * len(specs)
    verdicts: list[tuple[str, str]] = [("", "")] * len(specs)
    errors: list[str] = []

    def branch(k: int, spec: ProjectSpec) -> Any:
        vm = vms[k]
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
        host.state = "infra"
        sim.trace.op(SYSTEM, "evolve_parallel_phase1", agent=host.agent, phase="fail", error=errors[0])
        return result
    staged = host.variant.has("stage-wave")
    target = host.WAVE_STAGE if staged else host.CANONICAL
    if staged:
        host.volume.rmtree(target)
        host.volume.mkdir(target)
        for n, d in snapshot.items():
            host.volume.write(f"{target}/{n}", d)
    for k, spec in enumerate(specs):
        vm, ctx = vms[k], contexts[k]
        assert ctx is not None
        result.contexts.append(ctx)
        latest = host.volume.read_tree(target)
        host.volume.write(
            f"lineage/wave/branch-{k + 1}/memory_before_commit.json",
            json.dumps(manifest(latest), sort_keys=True).encode("utf-8"),
        )
        if not host.variant.has("push-at-wave-start"):
            push_canonical(sim, vm, latest)
        verdict, report = verdicts[k]
        distill(sim, vm, ctx, spec.distiller, verdict, report)
        reconcile(sim, vm, ctx, spec.reconciler)
        files = pull_terminal_memory(sim, vm)
        conflicts: list[str] = []
        if host.variant.has("wave-sibling-check"):
            files, conflicts = _merge_sibling_changes(files, latest, snapshot)
        rec = commit_learning(
            sim,
            host,
            vm,
            spec.episode,
            verdict,
            authorized=spec.instruction,
            kind="wave",
            files=files,
            install_path=target,
            checkpoint=False,
        )
        if conflicts:
            rec = CommitRecord(
                rec.episode, rec.outcome, rec.verdict, rec.before, rec.after, conflicts=tuple(conflicts)
            )
        result.commits.append(rec)
        changes = memory_changes(rec.before_bank, rec.after_bank)
        result.changes.append(changes)
        if rec.outcome == "installed":  # a rejection is a boundary error: the branch records stop there
            host.volume.write(
                f"lineage/wave/branch-{k + 1}/memory_after_commit.json",
                json.dumps(manifest(rec.after_bank), sort_keys=True).encode("utf-8"),
            )
            host.volume.write(
                f"lineage/wave/branch-{k + 1}/memory_changes.json",
                json.dumps(changes, sort_keys=True).encode("utf-8"),
            )
        if rec.outcome != "installed":
            sim.trace.op(
                SYSTEM,
                "evolve_parallel_phase1",
                agent=host.agent,
                phase="fail",
                rejected_branch=k + 1,
                installed=k,
            )
            return result
    if staged:
        atomic_install_memory(sim, host, host.volume.read_tree(target))
        host.volume.rmtree(target)
    host.phase1_completed += len(specs)
    host.volume.write(
        "lineage/wave/outcomes.md",
        "\n".join(f"- {s.episode:03d}: {v[0]}" for s, v in zip(specs, verdicts)).encode(),
    )
    host.volume.write(
        "lineage/state.json",
        json.dumps(
            {
                "state": host.state,
                "memory_tree_sha256": tree_sha256(host.canonical()),
                "phase1_completed": host.phase1_completed,
            },
            sort_keys=True,
        ).encode("utf-8"),
    )
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
    """The wave-resume precondition this model checks: the canonical bank equals the tree recorded in
    ``state.json`` (upstream also checks the memory chain, protocol and PHASE1_WAVE_COMPLETED total).
    Not modeled: the other preconditions of §2.17."""
    vol = host.volume
    if not vol.tree.exists("lineage/state.json"):
        return True
    state = json.loads(vol.tree.read_text("lineage/state.json"))
    return bool(state.get("memory_tree_sha256") == tree_sha256(host.canonical()))


def validate_wave_publication(pub: Mapping[str, Any]) -> list[dict[str, str]]:
    """The Curriculum's wave publication ``{decision: WAVE|SATURATED|STALLED, rationale, projects}``: each
    project id matches ``[a-z0-9][a-z0-9_-]{0,63}`` and is unique, each instruction names the project
    root, at most ``max_parallel`` projects. Returns the projects; raises ValueError."""
    if pub.get("decision") not in ("WAVE", "SATURATED", "STALLED") or not isinstance(
        pub.get("rationale"), str
    ):
        raise ValueError("wave publication needs decision WAVE|SATURATED|STALLED and a rationale")
    projects = list(pub.get("projects") or [])
    if pub["decision"] == "WAVE" and not 0 < len(projects) <= MAX_PARALLEL:
        raise ValueError(f"a WAVE publishes 1..{MAX_PARALLEL} projects")
    ids = [p.get("id", "") for p in projects]
    if len(set(ids)) != len(ids) or not all(BRANCH_ID_RE.fullmatch(str(i)) for i in ids):
        raise ValueError("project ids must be unique and match [a-z0-9][a-z0-9_-]{0,63}")
    if not all(PROJECT_ROOT in str(p.get("instruction", "")) for p in projects):
        raise ValueError("every instruction must name " + PROJECT_ROOT)
    return projects
