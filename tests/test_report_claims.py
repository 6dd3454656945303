"""The claims page (``sim.report.render_claims``): a real one-claim ledger and hand-written edge cases."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from sim import ledger
from sim.errors import UsageError
from sim.report import render_any, render_claims

CLAIM = "merchantbench.suffix-eviction"


@pytest.fixture(scope="module")
def doc() -> dict[str, Any]:
    """A real ledger of one claim, every declared direction run in the quick profile."""
    rows = [r for r, _ in ledger.run_all(profile="quick", only=[CLAIM], progress=False)]
    return ledger.to_json(rows, profile="quick", seed=0)


def test_a_real_ledger_shows_verdicts_counterexample_records_and_replay(doc: dict[str, Any]) -> None:
    """The verdict row, the literal counterexample, the record links to their coverage rows, the replay."""
    page = render_claims(doc)
    row = doc["claims"][0]

    assert f'<tr class="claim-row" data-claim="{CLAIM}">' in page
    assert '<td class="v ok" title="counterexample after' in page  # faithful found one
    summary = row["faithful"]["summary"].replace('"', "&#34;")
    assert f'<pre class="example">{summary}</pre>' in page
    for rid in row["records"]:
        assert f'href="#rec-merchantbench-{rid}"' in page
        assert f'id="rec-merchantbench-{rid}"' in page
    assert f"memsim replay DIR/{CLAIM}.json</code>" in page
    assert "memsim claims --profile quick --seed 0 --save DIR" in page
    assert "<b>1/1</b><span>counterexamples on upstream&#39;s designs</span>" in page


def test_the_page_is_deterministic(doc: dict[str, Any]) -> None:
    """The same ledger gives the same bytes (nothing from the clock)."""
    assert render_claims(copy.deepcopy(doc)) == render_claims(doc)


def test_a_wrong_verdict_is_the_headline_and_text_is_escaped(doc: dict[str, Any]) -> None:
    """A fixed direction that failed is named first; a counterexample holding markup is printed as text."""
    bad = copy.deepcopy(doc)
    row = bad["claims"][0]
    row["fixed"].update(ok=False, summary="</pre><script>alert(1)</script>", detail="lost <b>FACT-0001</b>")
    row["fixed_ok"] = False

    page = render_claims(bad)

    assert f'<li class="bad">Not as expected: <a href="#claim-{CLAIM}">{CLAIM}</a>.</li>' in page
    assert "<script>alert(1)</script>" not in page
    assert "&lt;/pre&gt;&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "lost &lt;b&gt;FACT-0001&lt;/b&gt;" in page
    assert '<td class="v bad" title="FAILED after' in page


def test_an_uninstalled_design_and_an_unknown_record_are_shown_without_links() -> None:
    """A ledger from elsewhere: its design's coverage is absent and its records are plain text."""
    row = {
        "claim": "toy.thing", "system": "toy", "records": ["MEM-X"], "statement": "s", "fix": "f",
        "fixes": ["f"], "counterfactual": False, "intent": "", "seconds": 0.1,
        "faithful": {"ok": True, "examples": 3, "seconds": 0.1, "example": [1], "summary": "[1]",
                     "detail": "d", "declared": True},
        "fixed": {"ok": True, "examples": 9, "seconds": 0.1, "example": None, "summary": "", "detail": "",
                  "declared": True},
        "off": None, "combined": None,
    }  # fmt: skip
    page = render_claims({"profile": "ci", "seed": 3, "memsim_version": "9", "claims": [row]})

    assert "The design toy is not installed here" in page
    assert "MEM-X (not in the report)" in page and 'href="#rec-toy-MEM-X"' not in page
    assert "memsim replay DIR/toy.thing.json --variant fixed" in page


def test_render_any_reads_a_ledger_file(doc: dict[str, Any], tmp_path: Path) -> None:
    """``memsim report CLAIMS.json`` gives the same page; JSON that is no ledger is a one-line error."""
    path = tmp_path / "claims.json"
    path.write_text(json.dumps(doc, indent=2, ensure_ascii=False, default=str))
    assert render_any(path) == render_claims(doc)
    (tmp_path / "list.json").write_text("[1, 2]")
    with pytest.raises(UsageError, match="is not a claims ledger"):
        render_any(tmp_path / "list.json")
