"""Real conversations as memsim reads them: instances of turns and questions (issue 28).

The shared, frozen shape every conversation loader produces (:mod:`sim.conversations.formats`:
LongMemEval, LoCoMo, native JSONL with turn ids) and the conversation benchmark consumes
(:mod:`sim.conversations.run`). Text is the dataset's text, unchanged. Evidence labels exist only for
scoring: no design, adapter or policy may read ``Question.evidence`` or ``Turn.is_evidence``.

This module is the contract between the loaders and the runner; extend it only additively.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Turn:
    """One turn of a conversation, in dataset order.

    ``turn_id`` is unique within its instance: LongMemEval ``"<session_id>:<i>"`` (``i`` the 0-based
    position of the turn in its session), LoCoMo the turn's ``dia_id`` (``"D3:7"``), native JSONL the
    line's ``turn_id`` (or ``"L<line>"`` when the line names none). ``session_id`` is LongMemEval's
    ``haystack_session_ids[k]``, LoCoMo's ``"session_<N>"``, native ``""``; ``session_index`` is the
    0-based position of the session in the instance. ``role`` is ``"user"`` or ``"assistant"``
    (LongMemEval's role; LoCoMo: ``speaker_a`` is ``"user"``, ``speaker_b`` ``"assistant"``; native
    ``"user"``); ``speaker`` is the dataset's speaker name where it has one, else the role.
    ``time_s`` is the dataset's date of the turn's session in whole seconds since 1970-01-01 UTC (naive
    dates read as UTC), or None where the format has no dates.
    """

    turn_id: str
    session_id: str
    session_index: int
    role: str
    speaker: str
    text: str
    time_s: int | None


@dataclass(frozen=True, slots=True)
class Question:
    """One question and its gold labels (labels for scoring only).

    ``question_type``: LongMemEval's ``question_type``; LoCoMo ``"category-<n>"``; native ``"probe"``.
    ``answer`` is the gold answer as a string, or None for an abstention question (LongMemEval: the
    ``question_id`` ends ``_abs``) and for LoCoMo's adversarial category (it carries
    ``adversarial_answer``), where ``abstention`` is True. ``evidence`` lists turn ids of the instance.
    ``after_turn`` is how many of the instance's turns precede the question (LongMemEval and LoCoMo:
    all of them; native: the probe line's position). ``time_s`` as for turns (LongMemEval's
    ``question_date``), or None.
    """

    question_id: str
    question_type: str
    question: str
    answer: str | None
    abstention: bool
    evidence: tuple[str, ...]
    after_turn: int
    time_s: int | None


@dataclass(frozen=True, slots=True)
class Instance:
    """One conversation with its questions: a LongMemEval instance (one question over its own haystack),
    a LoCoMo sample (one long conversation, about 200 questions), or a native workload file (one).

    ``workload`` is ``"longmemeval"``, ``"locomo"`` or ``"native"``; ``index`` the 0-based position
    in the file; ``instance_id`` LongMemEval's ``question_id``, LoCoMo's ``sample_id``, native the file's
    stem. ``sessions`` lists the session ids in order (``session_index`` indexes it). ``dropped`` lists
    the ``(question_id, evidence id)`` pairs the loader dropped as known errata of a released file
    (LoCoMo's three dangling ids, :data:`sim.conversations.formats.locomo.RELEASED_ERRATA`): recorded in
    the run's provenance and warned about once.
    """

    workload: str
    index: int
    instance_id: str
    sessions: tuple[str, ...]
    turns: tuple[Turn, ...]
    questions: tuple[Question, ...]
    dropped: tuple[tuple[str, str], ...] = ()
