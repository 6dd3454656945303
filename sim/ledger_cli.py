"""``memsim claims``: validate the options and outputs first, run the ledger (sampled or exhaustive), then
write its files together and print its table (sim.cli keeps the options and the exit code)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import typer

from sim.errors import UsageError


def run_claims(
    *,
    system: str | None,
    profile: str,
    claim: list[str] | None,
    json_out: Path | None,
    markdown: Path | None,
    save: Path | None,
    html: Path | None,
    seed: int,
    workers: int,
    exhaustive: bool,
    scope: str | None,
    resume: Path | None,
    executor: str,
    progress: bool,
) -> bool:
    """``memsim claims``; returns whether every verdict came out as expected."""
    from sim import claims as cl
    from sim import ledger, search
    from sim.console import outputs_written, report_console
    from sim.outputs import Outputs

    search.check_profile(profile)
    if not exhaustive:
        for value, flag in (
            (scope, "--scope"),
            (resume, "--resume"),
            (executor != "local" or None, "--executor"),
        ):
            if value is not None:
                raise UsageError(f"{flag} needs --exhaustive")
    outputs = Outputs()
    for p, what in ((json_out, "--json"), (markdown, "--markdown"), (html, "--html")):
        if p is not None:
            outputs.file(p, what)
    if save is not None:
        outputs.dir(save, "--save")
    limit = parse_scope(scope)
    selected = ledger.select(system, claim)  # validate before the long run
    bound = None
    if exhaustive:
        from sim.exhaustive.run import run_ledger

        bound = "declared scopes" if scope is None else f"scope {limit}"
        rows = run_ledger(
            selected, limit, workers=workers, executor=executor, resume=resume, profile=profile, seed=seed,
            progress=progress,
        )  # fmt: skip
        results = [(r, _exhaustive_outcomes(r)) for r in rows]
    else:
        results = ledger.run_all(
            system, profile, [c.id for c in selected], seed, progress=progress, workers=workers
        )
        rows = [r for r, _ in results]
    with outputs.transaction():
        doc = ledger.to_json(rows, profile=profile, seed=seed, exhaustive=bound)
        if json_out is not None:
            outputs.write_text(json_out, json.dumps(doc, indent=2, ensure_ascii=False, default=str) + "\n")
        if markdown is not None:
            outputs.write_text(
                markdown, ledger.markdown_table(rows, profile=profile, seed=seed, exhaustive=bound)
            )
        if html is not None:
            from sim.report import render_claims

            outputs.write_text(html, render_claims(doc))
        saved = 0
        if save is not None:
            for row, outcomes in results:
                c = cl.get(row.claim)
                for direction in (cl.FAITHFUL, cl.OFF):
                    o = outcomes.get(direction)
                    if o is not None and o.passed:
                        name = row.claim if direction == cl.FAITHFUL else f"{row.claim}.{direction}"
                        outputs.write_text(
                            save / f"{name}.json", cl.save_example(c, o, direction).dumps() + "\n"
                        )
                        saved += 1
    head = ledger.headline(rows, profile, seed, bound)
    typer.echo(head)  # the summary first: a CI log shows it before the long table
    report_console(220).print(ledger.render_table(rows))
    typer.echo(head)
    for p in outputs_written(json_out, markdown, html):
        sys.stderr.write(f"wrote {p}\n")
    if save is not None:
        sys.stderr.write(f"{saved} example(s) saved in {save}\n" if saved else "no counterexample to save\n")
    return all(r.as_expected for r in rows)


def parse_scope(scope: str | None) -> int | str | None:
    """``--scope``: None, a sequence bound from 1 to 12, or ``deep`` (each claim's bounds doubled)."""
    from sim.exhaustive.scope import DEEP

    if scope is None or scope == DEEP:
        return scope
    if scope.isdigit() and 1 <= int(scope) <= 12:
        return int(scope)
    raise UsageError(f"--scope must be a number from 1 to 12 or {DEEP!r}, not {scope!r}")


def _exhaustive_outcomes(row: Any) -> dict[str, Any]:
    """An exhaustive row's minimal counterexamples as outcomes, for ``--save``."""
    from sim import claims as cl
    from sim import search

    c = cl.get(row.claim)
    out = {}
    for name, d in row.directions.items():
        if d.first_counterexample is not None and not cl.EXPECT_HOLDS[name]:
            out[name] = search.Outcome(
                row.claim, name, d.ok, d.examples, d.seconds, row.seed, c.decode(d.first_counterexample),
                d.summary, d.detail,
            )  # fmt: skip
    return out
