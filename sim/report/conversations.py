"""The report page of a conversation sweep (issue 28): recall by question type per design, recall
against the window, and a per-question drill-down listing each lost evidence turn with its reason.
Self-contained (inline CSS and SVG, no script or network), every value escaped by the template."""

from __future__ import annotations

import json
from typing import Any

from sim.conversations.metrics import RECALLS, reasons
from sim.report.templating import render

#: The most question rows the drill-down lists (the page stays small; questions.csv has them all).
MAX_DRILL_ROWS = 2_000


def render_conversations(rows: list[dict[str, Any]], agg: list[dict[str, Any]], *, title: str = "") -> str:
    """The page of a conversation sweep's question *rows* and their aggregate *agg*."""
    from sim import __version__
    from sim.bench.plots import colour
    from sim.report.bench import _chart

    designs = list(dict.fromkeys(str(r["design"]) for r in rows))
    budgets = sorted({int(r["budget"]) for r in rows})
    overall = [a for a in agg if a["question_type"] == "all"]
    types = sorted({str(a["question_type"]) for a in agg if a["question_type"] != "all"})
    charts = [
        _chart(
            overall, designs, "evidence_recall_turn", "turn-level evidence recall (mean over questions)", 1.0
        ),
        _chart(
            overall,
            designs,
            "evidence_recall_session",
            "session-level evidence recall (mean over questions)",
            1.0,
        ),
        _chart(
            overall, designs, "answer_recall", "gold answer in the request (share of scored questions)", 1.0
        ),
        _chart(
            overall,
            designs,
            "request_tokens_mean",
            "request tokens at question time (mean, exact cl100k)",
            None,
        ),
    ]
    by_type = {(a["design"], a["budget"], a["question_type"]): a for a in agg}
    grid = [
        {"design": d, "budget": b, "cells": [
            None if (a := by_type.get((d, b, t))) is None else a["evidence_recall_turn"]
            for t in ["all", *types]
        ]}
        for b in budgets for d in designs
    ]  # fmt: skip
    why = reasons(rows)
    codes = sorted({c for v in why.values() for c in v})
    lost_table = [{"design": d, "budget": b, "counts": [why.get((d, b), {}).get(c, 0) for c in codes]}
                  for b in budgets for d in designs if why.get((d, b))]  # fmt: skip
    drill = []
    for r in rows:
        lost = json.loads(r["lost"])
        if not lost and not r["over_window"]:
            continue
        drill.append({**r, "lost_list": lost})
        if len(drill) >= MAX_DRILL_ROWS:
            break
    return render(
        "conversations.html.j2",
        version=__version__,
        title=title,
        designs=[(d, colour(d)) for d in designs],
        colour={d: colour(d) for d in designs},
        budgets=budgets,
        types=["all", *types],
        grid=grid,
        charts=charts,
        codes=codes,
        lost_table=lost_table,
        drill=drill,
        drill_left=sum(1 for r in rows if json.loads(r["lost"]) or r["over_window"]) - len(drill),
        n_questions=len({(r["instance"], r["question_id"]) for r in rows}),
        recalls=RECALLS,
    )
