"""Drivers of the journal and install claims (MEM-OBJ-memory-journal, RT-RTE-learning-admission)."""

from __future__ import annotations

import contextlib
from typing import Any

from hypothesis import strategies as st

from sim.claims import Verdict
from sim.engine import Simulation
from sim.faults import Crash, WriteFailed
from sim.variant import Variant
from systems.rsiagent import faults as fp
from systems.rsiagent import properties as props
from systems.rsiagent.drivers.common import (
    CORPUS,
    NAMES,
    OTHER_TASK,
    arm,
    fact,
    new_host,
)
from systems.rsiagent.model import (
    Host,
    JournalConflict,
    admit,
    atomic_install_memory,
    audit_hits,
    read_archive,
    recover_install,
    write_memory,
)
from systems.rsiagent.state import Bank


# -- 2. repeated episode id overwrites the archive ---------------------------------------------------------
def _tree() -> Any:
    return st.dictionaries(st.sampled_from(NAMES), st.integers(1, 30), min_size=1, max_size=2)


def journal_ids_examples() -> Any:
    return st.fixed_dictionaries(
        {"cycles": st.lists(st.lists(_tree(), min_size=1, max_size=2), min_size=1, max_size=3)}
    )


def _archives(host: Host) -> dict[int, Bank]:
    out = {}
    for p in host.volume.tree.list(host.JOURNAL):
        name = p.rsplit("/", 1)[-1]
        if name.startswith("ep") and name.endswith(".tgz"):
            out[int(name[2:-4])] = read_archive(host.volume.tree.read_bytes(p))
    return out


def check_journal_ids(sim: Simulation, ex: dict[str, Any], variant: Variant) -> Verdict:
    """Every journaled tree stays recoverable from its archive (experience_index restarts per cycle)."""
    host = new_host(sim, variant)
    journaled: list[tuple[int, Bank]] = []
    for cycle in ex["cycles"]:
        for idx, tree in enumerate(cycle, start=1):
            files = {n: fact(v).encode() for n, v in tree.items()}
            try:
                admit(
                    sim,
                    host,
                    files,
                    episode=idx,
                    authorized=host.target,
                    meta={"kind": "unified-practice-project", "terminal_outcome": "PASS"},
                )
            except JournalConflict:
                break  # the fixed variant refuses the reused id; this commit does not happen
            journaled.append((idx, files))
    return props.check_journal_recoverable(journaled, _archives(host))


# -- 3. journal ahead of install ---------------------------------------------------------------------------
def journal_install_examples() -> Any:
    return st.fixed_dictionaries(
        {
            "commits": st.lists(_tree(), min_size=1, max_size=3),
            "fail": st.none() | st.tuples(st.sampled_from(["stage", "rename"]), st.integers(1, 3)),
        }
    )


def check_journal_install(sim: Simulation, ex: dict[str, Any], variant: Variant) -> Verdict:
    """Every journal.jsonl line describes a tree that was installed."""
    host = new_host(sim, variant)
    if ex["fail"]:
        point = fp.INSTALL_STAGE if ex["fail"][0] == "stage" else fp.INSTALL_RENAME
        arm(sim, [f"fail@{point}#{ex['fail'][1]}"])
    installed: list[Bank] = [host.canonical()]
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
    return props.check_journal_matches_installs(host.journal_lines(), _archives(host), installed)


# -- 10. the write_memory bypass ---------------------------------------------------------------------------
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
    keep = (host.CANONICAL + "/", host.JOURNAL + "/", "lineage/boundary_audit.json", "lineage/.")
    return [p for p in host.volume.tree.list() if not p.startswith(keep)]


def check_write_memory(sim: Simulation, ex: dict[str, Any], variant: Variant) -> Verdict:
    """A bank write is audited, journaled, stays inside the bank and is never left partial."""
    host = new_host(sim, variant)
    old = {"old.md": fact(500).encode()}
    atomic_install_memory(sim, host, old)
    files = {
        n: (fact(i) if kind == "fact" else OTHER_TASK).encode() for i, (n, kind) in enumerate(ex["files"])
    }
    if ex["crash"]:
        arm(sim, [f"crash@{fp.WRITE_MEMORY_EACH}#{ex['crash']}"])
    with contextlib.suppress(Crash):
        write_memory(sim, host, files)
    bank = host.canonical()
    if bank != old and bank != {n: d for n, d in files.items() if not n.startswith("..")}:
        return Verdict.violated(f"partial bank left: {sorted(bank)}")
    hits = [n for n, d in bank.items() if audit_hits(d, CORPUS, "")]
    return props.check_bank_admitted(bank, _outside(host), bool(host.journal_lines()), hits, bank != old)


# -- 12. the install window is visible as an empty bank ----------------------------------------------------
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
    bank; no backup is orphaned."""
    v = variant
    host = new_host(sim, v)
    old = {n: fact(10 + i).encode() for i, n in enumerate(ex["old"])}
    new = {n: fact(20 + i).encode() for i, n in enumerate(ex["new"])}
    if old:
        atomic_install_memory(sim, host, old)
    reads: list[tuple[str, Bank]] = []
    host.volume.observe = lambda point: reads.append((point, host.canonical()))
    if ex["crash"]:
        arm(sim, [f"crash@{ex['crash']}"])
    try:
        atomic_install_memory(sim, host, new)
    except Crash:
        host.volume.observe = None
        if v.has("exchange-install"):
            recover_install(sim, host)
    reads.append(("restart", host.canonical()))
    verdict = props.check_reads_old_or_new(reads, old, new)
    if not verdict.holds:
        return verdict
    orphans = host.volume.siblings("lineage", ".memory.backup-")
    return Verdict.violated(f"orphaned backup {orphans}") if orphans else Verdict.ok()
