"""The report page of a conversation sweep (issue 28): recall by question type per design, recall
against the window, and a per-question drill-down listing each lost evidence turn with its reason.
Self-contained (inline CSS and SVG, no script or network), every value escaped by the template."""

from __future__ import annotations

import json
import math
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
#: Average width of a label character (11 px text) and the room under the turned labels for the axis title.
CHAR_W, TITLE_ROOM = 6.2, 26
#: The question-type labels under the bars are turned this many degrees (they would overlap level).
LABEL_ANGLE = -35
#: The drill-down shows this much of a question's text (its full text on hover and in questions.csv).
QUESTION_CHARS = 80


def _f(x: float) -> str:
    return f"{x:.1f}"


def distinct_colours(designs: list[str]) -> dict[str, str]:
    """Each label's colour (:func:`sim.bench.plots.colour`), except that a variant whose design is also
    on the page gets its colour mixed halfway with white: bars cannot be dashed, so ``pager`` and
    ``pager:fixed`` would otherwise look the same."""
    from sim.bench.plots import colour

    out: dict[str, str] = {}
    for d in designs:
        c = colour(d)
        if c in out.values():
            r, g, b = (int(c[i : i + 2], 16) for i in (1, 3, 5))
            c = "#{:02x}{:02x}{:02x}".format(*((v + 255 + 1) // 2 for v in (r, g, b)))
        out[d] = c
    return out


def _question_text(text: Any) -> str:
    t = " ".join(str(text or "").split())
    return t if len(t) <= QUESTION_CHARS else t[: QUESTION_CHARS - 1] + "…"


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
    longest = max((len(f"{t} (n=000)") for t in types), default=0)  # the turned labels' depth below the axis
    drop = longest * CHAR_W * abs(math.sin(math.radians(LABEL_ANGLE)))
    counts = {t: max((int(a["questions"]) for (_, t2), a in by.items() if t2 == t), default=0) for t in types}
    for k, d in enumerate(designs):
        bars = []
        for i, t in enumerate(types):
            a = by.get((d, t))
            if a is None or a["evidence_recall_turn"] is None:
                continue
            v = a["evidence_recall_turn"]
            x = BAR_LEFT + slot * i + (slot - bar * len(designs)) / 2 + bar * k
            h = plot_h * float(v)
            title = f"{d} · {t} · window {budget:,}: {float(v):.3f} ({a['questions']:,} questions)"
            bars.append({"x": _f(x), "y": _f(bottom - h), "w": _f(bar - 1), "h": _f(h), "title": title})
        series.append({"design": d, "colour": colour[d], "bars": bars, "label_y": _f(BAR_TOP + 12 + 13 * k)})
    return {
        "title": f"turn-level evidence recall by question type, window {budget:,} tokens",
        "budget": budget,
        "width": BAR_W,
        "height": round(bottom + 14 + drop + TITLE_ROOM),
        "left": BAR_LEFT,
        "right": BAR_W - BAR_RIGHT,
        "top": BAR_TOP,
        "bottom": bottom,
        "y_ticks": [(_f(bottom - plot_h * v), f"{v:g}") for v in (0.0, 0.25, 0.5, 0.75, 1.0)],
        "x_ticks": [(_f(BAR_LEFT + slot * (i + 0.5)), f"{t} (n={counts[t]:,})") for i, t in enumerate(types)],
        "angle": LABEL_ANGLE,
        "series": series,
    }


def render_conversations(
    rows: list[dict[str, Any]],
    agg: list[dict[str, Any]],
    *,
    title: str = "",
    provenance: dict[str, Any] | None = None,
    cost: tuple[list[dict[str, Any]], dict[str, Any]] | None = None,
    meta: dict[str, str] | None = None,
) -> str:
    """The page of a conversation sweep's question *rows* and their aggregate *agg*, with the run's
    settings *meta* (windows and their rule, speaker roles); its footer cites the run's *provenance*
    (:mod:`sim.provenance`) when there is one; *cost* (the per-design summary of
    :func:`sim.conversations.cost.summary` and the provider's ``meta()``) adds a cost table with its
    price basis."""
    from sim import __version__
    from sim.cache.prices import basis
    from sim.provenance import cite_text
    from sim.registry import reference_note
    from sim.report.bench import BenchPage, _chart

    designs = list(dict.fromkeys(str(r["design"]) for r in rows))
    colour_of = distinct_colours(designs)
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
        drill.append({**r, "lost_list": lost, "question_short": _question_text(r.get("question"))})
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
        designs=[(d, colour_of[d]) for d in designs],
        reference_note=reference_note(designs),
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
        retrieval_cols=RETRIEVAL_SHOWN,
        retrieval_rows=[a for a in overall if any(a.get(c) is not None for c, _ in RETRIEVAL_SHOWN)],
        cite=cite_text(provenance) if provenance else "",
        cost_rows=cost[0] if cost else [],
        cost_basis=basis(cost[1], "refused") if cost else "",
    )


#: The retrieval columns the page shows (:mod:`sim.conversations.retrieval`), with their headings.
RETRIEVAL_SHOWN = tuple(
    (f"{m}_at_{k}_{lv}", f"{m.replace('_', ' ')}@{k} {lv}")
    for lv in ("turn", "session") for k in (5, 10) for m in ("recall_any", "recall_all", "ndcg")
)  # fmt: skip


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
    from sim.conversations.retrieval import COLUMNS as RETRIEVAL_COLUMNS
    from sim.conversations.retrieval import aggregate_into
    from sim.errors import UsageError

    db = Path(out_dir) / "results.db"
    try:
        conn = sqlite3.connect(f"file:{db.resolve()}?mode=ro", uri=True)
        try:
            have = {c[1] for c in conn.execute("PRAGMA table_info(questions)")}
            # an older file lacks some columns; a sweep of designs that rank nothing, the retrieval ones
            cols = [c for c in (*QUESTION_COLUMNS, *RETRIEVAL_COLUMNS) if c in have]
            cur = conn.execute(f"SELECT {', '.join(cols)} FROM questions")
            rows = [dict(zip(cols, r)) for r in cur]
        finally:
            conn.close()
    except sqlite3.DatabaseError as exc:
        raise UsageError(f"{db} is not a memsim conversation results database: {exc}") from exc
    if not rows:
        raise UsageError(f"{db} has no question rows")
    from sim.provenance import read_db_meta
    from sim.report.inputs import check_questions

    check_questions(rows, db)  # the schema its writer produces, values included

    record = read_db_meta(db)
    cost = _cost_of(db, record)
    meta = _settings_of(record)
    return render_conversations(
        rows, aggregate_into(aggregate(rows), rows), title=Path(out_dir).name, provenance=record, cost=cost,
        meta=meta,
    )  # fmt: skip


#: The settings a conversation page shows from its run's record (:func:`sim.conversations_outputs.settings`).
PAGE_SETTINGS = ("windows", "windows_rule", "roles", "recall", "intervals")


def _settings_of(record: dict[str, Any] | None) -> dict[str, str]:
    """The run's settings the page shows, from its provenance record (or a bare settings ``meta``)."""
    if not record:
        return {}
    nested = record.get("settings")
    settings: dict[str, Any] = nested if isinstance(nested, dict) else record
    return {k: _setting(json.dumps(settings[k])) for k in PAGE_SETTINGS if k in settings}


def _cost_of(db: Path, record: dict[str, Any] | None) -> tuple[list[dict[str, Any]], dict[str, Any]] | None:
    """The cost summary and provider of a priced sweep's database (None when it was not priced)."""
    import sqlite3

    provider = ((record or {}).get("settings") or {}).get("provider")
    if not isinstance(provider, dict):
        return None
    from sim.conversations.cost import SUMMARY_COLUMNS

    try:
        conn = sqlite3.connect(f"file:{db.resolve()}?mode=ro", uri=True)
        try:
            cur = conn.execute(f"SELECT {', '.join(SUMMARY_COLUMNS)} FROM cost_summary")
            rows = [dict(zip(SUMMARY_COLUMNS, r)) for r in cur]
        finally:
            conn.close()
    except sqlite3.DatabaseError:
        return None
    return rows, provider
