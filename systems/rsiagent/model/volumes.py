"""Volumes: a file tree plus the directories that exist (``FileTree`` holds files only), the guest VM and
the host (MEM-OBJ-memory)."""

from __future__ import annotations

import hashlib
import json
import posixpath
from collections.abc import Callable, Mapping
from typing import Any

from sim.clock import AgentClock
from sim.engine import Simulation
from sim.files import FileTree
from sim.variant import FAITHFUL, Variant
from systems.rsiagent.model.common import SYSTEM
from systems.rsiagent.model.functions import manifest
from systems.rsiagent.state import (
    Bank,
    CommitRecord,
    JournalLine,
)


class Volume:
    """A :class:`sim.files.FileTree` plus the set of existing directories (an empty bank still exists).

    *observe*, when set, is called with the point name at every named fault point the model reaches on
    this volume, so a checker can read the tree at that instant (a concurrent reader).
    """

    def __init__(self, tree: FileTree, clock: AgentClock) -> None:
        self.tree = tree
        self.clock = clock
        self.dirs: set[str] = set()
        self.observe: Callable[[str], None] | None = None

    def point(self, sim: Simulation, name: str) -> None:
        """Reach fault point *name* (observers read first, then an armed fault fires)."""
        if self.observe is not None:
            self.observe(name)
        sim.faults.point(name)

    def mkdir(self, path: str) -> None:
        p = path.strip("/")
        while p:
            self.dirs.add(p)
            p = posixpath.dirname(p)

    def isdir(self, path: str) -> bool:
        return path in self.dirs or self.tree.is_dir(path)

    def write(self, path: str, data: bytes) -> None:
        self.tree.write_bytes(path, data, clock=self.clock.seconds)
        parent = posixpath.dirname(path)
        if parent not in self.dirs:
            self.mkdir(parent)

    def rmtree(self, path: str) -> None:
        self.tree.rmtree(path)
        self.dirs = {d for d in self.dirs if d != path and not d.startswith(path + "/")}

    def rename_dir(self, src: str, dst: str) -> None:
        self.tree.rename_dir(src, dst)
        moved = {d for d in self.dirs if d == src or d.startswith(src + "/")}
        self.dirs = (self.dirs - moved) | {dst + d[len(src) :] for d in moved}
        self.mkdir(dst)

    def read_tree(self, root: str) -> Bank:
        """Upstream ``_read_memory_tree``: a missing root gives ``{}``; a root that is a file raises
        :class:`NotADirectoryError`.
        Not modeled: symlink roots and symlinks inside the bank (_read_memory_tree raises on them): trees
        hold files."""
        if not self.isdir(root):
            if self.tree.exists(root):
                raise NotADirectoryError(f"memory root {root} is not a directory")
            return {}
        n = len(root) + 1
        return {p[n:]: self.tree.read_bytes(p) for p in self.tree.list(root)}

    def siblings(self, parent: str, prefix: str) -> list[str]:
        """Directories directly under *parent* whose name starts with *prefix*."""
        out = set()
        for d in self.dirs:
            if posixpath.dirname(d) == parent and posixpath.basename(d).startswith(prefix):
                out.add(d)
        return sorted(out)


class GuestVM:
    """One guest machine: ``~/.memory``, the handoff files and the project root on its own volume."""

    MEMORY = "home/user/.memory"
    NOTES = "home/user/curriculum_notes.md"
    DIAGNOSIS = "home/user/learning_diagnosis.md"
    PROJECT = "home/user/evolution_project"

    def __init__(self, sim: Simulation, name: str, kind: str = "memory") -> None:
        self.sim = sim
        self.name = name
        self.volume = Volume(sim.tree(kind, agent=name, subdir=f"vms/{name}"), sim.clock(name))

    def bank(self) -> Bank:
        """The guest bank as the guest sees it."""
        return self.volume.read_tree(self.MEMORY)

    def write_bank_file(self, name: str, data: bytes) -> None:
        """A guest-side edit of ``~/.memory/<name>`` (an Actor Program writing the bank)."""
        self.volume.write(f"{self.MEMORY}/{name}", data)

    def delete_bank_file(self, name: str) -> None:
        path = f"{self.MEMORY}/{name}"
        if self.volume.tree.exists(path):
            self.volume.tree.delete(path)


class Host:
    """The harness: the lineage root (canonical bank, journal, episodes, waves, checkpoints, state), the
    corpus and exam-fence grams, the target direction and the run state.

    *target* is the run's target direction; every learning audit authorizes it
    (``practice_loop.py:1696-1699``, ``_commit_branch_memory``), the ``_promote_learning`` route its
    audit surface with *visible_inputs* (:meth:`audit_surface`). *fence* holds the exam fence's
    instruction 8-grams (:func:`~systems.rsiagent.model.functions.fence_grams`), used by the text audits.
    """

    ROOT = "lineage"
    CANONICAL = "lineage/memory"
    JOURNAL = "lineage/memory_journal"
    CHECKPOINTS = "lineage/checkpoints"
    EPISODES = "lineage/episodes"
    WAVES = "lineage/waves"
    STATE = "lineage/state.json"
    REJECTS = "lineage/audit_rejects.jsonl"
    WAVE_STAGE = "lineage/wave_stage/memory"

    def __init__(
        self,
        sim: Simulation,
        *,
        kind: str = "memory",
        corpus: frozenset[str] = frozenset(),
        variant: Variant = FAITHFUL,
        agent: str = "host",
        target: str = "",
        visible_inputs: tuple[str, ...] = (),
        fence: frozenset[str] = frozenset(),
        checkpoint_projects: tuple[int, ...] = (),
        max_parallel: int = 4,
    ) -> None:
        self.sim = sim
        self.agent = agent
        self.volume = Volume(sim.tree(kind, agent=agent, subdir="host"), sim.clock(agent))
        self.volume.mkdir(self.CANONICAL)
        self.corpus = corpus
        self.variant = variant
        self.target = target
        self.visible_inputs = tuple(visible_inputs)
        self.fence = fence
        self.checkpoint_projects = tuple(sorted(set(checkpoint_projects)))
        self.max_parallel = max_parallel
        self.state = "running"
        self.reason = ""
        self.protocol = "practice"  # or "waves" (``evolve_parallel_phase1``)
        self.projects = 0
        self.waves = 0
        self.boundary_log: list[dict[str, Any]] = []
        self.notes = ""
        self.commits: list[CommitRecord] = []

    def canonical(self) -> Bank:
        return self.volume.read_tree(self.CANONICAL)

    def journal_lines(self) -> list[JournalLine]:
        return read_journal(self.volume, self.JOURNAL)

    def audit_surface(self, promote: bool = False) -> str:
        """The authorized text of a learning audit: the target direction; on the ``_promote_learning``
        route (*promote*) ``_target_audit_surface``: the target, then ``NORMAL TASK-VISIBLE INPUT PATHS:``
        and the visible input paths one per line, when there are any."""
        if promote and self.visible_inputs:
            return self.target + "\n\nNORMAL TASK-VISIBLE INPUT PATHS:\n" + "\n".join(self.visible_inputs)
        return self.target

    def write_json(self, path: str, payload: Mapping[str, Any]) -> None:
        """``_atomic_json``: indent 2, sorted keys, trailing newline (``practice_loop.py:262-280``).
        Not modeled: the mkstemp/replace/fsync dance of atomic JSON writes (one write here)."""
        self.volume.write(path, (json.dumps(payload, indent=2, sort_keys=True) + "\n").encode("utf-8"))

    def target_sha256(self) -> str:
        return hashlib.sha256(self.target.encode("utf-8")).hexdigest()

    def write_running_state(self) -> None:
        """The ``state.json`` written at a project's (practice) or a wave's end (``status: running``)."""
        payload: dict[str, Any] = {
            "schema_version": 1,
            "status": "running",
            "projects": self.projects,
            "last_project": self.projects,
            "target_sha256": self.target_sha256(),
            "memory_manifest": manifest(self.canonical()),
        }
        if self.protocol == "waves":
            payload.update(schema_version=2, waves=self.waves)
        self.write_json(self.STATE, payload)

    def finish(self, status: str, reason: str = "", terminal_text: str = "") -> None:
        """``finish()``: the ``state.json`` of every exit (``practice_loop.py:1292-1309``; waves: schema 2,
        ``phase1_wave.py`` ``finish``), quarantine and infra included."""
        self.state = status
        self.reason = reason
        payload: dict[str, Any] = {
            "schema_version": 1,
            "status": status,
            "projects": self.projects,
            "last_project": self.projects,
            "reason": reason,
            "terminal_text": terminal_text,
            "project_budget": None,
            "checkpoint_projects": list(self.checkpoint_projects),
            "target_sha256": self.target_sha256(),
            "memory_manifest": manifest(self.canonical()),
        }
        if self.protocol == "waves":
            payload.update(
                schema_version=2,
                waves=self.waves,
                phase1_parallel_waves=True,
                target_query_conditioned=False,
                max_parallel=self.max_parallel,
            )
        else:
            payload.update(phase1_exploration=False, phase1_target_conditioned=False)
        self.write_json(self.STATE, payload)
        self.sim.trace.op(SYSTEM, "finish", agent=self.agent, status=status, reason=reason)

    def quarantine(self, reason: str, **detail: Any) -> None:
        """End the whole run ``quarantined`` (a boundary error): ``finish("quarantined", reason)``. A memory
        rejection writes no ``boundary_audit.json`` (only transcript audits do)."""
        self.sim.trace.op(SYSTEM, "quarantine", agent=self.agent, phase="info", reason=reason, **detail)
        self.finish("quarantined", reason)


def read_journal(vol: Volume, root: str) -> list[JournalLine]:
    """The decoded ``journal.jsonl`` lines."""
    path = f"{root}/journal.jsonl"
    if not vol.tree.exists(path):
        return []
    out = []
    for raw in vol.tree.read_text(path).splitlines():
        d = json.loads(raw)
        meta = {k: v for k, v in d.items() if k not in ("episode", "files", "bytes", "ts")}
        out.append(JournalLine(d["episode"], d["files"], d["bytes"], d["ts"], meta))
    return out
