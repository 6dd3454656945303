"""A native JSONL workload with turn ids as one :class:`~sim.conversations.model.Instance`.

memsim's own workload format (:class:`sim.workload.WorkloadLine`, README "The benchmark"), read as a
conversation: every non-blank line is a turn (role ``"user"``, no session, no date) whose text is the
line's observation with any fact token it lacks appended, as the fact-token benchmark reads it; its id
is the line's ``turn_id``, or ``"L<line>"`` (the 1-based line number) when it names none.

A line with ``probe`` (a fact id), ``evidence`` (turn ids of earlier lines) or ``question`` is also a
question, asked right after that line's turn (``after_turn`` counts the turns up to and including it):

* its ``evidence`` is the turn ids it names, then, for a fact probe, every earlier line that carried a
  token of that fact (in file order, no repeats);
* its text is ``question``, or for a fact probe the fact-token benchmark's own question
  (``"Question: what is the value of FACT-0001?"``); an evidence probe without ``question`` is bad input;
* its gold answer is ``answer``, or for a fact probe the value of the fact's last token before it
  (``amber``), else None; a native question is never an abstention question;
* its id and type are the probe line's turn id and ``"probe"``.

Bad input, with the line number: every check of the fact-token loader, a turn id used twice (explicit or
``"L<line>"``), an evidence id naming no earlier line's turn, ``answer`` or ``question`` on a line that
asks nothing. :func:`has_turn_labels` tells a conversation file (some line has ``turn_id`` or
``evidence``) from a fact-token one, which keeps today's benchmark unchanged.
"""

from __future__ import annotations

import os
from pathlib import Path

from sim.conversations.model import Instance, Question, Turn
from sim.errors import UsageError
from sim.workload import MAX_WORKLOAD_LINES, check_workload_file, iter_workload_lines, line_observation


def has_turn_labels(path: str | os.PathLike[str]) -> bool:
    """Whether some line of the JSONL file *path* carries ``turn_id`` or ``evidence`` (a conversation
    file for the conversation benchmark). Lines that are not JSON objects are passed over here (the
    loader that reads the file reports them); a file that cannot be read is False for the same reason."""
    import json

    try:
        p = check_workload_file(path)
        with open(p, "rb") as fh:
            for lineno, raw in enumerate(fh, 1):
                if lineno > MAX_WORKLOAD_LINES:
                    return False
                if b'"turn_id"' not in raw and b'"evidence"' not in raw:
                    continue
                try:
                    data = json.loads(raw)
                except (ValueError, RecursionError):
                    continue
                if isinstance(data, dict) and ("turn_id" in data or "evidence" in data):
                    return True
    except (UsageError, OSError):
        return False
    return False


def iter_native(path: str | os.PathLike[str]) -> Instance:
    """The whole file as one instance (see the module docstring); one-line errors name the line."""
    turns: list[Turn] = []
    questions: list[Question] = []
    lines_of: dict[str, int] = {}
    carriers: dict[str, list[str]] = {}  # fact id -> turn ids of the lines that carried it
    values: dict[str, str] = {}  # fact id -> its latest value
    for where, lineno, line in iter_workload_lines(path):
        tid = line.turn_id if line.turn_id is not None else f"L{lineno}"
        if tid in lines_of:
            raise UsageError(f"{where}: turn_id: {tid!r} is already line {lines_of[tid]}'s turn id")
        asks = line.probe is not None or line.evidence is not None or line.question is not None
        if line.answer is not None and not asks:
            raise UsageError(f"{where}: answer: a line with no probe, evidence or question asks nothing")
        evidence: list[str] = []
        for j, eid in enumerate(line.evidence or ()):
            if eid not in lines_of:
                raise UsageError(f"{where}: evidence[{j}]: {eid[:60]!r} names no earlier line's turn")
            if eid not in evidence:
                evidence.append(eid)
        answer = line.answer
        text = line.question
        if line.probe is not None:
            if line.probe not in carriers:
                raise UsageError(f"{where}: probe: {line.probe} was not carried by an earlier line")
            evidence += [t for t in carriers[line.probe] if t not in evidence]
            text = text if text is not None else f"Question: what is the value of {line.probe}?"
            answer = answer if answer is not None else values[line.probe]
        elif asks and text is None:
            raise UsageError(f"{where}: question: missing (an evidence probe needs its question text)")
        lines_of[tid] = lineno
        turns.append(Turn(tid, "", 0, "user", "user", line_observation(line), None))
        for token in line.facts:
            fid, value = token.split("=", 1)
            carriers.setdefault(fid, []).append(tid)
            values[fid] = value
        if asks:
            assert text is not None
            questions.append(Question(tid, "probe", text, answer, False, tuple(evidence), len(turns), None))
    if not turns:
        raise UsageError(f"workload {path} has no steps")
    if not questions:
        raise UsageError(f"workload {path} asks no question (no line has probe, evidence or question)")
    return Instance("native", 0, Path(path).stem, ("",), tuple(turns), tuple(questions))
