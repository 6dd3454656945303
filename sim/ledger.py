"""The claims ledger: every claim in its four directions, as one table, one JSON file and one Markdown page.

:func:`run_all` runs the selected claims (in *workers* processes, one claim per task; results do not
depend on the worker count) and returns one :class:`Row` per claim. A row is as expected when the
faithful and off directions found a counterexample and the fixed and combined directions held.
:func:`headline` counts counterexamples on upstream's designs separately from counterfactual designs.
The JSON file (``memsim claims --json``) is ``{"profile", "seed", "memsim_version", "claims": [row...]}``;
``docs/claims.md`` is :func:`markdown_table` of the ``ci`` run.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from sim import claims as cl
from sim import search
from sim.errors import UsageError

_EXHAUSTIVE_FIELDS = (
    "exhaustive", "scope", "cases", "total", "holds_all", "first_counterexample", "reductions", "hypothesis",
    "cpu_seconds",
)  # fmt: skip


@dataclass
class Direction:
    """One direction of one claim: whether it came out as expected, and what it found."""

    name: str
    ok: bool
    examples: int
    seconds: float
    example: Any = None  # the encoded counterexample (found by faithful/off, or the failing fixed example)
    summary: str = ""
    detail: str = ""
    # Exhaustive mode (``memsim claims --exhaustive``; :mod:`sim.exhaustive`): every case of the scope in
    # canonical order. ``cases`` were run (up to the first counterexample), ``total`` is the scope's size.
    exhaustive: bool = False
    scope: dict[str, Any] = field(default_factory=dict)  # bound, cases, domain, note
    cases: int = 0
    total: int = 0
    holds_all: bool | None = None
    first_counterexample: Any = None
    reductions: dict[str, int] = field(default_factory=dict)
    # faithful and off: Hypothesis' shrunk example beside the minimal one (example, summary, same, in_scope)
    hypothesis: dict[str, Any] | None = None
    cpu_seconds: float = 0.0  # the processor time of the cases (on a loaded machine, wall time is not)

    def bound(self) -> str:
        """The bound beside the verdict ("" when the direction was sampled)."""
        if not self.exhaustive:
            return ""
        s = self.scope
        return f"{s.get('cases')} cases: {s.get('domain')}" + (f" ({s['note']})" if s.get("note") else "")

    def text(self) -> str:
        """A one-line description for the table."""
        if self.exhaustive:
            return self._exhaustive_text()
        if cl.EXPECT_HOLDS[self.name]:
            return (
                f"held for {self.examples} examples" if self.ok else f"FAILED: {self.summary} ({self.detail})"
            )
        if self.ok:
            return f"counterexample after {self.examples} examples: {self.summary}"
        return f"NO COUNTEREXAMPLE in {self.examples} examples"

    def to_json(self) -> dict[str, Any]:
        """The direction's JSON (the exhaustive fields only in an exhaustive run)."""
        out = {k: v for k, v in asdict(self).items() if k != "name"}
        if not self.exhaustive:
            for k in _EXHAUSTIVE_FIELDS:
                out.pop(k)
        return out

    def _exhaustive_text(self) -> str:
        saved = sum(self.reductions.values())
        skipped = f", {saved} equivalent skipped" if saved else ""
        if self.holds_all and cl.EXPECT_HOLDS[self.name]:
            return f"holds for all {self.cases} cases within scope" + (
                f" ({saved} skipped as equivalent)" if saved else ""
            )
        if self.first_counterexample is None:
            return f"NO COUNTEREXAMPLE in all {self.cases} cases within scope" + (
                f" ({saved} skipped as equivalent)" if saved else ""
            )
        where = f"case {self.cases} of {self.total} in canonical order{skipped}"
        if cl.EXPECT_HOLDS[self.name]:
            return f"FAILED within scope at {where}: {self.summary} ({self.detail})"
        text = f"minimal counterexample within scope ({where}): {self.summary}"
        h = self.hypothesis or {}
        if h.get("same"):
            return text + "; Hypothesis shrank to the same"
        if h.get("summary"):
            where_h = "a larger one" if h.get("in_scope") else "one outside the scope"
            return text + f"; Hypothesis shrank to {where_h}: {h['summary']}"
        return text


@dataclass
class Row:
    """One claim of the ledger."""

    claim: str
    system: str
    records: list[str]
    statement: str
    fix: str
    fixes: list[str]
    off: list[str]
    counterfactual: bool
    intent: str
    seed: int
    seconds: float
    directions: dict[str, Direction] = field(default_factory=dict)
    real: str = ""  # how the faithful counterexample transfers to the design's real system, if declared

    def ok(self, direction: str) -> bool:
        d = self.directions.get(direction)
        return d is not None and d.ok

    @property
    def as_expected(self) -> bool:
        return all(self.ok(d) for d in cl.DIRECTIONS)

    def to_json(self) -> dict[str, Any]:
        """The JSON row: records as a list, ``<direction>_ok`` flags and each direction's example."""
        out: dict[str, Any] = {k: v for k, v in asdict(self).items() if k not in ("directions", "off")}
        out["off_switches"] = list(self.off)  # "off" is the off direction's result below
        for name in cl.DIRECTIONS:
            d = self.directions.get(name)
            out[f"{name}_ok"] = bool(d and d.ok)
            out[name] = None if d is None else d.to_json()
        out["as_expected"] = self.as_expected
        return out


def new_row(claim: cl.Claim, seed: int) -> Row:
    """*claim*'s row with no direction run yet."""
    row = Row(
        claim.id, claim.system, list(claim.records), claim.statement, claim.fix, list(claim.fixes),
        list(claim.off), claim.counterfactual, claim.intent, seed, 0.0,
    )  # fmt: skip
    from sim.registry import design

    d = design(claim.system)
    if d.real_system:
        note = d.transfer_note(claim.id)
        row.real = f"{d.real_system}: {note}" if note else f"{d.real_system}: not checked"
    return row


def run_claim(claim: cl.Claim, profile: str, seed: int) -> tuple[Row, dict[str, search.Outcome]]:
    """Run *claim* in each of its declared directions under *profile*."""
    t0 = time.perf_counter()
    row = new_row(claim, seed)
    outcomes: dict[str, search.Outcome] = {}
    holding = tuple(d for d in cl.DIRECTIONS if cl.EXPECT_HOLDS[d])
    for name in cl.DIRECTIONS:
        if name in holding:  # fixed and combined: one search checks both (search.check_holds_together)
            if name not in outcomes:
                outcomes.update(search.check_holds_together(claim, holding, profile, seed))
            o = outcomes[name]
        else:
            o = outcomes[name] = search.run_direction(claim, name, profile, seed)
        row.directions[name] = Direction(
            name, o.passed, o.examples, round(o.seconds, 3),
            claim.encode(o.example) if o.example is not None else None, o.summary, o.detail,
        )  # fmt: skip
    row.seconds = round(time.perf_counter() - t0, 3)
    return row, {d: outcomes[d] for d in cl.DIRECTIONS}


def _run_one(args: tuple[str, str, int]) -> tuple[Row, dict[str, search.Outcome]]:
    claim_id, profile, seed = args
    search.use_private_home()
    return run_claim(cl.get(claim_id), profile, seed)


def select(system: str | None = None, only: list[str] | None = None) -> list[cl.Claim]:
    """The claims of *system* (all designs if None), restricted to the ids in *only*."""
    selected = list(cl.registry(system).values())
    if only:
        known = {c.id for c in selected}
        for cid in only:
            if cid not in known:
                raise UsageError(f"unknown claim {cid!r} (see `memsim doc claims`)")
        selected = [c for c in selected if c.id in only]
    if not selected:
        raise UsageError("no claims registered" + (f" for {system}" if system else ""))
    return selected


def run_all(
    system: str | None = None,
    profile: str = "ci",
    only: list[str] | None = None,
    seed: int = 0,
    progress: bool = True,
    workers: int = 1,
    on_row: Callable[[Row], None] | None = None,
) -> list[tuple[Row, dict[str, search.Outcome]]]:
    """Run the selected claims (in *workers* processes) with a progress bar on stderr; in claim order."""
    from sim.progress import progress_bar

    search.check_profile(profile)
    selected = select(system, only)
    results: dict[str, tuple[Row, dict[str, search.Outcome]]] = {}
    if workers <= 1:
        with progress_bar("claims", len(selected), enabled=progress) as (bar, task):
            for c in selected:
                bar.update(task, description=f"claims: {c.id}")
                results[c.id] = run_claim(c, profile, seed)
                bar.advance(task)
        return [results[c.id] for c in selected]
    from sim.pool import ordered_pool

    # The workers are forks of this process, made before the progress bar's thread starts and after
    # what every task needs is loaded (the designs, their claims, Hypothesis): none repeats that start-up.
    search.use_private_home()
    # Longest first (the claims that declare it): two workers finish together.
    order = sorted(selected, key=lambda c: not c.slow)
    rows = ordered_pool(_run_one, [(c.id, profile, seed) for c in order], workers, fork=True)
    try:
        with progress_bar("claims", len(selected), enabled=progress) as (bar, task):
            for res in rows:
                results[res[0].claim] = res
                bar.advance(task)
    finally:
        rows.close()
    return [results[c.id] for c in selected]


def headline(rows: list[Row], profile: str, seed: int, exhaustive: str | None = None) -> str:
    """The ledger's summary line: upstream counterexamples counted apart from counterfactual designs."""
    own = [r for r in rows if not r.counterfactual and not has_upstream(r.system)]
    upstream = [r for r in rows if not r.counterfactual and r not in own]
    counter = [r for r in rows if r.counterfactual]
    n_up = sum(r.ok(cl.FAITHFUL) for r in upstream)
    n_cf = sum(r.ok(cl.FAITHFUL) for r in counter)
    parts = []
    if upstream or not own:
        parts.append(f"{n_up}/{len(upstream)} counterexamples found on upstream's designs")
    ref = [r for r in own if is_reference(r.system)]
    own = [r for r in own if r not in ref]
    if ref:  # a reference design models a documented algorithm, not one product's code (issue 39)
        n_ref = sum(r.ok(cl.FAITHFUL) for r in ref)
        parts.append(f"{n_ref}/{len(ref)} on the reference designs (documented algorithms)")
    if own:  # a design of one's own (``memsim new design``) models no upstream system
        n_own = sum(r.ok(cl.FAITHFUL) for r in own)
        parts.append(f"{n_own}/{len(own)} counterexamples found on the designs as written (no upstream)")
    parts[0] = f"{len(rows)} claim{'' if len(rows) == 1 else 's'}: {parts[0]}"
    if counter:
        parts.append(f"{n_cf}/{len(counter)} on counterfactual designs")
    fixed, off = sum(r.ok(cl.FIXED) for r in rows), sum(r.ok(cl.OFF) for r in rows)
    parts += [
        f"{fixed} fixed variant{'' if fixed == 1 else 's'} held",
        f"{off} off switch{'' if off == 1 else 'es'} rejected",
        f"{sum(r.ok(cl.COMBINED) for r in rows)} held with all of their design's fixes on",
    ]
    if exhaustive is not None:
        return "; ".join(parts) + f" (exhaustive within {exhaustive}; Hypothesis' {profile} search compared)"
    return "; ".join(parts) + f" ({profile} profile, seed {seed})"


def has_upstream(system: str) -> bool:
    """Whether *system* models an upstream system (its report names a source); a design made with
    ``memsim new design`` has none until its author says so. An uninstalled design counts as upstream."""
    from sim.errors import UsageError
    from sim.registry import REFERENCE, design

    try:
        d = design(system)
    except UsageError:
        return True
    if d.kind == REFERENCE:
        return False
    return bool(d.report.path or d.report.analysis_id or d.real_system)


def is_reference(system: str) -> bool:
    """Whether *system* is a reference design of a documented algorithm (``Design.kind``, issue 39)."""
    from sim.errors import UsageError
    from sim.registry import REFERENCE, design

    try:
        return design(system).kind == REFERENCE
    except UsageError:
        return False


def bound_of(row: Row) -> str:
    """The row's exhaustive bound ("" when it was sampled): the scope of its fixed direction."""
    d = row.directions.get(cl.FIXED)
    return d.bound() if d is not None else ""


def render_table(rows: list[Row]) -> Any:
    """A rich table of the ledger; counterexamples are printed literally (no markup)."""
    from rich.table import Table
    from rich.text import Text

    t = Table(title="memsim claims ledger", show_lines=False, expand=False)
    for col in ("claim", "records", "statement", "faithful (must fail)", "fixed (must hold)",
                "off (must fail)", "combined (must hold)", "seconds"):  # fmt: skip
        t.add_column(col, overflow="fold")
    for r in rows:
        cells: list[Any] = [Text(r.claim), Text(", ".join(r.records)), Text(r.statement)]
        for name in cl.DIRECTIONS:
            d = r.directions[name]
            cells.append(Text(d.text(), style="green" if d.ok else "red"))
        cells.append(Text(f"{r.seconds:.1f}"))
        t.add_row(*cells)
    return t


def markdown_table(
    rows: list[Row], *, profile: str = "ci", seed: int = 0, exhaustive: str | None = None
) -> str:
    """The ledger as a Markdown page (``docs/claims.md``)."""

    def esc(s: str) -> str:
        return s.replace("|", "\\|").replace("\n", " ")

    def cell(d: Direction) -> str:
        return f"{'✓' if d.ok else '✗'} {esc(d.text())}"

    real = any(r.real for r in rows)
    bound = exhaustive is not None
    command = f"--exhaustive{exhaustive_flag(exhaustive)}" if bound else f"--profile {profile} --seed {seed}"
    out = [
        "# Claims ledger",
        "",
        f"Generated by `memsim claims {command} --markdown FILE`; do not edit.",
        "",
        headline(rows, profile, seed, exhaustive) + ".",
        "",
        "| claim | records | statement |"
        + (" bound |" if bound else "")
        + " faithful | fixed | off | combined | s |"
        + (" real system |" if real else ""),
        "|---|---|---|" + ("---|" if bound else "") + "---|---|---|---|---|" + ("---|" if real else ""),
    ]
    for r in rows:
        statement = r.statement + (f" *Upstream intends this: {r.intent}*" if r.intent else "")
        if r.counterfactual:
            statement += " *(counterfactual design, not upstream's)*"
        out.append(
            f"| {esc(r.claim)} | {esc(', '.join(r.records))} | {esc(statement)} | "
            + (f"{esc(bound_of(r))} | " if bound else "")
            + " | ".join(cell(r.directions[n]) for n in cl.DIRECTIONS)
            + f" | {r.seconds:.1f} |"
            + (f" {esc(r.real) or '—'} |" if real else "")
        )
    return "\n".join(out) + "\n"


def exhaustive_flag(exhaustive: str | None) -> str:
    """`` --scope N`` for a bound of "scope N" ("" for the declared scopes)."""
    return f" --scope {exhaustive.split()[-1]}" if exhaustive and exhaustive.startswith("scope ") else ""


def to_json(rows: list[Row], *, profile: str, seed: int, exhaustive: str | None = None) -> dict[str, Any]:
    """The JSON document of a ledger run (with ``"exhaustive"``, the bound, when it enumerated scopes)."""
    from sim import __version__

    doc: dict[str, Any] = {"profile": profile, "seed": seed, "memsim_version": __version__}
    if exhaustive is not None:
        doc["exhaustive"] = exhaustive
    doc["claims"] = [r.to_json() for r in rows]
    return doc
