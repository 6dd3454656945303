"""The report page of a conversation sweep (issue 28): recall by question type per design, recall
against the window, and a per-question drill-down listing each lost evidence turn with its reason.
Self-contained (inline CSS and SVG, no script or network), every value escaped by the template."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sim.conversations.metrics import RECALLS, reasons
from sim.report.templating import render

#: The most question rows the drill-down lists (the page stays small; questions.csv has them all).
MAX_DRILL_ROWS = 2_000
#: The most windows drawn as a bar chart of recall by question type (the smallest and largest beyond).
MAX_TYPE_CHARTS = 4
BAR_W, BAR_H = 540, 250
BAR_LEFT, BAR_RIGHT, BAR_TOP, BAR_BOTTOM = 48, 118, 14, 58


def _f(x: float) -> str:
    return f"{x:.1f}"


def type_chart(
    agg: list[dict[str, Any]], designs: list[str], types: list[str], budget: int, colour: dict[str, str]
) -> dict[str, Any]:
    """Grouped bars of turn-level evidence recall: one group per question type, one bar (series) per
    design, at window *budget*."""
    by = {(a["design"], a["question_type"]): a for a in agg if a["budget"] == budget}
    plot_w = BAR_W - BAR_LEFT - BAR_RIGHT
    plot_h = BAR_H - BAR_TOP - BAR_BOTTOM
    slot = plot_w / max(1, len(types))
    bar = max(1.0, min(14.0, slot * 0.8 / max(1, len(designs))))
    bottom = BAR_TOP + plot_h
    series = []
    for k, d in enumerate(designs):
        bars = []
        for i, t in enumerate(types):
            a = by.get((d, t))
            if a is None or a["evidence_recall_turn"] is None:
                continue
            v = a["evidence_recall_turn"]
            x = BAR_LEFT + slot * i + (slot - bar * len(designs)) / 2 + bar * k
            h = plot_h * float(v)
            title = f"{d} · {t} · window {budget:,}: {v} ({a['questions']} questions)"
            bars.append({"x": _f(x), "y": _f(bottom - h), "w": _f(bar - 1), "h": _f(h), "title": title})
        series.append({"design": d, "colour": colour[d], "bars": bars, "label_y": _f(BAR_TOP + 12 + 13 * k)})
    return {
        "title": f"turn-level evidence recall by question type, window {budget:,} tokens",
        "budget": budget,
        "width": BAR_W,
        "height": BAR_H,
        "left": BAR_LEFT,
        "right": BAR_W - BAR_RIGHT,
        "top": BAR_TOP,
        "bottom": bottom,
        "y_ticks": [(_f(bottom - plot_h * v), f"{v:g}") for v in (0.0, 0.25, 0.5, 0.75, 1.0)],
        "x_ticks": [(_f(BAR_LEFT + slot * (i + 0.5)), t) for i, t in enumerate(types)],
        "series": series,
    }


def render_conversations(
    rows: list[dict[str, Any]],
    agg: list[dict[str, Any]],
    *,
    title: str = "",
    meta: dict[str, str] | None = None,
) -> str:
    """The page of a conversation sweep's question *rows* and their aggregate *agg*, with the run's
    settings *meta* (windows and their rule, speaker roles)."""
    from sim import __version__
    from sim.bench.plots import colour
    from sim.report.bench import BenchPage, _chart

    designs = list(dict.fromkeys(str(r["design"]) for r in rows))
    colour_of = {d: colour(d) for d in designs}
    budgets = sorted({int(r["budget"]) for r in rows})
    overall = [a for a in agg if a["question_type"] == "all"]
    types = sorted({str(a["question_type"]) for a in agg if a["question_type"] != "all"})
    labels = {
        "evidence_recall_turn": "turn recall",
        "evidence_recall_session": "session recall",
        "answer_recall": "answer in context (diagnostic)",
        "request_tokens_mean": "request tokens",
    }
    page = BenchPage(rows=[], agg=overall, designs=designs, budgets=budgets, seeds=[], colour=colour_of)
    specs = (
        ("evidence_recall_turn", "turn-level evidence recall (mean over questions)", 1.0),
        ("evidence_recall_session", "session-level evidence recall (mean over questions)", 1.0),
        (
            "answer_recall",
            "diagnostic: gold answer verbatim in the request (biased low where gold answers are paraphrases)",
            1.0,
        ),
        ("request_tokens_mean", "request tokens at question time (mean, exact cl100k)", None),
    )
    charts = []
    for metric, caption, top in specs:
        c = _chart(page, metric, labels[metric], caption, top)
        c["title"] = caption  # one value per cell: no whiskers to explain
        charts.append(c)
    for c in charts:
        c["ylabel"] = c["y_title"]
    by_type = {(a["design"], a["budget"], a["question_type"]): a for a in agg}
    grid = [
        {"design": d, "budget": b, "cells": [
            None if (a := by_type.get((d, b, t))) is None else a["evidence_recall_turn"]
            for t in ["all", *types]
        ]}
        for b in budgets for d in designs
    ]  # fmt: skip
    shown = budgets if len(budgets) <= MAX_TYPE_CHARTS else [budgets[0], budgets[-1]]
    colours = colour_of
    type_charts = [type_chart(agg, designs, ["all", *types], b, colours) for b in shown]
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
    from sim.conversations.intervals import METHOD
    from sim.conversations.table import ANSWER_NOTE, enough, recall_text

    summary = [{**a, "recall_text": recall_text(a)} for a in sorted(overall, key=lambda a: int(a["budget"]))]
    n_inst = max((int(a.get("instances") or 0) for a in overall), default=0)
    return render(
        "conversations.html.j2",
        summary=summary,
        intervals=METHOD if enough(agg) else "",
        n_instances=n_inst,
        answer_note=ANSWER_NOTE,
        meta=sorted((meta or {}).items()),
        version=__version__,
        title=title,
        designs=[(d, colour(d)) for d in designs],
        colour=colours,
        type_charts=type_charts,
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


def _setting(value: object) -> str:
    """A ``meta`` value (JSON text) as the page shows it."""
    try:
        v = json.loads(str(value))
    except ValueError:
        return str(value)
    return v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)


def is_conversation_dir(out_dir: Path) -> bool:
    """Whether *out_dir* holds a conversation sweep's files (``results.db`` with a ``questions`` table)."""
    import sqlite3

    db = Path(out_dir) / "results.db"
    if not db.is_file():
        return False
    try:
        conn = sqlite3.connect(f"file:{db.resolve()}?mode=ro", uri=True)
        try:
            found = conn.execute(
                "SELECT 1 FROM sqlite_master WHERE type='table' AND name='questions'"
            ).fetchone()
        finally:
            conn.close()
    except sqlite3.DatabaseError:
        return False
    return found is not None


def render_conversations_dir(out_dir: Path) -> str:
    """The page of a conversation sweep's output directory (``memsim report DIR``), from ``results.db``."""
    import sqlite3

    from sim.conversations.metrics import QUESTION_COLUMNS, aggregate
    from sim.errors import UsageError

    db = Path(out_dir) / "results.db"
    try:
        conn = sqlite3.connect(f"file:{db.resolve()}?mode=ro", uri=True)
        try:
            have = {r[1] for r in conn.execute("PRAGMA table_info(questions)")}
            cols = [c for c in QUESTION_COLUMNS if c in have]  # a file from before issue 38 lacks some
            cur = conn.execute(f"SELECT {', '.join(cols)} FROM questions")
            rows = [dict(zip(cols, r)) for r in cur]
            meta: dict[str, str] = {}
            if conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='meta'").fetchone():
                meta = {str(k): _setting(v) for k, v in conn.execute("SELECT key, value FROM meta")}
        finally:
            conn.close()
    except sqlite3.DatabaseError as exc:
        raise UsageError(f"{db} is not a memsim conversation results database: {exc}") from exc
    if not rows:
        raise UsageError(f"{db} has no question rows")
    return render_conversations(rows, aggregate(rows), title=Path(out_dir).name, meta=meta)
