"""RSIAgent operations, named as upstream names them (AetherLabsAI/RSIAgent, revisions e8e8c220 / 57c8ac28 /
586733a8 per the fidelity note; the report cites 4d7ef437).

Sections: the bank and its transport (``explore/commit.py``), the silent audit, the journal and the staged
install, the direct ``write_memory`` API, the phase-gated learning of one project (``evolve_practice``,
``_promote_learning``), curriculum notes and the ``none`` ablation, parallel waves
(``evolve_parallel_phase1``), benchmark memory attachment (OSWorld / ALE), WORK LOG folding and stalled
restart (``core/loop.py``), verifier replay and scratch (``core/verifier.py``) and durable images
(``llm/client.py``).

Every failure-mode fix is a switch in :class:`Variant` (``fixes``); the faithful design is the default.
Two claims compare upstream with a *counterfactual* weaker design (``counterfactuals``): pushing the
canonical bank at wave start instead of at each serialized commit, and committing from a raw
``pull_memory`` without the terminal checks. Where the fidelity note and the report disagree the note
wins (see ``fidelity.DIFFERENCES``).

Not modeled: symlink roots and symlinks inside the bank (_read_memory_tree raises on them): trees hold files.
Not modeled: the Verifier's re-check that the candidate and evidence are unchanged (fail closed).
Not modeled: the verified-practice memory recovery and the other recovery variants (§2.17) beyond the wave
state check and the fixed variant's startup install recovery.
Not modeled: unified evolution cycles beyond the restarting experience_index used by the journal claim.
Not modeled: model calls: every model decision is a seeded policy of systems.rsiagent.policies.
Not modeled: mode 0600 of boundary_audit.json and file modes in general.
Not modeled: upstream's distillation draft (visible only to reconciliation): distillation edits the bank.
Not modeled: tamper checks of the candidate and evidence view, and the history-hygiene empty-reply fallback.
"""

from __future__ import annotations

import base64
import functools
import gzip
import hashlib
import io
import json
import posixpath
import re
import tarfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sim.clock import AgentClock
from sim.engine import Simulation
from sim.faults import Crash, WriteFailed
from sim.files import FileTree, PathEscape
from sim.text import extract_facts
from systems.rsiagent import faults as fp
from systems.rsiagent.policies import (
    ActorWork,
    CurriculumTurn,
    Diagnosis,
    Distiller,
    Reconciler,
    Reviewer,
    Summarizer,
    VerifierPolicy,
)
from systems.rsiagent.state import (
    Bank,
    CommitRecord,
    FoldEvent,
    Handoff,
    InstallReceipt,
    JournalLine,
    LoopConfig,
    LoopResult,
    Message,
    WriteMemoryResult,
    frozen_bank,
)

SYSTEM = "rsiagent"

# -- constants (upstream names in comments) ------------------------------------------------------------
SHINGLE_N = 8  # _N
NEAR_WINDOW = 12  # _authorized_near_shingle: 8 words in order inside 12 (at most 4 skipped)
CHUNK = 3000  # _CHUNK: base64 characters per upload append
PULL_ATTEMPTS = 3
PULL_BACKOFF_S = 15.0
FOLD_HEAD, FOLD_TAIL = 1500, 2500
ELISION = "\n…[trace middle elided]…\n"
WORKLOG_MARKER = (
    "\n[... WORK LOG truncated at the char cap — least-important (re-derivable) detail dropped; "
    "the machine still holds ground truth, re-probe if needed]"
)
DIGEST_CHARS = 220
KEEP_FLOOR = 6
SYNTH_MESSAGES = 60
REVIEW_MESSAGES, REVIEW_MESSAGE_CHARS = 6, 1500
REVIEW_LOG_CAP, REVIEW_TAIL_CAP, REVIEW_OUT_CAP = 8000, 6000, 2500
RESUME_MIN_ITERS, RESUME_MIN_WALL_S = 10, 300
MAX_PARALLEL = 4
NO_PROGRESS_SEGMENTS = 3
ELIGIBLE_STALL = "stalled"
MEMORY_REVISIT = (
    "[MEMORY RETRIEVAL OPPORTUNITY] If new evidence changes your understanding, you become stalled, or "
    "earlier context is compressed, reconsider both previously useful and unread memory in {root}."
)
WORK_PHASE_NOTICE = "Edits you make to durable memory during this work phase are discarded."
DECISION_RE = re.compile(r"^DECISION: (PROJECT|CONVERGED|STALLED)$")
DECISION_PHASE1_RE = re.compile(r"^DECISION: (PROJECT|SATURATED|STALLED)$")
VERDICT_RE = re.compile(r"^VERDICT: (PASS|FAIL)$")
BRANCH_ID_RE = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")
PROJECT_ROOT = "/home/user/evolution_project"
OSWORLD_MODE = "frozen_host_snapshot_copy_in_only"

FIXES = (
    "draft-work-delta", "exclusive-journal", "journal-after-install", "wave-sibling-check",
    "complete-fold-input", "trim-digest", "partial-fold-batch", "handoff-cap-worklog", "review-gets-wl",
    "admit-direct-writes", "empty-notes-clear", "exchange-install", "stage-wave", "osworld-record-off",
    "diagnosis-snapshot",
)  # fmt: skip
COUNTERFACTUALS = ("push-at-wave-start", "raw-pull")


class PracticeInfrastructureError(Exception):
    """Upstream's infra outcome: transport or boundary plumbing failed; the run ends ``infra``."""


class BoundaryAuditError(Exception):
    """The silent audit rejected part of a terminal candidate; the whole run ends ``quarantined``."""


class UnsafeMemoryName(ValueError):
    """A bank name is absolute, empty, or has an empty/``.``/``..`` part."""


class JournalConflict(FileExistsError):
    """(fixed variant ``exclusive-journal``) the episode archive already exists."""


class VerifierProtocolError(ValueError):
    """The verifier report has no, or more than one, ``VERDICT:`` line outside code fences."""


class AgenticVerifierNoProgressError(RuntimeError):
    """Three consecutive verifier segments made no progress."""


class FrozenMemoryUploadError(RuntimeError):
    """ALE: "Frozen evaluation memory upload failed"."""


@dataclass(frozen=True)
class Variant:
    """Which fixes (and counterfactual weakenings) are switched on; the faithful design has none."""

    fixes: frozenset[str] = frozenset()
    counterfactuals: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        bad = sorted((set(self.fixes) - set(FIXES)) | (set(self.counterfactuals) - set(COUNTERFACTUALS)))
        if bad:
            raise ValueError(f"unknown fix or counterfactual: {', '.join(bad)}")

    def has(self, name: str) -> bool:
        """Whether the fix or counterfactual *name* is on."""
        return name in self.fixes or name in self.counterfactuals

    @classmethod
    def fixed(cls, *names: str) -> Variant:
        return cls(fixes=frozenset(names))

    @classmethod
    def counterfactual(cls, *names: str) -> Variant:
        return cls(counterfactuals=frozenset(names))


FAITHFUL = Variant()


# ======================================================================================================
# Pure functions (exported)
# ======================================================================================================
_WORD = re.compile(r"[a-z0-9]+")


def words(text: str) -> list[str]:
    """The audit's words: ``[a-z0-9]+`` matches of the lowercased text (``don't`` gives ``don``, ``t``)."""
    return _WORD.findall(text.lower())


def shingles(text: str) -> frozenset[str]:
    """Every 8-word shingle of *text* (words joined by one space); none when it has fewer than 8 words."""
    w = words(text)
    return frozenset(" ".join(w[i : i + SHINGLE_N]) for i in range(len(w) - SHINGLE_N + 1))


def _is_subsequence(needle: Sequence[str], hay: Sequence[str]) -> bool:
    it = iter(hay)
    return all(any(h == n for h in it) for n in needle)


def authorized_near_shingle(
    gram: str, authorized_words: Sequence[str], index: Mapping[str, Sequence[int]] | None = None
) -> bool:
    """Whether the 8 words of *gram* appear in order inside some 12-word window of *authorized_words*."""
    g = gram.split(" ")
    if not g or not authorized_words:
        return False
    starts = (
        index.get(g[0], ()) if index is not None else [i for i, w in enumerate(authorized_words) if w == g[0]]
    )
    return any(_is_subsequence(g[1:], authorized_words[i + 1 : i + NEAR_WINDOW]) for i in starts)


def _word_index(ws: Sequence[str]) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for i, w in enumerate(ws):
        out.setdefault(w, []).append(i)
    return out


def audit_hits(data: bytes, corpus: frozenset[str] | set[str], authorized_instruction: str = "") -> list[str]:
    """The corpus shingles left in one file after the authorized exceptions, sorted."""
    text = data.decode("utf-8", errors="ignore")
    hits = set(shingles(text) & corpus)
    if not hits:
        return []
    hits -= shingles(authorized_instruction)
    aw = words(authorized_instruction)
    idx = _word_index(aw)
    return sorted(h for h in hits if not authorized_near_shingle(h, aw, idx))


def silent_audit(
    files: Mapping[str, bytes], corpus: frozenset[str] | set[str], authorized_instruction: str = ""
) -> tuple[dict[str, bytes], list[str]]:
    """Upstream ``silent_audit``: the accepted subset of *files* and the sorted names rejected.

    A file is rejected when any 8-word shingle of its UTF-8 text (decoded with ``errors=ignore``, so
    binary files are audited too) is in *corpus*, is not a shingle of the authorized text, and is not
    an in-order subsequence of a 12-word window of the authorized words.
    """
    accepted: dict[str, bytes] = {}
    rejected: list[str] = []
    for name, data in files.items():
        if audit_hits(data, corpus, authorized_instruction):
            rejected.append(name)
        else:
            accepted[name] = data
    return accepted, sorted(rejected)


def fold_input(content: object, head: int = FOLD_HEAD, tail: int = FOLD_TAIL) -> str:
    """Upstream ``_fold_input``: the first 1,500 and last 2,500 characters of longer content, middle
    elided."""
    s = str(content)
    if len(s) <= head + tail:
        return s
    return s[:head] + ELISION + s[-tail:]


def cap_worklog(text: str, max_chars: int) -> str:
    """Upstream ``_cap_worklog``: keep the top, cut at the last newline before the cap (hard cut below
    cap/2) and append the truncation marker."""
    if len(text) <= max_chars:
        return text
    cut = text.rfind("\n", 0, max_chars)
    if cut < max_chars // 2:
        cut = max_chars
    return text[:cut].rstrip() + WORKLOG_MARKER


def digest_lines(messages: Iterable[Message]) -> list[str]:
    """The digest fallback's lines: ``[you]``/``[env]`` plus the whitespace-collapsed content[:220]."""
    out = []
    for m in messages:
        tag = "[you]" if m.role == "assistant" else "[env]"
        out.append(f"{tag} {' '.join(str(m.content).split())[:DIGEST_CHARS]}")
    return out


def _effective_keep_sizes(
    sizes: Sequence[int], history_keep_pairs: int, keep_chars: int, ceiling: int | None
) -> int:
    if keep_chars <= 0:
        return history_keep_pairs
    n = len(sizes)
    if n < KEEP_FLOOR:
        return n
    cap = history_keep_pairs if ceiling is None else ceiling
    k = total = 0
    for size in reversed(sizes):
        if k == history_keep_pairs or (k >= KEEP_FLOOR and total + size > keep_chars):
            break
        total += size
        k += 1
    return max(KEEP_FLOOR, min(k, cap))


def effective_keep(
    pairs: Sequence[Sequence[Message] | int],
    history_keep_pairs: int,
    keep_chars: int,
    ceiling: int | None = None,
) -> int:
    """Upstream ``_effective_keep``: how many newest pairs stay unfolded.

    With ``keep_chars <= 0`` it is ``history_keep_pairs``. Otherwise walk from the newest pair summing
    content length only (reasoning is not counted), stopping once ``k >= 6`` and the next pair would
    exceed *keep_chars*, or once ``k == history_keep_pairs``; the result is ``max(6, min(k, ceiling))``,
    or every pair when there are fewer than 6. A pair is a sequence of messages or its content length.
    """
    sizes = [p if isinstance(p, int) else sum(len(m.content) for m in p) for p in pairs]
    return _effective_keep_sizes(sizes, history_keep_pairs, keep_chars, ceiling)


def tree_sha256(files: Mapping[str, bytes]) -> str:
    """Upstream ``_memory_tree_sha256``: sha256 of the canonical JSON (sorted keys, ``,``/``:``, non-ASCII
    kept) of the name-to-sha256 map."""
    items = tuple(sorted(files.items()))
    return _tree_sha256(items) if _small(items) else _tree_sha256.__wrapped__(items)


#: Trees up to this many bytes are memoized by content (claims and scenarios hash and archive the same
#: small trees over and over); larger ones are computed afresh so the caches stay small.
MEMO_MAX_BYTES = 64 * 1024


def _small(items: tuple[tuple[str, bytes], ...]) -> bool:
    return sum(len(d) for _, d in items) <= MEMO_MAX_BYTES


@functools.lru_cache(maxsize=1024)
def _tree_sha256(items: tuple[tuple[str, bytes], ...]) -> str:
    m = {name: hashlib.sha256(data).hexdigest() for name, data in items}
    text = json.dumps(m, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def manifest(files: Mapping[str, bytes]) -> dict[str, dict[str, Any]]:
    """Upstream ``_manifest``: name to ``{bytes, sha256}``."""
    return {n: {"bytes": len(d), "sha256": hashlib.sha256(d).hexdigest()} for n, d in sorted(files.items())}


def inventory_listing(files: Mapping[str, bytes], route: str = "practice") -> str:
    """The Actor's names-and-sizes inventory (no bodies, no privileged index, no ranking).

    ``practice`` (and ``wave``): upstream ``_listing``, sorted ``"{name}  {len}B"`` lines or
    ``(no durable memory files yet)``; ``osworld``: ``memory_preamble``'s header and
    ``"  {size:>7}  {relpath}"`` lines; ``ale``: ``memory_preamble(_listing)``.
    """
    if route in ("practice", "wave"):
        if not files:
            return "(no durable memory files yet)"
        return "\n".join(f"{n}  {len(files[n])}B" for n in sorted(files))
    if route == "osworld":
        lines = [f"Current durable-memory inventory ({len(files)} files):"]
        lines += [f"  {len(files[n]):>7}  {n}" for n in sorted(files)]
        return "\n".join(lines)
    if route == "ale":
        return "DURABLE MEMORY FILES:\n" + inventory_listing(files, "practice")
    raise ValueError(f"unknown inventory route {route!r}")


def safe_memory_name(name: object) -> bool:
    """Upstream ``_safe_memory_name``: a str, not absolute, and no empty, ``.`` or ``..`` part."""
    if not isinstance(name, str) or name == "" or name.startswith("/"):
        return False
    return all(part not in ("", ".", "..") for part in name.split("/"))


def pull_excluded(rel: str) -> bool:
    """Whether the pull drops *rel*: it contains ``__pycache__`` or ends ``.pyc``/``.pyo``."""
    return "__pycache__" in rel or rel.endswith((".pyc", ".pyo"))


def find_counted(rel: str) -> bool:
    """Whether the guest ``find -type f`` count keeps *rel* (it excludes ``*/__pycache__/*``, ``*.pyc``,
    ``*.pyo``): a name merely containing ``__pycache__`` is still counted."""
    return not ("__pycache__" in rel.split("/")[:-1] or rel.endswith((".pyc", ".pyo")))


def parse_decision(handoff: str, *, phase1: bool = False) -> str:
    """The curriculum handoff's decision: its first non-empty line must be ``DECISION: PROJECT|CONVERGED|
    STALLED`` (Phase 1: ``SATURATED`` in place of ``CONVERGED``), and a PROJECT must name the project
    root; raises ValueError."""
    first = next((ln.strip() for ln in handoff.splitlines() if ln.strip()), "")
    m = (DECISION_PHASE1_RE if phase1 else DECISION_RE).match(first)
    if not m:
        raise ValueError(f"curriculum handoff has no decision line: {first[:60]!r}")
    if m.group(1) == "PROJECT" and PROJECT_ROOT not in handoff:
        raise ValueError("a PROJECT decision must name " + PROJECT_ROOT)
    return m.group(1)


def parse_verdict(report: str) -> str:
    """Exactly one ``VERDICT: PASS|FAIL`` line outside code fences; raises :class:`VerifierProtocolError`."""
    found = []
    fenced = False
    for line in report.splitlines():
        if line.strip().startswith("```"):
            fenced = not fenced
            continue
        m = VERDICT_RE.match(line.strip())
        if m and not fenced:
            found.append(m.group(1))
    if len(found) != 1:
        raise VerifierProtocolError(f"expected one VERDICT line outside code fences, found {len(found)}")
    return found[0]


def journal_archive(files: Mapping[str, bytes], mtime: int) -> bytes:
    """The ``ep{NNN}.tgz`` bytes: a gzip tar of the files only, sorted, every member (and the gzip
    header) stamped *mtime*, so the same tree and clock give the same bytes."""
    items = tuple(sorted(files.items()))
    return _journal_archive(items, mtime) if _small(items) else _journal_archive.__wrapped__(items, mtime)


@functools.lru_cache(maxsize=512)
def _journal_archive(items: tuple[tuple[str, bytes], ...], mtime: int) -> bytes:
    # pure (same tree and mtime, same bytes), so memoized for small trees: a tgz costs ~0.6 ms to build
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, data in items:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mtime = mtime
            info.mode = 0o644
            tar.addfile(info, io.BytesIO(data))
    out = io.BytesIO()
    with gzip.GzipFile(fileobj=out, mode="wb", mtime=mtime, filename="") as gz:
        gz.write(raw.getvalue())
    return out.getvalue()


def read_archive(data: bytes) -> dict[str, bytes]:
    """The files of a journal archive."""
    out: dict[str, bytes] = {}
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        for m in tar.getmembers():
            f = tar.extractfile(m)
            if f is not None:
                out[m.name] = f.read()
    return out


def bank_facts(files: Mapping[str, bytes]) -> frozenset[str]:
    """Every fact id present in any file of a bank."""
    out: set[str] = set()
    for d in files.values():
        out |= extract_facts(d.decode("utf-8", errors="ignore"))
    return frozenset(out)


# ======================================================================================================
# Volumes: a file tree plus the directories that exist (FileTree holds files only)
# ======================================================================================================
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


# ======================================================================================================
# Transport (MEM-OBJ-memory)
# ======================================================================================================
def push_memory(
    sim: Simulation, vm: GuestVM, files: Mapping[str, bytes], *, point: str = fp.PUSH_UPLOAD
) -> bool:
    """Upload a bank into the guest ``~/.memory`` (MEM-OBJ-memory, RT-RTE-task-execution).

    Deletes and recreates the guest bank, uploads the tar in 3,000-character base64 chunks and extracts
    it; returns True iff the extraction reported ``SYNC_RC=0``. A failure (``fail@`` *point* or
    ``rsiagent.push_memory.extract``) leaves an empty or partial guest bank: it is a full replace, not
    atomic.
    Not modeled: tar member metadata and symlinks kept as links (the bank is files only).
    """
    vol = vm.volume
    vol.rmtree(vm.MEMORY)
    vol.mkdir(vm.MEMORY)
    payload = sum(len(d) for d in files.values())
    chunks = max(1, -(-((payload + 2) // 3 * 4) // CHUNK))
    written = 0
    try:
        vol.point(sim, point)
        for name in sorted(files):
            vol.point(sim, fp.PUSH_EXTRACT)
            vol.write(f"{vm.MEMORY}/{name}", files[name])
            written += 1
    except WriteFailed as exc:
        sim.trace.op(
            SYSTEM,
            "push_memory",
            agent=vm.name,
            phase="fail",
            files=len(files),
            extracted=written,
            point=exc.point,
        )
        return False
    sim.trace.op(
        SYSTEM,
        "push_memory",
        agent=vm.name,
        files=len(files),
        bytes=payload,
        chunks=chunks,
        tree_sha256=tree_sha256(files),
    )
    return True


def pull_memory(sim: Simulation, vm: GuestVM, attempts: int = PULL_ATTEMPTS) -> Bank:
    """Download the guest bank (MEM-OBJ-memory): regular files only, ``.memory/`` stripped, bytecode
    (``__pycache__``, ``.pyc``, ``.pyo``) skipped. A failed attempt backs off 15 s; after *attempts*
    failures it returns ``{}``, the same value as an empty bank.
    Not modeled: the 15 s sleeps advance no simulation time (they are recorded in the trace).
    """
    for attempt in range(1, attempts + 1):
        try:
            vm.volume.point(sim, fp.PULL_ATTEMPT)
        except WriteFailed:
            sim.trace.op(
                SYSTEM, "pull_memory", agent=vm.name, phase="fail", attempt=attempt, backoff_s=PULL_BACKOFF_S
            )
            continue
        files = {n: d for n, d in vm.bank().items() if not pull_excluded(n)}
        sim.trace.op(SYSTEM, "pull_memory", agent=vm.name, attempt=attempt, files=len(files))
        return files
    sim.trace.op(SYSTEM, "pull_memory", agent=vm.name, phase="fail", gave_up=True, value="{}")
    return {}


def pull_terminal_memory(sim: Simulation, vm: GuestVM) -> Bank:
    """Upstream ``_pull_terminal_memory`` (MEM-OBJ-memory, RT-RTE-learning-admission): a pull that tells a
    real empty bank from the ``{}`` failure value.

    Raises :class:`PracticeInfrastructureError` unless the types are ``str -> bytes``, every name is
    safe, the guest directory exists and the guest ``find -type f`` count (minus bytecode) equals the
    number of pulled files (so ``a__pycache__b`` is dropped by the pull but counted: infra).
    """
    files = pull_memory(sim, vm)
    if not all(isinstance(k, str) and isinstance(v, bytes) for k, v in files.items()):
        raise PracticeInfrastructureError("terminal memory pull returned bad types")
    bad = sorted(n for n in files if not safe_memory_name(n))
    if bad:
        raise PracticeInfrastructureError(f"unsafe memory names {bad}")
    if not vm.volume.isdir(vm.MEMORY):
        raise PracticeInfrastructureError("guest memory directory is missing")
    count = sum(1 for n in vm.bank() if find_counted(n))
    if count != len(files):
        sim.trace.op(
            SYSTEM, "pull_terminal_memory", agent=vm.name, phase="fail", guest=count, pulled=len(files)
        )
        raise PracticeInfrastructureError(f"guest holds {count} files, pull returned {len(files)}")
    sim.trace.op(SYSTEM, "pull_terminal_memory", agent=vm.name, files=len(files))
    return files


# ======================================================================================================
# Audit, journal, staged install, write_memory (RT-RTE-learning-admission, MEM-OBJ-memory-journal)
# ======================================================================================================
def require_corpus(corpus: frozenset[str] | None) -> frozenset[str]:
    """``require_corpus=True``: a missing or empty corpus raises (every learning call passes True)."""
    if not corpus:
        raise PracticeInfrastructureError("instruction corpus is missing or empty")
    return corpus


def validate_instruction_corpus(
    raw: bytes, sidecar: Mapping[str, Any], expected_count: int = 108
) -> frozenset[str]:
    """Upstream ``validate_instruction_corpus``: the sidecar manifest must match exactly and the corpus
    must be a non-empty, sorted, unique list of strings; raises ValueError."""
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
    if not isinstance(data, list) or not data or not all(isinstance(s, str) for s in data):
        raise ValueError("corpus must be a non-empty list of strings")
    if data != sorted(set(data)):
        raise ValueError("corpus must be sorted and unique")
    return frozenset(data)


def build_corpus(instructions: Iterable[str]) -> frozenset[str]:
    """The shingle corpus of benchmark instructions (the per-run Overleaf credentials block stripped)."""
    out: set[str] = set()
    for text in instructions:
        text = re.sub(r"Email:.*?Password:\s*\S+", "", text, flags=re.S)
        out |= shingles(text)
    return frozenset(out)


def audit_candidate(
    sim: Simulation, host: Host, files: Mapping[str, bytes], authorized: str
) -> tuple[dict[str, bytes], list[str]]:
    """The host's silent audit of a terminal candidate (RT-RTE-learning-admission): logs
    ``{file, hits: sorted[:3], ts}`` per rejected file and gives the Actor no feedback."""
    corpus = require_corpus(host.corpus)
    accepted, rejected = silent_audit(files, corpus, authorized)
    for name in rejected:
        hits = audit_hits(files[name], corpus, authorized)[:3]
        host.boundary_log.append({"file": name, "hits": hits, "ts": host.volume.clock.iso()})
    sim.trace.op(SYSTEM, "silent_audit", agent=host.agent, files=len(files), rejected=rejected)
    return accepted, rejected


def journal(
    sim: Simulation, host: Host, episode: int, files: Mapping[str, bytes], meta: Mapping[str, Any]
) -> JournalLine:
    """Upstream ``journal`` (MEM-OBJ-memory-journal): write ``ep{episode:03d}.tgz`` (members sorted, mtime
    = the host clock) and append a ``journal.jsonl`` line ``{episode, files, bytes, ts, **meta}``.

    A repeated episode id overwrites the archive silently while the jsonl keeps both lines (fixed
    variant ``exclusive-journal``: raises :class:`JournalConflict`). No fsync.
    Not modeled: the ``ts`` is the host clock in UTC (upstream formats local time).
    """
    vol = host.volume
    path = f"{host.JOURNAL}/ep{episode:03d}.tgz"
    existed = vol.tree.exists(path)
    if existed and host.variant.has("exclusive-journal"):
        sim.trace.op(SYSTEM, "journal", agent=host.agent, phase="fail", episode=episode, reason="exists")
        raise JournalConflict(path)
    clock = vol.clock
    vol.write(path, journal_archive(files, int(clock.seconds())))
    vol.point(sim, fp.JOURNAL_AFTER_TGZ)
    ts = clock.datetime().strftime("%Y-%m-%d %H:%M:%S")
    line = {
        "episode": episode,
        "files": len(files),
        "bytes": sum(len(d) for d in files.values()),
        "ts": ts,
        **meta,
    }
    vol.tree.append_text(f"{host.JOURNAL}/journal.jsonl", json.dumps(line) + "\n", clock=clock.seconds)
    sim.trace.op(SYSTEM, "journal", agent=host.agent, episode=episode, files=len(files), overwrote=existed)
    return JournalLine(episode, len(files), line["bytes"], ts, dict(meta))


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


def atomic_install_memory(
    sim: Simulation, host: Host, files: Mapping[str, bytes], path: str | None = None
) -> InstallReceipt:
    """Upstream ``_atomic_install_memory`` (RT-RTE-learning-admission, MEM-OBJ-memory).

    Stage the files (sorted) in ``.{name}.stage-*`` beside *path*, fsync files, directories deepest
    first and the stage root, rename the destination to ``.{name}.backup-{pid}-{ns}``, rename the stage
    in, fsync the parent and delete the backup. Between the two renames the bank does not exist (a
    reader gets ``{}``); a crash there orphans the backup. A failed stage rename renames the backup back
    and re-raises. Fixed variant ``exchange-install``: one atomic exchange of stage and destination
    (``RENAME_EXCHANGE``) and :func:`recover_install` at startup. Raises :class:`UnsafeMemoryName`.
    Not modeled: symlinked destinations (refused upstream); the pid is a constant.
    """
    path = path or host.CANONICAL
    vol = host.volume
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
            vol.write(f"{stage}/{rel}", files[rel])
        for rel in sorted(files):
            fsyncs.append(f"{stage}/{rel}")
        anc: set[str] = set()
        for rel in files:
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
    """Upstream ``write_memory`` (MEM-OBJ-memory-journal annotation): the direct replacement API.

    Deletes everything, then writes the files in dict order: no stage, fsync, audit, journal or name
    check, so ``../x`` lands outside the bank and a crash partway leaves a partial bank. On the disk tree
    the sandbox refuses paths that leave the run root: such names are recorded as ``refused`` (data),
    names that leave the bank but stay inside the root as ``escaped``. Fixed variant
    ``admit-direct-writes``: the call goes through :func:`admit` (audit, journal, staged install).
    """
    path = path or host.CANONICAL
    if host.variant.has("admit-direct-writes"):
        admit(sim, host, dict(files), episode=0, authorized="", meta={"kind": "write_memory"})
        return WriteMemoryResult(tuple(sorted(files)))
    vol = host.volume
    vol.rmtree(path)
    vol.mkdir(path)
    written: list[str] = []
    escaped: list[str] = []
    refused: list[str] = []
    for rel, data in files.items():
        vol.point(sim, fp.WRITE_MEMORY_EACH)
        target = posixpath.normpath(f"{path}/{rel}")
        try:
            vol.write(target, data)
        except PathEscape:
            refused.append(rel)
            continue
        written.append(rel)
        if not target.startswith(path + "/"):
            escaped.append(rel)
    sim.trace.op(SYSTEM, "write_memory", agent=host.agent, written=written, escaped=escaped, refused=refused)
    return WriteMemoryResult(tuple(written), tuple(escaped), tuple(refused))


def admit(
    sim: Simulation, host: Host, files: Bank, *, episode: int, authorized: str, meta: Mapping[str, Any]
) -> str:
    """Audit → whole-candidate rejection → journal → staged install (RT-RTE-learning-admission).

    Returns ``installed`` or ``quarantined`` (the canonical bank unchanged, no journal entry). Unsafe
    names quarantine too. Fixed variant ``journal-after-install`` journals after the install.
    """
    bad = sorted(n for n in files if not safe_memory_name(n))
    if bad:
        host.quarantine("unsafe memory names", files=bad)
        return "quarantined"
    accepted, rejected = audit_candidate(sim, host, files, authorized)
    if accepted != files:
        host.quarantine("silent audit rejected the candidate", files=rejected, episode=episode)
        return "quarantined"
    after = host.variant.has("journal-after-install")
    if not after:
        journal(sim, host, episode, files, meta)
    atomic_install_memory(sim, host, files)
    if after:
        journal(sim, host, episode, files, meta)
    return "installed"


# ======================================================================================================
# Phases of one project (RT-RTE-task-execution, RT-RTE-learning-admission, MEM-OBJ-learning-diagnosis)
# ======================================================================================================
@dataclass(frozen=True)
class ProjectSpec:
    """One practice project: its episode id (``project_index``), instruction and the phase policies.

    A ``diagnosis`` selects the ``_promote_learning`` route (a learning-diagnosis free phase follows
    reconciliation)."""

    episode: int
    instruction: str
    actor: ActorWork
    verifier: VerifierPolicy = field(default_factory=lambda: VerifierPolicy())
    distiller: Distiller = field(default_factory=lambda: Distiller())
    reconciler: Reconciler = field(default_factory=lambda: Reconciler())
    diagnosis: Diagnosis | None = None


@dataclass
class ActorContext:
    """What the Actor holds in its context after the work phase (the same context distills)."""

    observed: tuple[str, ...] = ()
    read: dict[str, bytes] = field(default_factory=dict)
    work_lessons: dict[str, bytes] = field(default_factory=dict)
    withdrawn: set[str] = field(default_factory=set)


def reset_null_vm(sim: Simulation, vm: GuestVM) -> None:
    """Upstream ``_reset_null_vm``: delete the project root, every handoff file (curriculum notes and the
    learning diagnosis included) and ``~/.memory`` (RT-RTE-task-execution)."""
    vol = vm.volume
    for d in (vm.PROJECT, vm.MEMORY):
        vol.rmtree(d)
    for f in (vm.NOTES, vm.DIAGNOSIS):
        if vol.tree.exists(f):
            vol.tree.delete(f)
    sim.trace.op(SYSTEM, "reset_null_vm", agent=vm.name)


def push_canonical(sim: Simulation, vm: GuestVM, files: Mapping[str, bytes]) -> None:
    """``_push_canonical_memory``: a failed push is :class:`PracticeInfrastructureError` (practice, waves,
    unified evolution)."""
    if not push_memory(sim, vm, files):
        raise PracticeInfrastructureError("canonical memory push failed")


def actor_work(
    sim: Simulation, host: Host, vm: GuestVM, spec: ProjectSpec, route: str = "practice"
) -> ActorContext:
    """The Actor's work phase (RT-RTE-task-execution, RT-BAP-actor-method): the charter carries the
    names-and-sizes inventory and says work-phase edits are discarded; the Actor reads the bank files it
    chooses, writes lessons into ``~/.memory`` and submits a candidate (``STATUS: SUBMIT``)."""
    bank = vm.bank()
    charter = (
        f"You are the Actor. {WORK_PHASE_NOTICE}\nDURABLE MEMORY FILES:\n{inventory_listing(bank, route)}"
    )
    sim.request(SYSTEM, "actor.work", [charter, spec.instruction], agent=vm.name)
    ctx = ActorContext(observed=spec.actor.observed)
    for name in spec.actor.reads:
        if name in bank:
            ctx.read[name] = bank[name]
    for name, text in spec.actor.lessons:
        data = text.encode("utf-8")
        vm.write_bank_file(name, data)
        ctx.work_lessons[name] = data
    vm.volume.write(f"{vm.PROJECT}/result.txt", spec.actor.candidate.encode("utf-8"))
    sim.trace.op(
        SYSTEM,
        "actor_work",
        agent=vm.name,
        episode=spec.episode,
        reads=sorted(ctx.read),
        work_lessons=sorted(ctx.work_lessons),
        status="SUBMIT",
    )
    return ctx


def verify(sim: Simulation, spec: ProjectSpec, candidate: bytes, agent: str = "verifier") -> tuple[str, str]:
    """The Verifier on a fresh VM with the candidate (RT-RTE-candidate-verification): exactly one
    ``VERDICT: PASS|FAIL`` outside code fences. Returns the verdict and the verbatim report."""
    report = spec.verifier.report()
    sim.request(
        SYSTEM, "verifier.judge", ["You are the Verifier.", candidate.decode("utf-8", "replace")], agent=agent
    )
    verdict = parse_verdict(report)
    sim.trace.op(SYSTEM, "verify", agent=agent, episode=spec.episode, verdict=verdict)
    return verdict, report


def _append(old: bytes | None, text: str) -> bytes:
    line = text.encode("utf-8")
    return line if not old else old.rstrip(b"\n") + b"\n" + line


def distill(
    sim: Simulation, vm: GuestVM, ctx: ActorContext, policy: Distiller, verdict: str, report: str
) -> None:
    """The distillation free phase in the same Actor context (RT-RTE-learning-admission): given the
    outcome and the verbatim report, the Actor adds, revises or deletes bank files (``allow_noop_done``).
    Not modeled: the FAIL-is-not-success rule is an instruction, not a check."""
    bank = vm.bank()
    sim.request(
        SYSTEM,
        "actor.distill",
        [
            f"Outcome: {verdict}\n{report}",
            f"Update your durable memory at ~/.memory.\n{inventory_listing(bank)}",
            " ".join(ctx.observed),
        ],
        agent=vm.name,
    )
    for name, text in policy.rewrite_read:
        if name in ctx.read:
            vm.write_bank_file(name, _append(ctx.read[name], text))
    for name, text in policy.add:
        vm.write_bank_file(name, _append(vm.bank().get(name), text))
    for name, text in policy.revise:
        vm.write_bank_file(name, _append(vm.bank().get(name), text))
    if policy.recall_work:
        for name, data in ctx.work_lessons.items():
            cur = vm.bank().get(name)
            if cur is None or data not in cur:
                vm.write_bank_file(name, data if cur is None else cur.rstrip(b"\n") + b"\n" + data)
    for name in policy.delete:
        vm.delete_bank_file(name)
        ctx.withdrawn.add(name)
    sim.trace.op(
        SYSTEM,
        "distill",
        agent=vm.name,
        visible=sorted(bank),
        add=[n for n, _ in policy.add],
        revise=[n for n, _ in policy.revise],
        delete=list(policy.delete),
        recall_work=policy.recall_work,
        rewrite_read=[n for n, _ in policy.rewrite_read],
    )


def reconcile(sim: Simulation, vm: GuestVM, ctx: ActorContext, policy: Reconciler) -> None:
    """Whole-corpus reconciliation (free phase): the Actor withdraws files it judges stale."""
    sim.request(
        SYSTEM,
        "actor.reconcile",
        [
            "Look for conflicting assertions, unsupported causal explanations, stale environment "
            "assumptions, and conclusions broader than the observed evidence.",
            inventory_listing(vm.bank()),
        ],
        agent=vm.name,
    )
    for name in policy.delete:
        vm.delete_bank_file(name)
        ctx.withdrawn.add(name)
    bank = vm.bank()
    sim.trace.op(
        SYSTEM,
        "reconcile",
        agent=vm.name,
        delete=list(policy.delete),
        bank={n: hashlib.sha256(d).hexdigest() for n, d in sorted(bank.items())},
    )


def learning_diagnosis(sim: Simulation, vm: GuestVM, policy: Diagnosis) -> str:
    """The learning-diagnosis free phase of ``_promote_learning`` (MEM-OBJ-learning-diagnosis): the Actor
    writes ``learning_diagnosis.md`` (conclusions for the Curriculum) and may still edit the bank."""
    sim.request(
        SYSTEM,
        "actor.learning_diagnosis",
        [
            "Do not include private chain-of-thought or a turn-by-turn transcript: provide only the "
            "concise conclusions and hypotheses you choose to communicate."
        ],
        agent=vm.name,
    )
    vm.volume.write(vm.DIAGNOSIS, policy.text.encode("utf-8"))
    for name, text in policy.bank_edits:
        vm.write_bank_file(name, _append(vm.bank().get(name), text))
    sim.trace.op(SYSTEM, "learning_diagnosis", agent=vm.name, bank_edits=[n for n, _ in policy.bank_edits])
    return policy.text


def commit_learning(
    sim: Simulation,
    host: Host,
    vm: GuestVM,
    episode: int,
    verdict: str,
    *,
    authorized: str,
    kind: str = "practice",
    files: Bank | None = None,
    install_path: str | None = None,
    checkpoint: bool = True,
) -> CommitRecord:
    """The commit (RT-RTE-learning-admission, MEM-OBJ-memory-journal): pull (``_pull_terminal_memory``, or
    the raw ``pull_memory`` under the ``raw-pull`` counterfactual) → silent audit (corpus required) →
    whole-candidate rejection (quarantine, no journal, bank unchanged) → journal → staged install →
    ``checkpoints/project_NNN/memory`` (must not exist) → ``outcome.json`` (manifests) + ``state.json``.
    Raises :class:`PracticeInfrastructureError` on a failed terminal pull."""
    path = install_path or host.CANONICAL
    before = host.volume.read_tree(path)
    if files is None:
        files = pull_memory(sim, vm) if host.variant.has("raw-pull") else pull_terminal_memory(sim, vm)
    outcome = (
        admit(
            sim,
            host,
            files,
            episode=episode,
            authorized=authorized,
            meta={"kind": kind, "terminal_outcome": verdict},
        )
        if path == host.CANONICAL
        else _admit_at(
            sim, host, files, episode, authorized, {"kind": kind, "terminal_outcome": verdict}, path
        )
    )
    after = host.volume.read_tree(path)
    rec = CommitRecord(episode, outcome, verdict, frozen_bank(before), frozen_bank(after))
    if outcome == "installed":
        vol = host.volume
        vol.point(sim, fp.CHECKPOINT)
        if checkpoint:
            cp = f"{host.CHECKPOINTS}/project_{episode:03d}/memory"
            if vol.isdir(cp):
                raise PracticeInfrastructureError(f"checkpoint {cp} already exists")
            vol.mkdir(cp)
            for n, d in sorted(after.items()):
                vol.write(f"{cp}/{n}", d)
        out = {
            "episode": episode,
            "verdict": verdict,
            "memory_before": manifest(before),
            "memory_after": manifest(after),
        }
        vol.write(
            f"lineage/episodes/ep{episode:03d}/outcome.json", json.dumps(out, sort_keys=True).encode("utf-8")
        )
        if checkpoint:  # practice commits; a wave writes state.json at its start and end
            vol.write(
                "lineage/state.json",
                json.dumps(
                    {"state": host.state, "episode": episode, "memory_tree_sha256": tree_sha256(after)},
                    sort_keys=True,
                ).encode("utf-8"),
            )
    host.commits.append(rec)
    sim.trace.op(
        SYSTEM,
        "commit_learning",
        agent=host.agent,
        episode=episode,
        outcome=outcome,
        before=tree_sha256(before),
        after=tree_sha256(after),
    )
    return rec


def _admit_at(
    sim: Simulation,
    host: Host,
    files: Bank,
    episode: int,
    authorized: str,
    meta: Mapping[str, Any],
    path: str,
) -> str:
    accepted, rejected = audit_candidate(sim, host, files, authorized)
    if accepted != files:
        host.quarantine("silent audit rejected the candidate", files=rejected, episode=episode)
        return "quarantined"
    journal(sim, host, episode, files, meta)
    atomic_install_memory(sim, host, files, path)
    return "installed"


def evolve_practice_project(
    sim: Simulation, host: Host, spec: ProjectSpec, *, vm_kind: str = "memory"
) -> CommitRecord:
    """One phase-gated project of ``evolve_practice`` / ``_promote_learning`` (RT-RTE-task-execution,
    RT-RTE-learning-admission, MEM-OBJ-memory, MEM-OBJ-learning-diagnosis).

    Fresh VM → push canonical → Actor work → Verifier (fresh VM) → reset (fresh VM, candidate replayed,
    canonical pushed again: work-phase edits discarded) → distillation → reconciliation → [learning
    diagnosis, whose bank edits are still pulled] → commit. Fixed variants: ``draft-work-delta`` (the
    work-phase delta is carried into the reset bank as a visible draft), ``diagnosis-snapshot`` (the
    candidate is pulled at reconciliation end). Raises :class:`PracticeInfrastructureError`.
    Not modeled: the Curriculum's fixture capture and the evidence view (programs, traces, SHA256SUMS).
    """
    vm = GuestVM(sim, f"vm-ep{spec.episode:03d}", vm_kind)
    before = host.canonical()
    reset_null_vm(sim, vm)
    push_canonical(sim, vm, before)
    ctx = actor_work(sim, host, vm, spec)
    work_bank = vm.bank()
    candidate = vm.volume.tree.read_bytes(f"{vm.PROJECT}/result.txt")
    verdict, report = verify(sim, spec, candidate)
    reset_null_vm(sim, vm)
    vm.volume.write(f"{vm.PROJECT}/result.txt", candidate)
    push_canonical(sim, vm, host.canonical())
    if host.variant.has("draft-work-delta"):
        for name, data in sorted(work_bank.items()):
            if before.get(name) != data:
                vm.write_bank_file(name, data)
    distill(sim, vm, ctx, spec.distiller, verdict, report)
    reconcile(sim, vm, ctx, spec.reconciler)
    files: Bank | None = None
    if spec.diagnosis is not None:
        if host.variant.has("diagnosis-snapshot"):
            files = pull_terminal_memory(sim, vm)
        learning_diagnosis(sim, vm, spec.diagnosis)
    return commit_learning(sim, host, vm, spec.episode, verdict, authorized=spec.instruction, files=files)


# ======================================================================================================
# Curriculum notes and the ``none`` ablation (MEM-OBJ-curriculum-notes, RT-RTE-curriculum-search)
# ======================================================================================================
def read_curriculum_notes(sim: Simulation, vm: GuestVM, variant: Variant = FAITHFUL) -> str | None:
    """Read ``/home/user/curriculum_notes.md``: "" when absent, zero-size or not strict UTF-8 (``-f``/``-s``
    tests). Fixed variant ``empty-notes-clear``: None when absent (no update), "" when present but empty
    or unreadable (clears)."""
    path = vm.NOTES
    if not vm.volume.tree.exists(path):
        return None if variant.has("empty-notes-clear") else ""
    data = vm.volume.tree.read_bytes(path)
    try:
        return data.decode("utf-8") if data else ""
    except UnicodeDecodeError:
        return ""


def curriculum_turn(
    sim: Simulation,
    host: Host,
    vm: GuestVM,
    turn: CurriculumTurn,
    *,
    access: str = "copy",
    phase2_outcome_protocol: bool = True,
) -> str:
    """One Curriculum phase (RT-RTE-curriculum-search, MEM-OBJ-curriculum-notes): fresh VM, a disposable
    bank copy (or, with ``access="none"``, the empty ``curriculum_empty_memory``), the charter with the
    current notes, the handoff decision, then the notes read: only a non-empty read is audited and
    replaces the notes (an audit hit quarantines). Writes ``memory_access.json``. Returns the decision."""
    reset_null_vm(sim, vm)
    if access == "none":
        if not phase2_outcome_protocol:
            raise ValueError("curriculum_memory_access='none' requires phase2_outcome_protocol")
        empty = host.volume.read_tree("lineage/curriculum_empty_memory")
        if empty:
            raise PracticeInfrastructureError("curriculum_empty_memory is not empty")
        attached: Bank = {}
    elif access == "copy":
        attached = host.canonical()
    else:
        raise ValueError(f"unknown curriculum_memory_access {access!r}")
    push_canonical(sim, vm, attached)
    host.volume.write(
        "lineage/curriculum/memory_access.json",
        json.dumps(
            {
                "access": access,
                "attached_files": len(attached),
                "attached_bytes": sum(map(len, attached.values())),
                "attached_tree_sha256": tree_sha256(attached),
                "actor_learning_diagnosis_available": True,
            },
            sort_keys=True,
        ).encode("utf-8"),
    )
    sim.request(
        SYSTEM,
        "curriculum.charter",
        ["You are the Curriculum.", f"CURRICULUM NOTES:\n{host.notes}", inventory_listing(attached)],
        agent=vm.name,
    )
    handoff = f"DECISION: {turn.decision}\n{turn.instruction}"
    if turn.notes_action == "write":
        vm.volume.write(vm.NOTES, turn.notes_text.encode("utf-8"))
    elif turn.notes_action == "empty":
        vm.volume.write(vm.NOTES, b"")
    elif turn.notes_action == "blank":
        vm.volume.write(vm.NOTES, b"  \n")
    elif turn.notes_action == "corrupt":
        vm.volume.write(vm.NOTES, b"\xff\xfe notes")
    decision = parse_decision(handoff)
    read = read_curriculum_notes(sim, vm, host.variant)
    replaced = False
    if read is not None and (read != "" or host.variant.has("empty-notes-clear")):
        if read and audit_hits(read.encode("utf-8"), require_corpus(host.corpus)):
            host.quarantine("curriculum notes audit hit")
        else:
            host.notes = read
            replaced = True
    sim.trace.op(
        SYSTEM,
        "curriculum_turn",
        agent=vm.name,
        decision=decision,
        access=access,
        notes_action=turn.notes_action,
        notes_replaced=replaced,
    )
    return decision


# ======================================================================================================
# Parallel waves (RT-RTE-learning-admission annotation)
# ======================================================================================================
@dataclass
class WaveResult:
    """The outcome of one wave: per-branch commit records and ``memory_changes``, and whether the wave's
    ``outcomes.md`` was written."""

    snapshot: Bank
    commits: list[CommitRecord] = field(default_factory=list)
    changes: list[dict[str, list[str]]] = field(default_factory=list)
    contexts: list[ActorContext] = field(default_factory=list)
    outcome_written: bool = False
    aborted: str = ""


def memory_changes(before: Mapping[str, bytes], after: Mapping[str, bytes]) -> dict[str, list[str]]:
    """``memory_changes``: created / deleted / modified / unchanged names."""
    return {
        "created": sorted(set(after) - set(before)),
        "deleted": sorted(set(before) - set(after)),
        "modified": sorted(n for n in set(before) & set(after) if before[n] != after[n]),
        "unchanged": sorted(n for n in set(before) & set(after) if before[n] == after[n]),
    }


def _merge_sibling_changes(candidate: Bank, current: Bank, snapshot: Bank) -> tuple[Bank, list[str]]:
    """(fixed variant ``wave-sibling-check``) keep sibling-changed files: a branch's overwrite or delete
    of a file a sibling changed since the pre-wave snapshot is merged (line union onto the current
    text)."""
    out = dict(candidate)
    conflicts = []
    for name, cur in current.items():
        if snapshot.get(name) == cur:
            continue
        mine = candidate.get(name)
        if mine == cur or (mine is not None and mine.startswith(cur)):
            continue
        conflicts.append(name)
        have = cur.split(b"\n")
        extra = [ln for ln in (mine or b"").split(b"\n") if ln and ln not in have]
        out[name] = b"\n".join([cur.rstrip(b"\n"), *extra]) if extra else cur
    return out, sorted(conflicts)


def evolve_parallel_phase1(
    sim: Simulation, host: Host, specs: Sequence[ProjectSpec], *, vm_kind: str = "memory"
) -> WaveResult:
    """One wave of ``evolve_parallel_phase1`` (RT-RTE-learning-admission annotation; ``max_parallel=4``).

    Branches run concurrently as SimPy processes from the pre-wave ``memory_snapshot`` (push snapshot →
    Actor → Verifier → push the snapshot again); all are drained before any commit and any exception
    aborts the wave. Commits are serialized in assignment order; each pushes the **latest canonical**
    bank into its branch before distillation and reconciliation, then pulls, audits, journals and
    installs, and writes ``memory_before_commit`` / ``memory_after_commit`` (manifests) and
    ``memory_changes`` under ``lineage/wave/branch-<k>/``. A rejection at branch k quarantines with
    branches 1..k-1 installed and no ``outcomes.md``.
    Counterfactual ``push-at-wave-start``: no push at commit. Fixes: ``wave-sibling-check``,
    ``stage-wave`` (commits go to a wave stage published once).
    Not modeled: the retry of a branch after a pre-verdict physical failure; branch fixtures.
    Not modeled: boundary errors raised inside a branch (transcript audits) and their precedence over
    infra errors in the drain (the first branch error aborts the wave).
    """
    if not 0 < len(specs) <= MAX_PARALLEL:
        raise ValueError(f"a wave has 1..{MAX_PARALLEL} projects")
    snapshot = host.canonical()
    host.volume.write(
        "lineage/state.json",
        json.dumps(
            {
                "state": host.state,
                "memory_tree_sha256": tree_sha256(snapshot),
                "phase1_completed": host.phase1_completed,
            },
            sort_keys=True,
        ).encode("utf-8"),
    )
    result = WaveResult(snapshot)
    vms = [GuestVM(sim, f"branch-{k + 1}", vm_kind) for k in range(len(specs))]
    contexts: list[ActorContext | None] = [None] * len(specs)
    verdicts: list[tuple[str, str]] = [("", "")] * len(specs)
    errors: list[str] = []

    def branch(k: int, spec: ProjectSpec) -> Any:
        vm = vms[k]
        try:
            reset_null_vm(sim, vm)
            push_canonical(sim, vm, snapshot)
            ctx = actor_work(sim, host, vm, spec, route="wave")
            yield sim.timeout(spec.actor.duration_s)
            cand = vm.volume.tree.read_bytes(f"{vm.PROJECT}/result.txt")
            verdicts[k] = verify(sim, spec, cand, agent=f"verifier-{k + 1}")
            yield sim.timeout(10.0)
            push_canonical(sim, vm, snapshot)
            contexts[k] = ctx
        except (PracticeInfrastructureError, VerifierProtocolError) as exc:
            errors.append(f"branch {k + 1}: {exc}")

    procs = [sim.process(branch(k, s)) for k, s in enumerate(specs)]
    sim.run(until=sim.env.all_of(procs))
    if errors:
        result.aborted = errors[0]
        host.state = "infra"
        sim.trace.op(SYSTEM, "evolve_parallel_phase1", agent=host.agent, phase="fail", error=errors[0])
        return result
    staged = host.variant.has("stage-wave")
    target = host.WAVE_STAGE if staged else host.CANONICAL
    if staged:
        host.volume.rmtree(target)
        host.volume.mkdir(target)
        for n, d in snapshot.items():
            host.volume.write(f"{target}/{n}", d)
    for k, spec in enumerate(specs):
        vm, ctx = vms[k], contexts[k]
        assert ctx is not None
        result.contexts.append(ctx)
        latest = host.volume.read_tree(target)
        host.volume.write(
            f"lineage/wave/branch-{k + 1}/memory_before_commit.json",
            json.dumps(manifest(latest), sort_keys=True).encode("utf-8"),
        )
        if not host.variant.has("push-at-wave-start"):
            push_canonical(sim, vm, latest)
        verdict, report = verdicts[k]
        distill(sim, vm, ctx, spec.distiller, verdict, report)
        reconcile(sim, vm, ctx, spec.reconciler)
        files = pull_terminal_memory(sim, vm)
        conflicts: list[str] = []
        if host.variant.has("wave-sibling-check"):
            files, conflicts = _merge_sibling_changes(files, latest, snapshot)
        rec = commit_learning(
            sim,
            host,
            vm,
            spec.episode,
            verdict,
            authorized=spec.instruction,
            kind="wave",
            files=files,
            install_path=target,
            checkpoint=False,
        )
        if conflicts:
            rec = CommitRecord(
                rec.episode, rec.outcome, rec.verdict, rec.before, rec.after, conflicts=tuple(conflicts)
            )
        result.commits.append(rec)
        changes = memory_changes(rec.before_bank, rec.after_bank)
        result.changes.append(changes)
        if rec.outcome == "installed":  # a rejection is a boundary error: the branch records stop there
            host.volume.write(
                f"lineage/wave/branch-{k + 1}/memory_after_commit.json",
                json.dumps(manifest(rec.after_bank), sort_keys=True).encode("utf-8"),
            )
            host.volume.write(
                f"lineage/wave/branch-{k + 1}/memory_changes.json",
                json.dumps(changes, sort_keys=True).encode("utf-8"),
            )
        if rec.outcome != "installed":
            sim.trace.op(
                SYSTEM,
                "evolve_parallel_phase1",
                agent=host.agent,
                phase="fail",
                rejected_branch=k + 1,
                installed=k,
            )
            return result
    if staged:
        atomic_install_memory(sim, host, host.volume.read_tree(target))
        host.volume.rmtree(target)
    host.phase1_completed += len(specs)
    host.volume.write(
        "lineage/wave/outcomes.md",
        "\n".join(f"- {s.episode:03d}: {v[0]}" for s, v in zip(specs, verdicts)).encode(),
    )
    host.volume.write(
        "lineage/state.json",
        json.dumps(
            {
                "state": host.state,
                "memory_tree_sha256": tree_sha256(host.canonical()),
                "phase1_completed": host.phase1_completed,
            },
            sort_keys=True,
        ).encode("utf-8"),
    )
    result.outcome_written = True
    sim.trace.op(
        SYSTEM,
        "evolve_parallel_phase1",
        agent=host.agent,
        branches=len(specs),
        canonical=tree_sha256(host.canonical()),
    )
    return result


def wave_resume_allowed(host: Host) -> bool:
    """The wave-resume precondition this model checks: the canonical bank equals the tree recorded in
    ``state.json`` (upstream also checks the memory chain, protocol and PHASE1_WAVE_COMPLETED total).
    Not modeled: the other preconditions of §2.17."""
    vol = host.volume
    if not vol.tree.exists("lineage/state.json"):
        return True
    state = json.loads(vol.tree.read_text("lineage/state.json"))
    return bool(state.get("memory_tree_sha256") == tree_sha256(host.canonical()))


# ======================================================================================================
# Benchmark memory attachment (RT-RTE-task-execution annotation)
# ======================================================================================================
@dataclass
class EvalRecord:
    """What an evaluation run records about memory, and what the Actor actually got."""

    memory_mode: str
    delivered: bool
    preamble: str
    env_memory_dir: str | None
    nudges: list[str] = field(default_factory=list)


def memory_revisit(env_memory_dir: str | None, event: str) -> str | None:
    """``_memory_revisit``: the fixed "[MEMORY RETRIEVAL OPPORTUNITY]" note after a Verifier bounce, a
    fold, a recovery, a resume or the first repeat/cycle; only when ``env_memory_dir`` is set."""
    if event not in ("bounce", "fold", "recovery", "resume", "repeat"):
        raise ValueError(f"unknown revisit event {event!r}")
    return MEMORY_REVISIT.format(root=env_memory_dir) if env_memory_dir else None


def osworld_attach_memory(
    sim: Simulation, vm: GuestVM, bank: Mapping[str, bytes], variant: Variant = FAITHFUL
) -> EvalRecord:
    """OSWorld ``benchmarks/osworld/task.py``: push the frozen snapshot; on failure warn and continue with
    memory OFF while ``env_memory_dir`` stays set and the record still says
    ``frozen_host_snapshot_copy_in_only``. Fixed variant ``osworld-record-off``: clear the flag and
    record ``off``."""
    ok = push_memory(sim, vm, bank, point=fp.OSWORLD_PUSH)
    if ok:
        rec = EvalRecord(OSWORLD_MODE, True, inventory_listing(bank, "osworld"), "~/.memory")
    elif variant.has("osworld-record-off"):
        rec = EvalRecord("off", False, "", None)
    else:
        rec = EvalRecord(OSWORLD_MODE, False, "", "~/.memory")
    sim.trace.op(
        SYSTEM,
        "osworld_attach_memory",
        agent=vm.name,
        phase="ok" if ok else "fail",
        memory_mode=rec.memory_mode,
        delivered=rec.delivered,
    )
    return rec


def verify_memory(vm: GuestVM, bank: Mapping[str, bytes]) -> bool:
    """ALE's ``verify_memory``: the guest bank equals the frozen snapshot."""
    return tree_sha256(vm.bank()) == tree_sha256(bank)


def ale_attach_memory(sim: Simulation, vm: GuestVM, bank: Mapping[str, bytes]) -> EvalRecord:
    """ALE ``benchmarks/ale/worker.py``: push the frozen snapshot and verify it; a failed upload raises
    :class:`FrozenMemoryUploadError`.

    Not modeled: the second verify_memory after the ALE episode (only the post-upload check is made).
    """
    if not push_memory(sim, vm, bank, point=fp.ALE_PUSH) or not verify_memory(vm, bank):
        sim.trace.op(SYSTEM, "ale_attach_memory", agent=vm.name, phase="fail")
        raise FrozenMemoryUploadError("Frozen evaluation memory upload failed")
    sim.trace.op(SYSTEM, "ale_attach_memory", agent=vm.name, files=len(bank))
    return EvalRecord("frozen_evaluation_memory", True, inventory_listing(bank, "ale"), "~/.memory")


# ======================================================================================================
# WORK LOG folding and stalled restart (MEM-RTE-worklog-fold, MEM-OBJ-work-log, RT-OBJ-loop-result)
# ======================================================================================================
ROLE_DEFAULTS: dict[str, LoopConfig] = {
    "config": LoopConfig(),
    "actor": LoopConfig(max_resumes=0, max_iters=2000, wall_clock_secs=86_400, agent_decided_stop=True),
    "target": LoopConfig(
        history_keep_pairs=80,
        keep_chars=500_000,
        ctx_high_water=900_000,
        ctx_low_water=500_000,
        fold_batch=10,
        worklog_max_chars=500_000,
        max_resumes=1,
        resume_synthesize_worklog=True,
        max_iters=500,
        wall_clock_secs=36_000,
        agent_decided_stop=True,
        escalation_model="moonshotai/kimi-k3",
    ),
    "verifier": LoopConfig(max_resumes=0, max_iters=2000, wall_clock_secs=86_400, agent_decided_stop=True),
    "practice_verifier": LoopConfig(
        keep_chars=500_000,
        ctx_high_water=900_000,
        ctx_low_water=500_000,
        max_resumes=0,
        max_iters=2000,
        wall_clock_secs=86_400,
        agent_decided_stop=True,
    ),
    "escalation": LoopConfig(max_resumes=0, max_iters=2000, wall_clock_secs=86_400, agent_decided_stop=True),
}
"""§2.18: the Config defaults and the role YAML overrides ("–" cells inherit the Config value).
Not modeled: a separate evaluation role YAML (evaluation runs use the target role's loop settings).
Not modeled: role keys outside the loop (actor practice_mode and independent_verify; target
verifier_persist_scratch, rollback_mirror and private paths).
Not modeled: the streak counters behind the stalled status (the max_consec_* limits are recorded; a loop
result carries its status)."""


def phase_cfg(cfg: LoopConfig) -> LoopConfig:
    """Upstream ``_phase_cfg``: practice, memory and handoff phases never fold or restart."""
    from dataclasses import replace

    return replace(cfg, history_keep_pairs=0, max_resumes=0)


FOLD_SYSTEM = (
    "Summarize the folded turns into the WORK LOG: current state, key values, next steps. "
    "Keep the existing log's facts."
)
TASK_HEADER = "TASK (verbatim, as first given):"
WORKLOG_HEADER = "WORK LOG (summary of earlier turns):"


def render_fold(batch: Sequence[Message], complete: bool = False) -> str:
    """The summarizer's view of a batch: ``[YOU]``/``[ENV]`` plus :func:`fold_input` (reasoning is never
    rendered). ``complete`` (fixed variant ``complete-fold-input``) renders the whole content.
    Not modeled: the fixed variant's per-chunk summarizer calls (one call sees every chunk)."""
    return "\n\n".join(
        ("[YOU]\n" if m.role == "assistant" else "[ENV]\n")
        + (str(m.content) if complete else fold_input(m.content))
        for m in batch
    )


def digest_fallback(worklog: str, batch: Sequence[Message], max_chars: int, trim_digest: bool = False) -> str:
    """The blank-summary fallback: append the digest lines; over the cap keep the newest tail at a line
    boundary, which can erase the old log. ``trim_digest`` (fixed variant) trims the digest instead."""
    lines = digest_lines(batch)
    if trim_digest:
        room = max_chars - len(worklog) - (1 if worklog else 0)
        kept: list[str] = []
        for ln in reversed(lines):
            if room - len(ln) - (1 if kept else 0) < 0:
                break
            room -= len(ln) + (1 if kept else 0)
            kept.insert(0, ln)
        return "\n".join(([worklog] if worklog else []) + kept)
    text = "\n".join(([worklog] if worklog else []) + lines)
    if len(text) > max_chars:
        tail = text[-max_chars:]
        nl = tail.find("\n")
        text = tail[nl + 1 :] if nl != -1 else tail
    return text


class ActorLoop:
    """One ``core/loop.py`` segment with folding (MEM-RTE-worklog-fold): the task, the history of
    (assistant, env) pairs, the WORK LOG and how many pairs it covers.

    Size is ``len(summary)`` plus content and reasoning of the unfolded messages, kept as prefix sums so
    a fold decision costs what it keeps. Folding happens only when ``history_keep_pairs > 0``.
    """

    def __init__(
        self,
        sim: Simulation,
        cfg: LoopConfig,
        summarizer: Summarizer,
        *,
        task: str,
        agent: str = "actor",
        variant: Variant = FAITHFUL,
        system_prompt: str = "",
        env_memory_dir: str | None = None,
        rng_name: str = "rsiagent.summarizer",
    ) -> None:
        self.sim = sim
        self.cfg = cfg
        self.summarizer = summarizer
        self.task = task
        self.agent = agent
        self.variant = variant
        self.system_prompt = system_prompt
        self.env_memory_dir = env_memory_dir
        self.rng = sim.rng(rng_name)
        self.messages: list[Message] = []
        self._cum: list[int] = [0]
        self._pair_content: list[int] = []
        self.covered = 0
        self.summary = ""
        self.folds: list[FoldEvent] = []
        self._nudge: str | None = None
        self.prior: tuple[Message, ...] = ()  # earlier attempts' history (``history + h2``)

    @property
    def pairs(self) -> int:
        return len(self.messages) // 2

    def add_pair(self, assistant: Message, env: Message) -> list[FoldEvent]:
        """Append one turn (the Actor's reply and the environment's observation), then maybe fold."""
        for m in (assistant, env):
            self.messages.append(m)
            self._cum.append(self._cum[-1] + len(m.content) + len(m.reasoning))
        self._pair_content.append(len(assistant.content) + len(env.content))
        return self.maybe_fold()

    def size(self) -> int:
        """``len(summary)`` + content + reasoning of the unfolded messages."""
        return len(self.summary) + self._cum[-1] - self._cum[2 * self.covered]

    def keep(self) -> int:
        """The effective keep window over all pairs."""
        c = self.cfg
        return _effective_keep_sizes(self._pair_content, c.history_keep_pairs, c.keep_chars, c.keep_ceiling)

    def foldable(self) -> int:
        return self.pairs - self.keep() - self.covered

    def maybe_fold(self) -> list[FoldEvent]:
        """Fold per the high/low-water hysteresis (or the legacy pair count when ``ctx_high_water`` is 0).

        High water: above it, fold exactly ``fold_batch`` oldest pairs while size > low and at least a
        batch is foldable (fixed variant ``partial-fold-batch`` folds a partial last batch), which can
        stop above high. Legacy: once a batch is foldable, fold all foldable pairs in one call.
        """
        c = self.cfg
        if not c.folding:
            return []
        out: list[FoldEvent] = []
        if c.ctx_high_water <= 0:
            n = self.foldable()
            if n >= c.fold_batch:
                out.append(self._fold_once(n))
            return out
        size = self.size()
        if size <= c.ctx_high_water:
            return out
        low = c.ctx_low_water or c.ctx_high_water // 2
        keep = self.keep()
        while size > low:
            n = self.pairs - keep - self.covered
            if n < c.fold_batch:
                if not (self.variant.has("partial-fold-batch") and n > 0):
                    break
            else:
                n = c.fold_batch
            out.append(self._fold_once(n))
            size = self.size()
        if size > c.ctx_high_water:
            self.sim.trace.op(
                SYSTEM,
                "fold_guard",
                agent=self.agent,
                phase="info",
                size=size,
                high=c.ctx_high_water,
                foldable=self.pairs - keep - self.covered,
            )
        return out

    def _fold_once(self, n: int) -> FoldEvent:
        """Upstream ``_fold_once``: summarize the *n* oldest unfolded pairs into the WORK LOG."""
        first = self.covered
        batch = self.messages[2 * first : 2 * (first + n)]
        rendered = render_fold(batch, complete=self.variant.has("complete-fold-input"))
        self.sim.request(
            SYSTEM, "loop.fold", [FOLD_SYSTEM, self.summary, rendered], agent=self.agent, pairs=n
        )
        out = self.summarizer.summarize(self.summary, rendered, self.rng)
        if out.strip():
            self.summary = cap_worklog(out, self.cfg.worklog_max_chars)
            mode = "summary"
        else:
            self.summary = digest_fallback(
                self.summary, batch, self.cfg.worklog_max_chars, self.variant.has("trim-digest")
            )
            mode = "digest"
        seen: set[str] = set()
        for m in batch:
            seen |= extract_facts(m.content)
        lost = tuple(sorted(seen - extract_facts(rendered)))
        self.covered += n
        ev = FoldEvent(first, n, mode, len(self.summary), lost)
        self.folds.append(ev)
        self._nudge = memory_revisit(self.env_memory_dir, "fold")
        self.sim.trace.op(
            SYSTEM,
            "fold_once",
            agent=self.agent,
            first_pair=first,
            pairs=n,
            mode=mode,
            summary_chars=len(self.summary),
            lost_middle_facts=list(lost),
        )
        return ev

    def context(self, question: str = "") -> list[str]:
        """The model context: system prompt, the task (+ the WORK LOG as one user message after a fold),
        the unfolded messages, any pending memory-revisit note and *question*."""
        head = (
            self.task
            if not self.summary
            else f"{TASK_HEADER}\n{self.task}\n\n{WORKLOG_HEADER}\n{self.summary}"
        )
        parts = ([self.system_prompt] if self.system_prompt else []) + [head]
        parts += [m.content for m in self.messages[2 * self.covered :]]
        if self._nudge:
            parts.append(self._nudge)
            self._nudge = None
        if question:
            parts.append(question)
        return parts

    def request(self, question: str = "", route: str = "loop.step", **detail: Any) -> list[str]:
        """Assemble the next model context and record it with ``sim.request``."""
        parts = self.context(question)
        self.sim.request(SYSTEM, route, parts, agent=self.agent, **detail)
        return parts

    def result(self, status: str, surface_delta: str = "") -> LoopResult:
        """The segment's ``LoopResult`` (its ``worklog`` is this segment's log)."""
        return LoopResult(status, self.pairs, self.summary, self.prior + tuple(self.messages), surface_delta)


def resume_eligible(res: LoopResult, resumes: int, cfg: LoopConfig, wall_left_s: float) -> bool:
    """``run_with_resume`` eligibility: status ``stalled`` (never safety_ceiling, budget or
    stalled_quiescent), ``resumes < max_resumes``, at least 10 iterations and 300 s left."""
    return (
        res.status == ELIGIBLE_STALL
        and resumes < cfg.max_resumes
        and cfg.max_iters - res.iters >= RESUME_MIN_ITERS
        and wall_left_s >= RESUME_MIN_WALL_S
    )


def synthesize_worklog(history: Sequence[Message], max_chars: int) -> str:
    """The synthesized handoff log: the last 60 messages, each through :func:`fold_input`, capped at
    ``worklog_max_chars`` (rendered as a fold batch)."""
    return cap_worklog(render_fold(list(history)[-SYNTH_MESSAGES:]), max_chars)


def handoff_message(worklog: str) -> str:
    """The factual restart handoff.

    Not modeled: the exact wording of the restart and pivot handoff messages.
    """
    return "You are resuming on the same machine. WORK LOG from your previous attempt:\n" + worklog


def pivot_handoff_message(review: str, worklog: str) -> str:
    """The pivot handoff: the strategy review, then the log.

    Not modeled: the exact wording of the restart and pivot handoff messages.
    """
    return f"STRATEGY PIVOT.\n{review}\n\nWORK LOG from your previous attempt:\n{worklog}"


def stalled_handoff(
    sim: Simulation,
    cfg: LoopConfig,
    res: LoopResult,
    history: Sequence[Message],
    *,
    variant: Variant = FAITHFUL,
    reviewer: Reviewer | None = None,
    agent: str = "actor",
) -> Handoff:
    """Build the restart handoff of ``run_with_resume`` (MEM-OBJ-work-log, MEM-RTE-worklog-fold).

    ``wl`` is ``res.worklog`` (or, when empty and synthesis is on, the synthesized log). On the pivot path
    (``strategy_pivot`` and no file delta) the strategy review sees the last 6 messages (≤1,500 chars
    each, ≤6,000 in all) and ``res.worklog`` (≤8,000), not ``wl``; the handoff is
    ``pivot_handoff_message(review, wl[:6000])``, otherwise ``handoff_message(wl[:12000])``. Fixes:
    ``review-gets-wl`` and ``handoff-cap-worklog`` (cap at ``worklog_max_chars``).
    """
    reviewer = reviewer or Reviewer()
    wl = res.worklog if cfg.resume_with_worklog else ""
    if not wl and cfg.resume_synthesize_worklog:
        wl = synthesize_worklog(history, cfg.worklog_max_chars)
    fix_cap = variant.has("handoff-cap-worklog")
    if cfg.strategy_pivot and res.surface_delta == "":
        review_log = (wl if variant.has("review-gets-wl") else res.worklog)[:REVIEW_LOG_CAP]
        tail = "\n\n".join(
            ("[YOU]\n" if m.role == "assistant" else "[ENV]\n") + m.content[:REVIEW_MESSAGE_CHARS]
            for m in list(history)[-REVIEW_MESSAGES:]
        )[:REVIEW_TAIL_CAP]
        sim.request(
            SYSTEM,
            "loop.strategy_review",
            ["Review the stalled attempt and propose a different strategy.", review_log, tail],
            agent=agent,
        )
        review = reviewer.review(review_log, tail)[:REVIEW_OUT_CAP]
        msg = pivot_handoff_message(review, wl[: cfg.worklog_max_chars if fix_cap else cfg.pivot_cap])
        out = Handoff(msg, wl, True, review, review_log)
    else:
        msg = handoff_message(wl[: cfg.worklog_max_chars if fix_cap else cfg.handoff_cap])
        out = Handoff(msg, wl, False)
    sim.trace.op(
        SYSTEM, "stalled_handoff", agent=agent, pivot=out.pivot, worklog_chars=len(wl), handoff_chars=len(msg)
    )
    return out


def resume(loop: ActorLoop, handoff: Handoff) -> ActorLoop:
    """A fresh attempt: a new context on the same machine whose task carries the handoff; the old
    history is kept aside (``history + h2``) so a later synthesis sees both attempts."""
    fresh = ActorLoop(
        loop.sim,
        loop.cfg,
        loop.summarizer,
        task=f"{loop.task}\n\n{handoff.message}",
        agent=loop.agent,
        variant=loop.variant,
        system_prompt=loop.system_prompt,
        env_memory_dir=loop.env_memory_dir,
    )
    fresh._nudge = memory_revisit(loop.env_memory_dir, "resume")
    fresh.prior = loop.prior + tuple(loop.messages)
    loop.sim.trace.op(SYSTEM, "resume", agent=loop.agent, handoff_chars=len(handoff.message))
    return fresh


# ======================================================================================================
# Verifier replay and scratch (MEM-RTE-verifier-replay, MEM-OBJ-verifier-scratch)
# ======================================================================================================
LOSSLESS = "LOSSLESS RESULT OF YOUR PREVIOUS SUBSTANTIVE ACTION"
ORIGINAL = "ORIGINAL CONTEXT THAT PRECEDED YOUR NEXT RECORDED ACTION"


def parse_turn(text: str) -> str | None:
    """``parse_turn``: ``program`` or ``look`` when the reply's first non-empty line starts ``PROGRAM:`` or
    ``LOOK:``, else None.

    Not modeled: upstream's real action grammar.
    """
    first = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    if first.startswith("PROGRAM:"):
        return "program"
    if first.startswith("LOOK:"):
        return "look"
    return None


def actionless_fingerprint(text: str) -> str | None:
    """sha256 of the lowercased, whitespace-collapsed reply, only for actionless replies."""
    if parse_turn(text) is not None:
        return None
    return hashlib.sha256(" ".join(text.lower().split()).encode("utf-8")).hexdigest()


def substantive_checkpoint(
    base: Sequence[Message], raw: Sequence[Message]
) -> tuple[list[Message], Message | None]:
    """``_agentic_substantive_checkpoint``: keep *raw* through its last new Program/Look assistant turn;
    that action's observation becomes the pending observation. No new action: *base*. Raises ValueError
    when *raw* does not extend *base* or pairs are incomplete."""
    if list(raw[: len(base)]) != list(base) or len(raw) % 2 != len(base) % 2:
        raise ValueError("raw segment must extend base with complete pairs")
    last = None
    for i in range(len(base), len(raw)):
        if raw[i].role == "assistant" and parse_turn(raw[i].content) is not None:
            last = i
    if last is None:
        return list(base), None
    pending = raw[last + 1] if last + 1 < len(raw) else None
    return list(raw[: last + 1]), pending


def _merge_images(*msgs: Message) -> tuple[dict[str, str], ...]:
    out: list[dict[str, str]] = []
    keys: set[Any] = set()
    for m in msgs:
        for att in m.images:
            k = att.get("sha256") or (att.get("mime_type"), att.get("data"))
            if k not in keys:
                keys.add(k)
                out.append(att)
    return tuple(out)


def semantic_replay(history: Sequence[Message]) -> list[Message]:
    """Semantic replay: the first user turn verbatim, then only substantive (Program/Look) pairs; each
    later user turn is the LOSSLESS RESULT of the previous action plus, if different, the ORIGINAL
    CONTEXT that preceded the next action (images merged)."""
    if not history:
        return []
    out = [history[0]]
    acts = [i for i, m in enumerate(history) if m.role == "assistant" and parse_turn(m.content)]
    for j, i in enumerate(acts):
        if j > 0:
            prev = acts[j - 1]
            result = history[prev + 1]
            ctx = history[i - 1]
            text = f"{LOSSLESS}\n{result.content}"
            msgs = [result]
            if i - 1 != prev + 1:
                text += f"\n\n{ORIGINAL}\n{ctx.content}"
                msgs.append(ctx)
            out.append(Message("user", text, images=_merge_images(*msgs)))
        out.append(history[i])
    if acts and acts[-1] + 1 < len(history):
        res = history[acts[-1] + 1]
        out.append(Message("user", f"{LOSSLESS}\n{res.content}", images=res.images))
    return out


def _chars(msgs: Sequence[Message]) -> int:
    return sum(len(m.content) for m in msgs)


def recovery_history(history: Sequence[Message], *, recurrent: bool) -> list[Message]:
    """The Verifier's recovered history: semantic replay when an actionless fingerprint recurred (or the
    persisted ``transport_recurrence`` flag is set) and the replay is shorter; otherwise unchanged."""
    if recurrent:
        replay = semantic_replay(history)
        if _chars(replay) < _chars(history):
            return replay
    return list(history)


@dataclass
class VerifierSession:
    """The persistent Verifier role state across segments (MEM-RTE-verifier-replay): history, pending
    observation, seen actionless fingerprints and the no-progress counter."""

    history: list[Message] = field(default_factory=list)
    pending: Message | None = None
    fingerprints: set[str] = field(default_factory=set)
    no_progress: int = 0
    transport_recurrence: bool = False

    def segment(self, sim: Simulation, raw: Sequence[Message]) -> list[Message]:
        """Record one raw segment: checkpoint it, update fingerprints, replay when they recur and count
        segments without progress (three raise :class:`AgenticVerifierNoProgressError`)."""
        base = list(self.history)
        kept, pending = substantive_checkpoint(base, raw)
        progress = len(kept) > len(base)
        recurrent = self.transport_recurrence
        for m in raw[len(base) :]:
            fpn = actionless_fingerprint(m.content) if m.role == "assistant" else None
            if fpn is not None:
                if fpn in self.fingerprints and not progress:
                    recurrent = self.transport_recurrence = True
                self.fingerprints.add(fpn)
        self.history = recovery_history(kept, recurrent=recurrent)
        if pending is not None:
            self.pending = pending
        self.no_progress = 0 if progress else self.no_progress + 1
        sim.trace.op(
            SYSTEM,
            "verifier_segment",
            agent="verifier",
            progress=progress,
            replay=recurrent,
            kept=len(self.history),
            no_progress=self.no_progress,
        )
        if self.no_progress >= NO_PROGRESS_SEGMENTS:
            raise AgenticVerifierNoProgressError(f"{NO_PROGRESS_SEGMENTS} segments without progress")
        return self.history


@dataclass
class Scratch:
    """The Verifier's private scratch filesystem behind its protected executor (opaque bytes)."""

    files: dict[str, bytes] = field(default_factory=dict)
    closed: bool = False
    rolled_back: bool = False


def detach_executor(sim: Simulation, scratch: Scratch, *, retry_path: bool) -> bytes | None:
    """``detach_executor`` (MEM-OBJ-verifier-scratch): export the scratch archive, close, roll back (always).
    A failed export (``fail@rsiagent.verifier.export_scratch``) is tolerated only on the infra-retry path
    (the archive becomes None); otherwise it re-raises."""
    archive: bytes | None = None
    try:
        sim.faults.point(fp.SCRATCH_EXPORT)
        archive = journal_archive(scratch.files, 0)
    except WriteFailed:
        if not retry_path:
            scratch.closed = scratch.rolled_back = True
            sim.trace.op(SYSTEM, "detach_executor", agent="verifier", phase="fail", retry_path=False)
            raise
    finally:
        scratch.closed = scratch.rolled_back = True
    sim.trace.op(
        SYSTEM, "detach_executor", agent="verifier", exported=archive is not None, retry_path=retry_path
    )
    return archive


# ======================================================================================================
# Durable images (MEM-OBJ-durable-images)
# ======================================================================================================
def sniff_mime(data: bytes) -> str:
    """The image MIME type from magic bytes (PNG, JPEG, GIF, WebP); default ``image/png``."""
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return "image/png"


def image_attachment(data: bytes) -> dict[str, str]:
    """One ``_rsiagent_images`` entry: the whole image, never resized or interpreted."""
    return {
        "mime_type": sniff_mime(data),
        "sha256": hashlib.sha256(data).hexdigest(),
        "data": base64.b64encode(data).decode("ascii"),
    }


def with_durable_images(message: Message, images: Sequence[bytes | dict[str, str]]) -> Message:
    """Keep the existing attachments, then add new ones deduplicated by sha256 (or ``(mime, data)``)."""
    new = [image_attachment(i) if isinstance(i, bytes) else i for i in images]
    merged = _merge_images(message, Message("user", "", images=tuple(new)))
    return Message(message.role, message.content, message.reasoning, merged)


def durable_user_message(text: str, images: Sequence[bytes] = ()) -> Message:
    """``durable_user_message``: a JSON-safe user message with its images stored in full."""
    return with_durable_images(Message("user", text), list(images))


def wire_message(message: Message) -> list[dict[str, Any]]:
    """``_wire_message``: one text part plus one data-URL image part per attachment."""
    parts: list[dict[str, Any]] = [{"type": "text", "text": message.content}]
    for att in message.images:
        parts.append(
            {"type": "image_url", "image_url": {"url": f"data:{att['mime_type']};base64,{att['data']}"}}
        )
    return parts


def agentic_image_bytes(att: Mapping[str, str]) -> bytes:
    """``_agentic_image_bytes``: strict base64 decode and sha256 check; raises ValueError."""
    try:
        data = base64.b64decode(att["data"], validate=True)
    except (ValueError, KeyError) as exc:
        raise ValueError(f"bad image attachment: {exc}") from exc
    if att.get("sha256") and hashlib.sha256(data).hexdigest() != att["sha256"]:
        raise ValueError("image attachment sha256 mismatch")
    return data


def scope_prior_curriculum_visuals(messages: Sequence[Message]) -> list[Message]:
    """At a Curriculum project boundary: strip pixels, leaving a note with the count and the sha list."""
    out = []
    for m in messages:
        if not m.images:
            out.append(m)
            continue
        shas = [a.get("sha256", "") for a in m.images]
        note = f"\n[{len(shas)} prior image(s) removed at the project boundary; sha256: {', '.join(shas)}]"
        out.append(Message(m.role, m.content + note, m.reasoning))
    return out


def validate_wave_publication(pub: Mapping[str, Any]) -> list[dict[str, str]]:
    """The Curriculum's wave publication ``{decision: WAVE|SATURATED|STALLED, rationale, projects}``: each
    project id matches ``[a-z0-9][a-z0-9_-]{0,63}`` and is unique, each instruction names the project
    root, at most ``max_parallel`` projects. Returns the projects; raises ValueError."""
    if pub.get("decision") not in ("WAVE", "SATURATED", "STALLED") or not isinstance(
        pub.get("rationale"), str
    ):
        raise ValueError("wave publication needs decision WAVE|SATURATED|STALLED and a rationale")
    projects = list(pub.get("projects") or [])
    if pub["decision"] == "WAVE" and not 0 < len(projects) <= MAX_PARALLEL:
        raise ValueError(f"a WAVE publishes 1..{MAX_PARALLEL} projects")
    ids = [p.get("id", "") for p in projects]
    if len(set(ids)) != len(ids) or not all(BRANCH_ID_RE.fullmatch(str(i)) for i in ids):
        raise ValueError("project ids must be unique and match [a-z0-9][a-z0-9_-]{0,63}")
    if not all(PROJECT_ROOT in str(p.get("instruction", "")) for p in projects):
        raise ValueError("every instruction must name " + PROJECT_ROOT)
    return projects
