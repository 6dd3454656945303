"""Host harnesses the session mirror reads: file tails (claude-code, codex, openclaw) and Hermes (SQLite).

Not modeled: real discovery roots beyond the layouts of the note (one layout per harness name).
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

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
    Not modeled: real discovery roots beyond the layouts of the note (one layout per harness name).
    """

    def __init__(self, name: str, tree: FileTree, *, cwd: str = "/work/app") -> None:
        if name not in ("claude-code", "codex", "openclaw"):
            raise ValueError(f"unknown file harness {name!r}")
        self.name = name
        self.tree = tree
        self.cwd = cwd

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
                out.append(Session(self.name, sid, p, self.tree.mtime(p), self.cwd))
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
    """The Hermes host: message rows in a real SQLite file; the cursor is the max ``messages.id`` read.

    Each row becomes one ``json.dumps(row, default=str, ensure_ascii=False)`` line; ``content`` starting
    with ``\\x00json:`` is JSON-decoded first.
    """

    name = "hermes"

    def __init__(self, db_path: str | Path) -> None:
        self.db_path = str(db_path)

    @staticmethod
    def create(db_path: str | Path) -> HermesHarness:
        """Create an empty Hermes database (``messages(id, session_id, role, content, created_at)``)."""
        with sqlite3.connect(str(db_path)) as db:
            db.execute(
                "CREATE TABLE IF NOT EXISTS messages (id INTEGER PRIMARY KEY AUTOINCREMENT, "
                "session_id TEXT, role TEXT, content TEXT, created_at TEXT)"
            )
        return HermesHarness(db_path)

    def add(self, session_id: str, role: str, content: str, created_at: str = "") -> int:
        """Append a row (the host writing); returns its id."""
        with sqlite3.connect(self.db_path) as db:
            cur = db.execute(
                "INSERT INTO messages (session_id, role, content, created_at) VALUES (?, ?, ?, ?)",
                (session_id, role, content, created_at),
            )
            return int(cur.lastrowid or 0)

    def _ro(self) -> sqlite3.Connection:
        return sqlite3.connect(f"file:{self.db_path}?mode=ro", uri=True)

    def discover(self) -> list[Session]:
        """Every session id, newest owner of the highest id first."""
        with self._ro() as db:
            rows = db.execute(
                "SELECT session_id, MAX(id) FROM messages GROUP BY session_id ORDER BY MAX(id) DESC"
            ).fetchall()
        return [Session("hermes", sid, self.db_path, float(mx)) for sid, mx in rows]

    def find(self, session_id: str | None) -> Session:
        """The session *session_id*, or the owner of the highest message id."""
        found = self.discover()
        if session_id is not None:
            found = [s for s in found if s.session_id == session_id]
        if not found:
            raise TracecraftError(no_session("hermes", session_id, ""))
        return found[0]

    def size(self, sess: Session) -> int:
        """The highest message id of the session (the cursor's unit)."""
        with self._ro() as db:
            row = db.execute("SELECT MAX(id) FROM messages WHERE session_id=?", (sess.session_id,)).fetchone()
        return int(row[0] or 0)

    def read_new(self, sess: Session, cursor: int) -> tuple[bytes, int]:
        """JSONL of the rows with ``id > cursor`` and the new cursor."""
        with self._ro() as db:
            db.row_factory = sqlite3.Row
            rows = db.execute(
                "SELECT * FROM messages WHERE session_id=? AND id>? ORDER BY id", (sess.session_id, cursor)
            ).fetchall()
        out = []
        nxt = cursor
        for r in rows:
            d = dict(r)
            if isinstance(d.get("content"), str) and d["content"].startswith("\x00json:"):
                d["content"] = json.loads(d["content"][len("\x00json:") :])
            out.append(json.dumps(d, default=str, ensure_ascii=False))
            nxt = max(nxt, int(d["id"]))
        return ("".join(line + "\n" for line in out)).encode("utf-8"), nxt


Harness = FileTailHarness | HermesHarness
