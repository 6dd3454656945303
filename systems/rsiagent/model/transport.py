"""Transport of the bank between host and guest (MEM-OBJ-memory): ``explore/commit.py`` push/pull and
``_pull_terminal_memory``."""

from __future__ import annotations

from collections.abc import Mapping

from sim.engine import Simulation
from sim.faults import WriteFailed
from sim.variant import FAITHFUL, Variant
from systems.rsiagent import faults as fp
from systems.rsiagent.model.common import (
    CHUNK,
    PULL_ATTEMPTS,
    PULL_BACKOFF_S,
    SYSTEM,
    PracticeInfrastructureError,
)
from systems.rsiagent.model.functions import find_counted, pull_excluded, safe_memory_name, tree_sha256
from systems.rsiagent.model.volumes import GuestVM
from systems.rsiagent.state import (
    Bank,
)


def push_memory(
    sim: Simulation, vm: GuestVM, files: Mapping[str, bytes], *, point: str = fp.PUSH_UPLOAD
) -> bool:
    """Upload a bank into the guest ``~/.memory`` (MEM-OBJ-memory, RT-RTE-task-execution).

    Deletes and recreates the guest bank, uploads the tar in 3,000-character base64 chunks and extracts
    it; returns True iff the extraction reported ``SYNC_RC=0``. A failure (``fail@`` *point* or
    ``rsiagent.push_memory.extract``) leaves an empty or partial guest bank: it is a full replace, not
    atomic.
    Not modeled: tar member metadata and symlinks kept as links (the bank is files only).
    """
    vol = vm.volume
    vol.rmtree(vm.MEMORY)
    vol.mkdir(vm.MEMORY)
    payload = sum(len(d) for d in files.values())
    chunks = max(1, -(-((payload + 2) // 3 * 4) // CHUNK))
    written = 0
    try:
        vol.point(sim, point)
        for name in sorted(files):
            vol.point(sim, fp.PUSH_EXTRACT)
            vol.write(f"{vm.MEMORY}/{name}", files[name])
            written += 1
    except WriteFailed as exc:
        sim.trace.op(
            SYSTEM,
            "push_memory",
            agent=vm.name,
            phase="fail",
            files=len(files),
            extracted=written,
            point=exc.point,
        )
        return False
    sim.trace.op(
        SYSTEM,
        "push_memory",
        agent=vm.name,
        files=len(files),
        bytes=payload,
        chunks=chunks,
        tree_sha256=tree_sha256(files),
    )
    return True


def pull_memory(
    sim: Simulation, vm: GuestVM, attempts: int = PULL_ATTEMPTS, *, variant: Variant = FAITHFUL
) -> Bank:
    """Download the guest bank (MEM-OBJ-memory): regular files only, ``.memory/`` stripped, bytecode
    (``__pycache__``, ``.pyc``, ``.pyo``) skipped. A failed attempt backs off 15 s; after *attempts*
    failures it returns ``{}``, the same value as an empty bank. Off switch ``pull-off``: every pull
    returns ``{}``.
    Not modeled: the 15 s sleeps advance no simulation time (they are recorded in the trace).
    """
    if variant.has("pull-off"):
        sim.trace.op(SYSTEM, "pull_memory", agent=vm.name, phase="info", off=True)
        return {}
    for attempt in range(1, attempts + 1):
        try:
            vm.volume.point(sim, fp.PULL_ATTEMPT)
        except WriteFailed:
            sim.trace.op(
                SYSTEM, "pull_memory", agent=vm.name, phase="fail", attempt=attempt, backoff_s=PULL_BACKOFF_S
            )
            continue
        files = {n: d for n, d in vm.bank().items() if not pull_excluded(n)}
        sim.trace.op(SYSTEM, "pull_memory", agent=vm.name, attempt=attempt, files=len(files))
        return files
    sim.trace.op(SYSTEM, "pull_memory", agent=vm.name, phase="fail", gave_up=True, value="{}")
    return {}


def pull_terminal_memory(sim: Simulation, vm: GuestVM, *, variant: Variant = FAITHFUL) -> Bank:
    """Upstream ``_pull_terminal_memory`` (MEM-OBJ-memory, RT-RTE-learning-admission): a pull that tells a
    real empty bank from the ``{}`` failure value.

    Raises :class:`PracticeInfrastructureError` unless the types are ``str -> bytes``, every name is
    safe, the guest directory exists and the guest ``find -type f`` count (minus bytecode) equals the
    number of pulled files (so ``a__pycache__b`` is dropped by the pull but counted: infra).
    """
    files = pull_memory(sim, vm, variant=variant)
    if not all(isinstance(k, str) and isinstance(v, bytes) for k, v in files.items()):
        raise PracticeInfrastructureError("terminal memory pull returned bad types")
    bad = sorted(n for n in files if not safe_memory_name(n))
    if bad:
        raise PracticeInfrastructureError(f"unsafe memory names {bad}")
    if not vm.volume.isdir(vm.MEMORY):
        raise PracticeInfrastructureError("guest memory directory is missing")
    count = sum(1 for n in vm.bank() if find_counted(n))
    if count != len(files):
        sim.trace.op(
            SYSTEM, "pull_terminal_memory", agent=vm.name, phase="fail", guest=count, pulled=len(files)
        )
        raise PracticeInfrastructureError(f"guest holds {count} files, pull returned {len(files)}")
    sim.trace.op(SYSTEM, "pull_terminal_memory", agent=vm.name, files=len(files))
    return files
