"""The benchmark page (``sim.report.render_bench_rows`` / ``render_bench``) from a tiny real sweep."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from sim import bench, bench_outputs
from sim.bench.plots import colour
from sim.errors import UsageError
from sim.report import render_any, render_bench, render_bench_rows

DESIGNS = ["merchantbench", "nemsy", "oracle"]


@pytest.fixture(scope="module")
def sweep(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[dict[str, Any]], Path]:
    """Two designs and the oracle, two windows, two seeds, a short workload; outputs with the page."""
    rows = bench.run_sweep(bench.tasks_for(DESIGNS, [4000, 16000], 2, 24), progress=False)
    out = tmp_path_factory.mktemp("bench")
    bench_outputs.write_outputs(rows, out, html=True)
    return rows, out


def test_the_page_has_the_aggregate_with_spread_and_labelled_sums(
    sweep: tuple[list[dict[str, Any]], Path],
) -> None:
    """One aggregate row per design and window; sums are headed as sums; means show min–max."""
    page = (sweep[1] / "index.html").read_text()
    table = page[page.index('id="aggregate-tokens-table"') :].split("</table>")[0]

    assert table.count("<tr data-design=") == len(DESIGNS) * 2
    assert 'data-key="over_window_sum" title="requests over the provider window, summed over seeds">' in table
    assert ">over window (sum)<" in table
    assert 'data-key="requests_sum"' in table and ">requests (sum)<" in table
    assert '<span class="spread">' in table  # two seeds differ somewhere


def test_every_design_keeps_its_colour_in_the_pictures(sweep: tuple[list[dict[str, Any]], Path]) -> None:
    """The SVG series use ``sim.bench.plots.colour`` of each label, whatever else the sweep holds."""
    page = (sweep[1] / "index.html").read_text()
    for d in DESIGNS:
        assert f'<g class="series" data-design="{d}" stroke="{colour(d)}" fill="{colour(d)}">' in page
    assert page.count('<svg class="chart bench"') == 3


def test_the_plots_are_embedded(sweep: tuple[list[dict[str, Any]], Path]) -> None:
    """Each PNG the sweep wrote that no SVG chart repeats is inline as a data: URI (nothing to fetch)."""
    from sim.report.bench import SVG_TWINS

    pytest.importorskip("matplotlib")
    out = sweep[1]
    page = (out / "index.html").read_text()
    pngs = sorted(p.name for p in out.glob("*.png") if p.name not in SVG_TWINS)

    assert (
        pngs
        and re.findall(r'<img class="plot" src="data:image/png;base64,[A-Za-z0-9+/=]+" alt="([^"]+)">', page)
        == pngs
    )


def test_the_directory_gives_the_same_page(sweep: tuple[list[dict[str, Any]], Path]) -> None:
    """``memsim report DIR`` reads results.db and the PNGs back: the very page the sweep wrote."""
    out = sweep[1]
    assert render_bench(out) == render_any(out) == (out / "index.html").read_text()


def test_the_page_is_deterministic(sweep: tuple[list[dict[str, Any]], Path]) -> None:
    """The same rows give the same bytes."""
    rows, _ = sweep
    agg = bench.aggregate(rows)
    assert render_bench_rows(rows, agg, {}) == render_bench_rows(rows, agg, {})


def test_a_directory_without_results_is_a_one_line_error(tmp_path: Path) -> None:
    """An empty directory, or one whose results.db is not SQLite, is refused in one line."""
    with pytest.raises(UsageError, match="is not a bench output directory"):
        render_bench(tmp_path)
    (tmp_path / "results.db").write_text("not sqlite")
    with pytest.raises(UsageError, match="is not a memsim bench database"):
        render_bench(tmp_path)


def _rows(recalls: dict[str, list[float]], budget: int = 8000) -> list[dict[str, Any]]:
    """Synthetic cells: one per seed of each design, with the given recalls (the rest constant)."""
    out = []
    for d, values in recalls.items():
        for seed, r in enumerate(values, 1):
            out.append({
                "design": d, "budget": budget, "seed": seed, "requests": 10, "tokens_mean": 100.0 * seed,
                "tokens_p95": 150.0, "tokens_max": 200, "estimate_mean": None, "over_window": 0,
                "probes": 13, "recall": r, "recall_vs_oracle": r, "write_amplification": 1.0,
                "storage_ops": 5, "live": True,
            })  # fmt: skip
    return out


def test_two_seeds_are_too_few_to_conclude_and_say_so() -> None:
    """Nemsy at 0 and 0.538 over two seeds: no interval is claimed, the cell and the findings say why."""
    rows = _rows({"merchantbench": [0.2, 0.23], "nemsy": [0.0, 0.538], "oracle": [1.0, 1.0]})
    page = render_bench_rows(rows, bench.aggregate(rows), {})

    assert "2 seeds: too few to conclude" in page
    assert "95% CI" not in page.split('id="aggregate-recall"')[1].split("</table>")[0]


def test_enough_seeds_give_an_interval_and_mark_what_they_cannot_resolve() -> None:
    """Six seeds: recall shows a 95% bootstrap interval; a design whose difference from the window's best
    straddles 0 is marked unresolved, one far below is not; the oracle at 1.0 drops recall vs oracle."""
    rows = _rows({
        "merchantbench": [0.9, 0.8, 1.0, 0.85, 0.95, 0.9],
        "rsiagent": [0.85, 0.9, 0.95, 0.9, 0.8, 1.0],
        "nemsy": [0.1, 0.2, 0.0, 0.15, 0.1, 0.05],
        "oracle": [1.0] * 6,
    })  # fmt: skip
    page = render_bench_rows(rows, bench.aggregate(rows), {})
    recall = page.split('id="aggregate-recall-table"')[1].split("</table>")[0]

    assert recall.count("95% CI") == 3  # the oracle recalled every probe of every seed: no spread
    rsi = recall.split('data-design="rsiagent"')[1].split("</tr>")[0]
    nemsy = recall.split('data-design="nemsy"')[1].split("</tr>")[0]
    assert "≈ merchantbench (not resolved)" in rsi and "unresolved" in rsi
    assert "not resolved" not in nemsy
    assert 'data-key="recall_vs_oracle"' not in page and "equals recall and its column is left out" in page
    assert "the seeds cannot tell merchantbench apart from rsiagent" in page


def test_the_intervals_are_deterministic_and_seeded_from_the_sweep() -> None:
    """The same values and key give the same interval; another key (another sweep) resamples otherwise."""
    from sim.bench import stats

    values = [0.1, 0.5, 0.3, 0.9, 0.7, 0.2]
    a = stats.bootstrap(values, stats.key("recall", "nemsy", 8000, [1, 2, 3, 4, 5, 6]))
    b = stats.bootstrap(values, stats.key("recall", "nemsy", 8000, [1, 2, 3, 4, 5, 6]))
    c = stats.bootstrap(values, stats.key("recall", "nemsy", 8000, [7, 8, 9, 10, 11, 12]))
    assert a == b and a is not None and c is not None and a.enough
    assert a.lo < a.mean < a.hi and (a.lo, a.hi) != (c.lo, c.hi)
    few = stats.bootstrap(values[:2], "k")
    assert few is not None and not few.enough and not stats.Interval(0.5, 0.1, 0.9, 2).resolved


def test_series_labels_stay_inside_the_chart_and_apart() -> None:
    """Five labels wishing for the x axis (all at 0) are pushed up, kept apart, and none below it."""
    from sim.report.bench import label_positions

    ys = label_positions([220.0] * 5, 11.0, 20.0, 220.0)
    assert max(ys) <= 220.0 and min(ys) >= 20.0
    assert all(b - a >= 11.0 - 1e-9 for a, b in zip(sorted(ys), sorted(ys)[1:]))


def test_the_sections_render_in_order_with_their_nav() -> None:
    """Every section of ``SECTIONS`` has its heading and a nav link, in the list's order."""
    from sim.report.bench import SECTIONS

    rows = _rows({"merchantbench": [0.2, 0.3], "oracle": [1.0, 1.0]})
    page = render_bench_rows(rows, bench.aggregate(rows), {})
    at = [page.index(f'<h2 id="{s.id}">') for s in SECTIONS]
    assert at == sorted(at)
    assert all(f'<a href="#{s.id}">' in page for s in SECTIONS)


def test_the_terminal_tables_cut_nothing() -> None:
    """The console tables keep every range whole at the demo's width (they were cut to ``[6953.5–7110.…``)
    and their titles keep ``[min–max]`` (rich took it for markup); recall vs oracle goes when it would
    repeat recall."""
    from rich.console import Console

    rows = _rows({"merchantbench": [0.2, 0.23], "nemsy": [0.0, 0.538], "oracle": [1.0, 1.0]})
    for r in rows:
        r["tokens_mean"] = 6953.0 + 157.0 * r["seed"]
    console = Console(width=200, record=True)
    console.print(bench.render(bench.aggregate(rows)))
    text = console.export_text()

    assert "…" not in text and "[7,110–7,267]" in text and "[min–max]" in text
    assert "recall vs oracle" not in text.split("recall vs oracle is left out")[0]
    assert "2 seeds: too few to conclude" in text
