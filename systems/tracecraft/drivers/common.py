"""What every Tracecraft claim driver shares: the world it runs in, and small helpers over a run.

A driver is ``check(sim, example, variant, world=MODEL) -> Verdict``: it builds the system in *world*,
runs the example's operations and checks a property of :mod:`systems.tracecraft.properties`. The
:class:`ModelWorld` is memsim's model on the in-memory store; :mod:`systems.tracecraft.transfer` passes a
world that runs the same operations on the real ``tracecraft`` CLI (one process per command) against a
moto server, so one driver checks the model and the real system with the same property.

Strategies are shaped so that the quick profile (40 examples) finds every counterexample and each example
is cheap to draw: an op sequence draws each op from a small alphabet of complete commands (one choice per
op, ``sampled_from``), host writes are numbered lines (only their bytes and order matter), and independent
parameters are drawn as tuples (:func:`record`) so that a small space is searched exhaustively.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any, Protocol

from hypothesis import strategies as st

from sim.engine import Simulation
from sim.faults import Crash, FaultPlan
from sim.files import FileTree, MemoryTree
from sim.objects import MemoryStore, ObjectStore, PreconditionFailed
from systems.tracecraft.model import FileTailHarness, Tracecraft
from systems.tracecraft.protocol import PART_RE, TracecraftError

#: What a failed command raises: a CLI error, a crash at a fault point, a lost conditional put.
ERRORS = (TracecraftError, Crash, PreconditionFailed)
Gen = Generator[Any, Any, Any]


class World(Protocol):
    """Where a driver runs: the model (:data:`MODEL`) or the real CLI (``transfer.RealWorld``)."""

    def store(self) -> ObjectStore:
        """A fresh bucket."""
        ...

    def system(self, sim: Simulation, store: ObjectStore, **kw: Any) -> Tracecraft:
        """One project on *store* (``Tracecraft``'s keyword arguments)."""
        ...

    def tree(self, mtime: Any = None) -> FileTree:
        """A fresh host home directory."""
        ...

    def harness(self, name: str, tree: FileTree) -> FileTailHarness:
        """A file-tail harness *name* on the host home *tree*."""
        ...


class ModelWorld:
    """memsim's model on the in-memory object store."""

    name = "model"

    def store(self) -> ObjectStore:
        return MemoryStore()

    def system(self, sim: Simulation, store: ObjectStore, **kw: Any) -> Tracecraft:
        return Tracecraft(sim, store, **kw)

    def tree(self, mtime: Any = None) -> FileTree:
        return MemoryTree(mtime=mtime)

    def harness(self, name: str, tree: FileTree) -> FileTailHarness:
        return FileTailHarness(name, tree)


MODEL: World = ModelWorld()


def system(world: World, sim: Simulation, variant: Any, **kw: Any) -> Tracecraft:
    """One project on a fresh bucket of *world*, as *variant*."""
    return world.system(sim, world.store(), variant=variant, **kw)


def attempt(client: Any, gen: Gen) -> tuple[bool, Any]:
    """Run one command; (True, result) or (False, error text)."""
    try:
        return True, client.call(gen)
    except ERRORS as exc:
        return False, str(exc)


def background(sim: Simulation, gen: Gen, out: dict[Any, Any], tag: Any, delay: float = 0.0) -> None:
    """Start *gen* as a process after *delay*; record (ok, result) in out[tag]."""

    def proc() -> Gen:
        if delay:
            yield sim.timeout(delay)
        try:
            out[tag] = (True, (yield from gen))
        except ERRORS as exc:
            out[tag] = (False, str(exc))

    sim.process(proc())


def advance(sim: Simulation, seconds: float) -> None:
    """Run the simulation *seconds* further (no-op for 0)."""
    if seconds > 0:
        sim.run(until=sim.now + seconds)


def arm(sim: Simulation, specs: list[str]) -> None:
    """Arm the fault specs *specs* for this run."""
    sim.faults = FaultPlan.parse(specs)


def record(fields: dict[str, Any]) -> Any:
    """A dict of independent draws, drawn as a tuple: a small finite space is searched exhaustively
    (Hypothesis stops when every choice has been tried; ``fixed_dictionaries`` never reports exhaustion)."""
    keys = list(fields)
    return st.tuples(*fields.values()).map(lambda values: dict(zip(keys, values, strict=True)))


# -- host session files ----------------------------------------------------------------------------
def line(n: int) -> str:
    """The n-th JSONL line a host writes: distinct per write, lengths vary (only bytes and order matter)."""
    return '{"n":' + str(n) + ',"t":"' + "xyz"[: n % 4] + '"}\n'


def host(world: World, sim: Simulation, tc: Tracecraft, harness: str = "claude-code") -> tuple[Any, Any]:
    """The host agent (its home holds the session files and the mirror state) and its harness."""
    home = world.tree(mtime=sim.clock("host").seconds)
    return tc.agent("host", home=home), world.harness(harness, home)


def listed_parts(keys: list[str]) -> list[tuple[int, str, str]]:
    """(seq, uuid, key) of the part objects in a session listing, as upstream's show sees them."""
    out = []
    for k in keys:
        name = k.rsplit("/", 1)[-1]
        m = PART_RE.search(name)
        if m:
            out.append((int(m.group(1)), name[-len("12345678.jsonl") : -len(".jsonl")], k))
    return out


def write(h: FileTailHarness, sid: str, data: bytes) -> None:
    """The host appends *data* to session *sid*."""
    h.tree.append_bytes(h.session_path(sid), data)


def source(h: FileTailHarness, sid: str) -> bytes:
    """Session *sid*'s whole source file (empty when absent)."""
    p = h.session_path(sid)
    return h.tree.read_bytes(p) if h.tree.exists(p) else b""
