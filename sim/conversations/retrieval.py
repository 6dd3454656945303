"""Retrieval metrics of a design that ranks: recall_any@K, recall_all@K and NDCG@K at turn and session
level, as LongMemEval's retrieval evaluation defines them (issue 39).

Source: xiaowu0162/LongMemEval ``src/retrieval/eval_utils.py`` (``dcg``, ``ndcg``, ``evaluate_retrieval``,
``evaluate_retrieval_turn2session``) and ``src/retrieval/run_retrieval.py`` (K in 1, 3, 5, 10, 30, 50;
abstention instances, ``_abs`` ids, left out of the means), read 2026-12-06. Restated here (clean room):

* a **ranking** is every document the design indexed, best first (LongMemEval ranks the whole corpus);
  the corpus is the ranking's documents in that order;
* ``recall_any@K`` is 1 when any correct document is among the first K, ``recall_all@K`` when all are
  (an empty set of correct documents gives 0 and 1, as Python's ``any``/``all``; such questions are
  not scored here);
* ``DCG@K`` of a relevance list ``r`` (1 correct, 0 not) is ``r[0] + sum(r[i] / log2(i + 1))`` for
  ``i`` = 1 .. K-1 (0-based: the first two positions are both undiscounted); ``NDCG@K`` divides the
  ranking's DCG@K by the DCG@K of the corpus' relevances sorted descending (0 when that is 0);
* **session level from a turn ranking**: each turn id becomes its session id (duplicates kept), the
  correct documents become the correct turns' sessions, and K grows to the smallest ``K'`` whose first
  ``K'`` turns name K distinct sessions (or the whole ranking), then the three metrics are computed
  on the mapped ids at ``K'`` (NDCG's ideal counts every correct-session turn of the corpus, as
  LongMemEval's does). A design that ranks sessions gets session-level metrics only.

memsim reports K in :data:`KS` (5 and 10: the K of the public LongMemEval_S recall_any figures and
of its paper's tables); the functions take any K. The correct documents are the question's evidence
labels (LongMemEval's ``has_answer`` turns); they are read here, by the scorer, never by a design.

An adapter offers a ranking by defining ``ranking()``: called after each question step, it returns a
:class:`Ranking` (or ``(level, ids)``) for that question, or None when it ranked nothing.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

#: The K of the reported metrics.
KS = (5, 10)
LEVELS = ("turn", "session")
METRICS = ("recall_any", "recall_all", "ndcg")


class Ranking(NamedTuple):
    """A design's ranking for one question: ``level`` ``"turn"`` (ids are turn ids) or ``"session"``
    (session ids); ``ids`` every indexed document, best first."""

    level: str
    ids: tuple[str, ...]


def column(metric: str, k: int, level: str) -> str:
    """The column name of *metric* at *k* and *level* (``recall_any_at_5_turn``)."""
    return f"{metric}_at_{k}_{level}"


#: The retrieval columns ``questions.csv`` and ``aggregate.csv`` gain (None where a design ranks nothing).
COLUMNS = tuple(column(m, k, lv) for lv in LEVELS for k in KS for m in METRICS)


def dcg(relevances: Sequence[float], k: int) -> float:
    rel = list(relevances)[:k]
    if not rel:
        return 0.0
    return float(rel[0]) + sum(float(r) / math.log2(i) for i, r in enumerate(rel[1:], start=2))


def ndcg(ranked: Sequence[str], correct: set[str], k: int) -> float:
    """NDCG@k of *ranked* (the whole corpus, best first) for the *correct* ids."""
    rel = [1 if d in correct else 0 for d in ranked]
    ideal = dcg(sorted(rel, reverse=True), k)
    return 0.0 if ideal == 0 else dcg(rel, k) / ideal


def evaluate(ranked: Sequence[str], correct: set[str], k: int) -> tuple[float, float, float]:
    """``(recall_any, recall_all, ndcg)`` at *k*."""
    top = set(ranked[:k])
    return (
        float(any(d in top for d in correct)),
        float(all(d in top for d in correct)),
        ndcg(ranked, correct, k),
    )


def evaluate_turn2session(
    ranked: Sequence[str], correct: set[str], k: int, session_of: Mapping[str, str]
) -> tuple[float, float, float]:
    """Session-level metrics of a turn ranking (K widened to K distinct sessions)."""
    sessions = [session_of.get(t, t) for t in ranked]
    good = {session_of.get(t, t) for t in correct}
    eff = k
    while eff <= len(sessions) and len(set(sessions[:eff])) < k:
        eff += 1
    return evaluate(sessions, good, eff)


def metrics(
    ranking: Ranking | None, evidence: Sequence[str], session_of: Mapping[str, str]
) -> dict[str, Any]:
    """Every :data:`COLUMNS` value for one question (None where not defined: no ranking, no evidence,
    or turn level for a session ranking)."""
    out: dict[str, Any] = dict.fromkeys(COLUMNS)
    if ranking is None or not evidence:
        return out
    level, ids = ranking
    ranked = list(ids)
    if level == "turn":
        correct = set(evidence)
        for k in KS:
            for m, v in zip(METRICS, evaluate(ranked, correct, k)):
                out[column(m, k, "turn")] = round(v, 4)
            for m, v in zip(METRICS, evaluate_turn2session(ranked, correct, k, session_of)):
                out[column(m, k, "session")] = round(v, 4)
    elif level == "session":
        correct = {session_of.get(t, t) for t in evidence}
        for k in KS:
            for m, v in zip(METRICS, evaluate(ranked, correct, k)):
                out[column(m, k, "session")] = round(v, 4)
    else:
        raise ValueError(f"ranking level {level!r} is not one of {LEVELS}")
    return out


def ranking_of(adapter: Any) -> Ranking | None:
    """The adapter's ranking for the question it just answered (None when it offers none)."""
    get = getattr(adapter, "ranking", None)
    if get is None:
        return None
    r = get()
    if r is None:
        return None
    level, ids = r
    return Ranking(str(level), tuple(str(i) for i in ids))


def aggregate_into(agg: list[dict[str, Any]], rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """*agg* (rows of :func:`sim.conversations.metrics.aggregate`) with the mean of each retrieval column
    per (design, window, question type), over the questions that have the value and are not abstention
    questions (LongMemEval leaves ``_abs`` instances out of its means)."""
    groups: dict[tuple[Any, Any, Any], list[dict[str, Any]]] = {}
    for r in rows:
        if r.get("abstention"):
            continue
        for qt in ("all", r["question_type"]):
            groups.setdefault((r["design"], r["budget"], qt), []).append(r)
    for a in agg:
        rs = groups.get((a["design"], a["budget"], a["question_type"]), [])
        for c in COLUMNS:
            vals = [float(r[c]) for r in rs if r.get(c) is not None]
            a[c] = round(sum(vals) / len(vals), 4) if vals else None
    return agg
