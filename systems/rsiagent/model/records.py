"""The records a learning commit leaves in the lineage (RT-RTE-learning-admission, MEM-OBJ-memory-journal):
memory checkpoints, ``outcome.json`` / ``outcome.md`` per episode and the wave's records.

``explore/practice_loop.py`` ``checkpoint`` (1234-1262), the outcome record (1715-1726) and
``_outcome_text``; ``explore/target_learning.py`` ``_outcome_text`` (the unified route);
``explore/phase1_wave.py`` ``_commit_branch_memory`` and the wave's record.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from sim.engine import Simulation
from systems.rsiagent.model.admission import atomic_install_memory
from systems.rsiagent.model.common import SYSTEM, PracticeInfrastructureError
from systems.rsiagent.model.functions import manifest
from systems.rsiagent.model.volumes import Host
from systems.rsiagent.state import CommitRecord


def manifest_sha256(m: Mapping[str, Any]) -> str:
    """sha256 of ``json.dumps(manifest, sort_keys=True, separators=(",", ":"))``."""
    return hashlib.sha256(json.dumps(m, sort_keys=True, separators=(",", ":")).encode("utf-8")).hexdigest()


def checkpoint(sim: Simulation, host: Host, project: int) -> bool:
    """``checkpoint(project)``: only for a project in ``checkpoint_projects``, the canonical tree through the
    staged install into ``checkpoints/project_NNN/memory`` (the directory must not exist) and, on the
    practice route, ``manifest.json`` ``{schema_version: 1, kind: "phase1_memory_checkpoint", project,
    memory_manifest, memory_manifest_sha256}`` beside it (waves write no manifest). Returns whether a
    checkpoint was written; raises :class:`PracticeInfrastructureError` when it already exists."""
    if project not in host.checkpoint_projects:
        return False
    memory = host.canonical()
    dest = f"{host.CHECKPOINTS}/project_{project:03d}"
    vol = host.volume
    if host.protocol == "practice":
        if vol.isdir(dest) or vol.tree.exists(dest):
            raise PracticeInfrastructureError(f"Phase-1 checkpoint already exists: {dest}")
        vol.mkdir(dest)
    atomic_install_memory(sim, host, memory, f"{dest}/memory")
    if host.protocol == "practice":
        m = manifest(memory)
        host.write_json(
            f"{dest}/manifest.json",
            {
                "schema_version": 1,
                "kind": "phase1_memory_checkpoint",
                "project": project,
                "memory_manifest": m,
                "memory_manifest_sha256": manifest_sha256(m),
            },
        )
    sim.trace.op(SYSTEM, "checkpoint", agent=host.agent, project=project, files=len(memory))
    return True


def outcome_text(record: Mapping[str, Any]) -> str:
    """``_outcome_text`` (practice): what the Curriculum sees of a closed project."""
    pieces = [
        f"PROJECT {record['project_index']}",
        "ORIGINAL NATURAL-LANGUAGE PROJECT (verbatim):\n" + record["project"],
        f"TERMINAL OUTCOME: {record['terminal_outcome']}",
    ]
    for i, report in enumerate(record["verifier_reports"], 1):
        pieces.append(f"VERIFIER REPORT {i} (verbatim):\n{report}")
    return "\n\n".join(pieces)


def unified_outcome_text(label: str, record: Mapping[str, Any]) -> str:
    """``target_learning._outcome_text`` (the ``_promote_learning`` route)."""
    return "\n\n".join(
        [
            label,
            "ORIGINAL REQUEST (verbatim):\n" + record["request"],
            "TERMINAL OUTCOME: " + record["terminal_outcome"],
            "VERIFIER REPORT (verbatim):\n" + record["verifier_report"],
            "ACTOR LEARNING DIAGNOSIS (verbatim):\n" + record["learning_diagnosis"],
        ]
    )


def write_outcome(
    host: Host,
    project_index: int,
    project: str,
    handoff: str,
    verdict: str,
    report: str,
    rec: CommitRecord,
    *,
    diagnosis: str | None = None,
) -> dict[str, Any]:
    """``episodes/epNNN/outcome.json`` and ``outcome.md`` of a committed practice project: the practice
    schema ``{schema_version: 1, project_index, project, terminal_outcome, verification_cycles,
    actor_handoffs, verifier_reports, memory_before, memory_after}``, or with a *diagnosis* the unified
    route's ``{schema_version: 1, kind: "unified_practice_project", project_index, request,
    terminal_outcome, actor_handoff, verifier_report, learning_diagnosis, memory_before, memory_after}``."""
    ep = f"{host.EPISODES}/ep{project_index:03d}"
    if diagnosis is None:
        record: dict[str, Any] = {
            "schema_version": 1,
            "project_index": project_index,
            "project": project,
            "terminal_outcome": verdict,
            "verification_cycles": 1,
            "actor_handoffs": [handoff],
            "verifier_reports": [report],
            "memory_before": manifest(rec.before_bank),
            "memory_after": manifest(rec.after_bank),
        }
        text = outcome_text(record)
    else:
        record = {
            "schema_version": 1,
            "kind": "unified_practice_project",
            "project_index": project_index,
            "request": project,
            "terminal_outcome": verdict,
            "actor_handoff": handoff,
            "verifier_report": report,
            "learning_diagnosis": diagnosis,
            "memory_before": manifest(rec.before_bank),
            "memory_after": manifest(rec.after_bank),
        }
        text = unified_outcome_text(f"PRACTICE PROJECT {project_index}", record)
    host.write_json(f"{ep}/outcome.json", record)
    host.volume.write(f"{ep}/outcome.md", text.encode("utf-8"))
    return record


def memory_changes(before: Mapping[str, bytes], after: Mapping[str, bytes]) -> dict[str, list[str]]:
    """``_memory_changes``: created / deleted / modified / unchanged names."""
    return {
        "created": sorted(set(after) - set(before)),
        "deleted": sorted(set(before) - set(after)),
        "modified": sorted(n for n in set(before) & set(after) if before[n] != after[n]),
        "unchanged": sorted(n for n in set(before) & set(after) if before[n] == after[n]),
    }


def write_wave_outcome(
    host: Host,
    wave_index: int,
    project_index: int,
    project_id: str,
    project: str,
    handoff: str,
    verdict: str,
    report: str,
    snapshot: Mapping[str, bytes],
    rec: CommitRecord,
) -> str:
    """The wave branch's ``outcome.json`` (schema 2: ``wave_index``, ``project_id``,
    ``wave_memory_snapshot``, ``memory_changes``...) and ``outcome.md`` (the practice text plus ``MEMORY
    CHANGES:`` and the changes as indented JSON); returns the rendered text."""
    changes = memory_changes(rec.before_bank, rec.after_bank)
    record = {
        "schema_version": 2,
        "wave_index": wave_index,
        "project_index": project_index,
        "project_id": project_id,
        "project": project,
        "terminal_outcome": verdict,
        "verification_cycles": 1,
        "actor_handoffs": [handoff],
        "verifier_reports": [report],
        "wave_memory_snapshot": manifest(snapshot),
        "memory_before": manifest(rec.before_bank),
        "memory_after": manifest(rec.after_bank),
        "memory_changes": changes,
    }
    ep = f"{host.EPISODES}/ep{project_index:03d}"
    host.write_json(f"{ep}/outcome.json", record)
    rendered = (
        outcome_text(record)
        + "\n\nMEMORY CHANGES:\n"
        + json.dumps(changes, ensure_ascii=False, indent=2, sort_keys=True)
    )
    host.volume.write(f"{ep}/outcome.md", rendered.encode("utf-8"))
    return rendered


def wave_outcomes_text(wave_index: int, rationale: str, rendered: Sequence[str]) -> str:
    """The wave's ``outcomes.md``: the Curriculum's rationale, then each branch's outcome."""
    return f"WAVE {wave_index} CURRICULUM RATIONALE:\n{rationale}\n\n" + "\n\n---\n\n".join(rendered)
