"""``memsim demo``: all four designs on the embedded defaults, end to end, in about two minutes.

1. one scenario per design, each leaving a SQLite trace (Tracecraft's on moto in-process);
2. the claims ledger in the ``quick`` profile (every failure mode both ways);
3. a small context-budget benchmark with the oracle bound, with CSV, SQLite and PNG plots.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from rich.console import Console

from sim.scenario import execute, scenarios

#: The scenario shown for each design (the first of that design's scenarios if missing).
DEMO_SCENARIOS = (
    "merchantbench_suffix_eviction",
    "nemsy_recency_window",
    "rsiagent_wave_conflict",
    "tracecraft_cursor_reuse",
)


def run(
    out: Path | None, *, claims_profile: str = "quick", bench_seeds: int = 2, bench_steps: int = 60
) -> None:
    """Run the demo, writing everything under *out* (a new temporary directory if None)."""
    from sim import bench, ledger

    console = Console(width=200)
    if out is None:
        out = Path(tempfile.mkdtemp(prefix="memsim-demo-"))
    out.mkdir(parents=True, exist_ok=True)
    console.print(f"[bold]memsim demo[/bold]: outputs in {out}")

    found = scenarios()
    traces = out / "traces"
    for name in DEMO_SCENARIOS:
        if name not in found:
            continue
        sc = found[name]
        console.print(f"\n[bold]== scenario {name}[/bold] ({sc.system}): {sc.title}")
        store = "moto" if "moto" in getattr(sc.module, "STORES", ()) else "memory"
        for line in execute(name, store=store, trace_path=traces / f"{name}.db"):
            console.print("  " + line, markup=False, highlight=False)

    console.print("\n[bold]== claims ledger[/bold] (every failure mode, both ways, quick profile)")
    results = ledger.run_all(profile=claims_profile)
    rows = [r for r, _, _ in results]
    console.print(ledger.render_table(rows))
    ok = sum(r.faithful_ok and r.fixed_ok for r in rows)
    console.print(f"{ok}/{len(rows)} claims passed both ways")

    console.print("\n[bold]== context-budget benchmark[/bold] (same seeded workload through every design)")
    designs = bench.available_designs()
    tasks = bench.tasks_for(designs, [8000, 32000, 128000], bench_seeds, bench_steps)
    bench_rows = bench.run_sweep(tasks, workers=min(2, os.cpu_count() or 1))
    paths = bench.write_outputs(bench_rows, out / "bench")
    console.print(bench.render(bench.aggregate(bench_rows)))
    console.print(f"\ntrace databases: {traces}")
    for p in paths:
        console.print(f"benchmark output: {p}")
