"""The system and its client: :class:`Tracecraft` (one project in one bucket) and :class:`Client`."""

from __future__ import annotations

from sim.engine import Simulation
from sim.files import FileTree
from sim.objects import ObjectStore
from sim.variant import FAITHFUL, Variant
from systems.tracecraft.model.artifacts import ArtifactsService
from systems.tracecraft.model.bucket import Bucket
from systems.tracecraft.model.mail import MailService
from systems.tracecraft.model.memory import MemoryService
from systems.tracecraft.model.status import StatusService
from systems.tracecraft.protocol import SEEN_CAP


class Tracecraft:
    """One Tracecraft project on an object store, with the variant's fixes switched on.

    *seen_cap* is the cursor's SEEN_CAP (1,000 upstream; claims pass smaller values to stay cheap).
    *latency* is the simulated seconds of every store round trip.
    """

    def __init__(
        self,
        sim: Simulation,
        store: ObjectStore,
        *,
        project: str = "proj",
        backend: str = "s3",
        bucket_name: str = "bucket",
        variant: Variant = FAITHFUL,
        seen_cap: int = SEEN_CAP,
        latency: float = 0.0,
    ) -> None:
        self.sim = sim
        self.variant = variant
        self.bucket = Bucket(store, project, backend, worm=variant.has("history-worm"))
        self.bucket_name = bucket_name
        self.project = project
        self.backend = backend
        self.seen_cap = seen_cap
        self.latency = latency

    def agent(self, agent_id: str, *, home: FileTree | None = None, reader: str = "") -> Client:
        """A CLI configuration for *agent_id* on a host whose home directory is *home*."""
        return Client(self, agent_id, home=home, reader=reader)

    @property
    def store(self) -> ObjectStore:
        return self.bucket.store


class Client(MemoryService, MailService, ArtifactsService, StatusService):
    """One loaded config (``TRACECRAFT_AGENT`` = *agent_id*): every CLI command as a SimPy generator.

    The commands live in one module per service (:mod:`.memory`, :mod:`.mail`, :mod:`.steps`,
    :mod:`.artifacts`, :mod:`.mirror`, :mod:`.sessions`, :mod:`.agents`, :mod:`.status`) over the shared
    :class:`~systems.tracecraft.model.core.ClientCore`.
    """
