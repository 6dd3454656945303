"""Pure functions of the RSIAgent model (exported): audit words and shingles, the fold texts, hashes,
manifests, inventories, name checks, handoff parsing and journal archives."""

from __future__ import annotations

import functools
import gzip
import hashlib
import io
import json
import re
import tarfile
from collections.abc import Iterable, Mapping, Sequence
from pathlib import PurePosixPath
from typing import Any

from sim.text import extract_facts
from systems.rsiagent.model.common import (
    DECISION_PHASE1_RE,
    DECISION_RE,
    DIGEST_CHARS,
    ELISION,
    FOLD_HEAD,
    FOLD_TAIL,
    KEEP_FLOOR,
    NEAR_WINDOW,
    PROJECT_ROOT,
    SHINGLE_N,
    VERDICT_RE,
    WORKLOG_MARKER,
    VerifierProtocolError,
)
from systems.rsiagent.model.texts import memory_preamble
from systems.rsiagent.state import Message

_WORD = re.compile(r"[a-z0-9]+")


def words(text: str) -> list[str]:
    """The audit's words: ``[a-z0-9]+`` matches of the lowercased text (``don't`` gives ``don``, ``t``)."""
    return _WORD.findall(text.lower())


def shingles(text: str) -> frozenset[str]:
    """Every 8-word shingle of *text* (words joined by one space); none when it has fewer than 8 words."""
    w = words(text)
    return frozenset(" ".join(w[i : i + SHINGLE_N]) for i in range(len(w) - SHINGLE_N + 1))


# -- the exam fence (``tools/exam_fence.py``), which audits texts: notes, handoffs, prompts, transcripts --
EXAM_SEATS = ("042", "044", "056", "011", "036", "062", "001", "005", "006", "085")
PATH_PAT = re.compile(r"OSWorld-V2|evaluation_examples|task_class", re.I)
REPO_PAT = re.compile(r"github\.com/+[^ '\"]*OSWorld|xlang-ai", re.I)
TASKID_PAT = re.compile(r"\btask[_ ]?0*(" + "|".join(EXAM_SEATS) + r")\b", re.I)
_FENCE_WORD = re.compile(r"[a-z0-9']+")


def fence_words(text: str) -> list[str]:
    """The fence's words: ``[a-z0-9']+`` of the lowercased text (an apostrophe stays inside a word)."""
    return _FENCE_WORD.findall(text.lower())


def fence_grams(instructions: Iterable[str]) -> frozenset[str]:
    """``_instruction_8grams``: the 8-grams of the exam-seat instructions, in the fence's own words."""
    out: set[str] = set()
    for text in instructions:
        w = fence_words(text)
        out |= {" ".join(w[i : i + 8]) for i in range(len(w) - 7)}
    return frozenset(out)


def audit_text(
    text: str, grams: frozenset[str] | set[str], *, mode: str = "practice", authorized_instruction: str = ""
) -> list[dict[str, str]]:
    """``exam_fence.audit_text``: the violation records of one text (empty means clean). Any mode: a
    benchmark path (``OSWorld-V2|evaluation_examples|task_class``) or repository URL; ``practice`` mode
    also an exam task id and the first instruction 8-gram (in the fence's words) that neither is an
    8-gram of the authorized instruction nor passes its 12-word near window.
    Not modeled: the exam fence's grader-constant tuples (L4: they need the graders' sources)."""
    hits: list[dict[str, str]] = []
    for kind, pat in (("exam-path", PATH_PAT), ("repo-url", REPO_PAT)):
        m = pat.search(text)
        if m:
            hits.append({"kind": kind, "match": m.group(0)})
    if mode == "practice":
        m = TASKID_PAT.search(text)
        if m:
            hits.append({"kind": "task-id", "match": m.group(0)})
        aw = fence_words(authorized_instruction) if authorized_instruction else []
        allowed = {" ".join(aw[i : i + 8]) for i in range(len(aw) - 7)}
        w = fence_words(text)
        for i in range(len(w) - 7):
            g = " ".join(w[i : i + 8])
            if g in grams and g not in allowed and not authorized_near_shingle(g, aw):
                hits.append({"kind": "instruction-8gram", "match": g})
                break
    return hits


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
    if not fold_elides(len(s), head, tail):
        return s
    return s[:head] + ELISION + s[-tail:]


def fold_elides(chars: int, head: int = FOLD_HEAD, tail: int = FOLD_TAIL) -> bool:
    """Whether :func:`fold_input` elides the middle of a content *chars* characters long."""
    return chars > head + tail


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


def listing(files: Mapping[str, bytes]) -> str:
    """Upstream ``_listing``: sorted ``"{name}  {len}B"`` lines ("" for an empty bank)."""
    return "\n".join(f"{n}  {len(files[n])}B" for n in sorted(files))


def inventory_listing(files: Mapping[str, bytes], route: str = "practice") -> str:
    """The Actor's names-and-sizes inventory (no bodies, no privileged index, no ranking).

    ``practice`` (and ``wave``): what the Actor charter fences between ``---`` lines, upstream
    ``_listing(...).strip()`` or ``(no durable memory files yet)``; ``osworld``: ``memory_preamble`` of
    ``"  {size:>7}  {relpath}"`` lines (``Current durable-memory inventory (N files):``, or ``...: empty
    (0 files).``); ``ale``: ``memory_preamble(_listing)``.
    """
    if route in ("practice", "wave"):
        return listing(files).strip() or "(no durable memory files yet)"
    if route == "osworld":
        return memory_preamble("\n".join(f"  {len(files[n]):>7}  {n}" for n in sorted(files)))
    if route == "ale":
        return memory_preamble(listing(files))
    raise ValueError(f"unknown inventory route {route!r}")


def safe_memory_name(name: object) -> bool:
    """Upstream ``_safe_memory_name``: a non-empty str whose ``pathlib`` path is relative and has no
    empty, ``.`` or ``..`` part (so ``.``, ``./a``, ``a//b``, ``a/`` and ``a/./b`` are safe: pathlib
    normalizes them)."""
    if not isinstance(name, str) or not name:
        return False
    path = PurePosixPath(name)
    return not path.is_absolute() and all(part not in ("", ".", "..") for part in path.parts)


def memory_path(name: str) -> str:
    """Where ``stage / name`` lands for a safe *name* (``pathlib`` drops ``.`` parts and repeated or
    trailing slashes); "" for ``.`` itself (the stage root)."""
    out = str(PurePosixPath(name))
    return "" if out == "." else out


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
    """Upstream ``_parse_unique_handoff`` with ``^VERDICT: (PASS|FAIL)$`` (``practice_loop.py:413-445``): a
    line whose stripped form starts with ```` ``` ```` or ``~~~`` toggles a fence whose marker (its first
    three characters) only the same marker closes; lines inside a fence or indented by a tab or four spaces
    are skipped; exactly one stripped line must ``fullmatch`` the token. Raises
    :class:`VerifierProtocolError`."""
    found = []
    fence: str | None = None
    for line in report.splitlines():
        stripped = line.strip()
        if stripped.startswith(("```", "~~~")):
            marker = stripped[:3]
            if fence is None:
                fence = marker
            elif marker == fence:
                fence = None
            continue
        if fence is not None or line.startswith(("\t", "    ")):
            continue
        m = VERDICT_RE.fullmatch(stripped)
        if m:
            found.append(m.group(1))
    if len(found) != 1:
        raise VerifierProtocolError(f"expected one VERDICT line outside code fences, found {len(found)}")
    return found[0]


def journal_archive(files: Mapping[str, bytes], mtime: int, name: str = "") -> bytes:
    """The ``ep{NNN}.tgz`` bytes: a gzip tar (``tarfile.open(path, "w:gz")``: PAX, level 9) of the files
    only, sorted, every member and the gzip header stamped *mtime*, the header carrying the archive's file
    name *name* (``gzip`` drops a ``.gz`` suffix; ``ep001.tgz`` keeps its name), so the same tree, clock and
    name give the same bytes."""
    items = tuple(sorted(files.items()))
    if _small(items):
        return _journal_archive(items, mtime, name)
    return _journal_archive.__wrapped__(items, mtime, name)


@functools.lru_cache(maxsize=512)
def _journal_archive(items: tuple[tuple[str, bytes], ...], mtime: int, name: str = "") -> bytes:
    # pure (same tree and mtime, same bytes), so memoized for small trees: a tgz costs ~0.6 ms to build
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for member, data in items:
            info = tarfile.TarInfo(member)
            info.size = len(data)
            info.mtime = mtime
            info.mode = 0o644
            tar.addfile(info, io.BytesIO(data))
    out = io.BytesIO()
    with gzip.GzipFile(filename=name, fileobj=out, mode="wb", mtime=mtime) as gz:
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
