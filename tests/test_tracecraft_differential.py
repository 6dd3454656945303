"""Differential test: the same generated Tracecraft operation sequence on the in-memory store and on S3
through boto3 against moto in-process gives identical outputs (moto is ~750 PUT/s, so examples are few
and small)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sim.engine import Simulation
from sim.files import MemoryTree
from sim.objects import ObjectStore, open_store
from systems.tracecraft.model import FileTailHarness, Tracecraft
from systems.tracecraft.protocol import TracecraftError

OPS = st.lists(
    st.one_of(
        st.tuples(st.just("set"), st.sampled_from(["a", "b"]), st.sampled_from(["k", "k.x", "_history"])),
        st.tuples(
            st.just("send"), st.sampled_from(["a", "b"]), st.sampled_from(["a", "b", "_broadcast", "x/y"])
        ),
        st.tuples(st.just("inbox"), st.sampled_from(["a", "b"]), st.sampled_from(["new", "plain", "delete"])),
        st.tuples(st.just("claim"), st.sampled_from(["a", "b"]), st.sampled_from(["s1", "S.1"])),
        st.tuples(st.just("complete"), st.sampled_from(["a", "b"]), st.sampled_from(["s1", "s2"])),
        st.tuples(
            st.just("mirror"), st.just("a"), st.sampled_from(['{"x":1}\n', "AKIAIOSFOD", "NN7EXAMPLE\n"])
        ),
        st.tuples(st.just("compact"), st.just("a"), st.just("")),
    ),
    max_size=10,
)


def run_ops(store: ObjectStore, ops: list[tuple[str, str, str]]) -> list[Any]:
    """Apply *ops* on a fresh simulation over *store*; every output (or error) in order, plus the keys."""
    sim = Simulation(9)
    tc = Tracecraft(sim, store, project="diff")
    home = MemoryTree(mtime=sim.clock("a").seconds)
    h = FileTailHarness("claude-code", home)
    clients = {n: tc.agent(n, home=home) for n in ("a", "b")}
    out: list[Any] = []
    for kind, who, arg in ops:
        c = clients[who]
        try:
            if kind == "set":
                out.append(c.call(c.memory_set(arg, "v")))
            elif kind == "send":
                out.append(c.call(c.send(arg, "m")))
            elif kind == "inbox":
                out.append([m.render() for m in c.call(c.inbox(new=arg == "new", delete=arg == "delete"))])
            elif kind == "claim":
                out.append(c.call(c.claim(arg)))
            elif kind == "complete":
                out.append(c.call(c.complete(arg, note="n")))
            elif kind == "mirror":
                home.append_bytes(h.session_path("s"), arg.encode())
                out.append(c.call(c.mirror(h, "s")).status)
            else:
                out.append(c.call(c.session_compact("s")))
        except TracecraftError as exc:
            out.append(("error", str(exc)))
        sim.run(until=sim.now + 1)
    out.append(tc.bucket.list_keys(""))
    out.append([tc.bucket.get_bytes(k) for k in tc.bucket.list_keys("sessions/")])
    sim.close()
    return out


@pytest.mark.moto
@settings(max_examples=8, deadline=None)
@given(OPS)
def test_memory_and_moto_agree(ops: list[tuple[str, str, str]]) -> None:
    """Identical outputs, keys and session bytes on the in-memory store and on moto."""
    mem = open_store("memory")
    moto = open_store("moto")
    try:
        assert run_ops(moto, ops) == run_ops(mem, ops)
    finally:
        moto.close()
