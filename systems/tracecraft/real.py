"""The real system as a driver world: every command one real ``tracecraft`` process on a moto server.

:class:`RealWorld` gives the claim drivers (:mod:`systems.tracecraft.drivers`) the same API as the model's
world, backed by the installed ``tracecraft-ai`` 0.2.5: :class:`RealTracecraft` is one project in a bucket
of a moto server on 127.0.0.1, and :class:`RealClient` runs each command as its own process
(:mod:`systems.tracecraft.transfer_child`) with its own ``HOME`` (the host tree, holding the harness
sessions and ``~/.tracecraft/mirror-state``), working directory (holding ``.tracecraft.json``) and
``TRACECRAFT_AGENT``. The process's clock, uuids and store calls are hooked, never its code: memsim's
simulation stays the scheduler. Before each store call the process waits while its client spends the
model's latency on the simulation clock, so real processes interleave as the model's commands did; its
clock is the agent's clock (skew included) at that instant; its uuids come from the agent's stream; a
``crash@POINT`` fault kills it between the two store calls the point names. Clients return what the
model's clients return, parsed from the real output and the store calls it made.

Not modeled: ``complete --changed-files-from-git``, ``mirror --follow`` and the fixes (the real system is
upstream's design: only the faithful variant exists).
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sim.engine import Simulation
from sim.errors import UsageError
from sim.faults import Crash
from sim.files import DiskTree, FileTree
from sim.objects import ObjectStore, PreconditionFailed, S3Store
from sim.variant import FAITHFUL, Variant
from systems.tracecraft import faults as fp
from systems.tracecraft.model.bucket import Bucket
from systems.tracecraft.model.core import ClientCore, Gen
from systems.tracecraft.model.harness import FileTailHarness
from systems.tracecraft.protocol import PART_RE, SEEN_CAP, TracecraftError, normalize_step_id
from systems.tracecraft.state import Flush, InboxLine

CHILD = Path(__file__).with_name("transfer_child.py")
PACKAGE = "tracecraft-ai"
VERSION = "0.2.5"
INSTALL = f"pip install {PACKAGE}=={VERSION}"
CREDENTIALS = ("testing", "testing")


def require_real() -> str:
    """The installed real system's name and version; raises :class:`UsageError` saying how to install it."""
    from importlib import metadata

    try:
        version = metadata.version(PACKAGE)
    except metadata.PackageNotFoundError:
        raise UsageError(f"the real Tracecraft is not installed: {INSTALL}") from None
    if version != VERSION:
        raise UsageError(f"transfer needs {PACKAGE} {VERSION}, found {version}: {INSTALL}")
    return f"{PACKAGE} {version}"


class DirStore(ObjectStore):
    """An object store on a local directory: the HF stand-in's files, read directly by the drivers."""

    name = "dir"

    def __init__(self, root: Path) -> None:
        super().__init__()
        self.root = root

    def _put(self, key: str, body: bytes, if_none_match: bool) -> None:
        p = self.root / key
        if if_none_match and p.exists():
            raise PreconditionFailed(key)
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(body)

    def _get(self, key: str) -> bytes | None:
        p = self.root / key
        return p.read_bytes() if p.is_file() else None

    def _delete(self, key: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            (self.root / key).unlink()

    def _keys(self, prefix: str, start_after: str | None) -> list[str]:
        if not self.root.exists():
            return []
        keys = sorted(p.relative_to(self.root).as_posix() for p in self.root.rglob("*") if p.is_file())
        return [k for k in keys if k.startswith(prefix) and (start_after is None or k > start_after)]


class Channel:
    """One child's JSON-lines control connection."""

    def __init__(self, conn: socket.socket, hello: dict[str, Any], f: Any) -> None:
        self.conn, self.hello, self.f = conn, hello, f

    def recv(self) -> dict[str, Any] | None:
        line = self.f.readline()
        return json.loads(line) if line else None

    def send(self, msg: dict[str, Any]) -> None:
        self.f.write(json.dumps(msg).encode() + b"\n")
        self.f.flush()

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.f.close()
            self.conn.close()


class RealWorld:
    """The real CLI on a moto server on 127.0.0.1 (started here unless *endpoint* is given)."""

    name = "real"

    def __init__(self, endpoint: str | None = None) -> None:
        self.system_name = require_real()
        import boto3

        from sim.objects import MotoServer

        self._tmp = tempfile.TemporaryDirectory(prefix="memsim-tc-")
        self.root = Path(self._tmp.name).resolve()
        self._server = MotoServer() if endpoint is None else None
        self.endpoint = endpoint or (self._server.url if self._server else "")
        key, secret = CREDENTIALS
        self.client = boto3.client(
            "s3",
            endpoint_url=self.endpoint,
            aws_access_key_id=key,
            aws_secret_access_key=secret,
            region_name="us-east-1",
        )
        self.app = self.root / "app"  # the directory the host's sessions ran in (claude-code's --cwd)
        self.app.mkdir()
        self.sock_path = str(self.root / "ctl.sock")
        self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._listener.bind(self.sock_path)
        self._listener.listen(16)
        self._listener.settimeout(1.0)
        self._pending: dict[str, Channel] = {}
        self._seq = itertools.count()
        self.commands = 0  # real processes run

    def close(self) -> None:
        self._listener.close()
        for ch in self._pending.values():
            ch.close()
        if self._server is not None:
            self._server.stop()
        self._tmp.cleanup()

    def __enter__(self) -> RealWorld:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def n(self) -> int:
        return next(self._seq)

    # -- the World protocol (systems.tracecraft.drivers.common) --------------------------------------
    def store(self) -> ObjectStore:
        # moto's backend is per process: a bucket name is never reused within this process.
        bucket = f"memsim-tc-{os.getpid()}-{next(_BUCKETS)}"
        self.client.create_bucket(Bucket=bucket)
        return S3Store(self.client, bucket)

    def system(self, sim: Simulation, store: ObjectStore, **kw: Any) -> Any:
        return RealTracecraft(self, sim, store, **kw)

    def tree(self, mtime: Any = None, name: str | None = None) -> FileTree:
        """A fresh host home directory (``home-<n>``, or *name*)."""
        return DiskTree(self.root / (name or f"home-{self.n()}"))

    def harness(self, name: str, tree: FileTree) -> FileTailHarness:
        root = tree.root if isinstance(tree, DiskTree) else Path("/")
        return FileTailHarness(name, tree, cwd=str(self.app), home=str(root))

    # -- processes --------------------------------------------------------------------------------
    def spawn(self, argv: list[str], *, cwd: Path, env: dict[str, str], out: Path, err: Path) -> Any:
        self.commands += 1
        with open(out, "wb") as fo, open(err, "wb") as fe:
            return subprocess.Popen(
                [sys.executable, "-P", str(CHILD), *argv],
                cwd=cwd,
                env=env,
                stdout=fo,
                stderr=fe,
                close_fds=True,
            )

    def connect(self, token: str, proc: Any) -> Channel:
        """The control channel of the child holding *token* (waits for it to start)."""
        while token not in self._pending:
            try:
                conn, _ = self._listener.accept()
            except TimeoutError:
                if proc.poll() is not None:
                    raise RuntimeError(
                        f"the real command exited ({proc.returncode}) before it started"
                    ) from None
                continue
            conn.settimeout(600)
            f = conn.makefile("rwb")
            hello = json.loads(f.readline() or b"{}")
            self._pending[str(hello.get("token"))] = Channel(conn, hello, f)
        return self._pending.pop(token)


_BUCKETS = itertools.count()

#: A fault rule: (phase "before"/"after", store op, key test, fault point, skip the command's first match).
Rule = tuple[str, str, Callable[[str], bool], str, bool]


def _ends(suffix: str) -> Callable[[str], bool]:
    return lambda key: key.endswith(suffix)


def _part(key: str) -> bool:
    return re.search(r"/part-\d+-[a-f0-9]{8}\.jsonl$", key) is not None


class RealTracecraft:
    """One real project: a bucket on the moto server (or an HF stand-in directory) and its configs."""

    def __init__(
        self,
        world: RealWorld,
        sim: Simulation,
        store: ObjectStore,
        *,
        project: str = "proj",
        backend: str = "s3",
        bucket_name: str = "bucket",
        variant: Variant = FAITHFUL,
        seen_cap: int = SEEN_CAP,
        latency: float = 0.0,
    ) -> None:
        if not variant.faithful:
            raise UsageError(f"the real system is upstream's design; it has no variant {variant.label()}")
        self.world, self.sim, self.variant = world, sim, variant
        self.project, self.backend, self.seen_cap, self.latency = project, backend, seen_cap, latency
        self.bucket_name = getattr(store, "bucket", bucket_name)
        self.hf_root = world.root / "hf"
        if backend == "hf":
            store = DirStore(self.hf_root / self.bucket_name)
        self.bucket = Bucket(store, project, backend)

    @property
    def store(self) -> ObjectStore:
        return self.bucket.store

    def agent(self, agent_id: str, *, home: FileTree | None = None, reader: str = "") -> RealClient:
        return RealClient(self, agent_id, home=home, reader=reader)

    def config_dir(self, agent_id: str) -> Path:
        """The working directory of *agent_id*'s processes, holding its ``.tracecraft.json``."""
        safe = re.sub(r"[^A-Za-z0-9_.-]", "_", agent_id) + f"-{abs(hash(agent_id)) % 10**8}"
        d = self.world.root / "cfg" / f"{self.bucket_name}-{self.project}-{safe}"
        if not d.exists():
            d.mkdir(parents=True)
            cfg: dict[str, Any] = {
                "backend": self.backend,
                "bucket": self.bucket_name,
                "project": self.project,
                "agent_id": agent_id,
            }
            if self.backend == "s3":
                key, secret = CREDENTIALS
                cfg.update(endpoint=self.world.endpoint, access_key=key, secret_key=secret)
            (d / ".tracecraft.json").write_text(json.dumps(cfg, indent=2) + "\n")
        return d


class RealClient(ClientCore):
    """One agent's real CLI: each command a process, returning what the model's command returns."""

    def __init__(self, tc: RealTracecraft, agent_id: str, *, home: FileTree | None = None, reader: str = ""):
        super().__init__(tc, agent_id, home=home or tc.world.tree(), reader=reader)  # type: ignore[arg-type]
        self.real = tc
        self.world = tc.world

    # -- one process ------------------------------------------------------------------------------
    def _run(self, argv: list[str], *, rules: tuple[Rule, ...] = (), delay: float = 0.0) -> Gen:
        """Run ``tracecraft ARGV`` (or a ``store`` operation) as a process; returns (stdout lines, calls).

        Raises :class:`TracecraftError` with click's message on a non-zero exit, :class:`Crash` when a
        fault point fires (the process is killed there).
        """
        w = self.world
        token = f"t{w.n()}"
        out, err = w.root / f"{token}.out", w.root / f"{token}.err"
        home = self.home.root if isinstance(self.home, DiskTree) else w.root
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(home),
            "TRACECRAFT_AGENT": self.agent_id,
            "PYTHONIOENCODING": "utf-8",
            "PYTHONHASHSEED": "0",
            "AWS_DEFAULT_REGION": "us-east-1",
            "AWS_CONFIG_FILE": os.devnull,
            "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
            "AWS_EC2_METADATA_DISABLED": "true",
            "MEMSIM_TC_SOCK": w.sock_path,
            "MEMSIM_TC_TOKEN": token,
        }
        if self.real.seen_cap != SEEN_CAP:
            env["MEMSIM_TC_SEEN_CAP"] = str(self.real.seen_cap)
        if self.real.backend == "hf":
            env["MEMSIM_TC_HF_ROOT"] = str(self.real.hf_root)
        proc = w.spawn(argv, cwd=self.real.config_dir(self.agent_id), env=env, out=out, err=err)
        calls: list[dict[str, Any]] = []
        code: int | None = None
        matched: set[int] = set()
        first_put = True
        try:
            ch = w.connect(token, proc)
            ch.send({"ns": self.clock.ns()})
            while (msg := ch.recv()) is not None:
                kind = msg["kind"]
                if kind == "exit":
                    code = int(msg["code"])
                    break
                if kind == "uuid":
                    ch.send({"hex": self._hex()})
                    continue
                if kind == "sleep":
                    yield self.sim.timeout(float(msg["s"]))
                    ch.send({"ns": self.clock.ns()})
                    continue
                calls.append(msg)
                for i, (phase, op, test, point, skip_first) in enumerate(rules):
                    if phase == kind and op == msg["op"] and test(str(msg["key"])):
                        if skip_first and i not in matched:
                            matched.add(i)
                            continue
                        self.sim.faults.point(point)
                if kind == "before":
                    if (
                        msg["op"] == "put_json"
                        and str(msg["key"]).endswith("_cursor.json")
                        and self.cursor_pause
                    ):
                        yield self.sim.timeout(self.cursor_pause)
                    if msg["op"] == "put_json" and first_put and delay > 0:
                        yield self.sim.timeout(delay)
                    first_put = first_put and msg["op"] != "put_json"
                    yield from self._rt()
                ch.send({"ns": self.clock.ns()})
        except Crash:
            with contextlib.suppress(ProcessLookupError):
                os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
            self._collect(out, err)
            raise
        finally:
            if proc.poll() is None and code is not None:
                proc.wait(timeout=60)
        if code is None:
            code = proc.wait(timeout=60)
        stderr = self._collect(out, err)
        if code != 0:
            errors = [ln[len("Error: ") :] for ln in stderr if ln.startswith("Error: ")]
            if errors:  # click's "Error: …" line becomes the exception, as the model raises it
                del self.stderr[len(self.stderr) - len(stderr) + stderr.index("Error: " + errors[-1])]
                raise TracecraftError(errors[-1])
            if stderr and stderr[0].startswith("Traceback"):
                raise TracecraftError(f"the real CLI raised: {stderr[-1]}")
            raise TracecraftError(stderr[-1] if stderr else "")
        return calls

    def _collect(self, out: Path, err: Path) -> list[str]:
        """Append the process's stdout and stderr lines to :attr:`stdout`/:attr:`stderr`; its stderr lines."""
        o = out.read_text(encoding="utf-8", errors="replace")
        e = err.read_text(encoding="utf-8", errors="replace")
        self.stdout.extend(o.splitlines())
        lines = e.splitlines()
        self.stderr.extend(lines)
        return lines

    @staticmethod
    def _put_key(calls: list[dict[str, Any]], op: str, test: Callable[[str], bool]) -> str | None:
        return next(
            (str(c["key"]) for c in calls if c["kind"] == "before" and c["op"] == op and test(c["key"])), None
        )

    def _lines(self, gen: Gen) -> Gen:
        """Run *gen* (a ``_run``) and return (its calls, the stdout lines it printed)."""
        start = len(self.stdout)
        calls = yield from gen
        return calls, self.stdout[start:]

    # -- memory ---------------------------------------------------------------------------------------
    def memory_set(self, key: str, value: str) -> Gen:
        rules: tuple[Rule, ...] = (("after", "put_json", lambda k: k.startswith("memory/_history/"),
                                    fp.MEMORY_SET_AFTER_SNAPSHOT, False),)  # fmt: skip
        calls = yield from self._run(["cli", "memory", "set", "--", key, value], rules=rules)
        return self._put_key(calls, "put_json", lambda k: k.startswith("memory/_history/"))

    def memory_get(self, key: str, with_meta: bool = False) -> Gen:
        args = ["cli", "memory", "get", *(["--with-meta"] if with_meta else []), "--", key]
        _, lines = yield from self._lines(self._run(args))
        text = "\n".join(lines)
        return json.loads(text) if with_meta else text

    def memory_history(self, key: str, limit: int = 20) -> Gen:
        _, lines = yield from self._lines(
            self._run(["cli", "memory", "history", "--limit", str(limit), "--", key])
        )
        return lines

    def memory_list(self, prefix: str = "") -> Gen:
        _, lines = yield from self._lines(self._run(["cli", "memory", "list", *([prefix] if prefix else [])]))
        return lines

    # -- mail ------------------------------------------------------------------------------------------
    def send(self, recipient: str, message: str, step: str | None = None, *, delay: float = 0.0) -> Gen:
        args = ["cli", "send", *(["--step", step] if step else []), "--", recipient, message]
        calls = yield from self._run(args, delay=delay)
        return self._put_key(calls, "put_json", lambda k: k.startswith("messages/"))

    def inbox(self, new: bool = False, delete: bool = False) -> Gen:
        rules: tuple[Rule, ...] = (
            ("before", "put_json", _ends("_cursor.json"), fp.INBOX_BEFORE_CURSOR, False),
            ("before", "delete", lambda k: True, fp.INBOX_AFTER_DELETE, True),
        )
        args = ["cli", "inbox", *(["--new"] if new else []), *(["--delete"] if delete else [])]
        calls = yield from self._run(args, rules=rules)
        me, bp = self.agent_id, "messages/_broadcast/"
        rows: list[tuple[Any, InboxLine]] = []
        for c in calls:
            key = str(c["key"])
            if c["kind"] != "after" or c["op"] != "get_json" or key.endswith("_cursor.json"):
                continue
            doc = c.get("result")
            if not isinstance(doc, dict) or (key.startswith(bp) and doc.get("from", "?") == me):
                continue
            kind = "broadcast" if key.startswith(bp) else "direct"
            sender, sent_at = str(doc.get("from", "?")), str(doc.get("sent_at", "?"))
            line = InboxLine(key, kind, sender, sent_at, str(doc.get("message", "")), doc.get("step"))
            rows.append((doc.get("sent_at", ""), line))
        rows.sort(key=lambda row: row[0])  # upstream's stable sort by the sender's sent_at
        return [line for _, line in rows]

    # -- steps -----------------------------------------------------------------------------------------
    def claim(self, step_id: str) -> Gen:
        rules: tuple[Rule, ...] = (
            ("before", "put_json", _ends("/status.json"), fp.CLAIM_AFTER_CLAIM, False),
        )
        yield from self._run(["cli", "claim", "--", step_id], rules=rules)
        return normalize_step_id(step_id)

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
        if changed_files is not None:
            raise UsageError(
                "the real complete takes its changed files from git, which transfer does not run"
            )
        args = ["cli", "complete", "--note", note]
        args += ["--to", to] if to else []
        args += ["--next-action", next_action] if next_action else []
        args += ["--blocked"] if blocked else []
        args += ["--needs-review"] if needs_review else []
        args += ["--force"] if force else []
        rules: tuple[Rule, ...] = (
            ("before", "put_json", _ends("/handoff.json"), fp.COMPLETE_AFTER_STATUS, False),
        )
        yield from self._run([*args, "--", step_id], rules=rules)
        return "blocked" if blocked else "needs_review" if needs_review else "complete"

    def step_status(self, step_id: str) -> Gen:
        _, lines = yield from self._lines(self._run(["cli", "step-status", "--", step_id]))
        m = re.fullmatch(r"(?s).*?: (\S+)(?: \(agent: (.*)\))?", lines[-1])
        if m is None:
            raise TracecraftError(f"unparsed step-status output {lines!r}")
        return (m.group(1), m.group(2))

    def wait_for(self, step_ids: list[str], timeout: float = 300) -> Gen:
        yield from self._run(["cli", "wait-for", "--timeout", str(int(timeout)), "--", *step_ids])
        return {}

    # -- agents and status -----------------------------------------------------------------------------
    def init(self) -> Gen:
        tc = self.real
        key, secret = CREDENTIALS
        args = ["cli", "init", "--backend", tc.backend, "--bucket", tc.bucket_name, "--project", tc.project]
        args += ["--agent", self.agent_id]
        if tc.backend == "s3":
            args += ["--endpoint", self.world.endpoint, "--access-key", key, "--secret-key", secret]
        yield from self._run(args)
        return self.agent_id

    def agents(self) -> Gen:
        _, lines = yield from self._lines(self._run(["cli", "agents"]))
        rows = []
        for ln in lines[2:] if lines and lines[0].startswith("ID") else []:
            parts = ln.split()
            if len(parts) >= 3:
                rows.append(
                    {"id": parts[0], "status": parts[1], "step": None if parts[2] == "-" else parts[2]}
                )
        return rows

    def status(self) -> Gen:
        _, lines = yield from self._lines(self._run(["cli", "status", "--json"]))
        return json.loads("\n".join(lines))

    # -- artifacts -------------------------------------------------------------------------------------
    def artifact_upload(self, name: str, body: bytes, step: str | None = None) -> Gen:
        local = self.real.config_dir(self.agent_id) / name
        local.parent.mkdir(parents=True, exist_ok=True)
        local.write_bytes(body)
        args = ["cli", "artifact", "upload", *(["--step", step] if step else []), "--", name]
        calls = yield from self._run(args)
        local.unlink()
        return self._put_key(calls, "put_file", lambda k: True)

    def artifact_download(self, name: str, step: str | None = None) -> Gen:
        local = self.real.config_dir(self.agent_id) / name
        args = ["cli", "artifact", "download", *(["--step", step] if step else []), "--", name]
        yield from self._run(args)
        body = local.read_bytes()
        local.unlink()
        return body

    def artifact_list(self, step: str | None = None) -> Gen:
        _, lines = yield from self._lines(
            self._run(["cli", "artifact", "list", *(["--step", step] if step else [])])
        )
        return [ln for ln in lines if ln != "No artifacts found."]

    # -- sessions --------------------------------------------------------------------------------------
    def state_path(self, harness: str, session_id: str) -> str:
        return f".tracecraft/mirror-state/{session_id}.json"

    def mirror(
        self, harness: Any, session_id: str | None = None, *, no_redact: bool = False, min_bytes: int = 1
    ) -> Gen:
        rules: tuple[Rule, ...] = (
            ("after", "put_file", _part, fp.MIRROR_AFTER_PART, False),
            ("after", "put_json", _ends("/meta.json"), fp.MIRROR_AFTER_META, False),
        )
        args = ["cli", "session", "mirror", "--harness", harness.name, "--cwd", harness.cwd]
        args += ["--session-id", session_id] if session_id else []
        args += ["--no-redact"] if no_redact else []
        args += ["--min-bytes", str(min_bytes)] if min_bytes != 1 else []
        calls = yield from self._run(args, rules=rules)
        key = self._put_key(calls, "put_file", _part)
        if key is None:
            return Flush("nothing new")
        m = re.search(r"part-(\d+)-", key.rsplit("/", 1)[-1])
        return Flush("uploaded", int(m.group(1)) if m else None, key)

    def mirror_follow(self, *args: Any, **kwargs: Any) -> Gen:
        raise UsageError("transfer runs one-shot mirrors; --follow loops until Ctrl-C")

    def session_show(self, session_id: str, tail: int = 0, harness: str | None = None) -> Gen:
        if harness is not None:
            raise UsageError("upstream's session show has no --harness")
        _, lines = yield from self._lines(
            self._run(["cli", "session", "show", "--tail", str(tail), "--", session_id])
        )
        if tail > 0 and "--- tail ---" in lines:
            i = lines.index("--- tail ---")
            return json.loads("\n".join(lines[: i - 1])), lines[i + 1 :]
        return json.loads("\n".join(lines)), []

    def session_stop(self, session_id: str, harness: str | None = None) -> Gen:
        calls = yield from self._run(["cli", "session", "stop", "--", session_id])
        for c in calls:
            if c["kind"] == "after" and c["op"] == "list_keys":
                metas = [k for k in c.get("result") or [] if k.endswith(f"/{session_id}/meta.json")]
                return metas[0] if metas else None
        return None

    def session_compact(self, session_id: str, keep_tail: int = 0, harness: str | None = None) -> Gen:
        rules: tuple[Rule, ...] = (
            ("after", "put_file", _part, fp.COMPACT_AFTER_MERGED, False),
            ("after", "put_json", _ends("/meta.json"), fp.COMPACT_AFTER_META, False),
            ("before", "delete", lambda k: True, fp.COMPACT_AFTER_DELETE, True),
        )
        args = ["cli", "session", "compact", "--keep-tail", str(keep_tail), "--", session_id]
        calls = yield from self._run(args, rules=rules)
        return self._put_key(calls, "put_file", _part)

    def session_list(self, harness: str | None = None, limit: int = 20, sort_by: str = "recent") -> Gen:
        args = ["cli", "session", "list", "--limit", str(limit), "--sort-by", sort_by]
        _, lines = yield from self._lines(self._run([*args, *(["--harness", harness] if harness else [])]))
        return lines

    def transcript(self, harness: str, session_id: str) -> Gen:
        """The bytes ``show`` would concatenate (every listed part), read directly from the bucket."""
        prefix = f"sessions/{harness}/{session_id}/"
        yield from self._rt()
        yield from self._rt()
        keys = sorted(k for k in self.b.list_keys(prefix) if PART_RE.search(k.rsplit("/", 1)[-1]))
        chunks = []
        for k in keys:
            yield from self._rt()
            chunks.append(self.b.get_bytes(k) or b"")
        return b"".join(chunks)

    # -- the backend API -------------------------------------------------------------------------------
    def store_put_json(self, key: str, doc: Any) -> Gen:
        yield from self._run(["store", "put_json", key, json.dumps(doc)])

    def store_delete(self, key: str) -> Gen:
        yield from self._run(["store", "delete", key])
