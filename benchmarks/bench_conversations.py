"""Benchmark (not a test): real conversations through every design against their floor (issue 28).

    python benchmarks/bench_conversations.py [--rounds 3] [--quick] [--m-gb 1.5] [--json FILE]

A LongMemEval-shaped workload (50 instances × 48 sessions × 10 turns, about 112,000 tokens per instance;
``--quick``: 4 instances) runs through the four designs and the three baselines at one window (32,000
tokens). The file is ``memsim workload synth longmemeval --instances 50 --sessions 48 --turns 10`` when
that command is installed, read through the loader; otherwise the same shape is generated in the process
(seeded filler, turn sizes drawn around 233 tokens) and handed to the runner directly. Every
configuration runs in a **fresh process**, interleaved over rounds (medians):

* ``conversations.floor``: the floor "every turn's text encoded once with cl100k in the same process"
  (measured in the run's process, after the run, uncached) divided by the whole run's time (reading
  included): target >= 1/10;
* ``conversations.workers``: ``--workers 2`` against one worker, wall time from interpreter start:
  target >= 1.7x, the rows identical;
* ``conversations.dask``: ``--executor dask`` with 2 workers gives the rows one worker gives (reported);
* ``conversations.locomo_floor`` and ``conversations.locomo_floor2`` (needs ``memsim workload synth``): a
  LoCoMo-shaped file of the released size (10 conversations x 600 turns x 200 questions, every question
  after every turn) through the four designs and the three baselines at the same window, against the
  same floor (reported) and against a tighter one (:data:`RUN_LOCOMO`: each design's own distinct request
  texts encoded once and its scored requests assembled from those counts, no design mechanics, no
  scoring; >= 1/6, decided in issue 42).

  Why the first row has no target (issue 42): issue 38 set >= 1/10 against "every turn encoded once",
  but the sweep cannot do less than the second floor's work (seven request streams, each design's own
  texts counted once and its requests assembled), and that floor alone is about 15x the first (the row
  prints the ratio ``floor2 / floor``): a sweep that did exactly the second floor's work would score
  about 1/15. The second floor is the fair peer. It was measured at 0.20-0.24 (issue 38: 1/4.0 on the
  real file); what is left between is each design's modelled mechanics (MerchantBench's SimPy ReAct
  ticks and history release, Tracecraft's bucket read-back, Nemsy's page loads, RSIAgent's WORK LOG
  assembly) and the scoring of every question, spread over many small costs with none above 15 % of a
  profile. Issue 42 decided >= 1/6 as the target that guards it; >= 1/2 needs a conversation-mode path
  per design (a design's reads of the turns without its SimPy mechanics), a design change;
* ``conversations.m_rss`` (with ``--m-gb G``, needs ``memsim workload synth``): peak RSS of the whole
  sweep (one design, rsiagent, and the baselines) on an ``_m``-shaped file of at least G GB (500
  sessions per instance), streamed: target < 1,024 MB.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import Goal, fresh, fresh_rounds, median, parser, report

WINDOW = 32_000

RUN = r"""
import hashlib, json, random, sys, time
t0 = time.perf_counter()
from sim.bench.tasks import parse_designs
from sim.conversations import run as conv
instances, workers = int(sys.argv[1]), int(sys.argv[2])
executor, designs, path = sys.argv[3], sys.argv[4], sys.argv[5]
texts = []
if path == "-":  # the LongMemEval shape, generated in this process (no synth command installed)
    from sim.conversations.model import Instance, Question, Turn
    from sim.text import filler

    def synth(index):
        r = random.Random(1_000_003 * index + 7)
        turns, sids = [], tuple(f"s{index}_{k}" for k in range(48))
        for k, sid in enumerate(sids):
            for i in range(10):
                role = "user" if i % 2 == 0 else "assistant"
                n = min(1200, max(30, int(r.expovariate(1 / 233))))
                when = 1_684_000_000 + 86_400 * k
                turns.append(Turn(f"{sid}:{i}", sid, k, role, role, filler(r, int(n * 4.8)), when))
        ev = tuple(sorted({turns[r.randrange(len(turns))].turn_id for _ in range(2)}))
        q = Question(f"q{index}", "multi-session", "What did I say about it?", "it", False, ev, len(turns),
                     1_684_000_000 + 86_400 * 48)
        return Instance("longmemeval", index, f"q{index}", sids, tuple(turns), (q,))

    conv._iter_instances = lambda kind, p: (synth(i) for i in range(instances))
    conv._stamp = lambda p: (0, 0, 0)
    kind, path = "longmemeval", "/synthetic"
else:
    kind = "longmemeval"
specs = parse_designs(designs)
rows = conv.run_conversations(specs, [WINDOW], kind, path, workers=workers, executor=executor)
seconds = time.perf_counter() - t0
floor = 0.0
if workers == 1 and executor == "local":
    from sim.tokens import count_tokens_uncached
    for inst in conv._iter_instances(kind, path):
        texts = [t.text for t in inst.turns]
        f0 = time.perf_counter()
        for t in texts:
            count_tokens_uncached(t)
        floor += time.perf_counter() - f0
digest = hashlib.sha256(json.dumps(rows, sort_keys=True).encode()).hexdigest()[:16]
print(json.dumps({"seconds": seconds, "floor": floor, "rows": digest, "n": len(rows)}))
""".replace("WINDOW", str(WINDOW))


#: The LoCoMo-shaped row (issue 38): the real file's size, 10 conversations x 600 turns x 200 questions, all
#: questions after all turns. Prints the run's seconds, the encode-each-turn-once floor and the second,
#: tighter floor: each design's (and baseline's) own distinct request texts encoded once plus every request
#: it returns (one per step: the adapter contract returns a request for a turn too) assembled from those
#: cached counts, no design mechanics and no scoring (the requests are collected in an untimed pass after
#: the run).
RUN_LOCOMO = r"""
import hashlib, json, sys, time
t0 = time.perf_counter()
from sim.bench.tasks import parse_designs
from sim.conversations import run as conv
kind, path, designs = sys.argv[1], sys.argv[2], sys.argv[3]
specs = parse_designs(designs)
rows = conv.run_conversations(specs, [WINDOW], kind, path)
seconds = time.perf_counter() - t0
from sim.conversations.baselines import FullPrefix, baseline_request
from sim.tokens import count_tokens_uncached
floor = 0.0
requests = {}
for inst in conv._iter_instances(kind, path):
    f0 = time.perf_counter()
    for t in inst.turns:
        count_tokens_uncached(t.text)
    floor += time.perf_counter() - f0
    for spec in [s for s in specs if s.design != "oracle"]:
        sim = conv.Simulation(inst.index, keep_trace=False)
        adapter = conv.build_adapter(spec, sim, WINDOW, conv.drawn_for(inst))
        t_first = conv._first_time(inst)
        for step in conv.conversation_steps(inst):
            if step.time_s is not None and t_first is not None and step.time_s - t_first > sim.now:
                sim.run(until=step.time_s - t_first)
            req = adapter.step(step)
            requests.setdefault(spec.label, []).append(tuple(req.parts))  # every step returns a request
        sim.close()
    full = FullPrefix(inst)
    for q in inst.questions:
        requests.setdefault("full", []).append(full.request(q)[0])
        for name in ("oracle", "oracle-sessions"):
            requests.setdefault(name, []).append(baseline_request(name, inst, q))
f0 = time.perf_counter()
for label, reqs in requests.items():
    counts = {}
    for parts in reqs:
        for p in parts:
            if p not in counts:
                counts[p] = count_tokens_uncached(p)
    for parts in reqs:
        sum(map(counts.__getitem__, parts))
floor2 = time.perf_counter() - f0
digest = hashlib.sha256(json.dumps(rows, sort_keys=True).encode()).hexdigest()[:16]
print(json.dumps({"seconds": seconds, "floor": floor, "floor2": floor2, "rows": digest, "n": len(rows)}))
""".replace("WINDOW", str(WINDOW))


def synth_locomo(tmp: Path) -> str:
    """The LoCoMo-shaped file: ``memsim workload synth locomo --instances 10 --sessions 30 --turns 20``
    (600 turns and 200 questions per conversation, as the released file's largest)."""
    from sim.conversations.synth import run_cli

    out = tmp / "locomo_10x600.json"
    run_cli(kind="locomo", instances=10, sessions=30, turns=20, seed=0, out=out, progress=False)
    return str(out)


def synth_file(tmp: Path, instances: int, sessions: int) -> str:
    """A ``memsim workload synth`` file, or "-" when the command is not installed."""
    try:
        from sim.conversations.synth import run_cli
    except ImportError:
        return "-"
    out = tmp / f"lme_{instances}x{sessions}.json"
    run_cli(
        kind="longmemeval", instances=instances, sessions=sessions, turns=10, seed=0, out=out, progress=False
    )
    return str(out)


def main() -> None:
    ap = parser(__doc__ or "")
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds (medians)")
    ap.add_argument("--m-gb", type=float, default=0.0, help="also the _m-shaped RSS row on a file of G GB")
    args = ap.parse_args()
    instances = 4 if args.quick else 50
    designs = "merchantbench,nemsy,rsiagent,tracecraft"
    goals: list[Goal] = []
    with tempfile.TemporaryDirectory(prefix="memsim-bench-conv-") as tmp:
        path = synth_file(Path(tmp), instances, 48)
        where = "generated in process" if path == "-" else "memsim workload synth"
        runs = fresh_rounds(
            {
                "one": lambda: fresh(RUN, str(instances), "1", "local", designs, path),
                "two": lambda: fresh(RUN, str(instances), "2", "local", designs, path),
            },
            args.rounds,
        )
        one, two = runs["one"], runs["two"]
        t1, t2 = median([r["seconds"] for r in one]), median([r["seconds"] for r in two])
        floor = median([r["floor"] for r in one])
        same = len({r["rows"] for r in one + two}) == 1
        goals.append(Goal.of(
            "conversations.floor", "conversation sweep vs every turn encoded once", floor / t1, ">= 1/10",
            f"{t1:.2f} s for {instances} instances × 7 designs/baselines at {WINDOW:,} "
            f"vs floor {floor:.2f} s "
            f"({where}; median of {args.rounds})",
        ))  # fmt: skip
        goals.append(Goal.of(
            "conversations.workers", "--workers 2 vs 1 (conversation sweep)", t1 / t2, ">= 1.7",
            f"{t1:.2f} s vs {t2:.2f} s, rows identical: {same}", also=same,
        ))  # fmt: skip
        if path != "-":  # Dask's workers are fresh interpreters: they read the file, not this process
            dask = fresh(RUN, str(min(instances, 4)), "2", "dask", designs, path)
            base = (
                one[0] if instances <= 4 else fresh(RUN, str(min(instances, 4)), "1", "local", designs, path)
            )
            goals.append(Goal.of(
                "conversations.dask", "--executor dask rows vs one local worker", 1.0, "(reported)",
                f"rows identical: {dask['rows'] == base['rows']}", also=dask["rows"] == base["rows"],
            ))  # fmt: skip
        if path != "-":  # the LoCoMo-shaped row needs the synth command
            lpath = synth_locomo(Path(tmp))
            loc = [fresh(RUN_LOCOMO, "locomo", lpath, designs) for _ in range(args.rounds)]
            ls, lf, lf2 = (median([r[k] for r in loc]) for k in ("seconds", "floor", "floor2"))
            goals.append(Goal.of(
                "conversations.locomo_floor", "LoCoMo-shaped sweep vs every turn encoded once", lf / ls,
                "(reported)", f"{ls:.2f} s for 10 conversations x 600 turns x 200 questions x 7 designs "
                f"at {WINDOW:,} vs floor {lf:.3f} s (median of {args.rounds}); the second floor alone is "
                f"{lf2 / lf:.1f}x this one, so no sweep can reach 1/{lf2 / lf:.0f} of it (issue 42)",
            ))  # fmt: skip
            goals.append(Goal.of(
                "conversations.locomo_floor2", "LoCoMo-shaped sweep vs each design's texts encoded once "
                "and its requests assembled from cached counts", lf2 / ls, ">= 1/6",
                f"{ls:.2f} s vs {lf2:.3f} s (median of {args.rounds}); the target issue 42 decided (1/2 "
                "needs a conversation-mode path per design)",
            ))  # fmt: skip
        if args.m_gb and path != "-":
            per_instance = 500 * 10 * 233 * 4.8 * 1.1  # bytes: sessions × turns × tokens × chars, JSON
            n = max(1, int(args.m_gb * 1e9 / per_instance) + 1)
            m_path = synth_file(Path(tmp), n, 500)
            size = Path(m_path).stat().st_size
            m = fresh(RUN, str(n), "1", "local", "rsiagent", m_path)
            goals.append(Goal.of(
                "conversations.m_rss", "peak RSS on an _m-shaped file, streamed", m["_rss_mb"], "< 1,024 MB",
                f"{size / 1e9:.2f} GB, {n} instances × 500 sessions, {m['seconds']:.0f} s", unit="MB",
            ))  # fmt: skip
    report("conversations", goals, args.json, command="python benchmarks/bench_conversations.py")


if __name__ == "__main__":
    main()
