"""LongMemEval instances (``longmemeval_s.json``, ``_m``, ``_oracle``) as conversation instances.

The format, from the benchmark's own documentation and loaders (read, not copied):

* README "Dataset Format", https://github.com/xiaowu0162/LongMemEval (README.md): a file is a JSON list of
  500 instances with ``question_id``, ``question_type`` (an id ending ``_abs`` is an abstention
  question), ``question``, ``answer``, ``question_date``, ``haystack_session_ids`` (sorted by time in
  ``_s`` and ``_m``, not in ``_oracle``), ``haystack_dates``, ``haystack_sessions`` (sessions, each a list
  of ``{"role": "user"|"assistant", "content": str}``; evidence turns carry ``"has_answer": true``, the
  label of turn-level recall) and ``answer_session_ids`` (the evidence sessions, the label of
  session-level recall). ``_oracle`` holds only the evidence sessions; ``_m`` about 500 sessions.
* src/retrieval/run_retrieval.py (``process_item_flat_index``, the ``correct_docs`` line): a turn is
  evidence when it is in an evidence session and carries ``has_answer: true``; a ``has_answer`` turn in
  any other session is not (upstream tells evidence sessions by ``"answer"`` in their id; memsim uses
  ``answer_session_ids``, which names the same sessions). Upstream indexes user turns only and skips the
  30 abstention instances when it scores retrieval ("they do not have a ground truth answer location",
  README); memsim keeps the labels of every turn and question as the file has them and leaves what to
  score to the benchmark.
* The dates are ``"2023/05/30 (Tue) 23:17"`` (the README's examples and every released file); the
  weekday is not checked.

Turn ids are ``"<session_id>:<i>"``, ``i`` the turn's 0-based position in its session; every turn of a
session is dated with the session's date. A bare-number ``answer`` is read as its text.
"""

from __future__ import annotations

import calendar
import re
from typing import Any, NoReturn

from sim.conversations.formats.stream import (
    MAX_SESSIONS,
    MAX_TEXT_CHARS,
    MAX_TURNS,
    Bad,
    answer_text,
    bounded,
    check,
    field,
    ident,
)
from sim.conversations.model import Instance, Question, Turn

ROLES = ("user", "assistant")
_DATE = re.compile(r"\s*(\d{4})/(\d{1,2})/(\d{1,2})\s*(?:\([A-Za-z]{3}\)\s*)?(?:(\d{1,2}):(\d{2}))?\s*")


def parse_date(text: str, at: str) -> int:
    """A LongMemEval date (``"2023/05/30 (Tue) 23:17"``) as whole seconds since 1970 UTC."""
    m = _DATE.fullmatch(text)
    if m is None:
        raise Bad(at, f'expected a date like "2023/05/30 (Tue) 23:17", got {text[:40]!r}')
    y, mo, d = int(m[1]), int(m[2]), int(m[3])
    hh, mm = int(m[4] or 0), int(m[5] or 0)
    if not (1 <= mo <= 12 and 1 <= d <= calendar.monthrange(y, mo)[1] and hh < 24 and mm < 60):
        raise Bad(at, f"not a valid date: {text[:40]!r}")
    return calendar.timegm((y, mo, d, hh, mm, 0, 0, 0, 0))


def _bad_turn(turn: Any, at: str) -> NoReturn:
    """Raise :class:`Bad` for the first invalid field of *turn* (the fast path found one)."""
    if not isinstance(turn, dict):
        raise Bad(at, "expected an object (a turn)")
    role = field(turn, "role", str, at)
    if role not in ROLES:
        raise Bad(f"{at}.role", f'expected "user" or "assistant", got {role[:40]!r}')
    field(turn, "content", str, at)
    check(turn["has_answer"], bool, f"{at}.has_answer")
    raise Bad(at, "invalid turn")  # not reached: the checks above name the field


def build(data: Any, index: int) -> Instance:
    """One LongMemEval instance, validated (:class:`Bad` names the field)."""
    if not isinstance(data, dict):
        raise Bad("", "expected an object (an instance)")
    qid = ident(field(data, "question_id", str, ""), "question_id")
    qtype = ident(field(data, "question_type", str, ""), "question_type")
    question = field(data, "question", str, "")
    if "answer" not in data:
        raise Bad("answer", "missing")
    answer = answer_text(data["answer"], "answer")
    qtime = parse_date(field(data, "question_date", str, ""), "question_date")
    sids = bounded(
        field(data, "haystack_session_ids", list, ""), MAX_SESSIONS, "haystack_session_ids", "sessions"
    )
    dates = field(data, "haystack_dates", list, "")
    sessions = field(data, "haystack_sessions", list, "")
    if not (len(sids) == len(dates) == len(sessions)):
        raise Bad(
            "haystack_sessions",
            f"{len(sessions)} sessions, {len(sids)} haystack_session_ids and {len(dates)} haystack_dates "
            "(expected one of each per session)",
        )
    answer_ids = bounded(
        field(data, "answer_session_ids", list, ""), MAX_SESSIONS, "answer_session_ids", "ids"
    )
    session_ids: list[str] = []
    seen_sessions: dict[str, int] = {}
    for k, sid in enumerate(sids):
        sid = ident(sid, f"haystack_session_ids[{k}]")
        if sid in seen_sessions:
            raise Bad(
                f"haystack_session_ids[{k}]", f"{sid!r} repeats haystack_session_ids[{seen_sessions[sid]}]"
            )
        seen_sessions[sid] = k
        session_ids.append(sid)
    evidence_sessions: set[str] = set()
    for k, sid in enumerate(answer_ids):
        sid = ident(sid, f"answer_session_ids[{k}]")
        if sid not in seen_sessions:
            raise Bad(f"answer_session_ids[{k}]", f"{sid!r} names no session of haystack_session_ids")
        evidence_sessions.add(sid)
    turns: list[Turn] = []
    evidence: list[str] = []
    for k, (sid, session) in enumerate(zip(session_ids, sessions)):
        when = parse_date(check(dates[k], str, f"haystack_dates[{k}]"), f"haystack_dates[{k}]")
        check(session, list, f"haystack_sessions[{k}]")
        if len(turns) + len(session) > MAX_TURNS:
            raise Bad(f"haystack_sessions[{k}]", f"the instance has more than {MAX_TURNS:,} turns")
        for i, turn in enumerate(session):
            # The fast path checks each turn with a few lookups; the slow one words the error.
            role: Any = turn.get("role") if type(turn) is dict else None
            content: Any = turn.get("content") if role in ROLES else None
            has_answer = turn.get("has_answer", False) if type(content) is str else None
            if (has_answer is not True and has_answer is not False) or len(content) > MAX_TEXT_CHARS:
                _bad_turn(turn, f"haystack_sessions[{k}][{i}]")
            tid = f"{sid}:{i}"
            turns.append(Turn(tid, sid, k, role, role, content, when))
            if has_answer and sid in evidence_sessions:
                evidence.append(tid)
    abstention = qid.endswith("_abs")
    q = Question(
        question_id=qid,
        question_type=qtype,
        question=question,
        answer=None if abstention else answer,
        abstention=abstention,
        evidence=tuple(evidence),
        after_turn=len(turns),
        time_s=qtime,
    )
    return Instance("longmemeval", index, qid, tuple(session_ids), tuple(turns), (q,))
