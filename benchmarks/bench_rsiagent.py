"""RSIAgent performance and retention benchmark (a script, not a test).

Run: ``/work/venv/bin/python benchmarks/bench_rsiagent.py``

1. WORK LOG folding against history length: a target-role loop (character thresholds scaled to a
   16,000-token window, as the benchmark adapter does) over N turns of ~600-character observations with
   two fact tokens each and a 6,000-character dump every 25th turn (fact in the middle). Reported: model
   wall time per turn, folds, summarizer input characters per turn, and the fraction of observed facts
   still in the context (WORK LOG + unfolded tail), faithful vs the ``complete-fold-input`` fix.
2. Admission (silent audit + journal + staged install) against bank size (10, 100, 1,000 files of ~400
   characters) with a corpus of realistic size (108 instructions of ~60 words, thousands of shingles).
   Reported: milliseconds per stage, microseconds per file, and the ratio ("x sha") to ``tree_sha256``
   of the same bank (a floor measured in the same run). The model memoizes ``tree_sha256`` and the
   archive bytes of small trees (pure functions); the memos are emptied before each repetition, so
   these are cold costs.

Timings vary by machine; the table format and the retention figures are deterministic.
"""

from __future__ import annotations

import random
import time

from sim.engine import Simulation
from sim.text import extract_facts, fact_token, filler
from sim.tokens import count_tokens
from systems.rsiagent import model
from systems.rsiagent.adapter import scaled_target
from systems.rsiagent.model import (
    ActorLoop,
    Host,
    Variant,
    atomic_install_memory,
    audit_candidate,
    build_corpus,
    journal,
    render_fold,
    tree_sha256,
)
from systems.rsiagent.policies import Summarizer
from systems.rsiagent.state import SWITCHES, Message

COLORS = ("teal", "amber", "plum", "navy", "gold", "rose")


def fold_run(turns: int, variant: Variant) -> dict[str, float]:
    sim = Simulation(7, keep_trace=False)
    rng = random.Random(7)
    cfg = scaled_target(16_000)
    loop = ActorLoop(sim, cfg, Summarizer(), task="Repair the failing CI job.", variant=variant)
    seen: set[str] = set()
    bodies = []
    n = 1
    for t in range(turns):
        if t % 25 == 24:
            toks = [fact_token(n, rng.choice(COLORS))]
            body = filler(rng, 3000) + f" {toks[0]} " + filler(rng, 3000)
        else:
            toks = [fact_token(n, rng.choice(COLORS)), fact_token(n + 1, rng.choice(COLORS))]
            body = filler(rng, 280) + f" {toks[0]} " + filler(rng, 280) + f" {toks[1]}"
        n += len(toks)
        seen |= {x.split("=")[0] for x in toks}
        bodies.append(body)
    count_tokens("warm up")  # load the tokenizer outside the timed loop
    t0 = time.perf_counter()
    for t, body in enumerate(bodies):
        loop.add_pair(Message("assistant", f"PROGRAM: step {t}"), Message("user", body))
    elapsed = time.perf_counter() - t0
    ctx = "\n".join(loop.context())
    rendered = 0
    for ev in loop.folds:
        batch = loop.messages[2 * ev.first_pair : 2 * (ev.first_pair + ev.pairs)]
        rendered += len(render_fold(batch, complete=bool(variant.fixes)))
    sim.close()
    return {
        "us_per_turn": elapsed / turns * 1e6,
        "folds": len(loop.folds),
        "fold_chars_per_turn": rendered / turns,
        "retained": len(extract_facts(ctx) & seen) / len(seen),
    }


def corpus_instructions(n: int = 108) -> list[str]:
    """Synthetic benchmark instructions (~60 words) from their own vocabulary, so lessons do not collide."""
    rng = random.Random(108)
    vocab = [
        "".join(rng.choice("bcdfghjklmnpqrstvwxz") + rng.choice("aeiou") for _ in range(3))
        for _ in range(900)
    ]
    return [" ".join(rng.choice(vocab) for _ in range(60)) for _ in range(n)]


def bank(n_files: int) -> dict[str, bytes]:
    rng = random.Random(n_files)
    return {
        f"lessons/{i // 50:02d}/l{i:04d}.md": (filler(rng, 380) + f" {fact_token(i + 1, 'teal')}").encode()
        for i in range(n_files)
    }


def clear_memos() -> None:
    """Empty the model's content memos of ``tree_sha256`` and the journal archive."""
    model._tree_sha256.cache_clear()
    model._journal_archive.cache_clear()


def admission(n_files: int, corpus: frozenset[str]) -> dict[str, float]:
    files = bank(n_files)
    reps = max(1, 200 // n_files)
    t_audit = t_journal = t_install = t_floor = 0.0
    for r in range(reps):
        sim = Simulation(r, keep_trace=False)
        host = Host(sim, corpus=corpus)
        # cold costs: the model memoizes small trees' sha256 and archives, so empty the memos per stage
        clear_memos()
        t0 = time.perf_counter()
        tree_sha256(files)
        t1 = time.perf_counter()
        accepted, rejected = audit_candidate(
            sim, host, files, "Build the tool under /home/user/evolution_project"
        )
        t2 = time.perf_counter()
        clear_memos()
        t2b = time.perf_counter()
        journal(sim, host, r + 1, accepted, {"kind": "practice", "terminal_outcome": "PASS"})
        t3 = time.perf_counter()
        clear_memos()
        t3b = time.perf_counter()
        atomic_install_memory(sim, host, accepted)
        t4 = time.perf_counter()
        assert not rejected and host.canonical() == files
        t_floor += t1 - t0
        t_audit += t2 - t1
        t_journal += t3 - t2b
        t_install += t4 - t3b
        sim.close()
    total = t_audit + t_journal + t_install
    return {
        "audit_ms": t_audit / reps * 1e3,
        "journal_ms": t_journal / reps * 1e3,
        "install_ms": t_install / reps * 1e3,
        "us_per_file": total / reps / n_files * 1e6,
        "x_floor": total / t_floor if t_floor else float("nan"),
    }


def main() -> None:
    print("RSIAgent benchmark")
    print()
    print("1. WORK LOG folding vs history length (target role scaled to 16,000 tokens)")
    print(
        f"{'turns':>6} {'variant':>10} {'us/turn':>9} {'folds':>6} {'fold chars/turn':>16} {'facts kept':>11}"
    )
    for turns in (100, 200, 400, 800):
        for name, variant in (("faithful", Variant()), ("complete", SWITCHES.fixed("complete-fold-input"))):
            r = fold_run(turns, variant)
            print(
                f"{turns:>6} {name:>10} {r['us_per_turn']:>9.1f} {r['folds']:>6} "
                f"{r['fold_chars_per_turn']:>16.1f} {r['retained']:>11.3f}"
            )
    print()
    corpus = build_corpus(corpus_instructions())
    print(f"2. Admission vs bank size (corpus: 108 instructions, {len(corpus)} shingles)")
    print(f"{'files':>6} {'audit ms':>9} {'journal ms':>11} {'install ms':>11} {'us/file':>8} {'x sha':>6}")
    for n in (10, 100, 1000):
        r = admission(n, corpus)
        print(
            f"{n:>6} {r['audit_ms']:>9.2f} {r['journal_ms']:>11.2f} {r['install_ms']:>11.2f} "
            f"{r['us_per_file']:>8.1f} {r['x_floor']:>6.1f}"
        )


if __name__ == "__main__":
    main()
