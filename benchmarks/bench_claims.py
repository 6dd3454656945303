"""Benchmark (not a test): the claims ledger, ``memsim claims --profile ci`` with all four directions,
in 1 and 2 processes.

    python benchmarks/bench_claims.py [--rounds 2] [--profile ci] [--quick] [--json FILE]

Each configuration is ``sim.ledger.run_all(profile, workers=N)`` in a **fresh process** (imports
included: that is what a user waits for), interleaved over rounds, medians:

* ``claims.wall_2``: the whole ledger with 2 worker processes (target: under 30 s, with the off and
  combined directions declared);
* ``claims.wall_2_slow_machine``: the same time scaled to a machine whose bare-SimPy floor is 0.83 M
  events/s (the 2-core AMD EPYC issue 33 measured on) by the ratio of this run's floor (measured here,
  in a fresh process, as ``run_all.py``'s header does) to that one (target: under 30 s there too);
* ``claims.workers``: 2 processes against 1 (one claim per task, the claims that declare ``slow``
  first; the workers are forks of the runner made after the designs and Hypothesis are loaded).

Where the ledger's time goes (issue 33, ``py-spy`` and ``time.process_time`` around ``Claim.run``, one
process): before, 45% was Hypothesis' own work (drawing, its choice tree, the per-example PRNG resets,
shrinking) and 55% the model runs; the fixed and combined directions then drew the same 100 examples twice.
They now share one search (:func:`sim.search.check_holds_together`), which took Hypothesis' share of the
holding directions from about 9.7 s to 4.8 s (CPU, one process). Of the model runs: the tokenizer about 5%
(texts not seen before), JSON encoding of trace records and files about 12% before :mod:`sim.jsontext`;
raising the garbage collector's thresholds or freezing the heap gained nothing (measured).

The rows of both configurations must be identical (verdicts, examples and counts; not the seconds).
The slowest claims are listed in the JSON (``extra``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import Goal, fresh, fresh_rounds, median, parser, report

#: The bare-SimPy floor of the slower machine issue 33 measured the ledger on (2-core AMD EPYC).
SLOW_FLOOR = 0.83e6

LEDGER = """
import hashlib, json, sys, time
t0 = time.perf_counter()
from sim import ledger
res = ledger.run_all(profile=sys.argv[2], progress=False, workers=int(sys.argv[1]))
seconds = time.perf_counter() - t0
rows = [r for r, _ in res]
same = []
for r in rows:
    j = r.to_json()
    j.pop("seconds")
    for d in ("faithful", "fixed", "off", "combined"):
        if j.get(d):
            j[d].pop("seconds", None)
    same.append(j)
digest = hashlib.sha256(json.dumps(same, sort_keys=True, default=str).encode()).hexdigest()[:16]
directions = sum(len(r.directions) for r in rows)
slowest = sorted(((r.seconds, r.claim) for r in rows), reverse=True)[:8]
print(json.dumps({"seconds": seconds, "claims": len(rows), "directions": directions, "rows": digest,
                  "as_expected": sum(r.as_expected for r in rows), "slowest": slowest}))
"""


def main() -> None:
    ap = parser(__doc__.splitlines()[0] if __doc__ else "")
    ap.add_argument("--rounds", type=int, default=2, help="interleaved rounds per configuration")
    ap.add_argument("--profile", default="ci", help="the claims profile (quick, ci, thorough)")
    a = ap.parse_args()
    rounds = 1 if a.quick else a.rounds
    profile = "quick" if a.quick else a.profile
    runs = fresh_rounds({w: (lambda w=w: fresh(LEDGER, str(w), profile)) for w in (1, 2)}, rounds)
    one, two = (median([r["seconds"] for r in runs[w]]) for w in (1, 2))
    from run_all import floors

    floor = floors().get("simpy_events_s", 0.0)
    same = len({r["rows"] for w in (1, 2) for r in runs[w]}) == 1
    last = runs[2][-1]
    what = f"{last['claims']} claims, {last['directions']} directions, {last['as_expected']} as expected"
    goals = [
        Goal.of(
            "claims.wall_2",
            f"`memsim claims --profile {profile}`, all directions, 2 processes",
            two,
            "< 30 s",
            f"{what}; median of {rounds} fresh runs; rows identical to 1 process: {same}",
            unit="s",
            extra={"slowest": last["slowest"]},
            also=same,
        ),
        Goal.of(
            "claims.wall_2_slow_machine",
            f"`memsim claims --profile {profile}`, 2 processes, scaled to a machine of bare SimPy "
            f"{SLOW_FLOOR / 1e6:.2f} M events/s",
            two * floor / SLOW_FLOOR if floor else float("nan"),
            "< 30 s",
            f"{two:.1f} s here x this run's floor {floor / 1e6:.2f} M events/s / "
            f"{SLOW_FLOOR / 1e6:.2f} M events/s (issue 33's 2-core AMD EPYC)",
            unit="s",
        ),
        Goal.of(
            "claims.workers",
            f"`memsim claims --profile {profile}`, 2 processes vs 1",
            one / two,
            "(reported)",
            f"1 process {one:.1f} s, 2 processes {two:.1f} s, fresh processes, median of {rounds}",
        ),
    ]
    report("claims ledger: 1 and 2 processes", goals, a.json)
    if a.json is None:
        print(json.dumps({g.key: round(g.value, 3) for g in goals}))


if __name__ == "__main__":
    main()
