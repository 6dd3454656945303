"""``memsim demo``: every installed design on the embedded defaults, end to end, with report pages.

1. each design's demo scenario, leaving a trace and its report page (a design whose scenarios declare an
   object store runs on moto in-process);
2. the claims ledger in the ``quick`` profile, every direction, with its report page;
3. a small context-budget benchmark with the oracle bound: CSV, SQLite, PNG plots and a report page;
4. the conversation benchmark on the shipped LongMemEval sample (when the conversation loaders are
   installed): questions.csv, aggregate.csv, SQLite and a report page;
5. ``index.html`` linking every page.

Returns whether every verdict came out as expected (the exit code follows it).
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from rich.console import Console


def _conversation_bench(
    out: Path, outputs: object, console: Console, workers: int
) -> tuple[str, str, str] | None:
    """The conversation benchmark on the shipped LongMemEval sample (every design, the three baselines);
    None where the conversation loaders are not installed."""
    try:
        from sim.conversations.samples import sample_path
    except ImportError:
        return None
    from sim.bench.tasks import parse_designs
    from sim.conversations.example import EXAMPLE_BUDGETS, EXAMPLE_KIND, EXAMPLE_SAMPLE
    from sim.conversations.metrics import aggregate
    from sim.conversations.outputs import write_outputs
    from sim.conversations.run import run_conversations
    from sim.conversations.table import render
    from sim.outputs import Outputs

    assert isinstance(outputs, Outputs)
    console.print(
        f"\n[bold]== real conversations[/bold] (the shipped {EXAMPLE_KIND} sample through every design)"
    )
    path = str(sample_path(EXAMPLE_SAMPLE))
    rows = run_conversations(parse_designs(None), list(EXAMPLE_BUDGETS), EXAMPLE_KIND, path, workers=workers)
    write_outputs(rows, out / "conversations", outputs=outputs, html=True, title=f"{EXAMPLE_KIND} sample")
    console.print(render(aggregate(rows)))
    n = len({(r["instance"], r["question_id"]) for r in rows})
    return ("real conversations", "conversations/index.html", f"{n} questions of the {EXAMPLE_KIND} sample")


def run(
    out: Path | None, *, claims_profile: str = "quick", bench_seeds: int = 2, bench_steps: int = 60
) -> bool:
    """Run the demo, writing everything under *out* (a new temporary directory if None)."""
    from sim import bench, ledger, report
    from sim import scenario as sc
    from sim.outputs import Outputs
    from sim.registry import designs

    console = Console(width=200, highlight=False)
    outputs = Outputs()
    out = outputs.dir(out) if out is not None else Path(tempfile.mkdtemp(prefix="memsim-demo-"))
    console.print(f"[bold]memsim demo[/bold]: outputs in {out}")
    workers = min(2, os.cpu_count() or 1)
    links: list[tuple[str, str, str]] = []
    with outputs.transaction():
        found = sc.scenarios()
        for d in designs().values():
            name = d.demo_scenario or next((s.name for s in found.values() if s.system == d.name), "")
            if name not in found:
                continue
            s = found[name]
            console.print(f"\n[bold]== scenario {name}[/bold] ({s.system}): {s.title}", highlight=False)
            store = "moto" if s.stores and "moto" in s.stores else None
            trace = out / "traces" / f"{name}.db"
            plan = sc.plan(s, store=store)
            result = sc.run_plan(plan, trace_path=trace, outputs=outputs)
            for line in result.lines:
                console.print("  " + line, markup=False, highlight=False)
            page = out / "traces" / f"{name}.html"
            outputs.write_text(page, report.render_run(outputs.staged_path(trace)))
            links.append((f"scenario {name}", f"traces/{name}.html", f"{s.system}: {s.title}"))

        console.print(
            f"\n[bold]== claims ledger[/bold] (every failure mode, four directions, {claims_profile} profile)"
        )
        results = ledger.run_all(profile=claims_profile, workers=workers, progress=False)
        rows = [r for r, _ in results]
        console.print(ledger.render_table(rows))
        console.print(ledger.headline(rows, claims_profile, 0), markup=False)
        doc = ledger.to_json(rows, profile=claims_profile, seed=0)
        outputs.write_text(
            out / "claims.json", json.dumps(doc, indent=2, ensure_ascii=False, default=str) + "\n"
        )
        outputs.write_text(out / "claims.html", report.render_claims(doc))
        links.append(("claims ledger", "claims.html", ledger.headline(rows, claims_profile, 0)))

        console.print(
            "\n[bold]== context-budget benchmark[/bold] (same seeded workload through every design)"
        )
        tasks = bench.tasks_for(bench.parse_designs(None), [8000, 32000, 128000], bench_seeds, bench_steps)
        bench_rows = bench.run_sweep(tasks, workers=workers, progress=False)
        bench.write_outputs(bench_rows, out / "bench", outputs=outputs, html=True)
        console.print(bench.render(bench.aggregate(bench_rows)))
        links.append(("benchmark", "bench/index.html", f"{len(bench_rows)} cells"))
        conversation = _conversation_bench(out, outputs, console, workers)
        if conversation is not None:
            links.append(conversation)
        outputs.write_text(out / "index.html", report.render_index("memsim demo", links))
        written = outputs.paths
    console.print()
    for p in written:
        console.print(f"wrote {p}", markup=False)
    console.print(f"report: {out / 'index.html'}", markup=False)  # last: the page that links the others
    return all(r.as_expected for r in rows)
