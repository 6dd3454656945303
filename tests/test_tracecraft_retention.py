"""What the bench host holds (issue 33): a TailStore is an object store like any other whatever it moves
to its cold tier, a merged part keeps the lines ``session show --tail`` prints, and the host's file lets
go only of bytes behind the mirror's cursor."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import StoreOp, store_ops
from test_core_objects import apply, apply_model, outcome

from sim.files import MemoryTree
from systems.tracecraft.model import tail_lines_of_parts
from systems.tracecraft.model.retention import DroppedBytes, HeadlessBody, HostTree, TailStore


@given(store_ops(), st.integers(min_value=1, max_value=4))
def test_tail_store_matches_dict_model(ops: list[StoreOp], hot: int) -> None:
    """Every operation sequence observes on a TailStore holding *hot* objects in memory (the rest in its
    cold tier) what the dict model predicts, and the durable byte count is the model's."""
    s = TailStore(keep_lines=1, hot_objects=hot)
    model: dict[str, bytes] = {}
    for op in ops:
        assert outcome(lambda op=op: apply(s, op)) == apply_model(model, op), op
        assert len(s._objects) <= hot
    assert s.total_bytes() == sum(len(b) for b in model.values())
    s.close()


def test_tail_store_spills_old_objects_and_reads_them_back() -> None:
    """Objects beyond the hot ones leave memory and still answer GET, LIST, conditional PUT, DELETE."""
    s = TailStore(keep_lines=1, hot_objects=4)
    for i in range(20):
        s.put(f"memory/k{i:02d}.json", b"v%d" % i)
    s.put("sessions/meta.json", b"m")
    assert len(s._objects) <= 4
    assert s.get("memory/k00.json") == b"v0"
    assert s.list("memory/", "memory/k17.json") == ["memory/k18.json", "memory/k19.json"]
    assert s.list("sessions/") == ["sessions/meta.json"]
    assert outcome(lambda: s.put("memory/k01.json", b"x", if_none_match=True)) == "PreconditionFailed"
    s.delete("memory/k02.json")
    assert not s.exists("memory/k02.json")
    assert len(s.list()) == 20
    assert s.total_bytes("memory/") == sum(len(b"v%d" % i) for i in range(20) if i != 2)
    s.close()


_line = st.binary(max_size=6).map(lambda b: b.replace(b"\n", b"") + b"\n")
_part = st.lists(_line | st.sampled_from([b"\r\n", b"\r", b"x"]), max_size=4).map(b"".join)


@given(st.lists(st.lists(_part, max_size=5), min_size=1, max_size=5), st.integers(min_value=1, max_value=6))
def test_merged_part_keeps_what_show_tail_prints(rounds: list[list[bytes]], keep: int) -> None:
    """Compacting again and again (merged part first, then the new parts), ``show --tail N`` for every N
    up to the kept lines prints what it prints over the whole transcript; the held tail is bounded."""
    s = TailStore(keep_lines=keep)
    merged: list[bytes | HeadlessBody] = []
    whole = b""
    for parts in rounds:
        whole += b"".join(parts)
        chunks = [*merged, *parts]
        for n in range(1, keep + 1):
            assert tail_lines_of_parts(chunks, n, window=3) == whole.splitlines()[-n:]
        body = s.concat(chunks)
        assert len(body) == len(whole)
        held = body.tail if isinstance(body, HeadlessBody) else body
        assert held.count(b"\n") <= keep + 1
        merged = [body]
    if isinstance(merged[0], HeadlessBody):
        with pytest.raises(DroppedBytes):
            tail_lines_of_parts(merged, len(whole.splitlines()))


def test_host_tree_releases_only_mirrored_bytes() -> None:
    """After release the file keeps its size and its unmirrored bytes; appends go on; a read behind the
    released offset raises instead of answering."""
    t, full = HostTree(), MemoryTree()
    for tree in (t, full):
        tree.append_bytes("s.jsonl", b"one\ntwo\n")
    t.release("s.jsonl", 4)
    for tree in (t, full):
        tree.append_bytes("s.jsonl", b"three\n")
    assert t.size("s.jsonl") == full.size("s.jsonl") == 14
    assert t.read_from("s.jsonl", 4) == full.read_from("s.jsonl", 4) == (b"two\nthree\n", 14)
    assert len(t._files["s.jsonl"]) == 10
    with pytest.raises(DroppedBytes):
        t.read_from("s.jsonl", 0)
    t.write_bytes("s.jsonl", b"new")
    assert t.read_bytes("s.jsonl") == b"new"
