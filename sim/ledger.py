"""The claims ledger: run every registered claim both ways, print one table, save and replay examples."""

from __future__ import annotations

import json
import sqlite3
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from sim import claims as cl
from sim.errors import UsageError


@dataclass
class Row:
    """One line of the ledger."""

    claim: str
    system: str
    records: str
    statement: str
    fix: str
    faithful_ok: bool
    faithful: str
    fixed_ok: bool
    fixed: str
    seed: int
    seconds: float
    example: Any = None


def run_claim(claim: cl.Claim, profile: str, seed: int) -> tuple[Row, cl.Outcome, cl.Outcome]:
    """Run *claim* in both directions under *profile*."""
    t0 = time.perf_counter()
    faithful = cl.find_counterexample(claim, profile, seed)
    fixed = cl.check_fixed(claim, profile, seed)
    row = Row(
        claim.id,
        claim.system,
        ", ".join(claim.records),
        claim.statement,
        claim.fix,
        faithful.passed,
        (
            f"counterexample after {faithful.examples} examples: {faithful.summary}"
            if faithful.passed
            else f"NO COUNTEREXAMPLE in {faithful.examples} examples"
        ),
        fixed.passed,
        (
            f"held for {fixed.examples} examples"
            if fixed.passed
            else f"FAILED: {fixed.summary} ({fixed.detail})"
        ),
        seed,
        time.perf_counter() - t0,
        claim.encode(faithful.example) if faithful.passed else None,
    )
    return row, faithful, fixed


def run_all(
    system: str | None = None,
    profile: str = "ci",
    only: list[str] | None = None,
    seed: int = 0,
    progress: bool = True,
) -> list[tuple[Row, cl.Outcome, cl.Outcome]]:
    """Run the selected claims with a progress bar on stderr."""
    from sim.progress import progress_bar

    if profile not in cl.PROFILES:
        raise UsageError(f"unknown profile {profile!r}: expected one of {', '.join(cl.PROFILES)}")
    selected = list(cl.registry(system).values())
    if only:
        known = {c.id for c in selected}
        for cid in only:
            if cid not in known:
                raise UsageError(f"unknown claim {cid!r} (see `memsim doc claims`)")
        selected = [c for c in selected if c.id in only]
    if not selected:
        raise UsageError("no claims registered" + (f" for {system}" if system else ""))
    results = []
    with progress_bar("claims", len(selected), enabled=progress) as (bar, task):
        for c in selected:
            bar.update(task, description=f"claims: {c.id}")
            results.append(run_claim(c, profile, seed))
            bar.advance(task)
    return results


def render_table(rows: list[Row]) -> Any:
    """A rich table of the ledger."""
    from rich.table import Table

    t = Table(title="memsim claims ledger", show_lines=False, expand=False)
    for col in ("claim", "records", "statement", "faithful (must find)", "fixed (must hold)", "s"):
        t.add_column(col, overflow="fold")
    for r in rows:
        t.add_row(
            r.claim,
            r.records,
            r.statement,
            ("[green]" if r.faithful_ok else "[red]") + r.faithful,
            ("[green]" if r.fixed_ok else "[red]") + r.fixed,
            f"{r.seconds:.1f}",
        )
    return t


def markdown_table(rows: list[Row]) -> str:
    """The ledger as a Markdown table."""

    def esc(s: str) -> str:
        return s.replace("|", "\\|").replace("\n", " ")

    out = ["| claim | records | statement | faithful | fixed | s |", "|---|---|---|---|---|---|"]
    for r in rows:
        out.append(
            f"| {esc(r.claim)} | {esc(r.records)} | {esc(r.statement)} | "
            f"{'✓' if r.faithful_ok else '✗'} {esc(r.faithful)} | "
            f"{'✓' if r.fixed_ok else '✗'} {esc(r.fixed)} | {r.seconds:.1f} |"
        )
    return "\n".join(out) + "\n"


def run_cli(
    *,
    system: str | None,
    profile: str,
    only: list[str] | None,
    json_out: Path | None,
    markdown: Path | None,
    save: Path | None,
    seed: int,
) -> bool:
    """``memsim claims``: returns whether every claim passed both ways."""
    from rich.console import Console

    for p in (json_out, markdown):
        if p is not None and p.is_dir():
            raise UsageError(f"{p} is a directory")
    results = run_all(system, profile, only, seed)
    rows = [r for r, _, _ in results]
    Console(width=200).print(render_table(rows))
    ok = all(r.faithful_ok and r.fixed_ok for r in rows)
    n_f = sum(r.faithful_ok for r in rows)
    n_x = sum(r.fixed_ok for r in rows)
    print(
        f"{len(rows)} claims: {n_f} counterexamples found on the faithful designs, "
        f"{n_x} fixed variants held ({profile} profile, seed {seed})"
    )
    if json_out is not None:
        json_out.parent.mkdir(parents=True, exist_ok=True)
        json_out.write_text(json.dumps([asdict(r) for r in rows], indent=2, ensure_ascii=False, default=str))
    if markdown is not None:
        markdown.parent.mkdir(parents=True, exist_ok=True)
        markdown.write_text(markdown_table(rows))
    if save is not None:
        save.mkdir(parents=True, exist_ok=True)
        for row, faithful, _fixed in results:
            if faithful.passed:
                claim = cl.get(row.claim)
                (save / f"{row.claim}.json").write_text(cl.save_example(claim, faithful).dumps())
        sys.stderr.write(f"examples saved in {save}\n")
    return ok


def _is_sqlite(path: Path) -> bool:
    with open(path, "rb") as fh:
        return fh.read(16) == b"SQLite format 3\x00"


def replay_cli(path: Path, *, out: Path | None, variant: str | None) -> bool:
    """``memsim replay``: rerun a saved claim example, or a scenario from its trace database."""
    from sim.engine import Simulation

    if not path.is_file():
        raise UsageError(f"no such file: {path}")
    if _is_sqlite(path):
        return _replay_trace(path, out)
    claim, saved_variant, example = cl.load_example(path.read_text(encoding="utf-8"))
    v = variant or saved_variant
    if v not in cl.VARIANTS:
        raise UsageError(f"unknown variant {v!r}: expected faithful or fixed")
    trace_path = (out or path.parent) / f"{claim.id}.{v}.db"
    with Simulation(0, trace_path=trace_path) as sim:
        sim.trace.set_meta(claim=claim.id, variant=v)
        verdict = claim.run(example, v, sim)
    print(f"{claim.id} [{v}]: {'holds' if verdict.holds else 'VIOLATED'}: {verdict.detail}")
    print(f"example: {claim.summarize(example)}")
    sys.stderr.write(f"trace: {trace_path}\n")
    # A faithful counterexample replays as a violation; a fixed replay must hold.
    return (not verdict.holds) if v == cl.FAITHFUL else verdict.holds


def _replay_trace(path: Path, out: Path | None) -> bool:
    from sim import scenario as sc
    from sim.trace import read_trace

    try:
        data = read_trace(path)
    except sqlite3.DatabaseError as exc:
        raise UsageError(f"not a memsim trace database: {path}: {exc}") from exc
    meta = data.meta
    if "scenario" not in meta:
        raise UsageError(f"{path} is not a scenario trace (no scenario in its meta table)")
    target = (out or path.parent) / (path.stem + ".replay.db")
    if target.resolve() == path.resolve():
        raise UsageError("the replay would overwrite its source trace")
    lines = sc.execute(
        meta["scenario"],
        seed=int(meta["seed"]),
        faults=json.loads(meta.get("faults", "[]")),
        store=meta.get("store", "memory"),
        params=json.loads(meta.get("params", "{}")),
        trace_path=target,
    )
    for line in lines:
        print(line)
    same = read_trace(target) == data
    print(f"replay of {path.name}: {'identical trace' if same else 'TRACE DIFFERS'} ({target})")
    return same
