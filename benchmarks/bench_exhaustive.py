"""Benchmark (not a test): the exhaustive ledger, ``memsim claims --exhaustive`` at the declared scopes.

    python benchmarks/bench_exhaustive.py [--quick] [--deep] [--json FILE]

Each configuration runs in a **fresh process** (imports included):

* ``exhaustive.wall_2``: every registered claim, all four directions over every case of its declared
  scope, with Hypothesis' ``ci`` search beside faithful and off, on 2 processes (target: under 5 minutes).
  The row's JSON lists cases, seconds and processor seconds per claim (``extra.claims``), and the script
  prints them, so a slow claim shows; on a shared machine the processor time is the figure to trust;
* ``exhaustive.rate.<design>``: cases per processor second of the exhaustive run (the Hypothesis
  comparison left out) against examples per processor second of the ``ci`` sampling ledger on the same
  claims (each claim's ``run_claim`` in one fresh process): a ratio, reported.

``--quick``: Tracecraft's claims only. ``--deep``: the deep profile instead (``--scope deep``, each claim's
bounds doubled; issue 42), one row ``exhaustive.deep.wall_2`` against the same 5 minutes, no sampling
comparison.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import Goal, fresh, parser, report

EXHAUSTIVE = """
import json, sys, time
t0 = time.perf_counter()
from sim import claims as cl, ledger
from sim.exhaustive.run import run_ledger
system = sys.argv[1] or None
rows = run_ledger(ledger.select(system), sys.argv[2] or None, workers=2)
seconds = time.perf_counter() - t0
per = []
for r in rows:
    cases = sum(d.examples for d in r.directions.values())
    spent = sum(d.seconds for d in r.directions.values())
    cpu = sum(d.cpu_seconds for d in r.directions.values())
    per.append([r.claim, r.system, cases, round(spent, 3), r.as_expected, round(cpu, 3)])
print(json.dumps({"seconds": seconds, "claims": per}))
"""

SAMPLED = """
import json, sys, time
from sim import ledger, search
system = sys.argv[1] or None
search.use_private_home()
per = []
for c in ledger.select(system):
    c0 = time.process_time()
    row, _ = ledger.run_claim(c, "ci", 0)
    per.append([row.claim, row.system, sum(d.examples for d in row.directions.values()),
                time.process_time() - c0])
print(json.dumps({"claims": per}))
"""


def main() -> None:
    ap = parser(__doc__.splitlines()[0] if __doc__ else "")
    ap.add_argument("--deep", action="store_true", help="the deep profile (--scope deep)")
    a = ap.parse_args()
    system = "tracecraft" if a.quick else ""
    ex = fresh(EXHAUSTIVE, system, "deep" if a.deep else "")
    claims = ex["claims"]
    expected = sum(c[4] for c in claims)
    cpu = sum(c[5] for c in claims)
    print(f"{'claim':48} {'cases':>7} {'s':>7} {'cpu s':>7}")
    for claim, _system, cases, spent, _ok, claim_cpu in sorted(claims, key=lambda c: -c[5]):
        print(f"{claim:48} {cases:>7} {spent:>7.1f} {claim_cpu:>7.1f}")
    scopes = "deep scopes (`--scope deep`)" if a.deep else "declared scopes"
    goals = [
        Goal.of(
            "exhaustive.deep.wall_2" if a.deep else "exhaustive.wall_2",
            f"`memsim claims --exhaustive`{' (Tracecraft)' if a.quick else ''}, {scopes}, 2 processes",
            ex["seconds"],
            "< 300 s",
            f"{len(claims)} claims, {sum(c[2] for c in claims):,} cases run, {expected} as expected; "
            f"the cases' processor time {cpu:.0f} s (half of it is what 2 idle cores need); one fresh run",
            unit="s",
            extra={"claims": claims},
            also=expected == len(claims),
        )
    ]
    if a.deep:
        report(f"exhaustive ledger: {scopes}, 2 processes", goals, a.json)
        return
    sampled = fresh(SAMPLED, system)
    for design in sorted({c[1] for c in claims}):
        ex_cases = sum(c[2] for c in claims if c[1] == design)
        ex_s = sum(c[5] for c in claims if c[1] == design)
        ci_cases = sum(c[2] for c in sampled["claims"] if c[1] == design)
        ci_s = sum(c[3] for c in sampled["claims"] if c[1] == design)
        ex_rate, ci_rate = ex_cases / max(ex_s, 1e-9), ci_cases / max(ci_s, 1e-9)
        goals.append(
            Goal.of(
                f"exhaustive.rate.{design}",
                f"{design}: exhaustive cases per second vs `ci` sampling's examples per second",
                ex_rate / ci_rate,
                "(reported)",
                f"{ex_rate:,.0f} cases per processor second ({ex_cases:,} in {ex_s:.1f} s) vs {ci_rate:,.0f} "
                f"examples ({ci_cases:,} in {ci_s:.1f} s)",
            )
        )
    report("exhaustive ledger: declared scopes, 2 processes", goals, a.json)
    if a.json is None:
        print(json.dumps({g.key: round(g.value, 3) for g in goals}))


if __name__ == "__main__":
    main()
