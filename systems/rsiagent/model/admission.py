"""Admission of a terminal candidate (RT-RTE-learning-admission, MEM-OBJ-memory-journal): the silent
audit, the journal, the staged install and the direct ``write_memory`` API.

Not modeled: the exam fence's audits of agent transcripts (``boundary_audit.json``), prompts, handoffs
and captured project trees (``_audit_agent_artifacts``, ``_audit_prompt``, ``audit_captured_materials``):
only the bank's silent audit and the curriculum notes' ``audit_text`` run.
"""

from __future__ import annotations

import hashlib
import json
import posixpath
import re
from collections.abc import Iterable, Mapping
from typing import Any

from sim.engine import Simulation
from sim.faults import Crash, WriteFailed
from sim.files import escape_target
from systems.rsiagent import faults as fp
from systems.rsiagent.model.common import (
    SYSTEM,
    PracticeInfrastructureError,
    UnsafeMemoryName,
)
from systems.rsiagent.model.functions import (
    audit_hits,
    journal_archive,
    memory_path,
    safe_memory_name,
    shingles,
    silent_audit,
    tree_sha256,
)
from systems.rsiagent.model.volumes import Host, Volume
from systems.rsiagent.state import (
    Bank,
    InstallReceipt,
    JournalLine,
    WriteMemoryResult,
)


def require_corpus(corpus: frozenset[str] | None) -> frozenset[str]:
    """``require_corpus=True``: a missing or empty corpus raises (every learning call passes True)."""
    if not corpus:
        raise PracticeInfrastructureError("instruction corpus is missing or empty")
    return corpus


def validate_instruction_corpus(
    raw: bytes, sidecar: Mapping[str, Any], expected_count: int = 108
) -> frozenset[str]:
    """Upstream ``validate_instruction_corpus`` (``explore/commit.py:196-224``): the sidecar manifest must
    match exactly and the corpus must be a non-empty, sorted, unique list of non-empty strings; raises
    ValueError."""
    data = json.loads(raw.decode("utf-8"))
    want = {
        "schema_version": 2,
        "benchmark": "OSWorld-V2",
        "evaluation_version": "v2",
        "normalization": "strip-dynamic-overleaf-credentials-v1",
        "instruction_count": expected_count,
        "shingle_count": len(data) if isinstance(data, list) else -1,
        "corpus_sha256": hashlib.sha256(raw).hexdigest(),
    }
    if set(sidecar) != {*want, "absent_task_ids"} or not isinstance(sidecar.get("absent_task_ids"), list):
        raise ValueError("corpus manifest has the wrong keys")
    for k, v in want.items():
        if sidecar[k] != v:
            raise ValueError(f"corpus manifest {k} mismatch")
    if not isinstance(data, list) or not data or not all(isinstance(s, str) and s for s in data):
        raise ValueError("corpus must be a non-empty list of non-empty strings")
    if data != sorted(set(data)):
        raise ValueError("corpus must be sorted and unique")
    return frozenset(data)


#: ``_DYNAMIC_OVERLEAF_CREDENTIALS`` (``explore/commit.py:160-164``): the labelled, run-generated block.
OVERLEAF_CREDENTIALS = re.compile(
    r"(?:\r?\n)*Overleaf login credentials\s*[-—]\s*Email:[^\r\n]*?\s+Password:[^\r\n]*(?:\r?\n)*",
    re.IGNORECASE,
)


def normalize_instruction_for_corpus(instruction: str) -> str:
    """Upstream ``normalize_instruction_for_corpus`` (``explore/commit.py:172-183``): remove only the
    labelled ``Overleaf login credentials — Email: … Password: …`` block, label included, replaced by a
    blank line and right-stripped; every other instruction is returned byte for byte."""
    if not OVERLEAF_CREDENTIALS.search(instruction):
        return instruction
    return OVERLEAF_CREDENTIALS.sub("\n\n", instruction).rstrip()


def build_corpus(instructions: Iterable[str]) -> frozenset[str]:
    """Upstream ``build_corpus`` (``explore/commit.py:186-193``): the 8-word shingles of every instruction
    as given (normalizing is the corpus builder's job: :func:`normalize_instruction_for_corpus`)."""
    out: set[str] = set()
    for text in instructions:
        out |= shingles(text)
    return frozenset(out)


def audit_candidate(
    sim: Simulation, host: Host, files: Mapping[str, bytes], authorized: str
) -> tuple[dict[str, bytes], list[str]]:
    """The host's silent audit of a terminal candidate (RT-RTE-learning-admission; ``silent_audit(...,
    require_corpus=True)``): appends ``{file, hits: sorted[:3], ts: "%H:%M:%S"}`` per rejected file to
    ``audit_rejects.jsonl`` beside the canonical bank (``commit.py:261-265``) and gives the Actor no
    feedback."""
    corpus = require_corpus(host.corpus)
    accepted, rejected = silent_audit(files, corpus, authorized)
    clock = host.volume.clock
    for name in rejected:
        hits = audit_hits(files[name], corpus, authorized)[:3]
        entry = {"file": name, "hits": hits, "ts": clock.datetime().strftime("%H:%M:%S")}
        host.boundary_log.append(entry)
        host.volume.tree.append_text(host.REJECTS, json.dumps(entry) + "\n", clock=clock.seconds)
    sim.trace.op(SYSTEM, "silent_audit", agent=host.agent, files=len(files), rejected=rejected)
    return accepted, rejected


def journal(
    sim: Simulation,
    host: Host,
    episode: int,
    files: Mapping[str, bytes],
    meta: Mapping[str, Any],
    *,
    root: str | None = None,
) -> JournalLine:
    """Upstream ``journal`` (MEM-OBJ-memory-journal): write ``ep{episode:03d}.tgz`` in the journal
    directory *root* (default the host's; members sorted, mtime = the host clock, the gzip header naming
    the file) and append a ``journal.jsonl`` line ``{episode, files, bytes, ts, **meta}``.

    A repeated episode id overwrites the archive silently while the jsonl keeps both lines (the
    ``journal`` of ``explore/commit.py`` guards no id). No fsync. Off switch ``journal-off``: nothing is
    written.
    Not modeled: the ``ts`` is the host clock in UTC (upstream formats local time).
    """
    vol = host.volume
    root = root or host.JOURNAL
    path = f"{root}/ep{episode:03d}.tgz"
    existed = vol.tree.exists(path)
    if host.variant.has("journal-off"):
        sim.trace.op(SYSTEM, "journal", agent=host.agent, phase="info", episode=episode, off=True)
        return JournalLine(episode, len(files), sum(len(d) for d in files.values()), "", dict(meta))
    clock = vol.clock
    vol.write(path, journal_archive(files, int(clock.seconds()), posixpath.basename(path)))
    vol.point(sim, fp.JOURNAL_AFTER_TGZ)
    ts = clock.datetime().strftime("%Y-%m-%d %H:%M:%S")
    line = {
        "episode": episode,
        "files": len(files),
        "bytes": sum(len(d) for d in files.values()),
        "ts": ts,
        **meta,
    }
    vol.tree.append_text(f"{root}/journal.jsonl", json.dumps(line) + "\n", clock=clock.seconds)
    sim.trace.op(SYSTEM, "journal", agent=host.agent, episode=episode, files=len(files), overwrote=existed)
    return JournalLine(episode, len(files), line["bytes"], ts, dict(meta))


def atomic_install_memory(
    sim: Simulation, host: Host, files: Mapping[str, bytes], path: str | None = None
) -> InstallReceipt:
    """Upstream ``_atomic_install_memory`` (RT-RTE-learning-admission, MEM-OBJ-memory).

    Refuse unsafe names (:class:`UnsafeMemoryName`, an infra error) and a destination that is not a
    directory; stage the files (sorted, each at its ``pathlib`` path) in ``.{name}.stage-*`` beside
    *path*, fsync files, directories deepest first and the stage root, rename the destination to
    ``.{name}.backup-{pid}-{ns}``, rename the stage in, fsync the parent and delete the backup. Between
    the two renames the bank does not exist (a reader gets ``{}``); a crash there orphans the backup. A
    failed stage rename renames the backup back and re-raises. Fixed variant ``exchange-install``: one
    atomic exchange of stage and destination (``RENAME_EXCHANGE``) and :func:`recover_install` at startup.
    Off switch ``install-off``: nothing is installed (the destination keeps its tree).
    Not modeled: symlinked destinations (refused upstream); the pid is a constant.
    """
    path = path or host.CANONICAL
    vol = host.volume
    if host.variant.has("install-off"):
        sim.trace.op(SYSTEM, "atomic_install_memory", agent=host.agent, phase="info", off=True)
        return InstallReceipt(path, "", None, 0)
    bad = sorted(n for n in files if not safe_memory_name(n))
    if bad:
        raise UnsafeMemoryName(f"unsafe memory names {bad}")
    if vol.tree.exists(path):
        raise PracticeInfrastructureError(f"{path} is not a directory")
    parent, name = posixpath.split(path)
    stage = f"{parent}/.{name}.stage-{sim.streams.hex('rsiagent.mkdtemp', 8)}"
    backup: str | None = None
    crashed = False
    fsyncs: list[str] = []
    try:
        vol.mkdir(stage)
        for rel in sorted(files):
            vol.point(sim, fp.INSTALL_STAGE)
            at = memory_path(rel)
            if not at:
                raise IsADirectoryError(f"{stage}: a memory file cannot be the stage root")
            vol.write(f"{stage}/{at}", files[rel])
        placed = sorted({memory_path(rel) for rel in files})
        for rel in placed:
            fsyncs.append(f"{stage}/{rel}")
        anc: set[str] = set()
        for rel in placed:
            d = posixpath.dirname(rel)
            while d:
                anc.add(f"{stage}/{d}")
                d = posixpath.dirname(d)
        dirs = sorted(anc, key=lambda d: (-d.count("/"), d))
        fsyncs += [*dirs, stage]
        for p in fsyncs:
            vol.tree.fsync(p)
        vol.point(sim, fp.INSTALL_AFTER_FSYNC)
        if host.variant.has("exchange-install"):
            vol.point(sim, fp.INSTALL_RENAME)
            _exchange_dirs(vol, stage, path)
            vol.point(sim, fp.INSTALL_AFTER_RENAME)
            vol.tree.fsync(parent)
        else:
            if vol.isdir(path):
                backup = f"{parent}/.{name}.backup-4242-{vol.clock.ns()}"
                vol.rename_dir(path, backup)
            vol.point(sim, fp.INSTALL_BETWEEN_RENAMES)
            try:
                vol.point(sim, fp.INSTALL_RENAME)
                vol.rename_dir(stage, path)
            except WriteFailed:
                if backup is not None and not vol.isdir(path):
                    vol.rename_dir(backup, path)
                    backup = None
                raise
            vol.point(sim, fp.INSTALL_AFTER_RENAME)
            vol.tree.fsync(parent)
            fsyncs.append(parent)
            if backup is not None:
                vol.rmtree(backup)
    except Crash:
        crashed = True
        sim.trace.op(
            SYSTEM, "atomic_install_memory", agent=host.agent, phase="crash", stage=stage, backup=backup
        )
        raise
    except WriteFailed:
        sim.trace.op(SYSTEM, "atomic_install_memory", agent=host.agent, phase="fail", stage=stage)
        raise
    finally:
        if not crashed:  # a dead process runs no ``finally``
            if vol.isdir(stage):
                vol.rmtree(stage)
            if backup is not None and vol.isdir(path) and vol.isdir(backup):
                vol.rmtree(backup)
    sim.trace.op(
        SYSTEM,
        "atomic_install_memory",
        agent=host.agent,
        files=len(files),
        stage=stage,
        backup=backup,
        tree_sha256=tree_sha256(files),
    )
    return InstallReceipt(path, stage, backup, len(files), tuple(fsyncs))


def _exchange_dirs(vol: Volume, a: str, b: str) -> None:
    """``renameat2(RENAME_EXCHANGE)``: swap two directories in one step (fixed variant)."""
    tmp = a + ".xchg"
    if vol.isdir(b):
        vol.rename_dir(b, tmp)
        vol.rename_dir(a, b)
        vol.rename_dir(tmp, a)
    else:
        vol.rename_dir(a, b)


def recover_install(sim: Simulation, host: Host, path: str | None = None) -> str | None:
    """(fixed variant ``exchange-install``) startup recovery: restore an orphaned backup when the bank is
    missing and delete stale stages; returns the backup restored. The faithful design has none."""
    path = path or host.CANONICAL
    vol = host.volume
    parent, name = posixpath.split(path)
    restored = None
    backups = vol.siblings(parent, f".{name}.backup-")
    if not vol.isdir(path) and backups:
        restored = backups[-1]
        vol.rename_dir(restored, path)
    for stale in vol.siblings(parent, f".{name}.stage-") + vol.siblings(parent, f".{name}.backup-"):
        vol.rmtree(stale)
    sim.trace.op(SYSTEM, "recover_install", agent=host.agent, restored=restored)
    return restored


def write_memory(
    sim: Simulation, host: Host, files: Mapping[str, bytes], path: str | None = None
) -> WriteMemoryResult:
    """Upstream ``write_memory`` (MEM-OBJ-memory-journal annotation; ``explore/commit.py:121-135``): the
    direct replacement API.

    Deletes everything, then writes the files in dict order: no stage, fsync, audit, journal or name
    check. Each name is joined to the bank unchecked (``os.path.join``), so ``../x`` lands beside the bank,
    a name with more ``..`` parts lands above the run root and an absolute name is its own target; a crash
    partway leaves a partial bank. Every name that left the bank is in ``escaped``. The sandboxed tree
    never writes outside its root: a write that resolves there is recorded under its resolved target
    (:meth:`sim.files.FileTree.write_outside`), listed in ``outside``, and the host is untouched.

    Fixed variant ``confine-memory-names``: every name must pass ``_safe_memory_name`` (upstream's own
    check, which its terminal pull and staged install apply), checked before anything is deleted; an unsafe
    name raises :class:`UnsafeMemoryName` (infra) and nothing changes. Fixed variant
    ``admit-direct-writes``: the call goes through :func:`admit` (audit of the target direction, journal
    under the next unused episode id, staged install). Off switch ``write-memory-off``: nothing is written.
    """
    path = path or host.CANONICAL
    if host.variant.has("write-memory-off"):
        return WriteMemoryResult(())
    if host.variant.has("confine-memory-names"):
        bad = sorted(n for n in files if not safe_memory_name(n))
        if bad:
            raise UnsafeMemoryName(f"memory names leave the bank: {bad}")
    if host.variant.has("admit-direct-writes"):
        episode = max((line.episode for line in host.journal_lines()), default=0) + 1
        admit(sim, host, dict(files), episode=episode, authorized=host.target, meta={"kind": "write_memory"})
        return WriteMemoryResult(tuple(sorted(files)))
    vol = host.volume
    vol.rmtree(path)
    vol.mkdir(path)
    written: list[str] = []
    escaped: list[str] = []
    outside: list[str] = []
    for rel, data in files.items():
        vol.point(sim, fp.WRITE_MEMORY_EACH)
        joined = rel if rel.startswith("/") else f"{path}/{rel}"
        if escape_target(joined) is not None:
            outside.append(vol.tree.write_outside(joined, data))
        else:
            target = posixpath.normpath(joined)
            vol.write(target, data)
            if target.startswith(path + "/"):
                written.append(rel)
                continue
        written.append(rel)
        escaped.append(rel)
    sim.trace.op(SYSTEM, "write_memory", agent=host.agent, written=written, escaped=escaped, outside=outside)
    return WriteMemoryResult(tuple(written), tuple(escaped), tuple(outside))


def admit(
    sim: Simulation,
    host: Host,
    files: Bank,
    *,
    episode: int,
    authorized: str,
    meta: Mapping[str, Any],
    journal_root: str | None = None,
) -> str:
    """Audit → whole-candidate rejection → journal → staged install (RT-RTE-learning-admission;
    ``practice_loop.py:1693-1712``).

    Returns ``installed`` or ``quarantined`` (the canonical bank unchanged, no journal entry). Unsafe
    names raise :class:`UnsafeMemoryName` (upstream's terminal pull and install refuse them as infra).
    Fixed variant ``journal-after-install`` journals after the install.
    """
    bad = sorted(n for n in files if not safe_memory_name(n))
    if bad:
        raise UnsafeMemoryName(f"candidate memory contains an unsafe path: {bad}")
    accepted, rejected = audit_candidate(sim, host, files, authorized)
    if accepted != files:
        host.quarantine("silent audit rejected the candidate", files=rejected, episode=episode)
        return "quarantined"
    after = host.variant.has("journal-after-install")
    if not after:
        journal(sim, host, episode, files, meta, root=journal_root)
    atomic_install_memory(sim, host, files)
    if after:
        journal(sim, host, episode, files, meta, root=journal_root)
    return "installed"
