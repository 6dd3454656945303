"""Benchmark memory attachment (RT-RTE-task-execution annotation): OSWorld and ALE."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from sim.engine import Simulation
from sim.variant import FAITHFUL, Variant
from systems.rsiagent import faults as fp
from systems.rsiagent.model.common import OSWORLD_MODE, SYSTEM, FrozenMemoryUploadError
from systems.rsiagent.model.functions import inventory_listing, tree_sha256
from systems.rsiagent.model.transport import push_memory
from systems.rsiagent.model.volumes import GuestVM


@dataclass
class EvalRecord:
    """What an evaluation run records about memory, and what the Actor actually got."""

    memory_mode: str
    delivered: bool
    preamble: str
    env_memory_dir: str | None
    nudges: list[str] = field(default_factory=list)


def osworld_attach_memory(
    sim: Simulation, vm: GuestVM, bank: Mapping[str, bytes], variant: Variant = FAITHFUL
) -> EvalRecord:
    """OSWorld ``benchmarks/osworld/task.py``: push the frozen snapshot; on failure warn and continue with
    memory OFF while ``env_memory_dir`` stays set and the record still says
    ``frozen_host_snapshot_copy_in_only``. Fixed variant ``osworld-record-off``: clear the flag and
    record ``off``. Off switch ``osworld-memory-off``: no memory is attached (no push; recorded ``off``)."""
    if variant.has("osworld-memory-off"):
        rec = EvalRecord("off", False, "", None)
        sim.trace.op(SYSTEM, "osworld_attach_memory", agent=vm.name, phase="info", off=True)
        return rec
    ok = push_memory(sim, vm, bank, point=fp.OSWORLD_PUSH)
    if ok:
        rec = EvalRecord(OSWORLD_MODE, True, inventory_listing(bank, "osworld"), "~/.memory")
    elif variant.has("osworld-record-off"):
        rec = EvalRecord("off", False, "", None)
    else:
        rec = EvalRecord(OSWORLD_MODE, False, "", "~/.memory")
    sim.trace.op(
        SYSTEM,
        "osworld_attach_memory",
        agent=vm.name,
        phase="ok" if ok else "fail",
        memory_mode=rec.memory_mode,
        delivered=rec.delivered,
    )
    return rec


def verify_memory(vm: GuestVM, bank: Mapping[str, bytes]) -> bool:
    """ALE's ``verify_memory``: the guest bank equals the frozen snapshot."""
    return tree_sha256(vm.bank()) == tree_sha256(bank)


def ale_attach_memory(sim: Simulation, vm: GuestVM, bank: Mapping[str, bytes]) -> EvalRecord:
    """ALE ``benchmarks/ale/worker.py``: push the frozen snapshot and verify it; a failed upload raises
    :class:`FrozenMemoryUploadError`.

    Not modeled: the second verify_memory after the ALE episode (only the post-upload check is made).
    """
    if not push_memory(sim, vm, bank, point=fp.ALE_PUSH) or not verify_memory(vm, bank):
        sim.trace.op(SYSTEM, "ale_attach_memory", agent=vm.name, phase="fail")
        raise FrozenMemoryUploadError("Frozen evaluation memory upload failed")
    sim.trace.op(SYSTEM, "ale_attach_memory", agent=vm.name, files=len(bank))
    return EvalRecord("frozen_evaluation_memory", True, inventory_listing(bank, "ale"), "~/.memory")
