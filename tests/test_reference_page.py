"""The side-by-side page's generator (dev/reference_page.py, issue 39): every installed design and the
baselines appear, labelled by kind, and any retrieval column a design's aggregate carries is shown."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from sim.registry import designs

ROOT = Path(__file__).resolve().parent.parent


def _page():
    spec = importlib.util.spec_from_file_location("reference_page", ROOT / "dev" / "reference_page.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_every_installed_design_and_baseline_is_on_the_page():
    from sim.conversations.samples import sample_path

    page = _page()
    n, agg = page.run("longmemeval", str(sample_path("longmemeval_s_sample.json")), (8000,))
    text = page.section("sample", n, agg)
    shown = {line.split(" | ")[0].strip("|* ") for line in text.splitlines() if line.startswith("| ")}
    assert set(designs()) | {"oracle", "oracle-sessions", "full"} <= shown
    assert "| **window** | reference |" in text
    assert "| nemsy | seed |" in text and "| full | baseline |" in text


def test_a_retrieval_column_in_the_aggregate_gets_a_column():
    """A metric another design reports (recall_any@5, say) is picked up without naming it."""
    page = _page()
    base = {
        "design": "window", "budget": 8000, "question_type": "all", "questions": 2,
        "evidence_recall_turn": 0.5, "evidence_recall_session": 1.0, "answer_recall": None,
        "request_tokens_mean": 1000.0, "request_tokens_max": 1200, "over_window_sum": 0, "lost_turns": 1,
    }  # fmt: skip
    agg = [{**base, "recall_any@5": 0.75}, {**base, "design": "oracle", "recall_any@5": None}]
    text = page.table(agg)
    head = text.splitlines()[0]
    assert page.metric_columns(agg) == ["recall_any@5"]
    assert "recall_any@5" in head and "0.750" in text
    assert "0.0050" in text  # 1,000 tokens at $5 per million
