"""Launcher of one real ``tracecraft`` command (tracecraft-ai 0.2.5), hooked into its clock, uuid and store.

memsim's transfer (:mod:`systems.tracecraft.transfer`) runs every command of a replayed example as its own
process: ``python transfer_child.py cli ARGS...`` (the ``tracecraft`` CLI itself, ``tracecraft.cli.cli``)
or ``python transfer_child.py store OP ARGS...`` (the package's own backend API, ``get_store()``), with its
own ``HOME``, working directory (holding ``.tracecraft.json``) and ``TRACECRAFT_AGENT``. The script uses
the standard library and the installed package only; it never imports memsim and never edits the
package's code. Before the command runs it rebinds, inside the package's own modules only:

* ``time`` / ``datetime`` (``protocol``, ``cli.steps``, ``cli.session``, ``cli.status``, ``cli.init_cmd``):
  the agent's clock, frozen between store calls at the value memsim sends, and ``time.sleep`` asks memsim
  to advance it (``wait-for`` polls on memsim's clock);
* ``uuid`` (``protocol``, ``cli.session``): each ``uuid4()`` asks memsim for the next 8 hex characters of
  the agent's stream, so keys are the model's keys;
* the store's methods (``S3.put_json/get_json/list_keys/exists/delete/put_file/get_file``; for HF a
  local stand-in for ``huggingface_hub.HfFileSystem``): before each call the process announces it and
  waits until memsim lets it go (so processes interleave as the model's did, and a crash at a named point
  kills it between two calls), and afterwards it reports what the call returned;
* optionally ``protocol.SEEN_CAP`` (``MEMSIM_TC_SEEN_CAP``), the one constant a cheap example sets.

The protocol is JSON lines over the Unix socket ``MEMSIM_TC_SOCK``: ``hello``, ``before``, ``after``,
``uuid``, ``sleep``, ``exit``; every reply may carry ``ns`` (the clock from now on) or ``die`` (exit 137
at once, a crash).
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import shutil
import socket
import sys
import time as _time
import traceback
import types
import uuid as _uuid
from pathlib import Path
from typing import Any

_CLOCK = [0]
_CHANNEL: dict[str, Any] = {}


def _send(msg: dict[str, Any]) -> None:
    f = _CHANNEL["file"]
    f.write(json.dumps(msg, default=str).encode() + b"\n")
    f.flush()


def _rpc(msg: dict[str, Any]) -> dict[str, Any]:
    _send(msg)
    line = _CHANNEL["file"].readline()
    if not line:
        os._exit(70)  # memsim went away
    reply: dict[str, Any] = json.loads(line)
    if reply.get("die"):
        os._exit(137)
    if "ns" in reply:
        _CLOCK[0] = int(reply["ns"])
    return reply


# -- the agent's clock and uuid stream -------------------------------------------------------------
class _Time:
    """The package's ``time`` module on the agent's clock."""

    def time_ns(self) -> int:
        return _CLOCK[0]

    def time(self) -> float:
        return _CLOCK[0] / 1_000_000_000

    def sleep(self, seconds: float) -> None:
        _rpc({"kind": "sleep", "s": seconds})

    def __getattr__(self, name: str) -> Any:
        return getattr(_time, name)


class _Datetime(_dt.datetime):
    """``datetime`` whose ``now()`` is the agent's clock (microsecond precision)."""

    @classmethod
    def now(cls, tz: Any = None) -> Any:  # type: ignore[override]
        ns = _CLOCK[0]
        utc = _dt.datetime.fromtimestamp(ns // 1_000_000_000, _dt.UTC)
        utc = utc.replace(microsecond=(ns % 1_000_000_000) // 1000)
        return utc if tz is not None else utc.replace(tzinfo=None)


class _Uuid:
    """The package's ``uuid`` module: ``uuid4().hex`` starts with the agent's next 8 hex characters."""

    def uuid4(self) -> Any:
        hex8 = _rpc({"kind": "uuid"})["hex"]
        return types.SimpleNamespace(hex=hex8 + "0" * 24)

    def __getattr__(self, name: str) -> Any:
        return getattr(_uuid, name)


# -- the store -------------------------------------------------------------------------------------
def _summary(value: Any) -> Any:
    if isinstance(value, dict | list | str | int | float | bool) or value is None:
        return value
    return repr(value)


def _gate(op: str, fn: Any) -> Any:
    """*fn* (a store method) announced before and reported after each call."""

    def gated(self: Any, *args: Any, **kwargs: Any) -> Any:
        key = args[0] if args else kwargs.get("key", kwargs.get("prefix", ""))
        before: dict[str, Any] = {"kind": "before", "op": op, "key": key}
        if op == "put_json":
            before["doc"] = args[1] if len(args) > 1 else kwargs.get("data")
            before["if_none_match"] = bool(kwargs.get("if_none_match", args[2] if len(args) > 2 else False))
        if op == "list_keys":
            before["start_after"] = kwargs.get("start_after", args[2] if len(args) > 2 else None)
        if op == "put_file":
            local = str(args[1] if len(args) > 1 else kwargs["local_path"])
            before["body"] = Path(local).read_bytes().decode("latin-1")
        _rpc(before)
        try:
            result = fn(self, *args, **kwargs)
        except BaseException as exc:
            _rpc({"kind": "after", "op": op, "key": key, "error": f"{type(exc).__name__}: {exc}"})
            raise
        _rpc({"kind": "after", "op": op, "key": key, "result": _summary(result)})
        return result

    return gated


class _HfFileSystem:
    """A local stand-in for ``huggingface_hub.HfFileSystem`` (``hf://buckets/<bucket>/<project>/<key>``
    under ``MEMSIM_TC_HF_ROOT``): the calls ``tracecraft.hf.HF`` makes, with ``exists`` and every write
    gated like the S3 store's calls. The Hub itself is never contacted."""

    def __init__(self, token: Any = None) -> None:
        self.root = Path(os.environ["MEMSIM_TC_HF_ROOT"])

    def _local(self, path: str) -> Path:
        return self.root / path.removeprefix("hf://").removeprefix("buckets/")

    @staticmethod
    def _key(path: str) -> str:
        return "/".join(path.removeprefix("hf://").split("/")[3:])

    def exists(self, path: str) -> bool:
        _rpc({"kind": "before", "op": "exists", "key": self._key(path)})
        return self._local(path).exists()

    def open(self, path: str, mode: str = "r", **kw: Any) -> Any:
        p = self._local(path)
        if "w" in mode:
            _rpc({"kind": "before", "op": "put_json", "key": self._key(path)})
            p.parent.mkdir(parents=True, exist_ok=True)
        return p.open(mode, **kw)

    def find(self, path: str, detail: bool = False) -> Any:
        base = self._local(path)
        if not base.exists():
            raise FileNotFoundError(path)
        files = [base] if base.is_file() else [q for q in base.rglob("*") if q.is_file()]
        names = sorted("buckets/" + str(q.relative_to(self.root)) for q in files)
        return (
            {n: {"size": (self.root / n[len("buckets/") :]).stat().st_size} for n in names}
            if detail
            else names
        )

    def rm(self, path: str) -> None:
        _rpc({"kind": "before", "op": "delete", "key": self._key(path)})
        self._local(path).unlink()

    def put(self, lpath: str, rpath: str) -> None:
        _rpc({"kind": "before", "op": "put_file", "key": self._key(rpath)})
        p = self._local(rpath)
        p.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(lpath, p)

    def get(self, rpath: str, lpath: str) -> None:
        shutil.copyfile(self._local(rpath), lpath)


class _HfApi:
    def __init__(self, token: Any = None) -> None:
        pass

    def create_bucket(self, *args: Any, **kwargs: Any) -> None:
        return None

    def bucket_info(self, bucket: str) -> Any:
        return types.SimpleNamespace(private=True)


def _install() -> None:
    if os.environ.get("MEMSIM_TC_HF_ROOT"):
        sys.modules["huggingface_hub"] = types.SimpleNamespace(HfFileSystem=_HfFileSystem, HfApi=_HfApi)  # type: ignore[assignment]
    import tracecraft.cli  # noqa: F401  (imports every command module)
    import tracecraft.s3 as s3

    # By module name: ``tracecraft.cli`` rebinds some of its submodule names to their click commands.
    protocol, steps, session, status, init_cmd = (
        sys.modules[f"tracecraft.{name}"]
        for name in ("protocol", "cli.steps", "cli.session", "cli.status", "cli.init_cmd")
    )

    for mod in (protocol, steps, session, status):
        mod.time = _Time()  # type: ignore[attr-defined]
    for mod in (protocol, steps, session, status, init_cmd):
        mod.datetime = _Datetime  # type: ignore[attr-defined]
    for mod in (protocol, session):
        mod.uuid = _Uuid()  # type: ignore[attr-defined]
    for op in ("put_json", "get_json", "list_keys", "exists", "delete", "put_file", "get_file"):
        setattr(s3.S3, op, _gate(op, getattr(s3.S3, op)))
    if os.environ.get("MEMSIM_TC_SEEN_CAP"):
        protocol.SEEN_CAP = int(os.environ["MEMSIM_TC_SEEN_CAP"])  # type: ignore[attr-defined]


def _run(mode: str, argv: list[str]) -> int:
    if mode == "cli":
        from tracecraft.cli import cli

        cli.main(args=argv, prog_name="tracecraft", standalone_mode=True)
        return 0
    from tracecraft.store import get_store

    store, _ = get_store()
    op, *rest = argv
    if op == "put_json":
        store.put_json(rest[0], json.loads(rest[1]))
    elif op == "delete":
        store.delete(rest[0])
    else:
        raise SystemExit(f"unknown store operation {op!r}")
    return 0


def main() -> None:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(600)
    sock.connect(os.environ["MEMSIM_TC_SOCK"])
    _CHANNEL["file"] = sock.makefile("rwb")
    _rpc({"kind": "hello", "token": os.environ["MEMSIM_TC_TOKEN"], "pid": os.getpid()})
    code = 1
    try:
        _install()
        code = _run(sys.argv[1], sys.argv[2:])
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if isinstance(exc.code, str):
            print(exc.code, file=sys.stderr)
    except BaseException:
        traceback.print_exc()
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    _send({"kind": "exit", "code": code})
    os._exit(code)


if __name__ == "__main__":
    main()
