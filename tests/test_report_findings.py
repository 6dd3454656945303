"""What a reader sees on the report pages (issue 40): the index names every failure mode and what a run
costs, every page names its workload, and the claims, bench, conversation and run pages read as a
person needs them. Pages are rendered from small real runs; nothing here runs a claim search."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from sim import bench, ledger
from sim import claims as cl
from sim.cache import parse_provider
from sim.report import headlines, render_bench_rows, render_claims, render_index

DESIGN = "merchantbench"


def _doc(system: str = DESIGN, exhaustive: str | None = None) -> dict[str, Any]:
    """A ledger document of every claim of *system* as the registry declares it, each direction marked as
    expected without running it (the page's wording is under test, not the search)."""
    rows = []
    for c in cl.registry(system).values():
        row = ledger.new_row(c, 0)
        for d in cl.DIRECTIONS:
            row.directions[d] = ledger.Direction(d, True, 3, 0.01, summary="{}")
        rows.append(row)
    return ledger.to_json(rows, profile="quick", seed=0, exhaustive=exhaustive)


@pytest.fixture(scope="module")
def priced() -> list[dict[str, Any]]:
    """A tiny sweep priced with Anthropic's cache: one design and the oracle, two windows, two seeds."""
    tasks = bench.tasks_for([DESIGN, "oracle"], [4000, 16000], 2, 20, provider=parse_provider("anthropic"))
    return bench.run_sweep(tasks, progress=False)


def test_the_index_names_each_failure_mode_from_the_registry_and_what_a_run_costs(
    priced: list[dict[str, Any]],
) -> None:
    """Item 1: one sentence per claim (its statement's first sentence, from the registry), the reproduced
    count worded as a finding, $ per run and the cache hit ratio, scenario names broken only at "_"."""
    from sim.report.findings import first_sentence

    doc = _doc()
    found = headlines(doc, priced, 16000, {DESIGN: [("merchantbench_suffix_eviction", "traces/x.html")]})
    page = render_index("memsim demo", [], findings=found, workload="seeded synthetic workload")

    n = len(cl.registry(DESIGN))
    for c in cl.registry(DESIGN).values():
        sentence = first_sentence(c.statement)
        assert sentence and sentence.endswith((".", ")")) and "Property:" not in sentence
        assert f'data-claim="{c.id}"' in page
    modes = re.findall(r'<li class="[^"]*" data-claim="([^"]+)"><a href="claims.html#claim-\1"', page)
    assert len(modes) == n
    assert f"{n} of {n} failure modes reproduced on upstream&#39;s design" in page
    assert f"<b>{n}</b><span>failure modes reproduced on upstream&#39;s designs" in page
    assert "claims as expected in all four directions" not in page  # the old "all fine" tile
    h = found[0]
    assert h.cost_run is not None and h.hit_ratio is not None and h.provider.startswith("anthropic")
    assert f"${h.cost_run:.2f}</a>" in page and f"{h.hit_ratio:.3f}</a>" in page
    assert "output tokens are not counted" in page
    assert "merchantbench_<wbr>suffix_<wbr>eviction" in page
    assert "td.scenario { overflow-wrap: anywhere" not in page


def test_every_bench_page_and_summary_names_its_workload_and_steps_read_as_a_range() -> None:
    """Item 2: the workload in words (load steps, the calm tail, steps per cell as a range, not "a/b")."""
    from sim.bench.describe import describe, span, summary_lines

    assert span([132, 176, 220]) == "132–220" and span([70, 70]) == "70"
    rows = bench.run_sweep(bench.tasks_for(["oracle"], [4000], 2, 30), progress=False)
    text = describe(rows)
    assert (
        text
        == "seeded synthetic workload (seeds 0–1): 30 load steps + a 10-step calm tail (40 steps per cell)"
    )
    page = render_bench_rows(rows, bench.aggregate(rows), {})
    assert text in page and "the calm tail: short observations" in page
    assert not re.search(r"\d/\d+ steps", page)
    drawn = [dict(r, drawn=json.dumps({"steps": s, "calm_steps": s // 10})) for r, s in zip(rows, (120, 200))]
    assert "120–200 load steps (drawn per seed)" in describe(drawn)
    assert "132–220 steps per cell" in describe(drawn)
    assert summary_lines(bench.aggregate(rows))[-1].startswith("2 seeds: too few")


def test_the_claims_page_is_short_collapsible_and_states_each_claim() -> None:
    """Item 6: a statement column, a labelled seconds column, each claim's details behind <details>, and
    "exhaustive" after an exhaustive run."""
    from html import unescape

    from sim.report.findings import headline

    doc = _doc()
    page = render_claims(doc)
    verdicts = page.split('id="verdicts"')[1].split("</table>")[0]
    for c in cl.registry(DESIGN).values():
        row = unescape(verdicts.split(f'data-claim="{c.id}"')[1].split("</tr>")[0])
        lead = headline(c.statement)
        assert f'<td class="statement" title="{c.statement}">{lead}</td>' in row
        assert len(lead) >= 24 and c.statement.startswith(lead)
    assert ">seconds</th>" in verdicts and ">s</th>" not in verdicts
    sections = page.count('<section class="claim')
    assert sections == len(cl.registry(DESIGN)) == page.count("<details><summary><h3>")
    assert page.count('<details class="system-claims">') == 1  # every claim closed by default
    assert "profile · seed 0" in page and "exhaustive within" not in page
    exhaustive = render_claims(_doc(exhaustive="declared scopes"))
    assert "exhaustive within declared scopes" in exhaustive and "quick profile ·" not in exhaustive


def test_the_bench_page_shows_each_chart_once_says_what_is_unresolved_and_plots_recall_against_cost(
    priced: list[dict[str, Any]],
) -> None:
    """Item 7: the PNGs an SVG chart repeats are listed, not embedded; "the seeds cannot tell A apart from
    B"; a chart of recall against $ per run (tokens per request without a provider)."""
    png = b"\x89PNG\r\n\x1a\n" + b"0" * 64
    images = {"recall_vs_budget.png": png, "overflow_vs_budget.png": png, "tokens_over_time.png": png}
    page = render_bench_rows(priced, bench.aggregate(priced), images)
    assert re.findall(r'<img class="plot" src="data:image/png;base64,[^"]+" alt="([^"]+)">', page) == [
        "tokens_over_time.png"
    ]
    assert "<code>recall_vs_budget.png</code>" in page
    tradeoff = page.split('data-metric="recall-cost"')[1].split("</figure>")[0]
    assert "USD per run (list price)" in tradeoff and f'data-design="{DESIGN}"' in tradeoff
    assert 'data-design="oracle"' not in tradeoff
    plain = bench.run_sweep(bench.tasks_for([DESIGN, "oracle"], [4000], 1, 20), progress=False)
    page = render_bench_rows(plain, bench.aggregate(plain), {})
    assert "tokens per request (exact cl100k)" in page.split('data-metric="recall-cost"')[1]

    from tests.test_report_bench import _rows

    rows = _rows({
        "merchantbench": [0.9, 0.8, 1.0, 0.85, 0.95, 0.9],
        "rsiagent": [0.85, 0.9, 0.95, 0.9, 0.8, 1.0],
        "nemsy": [0.1, 0.2, 0.0, 0.15, 0.1, 0.05],
        "oracle": [1.0] * 6,
    })  # fmt: skip
    page = render_bench_rows(rows, bench.aggregate(rows), {})
    assert "the seeds cannot tell merchantbench apart from rsiagent" in page
    assert "not resolved from" not in page


def test_the_run_page_has_a_tile_per_variant(tmp_path: Path) -> None:
    """Item 8: a scenario running faithful and fixed side by side gets one needed-facts tile each."""
    from sim import scenario as sc
    from sim.report import render_run

    trace = tmp_path / "t.db"
    sc.execute("tracecraft_skewed_team", trace_path=trace)
    page = render_run(trace)
    tiles = re.findall(r"<b>([\d,]+/[\d,]+)</b><span>needed facts present at probes: (\w+)</span>", page)
    assert [v for _, v in tiles] == ["faithful", "fixed"]
    assert tiles[0][0] != tiles[1][0]  # the pooled tile would hide exactly this difference
    assert "<span>needed facts present at probes</span>" not in page


def test_the_conversation_page_reads_like_the_other_tables() -> None:
    """Item 5: per-type labels turned and carrying n, the question's text, distinct colours for a design
    and its variant, and the console table's numbers as the other tables write them."""
    from sim.bench.tasks import parse_designs
    from sim.conversations.example import EXAMPLE_SAMPLE
    from sim.conversations.metrics import aggregate
    from sim.conversations.run import run_conversations
    from sim.conversations.samples import sample_path
    from sim.conversations.table import fmt
    from sim.report.conversations import distinct_colours, render_conversations

    rows = run_conversations(
        parse_designs("nemsy,nemsy:fixed"), [1000], "longmemeval", str(sample_path(EXAMPLE_SAMPLE))
    )
    page = render_conversations(rows, aggregate(rows))
    labels = re.findall(
        r'<text class="type-label"[^>]*transform="rotate\((-?\d+) [^"]*">([^<]+)</text>', page
    )
    assert labels and all(int(a) < 0 for a, _ in labels)
    assert all(re.search(r" \(n=\d+\)$", t) for _, t in labels)
    questions = re.findall(r'<td class="question" title="[^"]*">([^<]*)</td>', page)
    ids = {r["question_id"] for r in rows}
    assert questions and not set(questions) & ids and all(len(q) <= 80 for q in questions)
    colours = distinct_colours(["nemsy", "nemsy:fixed", "oracle"])
    assert len(set(colours.values())) == 3
    assert f'data-design="nemsy:fixed" fill="{colours["nemsy:fixed"]}"' in page
    assert [fmt(v) for v in (8000, 0.3333, None, 12345.0)] == ["8,000", "0.333", "-", "12,345"]
