"""Run deletion and unload (``env/web/runner.py``, MEM-RTE-run-withdrawal)."""

from __future__ import annotations

from typing import Any

from sim.engine import Simulation
from sim.faults import WriteFailed
from sim.files import FileTree
from systems.merchantbench import faults as fp
from systems.merchantbench.model.constants import SYSTEM
from systems.merchantbench.model.server import MerchantEnv
from systems.merchantbench.state import HttpError


class RunRegistry:
    """The runner's registry of runs: in-memory runtimes (``env`` per run) over one run tree.

    Not modeled: worker threads and the bootstrap process (a run is either stopping cleanly or
    ``stuck``), database leases and ``PRAGMA wal_checkpoint``.
    """

    def __init__(self, sim: Simulation, tree: FileTree, runs_root: str = "runs") -> None:
        self.sim = sim
        self.tree = tree
        self.runs_root = runs_root
        self.envs: dict[str, MerchantEnv] = {}
        self.status: dict[str, str] = {}
        self.stuck: set[str] = set()
        self._deleting: set[str] = set()

    def create_run(self, run_id: str, **kw: Any) -> MerchantEnv:
        """Start a run: its env and its ``state.db`` marker under ``<runs_root>/<run_id>/``."""
        env = MerchantEnv(self.sim, self.tree, run_id=run_id, runs_root=self.runs_root, **kw)
        self.tree.write_bytes(f"{self.runs_root}/{run_id}/state.db", b"SQLite format 3\x00")
        self.envs[run_id] = env
        self.status[run_id] = "running"
        return env

    def add_agent(self, run_id: str, agent_id: str) -> None:
        """``RunRegistry.add_agent``: any id is accepted."""
        self.env(run_id).agents.append(agent_id)

    def finish(self, run_id: str) -> None:
        """Mark the run finished (terminal)."""
        self.status[run_id] = "finished"

    def env(self, run_id: str) -> MerchantEnv:
        """The loaded runtime; raises :class:`HttpError` 410 when unloaded or deleted (no rehydrate)."""
        env = self.envs.get(run_id)
        if env is None:
            raise HttpError(410, "run_not_loaded")
        return env

    def _run_dir(self, run_id: str) -> str:
        if not run_id or "/" in run_id or "\\" in run_id or run_id in (".", ".."):
            raise ValueError(f"run path escapes runs_root: {run_id!r}")
        return f"{self.runs_root}/{run_id}"

    def delete_run(self, run_id: str) -> dict[str, Any]:
        """``delete_run`` (MEM-RTE-run-withdrawal): stop the worker, drop in-memory state, remove the whole
        run directory (documents, histories, traces, ``hermes_home`` together; 12 attempts). Raises
        ValueError when the path escapes."""
        d = self._run_dir(run_id)
        if not (self.tree.exists(f"{d}/state.db") or self.tree.is_dir(f"{d}/agent")):
            return {"deleted": False, "reason": "not found"}
        if run_id in self._deleting:
            return {"deleted": False, "reason": "already deleting"}
        self._deleting.add(run_id)
        try:
            if run_id in self.stuck:
                self.sim.trace.op(SYSTEM, "delete_run", phase="fail", run_id=run_id, reason="busy")
                return {"deleted": False, "reason": "worker is still stopping", "status": "busy"}
            env = self.envs.pop(run_id, None)
            if env is not None:
                env.unloaded = True
            self.status[run_id] = "stopped"
            last = ""
            for _attempt in range(12):
                try:
                    self.sim.faults.point(fp.DELETE_RUN_RMTREE)
                    self.tree.rmtree(d)
                    break
                except WriteFailed as exc:
                    last = str(exc)
            else:
                self.sim.trace.op(SYSTEM, "delete_run", phase="fail", run_id=run_id, reason=last)
                return {
                    "deleted": False,
                    "reason": f"failed to remove run directory: {last}",
                    "status": "error",
                }
            self.sim.trace.op(SYSTEM, "delete_run", run_id=run_id)
            return {"deleted": True, "run_id": run_id}
        finally:
            self._deleting.discard(run_id)

    def release_terminal_runtime(self, run_id: str) -> bool:
        """Unload (MEM-RTE-run-withdrawal): drop only the in-memory runtime of a finished or stopped run;
        files remain, and observation and ``/act`` return 410 afterwards."""
        if self.status.get(run_id) not in ("finished", "stopped"):
            return False
        env = self.envs.pop(run_id, None)
        if env is None:
            return False
        env.unloaded = True
        self.sim.trace.op(SYSTEM, "release_terminal_runtime", run_id=run_id)
        return True
