"""Conformance with the released package (tracecraft-ai 0.2.5): pure functions, counterexample transfer,
and a differential of random operation sequences against the real CLI.

Hypothesis feeds the same generated keys, listings, cursor documents and byte blobs to
``systems.tracecraft`` and to ``tracecraft.protocol`` / ``tracecraft.redact`` and asserts identical results
(errors included). Every claim's shrunk counterexample is then replayed on the real ``tracecraft`` CLI
(:mod:`systems.tracecraft.transfer`: one process per command against a moto server on 127.0.0.1), and random
multi-agent sequences are run on both. The package is in the project's test extra; no upstream code is
copied.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
import strategies_tracecraft as tst
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import systems.tracecraft as model
from sim import claims as cl
from sim import search
from sim.engine import Simulation
from sim.errors import UsageError
from sim.files import MemoryTree
from sim.objects import MotoServer
from sim.replay import load_example
from systems.tracecraft import real, transfer
from systems.tracecraft.drivers import common as drivers
from systems.tracecraft.model import FileTailHarness
from systems.tracecraft.protocol import TracecraftError

WHY = "tracecraft-ai 0.2.5 (the test extra) is not installed"
up = pytest.importorskip("tracecraft.protocol", reason=WHY)
up_redact = pytest.importorskip("tracecraft.redact", reason=WHY)


def _outcome(fn: Any, *args: Any) -> tuple[str, Any]:
    try:
        return ("ok", fn(*args))
    except Exception as exc:
        return ("error", type(exc).__name__ != "")


def test_constants_match() -> None:
    """CURSOR_LEAF, CURSOR_GRACE_NS, SEEN_CAP and STALE_AFTER_S equal upstream's."""
    expected = (up.CURSOR_LEAF, up.CURSOR_GRACE_NS, up.SEEN_CAP, up.STALE_AFTER_S)

    actual = (model.CURSOR_LEAF, model.CURSOR_GRACE_NS, model.SEEN_CAP, model.STALE_AFTER_S)

    assert expected == actual


@given(st.text(tst.LEAF_CHARS, max_size=10))
def test_is_data_leaf(leaf: str) -> None:
    """is_data_leaf agrees on arbitrary leaves."""
    assert up.is_data_leaf(leaf) == model.is_data_leaf(leaf)


@given(tst.prefixes, st.lists(tst.keys(), max_size=10))
def test_direct_children(prefix: str, keys: list[str]) -> None:
    """direct_children agrees on mixed listings (foreign prefixes, nested and reserved leaves)."""
    assert list(up.direct_children(keys, prefix)) == model.direct_children(keys, prefix)


@given(tst.prefixes, tst.agents, tst.ts_values, tst.hex8)
def test_append_key(prefix: str, agent: str, ts: int, suffix: str) -> None:
    """append_key agrees with time.time_ns and uuid.uuid4 patched to the same values."""
    fake_uuid = mock.Mock(hex=suffix + "0" * 24)
    with mock.patch("time.time_ns", return_value=ts), mock.patch("uuid.uuid4", return_value=fake_uuid):
        expected = up.append_key(prefix, agent)

    assert expected == model.append_key(prefix, agent, ts, suffix)


@given(tst.prefixes, tst.keys())
def test_key_ts_ns_and_sender(prefix: str, key: str) -> None:
    """key_ts_ns and key_sender agree on well-formed and junk keys."""
    assert _outcome(up.key_ts_ns, key, prefix) == _outcome(model.key_ts_ns, key, prefix)
    assert _outcome(up.key_sender, key, prefix) == _outcome(model.key_sender, key, prefix)


@given(st.text("aA.b-_ /Z1 \t", max_size=6))
def test_normalize_step_id(step_id: str) -> None:
    """normalize_step_id agrees, including which inputs are rejected."""
    assert _outcome(up.normalize_step_id, step_id) == _outcome(model.normalize_step_id, step_id)


@given(tst.cursor_docs(), st.sampled_from(["direct", "broadcast"]))
def test_load_stream_cursor(doc: object, name: str) -> None:
    """load_stream_cursor agrees on current, legacy and junk cursor documents."""
    assert _outcome(up.load_stream_cursor, doc, name) == _outcome(model.load_stream_cursor, doc, name)


@given(st.data())
def test_unseen_and_advance(data: st.DataObject) -> None:
    """unseen_keys and advance_stream agree exactly (watermark and seen) on generated listings."""
    prefix = data.draw(tst.prefixes)
    stream = data.draw(tst.streams(prefix))
    listed = data.draw(tst.listings(prefix))

    assert up.unseen_keys(listed, stream) == model.unseen_keys(listed, stream)
    assert up.advance_stream(stream, listed, prefix) == model.advance_stream(stream, listed, prefix)


@given(st.data())
def test_advance_over_the_seen_cap(data: st.DataObject) -> None:
    """advance_stream agrees when the listing exceeds SEEN_CAP (1,000 keys)."""
    prefix = "messages/bob/"
    base = data.draw(tst.ts_values)
    n = data.draw(st.integers(990, 1010))
    listed = sorted(f"{prefix}{base + i}_a_{i:08x}.json" for i in range(n))
    stream = data.draw(tst.streams(prefix))

    assert up.advance_stream(stream, listed, prefix) == model.advance_stream(stream, listed, prefix)


@given(tst.blobs())
def test_redact(blob: bytes) -> None:
    """redact agrees on bytes (redacted bytes and counts)."""
    assert up_redact.redact(blob) == model.redact(blob)


@given(tst.counts, tst.counts)
def test_merge_counts(a: dict[str, int], b: dict[str, int]) -> None:
    """merge_counts agrees."""
    assert up_redact.merge_counts(a, b) == model.merge_counts(a, b)


# -- counterexample transfer (issue 16) -----------------------------------------------------------
CLAIMS = list(cl.registry("tracecraft").values())


@pytest.fixture(scope="module")
def server() -> Any:
    """One moto server on 127.0.0.1 for the module (every transfer and example gets its own bucket)."""
    s = MotoServer()
    yield s
    s.stop()


@pytest.mark.slow
@pytest.mark.moto
@pytest.mark.parametrize("claim", CLAIMS, ids=[c.id for c in CLAIMS])
def test_every_counterexample_reproduces_on_the_real_cli(claim: cl.Claim, server: MotoServer) -> None:
    """The shrunk faithful counterexample (ci profile), saved and loaded as ``memsim replay`` does, fails
    the claim's property on the real tracecraft CLI with the model's verdict, word for word; the result
    is the one :data:`transfer.REPRODUCES` records."""
    outcome = search.run_direction(claim, cl.FAITHFUL, "ci", 0)
    _, direction, example = load_example(cl.save_example(claim, outcome).dumps())

    result = transfer.transfer(claim, direction, example, endpoint=server.url)

    assert result.system == "tracecraft-ai 0.2.5"
    assert result.reproduced, result.detail
    assert transfer.REPRODUCES[claim.id].startswith("reproduces")
    assert result.detail.endswith(claim.run(example, cl.FAITHFUL).detail)


def test_transfer_refuses_without_the_package_and_off_the_faithful_design(monkeypatch: Any) -> None:
    """Not installed: exit 2 with the pip command; an off or fixed example: exit 2 (no real variant)."""
    from importlib import metadata

    claim = cl.get("tracecraft.unvalidated-agent-id")
    with pytest.raises(UsageError, match="only faithful examples transfer"):
        transfer.transfer(claim, cl.OFF, [["alice", "send"]])

    def missing(name: str) -> str:
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(metadata, "version", missing)
    with pytest.raises(UsageError, match=r"pip install tracecraft-ai==0\.2\.5"):
        transfer.transfer(claim, cl.FAITHFUL, [["team/x", "send"]])


def test_the_launcher_hooks_and_never_imports_memsim() -> None:
    """The child process imports only the standard library and tracecraft (no memsim module), and hooks
    the package's clock, uuid and store by rebinding names, never by editing files."""
    text = Path(real.CHILD).read_text(encoding="utf-8")
    imports = {ln.split()[1].split(".")[0] for ln in text.splitlines() if ln.startswith(("import ", "from "))}

    assert imports <= {"__future__", "datetime", "json", "os", "shutil", "socket", "sys", "time", "traceback",
                       "types", "uuid", "pathlib", "typing"}  # fmt: skip
    assert "open(" not in text.split("class _HfFileSystem")[0].split("def _install")[0].replace("p.open", "")


# -- the operation differential against the real package -------------------------------------------
AGENTS = ("a", "b")
DIFF_OPS = st.one_of(
    st.tuples(st.just("set"), st.sampled_from(AGENTS), st.sampled_from(["k", "k.x", "_history", "naïve"])),
    st.tuples(st.just("get"), st.sampled_from(AGENTS), st.sampled_from(["k", "k.x", "none"])),
    st.tuples(st.just("history"), st.sampled_from(AGENTS), st.sampled_from(["k", "none"])),
    st.tuples(st.just("list"), st.sampled_from(AGENTS), st.sampled_from(["", "k"])),
    st.tuples(
        st.just("send"), st.sampled_from(AGENTS), st.sampled_from(["a", "b", "_broadcast", "x/y", "_x"])
    ),
    st.tuples(st.just("inbox"), st.sampled_from(AGENTS), st.sampled_from(["new", "plain", "delete"])),
    st.tuples(st.just("claim"), st.sampled_from(AGENTS), st.sampled_from(["s1", "S.1", "a/b"])),
    st.tuples(
        st.just("complete"), st.sampled_from(AGENTS), st.sampled_from(["s1", "s2", "blocked", "force"])
    ),
    st.tuples(st.just("step-status"), st.sampled_from(AGENTS), st.sampled_from(["s1", "s2"])),
    st.tuples(st.just("wait-for"), st.sampled_from(AGENTS), st.sampled_from(["s1", "a/b"])),
    st.tuples(st.just("upload"), st.sampled_from(AGENTS), st.sampled_from(["r.txt", "sub/r.txt"])),
    st.tuples(st.just("download"), st.sampled_from(AGENTS), st.sampled_from(["r.txt", "sub/r.txt"])),
    st.tuples(
        st.just("mirror"), st.just("a"), st.sampled_from(['{"x":1}\n', "AKIAIOSFOD", "NN7EXAMPLE\n", ""])
    ),
    st.tuples(st.just("show"), st.sampled_from(AGENTS), st.sampled_from(["0", "3"])),
    st.tuples(st.just("compact"), st.just("a"), st.sampled_from(["0", "1"])),
    st.tuples(st.just("stop"), st.just("a"), st.just("")),
    st.tuples(st.just("session-list"), st.sampled_from(AGENTS), st.just("")),
    st.tuples(st.just("status"), st.sampled_from(AGENTS), st.just("")),
    st.tuples(st.just("wait"), st.just("a"), st.sampled_from(["1", "400"])),
)


def _command(c: Any, h: Any, kind: str, arg: str, n: int) -> Any:
    if kind == "set":
        return c.memory_set(arg, f"v{n} ✓")
    if kind == "get":
        return c.memory_get(arg)
    if kind == "history":
        return c.memory_history(arg, limit=2)
    if kind == "list":
        return c.memory_list(arg)
    if kind == "send":
        return c.send(arg, f"m{n}", step="s1" if n % 2 else None)
    if kind == "inbox":
        return c.inbox(new=arg == "new", delete=arg == "delete")
    if kind == "claim":
        return c.claim(arg)
    if kind == "complete":
        return c.complete("s1" if arg in ("blocked", "force") else arg, note=f"n{n}", to="b",
                          blocked=arg == "blocked", force=arg == "force")  # fmt: skip
    if kind == "step-status":
        return c.step_status(arg)
    if kind == "wait-for":
        return c.wait_for([arg], timeout=6)
    if kind == "upload":
        return c.artifact_upload(arg, f"body {n}".encode(), step=None)
    if kind == "download":
        return c.artifact_download(arg)
    if kind == "mirror":
        h.tree.append_bytes(h.session_path("s"), arg.encode())
        return c.mirror(h, "s")
    if kind == "show":
        return c.session_show("s", tail=int(arg))
    if kind == "compact":
        return c.session_compact("s", keep_tail=int(arg))
    if kind == "stop":
        return c.session_stop("s")
    if kind == "session-list":
        return c.session_list()
    return c.status()


def _run_ops(world: Any, ops: list[tuple[str, str, str]], names: dict[str, str], bucket: str = "") -> Any:
    """Apply *ops* in *world*; each op's printed lines and error, every object's key and parsed body, and
    the bucket's name."""
    sim = Simulation(11)
    store = world.store()
    tc = world.system(sim, store, project="diff", **({"bucket_name": bucket} if bucket else {}))
    homes = {a: world.tree(name=names[a]) for a in AGENTS}
    h = world.harness("claude-code", homes["a"])
    clients = {a: tc.agent(a, home=homes[a]) for a in AGENTS}
    out: list[Any] = []
    for n, (kind, who, arg) in enumerate(ops):
        if kind == "wait":
            sim.run(until=sim.now + int(arg))
            continue
        c = clients[who]
        o, e = len(c.stdout), len(c.stderr)
        try:
            c.call(_command(c, h, kind, arg, n))
            err = None
        except TracecraftError as exc:
            err = str(exc)
        out.append((kind, who, arg, c.stdout[o:], c.stderr[e:], err))
        sim.run(until=sim.now + 1)
    bodies: dict[str, Any] = {}
    for k in tc.bucket.list_keys(""):
        raw = tc.bucket.get_bytes(k) or b""
        try:
            bodies[k] = (json.loads(raw), raw)  # the parsed body, and its bytes (indent-2 JSON)
        except ValueError:
            bodies[k] = (None, raw)
    sim.close()
    return out, bodies, tc.bucket_name


class _PathModel(drivers.ModelWorld):
    """The model world with the real world's absolute paths (meta's cwd and source_path)."""

    def __init__(self, real_world: real.RealWorld) -> None:
        self.real = real_world

    def tree(self, mtime: Any = None, name: str | None = None) -> Any:
        tree = MemoryTree()
        tree.home = str(self.real.root / (name or "home"))  # type: ignore[attr-defined]
        return tree

    def harness(self, name: str, tree: Any) -> Any:
        return FileTailHarness(name, tree, cwd=str(self.real.app), home=tree.home)


@pytest.mark.slow
@pytest.mark.moto
@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(DIFF_OPS, min_size=1, max_size=8))
def test_random_operations_agree_with_the_real_package(ops: list[tuple[str, str, str]]) -> None:
    """The same multi-agent operation sequence (memory, mail, --new, claims, handoffs, artifacts, session
    mirror/show/compact/stop/list, status) on the model and on the real CLI: every printed line and error,
    the resulting object keys and their parsed bodies are equal."""
    with real.RealWorld() as world:
        names = {a: f"diff-{a}-{world.n()}" for a in AGENTS}
        got = _run_ops(world, ops, names)
        expected = _run_ops(_PathModel(world), ops, names, got[2])

    assert got == expected


@pytest.mark.slow
@pytest.mark.moto
def test_seen_cap_overflow_at_upstreams_cap(server: MotoServer) -> None:
    """The seen-cap-replay claim at upstream's own SEEN_CAP (1,000), on the real CLI and the model alike:
    1,001 messages inside the grace window are all shown by bob's first ``inbox --new``, and the second
    shows the oldest one again. (The claim's cheap examples set the cap instead; this needs no patch.)"""
    prefix = "messages/bob/"

    def run(world: Any) -> list[list[str]]:
        sim = Simulation(2)
        tc = world.system(sim, world.store())
        for i in range(1001):  # as alice's sends would write them, 1 ms apart
            ts = 1_767_571_200_000_000_000 + i * 1_000_000
            doc = {"from": "alice", "to": "bob", "message": f"m{i}", "sent_at": f"t{i:04d}"}
            tc.bucket.put_json(f"{prefix}{ts}_alice_{i:08x}.json", doc)
        bob = tc.agent("bob")
        shown = [[m.key for m in bob.call(bob.inbox(new=True))] for _ in range(2)]
        sim.close()
        return shown

    with real.RealWorld(server.url) as world:
        got = run(world)
    expected = run(drivers.MODEL)

    assert got == expected
    assert len(got[0]) == 1001 and got[1] == [got[0][0]]
