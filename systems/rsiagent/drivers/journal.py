"""Drivers of the journal and install claims (MEM-OBJ-memory-journal, RT-RTE-learning-admission)."""

from __future__ import annotations

import contextlib
import posixpath
from typing import Annotated, Any, Literal

from hypothesis import strategies as st
from pydantic import Field
from typing_extensions import TypedDict

from sim.claims import Verdict
from sim.engine import Simulation
from sim.faults import Crash, WriteFailed
from sim.variant import Variant
from systems.rsiagent import faults as fp
from systems.rsiagent import properties as props
from systems.rsiagent.drivers.common import CORPUS, NAMES, OTHER_TASK, Name, arm, fact, new_host
from systems.rsiagent.model import (
    Host,
    PracticeInfrastructureError,
    UnsafeMemoryName,
    admit,
    atomic_install_memory,
    audit_hits,
    read_archive,
    read_journal,
    recover_install,
    safe_memory_name,
    write_memory,
)
from systems.rsiagent.state import Bank

Tree = Annotated[dict[Name, Annotated[int, Field(ge=1, le=30)]], Field(min_length=1, max_length=2)]


def _tree() -> Any:
    return st.dictionaries(st.sampled_from(NAMES), st.integers(1, 30), min_size=1, max_size=2)


def _archive(host: Host, root: str, episode: int) -> Bank | None:
    path = f"{root}/ep{episode:03d}.tgz"
    return read_archive(host.volume.tree.read_bytes(path)) if host.volume.tree.exists(path) else None


# -- 2. repeated episode id overwrites the archive (counterfactual: one journal for every cycle) -----------
class JournalIdsExample(TypedDict):
    """Unified evolution cycles, each a list of committed trees (experience_index restarts per cycle)."""

    cycles: Annotated[
        list[Annotated[list[Tree], Field(min_length=1, max_length=2)]], Field(min_length=1, max_length=3)
    ]


def journal_ids_examples() -> Any:
    return st.fixed_dictionaries(
        {"cycles": st.lists(st.lists(_tree(), min_size=1, max_size=2), min_size=1, max_size=3)}
    )


def cycle_journal(c: int, variant: Variant) -> str:
    """Cycle *c*'s journal directory: its own lineage root upstream (``evolve_until_ready(root=...)``);
    one shared journal under the ``shared-cycle-root`` counterfactual."""
    return (
        "lineage/memory_journal"
        if variant.has("shared-cycle-root")
        else f"unified/cycle_{c:03d}/memory_journal"
    )


def check_journal_ids(sim: Simulation, ex: dict[str, Any], variant: Variant) -> Verdict:
    """Every journaled tree stays recoverable from its cycle's archive, one journal line per commit."""
    host = new_host(sim, variant)
    journaled: list[tuple[str, int, Bank]] = []
    for c, cycle in enumerate(ex["cycles"], start=1):
        root = cycle_journal(c, variant)
        for idx, tree in enumerate(cycle, start=1):
            files = {n: fact(100 * c + v).encode() for n, v in tree.items()}
            admit(
                sim,
                host,
                files,
                episode=idx,
                authorized=host.target,
                meta={"kind": "unified-practice-project", "terminal_outcome": "PASS"},
                journal_root=root,
            )
            journaled.append((root, idx, files))
    archives = {}
    for root, idx, _ in journaled:
        got = _archive(host, root, idx)
        if got is not None:
            archives[(root, idx)] = got
    lines = {root: len(read_journal(host.volume, root)) for root, _, _ in journaled}
    return props.check_journal_recoverable(journaled, archives, lines)


# -- 3. journal ahead of install ---------------------------------------------------------------------------
class JournalInstallExample(TypedDict):
    """Committed trees and an optional failing install step (stage or rename, at its n-th reach)."""

    commits: Annotated[list[Tree], Field(min_length=1, max_length=3)]
    fail: tuple[Literal["stage", "rename"], Annotated[int, Field(ge=1, le=3)]] | None


def journal_install_examples() -> Any:
    return st.fixed_dictionaries(
        {
            "commits": st.lists(_tree(), min_size=1, max_size=3),
            "fail": st.none() | st.tuples(st.sampled_from(["stage", "rename"]), st.integers(1, 3)),
        }
    )


def check_journal_install(sim: Simulation, ex: dict[str, Any], variant: Variant) -> Verdict:
    """The journal describes exactly the trees installed, in order."""
    host = new_host(sim, variant)
    if ex["fail"]:
        point = fp.INSTALL_STAGE if ex["fail"][0] == "stage" else fp.INSTALL_RENAME
        arm(sim, [f"fail@{point}#{ex['fail'][1]}"])
    installed: list[Bank] = []
    for ep, tree in enumerate(ex["commits"], start=1):
        files = {n: fact(v).encode() for n, v in tree.items()}
        try:
            admit(
                sim,
                host,
                files,
                episode=ep,
                authorized=host.target,
                meta={"kind": "practice-terminal-memory", "terminal_outcome": "PASS"},
            )
        except WriteFailed:
            break  # the install raised: the run ends infra
        installed.append(host.canonical())
    journaled = [_archive(host, host.JOURNAL, line.episode) or {} for line in host.journal_lines()]
    return props.check_journal_matches_installs(journaled, installed)


# -- 10. the write_memory bypass ---------------------------------------------------------------------------
WriteName = Literal["a.md", "sub/b.md", "../x.md", "../../../y.md"]


class WriteMemoryExample(TypedDict):
    """The written files (name, ordinary fact or a leak of another task) and an optional crash before the
    n-th file."""

    files: Annotated[list[tuple[WriteName, Literal["fact", "leak"]]], Field(max_length=3)]
    crash: Annotated[int, Field(ge=1, le=3)] | None


def write_memory_examples() -> Any:
    return st.fixed_dictionaries(
        {
            "files": st.lists(
                st.tuples(
                    st.sampled_from(["a.md", "sub/b.md", "../x.md", "../../../y.md"]),
                    st.sampled_from(["fact", "leak"]),
                ),
                max_size=3,
            ),
            "crash": st.none() | st.integers(1, 3),
        }
    )


def _outside(host: Host) -> list[str]:
    """Every write that landed outside the bank: files beside it in the host tree, and the resolved targets
    of writes that left the tree's root (recorded by the sandbox, never made)."""
    keep = (host.CANONICAL + "/", host.JOURNAL + "/", host.REJECTS, host.STATE, "lineage/.")
    beside = [p for p in host.volume.tree.list() if not p.startswith(keep)]
    return beside + [f"{t} (outside the root)" for t in sorted(host.volume.tree.outside)]


def check_write_memory(sim: Simulation, ex: dict[str, Any], variant: Variant) -> Verdict:
    """A direct bank write installs exactly an admissible candidate and journals it (no episode
    overwritten), refuses an inadmissible one, stays inside the bank and is never left partial."""
    host = new_host(sim, variant)
    old = {"old.md": fact(500).encode()}
    admit(sim, host, old, episode=1, authorized=host.target, meta={"kind": "practice-terminal-memory"})
    files = {
        n: (fact(i) if kind == "fact" else OTHER_TASK).encode() for i, (n, kind) in enumerate(ex["files"])
    }
    if ex["crash"]:
        arm(sim, [f"crash@{fp.WRITE_MEMORY_EACH}#{ex['crash']}"])
    with contextlib.suppress(Crash, PracticeInfrastructureError):
        write_memory(sim, host, files)
    bank = host.canonical()
    safe = all(safe_memory_name(n) and not posixpath.normpath(n).startswith("..") for n in files)
    admissible = safe and not any(audit_hits(d, CORPUS, host.target) for d in files.values())
    journaled = []
    for line in host.journal_lines():
        archive = _archive(host, host.JOURNAL, line.episode)
        journaled.append(archive if archive is not None else {})
    if journaled[:1] != [old]:
        return Verdict.violated(f"journal line 1 (ep001) no longer holds its tree: {sorted(journaled[0])}")
    return props.check_bank_written(files, admissible, bank, old, _outside(host), journaled[1:])


# -- 10b. a memory name escapes the bank ------------------------------------------------------------------
EscapeName = Literal["a.md", "sub/b.md", "./c.md", "../../../z.md", "../x.md", "/tmp/z.md"]
ESCAPE_NAMES: tuple[str, ...] = ("a.md", "sub/b.md", "./c.md", "../../../z.md", "../x.md", "/tmp/z.md")


class WriteEscapeExample(TypedDict):
    """The names of one direct memory write (each file holds an ordinary fact): inside the bank, beside it
    (``../x.md``), above the run root (``../../../z.md``) or absolute."""

    names: Annotated[list[EscapeName], Field(min_length=1, max_length=3)]


def write_escape_examples() -> Any:
    return st.fixed_dictionaries({"names": st.lists(st.sampled_from(ESCAPE_NAMES), min_size=1, max_size=3)})


def check_write_escape(sim: Simulation, ex: dict[str, Any], variant: Variant) -> Verdict:
    """A direct memory write stays inside the bank: safe names are all written, an unsafe name refuses the
    whole write, and nothing lands beside the bank or outside the run root."""
    host = new_host(sim, variant)
    old = {"old.md": fact(500).encode()}
    admit(sim, host, old, episode=1, authorized=host.target, meta={"kind": "practice-terminal-memory"})
    files = {n: fact(i).encode() for i, n in enumerate(ex["names"])}
    with contextlib.suppress(UnsafeMemoryName):
        write_memory(sim, host, files)
    safe = all(safe_memory_name(n) for n in files)
    expected = {posixpath.normpath(n): data for n, data in files.items()}  # how the bank names ./c.md
    return props.check_memory_names_confined(expected, safe, host.canonical(), old, _outside(host))


# -- 12. the install window is visible as an empty bank ----------------------------------------------------
InstallPoint = Literal[
    "rsiagent.atomic_install_memory.stage",
    "rsiagent.atomic_install_memory.after_fsync",
    "rsiagent.atomic_install_memory.between_renames",
    "rsiagent.atomic_install_memory.rename",
    "rsiagent.atomic_install_memory.after_rename",
]


class InstallWindowExample(TypedDict):
    """The old and new banks' files and an optional crash point inside the install."""

    old: Annotated[list[Name], Field(max_length=2)]
    new: Annotated[list[Name], Field(max_length=2)]
    crash: InstallPoint | None


def install_window_examples() -> Any:
    return st.fixed_dictionaries(
        {
            "old": st.lists(st.sampled_from(NAMES), max_size=2, unique=True),
            "new": st.lists(st.sampled_from(NAMES), max_size=2, unique=True),
            "crash": st.none() | st.sampled_from(list(fp.INSTALL_POINTS)),
        }
    )


def check_install_window(sim: Simulation, ex: dict[str, Any], variant: Variant) -> Verdict:
    """Every read during an install, and the first read after a crash and restart, sees the old or the new
    bank; a completed install leaves the new bank; no backup is orphaned."""
    host = new_host(sim, variant)
    old = {n: fact(10 + i).encode() for i, n in enumerate(ex["old"])}
    new = {n: fact(20 + i).encode() for i, n in enumerate(ex["new"])}
    if old:
        host.volume.mkdir(host.CANONICAL)
        for n, d in old.items():  # the previous bank (setup, not under test)
            host.volume.write(f"{host.CANONICAL}/{n}", d)
    reads: list[tuple[str, Bank]] = []
    host.volume.observe = lambda point: reads.append((point, host.canonical()))
    if ex["crash"]:
        arm(sim, [f"crash@{ex['crash']}"])
    crashed = False
    try:
        atomic_install_memory(sim, host, new)
    except Crash:
        crashed = True
        host.volume.observe = None
        if variant.has("exchange-install"):
            recover_install(sim, host)
    reads.append(("restart", host.canonical()))
    verdict = props.check_reads_old_or_new(reads, old, new)
    if not verdict.holds:
        return verdict
    orphans = host.volume.siblings("lineage", ".memory.backup-")
    if crashed:
        return Verdict.violated(f"orphaned backup {orphans}") if orphans else Verdict.ok()
    return props.check_installed(host.canonical(), new, orphans)
