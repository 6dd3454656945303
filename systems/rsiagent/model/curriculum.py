"""Curriculum notes and the ``none`` ablation (MEM-OBJ-curriculum-notes, RT-RTE-curriculum-search)."""

from __future__ import annotations

import json

from sim.engine import Simulation
from sim.variant import FAITHFUL, Variant
from systems.rsiagent.model.common import SYSTEM, PracticeInfrastructureError
from systems.rsiagent.model.functions import audit_text, inventory_listing, parse_decision, tree_sha256
from systems.rsiagent.model.phases import push_canonical, reset_null_vm
from systems.rsiagent.model.volumes import GuestVM, Host
from systems.rsiagent.policies import (
    CurriculumTurn,
)
from systems.rsiagent.state import (
    Bank,
)


def read_curriculum_notes(sim: Simulation, vm: GuestVM, variant: Variant = FAITHFUL) -> str | None:
    """Read ``/home/user/curriculum_notes.md``: "" when absent, zero-size or not strict UTF-8 (``-f``/``-s``
    tests). Fixed variant ``empty-notes-clear``: None when absent (no update), "" when present but empty
    or unreadable (clears). Off switch ``notes-off``: None (the notes are never read)."""
    if variant.has("notes-off"):
        return None
    path = vm.NOTES
    if not vm.volume.tree.exists(path):
        return None if variant.has("empty-notes-clear") else ""
    data = vm.volume.tree.read_bytes(path)
    try:
        return data.decode("utf-8") if data else ""
    except UnicodeDecodeError:
        return ""


def curriculum_turn(
    sim: Simulation,
    host: Host,
    vm: GuestVM,
    turn: CurriculumTurn,
    *,
    access: str = "copy",
    phase2_outcome_protocol: bool = True,
) -> str:
    """One Curriculum phase (RT-RTE-curriculum-search, MEM-OBJ-curriculum-notes): fresh VM, a disposable
    bank copy (or, with ``access="none"``, the empty ``curriculum_empty_memory``), the charter with the
    current notes, the handoff decision, then the notes read: only a non-empty read is audited (the exam
    fence's ``audit_text`` with the target authorized, ``practice_loop.py`` ``evolve_practice``) and
    replaces the notes (an audit hit quarantines). Writes ``memory_access.json``. Returns the decision.
    Not modeled: the exact wording of the Curriculum, Verifier, distillation, reconciliation and
    learning-diagnosis prompts (short stand-ins; the Actor charter, inventories, fold and restart texts
    are sized like upstream's)."""
    reset_null_vm(sim, vm)
    if access == "none":
        if not phase2_outcome_protocol:
            raise ValueError("curriculum_memory_access='none' requires phase2_outcome_protocol")
        empty = host.volume.read_tree("lineage/curriculum_empty_memory")
        if empty:
            raise PracticeInfrastructureError("curriculum_empty_memory is not empty")
        attached: Bank = {}
    elif access == "copy":
        attached = host.canonical()
    else:
        raise ValueError(f"unknown curriculum_memory_access {access!r}")
    push_canonical(sim, vm, attached)
    host.volume.write(
        "lineage/curriculum/memory_access.json",
        json.dumps(
            {
                "access": access,
                "attached_files": len(attached),
                "attached_bytes": sum(map(len, attached.values())),
                "attached_tree_sha256": tree_sha256(attached),
                "actor_learning_diagnosis_available": True,
            },
            sort_keys=True,
        ).encode("utf-8"),
    )
    sim.request(
        SYSTEM,
        "curriculum.charter",
        ["You are the Curriculum.", f"CURRICULUM NOTES:\n{host.notes}", inventory_listing(attached)],
        agent=vm.name,
        kinds=["system", "memory", "memory"],
    )
    handoff = f"DECISION: {turn.decision}\n{turn.instruction}"
    if turn.notes_action == "write":
        vm.volume.write(vm.NOTES, turn.notes_text.encode("utf-8"))
    elif turn.notes_action == "empty":
        vm.volume.write(vm.NOTES, b"")
    elif turn.notes_action == "blank":
        vm.volume.write(vm.NOTES, b"  \n")
    elif turn.notes_action == "corrupt":
        vm.volume.write(vm.NOTES, b"\xff\xfe notes")
    decision = parse_decision(handoff)
    read = read_curriculum_notes(sim, vm, host.variant)
    replaced = False
    if read is not None and (read != "" or host.variant.has("empty-notes-clear")):
        if read and audit_text(read, host.fence, authorized_instruction=host.target):
            host.quarantine("curriculum notes audit hit")
        else:
            host.notes = read
            replaced = True
    sim.trace.op(
        SYSTEM,
        "curriculum_turn",
        agent=vm.name,
        decision=decision,
        access=access,
        notes_action=turn.notes_action,
        notes_replaced=replaced,
    )
    return decision
