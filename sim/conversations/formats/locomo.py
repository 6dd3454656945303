"""LoCoMo samples (``locomo10.json``) as :class:`~sim.conversations.model.Instance`.

The format, from the dataset's documentation, loaders and released data (read, not copied):

* README "Data", https://github.com/snap-research/locomo (README.MD): a sample has ``sample_id``,
  ``conversation`` (``speaker_a``, ``speaker_b``, sessions ``session_<num>`` in chronological order of
  ``<num>``, each a list of turns ``{"speaker", "dia_id", "text"}`` plus optional image fields, and
  their timestamps ``session_<num>_date_time``) and ``qa`` (``question``, ``answer``, ``category``,
  ``evidence``: the ``dia_id``\\ s of the turns that hold the answer, "when available").
* task_eval/evaluate_gpts.py (``get_input_context``, ``prepare_for_rag``): sessions are read in order of
  ``<num>`` and an empty session is skipped; category 5 (adversarial) questions carry
  ``adversarial_answer`` and no gold ``answer`` (they are asked as "not mentioned in the conversation");
  the image caption is appended to a turn only in upstream's prompt, not in the data, so memsim's turn
  text is ``text`` alone. task_eval/evaluation_stats.py (``analyze_acc``): evidence ids are read after
  removing ``(`` and ``)``, and an empty id is skipped. The category numbers are 1 multi-hop,
  2 temporal, 3 open-domain, 4 single-hop, 5 adversarial (task_eval/evaluation.py, and
  snap-research/locomo issue 29).
* Dates are ``"1:56 pm on 8 May, 2023"`` (every ``session_<num>_date_time`` of the released data).

Evidence ids are resolved exactly as written where they name a turn. The released data also writes
some in other notations, which memsim reads as the ids they plainly are (each documented in
docs/conversations.md, "Formats"): several ids in one string (``"D8:6; D9:17"``, ``"D9:1 D4:4"``),
a leading zero (``"D30:05"``), a stray colon (``"D:11:26"``). An id that names no turn after that is
bad input, except the few of the released ``locomo10.json`` listed in :data:`RELEASED_ERRATA`, which
are dropped from their question's evidence (each names a turn its conversation does not have).

``speaker_a`` plays the role ``"user"`` and ``speaker_b`` ``"assistant"``; turn ids are the
``dia_id``\\ s; session ids ``"session_<num>"``; a category 5 question is an abstention question.
"""

from __future__ import annotations

import calendar
import re
from typing import Any

from sim.conversations.formats.stream import (
    MAX_EVIDENCE,
    MAX_QUESTIONS,
    MAX_SESSIONS,
    MAX_TURNS,
    Bad,
    answer_text,
    bounded,
    check,
    field,
    ident,
)
from sim.conversations.model import Instance, Question, Turn

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
ADVERSARIAL = 5

#: Evidence ids of the released ``locomo10.json`` that name no turn of their conversation, by
#: ``sample_id``: dropped from the question's evidence rather than refusing the published file
#: (checked against the release's conversations 42 and 47; any other dangling id is bad input).
RELEASED_ERRATA: dict[str, frozenset[str]] = {
    "conv-42": frozenset({"D10:19", "D"}),
    "conv-47": frozenset({"D4:36"}),
}

_SESSION = re.compile(r"session_([1-9]\d{0,5})")
_SESSION_DATE = re.compile(r"session_([1-9]\d{0,5})_date_time")
_MONTHS = {m.lower(): i for i, m in enumerate(calendar.month_name) if m}
_DATE = re.compile(r"\s*(\d{1,2}):(\d{2})\s*([ap]m)\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})\s*", re.I)
_SPLIT = re.compile(r"[;,\s]+")
_DIA = re.compile(r"D:?(\d+):0*(\d+)")
#: The most digits of a session or turn number in an evidence id (bounded before ``int()``).
MAX_ID_DIGITS = 9


def parse_date(text: str, at: str) -> int:
    """A LoCoMo date (``"1:56 pm on 8 May, 2023"``) as whole seconds since 1970 UTC."""
    m = _DATE.fullmatch(text)
    month = _MONTHS.get(m[5].lower(), 0) if m else 0
    if m is None or not month:
        raise Bad(at, f'expected a date like "1:56 pm on 8 May, 2023", got {text[:40]!r}')
    hh, mm, day, year = int(m[1]), int(m[2]), int(m[4]), int(m[6])
    if not (1 <= hh <= 12 and mm < 60 and 1 <= day <= calendar.monthrange(year, month)[1]):
        raise Bad(at, f"not a valid date: {text[:40]!r}")
    hh = hh % 12 + (12 if m[3].lower() == "pm" else 0)
    return calendar.timegm((year, month, day, hh, mm, 0, 0, 0, 0))


def _resolve(
    raw: list[Any], ids: set[str], errata: frozenset[str], at: str, dropped: list[str] | None = None
) -> tuple[str, ...]:
    """A question's evidence list as turn ids (see the module docstring for the notations read); the
    errata pieces skipped are appended to *dropped*."""
    out: list[str] = []
    for j, entry in enumerate(bounded(raw, MAX_EVIDENCE, at, "ids")):
        check(entry, str, f"{at}[{j}]")
        for piece in _SPLIT.split(entry.replace("(", "").replace(")", "")):
            if not piece:
                continue
            if piece in ids:
                tid = piece
            else:
                m = _DIA.fullmatch(piece)
                if m and max(len(m[1]), len(m[2])) > MAX_ID_DIGITS:
                    raise Bad(f"{at}[{j}]", f"{piece[:40]!r}: a number longer than {MAX_ID_DIGITS} digits")
                tid = f"D{int(m[1])}:{int(m[2])}" if m else piece
                if tid not in ids:
                    if piece in errata:
                        if dropped is not None:
                            dropped.append(piece)
                        continue
                    raise Bad(f"{at}[{j}]", f"{piece[:40]!r} names no turn of the conversation")
            if tid not in out:
                out.append(tid)
    return tuple(out)


def build(data: Any, index: int) -> Instance:
    """One LoCoMo sample, validated (:class:`Bad` names the field)."""
    if not isinstance(data, dict):
        raise Bad("", "expected an object (a sample)")
    sample_id = ident(field(data, "sample_id", str, ""), "sample_id")
    conv = field(data, "conversation", dict, "")
    speaker_a = ident(field(conv, "speaker_a", str, "conversation"), "conversation.speaker_a")
    speaker_b = ident(field(conv, "speaker_b", str, "conversation"), "conversation.speaker_b")
    if speaker_a == speaker_b:
        raise Bad("conversation.speaker_b", f"the same name as speaker_a ({speaker_a!r})")
    roles = {speaker_a: "user", speaker_b: "assistant"}
    numbers = sorted(int(m[1]) for key in conv if (m := _SESSION.fullmatch(key)))
    bounded(numbers, MAX_SESSIONS, "conversation", "sessions")
    turns: list[Turn] = []
    sessions: list[str] = []
    ids: dict[str, str] = {}
    for num in numbers:
        key = f"session_{num}"
        at = f"conversation.{key}"
        session = check(conv[key], list, at)
        if not session:
            continue  # upstream skips an empty session
        date_key = f"{key}_date_time"
        if date_key not in conv:
            raise Bad(f"conversation.{date_key}", "missing")
        when = parse_date(check(conv[date_key], str, f"conversation.{date_key}"), f"conversation.{date_key}")
        if len(turns) + len(session) > MAX_TURNS:
            raise Bad(at, f"the sample has more than {MAX_TURNS:,} turns")
        k = len(sessions)
        sessions.append(key)
        for i, turn in enumerate(session):
            tat = f"{at}[{i}]"
            if not isinstance(turn, dict):
                raise Bad(tat, "expected an object (a turn)")
            speaker = field(turn, "speaker", str, tat)
            if speaker not in roles:
                raise Bad(f"{tat}.speaker", f"{speaker[:40]!r} is neither speaker_a nor speaker_b")
            dia = ident(field(turn, "dia_id", str, tat), f"{tat}.dia_id")
            if dia in ids:
                raise Bad(f"{tat}.dia_id", f"{dia!r} repeats {ids[dia]}")
            ids[dia] = tat
            text = field(turn, "text", str, tat)
            turns.append(Turn(dia, key, k, roles[speaker], speaker, text, when))
    if not turns:
        raise Bad("conversation", "no session_<num> holds a turn")
    for key in conv:
        m = _SESSION_DATE.fullmatch(key)
        if m is not None:  # a date without a session is allowed (the release has some); it must parse
            parse_date(check(conv[key], str, f"conversation.{key}"), f"conversation.{key}")
    qa = bounded(field(data, "qa", list, ""), MAX_QUESTIONS, "qa", "questions")
    errata = RELEASED_ERRATA.get(sample_id, frozenset())
    turn_ids = set(ids)
    questions: list[Question] = []
    skipped: list[tuple[str, str]] = []
    for j, item in enumerate(qa):
        at = f"qa[{j}]"
        if not isinstance(item, dict):
            raise Bad(at, "expected an object (a question)")
        text = field(item, "question", str, at)
        category = field(item, "category", int, at)
        if category not in CATEGORIES:
            raise Bad(f"{at}.category", f"expected 1 to 5, got {category}")
        adversarial = category == ADVERSARIAL
        if adversarial:
            if "adversarial_answer" not in item and "answer" not in item:
                raise Bad(f"{at}.adversarial_answer", "missing (a category 5 question)")
            for key in ("adversarial_answer", "answer"):
                if key in item:
                    answer_text(item[key], f"{at}.{key}")
            answer = None
        else:
            if "answer" not in item:
                raise Bad(f"{at}.answer", "missing")
            answer = answer_text(item["answer"], f"{at}.answer")
        pieces: list[str] = []
        evidence = _resolve(field(item, "evidence", list, at), turn_ids, errata, f"{at}.evidence", pieces)
        skipped.extend((f"{sample_id}:{j}", p) for p in pieces)
        questions.append(
            Question(
                question_id=f"{sample_id}:{j}",
                question_type=f"category-{category}",
                question=text,
                answer=answer,
                abstention=adversarial,
                evidence=evidence,
                after_turn=len(turns),
                time_s=None,
            )
        )
    if not questions:
        raise Bad("qa", "no questions")
    return Instance(
        "locomo", index, sample_id, tuple(sessions), tuple(turns), tuple(questions), tuple(skipped)
    )
