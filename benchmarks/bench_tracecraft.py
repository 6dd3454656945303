"""Tracecraft benchmarks: store speed ratio, upstream's key-format delivery comparison, claim contention.

Run: ``/work/venv/bin/python benchmarks/bench_tracecraft.py`` (prints deterministic-format tables; the
timings are measured in the same run, so only the ratios are comparable across machines).

1. **Mail workload**: S senders x K messages to one reader, read back with ``inbox --new`` in rounds,
   on the in-memory store and on S3 through boto3 against moto in-process; the shown lines must be
   identical, and the goal is a >= 100x speed ratio.
2. **Key formats** (upstream ``messaging_bench``): S senders x K messages in one burst, old whole-second
   keys ``<sec>_<sender>.json`` against the ns+uuid8 append keys; distinct bodies read back by a verifier
   (upstream recorded 32/960 against 960/960).
3. **Claim contention** (upstream ``contention_bench``): N concurrent agents per trial on a fresh claim;
   exactly one winner and stored owner == declared winner, on S3 (conditional PUT) and on the racy HF
   check-then-write.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sim.engine import Simulation
from sim.objects import ObjectStore, open_store
from systems.tracecraft.model import Tracecraft
from systems.tracecraft.protocol import TracecraftError, direct_children


def mail_workload(kind: str, senders: int, per_sender: int, rounds: int) -> tuple[float, list[str], int]:
    """Run the mail workload on store *kind*; (seconds, shown lines, store ops)."""
    store = open_store(kind)
    t0 = time.perf_counter()
    try:
        sim = Simulation(11)
        tc = Tracecraft(sim, store, project="bench")
        reader = tc.agent("reader")
        agents = [tc.agent(f"s{i:02d}") for i in range(senders)]
        shown: list[str] = []
        per_round = max(1, per_sender // rounds)
        sent = 0
        while sent < per_sender:
            for _ in range(min(per_round, per_sender - sent)):
                for a in agents:
                    a.call(a.send("reader", f"{a.agent_id} #{sent}"))
                sim.run(until=sim.now + 1)
                sent += 1
            shown += [m.render() for m in reader.call(reader.inbox(new=True))]
        ops = sum(store.ops.values())
        return time.perf_counter() - t0, shown, ops
    finally:
        store.close()


def key_formats(senders: int, per_sender: int) -> tuple[int, int, int]:
    """Delivered distinct bodies with whole-second keys and with append keys, and the total sent."""
    results = []
    for fmt in ("old", "new"):
        sim = Simulation(12)
        store = open_store("memory")
        tc = Tracecraft(sim, store, project="bench")
        for i in range(senders):
            c = tc.agent(f"sender{i:02d}")
            for k in range(per_sender):
                body = f"sender{i:02d} message {k}"
                if fmt == "old":  # the pre-0.2.5 key: whole seconds of the writer's clock, then the sender
                    sec = c.clock.ns() // 1_000_000_000
                    tc.bucket.put_json(f"messages/inbox/{sec}_{c.agent_id}.json",
                                       {"from": c.agent_id, "message": body})  # fmt: skip
                else:
                    c.call(c.send("inbox", body))
        bodies = set()
        for key in direct_children(tc.bucket.list_keys("messages/inbox/"), "messages/inbox/"):
            doc = tc.bucket.get_json(key)
            if doc and "message" in doc:
                bodies.add(doc["message"])
        results.append(len(bodies))
    return results[0], results[1], senders * per_sender


def contention(kind: str, backend: str, agents: int, trials: int) -> tuple[int, int, list[int]]:
    """(trials where the invariant held, valid trials, winners per trial)."""
    store: ObjectStore = open_store(kind)
    try:
        sim = Simulation(13)
        tc = Tracecraft(sim, store, project=f"contention-{backend}", backend=backend, latency=0.01)
        held = 0
        wins = []
        for t in range(trials):
            sid = f"trial-{t}"
            outcome: dict[str, bool] = {}

            def claimant(name: str, sid: str = sid, outcome: dict[str, bool] = outcome) -> Any:
                c = tc.agent(name)
                try:
                    yield from c.claim(sid)
                    outcome[name] = True
                except TracecraftError:
                    outcome[name] = False

            procs = [sim.process(claimant(f"a{i:02d}")) for i in range(agents)]
            sim.run(until=sim.env.all_of(procs))
            winners = [a for a, w in outcome.items() if w]
            owner = (tc.bucket.get_json(f"steps/{sid}/claim.json") or {}).get("agent")
            held += len(winners) == 1 and owner == winners[0]
            wins.append(len(winners))
        return held, trials, wins
    finally:
        store.close()


def main() -> None:
    """Run the three benchmarks and print their tables."""
    s, k, rounds = 8, 25, 5
    mem = [mail_workload("memory", s, k, rounds) for _ in range(5)]  # best of 5 (first includes warm-up)
    moto = [mail_workload("moto", s, k, rounds) for _ in range(2)]  # best of 2
    mem_s, mem_lines, mem_ops = min(mem, key=lambda r: r[0])
    moto_s, moto_lines, moto_ops = min(moto, key=lambda r: r[0])
    print(
        f"1. mail workload: {s} senders x {k} messages, read back with inbox --new in {rounds} rounds "
        "(best of 5 runs in memory, 2 on moto)"
    )
    print(f"   {'store':8s} {'seconds':>9s} {'store ops':>10s} {'ops/s':>10s} {'lines shown':>12s}")
    for name, secs, ops, lines in (
        ("memory", mem_s, mem_ops, mem_lines),
        ("moto", moto_s, moto_ops, moto_lines),
    ):
        print(f"   {name:8s} {secs:9.3f} {ops:10d} {ops / secs:10.0f} {len(lines):12d}")
    print(
        f"   identical results: {mem_lines == moto_lines}; speed ratio memory/moto: {moto_s / mem_s:.0f}x "
        f"(goal >= 100x: {'met' if moto_s / mem_s >= 100 else 'NOT met'})"
    )
    old, new, total = key_formats(32, 30)
    print("2. key formats (upstream messaging_bench: 32 senders x 30 messages in one burst)")
    print(f"   whole-second keys <sec>_<sender>.json: {old}/{total} delivered (upstream: 32/960)")
    print(f"   ns+uuid8 append keys:                  {new}/{total} delivered (upstream: 960/960)")
    print("3. claim contention (exactly one winner and stored owner == declared winner)")
    print(f"   {'store':8s} {'backend':8s} {'agents':>6s} {'held':>9s}  winners per trial")
    for kind, backend, n, trials in (("memory", "s3", 16, 50), ("memory", "hf", 16, 50), ("moto", "s3", 8, 5),
                                     ("moto", "hf", 8, 5)):  # fmt: skip
        held, valid, wins = contention(kind, backend, n, trials)
        shown = wins if len(wins) <= 10 else f"{wins[:10]}... (min {min(wins)}, max {max(wins)})"
        print(f"   {kind:8s} {backend:8s} {n:6d} {held:4d}/{valid:<4d}  {shown}")


if __name__ == "__main__":
    main()
