"""What reached the model at question time: evidence recall by turn and by session, answer-in-context,
request tokens, and where each lost evidence turn went (issue 28).

A question is scored on the request the design built for it (:func:`score`). Definitions (README "Real
conversations", ``docs/conversations.md``):

* an **evidence turn is in context** when its whole text occurs in the request: verbatim, or as the
  body of a JSON string (a design that sends a tool result or a transcript line as JSON sends the text
  escaped). A turn of a few words can occur by coincidence; the datasets' evidence turns are long;
* an **evidence session is in context** when at least one of its turns is;
* the **answer is in context** (a *diagnostic*, never a headline: LoCoMo's gold answers are mostly
  paraphrases, so on the real file the oracle scores 0.323 below ``full``'s 0.370) when the gold answer
  occurs in the request, case-insensitively (not scored for abstention or adversarial questions): a
  lenient upper bound on what any reader could
  answer. Some gold answers never occur verbatim in their evidence (LoCoMo's temporal answers are
  often a date the reader must work out), so even the oracle scores below 1 there;
* **evidence recall** (turn and session) is averaged over questions with evidence, abstention
  questions left out (they keep their evidence in ``questions.csv``; the ``abstention`` column marks
  them), as LongMemEval's retrieval scoring leaves its abstention instances out;
* **request tokens** are the exact cl100k count of the request, the sum of its parts' counts (each
  text counted once per process, :func:`sim.tokens.count_tokens`, or the design's own count of the same
  parts when its request carries one, ``ModelRequest.exact``); :class:`Scorer` scores the request as
  the design built it and flags ``over_window``; the runner then enforces the window
  (:mod:`sim.conversations.window`: a request over it delivers nothing, every evidence turn lost as
  ``request-over-window``), keeping the as-built counts as ``*_unenforced`` columns;
* a **lost** evidence turn gets the design's reason code (its adapter's ``lost_reason(turn_id)``), or
  ``not-in-request`` from an adapter that declares none.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from itertools import filterfalse
from typing import Any

from sim.conversations.intervals import by_instance
from sim.conversations.model import Instance, Question, Turn
from sim.tokens import count_tokens

#: The reason of a lost evidence turn when the design's adapter declares no ``lost_reason``.
GENERIC_REASON = "not-in-request"

#: The columns of ``questions.csv`` and of the ``questions`` table, in order.
QUESTION_COLUMNS = (
    "workload", "instance", "question_id", "question", "question_type", "design", "budget", "request_tokens",
    "over_window", "evidence_turns", "evidence_in_context", "evidence_sessions", "sessions_in_context",
    "answer_in_context", "lost", "abstention", "evidence_in_context_unenforced",
    "sessions_in_context_unenforced",
)  # fmt: skip


def _forms(text: str) -> tuple[str, ...]:
    """*text* as it may appear in a request: verbatim, or escaped as the body of a JSON string."""
    forms = [text]
    for ascii_only in (False, True):
        esc = json.dumps(text, ensure_ascii=ascii_only)[1:-1]
        if esc not in forms:
            forms.append(esc)
    return tuple(forms)


def present(text: str, blob: str) -> bool:
    """Whether the whole of *text* is in *blob* (verbatim or JSON-escaped); an empty text never counts."""
    return bool(text) and any(f in blob for f in _forms(text))


def request_tokens(parts: Iterable[str]) -> int:
    """The exact cl100k count of a request: the sum of its parts' cached counts."""
    return sum(count_tokens(p) for p in parts)


class Scorer:
    """Scores the requests built for one instance's questions (labels read here, never by a design)."""

    def __init__(self, instance: Instance) -> None:
        self.instance = instance
        self.turns: dict[str, Turn] = {t.turn_id: t for t in instance.turns}
        self.position: dict[str, int] = {t.turn_id: i for i, t in enumerate(instance.turns)}
        self.by_session: dict[str, list[Turn]] = {}
        for t in instance.turns:
            self.by_session.setdefault(t.session_id, []).append(t)
        self.questions: dict[str, Question] = {q.question_id: q for q in instance.questions}
        # Work done once per instance, not once per question (every question of a LoCoMo conversation
        # comes after all its turns): each turn's searched forms, each request part lower-cased once.
        self._forms: dict[str, tuple[str, ...]] = {}
        self._lower: dict[str, str] = {}
        self._counts: dict[str, int] = {}

    def tokens(self, parts: Sequence[str]) -> int:
        """:func:`request_tokens` of *parts*, each part's count looked up in this instance's table (a
        part sent with every question is counted once, then summed at C speed)."""
        counts = self._counts
        try:
            return sum(map(counts.__getitem__, parts))
        except KeyError:
            if len(counts) > 50_000:  # a bound on what one instance keeps
                counts.clear()
            for p in set(filterfalse(counts.__contains__, parts)):
                counts[p] = count_tokens(p)
            return sum(map(counts.__getitem__, parts))

    def counts(self, parts: Sequence[str]) -> list[int]:
        """Each part's cl100k count (from the same table as :meth:`tokens`)."""
        self.tokens(parts)
        return list(map(self._counts.__getitem__, parts))

    def _present(self, t: Turn, blob: str, seen: dict[str, bool]) -> bool:
        """:func:`present` of turn *t* in *blob*, its forms built once per instance and each answer kept in
        *seen* (one request's memo)."""
        hit = seen.get(t.turn_id)
        if hit is None:
            forms = self._forms.get(t.turn_id)
            if forms is None:
                forms = self._forms[t.turn_id] = _forms(t.text) if t.text else ()
            hit = seen[t.turn_id] = any(map(blob.__contains__, forms))
        return hit

    def _answer_in(self, answer: str, parts: Sequence[str], blob: str) -> bool:
        """Whether the lower-cased *answer* occurs in ``blob.lower()``. Without a newline in *answer* a
        match cannot cross the ``"\\n"`` joining two parts, and lower-casing is per character except a
        final sigma, whose context a newline ends: so the parts, each lower-cased once per instance, are
        joined and searched instead of the whole request lower-cased per question (the same answer)."""
        if "\n" in answer:
            return answer in blob.lower()
        low = self._lower
        lows = list(map(low.get, parts))
        if None in lows:
            if len(low) > 50_000:  # a bound on what one instance keeps
                low.clear()
            for p in set(filterfalse(low.__contains__, parts)):
                low[p] = p.lower()
            lows = list(map(low.__getitem__, parts))
        return answer in "\n".join(lows)  # type: ignore[arg-type]

    def evidence(self, q: Question) -> list[Turn]:
        """The question's evidence turns in conversation order (unknown ids are the loader's to refuse)."""
        ids = sorted({tid for tid in q.evidence if tid in self.position}, key=self.position.__getitem__)
        return [self.turns[tid] for tid in ids]

    def score(
        self,
        q: Question,
        design: str,
        budget: int,
        parts: Sequence[str],
        tokens: int,
        lost_reason: Callable[[str], str] | None = None,
    ) -> dict[str, Any]:
        """One ``questions`` row: the request *parts* (of *tokens* exact tokens) built for *q*."""
        blob = "\n".join(parts)
        ev = self.evidence(q)
        seen: dict[str, bool] = {}
        missing = [t.turn_id for t in ev if not self._present(t, blob, seen)]
        sessions = list(dict.fromkeys(t.session_id for t in ev))
        in_sessions = sum(
            1 for s in sessions if any(self._present(t, blob, seen) for t in self.by_session.get(s, ()))
        )
        answer: int | None = None
        if q.answer is not None and not q.abstention:
            a = q.answer.strip()
            answer = int(self._answer_in(a.lower(), parts, blob)) if a else None
        lost = [[tid, (lost_reason(tid) if lost_reason is not None else GENERIC_REASON) or GENERIC_REASON]
                for tid in missing]  # fmt: skip
        return {
            "workload": self.instance.workload,
            "instance": self.instance.instance_id,
            "question_id": q.question_id,
            "question": q.question,
            "question_type": q.question_type,
            "design": design,
            "budget": budget,
            "request_tokens": tokens,
            "over_window": int(tokens > budget),
            "evidence_turns": len(ev),
            "evidence_in_context": len(ev) - len(missing),
            "evidence_sessions": len(sessions),
            "sessions_in_context": in_sessions,
            "answer_in_context": answer,
            "lost": json.dumps(lost, ensure_ascii=False),
            "abstention": int(q.abstention),
        }


#: The recall columns ``aggregate.csv`` gains for conversations (means over questions that have any).
RECALLS = ("evidence_recall_turn", "evidence_recall_session", "answer_recall")


def _unenforced(row: dict[str, Any], what: str) -> int:
    """The row's evidence turns (*what* ``"evidence"``) or sessions (``"sessions"``) in the request as
    built, before the window gate (:mod:`sim.conversations.window`); a row read back from a file written
    before the gate existed has only the as-built figure."""
    v = row.get(f"{what}_in_context_unenforced")
    return int(row[f"{what}_in_context"] if v is None else v)


def _mean(values: list[float]) -> float | None:
    return round(sum(values) / len(values), 4) if values else None


def aggregate(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per (design, budget): overall (``question_type`` ``all``) and per question type, the mean turn- and
    session-level evidence recall over questions with evidence, the answer recall over questions with a
    scored answer, request tokens (mean, max), requests over the window and lost evidence turns."""
    groups: dict[tuple[str, int, str], list[dict[str, Any]]] = {}
    order: dict[str, int] = {}
    for r in rows:
        order.setdefault(r["design"], len(order))
        for qt in ("all", r["question_type"]):
            groups.setdefault((r["design"], r["budget"], qt), []).append(r)
    out = []
    for (d, b, qt), rs in sorted(
        groups.items(), key=lambda kv: (order[kv[0][0]], kv[0][1], kv[0][2] != "all", kv[0][2])
    ):
        # Abstention questions (LongMemEval ``_abs``, LoCoMo's adversarial category) keep their evidence
        # in the rows but are left out of evidence recall, as LongMemEval's retrieval scoring leaves them out.
        with_ev = [r for r in rs if r["evidence_turns"] and not r.get("abstention")]
        answered = [r for r in rs if r["answer_in_context"] is not None]
        tokens = [r["request_tokens"] for r in rs]
        recall_turn = [r["evidence_in_context"] / r["evidence_turns"] for r in with_ev]
        ci = by_instance(zip((str(r["instance"]) for r in with_ev), recall_turn, strict=True))
        claimed = ci is not None and ci.enough
        out.append(
            {
                "design": d,
                "budget": b,
                "question_type": qt,
                "questions": len(rs),
                "scored": len(with_ev),
                "instances": 0 if ci is None else ci.n,
                "evidence_recall_turn": _mean(recall_turn),
                "evidence_recall_turn_lo": round(ci.lo, 4) if claimed and ci is not None else None,
                "evidence_recall_turn_hi": round(ci.hi, 4) if claimed and ci is not None else None,
                "evidence_recall_session": _mean(
                    [
                        r["sessions_in_context"] / r["evidence_sessions"]
                        for r in with_ev
                        if r["evidence_sessions"]
                    ]
                ),
                "evidence_recall_turn_unenforced": _mean(
                    [_unenforced(r, "evidence") / r["evidence_turns"] for r in with_ev]
                ),
                "evidence_recall_session_unenforced": _mean(
                    [
                        _unenforced(r, "sessions") / r["evidence_sessions"]
                        for r in with_ev
                        if r["evidence_sessions"]
                    ]
                ),
                "answer_scored": len(answered),
                "answer_recall": _mean([float(r["answer_in_context"]) for r in answered]),
                "request_tokens_mean": round(sum(tokens) / len(tokens), 1),
                "request_tokens_max": max(tokens),
                "over_window_sum": sum(r["over_window"] for r in rs),
                "lost_turns": sum(r["evidence_turns"] - r["evidence_in_context"] for r in rs),
            }
        )
    return out


def reasons(rows: list[dict[str, Any]]) -> dict[tuple[str, int], dict[str, int]]:
    """Per (design, budget): how many lost evidence turns each reason code (its part before ``@``) covers."""
    out: dict[tuple[str, int], dict[str, int]] = {}
    for r in rows:
        for _tid, why in json.loads(r["lost"]):
            code = str(why).split("@", 1)[0]
            bucket = out.setdefault((r["design"], r["budget"]), {})
            bucket[code] = bucket.get(code, 0) + 1
    return out
