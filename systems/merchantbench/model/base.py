"""What the env server's services (memory tools, step traces, ``/act``) share: one run's state."""

from __future__ import annotations

from sim.clock import AgentClock
from sim.engine import Simulation
from sim.files import FileTree
from sim.variant import Variant


class RunState:
    """The attributes :class:`~systems.merchantbench.model.MerchantEnv` sets and its services read: the
    simulation, the run's file tree and directory, the variant, the env tick ``t``, the env server's
    modeled wall clock (``sim.clock("server")``)."""

    sim: Simulation
    tree: FileTree
    variant: Variant
    t: int
    runs_root: str
    run_id: str
    casefold_paths: bool
    server_clock: AgentClock

    @property
    def run_dir(self) -> str:
        """``<runs_root>/<run_id>``."""
        return f"{self.runs_root}/{self.run_id}"

    def _server_ms(self) -> int:
        """The env server's wall clock in ms (``int(time.time()*1000)`` in the server process)."""
        return self.server_clock.ms()
