"""The benchmark page (``sim.report.render_bench_rows`` / ``render_bench``) from a tiny real sweep."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from sim import bench
from sim.bench.plots import colour
from sim.errors import UsageError
from sim.report import render_any, render_bench, render_bench_rows

DESIGNS = ["merchantbench", "nemsy", "oracle"]


@pytest.fixture(scope="module")
def sweep(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[dict[str, Any]], Path]:
    """Two designs and the oracle, two windows, two seeds, a short workload; outputs with the page."""
    rows = bench.run_sweep(bench.tasks_for(DESIGNS, [4000, 16000], 2, 24), progress=False)
    out = tmp_path_factory.mktemp("bench")
    bench.write_outputs(rows, out, html=True)
    return rows, out


def test_the_page_has_the_aggregate_with_spread_and_labelled_sums(
    sweep: tuple[list[dict[str, Any]], Path],
) -> None:
    """One aggregate row per design and window; sums are headed as sums; means show min–max."""
    page = (sweep[1] / "index.html").read_text()
    table = page[page.index('id="aggregate-table"') :].split("</table>")[0]

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
    """Each PNG the sweep wrote is inline as a data: URI (nothing to fetch)."""
    pytest.importorskip("matplotlib")
    out = sweep[1]
    page = (out / "index.html").read_text()
    pngs = sorted(p.name for p in out.glob("*.png"))

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
