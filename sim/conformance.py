"""Design-level conformance: what memsim's own suite checks of every design, as functions a plugin's
tests call too (re-exported by :mod:`sim.testing`). Each returns the broken conventions, empty when the
design conforms::

    from sim.testing import check_design

    ROOT = Path(__file__).resolve().parents[1]  # the design's project root: pyproject.toml, tests/

    def test_conforms():
        assert check_design("toy", ROOT) == []

*root* is the design's project root, against which ``report.json``'s ``path`` and the coverage table's
test paths are written; without it those files are not read (an installed design need not ship them).
"""

from __future__ import annotations

import re
from pathlib import Path


def check_coverage(design: str, root: Path | None = None) -> list[str]:
    """Every record ID of the design's report is covered (model elements and tests, or a "Not modeled:"
    reason); with *root* (the design's project root, which its test paths are relative to), every
    test a coverage entry names exists there (file and function). Without *root* that second check is
    left to the design's own tests: an installed design need not ship its tests."""
    from sim.fidelity import coverage

    problems = [f"{rid}: not covered" for rid, cov in coverage(design) if cov is None or not cov.covered]
    if root is None:
        return problems
    for rid, cov in coverage(design):
        for node in cov.tests if cov else ():
            path, _, name = node.partition("::")
            func = name.split("::")[-1].split("[")[0]
            f = root / path
            if not f.is_file() or not re.search(rf"def {re.escape(func)}\b", f.read_text(encoding="utf-8")):
                problems.append(f"{rid}: the test {node} does not exist under {root}")
    return problems


def check_report(design: str, root: Path | None = None) -> list[str]:
    """``report.json`` is well formed: a title, record IDs of the form ``PREFIX-KIND-name`` without
    repeats, and, when its ``path`` names a file (relative to *root*, the design's project root; ``""``
    means the report is not shipped), exactly the record IDs that file cites. Without *root* the file
    is not read (an installed design need not ship its report)."""
    from sim.registry import design as lookup

    report = lookup(design).report
    problems = [] if report.title.strip() else ["report.json has no title"]
    ids = list(report.record_ids)
    problems += [f"record ID {rid!r} is not PREFIX-KIND-name" for rid in ids if not RECORD_ID.fullmatch(rid)]
    if len(set(ids)) != len(ids):
        problems.append("report.json lists a record ID twice")
    if root is None or not report.path:
        return problems
    f = root / report.path
    if not f.is_file():
        return [*problems, f"report.json's path {report.path!r} is not a file under {root}"]
    prefixes = "|".join(sorted({re.escape(rid.split("-", 1)[0]) for rid in ids})) or "(?!)"
    text = f.read_text(encoding="utf-8")
    cited = sorted({i.rstrip("-") for i in re.findall(rf"\b(?:{prefixes})-[A-Z]{{3}}-[a-z0-9-]+", text)})
    if cited != sorted(ids):
        missing, extra = sorted(set(cited) - set(ids)), sorted(set(ids) - set(cited))
        problems.append(f"record IDs differ from {report.path}: not declared {missing}, not cited {extra}")
    return problems


#: A report record ID: a prefix naming the design or its report, a kind, a lower-case name.
RECORD_ID = re.compile(r"[A-Z][A-Z0-9]{0,15}-[A-Z]{3}-[a-z0-9]+(?:-[a-z0-9]+)*")


def check_scenario(name: str, store: str | None = None) -> list[str]:
    """The registered scenario *name* has a committed ``.out`` beside its module and its default run
    (on *store*) prints exactly that (SimPy's docs idea: the scenario's output is its golden file)."""
    from sim.scenario_core import execute, get

    sc = get(name)
    if not sc.expected_path.is_file():
        return [f"{name}: no committed {sc.expected_path.name} beside {sc.expected_path.parent}"]
    expected = sc.expected_path.read_text(encoding="utf-8")
    actual = "\n".join(execute(sc.name, store=store)) + "\n"
    if actual != expected:
        return [f"{name} ({store or 'memory'}): the output differs from {sc.expected_path.name}"]
    return []


def check_scenarios(design: str) -> list[str]:
    """:func:`check_scenario` for every registered scenario of *design*, on each store it lists."""
    from sim.scenario_core import scenarios

    problems: list[str] = []
    for sc in scenarios().values():
        if sc.system == design:
            for store in sc.stores or (None,):
                problems += check_scenario(sc.name, store)
    return problems


def check_colour(design: str) -> list[str]:
    """The design's colour (declared or fallback) is ``#rrggbb`` and no other installed design's."""
    from sim.registry import ORACLE_COLOUR, colours

    mine = colours()[design]
    if not re.fullmatch(r"#[0-9A-Fa-f]{6}", mine):
        return [f"colour {mine!r} is not #rrggbb"]
    same = [n for n, c in colours().items() if n != design and c.lower() == mine.lower()]
    same += ["oracle"] if mine.lower() == ORACLE_COLOUR.lower() else []
    return [f"colour {mine} is also {', '.join(same)}'s"] if same else []


def check_bench(design: str, *, budget: int = 6000, steps: int = 20) -> list[str]:
    """A small benchmark of the design, its all-fixes variant and the oracle labels its rows
    ``NAME``, ``NAME:fixed`` and ``oracle``, sends one request per step, keeps its metrics in range,
    and gives the same rows twice."""
    from sim.bench import run_sweep, tasks_for
    from sim.bench.tasks import parse_designs

    labels = [design, f"{design}:fixed", "oracle"]
    tasks = tasks_for(parse_designs(",".join(labels)), [budget], 1, steps)
    first, second = (run_sweep(tasks, progress=False) for _ in range(2))
    problems = []
    if sorted(str(r["design"]) for r in first) != sorted(labels):
        problems.append(f"rows are labelled {[r['design'] for r in first]}, not {labels}")
    strip = [[{k: v for k, v in r.items() if k != "seconds"} for r in rows] for rows in (first, second)]
    if strip[0] != strip[1]:
        problems.append("the same seed gave different rows")
    for r in first:
        if r["requests"] != r["steps"]:
            problems.append(f"{r['design']}: {r['requests']} requests for {r['steps']} steps")
        if r["recall"] is not None and not 0.0 <= r["recall"] <= 1.0:
            problems.append(f"{r['design']}: recall {r['recall']} outside [0, 1]")
    return problems


def check_claims(design: str, profile: str = "ci") -> list[str]:
    """Every claim of the design passes all four directions (faithful and off find a counterexample,
    fixed and combined hold) under *profile*."""
    from sim import claims as cl
    from sim import search

    problems = []
    for claim in cl.registry(design).values():
        for direction in cl.DIRECTIONS:
            o = search.run_direction(claim, direction, profile)
            if o.passed:
                continue
            if cl.EXPECT_HOLDS[direction]:  # a fix that fails: the example it fails on, and why
                why = f"fails on {o.summary}" + (f" ({o.detail})" if o.detail else "")
            else:
                why = f"found no counterexample in {o.examples} examples"
            problems.append(f"{claim.id}: the {direction} direction is not as expected: it {why}")
    return problems
