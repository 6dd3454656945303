"""Speed of the simulation core, measured side by side in one run (not a test).

Prints one table of throughputs and ratios:

* the in-memory object store against S3 on moto in-process, on the same put / get / list workload
  (goal: the in-memory store at least 100x faster);
* cached against uncached exact cl100k token counting of the same messages;
* trace records written per second to SQLite (batched) and kept in memory only;
* bare SimPy events per second, the floor every model runs on.

Run: ``/work/venv/bin/python benchmarks/bench_core.py`` (``--quick`` for a smaller run). Figures are
wall-clock and vary by machine; only the ratios are meant to be compared across runs.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import sqlite3
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import simpy

from sim.objects import MemoryStore, ObjectStore, PreconditionFailed, moto_store
from sim.text import filler
from sim.tokens import count_tokens, count_tokens_uncached
from sim.trace import Trace


def timed(fn: Callable[[], int]) -> tuple[int, float]:
    """Run *fn* (which returns how many operations it did) and return (operations, seconds)."""
    t0 = time.perf_counter()
    n = fn()
    return n, time.perf_counter() - t0


def store_workload(store: ObjectStore, n: int) -> int:
    """*n* puts over 8 prefixes, *n* gets, n/10 conditional puts of existing keys, and n/10 listings by
    prefix with start_after; returns the operation count."""
    body = bytes(range(256))
    keys = [f"agent-{i % 8}/memory/{i:06d}.json" for i in range(n)]
    for k in keys:
        store.put(k, body)
    for k in keys:
        store.get(k)
    for k in keys[: n // 10]:
        with contextlib.suppress(PreconditionFailed):
            store.put(k, body, if_none_match=True)
    for i in range(n // 10):
        store.list(f"agent-{i % 8}/", start_after=keys[(i * 37) % n])
    return 2 * n + 2 * (n // 10)


def bench_stores(n_moto: int, repeat_memory: int) -> list[tuple[str, float, str]]:
    mem_ops, mem_s = 0, 0.0
    for _ in range(repeat_memory):
        ops, s = timed(lambda: store_workload(MemoryStore(), n_moto))
        mem_ops, mem_s = mem_ops + ops, mem_s + s
    moto = moto_store()
    try:
        moto_ops, moto_s = timed(lambda: store_workload(moto, n_moto))
    finally:
        moto.close()
    mem_rate, moto_rate = mem_ops / mem_s, moto_ops / moto_s
    return [
        ("object store: memory (put/get/list ops/s)", mem_rate, f"{mem_ops} ops"),
        ("object store: moto in-process (ops/s)", moto_rate, f"{moto_ops} ops"),
        ("object store: memory / moto", mem_rate / moto_rate, "goal >= 100x"),
    ]


def bench_tokens(n_messages: int, chars: int) -> list[tuple[str, float, str]]:
    rng = random.Random(0)
    messages = [f"[{i}] " + filler(rng, chars) for i in range(n_messages)]
    count_tokens_uncached("warm up the encoding")
    uncached_n, uncached_s = timed(lambda: sum(1 for m in messages if count_tokens_uncached(m) >= 0))
    count_tokens.cache_clear()
    first_n, first_s = timed(lambda: sum(1 for m in messages if count_tokens(m) >= 0))
    rounds = 20
    cached_n, cached_s = timed(
        lambda: sum(1 for _ in range(rounds) for m in messages if count_tokens(m) >= 0)
    )
    assert [count_tokens(m) for m in messages] == [count_tokens_uncached(m) for m in messages]
    unc, cold, hot = uncached_n / uncached_s, first_n / first_s, cached_n / cached_s
    return [
        (f"tokens: uncached count ({chars}-char messages/s)", unc, f"{n_messages} messages"),
        ("tokens: cached, first sight (messages/s)", cold, "fills the cache"),
        ("tokens: cached, repeated (messages/s)", hot, f"{rounds} rounds"),
        ("tokens: cached repeated / uncached", hot / unc, ""),
    ]


def bench_trace(n: int) -> list[tuple[str, float, str]]:
    def write(path: Path | None, keep: bool) -> int:
        trace = Trace(path, keep=keep)
        for i in range(n):
            if i % 4 == 3:
                trace.request(
                    "bench",
                    "react.hop",
                    agent="a",
                    exact_tokens=1200 + i % 97,
                    estimate=1100,
                    messages=3,
                    facts={"FACT-0001", "FACT-0002"},
                    hop=i,
                )
            else:
                trace.op("bench", "write_memory_doc", agent="a", key=f"k/{i}", bytes=i % 4096)
        trace.close()
        return n

    def raw_sqlite(path: Path) -> int:
        """The floor: plain sqlite3 ``executemany`` of the same rows, one transaction per 1,000."""
        con = sqlite3.connect(path)
        con.execute(
            "create table ops (seq integer primary key, time real, agent text, system text, op text, "
            "phase text, detail text)"
        )
        rows = [
            (i, 0.0, "a", "bench", "write_memory_doc", "ok", json.dumps({"key": f"k/{i}", "bytes": i % 4096}))
            for i in range(1, n + 1)
        ]
        for lo in range(0, n, 1000):
            with con:
                con.executemany("insert into ops values (?, ?, ?, ?, ?, ?, ?)", rows[lo : lo + 1000])
        con.close()
        return n

    with tempfile.TemporaryDirectory(prefix="memsim-bench-") as tmp:
        sq_n, sq_s = timed(lambda: write(Path(tmp) / "trace.db", keep=False))
        both_n, both_s = timed(lambda: write(Path(tmp) / "trace2.db", keep=True))
        raw_n, raw_s = timed(lambda: raw_sqlite(Path(tmp) / "raw.db"))
    mem_n, mem_s = timed(lambda: write(None, keep=True))
    return [
        ("trace: records/s to SQLite (batched, not kept)", sq_n / sq_s, f"{n} records"),
        ("trace: records/s to SQLite and kept in memory", both_n / both_s, f"{n} records"),
        ("trace: records/s kept in memory only", mem_n / mem_s, f"{n} records"),
        ("trace: raw sqlite3 executemany rows/s (floor)", raw_n / raw_s, "same rows, no sqlite-utils"),
    ]


def bench_simpy(n: int) -> list[tuple[str, float, str]]:
    def run() -> int:
        env = simpy.Environment()

        def proc(k: int):  # type: ignore[no-untyped-def]
            for _ in range(k):
                yield env.timeout(1)

        for _ in range(4):
            env.process(proc(n // 4))
        env.run()
        return n

    events, s = timed(run)
    return [("simpy: bare timeout events/s (the floor)", events / s, f"{events} events, 4 processes")]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="a smaller run (about 5 s)")
    args = parser.parse_args(argv)
    q = args.quick
    rows: list[tuple[str, float, str]] = []
    rows += bench_stores(n_moto=300 if q else 1000, repeat_memory=5 if q else 20)
    rows += bench_tokens(n_messages=300 if q else 2000, chars=4000)
    rows += bench_trace(n=20_000 if q else 200_000)
    rows += bench_simpy(n=100_000 if q else 1_000_000)
    width = max(len(r[0]) for r in rows)
    print(f"{'measure':<{width}}  {'value':>14}  note")
    print(f"{'-' * width}  {'-' * 14}  ----")
    for name, value, note in rows:
        shown = f"{value:,.1f}x" if name.endswith(("moto", "uncached")) else f"{value:,.0f}"
        print(f"{name:<{width}}  {shown:>14}  {note}")


if __name__ == "__main__":
    main()
