"""The memory document tools (``env/tools/tools.py``): ids, paths, overwrite then append, versions.

MEM-OBJ-memory-doc, MEM-OBJ-memory-history, MEM-RTE-document-write, MEM-RTE-document-read. The pure
functions are upstream's; :class:`MemoryTools` is the env server's part that writes the files (wall
times from the server's modeled clock, the step from the env tick).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from sim.faults import Crash
from systems.merchantbench import faults as fp
from systems.merchantbench.model.base import RunState
from systems.merchantbench.model.constants import (
    LEGACY_VERSION_MARKER,
    MEMORY_DOC_MAX_BYTES,
    SYSTEM,
    VERSION_MARKER,
)
from systems.merchantbench.state import (
    ATOMIC_WRITE,
    DOCUMENTS_OFF,
    FRAMED_VERSIONS,
    HISTORY_OFF,
    INJECTIVE_IDS,
    RAW_NEWLINES,
    READ_EMPTY,
)

_UNSAFE_ID = re.compile(r"[^A-Za-z0-9_.-]+")
_MARKERS = (VERSION_MARKER.encode(), LEGACY_VERSION_MARKER.encode())
#: The bytes of a history file's end remembered with its marker count (:meth:`MemoryTools._marker_count`).
_TAIL = 64


def safe_agent_id(agent_id: Any) -> str:
    """The file-name form of *agent_id* (MEM-OBJ-memory-doc): ``"agent"`` if falsy, runs outside
    ``[A-Za-z0-9_.-]`` become one ``_``, ``._`` stripped at both ends, ``"agent"`` if empty."""
    s = _UNSAFE_ID.sub("_", str(agent_id or "agent")).strip("._")
    return s or "agent"


def injective_agent_id(agent_id: Any) -> str:
    """Fixed variant (``injective-ids``): percent-escape every character outside ``[a-z0-9_-]`` (upper-case
    letters included, as ``%XX`` of their UTF-8 bytes) behind an ``id-`` prefix; injective, and still
    injective on a case-insensitive filesystem. ``None`` is treated as ``""``."""
    text = "" if agent_id is None else str(agent_id)
    out = []
    for ch in text:
        if ch.isascii() and (ch.islower() or ch.isdigit() or ch in "_-"):
            out.append(ch)
        else:
            out.extend(f"%{b:02X}" for b in ch.encode("utf-8", "surrogatepass"))
    return "id-" + "".join(out)


def next_memory_version(history_text: str) -> int:
    """``1 +`` the substring counts of the current and the legacy version markers anywhere in the history
    file (MEM-OBJ-memory-history); earlier bodies count too."""
    return 1 + history_text.count(VERSION_MARKER) + history_text.count(LEGACY_VERSION_MARKER)


_FRAME = re.compile(
    rb"<!-- (?:merchantbench|realshop)-memory-version (\d+) -->\n## Memory version \d+\n- step: [^\n]*\n"
    rb"- wall_ms: [^\n]*\n- bytes: (\d+)\n\n"
)


def parse_history_entries(history: bytes) -> list[tuple[int, bytes]]:
    """The framed entries of a history file as (labelled version, body bytes), parsed header by header
    using each entry's ``bytes`` length to skip its body; parsing stops at the first malformed frame."""
    pos = 0
    out: list[tuple[int, bytes]] = []
    while pos < len(history):
        if out:
            if history[pos : pos + 2] != b"\n\n":
                break
            pos += 2
        m = _FRAME.match(history, pos)
        if m is None:
            break
        size = int(m[2])
        body = history[m.end() : m.end() + size]
        pos = m.end() + size + (1 if size and not body.endswith(b"\n") else 0)
        out.append((int(m[1]), body))
    return out


def count_history_entries(read: Callable[[int, int], bytes], size: int) -> int:
    """``len(parse_history_entries(history))`` for a history of *size* bytes read piece by piece
    (``read(offset, length)``): each header is matched on a window that doubles until it holds the whole
    frame (or the rest of the file), each body skipped by its ``bytes`` length, so a long run's summary
    never holds the file."""
    pos = n = 0
    while pos < size:
        if n:
            if read(pos, 2) != b"\n\n":
                break
            pos += 2
        window = 256
        while True:
            head = read(pos, window)
            m = _FRAME.match(head)
            if m is not None or pos + window >= size:
                break
            window *= 2
        if m is None:
            break
        body = int(m[2])
        end = pos + m.end() + body
        pos = end + (1 if body and read(end - 1, 1) != b"\n" else 0)
        n += 1
    return n


def framed_version_count(history: bytes) -> int:
    """Fixed variant (``framed-versions``): the number of framed entries (markers inside bodies are not
    counted)."""
    return len(parse_history_entries(history))


def history_entry(version: int, step: int, wall_ms: int, size: int, content: str, *, first: bool) -> str:
    """The text one write appends to the history file (``\\n\\n`` first unless the file is empty)."""
    text = "" if first else "\n\n"
    text += (
        f"{VERSION_MARKER}{version} -->\n## Memory version {version}\n- step: {step}\n"
        f"- wall_ms: {wall_ms}\n- bytes: {size}\n\n{content}"
    )
    if content and not content.endswith("\n"):
        text += "\n"
    return text


class MemoryTools(RunState):
    """The env server's memory document tools, mixed into :class:`~systems.merchantbench.model.MerchantEnv`
    (it supplies ``sim``, ``tree``, ``variant``, ``t``, ``run_dir`` and ``casefold_paths``)."""

    @property
    def memory_dir(self) -> str:
        return f"{self.run_dir}/agent/memory"

    def _fs(self, path: str) -> str:
        return path.lower() if self.casefold_paths else path

    def memory_doc_path(self, agent_id: Any) -> str:
        """``<runs_root>/<run_id>/agent/memory/<safe>.md`` (fixed: the injective encoding)."""
        if self.variant.has(INJECTIVE_IDS):
            return self._fs(f"{self.memory_dir}/{injective_agent_id(agent_id)}.md")
        return self._fs(f"{self.memory_dir}/{safe_agent_id(agent_id)}.md")

    def memory_history_path(self, agent_id: Any) -> str:
        """``…/agent/memory/<safe>.history.md`` (fixed: ``…/agent/memory/history/<encoded>.md``)."""
        if self.variant.has(INJECTIVE_IDS):
            return self._fs(f"{self.memory_dir}/history/{injective_agent_id(agent_id)}.md")
        return self._fs(f"{self.memory_dir}/{safe_agent_id(agent_id)}.history.md")

    def write_memory_doc(self, agent_id: Any, content: Any) -> dict[str, Any]:
        """Overwrite the document, then append a history entry (MEM-OBJ-memory-doc, MEM-OBJ-memory-history,
        MEM-RTE-document-write). Non-strings are ``str()``-coerced; over 262,144 UTF-8 bytes returns
        ``ok: False`` and touches nothing. No rollback if the append fails.

        Raises UnicodeEncodeError (lone surrogate) or :class:`~sim.faults.WriteFailed` (``/act`` turns
        these into 500 in a server that keeps running), or :class:`~sim.faults.Crash` at the declared
        points (the server process dies). Off switches: ``documents-off`` stores no document,
        ``history-off`` appends no history entry. Not modeled: directory fsyncs; concurrent writers (calls
        run under ``env.lock``).
        """
        if not isinstance(content, str):
            content = str(content)
        data = content.encode("utf-8")
        size = len(data)
        if size > MEMORY_DOC_MAX_BYTES:
            result = {"ok": False, "error": f"content too large ({size} bytes, max {MEMORY_DOC_MAX_BYTES})"}
            self.sim.trace.op(SYSTEM, "write_memory_doc", agent=str(agent_id), phase="fail", bytes=size)
            return result
        doc = self.memory_doc_path(agent_id)
        self._marks().pop(doc, None)  # an aliasing id's document is another id's history file
        clock = self.server_clock.seconds  # the env server process writes the files
        faults = self.sim.faults
        if self.variant.has(DOCUMENTS_OFF):
            self._append_memory_history(agent_id, content, size)
        elif self.variant.has(ATOMIC_WRITE):
            self._append_memory_history(agent_id, content, size)
            self.tree.replace_atomic(
                doc,
                data,
                tmp_suffix=".tmp",
                clock=clock,
                between=lambda: faults.point(fp.WRITE_DOC_BEFORE_REPLACE),
            )
        else:
            try:
                faults.point(fp.WRITE_DOC_PARTIAL)
            except Crash:
                self.tree.write_text(doc, content[: len(content) // 2], clock=clock)
                raise
            self.tree.write_bytes(doc, data, clock=clock)
            faults.point(fp.WRITE_DOC_AFTER_DOCUMENT)
            faults.point(fp.WRITE_DOC_HISTORY_APPEND)
            self._append_memory_history(agent_id, content, size)
        self.sim.trace.op(SYSTEM, "write_memory_doc", agent=str(agent_id), bytes=size, path=doc, t=self.t)
        return {"ok": True, "bytes": size}

    def _append_memory_history(self, agent_id: Any, content: str, size: int) -> int:
        if self.variant.has(HISTORY_OFF):
            return 0
        path = self.memory_history_path(agent_id)
        if self.variant.has(FRAMED_VERSIONS):
            existing = self.tree.read_bytes(path) if self.tree.exists(path) else b""
            version, old = framed_version_count(existing) + 1, len(existing)
        else:
            old, marks = self._marker_count(path)
            version = 1 + marks  # next_memory_version over the whole file, counted as it grew
        wall_ms = self._server_ms()  # int(time.time()*1000) in the env server, not the agent's clock
        data = history_entry(version, self.t, wall_ms, size, content, first=not old).encode("utf-8")
        self.tree.append_bytes(path, data, clock=self.server_clock.seconds)
        if not self.variant.has(FRAMED_VERSIONS):
            tail = (self.tree.peek(path, max(0, old + len(data) - _TAIL), _TAIL) if len(data) < _TAIL
                    else data[-_TAIL:])  # fmt: skip
            self._marks()[path] = (old + len(data), version - 1 + sum(map(data.count, _MARKERS)), tail)
        return version

    def _marks(self) -> dict[str, tuple[int, int, bytes]]:
        """Per history file: its size, marker count and last bytes after this env's last append."""
        marks: dict[str, tuple[int, int, bytes]] | None = self.__dict__.get("_history_marks")
        if marks is None:
            marks = self.__dict__["_history_marks"] = {}
        return marks

    def _marker_count(self, path: str) -> tuple[int, int]:
        """(size, marker count) of history file *path* (0, 0 when missing): upstream reads the whole file
        and counts both markers in it at every write (:func:`next_memory_version`). The count is kept
        from this env's last append and only the appended entry is counted (a marker holds no newline and
        every later entry starts with two, so no marker spans two entries, and markers cannot overlap);
        the file is read whole again when it is not as that append left it (its size or last bytes
        differ, or the document of an aliasing id was written over it). One counted operation either way,
        as upstream's one read: a long run keeps neither the file's bytes nor a copy of them."""
        marks = self._marks()
        if not self.tree.exists(path):
            marks.pop(path, None)
            return 0, 0
        size = self.tree.size(path)
        got = marks.get(path)
        if got is not None and got[0] == size and self.tree.peek(path, max(0, size - _TAIL), _TAIL) == got[2]:
            return size, got[1]
        data = self.tree.peek(path, 0, size)
        return size, sum(map(data.count, _MARKERS))

    def read_memory_doc(self, agent_id: Any) -> dict[str, Any]:
        """The whole latest document (MEM-RTE-document-read): universal newlines (fixed: raw), bytes of what
        was read; a missing or empty file gives ``content ""`` and ``bytes 0``. No cap, no versions."""
        path = self.memory_doc_path(agent_id)
        content = ""
        if self.tree.exists(path) and not self.variant.has(READ_EMPTY):
            content = self.tree.read_text(path, translate_newlines=not self.variant.has(RAW_NEWLINES))
        result = {"ok": True, "content": content, "bytes": len(content.encode("utf-8"))}
        self.sim.trace.op(SYSTEM, "read_memory_doc", agent=str(agent_id), bytes=result["bytes"], t=self.t)
        return result

    def document_text(self, agent_id: Any) -> str:
        """The document's bytes on disk as text ("" if missing), read without a tool call (for checkers)."""
        path = self.memory_doc_path(agent_id)
        return self.tree.read_text(path, translate_newlines=False) if self.tree.exists(path) else ""

    def memory_versions(self, agent_id: Any) -> list[int]:
        """The version numbers labelled in *agent_id*'s history file, in order (MEM-OBJ-memory-history; for
        checkers)."""
        path = self.memory_history_path(agent_id)
        if not self.tree.exists(path):
            return []
        text = self.tree.read_text(path, translate_newlines=False)
        return [int(v) for v in re.findall(r"^## Memory version (\d+)$", text, flags=re.M)]
