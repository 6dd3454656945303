"""The demo's index page: the findings per design first, each linking to its evidence, then every page.

Per design: how its claims came out in the four directions (counterexamples found on upstream's design,
fixes held, off switches rejected, all fixes held together), its probe recall and tokens per request at
one window of the benchmark (with the bootstrap interval over seeds, or a word that the seeds are too few),
and its scenario's run page. :func:`headlines` computes them (the demo prints the same numbers);
:func:`render_index` draws the page.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sim.bench import stats

#: The claims page's per-design anchor (the verdict matrix's design row).
CLAIMS_ANCHOR = "system-{}"
#: The four directions as the index counts them: (ledger key, what a success is called).
DIRECTIONS = (
    ("faithful_ok", "counterexamples found"),
    ("fixed_ok", "fixes held"),
    ("off_ok", "off switches rejected"),
    ("combined_ok", "held with all fixes"),
)


@dataclass(frozen=True)
class Headline:
    """One design's findings on the index page."""

    design: str
    title: str
    colour: str
    claims: int = 0
    expected: int = 0  # claims whose every direction came out as expected
    verdicts: tuple[tuple[str, int, int], ...] = ()  # (what, as expected, declared)
    as_expected: bool = True
    window: int | None = None
    recall: stats.Interval | None = None
    tokens: float | None = None
    over_window: int | None = None
    live: bool | None = None
    runs: tuple[tuple[str, str], ...] = field(default_factory=tuple)  # (scenario, href)
    # sim.report.findings.enrich: (claim, statement, reproduced, counterfactual) per claim; the count of
    # failure modes reproduced on upstream's design; the mean $ per run and cache hit ratio at the window.
    modes: tuple[tuple[str, str, bool, bool], ...] = ()
    reproduced: int = 0
    upstream: bool = True
    reference: bool = False  # a reference design of a documented algorithm (issue 39)
    cost_run: float | None = None
    hit_ratio: float | None = None
    provider: str = ""

    def recall_note(self) -> str:
        """What the recall rests on: ``95% CI 0.12–0.41, 5 seeds`` or ``2 seeds: too few to conclude``."""
        ci = self.recall
        if ci is None:
            return ""
        if ci.n < 2 or ci.lo == ci.hi:
            return f"{ci.n} seed{'s' if ci.n != 1 else ''}" + (", all equal" if ci.n > 1 else "")
        if ci.enough:
            return f"{stats.LEVEL:.0%} CI {ci.lo:.3f}–{ci.hi:.3f}, {ci.n} seeds"
        return f"{ci.n} seeds: too few to conclude"

    def recall_text(self) -> str:
        """``0.269 (95% CI 0.12–0.41, 5 seeds)`` or ``0.269 (2 seeds: too few to conclude)``."""
        return "—" if self.recall is None else f"{self.recall.mean:.3f} ({self.recall_note()})"


def headlines(
    claims: dict[str, Any] | None,
    bench_rows: list[dict[str, Any]] | None,
    window: int | None,
    runs: dict[str, list[tuple[str, str]]] | None = None,
) -> list[Headline]:
    """Per design (the registry's order, then any other): its claim verdicts from the ledger JSON
    *claims*, its recall and tokens at *window* from the sweep's *bench_rows* (base designs only, not
    variants), and its scenarios' pages *runs* (design → [(scenario, href)])."""
    from sim.bench.plots import colour
    from sim.registry import designs

    found = designs()
    rows = list((claims or {}).get("claims") or [])
    cells = [r for r in bench_rows or [] if window is not None and int(r["budget"]) == window]
    names = list(found)
    for n in [str(r.get("system")) for r in rows] + [str(r["design"]) for r in cells] + list(runs or {}):
        if n not in names and n != "oracle" and ":" not in n:
            names.append(n)
    out = []
    for name in names:
        mine = [r for r in rows if r.get("system") == name]
        verdicts = tuple(
            (what, sum(r.get(key) is True for r in mine), sum(r.get(key) is not None for r in mine))
            for key, what in DIRECTIONS
        )
        at = [r for r in cells if r["design"] == name]
        by_seed = {int(r["seed"]): float(r["recall"]) for r in at if r.get("recall") is not None}
        recall = stats.bootstrap(
            [by_seed[s] for s in sorted(by_seed)], stats.key("recall", name, window or 0, list(by_seed))
        )
        tokens = [float(r["tokens_mean"]) for r in at if r.get("tokens_mean") is not None]
        if not mine and not at and not (runs or {}).get(name):
            continue
        out.append(
            Headline(
                design=name,
                title=found[name].title if name in found else name,
                colour=colour(name),
                claims=len(mine),
                verdicts=verdicts,
                expected=sum(bool(r.get("as_expected", True)) for r in mine),
                as_expected=all(r.get("as_expected", True) for r in mine),
                window=window if at else None,
                recall=recall,
                tokens=sum(tokens) / len(tokens) if tokens else None,
                over_window=sum(int(r.get("over_window") or 0) for r in at) if at else None,
                live=all(bool(r.get("live")) for r in at) if at else None,
                runs=tuple((runs or {}).get(name, [])),
            )
        )
    from sim.report.findings import enrich

    return enrich(out, claims, bench_rows, window)


def render_index(
    title: str,
    entries: list[tuple[str, str, str]],
    *,
    findings: list[Headline] | None = None,
    claims_href: str = "claims.html",
    bench_href: str = "bench/index.html",
    note: str = "",
    workload: str = "",
) -> str:
    """An index page: the *findings* per design (:func:`headlines`; none: only the links), then a table
    linking *entries* (``(label, relative href, description)``; reST literals in a description show as
    code). *claims_href* and *bench_href* are where the findings link their evidence; *workload* names the
    benchmark's workload (:func:`sim.bench.describe.describe`)."""
    from sim import __version__
    from sim.report.findings import first_sentence
    from sim.report.templating import render

    window = next((h.window for h in findings or [] if h.window is not None), None)
    seeds = max((h.recall.n for h in findings or [] if h.recall is not None), default=0)
    tiles: list[tuple[str, ...]] = []
    if findings:
        from sim.report.findings import reproduced_tile

        n = sum(h.claims for h in findings)
        good = sum(h.expected for h in findings)
        first = reproduced_tile(findings)
        if first is not None:
            tiles.append(first)
        if n and good != n:
            tiles.append((f"{n - good}", "claims NOT as expected (see the claims ledger)", "bad"))
        tiles.append((str(len(findings)), "designs"))
        scored = [h for h in findings if h.recall is not None]
        if scored and window is not None:
            lo = min(scored, key=lambda h: h.recall.mean if h.recall else 0.0)
            hi = max(scored, key=lambda h: h.recall.mean if h.recall else 0.0)
            for h, what in ((hi, "highest"), (lo, "lowest")):
                if h.recall is not None:
                    tiles.append((f"{h.recall.mean:.3f}", f"{what} probe recall at {window:,} ({h.design})"))
    return render(
        "index.html.j2",
        title=title,
        entries=entries,
        findings=findings or [],
        window=window,
        seeds=seeds,
        min_seeds=stats.MIN_SEEDS,
        claims_href=claims_href,
        claims_anchor=CLAIMS_ANCHOR,
        bench_href=bench_href,
        note=note,
        tiles=tiles,
        version=__version__,
        workload=workload,
        priced=next((h.provider for h in findings or [] if h.provider), ""),
        first_sentence=first_sentence,
    )
