"""``memsim demo``: every installed design on the embedded defaults, end to end, with report pages.

1. each design's demo scenario, leaving a trace and its report page (a design whose scenarios declare an
   object store runs on moto in-process);
2. the claims ledger in the ``quick`` profile, every direction, with its report page;
3. a small context-budget benchmark with the oracle bound: CSV, SQLite, PNG plots and a report page;
4. the conversation benchmark on the shipped LongMemEval- and LoCoMo-shaped demo samples at the windows
   fitted to each (when the conversation loaders are installed): questions.csv, aggregate.csv, SQLite
   and a report page per sample;
5. ``index.html``: the findings per design, linking each to its evidence, and every page.

The terminal gets a short summary (the findings, one line per part, the page to open: well under 60
lines); ``verbose`` adds every scenario's summary, the full claims table, the benchmark tables and every
file written. Returns whether every verdict came out as expected (the exit code follows it).
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from rich.console import Console

#: The benchmark window the index and the summary quote recall and tokens at (the sweep's middle one).
WINDOWS = (8000, 32000, 128000)
HEADLINE_WINDOW = 32000
#: The provider whose prompt cache and list price the demo's benchmark prices every request with (it adds
#: about a second to the sweep; ``memsim bench --provider`` for another).
PROVIDER = "anthropic"


#: The conversation samples the demo runs (sim.conversations.samples.SAMPLES), each at its fitted windows.
DEMO_SAMPLES = ("longmemeval_demo", "locomo_demo")


def _conversation_bench(
    out: Path, outputs: object, say: Any, workers: int, verbose: bool
) -> list[tuple[str, str, str]]:
    """The conversation benchmark on the shipped demo samples (every design, the baselines), each at the
    windows fitted to it (:mod:`sim.conversations.windows`); nothing where the conversation loaders are
    not installed."""
    try:
        from sim.conversations.samples import sample_kind, sample_path
    except ImportError:
        return []
    from sim.bench.tasks import parse_designs
    from sim.conversations.metrics import aggregate
    from sim.conversations.roles import roles_for
    from sim.conversations.run import run_conversations
    from sim.conversations.table import render
    from sim.conversations.windows import fit_file
    from sim.conversations_outputs import settings, write_outputs
    from sim.outputs import Outputs
    from sim.provenance import collect

    assert isinstance(outputs, Outputs)
    links = []
    for name in DEMO_SAMPLES:
        kind, path = sample_kind(name), str(sample_path(name))
        fitted = fit_file(kind, path)
        roles = roles_for(kind, None)
        specs = parse_designs(None)
        errata: list[dict[str, str]] = []
        rows = run_conversations(specs, list(fitted.windows), kind, path, workers=workers, roles=roles,
                                 instances=fitted.instances, errata=errata)  # fmt: skip
        meta = settings(list(fitted.windows), roles) | {"windows_rule": fitted.describe()}
        run_config = {"benchmark": "conversations", "designs": [s.label for s in specs],
                      "budgets": list(fitted.windows), **meta}  # fmt: skip
        record = collect(input_path=path, input_format=kind, settings=run_config, errata=errata)
        write_outputs(rows, out / "conversations" / kind, outputs=outputs, html=True,
                      title=f"{kind}-shaped sample", meta=meta, provenance=record)  # fmt: skip
        agg = aggregate(rows)
        n = len({(r["instance"], r["question_id"]) for r in rows})
        page = f"conversations/{kind}/index.html"
        say(f"\nreal conversations (the shipped {kind}-shaped sample, {n} questions) -> {page}")
        say(f"  {fitted.short()}")
        b = fitted.windows[len(fitted.windows) // 2]  # the median instance length: about half fit whole
        recall = ", ".join(
            f"{a['design']} {a['evidence_recall_turn']:.3f}"
            for a in agg
            if a["budget"] == b and a["question_type"] == "all" and a["evidence_recall_turn"] is not None
        )
        say(f"  turn recall at the {b:,}-token window (over it, nothing delivered): {recall}")
        if verbose:
            from rich.console import Console

            Console(width=200, highlight=False).print(render(agg))
        links.append((f"real conversations ({kind})", page, f"{n} questions of the {kind}-shaped sample"))
    return links


def run(
    out: Path | None,
    *,
    claims_profile: str = "quick",
    bench_seeds: int = 5,
    bench_steps: int = 60,
    verbose: bool = False,
) -> bool:
    """Run the demo, writing everything under *out* (a new temporary directory if None)."""
    from sim import bench, bench_outputs, ledger, report
    from sim import scenario_core as sc
    from sim.outputs import Outputs
    from sim.registry import designs
    from sim.report.fmt import plain

    console = Console(width=200, highlight=False)

    def say(text: str = "", *, full: bool = False) -> None:
        """Print a plain line (no markup); *full*: only with ``verbose``."""
        if verbose or not full:
            console.print(text, markup=False, highlight=False, soft_wrap=True)  # one line per line

    outputs = Outputs()
    out = outputs.dir(out) if out is not None else Path(tempfile.mkdtemp(prefix="memsim-demo-"))
    say(f"memsim demo: outputs in {out}")
    from sim.progress import phase

    phase("demo 1/4: each design's scenario")
    workers = min(2, os.cpu_count() or 1)
    links: list[tuple[str, str, str]] = []
    runs: dict[str, list[tuple[str, str]]] = {}
    with outputs.transaction():
        found = sc.scenarios()
        say("\nscenarios (each design's demo scenario: a trace and its page)")
        for d in designs().values():
            name = d.demo_scenario or next((s.name for s in found.values() if s.system == d.name), "")
            if name not in found:
                continue
            s = found[name]
            store = "moto" if s.stores and "moto" in s.stores else None
            trace = out / "traces" / f"{name}.db"
            plan = sc.plan(s, store=store)
            result = sc.run_plan(plan, trace_path=trace, outputs=outputs)
            say(f"  {name}: {plain(s.title)} -> traces/{name}.html")
            for line in result.lines:
                say("    " + line, full=True)
            page = out / "traces" / f"{name}.html"
            outputs.write_text(page, report.render_run(outputs.staged_path(trace)))
            links.append((f"scenario {name}", f"traces/{name}.html", f"{s.system}: {s.title}"))
            runs.setdefault(s.system, []).append((name, f"traces/{name}.html"))

        phase(f"demo 2/4: the claims ledger ({claims_profile} profile)")
        results = ledger.run_all(profile=claims_profile, workers=workers, progress=True)
        rows = [r for r, _ in results]
        head = ledger.headline(rows, claims_profile, 0)
        say(f"\nclaims ledger (every failure mode, four directions) -> claims.html\n  {head}")
        if verbose:
            console.print(ledger.render_table(rows))
        doc = ledger.to_json(rows, profile=claims_profile, seed=0)
        outputs.write_text(
            out / "claims.json", json.dumps(doc, indent=2, ensure_ascii=False, default=str) + "\n"
        )
        outputs.write_text(out / "claims.html", report.render_claims(doc))
        links.append(("claims ledger", "claims.html", head))

        from sim.bench.describe import describe, summary_lines
        from sim.cache import parse_provider
        from sim.provenance import collect

        phase(f"demo 3/4: the context-budget benchmark (priced as {PROVIDER})")
        priced_by = parse_provider(PROVIDER)
        designs_all = bench.parse_designs(None)
        tasks = bench.tasks_for(designs_all, list(WINDOWS), bench_seeds, bench_steps, provider=priced_by)
        bench_rows = bench.run_sweep(tasks, workers=workers, progress=True)
        settings = {"benchmark": "fact-token", "designs": sorted({t.design for t in tasks}),
                    "budgets": list(WINDOWS), "seeds": bench_seeds, "steps": bench_steps,
                    "provider": priced_by.meta() if priced_by is not None else None}  # fmt: skip
        record = collect(input_path=None, input_format=None, settings=settings)
        bench_outputs.write_outputs(bench_rows, out / "bench", outputs=outputs, html=True, provenance=record)
        agg = bench.aggregate(bench_rows)
        designs_run = sorted({str(r["design"]) for r in bench_rows})
        say(
            f"\ncontext-budget benchmark ({len(designs_run)} designs incl. the oracle × {len(WINDOWS)} "
            f"windows × {bench_seeds} seeds, {len(bench_rows)} cells) -> bench/index.html"
        )
        workload = describe(bench_rows)
        say(f"  {workload} (not the workload of `memsim bench`, whose default draws 120–200 load steps)")
        for line in summary_lines(agg):
            say("  " + line)
        if verbose:
            console.print(bench.render(agg))
        sweep = (
            f"{len(bench_rows)} cells: {len(designs_run)} designs (with the oracle) × {len(WINDOWS)} windows "
            f"× {bench_seeds} seeds; {workload}"
        )
        links.append(("benchmark", "bench/index.html", sweep))

        found_rows = report.headlines(doc, bench_rows, HEADLINE_WINDOW, runs)
        price = next((h.provider for h in found_rows if h.provider), "")
        say(
            "\nfindings per design (failure modes; recall, tokens per request"
            + (f", $ per run at {price} list price and cache hit ratio" if price else "")
            + f" at the {HEADLINE_WINDOW:,}-token window)"
        )
        for h in found_rows:
            say("  " + _headline_line(h))
        phase("demo 4/4: the conversation benchmark and the index")
        links += _conversation_bench(out, outputs, say, workers, verbose)
        index = report.render_index("memsim demo", links, findings=found_rows, workload=workload)
        outputs.write_text(out / "index.html", index)
        written = outputs.paths
    say()
    if verbose:
        for p in written:
            say(f"wrote {p}")
    else:
        say(
            f"wrote {len(written)} files under {out} (memsim demo --verbose also prints every scenario's "
            "summary, the claims table, the benchmark tables and each file)"
        )
    say(f"report: {out / 'index.html'}")  # last: the page that links the others
    return all(r.as_expected for r in rows)


def _headline_line(h: Any) -> str:
    claims = "no claims"
    where = "upstream's design" if h.upstream else "the design as written"
    if h.reference:
        where = "the reference design (a documented algorithm)"
    if h.claims and h.as_expected:
        cf = sum(1 for m in h.modes if m[3])
        also = f" ({cf} more on counterfactual designs)" if cf else ""
        claims = f"{h.reproduced} of {h.claims} failure modes reproduced on {where}{also}, every fix held"
    elif h.claims:
        verdicts = ", ".join(f"{ok}/{total} {what}" for what, ok, total in h.verdicts if total)
        claims = f"{h.claims} claims NOT all as expected ({verdicts})"
    line = f"{h.design}: {claims}"
    if h.recall is not None:
        line += f"; recall {h.recall_text()}"
    if h.tokens is not None:
        line += f"; {h.tokens:,.0f} tokens/request"
    if h.cost_run is not None:
        line += f"; ${h.cost_run:,.2f}/run"
    if h.hit_ratio is not None:
        line += f", cache hit ratio {h.hit_ratio:.3f}"
    return line
