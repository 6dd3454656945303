"""Host harnesses the session mirror reads: file tails (claude-code, codex, openclaw) and Hermes (SQLite).

Not modeled: real discovery roots beyond the layouts of the note (one layout per harness name).
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from sim.files import FileTree
from systems.tracecraft.protocol import TracecraftError
from systems.tracecraft.state import Session


def no_session(harness: str, session_id: str | None, cwd: str) -> str:
    """Upstream's "No <harness> session found for id=<sid>" (or "in cwd=<cwd>")."""
    return f"No {harness} session found" + (f" for id={session_id}" if session_id else f" in cwd={cwd}")


def encode_cwd(path: str) -> str:
    """claude-code's project folder name: every run of non-alphanumerics becomes ``-``."""
    import re

    return re.sub(r"[^A-Za-z0-9]+", "-", path)


class FileTailHarness:
    """A file-backed host (claude-code, codex, openclaw) on a :mod:`sim.files` tree.

    The cursor is a byte offset; :meth:`read_new` returns the bytes from it to EOF, not line-aligned.
    *home* is the absolute home directory the tree stands for: a session's ``source_path`` is
    ``<home>/<path>``, as upstream's absolute ``str(sess.path)`` (``cli/session.py:338``).
    Not modeled: real discovery roots beyond the layouts of the note (one layout per harness name).
    """

    def __init__(
        self, name: str, tree: FileTree, *, cwd: str = "/work/app", home: str = "/home/agent"
    ) -> None:
        if name not in ("claude-code", "codex", "openclaw"):
            raise ValueError(f"unknown file harness {name!r}")
        self.name = name
        self.tree = tree
        self.cwd = cwd
        self.home = home.rstrip("/")

    def session_path(self, session_id: str) -> str:
        """Where this harness keeps session *session_id* (the inverse of its id rule)."""
        if self.name == "claude-code":
            return f".claude/projects/{encode_cwd(self.cwd)}/{session_id}.jsonl"
        if self.name == "codex":
            return f".codex/sessions/2026/01/05/rollout-2026-01-05T00-00-00-{session_id}.jsonl"
        agent, _, stem = session_id.partition("__")
        return f".openclaw/agents/{agent or 'main'}/sessions/{stem or session_id}.jsonl"

    def discover(self) -> list[Session]:
        """The sessions under this harness's layout."""
        import re

        out = []
        for p in self.tree.list():
            parts = p.split("/")
            sid = None
            if self.name == "claude-code" and p.startswith(".claude/projects/") and len(parts) == 4:
                if parts[2] == encode_cwd(self.cwd) and p.endswith(".jsonl"):
                    sid = parts[3][: -len(".jsonl")]
            elif self.name == "codex" and p.startswith(".codex/sessions/") and len(parts) == 6:
                m = re.search(
                    r"rollout-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-(?P<id>[A-Za-z0-9_-]+)\.jsonl$", parts[5]
                )
                if parts[5].startswith("rollout-") and p.endswith(".jsonl"):
                    sid = m["id"] if m else parts[5][: -len(".jsonl")]
            elif self.name == "openclaw" and p.startswith(".openclaw/agents/") and len(parts) == 5:
                leaf = parts[4]
                if parts[3] == "sessions" and leaf.endswith(".jsonl") and leaf != "sessions.json":
                    sid = f"{parts[2]}__{leaf[: -len('.jsonl')]}"
            if sid is not None:
                # Only claude-code knows the session's cwd (``claude_code.py:47-49``; ``base.py:16``).
                cwd = self.cwd if self.name == "claude-code" else ""
                out.append(Session(self.name, sid, p, self.tree.mtime(p), cwd, f"{self.home}/{p}"))
        return out

    def find(self, session_id: str | None) -> Session:
        """The session *session_id*, or the active one (newest mtime)."""
        found = self.discover()
        if session_id is not None:
            found = [s for s in found if s.session_id == session_id]
        if not found:
            raise TracecraftError(no_session(self.name, session_id, self.cwd))
        return max(found, key=lambda s: (s.mtime, s.path))

    def size(self, sess: Session) -> int:
        """The source size in bytes."""
        return self.tree.size(sess.path) if self.tree.exists(sess.path) else 0

    def read_new(self, sess: Session, cursor: int) -> tuple[bytes, int]:
        """The bytes from *cursor* to EOF and the new cursor (seek to the cursor, read to EOF)."""
        return self.tree.read_from(sess.path, cursor)


class HermesHarness:
    """The Hermes host: a SQLite ``state.db`` with ``sessions`` and ``messages`` tables (``hermes.py``).

    Sessions are discovered through the ``sessions`` table, newest ``started_at`` first
    (``harness/hermes.py:76-90``); the active session is the owner of the highest ``messages.id``, else the
    newest ``sessions`` row (``:92-109``). The cursor is the highest ``messages.id`` read. Each row becomes
    one ``json.dumps(row, default=str, ensure_ascii=False)`` line; a ``content`` starting with
    ``\\x00json:`` is JSON-decoded, and kept as the original string when the rest is not JSON
    (``:58-65``). A missing database or any ``sqlite3.Error`` degrades: no sessions, size 0, nothing new
    (``:81-87, 93-102, 115-124, 133-142``). Connections are read-only (``?mode=ro``, 4 s busy timeout).
    """

    name = "hermes"

    def __init__(self, db_path: str | Path, *, cwd: str = "/work/app") -> None:
        self.db_path = str(db_path)
        self.cwd = cwd

    @staticmethod
    def create(db_path: str | Path) -> HermesHarness:
        """Create an empty Hermes database: ``sessions(id, source, started_at, ended_at, title)`` and
        ``messages(id, session_id, role, content, created_at)`` (the columns memsim's host writes)."""
        db = sqlite3.connect(str(db_path))
        try:
            db.execute(
                "CREATE TABLE IF NOT EXISTS sessions (id TEXT PRIMARY KEY, source TEXT, "
                "started_at REAL, ended_at REAL, title TEXT)"
            )
            db.execute(
                "CREATE TABLE IF NOT EXISTS messages (id INTEGER PRIMARY KEY AUTOINCREMENT, "
                "session_id TEXT, role TEXT, content TEXT, created_at TEXT)"
            )
            db.commit()
        finally:
            db.close()
        return HermesHarness(db_path)

    def add_session(self, session_id: str, started_at: float | None = None) -> None:
        """Register session *session_id* in ``sessions`` (the host starting a session; newest by default)."""
        db = sqlite3.connect(self.db_path)
        try:
            db.execute(
                "INSERT OR IGNORE INTO sessions (id, source, started_at) VALUES "
                "(?, 'cli', COALESCE(?, (SELECT COALESCE(MAX(started_at), 0) + 1 FROM sessions)))",
                (session_id, started_at),
            )
            db.commit()
        finally:
            db.close()

    def add(
        self, session_id: str, role: str, content: str, created_at: str = "", *, register: bool = True
    ) -> int:
        """Append a message row (the host writing) and, with *register*, the session's ``sessions`` row
        if it has none; returns the row id."""
        if register:
            self.add_session(session_id)
        db = sqlite3.connect(self.db_path)
        try:
            cur = db.execute(
                "INSERT INTO messages (session_id, role, content, created_at) VALUES (?, ?, ?, ?)",
                (session_id, role, content, created_at),
            )
            db.commit()
            return int(cur.lastrowid or 0)
        finally:
            db.close()

    def _query(self, sql: str, args: tuple[Any, ...] = ()) -> list[sqlite3.Row] | None:
        """The rows of a read-only query; None when the database is missing or raises sqlite3.Error."""
        if not Path(self.db_path).exists():
            return None
        try:
            db = sqlite3.connect(f"file:{self.db_path}?mode=ro", uri=True, timeout=4.0)
        except sqlite3.Error:
            return None
        try:
            db.row_factory = sqlite3.Row
            db.execute("PRAGMA busy_timeout=4000")
            return db.execute(sql, args).fetchall()
        except sqlite3.Error:
            return None
        finally:
            db.close()

    def _session(self, session_id: str) -> Session:
        return Session("hermes", session_id, self.db_path, 0.0, "", self.db_path)

    def discover(self) -> list[Session]:
        """The ``sessions`` rows, newest ``started_at`` first (none without the table or the file)."""
        rows = self._query("SELECT id FROM sessions ORDER BY started_at DESC") or []
        return [self._session(r["id"]) for r in rows]

    def find(self, session_id: str | None) -> Session:
        """The discovered session *session_id*, or the active one; raises :class:`TracecraftError`
        ("No hermes session found for id=…" / "… in cwd=…")."""
        if session_id is not None:
            found = [s for s in self.discover() if s.session_id == session_id]
            if not found:
                raise TracecraftError(no_session("hermes", session_id, self.cwd))
            return found[0]
        if not Path(self.db_path).exists():
            raise TracecraftError(no_session("hermes", None, self.cwd))
        rows = self._query("SELECT session_id FROM messages ORDER BY id DESC LIMIT 1")
        if rows:
            return self._session(rows[0]["session_id"])
        sessions = self.discover()
        if not sessions:
            raise TracecraftError(no_session("hermes", None, self.cwd))
        return sessions[0]

    def size(self, sess: Session) -> int:
        """The highest message id of the session (the cursor's unit); 0 when unreadable."""
        rows = self._query("SELECT MAX(id) AS m FROM messages WHERE session_id = ?", (sess.session_id,))
        return int(rows[0]["m"]) if rows and rows[0]["m"] is not None else 0

    def read_new(self, sess: Session, cursor: int) -> tuple[bytes, int]:
        """JSONL of the rows with ``id > cursor`` and the new cursor (``b""`` and *cursor* when unreadable).

        Raises ValueError for a negative cursor.
        """
        if cursor < 0:
            raise ValueError(f"cursor must be non-negative, got {cursor}")
        rows = self._query(
            "SELECT * FROM messages WHERE session_id = ? AND id > ? ORDER BY id ASC",
            (sess.session_id, cursor),
        )
        out = []
        nxt = cursor
        for r in rows or []:
            d = dict(r)
            if "content" in d:
                d["content"] = decode_content(d["content"])
            out.append(json.dumps(d, default=str, ensure_ascii=False))
            if d.get("id") is not None:
                nxt = max(nxt, int(d["id"]))
        return (("\n".join(out) + "\n").encode("utf-8") if out else b""), nxt


def decode_content(value: Any) -> Any:
    """Hermes' ``\\x00json:<json>`` content decoded; any other value, or a malformed payload, as is."""
    if isinstance(value, str) and value.startswith("\x00json:"):
        try:
            return json.loads(value[len("\x00json:") :])
        except ValueError:
            return value
    return value


Harness = FileTailHarness | HermesHarness
