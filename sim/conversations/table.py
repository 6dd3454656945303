"""The console tables of a conversation sweep (issues 28, 38): overall recall per design and window with
its scored-question count and its interval by instance, then turn recall per question type.

Turn recall is the recall with the window enforced (:mod:`sim.conversations.window`); the as-built
figure sits in its own column, *if nothing enforced the window*. ``answer in context`` is a diagnostic
(its bias: :data:`ANSWER_NOTE`), printed last and never compared.
"""

from __future__ import annotations

from typing import Any

from sim.bench.stats import MIN_SEEDS
from sim.conversations.intervals import METHOD

#: What the answer-in-context column does not measure (printed under the table).
ANSWER_NOTE = (
    "answer in context is a diagnostic, not a recall: a gold answer counts only where it occurs verbatim "
    "in the request, and LoCoMo's are mostly paraphrases (on the real file the oracle scores 0.323, below "
    "full's 0.370)."
)


def _f(v: Any, digits: int = 3) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:,.{digits}f}"
    return f"{v:,}"


def recall_text(a: dict[str, Any]) -> str:
    """Turn recall with its interval (``0.436 [0.391–0.512]``), or the mean alone."""
    v = a.get("evidence_recall_turn")
    if v is None:
        return "-"
    lo, hi = a.get("evidence_recall_turn_lo"), a.get("evidence_recall_turn_hi")
    if lo is None or hi is None:
        return f"{v:.3f}"
    return f"{v:.3f} [{lo:.3f}–{hi:.3f}]"


def _overall(agg: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The overall rows, window by window (designs in the aggregate's order within a window)."""
    return sorted((a for a in agg if a["question_type"] == "all"), key=lambda a: int(a["budget"]))


def enough(agg: list[dict[str, Any]]) -> bool:
    """Whether the overall rows have instances enough for an interval."""
    return any((a.get("instances") or 0) >= MIN_SEEDS for a in agg if a["question_type"] == "all")


def render(agg: list[dict[str, Any]]) -> Any:
    """Rich renderables of the aggregate: the overall table, the per-type table and the notes."""
    from rich.console import Group
    from rich.table import Table

    overall = _overall(agg)
    t = Table(
        title="real conversations: what reached the model at question time (exact cl100k; a request over "
        "the window delivers nothing)",
        title_justify="left",
    )
    cols = (
        "design", "window", "scored / questions", "turn recall [95% CI]", "session recall",
        "turn recall if nothing enforced the window", "Σ over window", "tokens mean", "tokens max",
        "Σ lost turns", "answer in context (diagnostic)",
    )  # fmt: skip
    for c in cols:
        t.add_column(c, justify="left" if c == "design" else "right", overflow="fold")
    for i, a in enumerate(overall):
        end = i + 1 == len(overall) or overall[i + 1]["budget"] != a["budget"]
        t.add_row(
            str(a["design"]), _f(a["budget"]), f"{_f(a.get('scored'))} / {_f(a['questions'])}",
            recall_text(a), _f(a.get("evidence_recall_session")),
            _f(a.get("evidence_recall_turn_unenforced")), _f(a["over_window_sum"]),
            _f(a["request_tokens_mean"], 0), _f(a["request_tokens_max"]), _f(a["lost_turns"]),
            _f(a.get("answer_recall")), end_section=end,
        )  # fmt: skip
    from sim.registry import reference_note

    t.caption = reference_note(str(r["design"]) for r in agg) or None
    parts: list[Any] = [t]
    ranked = [a for a in overall if any(a.get(k) is not None for k, _ in RETRIEVAL_SHOWN)]
    if ranked:
        parts.append(retrieval_table(ranked))
    types = sorted({str(a["question_type"]) for a in agg if a["question_type"] != "all"})
    if len(types) > 1:
        parts.append(by_type(agg, types))
    n = max((int(a.get("instances") or 0) for a in overall), default=0)
    if enough(agg):
        parts.append(f"intervals: {METHOD}.")
    else:
        parts.append(
            f"{n} instance{'s' if n != 1 else ''}: too few to conclude which design recalls more (no "
            f"interval below {MIN_SEEDS} instances; questions of one conversation are not independent)."
        )
    parts.append(ANSWER_NOTE)
    return Group(*parts)


def by_type(agg: list[dict[str, Any]], types: list[str]) -> Any:
    """Turn recall (window enforced) per question type, with the scored questions of each cell."""
    from rich.table import Table

    t = Table(title="turn recall by question type (scored questions in brackets)", title_justify="left")
    t.add_column("design")
    t.add_column("window", justify="right")
    for q in types:
        t.add_column(q, justify="right", overflow="fold")
    cell = {(a["design"], a["budget"], a["question_type"]): a for a in agg}
    overall = _overall(agg)
    for i, a in enumerate(overall):
        row = []
        for q in types:
            c = cell.get((a["design"], a["budget"], q))
            row.append("-" if c is None else f"{_f(c['evidence_recall_turn'])} ({_f(c.get('scored'))})")
        end = i + 1 == len(overall) or overall[i + 1]["budget"] != a["budget"]
        t.add_row(str(a["design"]), _f(a["budget"]), *row, end_section=end)
    return t


def fmt(v: Any) -> str:
    """A cell as the other tables write it: ``8,000``, ``0.333``, ``-`` for none."""
    if v is None:
        return "-"
    if isinstance(v, bool) or not isinstance(v, int | float):
        return str(v)
    if isinstance(v, int) or (float(v).is_integer() and abs(v) >= 10):
        return f"{v:,.0f}"
    return f"{v:,.3f}"


#: The retrieval metrics the console shows (:mod:`sim.conversations.retrieval`; every one is in the CSVs).
RETRIEVAL_SHOWN = (
    ("recall_any_at_5_turn", "recall_any@5 turn"), ("recall_all_at_5_turn", "recall_all@5 turn"),
    ("ndcg_at_10_turn", "NDCG@10 turn"), ("recall_any_at_5_session", "recall_any@5 session"),
    ("ndcg_at_10_session", "NDCG@10 session"),
)  # fmt: skip


def retrieval_table(ranked: list[dict[str, Any]]) -> Any:
    """LongMemEval's retrieval metrics of the designs that rank (over their whole ranking, whatever the
    window lets through), one row per design and window."""
    from rich.table import Table

    t = Table(
        title="retrieval (designs that rank; LongMemEval's metrics over the whole ranking)",
        title_justify="left",
    )
    t.add_column("design")
    t.add_column("window", justify="right")
    for _, title in RETRIEVAL_SHOWN:
        t.add_column(title, justify="right")
    for a in ranked:
        t.add_row(str(a["design"]), _f(a["budget"]), *(_f(a.get(k)) for k, _ in RETRIEVAL_SHOWN))
    return t
