"""The shared client core: one loaded CLI configuration, its plumbing and the direct backend API.

Every service module (memory, mail, steps, artifacts, mirror, sessions, agents, status) adds commands to
:class:`ClientCore`; :class:`~systems.tracecraft.model.client.Client` composes them, as moto splits a
service into its parts. Every store round trip first waits ``latency`` simulated seconds (:meth:`_rt`),
which is where concurrent commands interleave.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import TYPE_CHECKING, Any, Protocol

from sim.files import FileTree, MemoryTree
from systems.tracecraft.protocol import TracecraftError

if TYPE_CHECKING:
    from sim.engine import Simulation
    from sim.variant import Variant
    from systems.tracecraft.model.bucket import Bucket

SYSTEM = "tracecraft"
WAIT_POLL_S = 5  # wait-for polls every 5 s
LEASE_S = 600  # claim lease of the claim-lease fix (seconds)
HF_SETTLE_S = 5.0  # hf-verify-claim: the wait between the claim write and its read-back (> any write delay)

Gen = Generator[Any, Any, Any]


class Project(Protocol):
    """What a client's core reads of its project (:class:`~systems.tracecraft.model.client.Tracecraft`,
    which assembles the client from the services): the services are typed against this, never against the
    module that imports them (issue 41)."""

    sim: Simulation
    variant: Variant
    bucket: Bucket
    bucket_name: str
    project: str
    backend: str
    seen_cap: int
    latency: float


class ClientCore:
    """One loaded config (``TRACECRAFT_AGENT`` = *agent_id*): the CLI commands as SimPy generators.

    Output lines go to :attr:`stdout` and :attr:`stderr` as they are printed (a crash after printing
    keeps them), with upstream's texts and channels: receipts, "nothing new: …", "No new messages." and
    the protection summary on stdout; only the empty line of a missing ``memory get``, "No history for
    K.", the ``--delete`` deprecation warning, wait-for's progress lines and the HF claim warning on
    stderr (fidelity note, Corrections 7). An error exit raises :class:`TracecraftError` with click's
    message (upstream prints it as ``Error: …`` on stderr).
    """

    def __init__(self, tc: Project, agent_id: str, *, home: FileTree | None = None, reader: str = "") -> None:
        self.tc = tc
        self.sim = tc.sim
        self.agent_id = agent_id
        self.home = home if home is not None else MemoryTree()
        self.reader = reader or agent_id
        self.clock = tc.sim.clock(agent_id)
        self.stdout: list[str] = []
        self.stderr: list[str] = []
        self.latency: float | None = None
        self.cursor_pause = 0.0  # seconds a reader stays suspended between display and cursor write
        self.variant = tc.variant
        self.b = tc.bucket

    # -- plumbing ---------------------------------------------------------------------------------
    def call(self, command: Gen) -> Any:
        """Run one command to completion (other scheduled processes advance too) and return its result."""
        try:  # fast path: a command that never waits (zero latency) finishes without a SimPy step
            first = next(command)
        except StopIteration as stop:
            return stop.value

        def resume() -> Gen:
            value = yield first
            while True:
                try:
                    event = command.send(value)
                except StopIteration as stop:
                    return stop.value
                value = yield event

        proc = self.sim.process(resume())
        self.sim.run(until=proc)
        return proc.value

    def _rt(self) -> Gen:
        """One store round trip's latency (the client's own, else the system's); nothing when zero."""
        lat = self.tc.latency if self.latency is None else self.latency
        if lat > 0:
            yield self.sim.timeout(lat)

    def _op(self, op: str, phase: str = "ok", **detail: Any) -> None:
        self.sim.trace.op(SYSTEM, op, agent=self.agent_id, phase=phase, **detail)

    def _hex(self) -> str:
        return self.sim.streams.hex(f"tracecraft.uuid.{self.agent_id}", 8)

    def _print(self, text: str) -> None:
        """``click.echo(text)``: one stdout line per line of *text*."""
        self.stdout.extend(text.split("\n"))

    def _eprint(self, text: str) -> None:
        """``click.echo(text, err=True)``."""
        self.stderr.extend(text.split("\n"))

    def _command(self) -> Gen:
        """Config load: the validate-agent fix checks the id; heartbeat-refresh refreshes registration."""
        if self.variant.has("agent-ids-refused"):
            raise TracecraftError(f"Agent id {self.agent_id!r} refused")
        if self.variant.has("validate-agent"):
            validate_recipient(self.agent_id, what="Agent id")
        if self.variant.has("heartbeat-refresh"):
            yield from self._rt()
            doc = self.b.get_json(f"agents/{self.agent_id}.json") or self._registration()
            doc["heartbeat"] = self.clock.iso()
            yield from self._rt()
            self.b.put_json(f"agents/{self.agent_id}.json", doc)

    def _registration(self) -> dict[str, Any]:
        now = self.clock.iso()
        return {
            "id": self.agent_id,
            "status": "active",
            "step": None,
            "started_at": now,
            "heartbeat": now,
            "summary": "Initialized",
        }

    # -- direct backend API (bypasses CLI validation, snapshots and redaction) -----------------------
    def store_put_json(self, key: str, doc: Any) -> Gen:
        """(RT-CMP-get-store) ``get_store().put_json``: a direct write, no CLI checks."""
        yield from self._rt()
        self.b.put_json(key, doc)
        self._op("store_put_json", key=key)

    def store_delete(self, key: str) -> Gen:
        """(RT-CMP-get-store, MEM-CLM-history-immutability) ``get_store().delete``: a direct delete."""
        yield from self._rt()
        self.b.delete(key)
        self._op("store_delete", key=key)


def validate_recipient(recipient: str, *, what: str = "Recipient") -> str:
    """Stripped, non-empty, no ``/``, ``_`` only for ``_broadcast``; raises :class:`TracecraftError`
    with upstream's messages (*what* names the value: the validate-agent fix passes ``"Agent id"``)."""
    r = recipient.strip()
    if not r:
        raise TracecraftError(f"{what} cannot be empty")
    if "/" in r:
        raise TracecraftError(f"{what} may not contain '/'")
    if r.startswith("_") and r != "_broadcast":
        raise TracecraftError(f"{what} names starting with '_' are reserved ('_broadcast' broadcasts to all)")
    return r


def validate_memory_key(key: str) -> None:
    """Reject a blank key, any ``/``, and ``_history`` / ``_history.*``; raises :class:`TracecraftError`."""
    if not key.strip():
        raise TracecraftError("Key cannot be empty")
    if "/" in key:
        raise TracecraftError("Memory keys use dots as separators; '/' is not allowed")
    if key == "_history" or key.startswith("_history."):
        raise TracecraftError("The '_history' key namespace is reserved for version snapshots")
