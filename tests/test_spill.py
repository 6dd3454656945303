"""sim.spill.SpillTree: a MemoryTree whose chosen files keep their bytes in temp files (issue 33). Driven
with the same operations as a MemoryTree, it must give the same results, bytes, sizes, mtimes and op
counts, while the bodies it spilled are no longer held in memory."""

from __future__ import annotations

import random

import pytest

from sim.files import FileTree, MemoryTree
from sim.spill import SpillTree

PATHS = ("a/x.md", "a/y.md", "a/sub/z.md", "b/w.txt", "t/log.md", "t/doc.json", "a", "t")


def outcome(call: object) -> object:
    try:
        return call()  # type: ignore[operator]
    except Exception as e:  # the exception type is the result both trees must agree on
        return type(e).__name__


def op(tree: FileTree, rng: random.Random, now: float) -> object:
    """One random operation (its arguments drawn from *rng*, so both trees get the same one)."""
    p, q = rng.choice(PATHS), rng.choice(PATHS)
    data = rng.randbytes(rng.randrange(0, 40))
    off = rng.randrange(0, 50)
    kind = rng.randrange(12)
    clock = lambda: now  # noqa: E731
    calls = (
        lambda: tree.write_bytes(p, data, clock=clock),
        lambda: tree.append_bytes(p, data, clock=clock),
        lambda: tree.write_from(p, off, data, clock=clock),
        lambda: tree.read_bytes(p),
        lambda: tree.read_from(p, off),
        lambda: (tree.size(p), tree.mtime(p)),
        lambda: tree.rename(p, q),
        lambda: tree.delete(p),
        lambda: (tree.list(""), tree.list("a"), tree.is_dir("t")),
        lambda: (tree.total_bytes(), tree.total_bytes("a")),
        lambda: tree.write_text(p, data.hex(), clock=clock),
        lambda: tree.splice(p, off, rng.randrange(0, 30), data, clock=clock),
    )
    return outcome(calls[kind])


@pytest.mark.parametrize("hot", [0, 2])
@pytest.mark.parametrize("seed", range(6))
def test_spill_tree_agrees_with_memory_tree(seed: int, hot: int, monkeypatch: pytest.MonkeyPatch) -> None:
    import sim.spill

    monkeypatch.setattr(sim.spill, "_CHUNK", 7)  # tail files of many small chunks and slots (issue 42)
    monkeypatch.setattr(sim.spill, "_SLOT", 11)
    mem = MemoryTree()
    spill = SpillTree(spill=lambda p: p.startswith(("a", "b/")), tail=lambda p: p.startswith("t/"), hot=hot)
    ra, rb = random.Random(seed), random.Random(seed)
    for i in range(600):
        assert op(mem, ra, float(i)) == op(spill, rb, float(i)), i
        assert mem.ops == spill.ops
    assert mem.list() == spill.list()
    for p in mem.list():
        assert (mem.read_bytes(p), mem.mtime(p), mem.size(p)) == (
            spill.read_bytes(p),
            spill.mtime(p),
            spill.size(p),
        )
    assert mem._dirs == spill._dirs
    spill.close()


def test_spilled_and_tail_bodies_leave_memory() -> None:
    """Beyond the *hot* newest spilled writes, bodies live in the spill file; tail files never in memory."""
    tree = SpillTree(spill=lambda p: p.startswith("s/"), tail=lambda p: p == "log", hot=3)
    for i in range(50):
        tree.write_text(f"s/{i}.md", f"page {i} " * 20)
        tree.append_text("log", f"line {i}\n")
    tree.write_from("log", 5, b"X")
    held = {p: len(b) for p, b in tree._files.items() if b}  # the bodies still in memory
    assert sorted(held) == ["s/47.md", "s/48.md", "s/49.md"]
    # a spilled file keeps no entry in the tree's file and mtime tables, only its packed int (issue 33)
    assert sorted(tree._files) == sorted(tree._mtimes) == ["log", "s/47.md", "s/48.md", "s/49.md"]
    assert tree.read_text("s/0.md") == "page 0 " * 20 and tree.read_bytes("log") == b"line X"
    assert tree.total_bytes() == sum(len(f"page {i} " * 20) for i in range(50)) + 6
    tree.close()


def test_a_spilled_file_holds_no_memory_of_its_own() -> None:
    """A spilled file's path, offset, length and mtime go to the table's database, whose page cache is
    bounded (issue 42: a path table and three integer columns held about 120 B a file, most of a
    million-step Nemsy cell's growth): 4,000 more cold files add under 2 bytes each to what the tree's
    module holds (the bounded caches of :mod:`sim.files` are not the tree's)."""
    import tracemalloc

    import sim.spill
    from sim.spill import COLD_CACHE_KIB

    tree = SpillTree(spill=lambda p: p.startswith("s/"), hot=0)

    def spill(lo: int, hi: int) -> None:
        for i in range(lo, hi):
            tree.write_text(f"s/d{i % 3}/page-{i:07d}-with-a-long-descriptive-name.md", "x")

    def held() -> int:
        only = [tracemalloc.Filter(True, sim.spill.__file__)]
        return sum(t.size for t in tracemalloc.take_snapshot().filter_traces(only).traces)

    spill(0, 1000)
    tracemalloc.start()
    try:
        before = held()
        spill(1000, 5000)
        grown = held() - before
    finally:
        tracemalloc.stop()
    assert len(tree._cold) == 5000
    assert tree.read_text("s/d0/page-0000000-with-a-long-descriptive-name.md") == "x"
    assert grown / 4000 < 2, grown / 4000
    assert tree._cold._conn().execute("PRAGMA cache_size").fetchone()[0] == -COLD_CACHE_KIB
    tree.close()


def test_a_peek_at_a_tail_file_reads_only_its_range(monkeypatch: pytest.MonkeyPatch) -> None:
    """A peek reads the bytes it returns, not the rest of the file: a long run's summary peeks at the
    headers of a history file that grows with the square of the run (2 GB at 1,000,000 steps), and a
    peek that read to the end loaded it whole (issue 42)."""
    import os

    import sim.spill as spill

    tree = SpillTree(tail=lambda p: p == "log")
    body = bytes(range(256)) * 4096  # 1 MiB
    tree.write_bytes("log", body)
    asked: list[int] = []
    real = os.pread

    def pread(fd: int, n: int, offset: int) -> bytes:
        asked.append(n)
        return real(fd, n, offset)

    monkeypatch.setattr(spill.os, "pread", pread)

    assert tree.peek("log", 1000, 64) == body[1000:1064]
    assert tree.peek("log", len(body) - 10, 64) == body[-10:]
    assert tree.peek("log", len(body) + 5, 64) == b""
    assert max(asked) <= 64
