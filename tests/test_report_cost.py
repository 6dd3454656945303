"""The cost section of the report pages (``sim.report.cost``): present exactly when a provider priced the
results, with the cost charts and columns on the benchmark page and the per-request stack on a run page."""

from __future__ import annotations

import re
from pathlib import Path

from sim.bench.metrics import add_relative_recall, aggregate
from sim.bench.tasks import run_task, tasks_for
from sim.cache import parse_provider
from sim.report import render_bench_rows
from sim.report.cost import BANDS, run_stack
from sim.report.run import render_run


def _rows(provider: str | None) -> list[dict]:
    cfg = parse_provider(provider) if provider else None
    rows = [run_task(t) for t in tasks_for(["merchantbench"], [4000, 12000], 1, 16, provider=cfg)]
    add_relative_recall(rows)
    return rows


def test_bench_page_shows_cost_columns_and_charts_only_with_a_provider() -> None:
    priced = _rows("anthropic")
    page = render_bench_rows(priced, aggregate(priced), {})
    assert 'data-metric="cost_usd_run"' in page and 'data-metric="cache_hit_ratio"' in page
    assert 'data-key="cost_usd_p95"' in page and "claude-opus-4-8" in page
    plain = _rows(None)
    page = render_bench_rows(plain, aggregate(plain), {})
    assert "cost_usd" not in page and "cache_hit_ratio" not in page


def test_run_page_stacks_each_requests_cache_split(tmp_path: Path) -> None:
    """The stack's totals are the trace's sums, the three bands sum to the prompt tokens, and a trace
    recorded without a provider has no cost section."""
    cfg = parse_provider("openai")
    task = tasks_for(["merchantbench"], [6000], 1, 30, provider=cfg)[0]
    row = run_task(task, trace_path=str(tmp_path / "p.db"))
    stack = run_stack(tmp_path / "p.db")
    assert stack is not None and stack["requests"] == row["requests"]
    totals = {label: n for label, _c, n in stack["totals"]}
    assert totals["cache read"] == row["cache_read_tokens"] and totals["uncached"] == row["uncached_tokens"]
    assert sum(totals.values()) == sum(s[1] for s in row["series"])
    assert [label for _k, label, _c in BANDS] == ["cache read", "cache write", "uncached"]
    page = render_run(tmp_path / "p.db")
    assert 'id="cost-stack"' in page and re.search(r"request \(run order\)", page)
    run_task(tasks_for(["merchantbench"], [6000], 1, 12)[0], trace_path=str(tmp_path / "n.db"))
    assert run_stack(tmp_path / "n.db") is None and 'id="cost-stack"' not in render_run(tmp_path / "n.db")
