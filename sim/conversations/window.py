"""The window gate of the conversation benchmark (issue 38): a request over the window delivers nothing.

A provider refuses a request longer than its context window (a context-length error): nothing of it
reaches the model. So a question whose request is over the window scores 0 on every evidence turn,
every evidence session and the answer, and each of its evidence turns is lost with the reason
:data:`OVER_WINDOW`. This is the recall every table, file, page and headline reports.

The figure as built (what the request held, whether or not a provider would have accepted it) stays
beside it as a clearly named secondary column, ``evidence_in_context_unenforced`` (and
``sessions_in_context_unenforced``): *recall if nothing enforced the window*. It is never the recall
that is compared.

The gate is one step applied to a scored row (:func:`enforce_window`), separate from scoring
(:class:`sim.conversations.metrics.Scorer` scores the request as built), so how a row is scored and
how the window is enforced change independently. Baselines pass through the same gate: ``full`` at a
window below a conversation's size scores 0 there.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from sim.conversations.model import Instance

#: The reason code of every evidence turn of a question whose request is over the window.
OVER_WINDOW = "request-over-window"

#: The columns the gate adds to a question row (the figures as built, before the gate).
UNENFORCED_COLUMNS = ("evidence_in_context_unenforced", "sessions_in_context_unenforced")


def evidence_ids(instance: Instance) -> dict[str, list[str]]:
    """Per question id of *instance*: its evidence turn ids that name a turn, in conversation order."""
    position = {t.turn_id: i for i, t in enumerate(instance.turns)}
    return {
        q.question_id: sorted({t for t in q.evidence if t in position}, key=position.__getitem__)
        for q in instance.questions
    }


def enforce_window(row: dict[str, Any], evidence: Sequence[str]) -> dict[str, Any]:
    """*row* (a ``questions`` row as :meth:`Scorer.score` returns it, for a question whose evidence turn
    ids are *evidence*) with the window enforced: the as-built counts kept under
    :data:`UNENFORCED_COLUMNS`; when ``over_window``, nothing in context and every evidence turn lost
    with :data:`OVER_WINDOW`. A new dict; applying it twice changes nothing more."""
    out = dict(row)
    if "evidence_in_context_unenforced" in row:
        return out
    out["evidence_in_context_unenforced"] = row["evidence_in_context"]
    out["sessions_in_context_unenforced"] = row["sessions_in_context"]
    if not row["over_window"]:
        return out
    out["evidence_in_context"] = 0
    out["sessions_in_context"] = 0
    if row.get("answer_in_context") is not None:
        out["answer_in_context"] = 0
    out["lost"] = json.dumps([[tid, OVER_WINDOW] for tid in evidence], ensure_ascii=False)
    return out
