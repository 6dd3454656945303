"""Tracecraft's operations on the core object store, in upstream's CLI vocabulary (0.2.5).

:class:`Tracecraft` is one project in one bucket (``<project>/<key>``) on an :class:`sim.objects.ObjectStore`
(the in-memory store, or S3 through boto3 against moto or an endpoint). :meth:`Tracecraft.agent` gives a
:class:`Client`: one CLI configuration (agent id, host home directory for mirror state) whose commands
are SimPy generators, so agents run as concurrent processes with their own clocks (``sim.clock(agent)``,
skew and drift from the fault plan). Every store round trip first waits ``latency`` simulated seconds,
which is where concurrent commands interleave. :meth:`Client.call` drives one command to completion.

Each failure-mode fix of the fidelity note §3 is a switch in :class:`state.Variant` (faithful: none).
Where the note and the seed report differ the note wins (see ``fidelity.DIFFERENCES``).

Not modeled: the click CLI, config files and credentials (a Client is the loaded config).
Not modeled: HF's own listing and file API beyond the racy check-then-write conditional put.
Not modeled: ``--follow`` Ctrl-C handling and ``--all`` discovery loops (``mirror_follow`` runs N cycles).
Not modeled: ``git diff`` (``complete`` takes the changed-file list, ``[]`` standing for a git failure).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Generator
from pathlib import Path
from typing import Any

from sim.engine import Simulation
from sim.files import FileMissing, FileTree, MemoryTree
from sim.objects import ObjectStore, PreconditionFailed
from systems.tracecraft import faults as fp
from systems.tracecraft.protocol import (
    CURSOR_GRACE_NS,
    CURSOR_LEAF,
    PART_RE,
    PART_RE_WIDE,
    SEEN_CAP,
    STALE_AFTER_S,
    TracecraftError,
    advance_stream,
    append_key,
    cursor_key,
    direct_children,
    heartbeat_age_s,
    is_data_leaf,
    key_sender,
    load_stream_cursor,
    merge_counts,
    normalize_step_id,
    part_name,
    redact,
    unseen_keys,
)
from systems.tracecraft.state import FAITHFUL_VARIANT, Flush, InboxLine, Session, Variant

SYSTEM = "tracecraft"
WAIT_POLL_S = 5  # wait-for polls every 5 s
LEASE_S = 600  # claim lease of the claim-lease fix (seconds)
STORE_CLOCK = "__store__"  # the object store's own clock (LastModified), used by the server-order fix

Gen = Generator[Any, Any, Any]


def _dumps(doc: Any) -> bytes:
    return json.dumps(doc, ensure_ascii=False).encode("utf-8")


def _loads(body: bytes | None) -> Any:
    if body is None:
        return None
    try:
        return json.loads(body)
    except ValueError:
        return None


class Bucket:
    """The project view of the bucket (upstream ``s3.py``/``hf.py``): ``<project>/`` keys and JSON docs.

    ``backend="hf"`` models the HuggingFace backend's conditional put as exists-then-write with a store
    round trip between them (racy). The ``history-worm`` fix refuses overwrite/delete of snapshots.
    Not modeled: HF's listing/file API otherwise; S3 pagination is the core store's.
    """

    def __init__(self, store: ObjectStore, project: str, backend: str = "s3", *, worm: bool = False) -> None:
        if backend not in ("s3", "hf"):
            raise ValueError(f"backend must be s3 or hf, not {backend!r}")
        self.store = store
        self.project = project
        self.backend = backend
        self.worm = worm
        self.bytes_written = 0

    def _k(self, key: str) -> str:
        return f"{self.project}/{key}"

    def _guard(self, key: str) -> None:
        if self.worm and key.startswith("memory/_history/") and self.store.exists(self._k(key)):
            raise TracecraftError(f"object lock: {key} is immutable")

    def put_bytes(self, key: str, body: bytes, *, if_none_match: bool = False) -> None:
        """PUT raw bytes (``put_file``); conditional create with *if_none_match*."""
        self._guard(key)
        self.store.put(self._k(key), body, if_none_match=if_none_match)
        self.bytes_written += len(body)

    def put_json(self, key: str, doc: Any, *, if_none_match: bool = False) -> None:
        """PUT a JSON document (S3 ``IfNoneMatch="*"`` when *if_none_match*)."""
        self.put_bytes(key, _dumps(doc), if_none_match=if_none_match)

    def get_bytes(self, key: str) -> bytes | None:
        """GET raw bytes, None when missing."""
        return self.store.get(self._k(key))

    def get_json(self, key: str) -> Any:
        """GET a JSON document, None when missing."""
        return _loads(self.get_bytes(key))

    def exists(self, key: str) -> bool:
        """HEAD."""
        return self.store.exists(self._k(key))

    def delete(self, key: str) -> None:
        """DELETE (missing is fine)."""
        self._guard(key)
        self.store.delete(self._k(key))

    def list_keys(self, prefix: str = "", start_after: str | None = None) -> list[str]:
        """Project-relative keys under *prefix* (recursive), sorted, excluding keys ``<=`` *start_after*."""
        n = len(self.project) + 1
        after = self._k(start_after) if start_after else None
        return [k[n:] for k in self.store.list(self._k(prefix), after)]

    def compare_and_put_json(self, key: str, doc: Any, expected: bytes | None) -> bool:
        """PUT *doc* only if the body is still *expected* (an If-Match ETag write); False if it changed.

        Not modeled: the ETag itself; the GET and PUT are atomic because no process runs between them.
        """
        if self.store.get(self._k(key)) != expected:
            return False
        self.put_json(key, doc)
        return True


# -- harnesses -----------------------------------------------------------------------------------
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
            raise TracecraftError(_no_session(self.name, session_id, self.cwd))
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
            raise TracecraftError(_no_session("hermes", session_id, ""))
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


# -- the system ----------------------------------------------------------------------------------
class Tracecraft:
    """One Tracecraft project on an object store, with the variant's fixes switched on.

    *seen_cap* is the cursor's SEEN_CAP (1,000 upstream; claims pass smaller values to stay cheap).
    *latency* is the simulated seconds of every store round trip.
    """

    def __init__(
        self,
        sim: Simulation,
        store: ObjectStore,
        *,
        project: str = "proj",
        backend: str = "s3",
        bucket_name: str = "bucket",
        variant: Variant = FAITHFUL_VARIANT,
        seen_cap: int = SEEN_CAP,
        latency: float = 0.0,
    ) -> None:
        self.sim = sim
        self.variant = variant
        self.bucket = Bucket(store, project, backend, worm=variant.has("history-worm"))
        self.bucket_name = bucket_name
        self.project = project
        self.backend = backend
        self.seen_cap = seen_cap
        self.latency = latency

    def agent(self, agent_id: str, *, home: FileTree | None = None, reader: str = "") -> Client:
        """A CLI configuration for *agent_id* on a host whose home directory is *home*."""
        return Client(self, agent_id, home=home, reader=reader)

    @property
    def store(self) -> ObjectStore:
        return self.bucket.store


class Client:
    """One loaded config (``TRACECRAFT_AGENT`` = *agent_id*): the CLI commands as SimPy generators.

    Output lines go to :attr:`stdout` as they are printed (a crash after printing keeps them), with
    upstream's texts (receipts, "nothing new: …", "No new messages.", wait-for's progress lines).
    Not modeled: stdout vs stderr: every line a command prints goes to ``Client.stdout`` (stderr-only
    warnings — inbox --delete's deprecation, the HF claim warning, the protection summary — are not
    printed).
    """

    def __init__(
        self, tc: Tracecraft, agent_id: str, *, home: FileTree | None = None, reader: str = ""
    ) -> None:
        self.tc = tc
        self.sim = tc.sim
        self.agent_id = agent_id
        self.home = home if home is not None else MemoryTree()
        self.reader = reader or agent_id
        self.clock = tc.sim.clock(agent_id)
        self.stdout: list[str] = []
        self.latency: float | None = None
        self.cursor_pause = 0.0  # seconds a reader stays suspended between display and cursor write
        self.variant = tc.variant
        self.b = tc.bucket

    # -- plumbing ---------------------------------------------------------------------------------
    def call(self, command: Gen) -> Any:
        """Run one command to completion (other scheduled processes advance too) and return its result."""
        try:  # fast path: a command that never waits (zero latency) finishes without a SimPy step
            first = next(command)
        except StopIteration as stop:
            return stop.value

        def resume() -> Gen:
            value = yield first
            while True:
                try:
                    event = command.send(value)
                except StopIteration as stop:
                    return stop.value
                value = yield event

        proc = self.sim.process(resume())
        self.sim.run(until=proc)
        return proc.value

    def _rt(self) -> Gen:
        """One store round trip's latency (the client's own, else the system's); nothing when zero."""
        lat = self.tc.latency if self.latency is None else self.latency
        if lat > 0:
            yield self.sim.timeout(lat)

    def _op(self, op: str, phase: str = "ok", **detail: Any) -> None:
        self.sim.trace.op(SYSTEM, op, agent=self.agent_id, phase=phase, **detail)

    def _hex(self) -> str:
        return self.sim.streams.hex(f"tracecraft.uuid.{self.agent_id}", 8)

    def _print(self, line: str) -> None:
        self.stdout.append(line)

    def _command(self) -> Gen:
        """Config load: the validate-agent fix checks the id; heartbeat-refresh refreshes registration."""
        if self.variant.has("validate-agent"):
            validate_recipient(self.agent_id, what="Agent id")
        if self.variant.has("heartbeat-refresh"):
            yield from self._rt()
            doc = self.b.get_json(f"agents/{self.agent_id}.json") or self._registration()
            doc["heartbeat"] = self.clock.iso()
            yield from self._rt()
            self.b.put_json(f"agents/{self.agent_id}.json", doc)

    def _registration(self) -> dict[str, Any]:
        now = self.clock.iso()
        return {
            "id": self.agent_id,
            "status": "active",
            "step": None,
            "started_at": now,
            "heartbeat": now,
            "summary": "Initialized",
        }

    # -- init / agents (RT-RTE-init-config, MEM-OBJ-agent-registration) -----------------------------
    def init(self) -> Gen:
        """(RT-RTE-init-config, MEM-OBJ-agent-registration, RT-OBJ-config) PUT ``agents/<id>.json``.

        Registration happens here only; nothing refreshes it (faithful).
        Not modeled: writing the config file and credential checks.
        """
        yield from self._command()
        yield from self._rt()
        self.b.put_json(f"agents/{self.agent_id}.json", self._registration())
        self._op("init")
        return self.agent_id

    def agents(self) -> Gen:
        """(MEM-OBJ-agent-registration) ``collect_agents``: rows ``{id, status, step, heartbeat,
        heartbeat_age_s}``; status is ``"stale"`` when the age exceeds 300 s. Empty documents are skipped.

        Not modeled: the summary column (never displayed upstream either).
        """
        yield from self._command()
        yield from self._rt()
        keys = [k for k in self.b.list_keys("agents/") if k.endswith(".json")]
        now = self.clock.datetime()
        out = []
        for k in keys:
            yield from self._rt()
            doc = self.b.get_json(k)
            if not doc:
                continue
            age = heartbeat_age_s(doc.get("heartbeat"), now)
            stale = age is not None and age > STALE_AFTER_S
            out.append(
                {
                    "id": doc.get("id", "?"),
                    "status": "stale" if stale else doc.get("status", "unknown"),
                    "step": doc.get("step"),
                    "heartbeat": doc.get("heartbeat"),
                    "heartbeat_age_s": age,
                }
            )
        self._op("agents", count=len(out))
        return out

    # -- memory (RT-RTE-memory-write, MEM-OBJ-memory-live, MEM-OBJ-memory-history) ---------------------
    def memory_set(self, key: str, value: str) -> Gen:
        """(RT-RTE-memory-write, MEM-OBJ-memory-history, MEM-OBJ-memory-live) Snapshot PUT, then live PUT.

        Raises :class:`TracecraftError` for a blank key, a ``/``, or ``_history``/``_history.*``.
        Crash point ``tracecraft.memory_set.after_snapshot`` between the two unconditional PUTs.
        """
        validate_memory_key(key)
        yield from self._command()
        path = key.replace(".", "/")
        now = self.clock.iso()
        yield from self._rt()
        hist = append_key(f"memory/_history/{path}/", self.agent_id, self.clock.ns(), self._hex())
        self.b.put_json(hist, {"key": key, "value": value, "set_by": self.agent_id, "set_at": now})
        self.sim.faults.point(fp.MEMORY_SET_AFTER_SNAPSHOT)
        yield from self._rt()
        self.b.put_json(f"memory/{path}.json", {"value": value, "set_by": self.agent_id, "set_at": now})
        self._print(f"Set {key} = {value}")
        self._op("memory_set", key=key, value=value, snapshot=hist)
        return hist

    def memory_get(self, key: str, with_meta: bool = False) -> Gen:
        """(MEM-OBJ-memory-live) The live value (or ``{key, value, set_by, set_at}``); exit 1 when missing.

        The history-is-live fix returns the newest snapshot instead.
        """
        yield from self._command()
        path = key.replace(".", "/")
        yield from self._rt()
        if self.variant.has("history-is-live"):
            prefix = f"memory/_history/{path}/"
            hist = sorted(direct_children(self.b.list_keys(prefix), prefix))
            doc = None
            if hist:
                yield from self._rt()
                doc = self.b.get_json(hist[-1])
        else:
            doc = self.b.get_json(f"memory/{path}.json")
        if doc is None:
            self._op("memory_get", phase="fail", key=key)
            raise TracecraftError("")
        self._op("memory_get", key=key, value=doc.get("value"))
        if with_meta:
            return {
                "key": key,
                "value": doc.get("value"),
                "set_by": doc.get("set_by"),
                "set_at": doc.get("set_at"),
            }
        return doc.get("value")

    def memory_history(self, key: str, limit: int = 20) -> Gen:
        """(MEM-OBJ-memory-history) Direct-child snapshots, newest *limit* (<=0: all), printed oldest first.

        Raises :class:`TracecraftError` ("No history for K.") when none is left; GETs returning None are
        skipped. Returns the printed ``[<set_at>] <set_by>: <value>`` lines.
        """
        yield from self._command()
        prefix = f"memory/_history/{key.replace('.', '/')}/"
        yield from self._rt()
        keys = sorted(direct_children(self.b.list_keys(prefix), prefix))
        if limit > 0:
            keys = keys[-limit:]
        if not keys:
            self._op("memory_history", phase="fail", key=key)
            raise TracecraftError(f"No history for {key}.")
        lines = []
        for k in keys:
            yield from self._rt()
            doc = self.b.get_json(k)
            if doc is None:
                continue
            line = f"[{doc.get('set_at', '?')}] {doc.get('set_by', '?')}: {doc.get('value')}"
            self._print(line)
            lines.append(line)
        self._op("memory_history", key=key, entries=len(lines))
        return lines

    def memory_list(self, prefix: str = "") -> Gen:
        """(MEM-OBJ-memory-live) Dotted keys under ``memory/`` + prefix (not boundary-aware), every listed
        object but ``memory/_history/`` (``.json`` stripped when present)."""
        yield from self._command()
        yield from self._rt()
        out = []
        for k in self.b.list_keys("memory/" + prefix.replace(".", "/")):
            if k.startswith("memory/_history/"):
                continue
            out.append(k.removeprefix("memory/").removesuffix(".json").replace("/", "."))
            self._print(out[-1])
        self._op("memory_list", prefix=prefix, count=len(out))
        return out

    # -- mail (RT-RTE-mail-exchange, MEM-OBJ-message-content, MEM-OBJ-inbox-cursor) ---------------------
    def send(self, recipient: str, message: str, step: str | None = None, *, delay: float = 0.0) -> Gen:
        """(RT-RTE-mail-exchange, MEM-OBJ-message-content) PUT ``{from, to, message, sent_at[, step]}``.

        The recipient is validated (stripped, non-empty, no ``/``, ``_`` only for ``_broadcast``); the
        sender is not. *delay* seconds pass between stamping and the PUT (a late arrival). With the
        server-order fix the key is stamped by the store's clock at the PUT.
        Raises :class:`TracecraftError` for an invalid recipient.
        """
        r = validate_recipient(recipient)
        yield from self._command()
        ts = self.clock.ns()
        doc: dict[str, Any] = {
            "from": self.agent_id,
            "to": r,
            "message": message,
            "sent_at": self.clock.iso(),
        }
        if step:
            doc["step"] = step
        if delay > 0:
            yield self.sim.timeout(delay)
        yield from self._rt()
        if self.variant.has("server-order"):
            ts = self.sim.clock(STORE_CLOCK).ns()
        key = append_key(f"messages/{r}/", self.agent_id, ts, self._hex())
        self.b.put_json(key, doc)
        self._print(f"Sent to {r}: {message}")
        self._op("send", to=r, key=key, message=message)
        return key

    def _cursor_key(self) -> str:
        if self.variant.has("reader-cursor"):
            return f"messages/{self.agent_id}/_cursor.{self.reader}.json"
        return cursor_key(self.agent_id)

    def inbox(self, new: bool = False, delete: bool = False) -> Gen:
        """(RT-RTE-mail-exchange, MEM-OBJ-inbox-cursor) Direct + broadcast mail: plain, --new, --delete.

        ``--new``: GET cursor → LIST → GETs → print → PUT cursor (only if any unseen key existed; own
        broadcasts count and advance it without display). ``--delete`` DELETEs each printed direct message.
        Returns the :class:`InboxLine` list. Raises :class:`TracecraftError` for both flags.
        Crash points ``tracecraft.inbox.before_cursor`` and ``tracecraft.inbox.after_delete``.
        """
        if new and delete:
            raise TracecraftError("--delete and --new are mutually exclusive")
        yield from self._command()
        me = self.agent_id
        dp, bp = f"messages/{me}/", "messages/_broadcast/"
        empty: dict[str, Any] = {"watermark": None, "seen": []}
        d_stream, b_stream = empty, empty
        if new:
            yield from self._rt()
            doc = self.b.get_json(self._cursor_key())
            d_stream, b_stream = load_stream_cursor(doc, "direct"), load_stream_cursor(doc, "broadcast")
        yield from self._rt()
        d_listed = direct_children(self.b.list_keys(dp, d_stream["watermark"]), dp)
        yield from self._rt()
        b_listed = direct_children(self.b.list_keys(bp, b_stream["watermark"]), bp)
        d_cand = unseen_keys(d_listed, d_stream) if new else d_listed
        b_cand = unseen_keys(b_listed, b_stream) if new else b_listed
        rows: list[tuple[Any, InboxLine]] = []
        for kind, keys, prefix in (("direct", d_cand, dp), ("broadcast", b_cand, bp)):
            for k in keys:
                if kind == "broadcast" and key_sender(k, prefix) == me:
                    continue  # own broadcast, by the key's sender (no GET)
                yield from self._rt()
                doc = self.b.get_json(k)
                if doc is None:
                    continue
                if kind == "broadcast" and doc.get("from", "?") == me:
                    continue  # upstream's fallback, applied to every broadcast body
                line = InboxLine(
                    k,
                    kind,
                    str(doc.get("from", "?")),
                    str(doc.get("sent_at", "?")),
                    str(doc.get("message", "")),
                    doc.get("step"),
                )
                rows.append((doc.get("sent_at", ""), line))
        rows.sort(key=lambda row: row[0])  # the sender's sent_at string ("" when missing)
        found = [line for _, line in rows]
        for i, m in enumerate(found):
            self._print(m.render())
            if delete and m.kind == "direct":
                yield from self._rt()
                self.b.delete(m.key)
                if i < len(found) - 1:
                    self.sim.faults.point(fp.INBOX_AFTER_DELETE)
        if not found:
            self._print("No new messages." if new else "No messages.")
        elif delete:
            deleted = sum(m.kind == "direct" for m in found)
            self._print(f"Deleted {deleted} direct message(s); broadcasts left in place.")
        if new and (d_cand or b_cand):
            self.sim.faults.point(fp.INBOX_BEFORE_CURSOR)
            if self.cursor_pause:
                yield self.sim.timeout(self.cursor_pause)
            now = self.clock.ns() if self.variant.has("future-guard") else None
            raise_ev = self.variant.has("seen-cap-watermark")
            cap = self.tc.seen_cap
            cursor = {
                "direct": advance_stream(
                    d_stream, d_listed, dp, seen_cap=cap, raise_on_evict=raise_ev, now_ns=now
                ),
                "broadcast": advance_stream(
                    b_stream, b_listed, bp, seen_cap=cap, raise_on_evict=raise_ev, now_ns=now
                ),
                "updated_at": self.clock.iso(),
            }
            yield from self._rt()
            self.b.put_json(self._cursor_key(), cursor)
        self._op("inbox", new=new, delete=delete, reader=self.reader, shown=[m.key for m in found])
        return found

    # -- steps (RT-RTE-step-control, RT-OBJ-step-state, MEM-OBJ-handoff) ------------------------------
    def claim(self, step_id: str) -> Gen:
        """(RT-RTE-step-control, RT-OBJ-step-state) Conditional PUT of claim.json, then status PUT.

        Raises :class:`TracecraftError` ("Step X already claimed by <owner>") on PreconditionFailed.
        Crash point ``tracecraft.claim.after_claim``. On the hf backend the conditional put is racy.
        """
        sid = normalize_step_id(step_id)
        yield from self._command()
        if self.variant.has("claim-refuses-terminal"):
            yield from self._rt()
            st = self.b.get_json(f"steps/{sid}/status.json") or {}
            if st.get("status") == "complete":
                raise TracecraftError(f"Step {step_id} is already complete")
        now = self.clock.iso()
        doc = {"agent": self.agent_id, "claimed_at": now}
        try:
            yield from self._conditional_put(f"steps/{sid}/claim.json", doc)
        except PreconditionFailed:
            yield from self._rt()
            owner = (self.b.get_json(f"steps/{sid}/claim.json") or {}).get("agent", "unknown")
            taken = False
            if self.variant.has("claim-lease") and owner != self.agent_id:
                taken = yield from self._lease_takeover(sid, doc)
            if not taken:
                self._op("claim", phase="fail", step=sid, owner=owner)
                raise TracecraftError(f"Step {step_id} already claimed by {owner}") from None
        self.sim.faults.point(fp.CLAIM_AFTER_CLAIM)
        yield from self._rt()
        self.b.put_json(
            f"steps/{sid}/status.json", {"status": "in_progress", "agent": self.agent_id, "started_at": now}
        )
        self._print(f"Claimed step {step_id} as {self.agent_id}")
        self._op("claim", step=sid)
        return sid

    def _conditional_put(self, key: str, doc: Any) -> Gen:
        yield from self._rt()
        if self.b.backend == "hf" and not self.variant.has("conditional-backend"):
            if self.b.exists(key):
                raise PreconditionFailed(key)
            yield from self._rt()
            self.b.put_json(key, doc)
        else:
            self.b.put_json(key, doc, if_none_match=True)

    def _lease_takeover(self, sid: str, doc: dict[str, Any]) -> Gen:
        """claim-lease fix: take over a claim older than LEASE_S on a non-complete step."""
        yield from self._rt()
        st = self.b.get_json(f"steps/{sid}/status.json") or {}
        yield from self._rt()
        raw = self.b.get_bytes(f"steps/{sid}/claim.json")
        old = _loads(raw) or {}
        age = heartbeat_age_s(old.get("claimed_at"), self.clock.datetime())
        if st.get("status") == "complete" or age is None or age <= LEASE_S:
            return False
        return self.b.compare_and_put_json(f"steps/{sid}/claim.json", doc, raw)

    def complete(
        self,
        step_id: str,
        note: str = "",
        to: str | None = None,
        next_action: str | None = None,
        blocked: bool = False,
        needs_review: bool = False,
        changed_files: list[str] | None = None,
        force: bool = False,
    ) -> Gen:
        """(RT-RTE-step-control, RT-OBJ-step-state, MEM-OBJ-handoff) Ownership check, status PUT, handoff PUT.

        A step with no claim can be completed by anyone; ``force`` skips the check and never rewrites the
        claim (faithful). *changed_files* stands for ``--changed-files-from-git`` (None: flag off).
        Raises :class:`TracecraftError` for both flags or a foreign claim. Crash point
        ``tracecraft.complete.after_status`` (``after_handoff`` with the handoff-first fix).
        """
        if blocked and needs_review:
            raise TracecraftError("Use at most one of --blocked / --needs-review")
        sid = normalize_step_id(step_id)
        yield from self._command()
        yield from self._rt()
        claim = self.b.get_json(f"steps/{sid}/claim.json") or {}
        owner = claim.get("agent")
        if owner not in (None, self.agent_id) and not force:
            self._op("complete", phase="fail", step=sid, owner=owner)
            raise TracecraftError(
                f"Step {step_id} is claimed by '{owner}', not '{self.agent_id}'. "
                "Pass --force to complete it anyway (e.g. if the claim-holder crashed)."
            )
        state = "blocked" if blocked else "needs_review" if needs_review else "complete"
        yield from self._rt()
        now = self.clock.iso()
        started = (self.b.get_json(f"steps/{sid}/status.json") or {}).get("started_at", now)
        status: dict[str, Any] = {"status": state, "agent": self.agent_id, "started_at": started}
        if state == "complete":
            status["completed_at"] = now
        handoff: dict[str, Any] = {
            "schema": 2,
            "from_agent": self.agent_id,
            "from_step": step_id,
            "next_agent": to,
            "state": state,
            "next_action": next_action,
            "note": note,
            "created_at": now,
        }
        if changed_files is not None:
            handoff["changed_files"] = list(changed_files)
        if force and self.variant.has("claim-lease"):
            yield from self._rt()
            self.b.put_json(f"steps/{sid}/claim.json", {"agent": self.agent_id, "claimed_at": now})
        if self.variant.has("handoff-first"):
            handoff["id"] = self._hex()
            status["handoff"] = handoff["id"]
            yield from self._rt()
            self.b.put_json(f"steps/{sid}/handoffs/{handoff['id']}.json", handoff)
            yield from self._rt()
            self.b.put_json(f"steps/{sid}/handoff.json", handoff)
            self.sim.faults.point(fp.COMPLETE_AFTER_HANDOFF)
            yield from self._rt()
            self.b.put_json(f"steps/{sid}/status.json", status)
        else:
            yield from self._rt()
            self.b.put_json(f"steps/{sid}/status.json", status)
            self.sim.faults.point(fp.COMPLETE_AFTER_STATUS)
            yield from self._rt()
            self.b.put_json(f"steps/{sid}/handoff.json", handoff)
        label = {"complete": "Completed", "blocked": "Blocked", "needs_review": "Needs review on"}[state]
        receipt = f"{label} step {step_id}" + (f" → handed off to {to}" if to else "")
        if changed_files is not None:
            receipt += f" ({len(changed_files)} changed file(s))"
        self._print(receipt)
        self._op("complete", step=sid, state=state, force=force)
        return state

    def effective_status(self, sid: str) -> Gen:
        """(RT-OBJ-step-state) status.json → (status, agent); else claim.json → in_progress; else pending."""
        yield from self._rt()
        st = self.b.get_json(f"steps/{sid}/status.json")
        if st is not None:
            return (st.get("status") or "unknown", st.get("agent") or "?")
        yield from self._rt()
        cl = self.b.get_json(f"steps/{sid}/claim.json")
        if cl is not None:
            return ("in_progress", cl.get("agent"))
        return ("pending", None)

    def step_status(self, step_id: str) -> Gen:
        """(RT-RTE-step-control) The effective status of one step."""
        yield from self._command()
        out = yield from self.effective_status(normalize_step_id(step_id))
        self._op("step_status", step=step_id, status=out[0])
        return out

    def wait_for(self, step_ids: list[str], timeout: float = 300) -> Gen:
        """(RT-BAP-step-polling, RT-RTE-step-control) Poll every 5 s until every step is complete.

        Raises :class:`TracecraftError` at once when a step is blocked, or on timeout; needs_review keeps
        waiting. Never reads the handoff (the handoff-reader fix returns them: ``{sid: handoff}``).
        Not modeled: wall-clock seconds in wait-for's progress line: the remaining time is simulated
        (whole seconds).
        """
        yield from self._command()
        sids = [normalize_step_id(s) for s in step_ids]
        deadline = self.sim.now + timeout
        while self.sim.now < deadline:
            all_done, review = True, []
            for step_id, sid in zip(step_ids, sids, strict=True):
                status, agent = yield from self.effective_status(sid)
                if status == "blocked":
                    self._op("wait_for", phase="fail", blocked=sid)
                    raise TracecraftError(
                        f"Step {step_id} is blocked (agent: {agent}) — it will not complete without "
                        "intervention. Resolve it and re-run wait-for."
                    )
                if status == "needs_review":
                    review.append(step_id)
                if status != "complete":
                    all_done = False
            if all_done:
                self._print(f"All steps complete: {', '.join(step_ids)}")
                break
            progress = f"Waiting... ({int(deadline - self.sim.now)}s remaining)"
            self._print(progress + (f" — needs review: {', '.join(review)}" if review else ""))
            yield self.sim.timeout(WAIT_POLL_S)
        else:
            self._op("wait_for", phase="fail", timeout=timeout)
            raise TracecraftError(f"Timeout after {timeout}s. Not all steps complete: {', '.join(step_ids)}")
        self._op("wait_for", steps=sids)
        if self.variant.has("handoff-reader"):
            out = {}
            for sid in sids:
                yield from self._rt()
                out[sid] = self.b.get_json(f"steps/{sid}/handoff.json")
            return out
        return {}

    # -- artifacts (RT-RTE-artifact-share, MEM-OBJ-artifact-file) -----------------------------------
    def artifact_key(self, name: str, step: str | None = None) -> str:
        """``artifacts/<normalize(step)>/<basename>`` or ``artifacts/shared/<basename>``."""
        base = name.rsplit("/", 1)[-1]
        if self.variant.has("artifact-namespace"):
            if step is None:
                return f"artifacts/shared/{base}"
            if "/" in step or not step.strip():
                raise TracecraftError(f"invalid step id {step!r}")
            return f"artifacts/steps/{step}/{base}"
        return f"artifacts/{normalize_step_id(step) if step else 'shared'}/{base}"

    def artifact_upload(self, name: str, body: bytes, step: str | None = None) -> Gen:
        """(RT-RTE-artifact-share, MEM-OBJ-artifact-file) One ``put_file``; silently overwrites."""
        key = self.artifact_key(name, step)
        yield from self._command()
        yield from self._rt()
        self.b.put_bytes(key, body)
        self._op("artifact_upload", key=key, size=len(body))
        return key

    def artifact_download(self, name: str, step: str | None = None) -> Gen:
        """(MEM-OBJ-artifact-file) ``exists`` then ``get_file``; raises "Artifact not found: <key>"."""
        key = self.artifact_key(name, step)
        yield from self._command()
        yield from self._rt()
        if not self.b.exists(key):
            raise TracecraftError(f"Artifact not found: {key}")
        yield from self._rt()
        body = self.b.get_bytes(key) or b""
        self._op("artifact_download", key=key, size=len(body))
        return body

    def artifact_list(self, step: str | None = None) -> Gen:
        """(RT-RTE-artifact-share) Artifact keys (of one step, or all)."""
        yield from self._command()
        yield from self._rt()
        prefix = self.artifact_key("x", step)[:-1] if step else "artifacts/"
        keys = self.b.list_keys(prefix)
        self._op("artifact_list", prefix=prefix, count=len(keys))
        return keys

    # -- status --------------------------------------------------------------------------------------
    def status(self) -> Gen:
        """(RT-RTE-step-control, RT-RTE-mail-exchange) Agents, steps, mailboxes, session totals (``_gather``).

        Mailboxes come from one ``messages/`` listing: data leaves count as mail, a ``_cursor.json`` leaf
        marks a cursor holder. Unread (what ``inbox --new`` would show: unseen direct keys plus unseen
        broadcasts from others, senders from the key or, for a non-conforming key, the body) exists only
        for cursor holders; ``_broadcast`` is always None. ``mailboxes`` is upstream's list of
        ``{agent, total, unread}``; ``unread`` maps agent to unread.
        """
        agents = yield from self.agents()
        yield from self._rt()
        step_ids = sorted({k.split("/")[1] for k in self.b.list_keys("steps/") if k.count("/") >= 2})
        steps = {}
        for sid in step_ids:
            steps[sid] = yield from self.effective_status(sid)
        yield from self._rt()
        boxes: dict[str, list[str]] = {}
        have_cursor: set[str] = set()
        for k in self.b.list_keys("messages/"):
            parts = k.split("/", 2)
            if len(parts) < 3:
                continue
            if parts[2] == CURSOR_LEAF:
                have_cursor.add(parts[1])
            elif is_data_leaf(parts[2]):
                boxes.setdefault(parts[1], []).append(k)
        bp = "messages/_broadcast/"
        b_keys = sorted(boxes.get("_broadcast", []))
        b_sender: dict[str, Any] = {}
        if have_cursor - {"_broadcast"}:
            for k in b_keys:
                sender = key_sender(k, bp)
                if sender is None:
                    yield from self._rt()
                    sender = (self.b.get_json(k) or {}).get("from")
                b_sender[k] = sender
        mailboxes = []
        unread: dict[str, int | None] = {}
        for box in sorted(set(boxes) | have_cursor):
            keys = boxes.get(box, [])
            count = None
            if box != "_broadcast" and box in have_cursor:
                yield from self._rt()
                doc = self.b.get_json(cursor_key(box)) or {}
                d, bst = load_stream_cursor(doc, "direct"), load_stream_cursor(doc, "broadcast")
                count = len(unseen_keys(sorted(keys), d)) + sum(
                    1 for k in unseen_keys(b_keys, bst) if b_sender.get(k) != box
                )
            mailboxes.append({"agent": box, "total": len(keys), "unread": count})
            unread[box] = count
        totals = yield from self.session_totals()
        self._op("status", steps=len(steps), boxes=len(mailboxes))
        return {
            "agents": agents,
            "steps": steps,
            "mailboxes": mailboxes,
            "unread": unread,
            "sessions": totals,
        }

    def session_totals(self) -> Gen:
        """``{count, total_uploaded_bytes, last_uploaded_at}`` over the non-empty metas (upstream's keys)."""
        yield from self._rt()
        metas = []
        for k in [k for k in self.b.list_keys("sessions/") if k.endswith("/meta.json")]:
            yield from self._rt()
            m = self.b.get_json(k)
            if m:
                metas.append(m)
        return {
            "count": len(metas),
            "total_uploaded_bytes": sum(m.get("total_uploaded_bytes", 0) for m in metas),
            "last_uploaded_at": max(
                (m["last_uploaded_at"] for m in metas if m.get("last_uploaded_at")), default=None
            ),
        }

    # -- session mirror (RT-RTE-session-mirror, MEM-OBJ-session-parts/-meta, MEM-OBJ-mirror-state) ---
    def state_path(self, harness: str, session_id: str) -> str:
        """``~/.tracecraft/mirror-state/<sid>.json`` (state-scoped: also backend/bucket/project/harness)."""
        if self.variant.has("state-scoped"):
            tc = self.tc
            scope = f"{tc.backend}/{tc.bucket_name}/{tc.project}/{harness}"
            return f".tracecraft/mirror-state/{scope}/{session_id}.json"
        return f".tracecraft/mirror-state/{session_id}.json"

    def _load_state(self, path: str) -> dict[str, Any]:
        try:
            doc = json.loads(self.home.read_bytes(path))
        except (FileMissing, ValueError):
            return {}
        return doc if isinstance(doc, dict) else {}

    def _save_state(self, path: str, doc: dict[str, Any]) -> None:
        self.home.write_bytes(path, _dumps(doc), clock=self.clock.seconds)

    def _part_re(self) -> Any:
        return PART_RE_WIDE if self.variant.has("part-seq-wide") else PART_RE

    def _listed_parts(self, prefix: str, *, search: bool = False) -> list[tuple[int, str, str]]:
        """(seq, uuid, key) of every listed part, in key order: PART_RE ``match``ed on the last path
        segment (next-seq), or ``search``ed on it (show and compact). As upstream, the listing is
        recursive, so a part-named object nested below the session prefix counts too."""
        rx = self._part_re()
        out = []
        for k in self.b.list_keys(prefix):
            name = k.rsplit("/", 1)[-1]
            m = rx.search(name) if search else rx.match(name)
            if m:
                out.append((int(m.group(1)), name[-len("12345678.jsonl") : -len(".jsonl")], k))
        if self.variant.has("part-seq-wide"):
            out.sort(key=lambda t: (t[0], t[2]))
        return out

    def mirror(
        self,
        harness: Harness,
        session_id: str | None = None,
        *,
        no_redact: bool = False,
        min_bytes: int = 1,
        follower: bool = False,
    ) -> Gen:
        """(RT-RTE-session-mirror, MEM-OBJ-session-parts, -meta, MEM-OBJ-mirror-state) ``_mirror_once``.

        Load the state (only ``cursor`` is read back); if fewer than *min_bytes* are new print "nothing
        new"; read the tail; redact per chunk; seq = max listed + 1; PUT the part; GET/PUT a rebuilt meta;
        save the state. Crash points ``tracecraft.mirror.after_part`` and ``tracecraft.mirror.after_meta``.
        """
        yield from self._command()
        sess = harness.find(session_id)
        spath = self.state_path(harness.name, sess.session_id)
        state = self._load_state(spath)
        if (
            self.variant.has("state-scoped")
            and state
            and (state.get("harness") != harness.name or state.get("source_path") != sess.path)
        ):
            state = {}
        if self.variant.has("stop-keeps-cursor") and state.get("ended") and follower:
            self._op("mirror", session=sess.session_id, result="stopped")
            return Flush("stopped")
        cursor = int(state.get("cursor", 0) or 0)
        prefix = f"sessions/{harness.name}/{sess.session_id}/"
        meta_key = prefix + "meta.json"
        if self.variant.has("mirror-intent") and state.get("pending"):
            resumed = yield from self._resume_intent(spath, state, prefix, meta_key)
            if resumed:
                state = self._load_state(spath)
                cursor = int(state.get("cursor", 0) or 0)
        size = harness.size(sess)
        if size - cursor < min_bytes:
            self._print(f"nothing new: session={sess.session_id} cursor={cursor:,} size={size:,}")
            self._op("mirror", session=sess.session_id, result="nothing new")
            return Flush("nothing new")
        chunk, nxt = harness.read_new(sess, cursor)
        if self.variant.has("line-aligned") and isinstance(harness, FileTailHarness):
            cut = chunk.rfind(b"\n") + 1
            if cut == 0:
                self._print(f"nothing new: session={sess.session_id} cursor={cursor:,} size={size:,}")
                return Flush("nothing new")
            chunk, nxt = chunk[:cut], cursor + cut
        body, counts = (chunk, {}) if no_redact else redact(chunk)
        yield from self._rt()
        parts = self._listed_parts(prefix)
        seq = max((p[0] for p in parts), default=-1) + 1
        uniq = self._hex()
        key = prefix + part_name(seq, uniq)
        if self.variant.has("part-cond-put"):
            try:
                yield from self._rt()
                # The note's seq-only name is not enough: a second mirror that lists after the first one's
                # part PUT gets seq+1 and uploads the same bytes. The lock is named by the start cursor.
                self.b.put_bytes(f"{prefix}_flush/{cursor:012d}.lock", b"", if_none_match=True)
            except PreconditionFailed:
                self._op("mirror", phase="fail", session=sess.session_id, seq=seq, result="conflict")
                return Flush("conflict", seq)
        if self.variant.has("mirror-intent"):
            state = dict(
                state,
                pending={
                    "seq": seq,
                    "uuid": uniq,
                    "key": key,
                    "range": [cursor, nxt],
                    "source_bytes": len(chunk),
                    "uploaded_bytes": len(body),
                    "redactions": counts,
                },
            )
            self._save_state(spath, state)
        yield from self._rt()
        self.b.put_bytes(key, body)
        self.sim.faults.point(fp.MIRROR_AFTER_PART)
        entry = {
            "seq": seq,
            "uuid": uniq,
            "cursor_range": [cursor, nxt],
            "source_bytes": len(chunk),
            "uploaded_bytes": len(body),
            "redactions": counts,
            "uploaded_at": self.clock.iso(),
        }
        yield from self._meta_append(meta_key, harness, sess, entry)
        self.sim.faults.point(fp.MIRROR_AFTER_META)
        new_state = {
            "harness": harness.name,
            "session_id": sess.session_id,
            "source_path": sess.path,
            "cursor": nxt,
            "last_uploaded_seq": seq,
            "last_flush_at": self.clock.iso(),
        }
        self._save_state(spath, new_state)
        self._print(
            f"uploaded part-{seq:05d}-{uniq}  source={len(chunk):,}B  upload={len(body):,}B  "
            f"redactions={counts or 'none'}"
        )
        self._op("mirror", session=sess.session_id, seq=seq, key=key, range=[cursor, nxt], redactions=counts)
        return Flush("uploaded", seq, key, (cursor, nxt), len(chunk), len(body), counts)

    def _resume_intent(self, spath: str, state: dict[str, Any], prefix: str, meta_key: str) -> Gen:
        """mirror-intent fix: the pending part landed? then make sure meta has it and commit the cursor."""
        pend = state["pending"]
        yield from self._rt()
        if not self.b.exists(pend["key"]):
            state.pop("pending")
            self._save_state(spath, state)
            return False
        yield from self._rt()
        meta = self.b.get_json(meta_key) or {}
        if not any(p.get("uuid") == pend["uuid"] for p in meta.get("parts", [])):
            entry = {
                "seq": pend["seq"],
                "uuid": pend["uuid"],
                "cursor_range": pend["range"],
                "source_bytes": pend["source_bytes"],
                "uploaded_bytes": pend["uploaded_bytes"],
                "redactions": pend["redactions"],
                "uploaded_at": self.clock.iso(),
            }
            harness_name = prefix.split("/")[1]
            sess = Session(harness_name, prefix.split("/")[2], str(state.get("source_path", "")))
            yield from self._meta_append(meta_key, None, sess, entry)
        state = {k: v for k, v in state.items() if k != "pending"}
        state["cursor"] = pend["range"][1]
        self._save_state(spath, state)
        return True

    def _meta_append(
        self, meta_key: str, harness: Harness | None, sess: Session, entry: dict[str, Any]
    ) -> Gen:
        """GET meta, append the entry, PUT a rebuilt meta (the meta-cas fix: compare-and-put, keep keys)."""
        while True:
            yield from self._rt()
            raw = self.b.get_bytes(meta_key)
            meta = _loads(raw) or {}
            now = self.clock.iso()
            new: dict[str, Any] = {}
            if self.variant.has("meta-cas"):
                new.update(meta)
            new.update(
                {
                    "schema_version": 1,
                    "harness": harness.name if harness else sess.harness,
                    "session_id": sess.session_id,
                    "source_path": sess.path,
                    "cwd": sess.cwd or None,
                    "agent_id": self.agent_id,
                    "started_at": meta.get("started_at", now),
                    "last_uploaded_at": now,
                    "ended_at": meta.get("ended_at"),
                    "total_source_bytes": int(meta.get("total_source_bytes") or 0) + entry["source_bytes"],
                    "total_uploaded_bytes": int(meta.get("total_uploaded_bytes") or 0)
                    + entry["uploaded_bytes"],
                    "redaction_counts": merge_counts(meta.get("redaction_counts") or {}, entry["redactions"]),
                    "parts": [*list(meta.get("parts") or []), entry],
                }
            )
            covered = {u for p in meta.get("parts") or [] for u in p.get("covers", [])}
            if self.variant.has("meta-cas") and entry["uuid"] in covered:
                new["parts"] = list(meta.get("parts") or [])  # a racing compact already merged this part
            if not self.variant.has("meta-cas"):
                yield from self._rt()
                self.b.put_json(meta_key, new)
                return
            yield from self._rt()
            if self.b.compare_and_put_json(meta_key, new, raw):
                return

    def mirror_follow(
        self, harness: Harness, session_id: str | None = None, *, interval: float = 5, cycles: int = 1
    ) -> Gen:
        """(RT-RTE-session-mirror) ``--follow``: ``_mirror_once`` every *interval* s, reloading the state.

        Raises :class:`TracecraftError` for interval <= 0. Not modeled: Ctrl-C (runs *cycles* times).
        """
        if interval <= 0:
            raise TracecraftError("--interval must be > 0")
        out = []
        for _ in range(cycles):
            out.append((yield from self.mirror(harness, session_id, follower=True)))
            if out[-1].status == "stopped":
                break
            yield self.sim.timeout(interval)
        return out

    def _matching_metas(self, session_id: str, harness: str | None = None) -> Gen:
        """Every ``…/<sid>/meta.json`` key in sort order (one listing); the first one is what show, stop
        and compact use. The require-harness fix refuses an ambiguous session id."""
        yield from self._rt()
        metas = [k for k in self.b.list_keys("sessions/") if k.endswith(f"/{session_id}/meta.json")]
        if harness is not None:
            metas = [k for k in metas if k.split("/")[1] == harness]
        if self.variant.has("require-harness") and len(metas) > 1:
            raise TracecraftError(f"Session {session_id} exists under several harnesses; pass --harness")
        return metas

    def _find_meta(self, session_id: str, harness: str | None = None) -> Gen:
        metas = yield from self._matching_metas(session_id, harness)
        if not metas:
            raise TracecraftError(f"session not found: {session_id}")
        return metas[0]

    def session_list(self, harness: str | None = None, limit: int = 20) -> Gen:
        """(RT-RTE-session-mirror) Metas (optionally of one harness), newest ``last_uploaded_at`` first."""
        yield from self._command()
        yield from self._rt()
        metas = [k for k in self.b.list_keys("sessions/") if k.endswith("/meta.json")]
        if harness:
            metas = [k for k in metas if k.split("/")[1] == harness]
        rows = []
        for k in metas:
            yield from self._rt()
            rows.append(self.b.get_json(k) or {})
        rows.sort(key=lambda m: str(m.get("last_uploaded_at") or ""), reverse=True)
        self._op("session_list", harness=harness, count=len(rows))
        return rows[:limit] if limit > 0 else rows

    def session_show(self, session_id: str, tail: int = 0, harness: str | None = None) -> Gen:
        """(RT-RTE-session-mirror, MEM-OBJ-session-parts) The first matching meta and the last *tail* lines.

        Downloads every listed part (the listing is the manifest; the compact-manifest fix uses meta),
        concatenates, ``splitlines()`` and decodes with replacement. Returns ``(meta, lines)``.
        """
        yield from self._command()
        meta_key = yield from self._find_meta(session_id, harness)
        yield from self._rt()
        meta = self.b.get_json(meta_key) or {}
        lines: list[str] = []
        if tail > 0:
            chunks = yield from self._transcript_parts(meta_key[: -len("meta.json")], meta)
            lines = [ln.decode("utf-8", errors="replace") for ln in tail_lines_of_parts(chunks, tail)]
            for ln in lines:
                self._print(ln)
        self._op("session_show", session=session_id, tail=tail, lines=len(lines))
        return meta, lines

    def _transcript(self, prefix: str, meta: dict[str, Any]) -> Gen:
        chunks = yield from self._transcript_parts(prefix, meta)
        return b"".join(chunks)

    def _transcript_parts(self, prefix: str, meta: dict[str, Any]) -> Gen:
        """The bodies of every listed part, in order: one GET per part (as upstream), not yet joined."""
        yield from self._rt()
        parts = self._listed_parts(prefix, search=True)
        if self.variant.has("compact-manifest") and meta.get("parts") is not None:
            manifest = {(p.get("seq"), p.get("uuid")) for p in meta["parts"]}
            parts = [p for p in parts if (p[0], p[1]) in manifest]
        chunks = []
        for _, _, k in parts:
            yield from self._rt()
            chunks.append(self.b.get_bytes(k) or b"")
        return chunks

    def transcript(self, harness: str, session_id: str) -> Gen:
        """The bytes ``show`` would concatenate for this session (all listed parts)."""
        prefix = f"sessions/{harness}/{session_id}/"
        yield from self._rt()
        meta = self.b.get_json(prefix + "meta.json") or {}
        return (yield from self._transcript(prefix, meta))

    def session_stop(self, session_id: str, harness: str | None = None) -> Gen:
        """(RT-RTE-session-mirror, MEM-OBJ-mirror-state) Delete the local state, then set ``ended_at``.

        Best effort, as upstream: a session with no meta is not an error; a non-empty meta of the first
        matching key gets ``ended_at`` if unset. Prints ``stopped session=… state_cleared=…
        meta_marked_ended=…`` and returns the meta key (None without one). Does not stop a running
        follower (the stop-keeps-cursor fix marks the state ended instead).
        """
        yield from self._command()
        hname = harness or "claude-code"
        spath = self.state_path(hname, session_id)
        had_state = self.home.exists(spath)
        if self.variant.has("stop-keeps-cursor"):
            st = self._load_state(spath)
            st["ended"] = True
            self._save_state(spath, st)
        elif had_state:
            self.home.delete(spath)
        metas = yield from self._matching_metas(session_id, harness)
        marked = False
        if metas:
            yield from self._rt()
            meta = self.b.get_json(metas[0]) or {}
            if meta and not meta.get("ended_at"):
                meta["ended_at"] = self.clock.iso()
                yield from self._rt()
                self.b.put_json(metas[0], meta)
                marked = True
        self._print(f"stopped session={session_id}  state_cleared={had_state}  meta_marked_ended={marked}")
        self._op("session_stop", session=session_id)
        return metas[0] if metas else None

    def session_compact(self, session_id: str, keep_tail: int = 0, harness: str | None = None) -> Gen:
        """(RT-RTE-session-compact) Merge all but the last K parts: PUT merged, PUT meta, DELETE targets.

        Targets are all but the last K parts (none when K >= the part count, as upstream's ``[:-K]``).
        Raises :class:`TracecraftError` for K < 0. Fewer than 2 targets prints "nothing to compact: …".
        Crash points ``tracecraft.compact.after_merged``, ``after_meta`` and ``after_delete``.
        """
        if keep_tail < 0:
            raise TracecraftError("--keep-tail must be >= 0")
        yield from self._command()
        meta_key = yield from self._find_meta(session_id, harness)
        prefix = meta_key[: -len("meta.json")]
        yield from self._rt()
        parts = self._listed_parts(prefix, search=True)
        if self.variant.has("compact-manifest"):
            yield from self._rt()
            m0 = self.b.get_json(meta_key) or {}
            manifest = {(p.get("seq"), p.get("uuid")) for p in m0.get("parts") or []}
            covered = {u for p in m0.get("parts") or [] for u in p.get("covers", [])}
            for seq, u, k in parts:  # originals a finished compact covered: delete idempotently
                if u in covered and (seq, u) not in manifest:
                    yield from self._rt()
                    self.b.delete(k)
            parts = [p for p in parts if (p[0], p[1]) in manifest]
        # As upstream's ``part_keys[:-K], part_keys[-K:]``: K >= the part count leaves no targets.
        targets = parts[: max(0, len(parts) - keep_tail)]
        kept = parts[len(targets) :]
        if len(targets) < 2:
            self._print(f"nothing to compact: {len(targets)} mergeable part(s) (kept newest {len(kept)})")
            return None
        chunks = []
        for _, _, k in targets:
            yield from self._rt()
            chunks.append(self.b.get_bytes(k) or b"")
        body = b"".join(chunks)
        uniq = self._hex()
        merged_key = prefix + part_name(0, uniq)
        yield from self._rt()
        self.b.put_bytes(merged_key, body)
        self.sim.faults.point(fp.COMPACT_AFTER_MERGED)
        while True:
            yield from self._rt()
            raw = self.b.get_bytes(meta_key)
            meta = _loads(raw) or {}
            merged = {
                "seq": 0,
                "uuid": uniq,
                "compacted_from": len(targets),
                "uploaded_bytes": len(body),
                "uploaded_at": self.clock.iso(),
            }
            if self.variant.has("compact-manifest") or self.variant.has("meta-cas"):
                merged["covers"] = [u for _, u, _ in targets]
            target_ids = {(s, u) for s, u, _ in targets}
            kept_seqs = {s for s, _, _ in kept}
            old = meta.get("parts") or []
            if self.variant.has("meta-cas"):
                surviving = [p for p in old if (p.get("seq"), p.get("uuid")) not in target_ids]
            else:
                surviving = [p for p in old if p.get("seq") in kept_seqs]
            meta["parts"] = [merged, *sorted(surviving, key=lambda p: p.get("seq", 0))]
            meta["last_compacted_at"] = self.clock.iso()
            yield from self._rt()
            if not self.variant.has("meta-cas"):
                self.b.put_json(meta_key, meta)
                break
            if self.b.compare_and_put_json(meta_key, meta, raw):
                break
        self.sim.faults.point(fp.COMPACT_AFTER_META)
        for i, (_, _, k) in enumerate(targets):
            yield from self._rt()
            self.b.delete(k)
            if i < len(targets) - 1:
                self.sim.faults.point(fp.COMPACT_AFTER_DELETE)
        self._op("session_compact", session=session_id, targets=len(targets), merged=merged_key)
        return merged_key

    # -- direct backend API (bypasses CLI validation, snapshots and redaction) -----------------------
    def store_put_json(self, key: str, doc: Any) -> Gen:
        """(RT-CMP-get-store) ``get_store().put_json``: a direct write, no CLI checks."""
        yield from self._rt()
        self.b.put_json(key, doc)
        self._op("store_put_json", key=key)

    def store_delete(self, key: str) -> Gen:
        """(RT-CMP-get-store, MEM-CLM-history-immutability) ``get_store().delete``: a direct delete."""
        yield from self._rt()
        self.b.delete(key)
        self._op("store_delete", key=key)


def tail_lines(body: bytes, n: int) -> list[bytes]:
    """``body.splitlines()[-n:]`` without splitting the whole body (windows from the end, doubling)."""
    window = 65_536
    while window < len(body):
        lines = body[-window:].splitlines()
        if len(lines) > n:  # the window's first line may be cut; it is never among the last n
            return lines[-n:]
        window *= 2
    return body.splitlines()[-n:]


def tail_lines_of_parts(chunks: list[bytes], n: int, *, window: int = 16_384) -> list[bytes]:
    """``b"".join(chunks).splitlines()[-n:]`` without joining or splitting the whole transcript.

    Takes growing byte windows off the end of the virtual concatenation. A window's first line may be
    cut (mid-line, or a lone ``\n`` whose ``\r`` lies before the cut); every later line break in the
    window is the same break as in the whole body, so once the window holds more than *n* lines its last
    *n* are the body's. ``n <= 0`` keeps the ``[-n:]`` slice semantics (all lines for 0).
    """
    total = sum(len(c) for c in chunks)
    window = max(1, window)
    while n > 0 and window < total:
        taken: list[bytes] = []
        need = window
        for c in reversed(chunks):
            if len(c) >= need:
                taken.append(c[len(c) - need :])
                break
            taken.append(c)
            need -= len(c)
        lines = b"".join(reversed(taken)).splitlines()
        if len(lines) > n:
            return lines[-n:]
        # Grow at least twofold, or to the size the window's mean line length says n + 1 lines need.
        window = max(2 * window, window * (n + 2) // max(len(lines) - 1, 1))
    return b"".join(chunks).splitlines()[-n:]


# -- validation ----------------------------------------------------------------------------------
def _no_session(harness: str, session_id: str | None, cwd: str) -> str:
    """Upstream's "No <harness> session found for id=<sid>" (or "in cwd=<cwd>")."""
    return f"No {harness} session found" + (f" for id={session_id}" if session_id else f" in cwd={cwd}")


def validate_recipient(recipient: str, *, what: str = "Recipient") -> str:
    """Stripped, non-empty, no ``/``, ``_`` only for ``_broadcast``; raises :class:`TracecraftError`
    with upstream's messages (*what* names the value: the validate-agent fix passes ``"Agent id"``)."""
    r = recipient.strip()
    if not r:
        raise TracecraftError(f"{what} cannot be empty")
    if "/" in r:
        raise TracecraftError(f"{what} may not contain '/'")
    if r.startswith("_") and r != "_broadcast":
        raise TracecraftError(f"{what} names starting with '_' are reserved ('_broadcast' broadcasts to all)")
    return r


def validate_memory_key(key: str) -> None:
    """Reject a blank key, any ``/``, and ``_history`` / ``_history.*``; raises :class:`TracecraftError`."""
    if not key.strip():
        raise TracecraftError("Key cannot be empty")
    if "/" in key:
        raise TracecraftError("Memory keys use dots as separators; '/' is not allowed")
    if key == "_history" or key.startswith("_history."):
        raise TracecraftError("The '_history' key namespace is reserved for version snapshots")


__all__ = [
    "CURSOR_GRACE_NS",
    "Bucket",
    "Client",
    "FileTailHarness",
    "HermesHarness",
    "Tracecraft",
    "validate_memory_key",
    "validate_recipient",
]
