"""The three baselines of the conversation benchmark (issue 28). They are not designs: they read the
evidence labels, which is what makes them bounds.

* ``oracle``: exactly the question's evidence turns (its turn-level recall is 1.0 wherever they fit
  the window; over it the request is still scored as built, and flagged);
* ``oracle-sessions``: the evidence sessions whole, as LongMemEval's ``_oracle`` file gives them;
* ``full``: the whole haystack, as LongMemEval's full-context baseline.

Baselines pass the same window gate as designs (:mod:`sim.conversations.window`): a request over the
window delivers nothing, so ``full`` scores 0 on a conversation longer than the window. ``--designs``
accepts their names (they always run, :func:`without_baselines`).

Each request is a fixed system prompt, a header part per session shown (its id and the dataset's date),
one part per turn (``speaker: text``) and the question (with the question's date where there is one).
"""

from __future__ import annotations

import datetime as dt

from sim.conversations.model import Instance, Question, Turn
from sim.names import BASELINE_NAMES

BASELINES = BASELINE_NAMES  # the labels sim.names reserves (no design may take one)
BASELINE_SYSTEM_PROMPT = (
    "You are a helpful assistant with the conversation history below. Answer the question at the end from it."
)


def without_baselines(text: str | None) -> str | None:
    """``--designs`` of a conversation workload with the baselines taken out: they always run, so naming
    one is accepted and changes nothing. Naming only baselines runs only them (``"oracle"``, which
    :func:`sim.bench.tasks.parse_designs` reads as no design but the bound)."""
    if text is None:
        return None
    labels = [x.strip() for x in text.split(",") if x.strip()]
    kept = [x for x in labels if x not in BASELINES]
    if labels and not kept:
        return "oracle"
    return ",".join(kept) if len(kept) < len(labels) else text


def date_text(time_s: int | None) -> str:
    """A dataset date as ``YYYY-MM-DD HH:MM`` UTC ("" when the format has none)."""
    if time_s is None:
        return ""
    return dt.datetime.fromtimestamp(time_s, dt.UTC).strftime("%Y-%m-%d %H:%M")


def session_header(session_id: str, time_s: int | None) -> str:
    when = date_text(time_s)
    return f"### Session {session_id}" + (f" ({when})" if when else "")


def question_part(q: Question) -> str:
    when = date_text(q.time_s)
    return (f"Current date: {when}\n" if when else "") + f"Question: {q.question}"


def _parts(turns: list[Turn], q: Question) -> tuple[str, ...]:
    parts = [BASELINE_SYSTEM_PROMPT]
    session: str | None = None
    for t in turns:
        if t.session_id != session:
            session = t.session_id
            parts.append(session_header(t.session_id, t.time_s))
        parts.append(f"{t.speaker}: {t.text}")
    parts.append(question_part(q))
    return tuple(parts)


class FullPrefix:
    """The ``full`` baseline's requests for one instance, built once: every turn's part (and the session
    headers between them) in one list, with its cumulative cl100k counts, so the request for a question
    after turn *k* is a prefix of it (the same parts :func:`baseline_request` builds) and its count a
    difference of sums (the same total :func:`sim.conversations.metrics.request_tokens` gives)."""

    def __init__(self, instance: Instance) -> None:
        from sim.tokens import count_tokens

        self.instance = instance
        self.parts: list[str] = []
        #: ``ends[k]``: how many of :attr:`parts` show the turns before turn *k*.
        self.ends: list[int] = [0]
        session: str | None = None
        for t in instance.turns:
            if t.session_id != session:
                session = t.session_id
                self.parts.append(session_header(t.session_id, t.time_s))
            self.parts.append(f"{t.speaker}: {t.text}")
            self.ends.append(len(self.parts))
        self.cum = [0]
        for p in self.parts:
            self.cum.append(self.cum[-1] + count_tokens(p))
        self.system = count_tokens(BASELINE_SYSTEM_PROMPT)

    def request(self, q: Question) -> tuple[tuple[str, ...], int]:
        """The parts of ``full``'s request for *q* and their exact cl100k count."""
        from sim.tokens import count_tokens

        end = self.ends[len(range(len(self.instance.turns))[: q.after_turn])]  # the turns[: after_turn] slice
        last = question_part(q)
        parts = (BASELINE_SYSTEM_PROMPT, *self.parts[:end], last)
        return parts, self.system + self.cum[end] + count_tokens(last)


def baseline_request(name: str, instance: Instance, q: Question) -> tuple[str, ...]:
    """The request baseline *name* sends for question *q* of *instance* (turns before the question only)."""
    before = instance.turns[: q.after_turn]
    if name == "oracle":
        wanted = set(q.evidence)
        return _parts([t for t in before if t.turn_id in wanted], q)
    if name == "oracle-sessions":
        evidence = set(q.evidence)
        sessions = {t.session_id for t in before if t.turn_id in evidence}
        return _parts([t for t in before if t.session_id in sessions], q)
    if name == "full":
        return _parts(list(before), q)
    raise ValueError(f"unknown baseline {name!r}: expected one of {BASELINES}")
