"""RSIAgent benchmark (a script, not a test): goals measured as ratios beside their floor, each
configuration in a fresh process (:func:`benchmarks.harness.fresh`).

Run: ``.venv/bin/python benchmarks/bench_rsiagent.py [--quick] [--json FILE]``

1. **Bench-cell growth** (issue 17): one ``memsim bench`` cell (``rsiagent``, the default workload of
   seed 0, a 32,000-token window, the trace streamed to SQLite) at ×1, ×4, ×16 and ×64 the base 172 steps
   (11,008 steps), each in a fresh process, timed without interpreter start-up. Goals: the per-step cost
   from ×16 to ×64 against the ×16 per-step cost (linear = 1.0), and the streamed trace at ×64 (< 50 MB);
   the row says which share of the trace is the requests' ``facts`` column (the core's key frames and
   deltas) and which share of the time writing it (``sim.tracefacts.FactFrames.encode``) takes.
2. **WORK LOG fold cost vs its floor**: the target-role loop (scaled to 16,000 tokens) over N turns of
   ~600-character observations with two fact tokens and a 6,000-character dump every 25th turn, against
   the floor of the same calls with the fold decisions given (the same history appends, the same batches
   rendered and summarized, the same contexts assembled: what any loop that folds exactly there must
   do), at 800 and 3,200 turns. Faithful and ``complete-fold-input`` (the fix renders whole messages)
   beside the facts each keeps (at 3,200 turns both are bound by the scaled WORK LOG cap).
3. **Admission vs its floor**: silent audit + journal + staged install of 10, 100 and 1,000 files (the
   host, its volume, the trace ops, the stage, fsyncs and renames) against the floor of the same audit
   and the same ``ep001.tgz`` archive computed once and every file written once, with a corpus of 108
   instructions. The model memoizes ``tree_sha256`` and the archive bytes of small trees; the memos are
   emptied before each run, so these are cold costs.

Timings vary by machine; the ratios are comparable across machines, the retention figures are exact.
"""

from __future__ import annotations

import functools
import json
import random
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.harness import Goal, fresh, interleaved, parser, report

BASE_STEPS = 172
BUDGET = 32_000

CELL = """
import json, os, sys, tempfile, time, cProfile, pstats, sqlite3
import sim.tracefacts
if sys.argv[4] == "1":  # the core's facts column stubbed out: what the design itself costs
    sim.tracefacts.FactFrames.encode = lambda self, ids, stream, seq: ("[]", sim.tracefacts.EMPTY)
from sim.bench.tasks import Task, run_task
from sim.tokens import count_tokens
from sim.workload import make_workload
steps, budget, profile = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3] == "1"
count_tokens("warm the tokenizer")
make_workload(0, steps).steps  # the workload is the harness's, not the design's: generated up front
path = os.path.join(tempfile.mkdtemp(), "trace.db")
prof = cProfile.Profile() if profile else None
t0 = time.perf_counter()
if prof:
    prof.enable()
row = run_task(Task("rsiagent", budget, 0, steps), trace_path=path)
if prof:
    prof.disable()
seconds = time.perf_counter() - t0
con = sqlite3.connect(path)
facts = con.execute("select sum(length(facts)) from requests").fetchone()[0]
encode = 0.0
if prof:
    stats = pstats.Stats(prof).stats.items()
    encode = sum(v[3] for k, v in stats if k[0].endswith("tracefacts.py") and k[2] == "encode")
print(json.dumps({"seconds": seconds, "trace_mb": os.path.getsize(path) / 1e6, "facts_mb": facts / 1e6,
                  "encode_s": encode, "requests": row["requests"], "recall": row["recall"]}))
"""


def growth(quick: bool) -> list[Goal]:
    scales = (1, 4, 16) if quick else (1, 4, 16, 64)
    rows = {k: fresh(CELL, str(BASE_STEPS * k), str(BUDGET), "0", "0") for k in scales}
    stub = {k: fresh(CELL, str(BASE_STEPS * k), str(BUDGET), "0", "1") for k in scales}
    big, prev = scales[-1], scales[-2]
    prof = fresh(CELL, str(BASE_STEPS * prev), str(BUDGET), "1", "0")

    def marginal(r: dict[int, Any]) -> float:
        per_step = r[prev]["seconds"] / (BASE_STEPS * prev)
        return float((r[big]["seconds"] - r[prev]["seconds"]) / (BASE_STEPS * (big - prev)) / per_step)

    ratio, design_ratio = marginal(rows), marginal(stub)
    detail = ", ".join(f"x{k}: {rows[k]['seconds']:.2f} s" for k in scales)
    design_detail = ", ".join(f"x{k}: {stub[k]['seconds']:.2f} s" for k in scales)
    share = prof["encode_s"] / prof["seconds"] if prof["seconds"] else 0.0
    steps = BASE_STEPS * big
    return [
        Goal.of(
            "rsi.cell.growth",
            f"RSIAgent bench cell: per-step cost x{prev}->x{big} vs x{prev}",
            ratio,
            "<= 1.25",
            f"{detail} ({BUDGET:,}-token window)",
        ),
        Goal.of(
            "rsi.cell.growth.design",
            f"the same cell with the core's facts column stubbed: x{prev}->x{big} vs x{prev}",
            design_ratio,
            "<= 1.25",
            f"{design_detail}; streamed trace {stub[big]['trace_mb']:.1f} MB",
        ),
        Goal.of(
            "rsi.cell.trace",
            f"RSIAgent bench cell: streamed trace at {steps:,} steps",
            rows[big]["trace_mb"],
            "< 50 MB",
            f"requests' facts column {rows[big]['facts_mb']:.1f} MB; FactFrames.encode {share:.0%} of "
            f"the profiled x{prev} cell; peak RSS {rows[big]['_rss_mb']:.0f} MB",
            unit="MB",
            extra={"rows": rows, "stubbed": stub, "profiled": prof},
        ),
    ]


COLORS = ("teal", "amber", "plum", "navy", "gold", "rose")
_SIM: dict[str, Any] = {}  # one simulation for every timed loop (its construction is not the loop's cost)


def observations(turns: int) -> list[str]:
    from sim.text import fact_token, filler

    rng = random.Random(7)
    out = []
    n = 1
    for t in range(turns):
        if t % 25 == 24:
            out.append(filler(rng, 3000) + f" {fact_token(n, rng.choice(COLORS))} " + filler(rng, 3000))
            n += 1
        else:
            a, b = fact_token(n, rng.choice(COLORS)), fact_token(n + 1, rng.choice(COLORS))
            out.append(filler(rng, 280) + f" {a} " + filler(rng, 280) + f" {b}")
            n += 2
    return out


def fold_loop(obs: list[str], fixed: bool) -> Any:
    """The model's loop over *obs* (no recorded requests); returns it."""
    from sim.engine import Simulation
    from systems.rsiagent.adapter import scaled_target
    from systems.rsiagent.model import ActorLoop
    from systems.rsiagent.policies import Summarizer
    from systems.rsiagent.state import SWITCHES

    variant = SWITCHES.fixed("complete-fold-input") if fixed else SWITCHES.variant()
    sim = _SIM.get("sim") or _SIM.setdefault("sim", Simulation(7, keep_trace=False))
    loop = ActorLoop(
        sim, scaled_target(16_000), Summarizer(), instruction="Repair the failing CI job.", variant=variant
    )
    loop.record_folds = False
    loop.call("PROGRAM: start", record=False)
    for t, o in enumerate(obs):
        loop.observe(o)
        loop.call(f"PROGRAM: step {t}", record=False)
    return loop


def fold_floor(obs: list[str], folds: list[tuple[int, int, int]], fixed: bool) -> None:
    """The same calls with the fold decisions given: append, render and summarize each batch, assemble."""
    from systems.rsiagent.adapter import scaled_target
    from systems.rsiagent.model import TASK_HEADER, WORKLOG_HEADER, cap_worklog, opening_message, render_fold
    from systems.rsiagent.policies import Summarizer
    from systems.rsiagent.state import Message

    summarizer = Summarizer()
    cap = scaled_target(16_000).worklog_max_chars
    history: list[Message] = []
    summary = ""
    covered = 0
    at: dict[int, list[tuple[int, int]]] = {}
    for call, first, n in folds:
        at.setdefault(call, []).append((first, n))
    pending = opening_message("Repair the failing CI job.")
    for call in range(len(obs) + 1):
        for first, n in at.get(call, ()):
            rendered = render_fold(history[2 * first : 2 * (first + n)], complete=fixed)
            summary = cap_worklog(summarizer.summarize(summary, rendered).strip(), cap)
            covered = first + n
        head = [TASK_HEADER + "Repair the failing CI job." + WORKLOG_HEADER + summary] if summary else []
        _ = head + [m.content for m in history[2 * covered :]] + [pending]
        history += [Message("user", pending), Message("assistant", f"PROGRAM: step {call}")]
        pending = obs[call] if call < len(obs) else ""


def fold_goals(quick: bool) -> list[Goal]:
    from sim.text import extract_facts
    from sim.tokens import count_tokens

    count_tokens("warm up")
    goals = []
    for turns in (400,) if quick else (800, 3200):
        obs = observations(turns)
        seen = frozenset().union(*(extract_facts(o) for o in obs))
        kept = {}
        for fixed in (False, True):
            loop = fold_loop(obs, fixed)
            calls = _fold_calls(loop)
            ctx = "\n".join(loop.context())
            kept[fixed] = len(extract_facts(ctx) & seen) / len(seen)
            times = interleaved(
                {
                    "model": functools.partial(fold_loop, obs, fixed),
                    "floor": functools.partial(fold_floor, obs, calls, fixed),
                },
                rounds=5,
            )
            ratio = times["model"] / times["floor"]
            name = "complete-fold-input" if fixed else "faithful"
            goals.append(
                Goal.of(
                    f"rsi.fold.{name}.{turns}",
                    f"WORK LOG loop ({name}, {turns} turns) vs its floor",
                    ratio,
                    "<= 1.5",
                    f"{times['model'] * 1e6 / turns:.0f} vs {times['floor'] * 1e6 / turns:.0f} us/turn; "
                    f"{len(loop.folds)} folds; facts kept {kept[fixed]:.3f}",
                )
            )
        if turns > 800:
            continue  # by then the WORK LOG is at its (scaled) cap: both variants keep the same facts
        goals.append(
            Goal.of(
                f"rsi.fold.retention.{turns}",
                f"facts kept after {turns} turns: complete-fold-input vs faithful",
                100 * (kept[True] - kept[False]),
                "> 0",
                f"{kept[True]:.3f} vs {kept[False]:.3f} of {len(seen)} observed facts",
                unit="pp",
            )
        )
    return goals


def _fold_calls(loop: Any) -> list[tuple[int, int, int]]:
    """(model call, first pair, pairs) of each fold: a fold before call c sees a history of c pairs."""
    return [(ev.at_pairs, ev.first_pair, ev.pairs) for ev in loop.folds]


def corpus_instructions(n: int = 108) -> list[str]:
    """Synthetic benchmark instructions (~60 words) from their own vocabulary, so lessons do not collide."""
    rng = random.Random(108)
    vocab = [
        "".join(rng.choice("bcdfghjklmnpqrstvwxz") + rng.choice("aeiou") for _ in range(3))
        for _ in range(900)
    ]
    return [" ".join(rng.choice(vocab) for _ in range(60)) for _ in range(n)]


def admission_goals(quick: bool) -> list[Goal]:
    from sim.engine import Simulation
    from sim.text import fact_token, filler
    from systems.rsiagent import model
    from systems.rsiagent.model import Host, atomic_install_memory, audit_candidate, build_corpus, journal

    corpus = build_corpus(corpus_instructions())
    target = "Build the tool under /home/user/evolution_project"
    goals = []
    for n_files in (10, 100) if quick else (10, 100, 1000):
        rng = random.Random(n_files)
        files = {
            f"lessons/{i // 50:02d}/l{i:04d}.md": (
                filler(rng, 380) + f" {fact_token(i + 1, 'teal')}"
            ).encode()
            for i in range(n_files)
        }

        def work(files: dict[str, bytes] = files) -> None:
            sim = Simulation(len(files), keep_trace=False)
            host = Host(sim, corpus=corpus, target=target)
            model._tree_sha256.cache_clear()
            model._journal_archive.cache_clear()
            accepted, rejected = audit_candidate(sim, host, files, host.target)
            meta = {"kind": "practice-terminal-memory", "terminal_outcome": "PASS"}
            journal(sim, host, 1, accepted, meta)
            model._tree_sha256.cache_clear()
            atomic_install_memory(sim, host, accepted)
            assert not rejected and host.canonical() == files
            sim.close()

        def floor(files: dict[str, bytes] = files) -> None:
            model._journal_archive.cache_clear()
            accepted, rejected = model.silent_audit(files, corpus, target)
            model.journal_archive(accepted, 1_767_571_200, "ep001.tgz")
            _ = dict(accepted)  # one write of every file
            assert not rejected

        times = interleaved({"work": work, "floor": floor}, rounds=max(3, 300 // n_files))
        ratio = times["work"] / times["floor"]
        goals.append(
            Goal.of(
                f"rsi.admission.{n_files}",
                f"admission of {n_files:,} files vs audit + archive once (floor)",
                ratio,
                "<= 2",
                f"{times['work'] * 1e3:.2f} ms vs {times['floor'] * 1e3:.2f} ms; "
                f"{times['work'] / n_files * 1e6:.0f} us/file; corpus {len(corpus):,} shingles",
            )
        )
    return goals


def main() -> None:
    args = parser(__doc__.splitlines()[0]).parse_args()
    goals = growth(args.quick) + fold_goals(args.quick) + admission_goals(args.quick)
    report("RSIAgent benchmark", goals, args.json, command="python benchmarks/bench_rsiagent.py")
    if args.json is None:
        print(json.dumps({g.key: round(g.value, 4) for g in goals}))


if __name__ == "__main__":
    main()
