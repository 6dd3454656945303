"""Volumes: a file tree plus the directories that exist (``FileTree`` holds files only), the guest VM and
the host (MEM-OBJ-memory)."""

from __future__ import annotations

import json
import posixpath
from collections.abc import Callable
from typing import Any

from sim.clock import AgentClock
from sim.engine import Simulation
from sim.files import FileTree
from sim.variant import FAITHFUL, Variant
from systems.rsiagent.model.common import SYSTEM
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
    """The harness: canonical bank, journal, checkpoints, corpus, boundary log and run state."""

    CANONICAL = "lineage/memory"
    JOURNAL = "lineage/memory_journal"
    CHECKPOINTS = "lineage/checkpoints"
    WAVE_STAGE = "lineage/wave_stage/memory"

    def __init__(
        self,
        sim: Simulation,
        *,
        kind: str = "memory",
        corpus: frozenset[str] = frozenset(),
        variant: Variant = FAITHFUL,
        agent: str = "host",
    ) -> None:
        self.sim = sim
        self.agent = agent
        self.volume = Volume(sim.tree(kind, agent=agent, subdir="host"), sim.clock(agent))
        self.volume.mkdir(self.CANONICAL)
        self.corpus = corpus
        self.variant = variant
        self.state = "running"
        self.boundary_log: list[dict[str, Any]] = []
        self.notes = ""
        self.commits: list[CommitRecord] = []
        self.wave_outcomes: list[dict[str, Any]] = []
        self.phase1_completed: int = 0

    def canonical(self) -> Bank:
        return self.volume.read_tree(self.CANONICAL)

    def journal_lines(self) -> list[JournalLine]:
        return read_journal(self.volume, self.JOURNAL)

    def quarantine(self, reason: str, **detail: Any) -> None:
        """End the whole run ``quarantined`` and write ``boundary_audit.json`` (mode 0600 upstream)."""
        self.state = "quarantined"
        entry = {"reason": reason, **detail, "ts": self.volume.clock.iso()}
        self.boundary_log.append(entry)
        self.volume.write(
            "lineage/boundary_audit.json", json.dumps(self.boundary_log, sort_keys=True).encode("utf-8")
        )
        self.sim.trace.op(SYSTEM, "quarantine", agent=self.agent, phase="info", reason=reason, **detail)


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
