"""Benchmark (not a test): the simulation core's speed and memory, each figure beside its floor or peer.

    python benchmarks/bench_core.py [--quick] [--json FILE]

Every goal is a ratio against a floor or a fair peer measured in the same run (so it compares across
machines), or a memory figure against its bound; configurations that could warm each other's caches run
in fresh processes:

* ``core.store_model``: the in-memory object store against S3 on moto in-process **on a model's
  workload**: every scenario that accepts both stores (the Tracecraft ones), run through the scenario
  runner, one fresh process per store, after one warm-up run (moto's start-up is not workload);
* ``core.tokens_cached``: counting messages already seen against counting them afresh (the cache's
  reason to exist); ``core.token_cache_hit``: a hit in the byte-bounded cache against a hit in the
  ``functools.lru_cache`` it replaced (the peer; the price of bounding by bytes);
* ``core.token_cache_bytes``: a process caching 3,000 ever-larger prompts (up to 120 KB, 180 MB in all,
  each seen once, as Nemsy's whole-index prompt grows): the memory the byte-bounded cache holds (traced
  by ``tracemalloc``) against its budget (``TOKEN_CACHE_BYTES``), and flat when the prompts double;
  the 8,192-entry ``lru_cache`` it replaced keeps every one of them;
* ``core.facts_column``: a request's ``facts`` column (1,700 ids in runs of 1 to 5, as RSIAgent's folded
  logs) against the floor ``json.dumps(sorted(ids))`` (the same ids, no ranges); the regex-per-id
  encoding it replaced is printed beside it (a key frame of the column is this list);
  ``core.facts_growing``: the columns of a growing log's successive requests (each the previous ids plus
  two newer ones), written as the trace writes them (key frames and deltas, ``sim.tracefacts.FactFrames``),
  against the same floor;
* ``core.trace_sqlite``: trace records streamed to SQLite (batched, not kept) against plain ``sqlite3``
  ``executemany`` of the same rows (the floor);
* ``core.trace_flat``: memory a streamed ``Trace(keep=False)`` holds after 200,000 records (at most one
  batch of 1,000 pending rows; nothing per record);
* ``core.trace_cell.DESIGN``: one ``memsim bench`` cell of RSIAgent, MerchantBench and Tracecraft (seed 0,
  a 32,000-token window, the trace streamed) at 688, 2,752 and 11,008 steps (``--quick``: 172, 688 and
  2,752), each in a fresh process: the trace at the largest (< 50 MB) and its size and processor-time
  growth (wall time beside it; a shared machine's load skews wall time, issue 42) over the last x4
  (linear = 1; the first sizes are a design's warm-up: RSIAgent's context grows until its fold
  thresholds, as ``bench_rsiagent``'s growth row, x16 to x64, also allows); for RSIAgent,
  ``core.trace_cell.facts_vs_full``: the facts column against the same sets as full lists (schema 2's
  column), and ``core.trace_cell.read``: ``sim.trace.iter_requests`` resolving every request's full set
  against reading the same trace written as schema 2 (every row a full list; the raw row fetch is
  printed too);
* ``core.sim_events``: SimPy processes on a :class:`~sim.engine.Simulation` recording one trace op per
  event against bare SimPy timeouts (the floor every model runs on).
"""

from __future__ import annotations

import json
import sqlite3
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import ROOT, Goal, fresh, interleaved, parser, report

STORES = """
import json, statistics, sys, time
from sim import scenario as sc
kind, n = sys.argv[1], int(sys.argv[2])
names = [k for k, s in sorted(sc.scenarios().items()) if {"memory", "moto"} <= set(s.stores)]
for name in names:
    sc.execute(name, store=kind)  # warm up: imports, moto's first start
out = {}
for name in names:
    times = []
    for _ in range(n):
        t = time.perf_counter()
        sc.execute(name, store=kind)
        times.append(time.perf_counter() - t)
    out[name] = statistics.median(times)
print(json.dumps(out))
"""


def store_goals(quick: bool) -> list[Goal]:
    mem = fresh(STORES, "memory", "3" if quick else "7")
    moto = fresh(STORES, "moto", "1" if quick else "3")
    mem.pop("_rss_mb"), moto.pop("_rss_mb")
    m, s = sum(mem.values()), sum(moto.values())
    per = ", ".join(f"{k.removeprefix('tracecraft_')} {moto[k] / mem[k]:.0f}x" for k in mem)
    return [
        Goal.of(
            "core.store_model",
            f"in-memory store vs moto on the model's workload ({len(mem)} scenarios)",
            s / m,
            ">= 100x",
            f"{m * 1000:.1f} ms vs {s * 1000:.0f} ms per pass, scenario runner, fresh processes ({per})",
        )
    ]


def token_goals(quick: bool) -> list[Goal]:
    import functools
    import random

    from sim.text import filler
    from sim.tokens import TOKEN_CACHE_BYTES, count_tokens, count_tokens_uncached, text_cache

    rng = random.Random(0)
    n = 300 if quick else 2000
    messages = [f"[{i}] " + filler(rng, 4000) for i in range(n)]
    count_tokens_uncached("warm up the encoding")
    for m in messages:
        count_tokens(m)
    rounds = 20
    times = interleaved(
        {
            "uncached": lambda: [count_tokens_uncached(m) for m in messages[: n // 10]],
            "cached": lambda: [count_tokens(m) for _ in range(rounds) for m in messages],
        },
        rounds=3,
    )
    per_uncached = times["uncached"] / (n // 10)
    per_cached = times["cached"] / (rounds * n)
    assert [count_tokens(m) for m in messages] == [count_tokens_uncached(m) for m in messages]

    ours = text_cache(TOKEN_CACHE_BYTES)(len)
    peer = functools.lru_cache(maxsize=8192)(len)
    keys = [f"message {i} " * 20 for i in range(1000)]
    for k in keys:
        ours(k), peer(k)
    hits = interleaved(
        {
            "ours": lambda: [ours(k) for _ in range(50) for k in keys],
            "peer": lambda: [peer(k) for _ in range(50) for k in keys],
        },
        rounds=5,
    )
    return [
        Goal.of(
            "core.tokens_cached",
            "count_tokens of a message seen before vs counting it afresh",
            per_uncached / per_cached,
            ">= 100x",
            f"{per_cached * 1e9:.0f} ns vs {per_uncached * 1e6:.0f} us per 4,000-char message",
        ),
        Goal.of(
            "core.token_cache_hit",
            "byte-bounded cache hit vs functools.lru_cache hit (the peer)",
            hits["peer"] / hits["ours"],
            ">= 1/3",
            f"{hits['ours'] / 50_000 * 1e9:.0f} ns vs {hits['peer'] / 50_000 * 1e9:.0f} ns per hit",
        ),
    ]


GROWING = """
import functools, json, random, sys, tracemalloc
from sim.tokens import TOKEN_CACHE_BYTES, text_cache
from sim.text import filler
n = int(sys.argv[2])
base = filler(random.Random(0), 40 * n + 10)
peer = sys.argv[1] == "lru"
cached = functools.lru_cache(maxsize=8192)(len) if peer else text_cache(TOKEN_CACHE_BYTES)(len)
tracemalloc.start()
start, _ = tracemalloc.get_traced_memory()
total = 0
for i in range(1, n + 1):
    text = base[: 40 * i] + f" {i}"  # a new, larger prompt each time, seen once
    total += len(text)
    cached(text)
    del text
held, _ = tracemalloc.get_traced_memory()
tracemalloc.stop()
mb = 1e6
out = {"texts_mb": total / mb, "held_mb": (held - start) / mb, "budget_mb": TOKEN_CACHE_BYTES / mb}
print(json.dumps(out))
"""


def cache_rss_goals(quick: bool) -> list[Goal]:
    n = 1500 if quick else 3000
    peer = fresh(GROWING, "lru", str(n))
    ours = fresh(GROWING, "ours", str(n))
    more = fresh(GROWING, "ours", str(2 * n))
    flat = more["_rss_mb"] - ours["_rss_mb"]
    # The charge per entry covers its text, value and node; the dict's own table adds a little more.
    bound = 1.05 * ours["budget_mb"]
    ok = ours["held_mb"] <= bound and more["held_mb"] <= bound and flat < 32
    return [
        Goal(  # ok from the exact bound and the flatness, not from the rounded target text
            "core.token_cache_bytes",
            f"{n:,} ever-larger prompts ({ours['texts_mb']:.0f} MB) through the token cache: memory held",
            ours["held_mb"],
            f"<= {bound:.1f} MB (budget + 5%), flat",
            ok,
            f"budget {ours['budget_mb']:.1f} MB; the 8,192-entry lru_cache it replaced holds "
            f"{peer['held_mb']:.0f} MB (peak RSS "
            f"{peer['_rss_mb']:.0f} MB); byte-bounded: peak RSS {ours['_rss_mb']:.0f} MB, and "
            f"{more['_rss_mb']:.0f} MB after "
            f"{2 * n:,} prompts ({more['texts_mb']:.0f} MB; held {more['held_mb']:.0f} MB)",
            unit="MB",
        )
    ]


FACTS = '["FACT-0001", "FACT-0002"]'


def facts_goals(quick: bool) -> list[Goal]:
    import random

    from sim.trace import encode_facts
    from sim.tracefacts import FactFrames

    sys.path.insert(0, str(ROOT / "tests"))
    from facts_reference import reference_encode_facts as _reference_encode  # the encoder it replaced

    rng = random.Random(3)
    nums: set[int] = set()
    n = 1
    while len(nums) < 1700:
        k = rng.choice([1, 1, 2, 3, 4, 5])
        nums |= set(range(n, n + k))
        n += k + rng.choice([1, 2, 3, 5])
    ids = frozenset(f"FACT-{i:04d}" for i in nums)
    assert encode_facts(ids) == _reference_encode(ids)
    reps = 20 if quick else 100

    def many(fn: object) -> object:
        return lambda: [fn(ids) for _ in range(reps)]  # type: ignore[operator]

    t = interleaved(
        {
            "ours": many(encode_facts),
            "floor": many(lambda x: json.dumps(sorted(x))),
            "old": many(_reference_encode),
        },
        rounds=5,
    )
    # A growing log: each request carries the previous one's ids and two newer ones (RSIAgent's WORK LOG).
    top = max(nums)
    log = [
        ids | {f"FACT-{top + 3 * k + j:04d}" for k in range(1, step + 1) for j in (1, 2)}
        for step in range(reps)
    ]

    def columns() -> None:
        frames = FactFrames()
        for seq, x in enumerate(log, 1):
            frames.encode(x, ("bench", "", "log"), seq)

    g = interleaved({"frames": columns, "afresh": lambda: [encode_facts(x) for x in log]}, rounds=5)
    frames = FactFrames()
    written = [frames.encode(x, ("b", "", "r"), seq)[0] for seq, x in enumerate(log, 1)]
    deltas = sum(c.startswith("{") for c in written)
    per = g["frames"] / len(log)
    return [
        Goal.of(
            "core.facts_column",
            "facts list of a 1,700-id request vs json.dumps(sorted(ids)) (the floor)",
            t["floor"] / t["ours"],
            ">= 1/3",
            f"{t['ours'] / reps * 1e6:.0f} us vs {t['floor'] / reps * 1e6:.0f} us; the regex encoding it "
            f"replaced: {t['old'] / reps * 1e6:.0f} us ({t['old'] / t['ours']:.1f}x slower), same bytes",
        ),
        Goal.of(
            "core.facts_growing",
            "facts column of a growing log's requests (key frames and deltas) vs the floor",
            t["floor"] / reps / per,
            ">= 1x",
            f"{per * 1e6:.0f} us per request ({deltas} of {len(log)} deltas, "
            f"{sum(map(len, written)) / len(log):,.0f} chars each on average; the full list encoded afresh "
            f"{g['afresh'] / len(log) * 1e6:.0f} us, {len(encode_facts(log[-1])):,} chars; "
            f"json.dumps(sorted(ids)) {t['floor'] / reps * 1e6:.0f} us)",
        ),
    ]


#: Bench cells whose streamed trace is measured (issue 17): the RSIAgent cell of ``bench_rsiagent`` (seed 0's
#: default workload, a 32,000-token window) and the same cell of MerchantBench and Tracecraft.
CELL_DESIGNS = ("rsiagent", "merchantbench", "tracecraft")
CELL_BUDGET = 32_000
CELL_STEPS = (688, 2_752, 11_008)  # x4, x16 and x64 the base 172 steps of bench_rsiagent

CELL = """
import json, os, sqlite3, sys, tempfile, time
from sim.bench.tasks import Task, run_task
from sim.tokens import count_tokens
from sim.trace import iter_requests
from sim.workload import make_workload
design, budget, steps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
count_tokens("warm the tokenizer")
make_workload(0, steps).steps  # the workload is the harness's, not the design's: generated up front
with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "trace.db")
    t0, c0 = time.perf_counter(), time.process_time()
    row = run_task(Task(design, budget, 0, steps), trace_path=path)
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    con = sqlite3.connect(path)
    column, keys = con.execute(
        "SELECT sum(length(facts)), sum(json_type(facts) = 'array') FROM requests"
    ).fetchone()
    t1 = time.perf_counter()
    raw = sum(len(r[8]) for r in con.execute("SELECT * FROM requests ORDER BY seq"))  # the floor
    t2 = time.perf_counter()
    con.close()
    sizes = sum(len(r.fact_set) for r in iter_requests(path))
    t3 = time.perf_counter()
    full_lists = [(r.facts, r.seq) for r in iter_requests(path)]  # the full lists: schema 2's column
    full = sum(len(text) for text, _seq in full_lists)
    v2 = os.path.join(tmp, "schema2.db")  # the same trace as schema 2 wrote it: every row a full list
    con = sqlite3.connect(path)
    con.execute("VACUUM INTO ?", (v2,))
    con.close()
    con = sqlite3.connect(v2)
    con.executemany("UPDATE requests SET facts = ? WHERE seq = ?", full_lists)
    con.execute("UPDATE meta SET value = '2' WHERE key = 'schema_version'")
    con.commit()
    con.close()
    t4 = time.perf_counter()
    sizes2 = sum(len(r.fact_set) for r in iter_requests(v2))
    t5 = time.perf_counter()
    assert sizes2 == sizes
    print(json.dumps({
        "seconds": seconds, "cpu": cpu, "trace_mb": os.path.getsize(path) / 1e6,
        "facts_mb": (column or 0) / 1e6, "full_mb": full / 1e6, "keys": keys, "requests": row["requests"],
        "ids": sizes,
        "read_s": t3 - t2, "raw_s": t2 - t1, "read2_s": t5 - t4,
    }))
"""


def cell_goals(quick: bool) -> list[Goal]:
    steps = (172, 688, 2_752) if quick else CELL_STEPS
    goals = []
    for design in CELL_DESIGNS:
        rows = {n: fresh(CELL, design, str(CELL_BUDGET), str(n)) for n in steps}
        goals += _cell_rows(design, rows)
        if design == "rsiagent":
            goals += _facts_rows(rows[steps[-1]], steps[-1])
    return goals


def _cell_rows(design: str, rows: dict[int, Any]) -> list[Goal]:
    """A design's cell at growing steps: the trace at the largest, and size and time growth (linear = 1)."""
    steps = sorted(rows)
    small, big = rows[steps[-2]], rows[steps[-1]]  # the last x4: past a design's warm-up (below)
    x = steps[-1] // steps[-2]
    size_growth = big["trace_mb"] / small["trace_mb"] / x
    # processor time (issue 42): the cell is one process and CPU-bound, and its wall time on a shared
    # machine grew by 1.45 where its processor time grew by 0.99 (Tracecraft, 2,752 to 11,008 steps)
    time_growth = big["cpu"] / small["cpu"] / x
    name = f"core.trace_cell.{design}"
    return [
        Goal.of(
            f"{name}.size",
            f"{design} bench cell: streamed trace at {steps[-1]:,} steps",
            big["trace_mb"],
            "< 50 MB",
            f"facts column {big['facts_mb']:.2f} MB ({big['keys']:,} key frames in {big['requests']:,} "
            f"requests); as full lists (schema 2) {big['full_mb']:.1f} MB; peak RSS {big['_rss_mb']:.0f} MB",
            unit="MB",
            extra={"rows": rows},
        ),
        Goal.of(
            f"{name}.size_growth",
            f"{design} bench cell: trace size, {steps[-2]:,} to {steps[-1]:,} steps, / x{x} (linear = 1)",
            size_growth,
            "<= 1.25",
            ", ".join(f"{n:,} steps {r['trace_mb']:.2f} MB" for n, r in rows.items()),
        ),
        Goal.of(
            f"{name}.time_growth",
            f"{design} bench cell: processor time, {steps[-2]:,} to {steps[-1]:,} steps, / x{x} (linear = 1)",
            time_growth,
            "<= 1.25",
            ", ".join(f"{n:,} steps {r['cpu']:.2f} s ({r['seconds']:.2f} s wall)" for n, r in rows.items())
            + " (the cell with its trace streamed, no interpreter start-up)",
        ),
    ]


def _facts_rows(big: dict[str, Any], steps: int) -> list[Goal]:
    """The RSIAgent cell's facts column against the full lists it replaced, and reading it back."""
    n = big["requests"]
    shrink = big["full_mb"] / big["facts_mb"]
    read = big["read2_s"] / big["read_s"]
    return [
        Goal.of(
            "core.trace_cell.facts_vs_full",
            f"rsiagent cell at {steps:,} steps: facts as full lists (schema 2) vs key frames and deltas",
            shrink,
            ">= 10x",
            f"{big['full_mb']:.1f} MB vs {big['facts_mb']:.2f} MB",
        ),
        Goal.of(
            "core.trace_cell.read",
            f"iter_requests over the rsiagent cell's {n:,} requests vs the same trace as schema 2 wrote it",
            read,
            ">= 1/2",
            f"{big['read_s'] * 1e6 / n:.0f} us vs {big['read2_s'] * 1e6 / n:.0f} us per request (full "
            f"lists), each resolved to its full set ({big['ids'] / n:,.0f} ids on average); the raw rows "
            f"alone {big['raw_s'] * 1e6 / n:.1f} us",
        ),
    ]


def trace_goals(quick: bool) -> list[Goal]:
    from sim.trace import Trace

    n = 20_000 if quick else 200_000

    def write(path: Path | None) -> None:
        trace = Trace(path, keep=False)
        for i in range(n):
            if i % 4 == 3:
                trace.request(
                    "bench", "react.hop", agent="a", exact_tokens=1200 + i % 97, estimate=1100, messages=3,
                    facts={"FACT-0001", "FACT-0002"}, hop=i,
                )  # fmt: skip
            else:
                trace.op("bench", "write_memory_doc", agent="a", key=f"k/{i}", bytes=i % 4096)
        trace.close(complete=True)

    def raw(path: Path) -> None:
        """The floor: the same rows (the same JSON texts) into the same two tables with plain sqlite3."""
        con = sqlite3.connect(path)
        con.execute(
            "create table ops (seq integer primary key, time real, agent text, system text, op text, "
            "phase text, detail text)"
        )
        con.execute(
            "create table requests (seq integer primary key, time real, agent text, system text, route text, "
            "exact_tokens integer, estimate integer, messages integer, facts text, needed text, detail text)"
        )
        ops: list[tuple[object, ...]] = []
        reqs: list[tuple[object, ...]] = []
        for i in range(n):
            if i % 4 == 3:
                detail = json.dumps({"hop": i})
                reqs.append(
                    (i + 1, 0.0, "a", "bench", "react.hop", 1200 + i % 97, 1100, 3, FACTS, "[]", detail)
                )
            else:
                ops.append(
                    (
                        i + 1,
                        0.0,
                        "a",
                        "bench",
                        "write_memory_doc",
                        "ok",
                        json.dumps({"bytes": i % 4096, "key": f"k/{i}"}),
                    )
                )
            if len(ops) >= 1000 or len(reqs) >= 1000 or i == n - 1:
                with con:
                    con.executemany("insert into ops values (?, ?, ?, ?, ?, ?, ?)", ops)
                    con.executemany("insert into requests values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", reqs)
                ops, reqs = [], []
        con.close()

    with tempfile.TemporaryDirectory(prefix="memsim-bench-") as tmp:
        k = iter(range(1000))
        t = interleaved(
            {
                "trace": lambda: write(Path(tmp) / f"t{next(k)}.db"),
                "raw": lambda: raw(Path(tmp) / f"r{next(k)}.db"),
            },
            rounds=3,
        )
    flat = fresh(FLAT, str(n))
    return [
        Goal.of(
            "core.trace_sqlite",
            "trace records streamed to SQLite vs plain sqlite3 executemany (the floor)",
            t["raw"] / t["trace"],
            ">= 0.5x",
            f"{n / t['trace']:,.0f} vs {n / t['raw']:,.0f} records/s ({n:,} records, batches of 1,000)",
        ),
        Goal.of(
            "core.trace_flat",
            f"memory a streamed Trace(keep=False) holds after {n:,} records",
            flat["held_kb"],
            "< 1,024 KB",
            f"{flat['held_kb']:.0f} KB traced by tracemalloc at the end (at most one 1,000-record batch is "
            f"pending); records kept: {flat['kept']}",
            unit="KB",
            also=flat["kept"] == 0,
        ),
    ]


FLAT = """
import json, sys, tempfile, tracemalloc
from pathlib import Path
from sim.trace import Trace
n = int(sys.argv[1])
with tempfile.TemporaryDirectory() as tmp:
    trace = Trace(Path(tmp) / "t.db", keep=False)
    trace.op("bench", "warm", i=0)
    trace.flush()
    tracemalloc.start()
    for i in range(n):
        trace.op("bench", "write_memory_doc", agent="a", key=f"k/{i}", bytes=i % 4096)
    held, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    kept = len(trace.data.ops) + len(trace.data.requests)
    trace.close(complete=True)
print(json.dumps({"held_kb": held / 1024, "kept": kept}))
"""


def simpy_goals(quick: bool) -> list[Goal]:
    import simpy

    from sim.engine import Simulation

    n = 100_000 if quick else 400_000

    def bare() -> None:
        env = simpy.Environment()

        def proc(k: int):  # type: ignore[no-untyped-def]
            for _ in range(k):
                yield env.timeout(1)

        for _ in range(4):
            env.process(proc(n // 4))
        env.run()

    def core() -> None:
        sim = Simulation(0, keep_trace=False)

        def proc(k: int, agent: str):  # type: ignore[no-untyped-def]
            for i in range(k):
                yield sim.timeout(1)
                sim.trace.op("bench", "tick", agent=agent, i=i)

        for j in range(4):
            sim.process(proc(n // 4, f"a{j}"))
        sim.run()

    t = interleaved({"bare": bare, "core": core}, rounds=3)
    return [
        Goal.of(
            "core.sim_events",
            "SimPy events on a Simulation with a trace op each vs bare SimPy timeouts (the floor)",
            t["bare"] / t["core"],
            ">= 0.2x",
            f"{n / t['core']:,.0f} vs {n / t['bare']:,.0f} events/s ({n:,} events, 4 processes)",
        )
    ]


def main() -> None:
    ap = parser(__doc__.splitlines()[0] if __doc__ else "")
    a = ap.parse_args()
    goals = store_goals(a.quick)
    goals += token_goals(a.quick)
    goals += cache_rss_goals(a.quick)
    goals += facts_goals(a.quick)
    goals += trace_goals(a.quick)
    goals += cell_goals(a.quick)
    goals += simpy_goals(a.quick)
    report("core: speed and memory", goals, a.json)


if __name__ == "__main__":
    main()
