"""The console table of a conversation sweep: overall recall per design and window (issue 28)."""

from __future__ import annotations

from typing import Any


def render(agg: list[dict[str, Any]]) -> Any:
    """A rich table of the overall rows of the aggregate (``question_type`` ``all``)."""
    from rich.table import Table

    t = Table(title="real conversations: what reached the model at question time (exact cl100k)")
    cols = (
        ("design", "design"), ("budget", "window"), ("questions", "questions"),
        ("evidence_recall_turn", "turn recall"), ("evidence_recall_session", "session recall"),
        ("answer_recall", "answer in context"), ("request_tokens_mean", "tokens mean"),
        ("request_tokens_max", "tokens max"), ("over_window_sum", "Σ over window"),
        ("lost_turns", "Σ lost turns"), ("recall_any_at_5_turn", "recall_any@5 turn"),
        ("recall_any_at_5_session", "recall_any@5 session"), ("ndcg_at_10_turn", "NDCG@10 turn"),
    )  # fmt: skip
    for key, title in cols:
        t.add_column(title, justify="left" if key == "design" else "right")
    for r in agg:
        if r["question_type"] == "all":
            t.add_row(*(fmt(r.get(k)) for k, _ in cols))
    from sim.registry import reference_note

    t.caption = reference_note(str(r["design"]) for r in agg) or None
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
