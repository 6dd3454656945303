"""Synthetic LongMemEval and LoCoMo files of the real shape and size (``memsim workload synth``, issue 28).

Scale can be measured without the released files: ``synth longmemeval --instances 500 --sessions 48
--turns 10`` is ``longmemeval_s``-sized (about 112,000 cl100k tokens per instance), ``--sessions 500``
``_m``-sized (about 5.5 MB of JSON per instance). The file is written as a stream, one instance at a time,
so memory stays flat whatever its size, and the same seed gives a byte-identical file.

What is drawn (each instance from its own stream, ``sha256(seed, "synth.<kind>.<index>")``):

* **text**: :func:`sim.text.filler`, Zipf-weighted sentences from memsim's shipped vocabulary; LongMemEval
  user turns of 60 to 180 cl100k tokens and assistant turns of 173 to 519 (233 on average, so
  ``--sessions 48 --turns 10`` makes ~112k tokens as ``_s`` does); LoCoMo turns of 12 to 50 tokens;
* **LongMemEval**: the six ``question_type``\\ s in turn, every sixteenth instance an abstention
  (``_abs``, 6% as in the release's 30 of 500); one evidence session (two or three for
  ``knowledge-update`` and ``multi-session``) placed at drawn positions across the haystack, named
  ``answer_<id>_<n>`` as upstream names them; in each, one turn (an assistant turn for
  ``single-session-assistant``) states the answer and carries ``has_answer: true``; a knowledge update's
  earlier sessions state an older value. Dates three to thirty hours apart, before ``question_date``;
* **LoCoMo**: two named speakers alternating, ``dia_id`` ``D<session>:<turn>``, sessions days apart; one
  question per three turns, the first five of categories 1 to 5 and the rest drawn in the release's
  proportions (14%, 16%, 5%, 42%, 23%); each evidence turn (two in different sessions for multi-hop)
  states the answer; category 5 asks about the other speaker and carries ``adversarial_answer`` only.

Answers are short phrases (a color, a noun, a number) that appear verbatim in their evidence turns.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, BinaryIO

from sim.conversations.formats.stream import MAX_SESSIONS, MAX_TURNS
from sim.errors import UsageError
from sim.rng import derive_seed
from sim.text import FACT_VALUES, filler

KINDS = ("longmemeval", "locomo")
#: The largest synthetic file's instance count, and the sizes of one instance.
MAX_SYNTH_INSTANCES = 100_000
MAX_SYNTH_TURNS_PER_SESSION = 1_000
#: Characters per cl100k token of memsim's filler (DESIGN.md, "Filler samples a fixed pool").
CHARS_PER_TOKEN = 4.73

QUESTION_TYPES = (
    "single-session-user", "single-session-assistant", "single-session-preference",
    "temporal-reasoning", "knowledge-update", "multi-session",
)  # fmt: skip
ABSTENTION_EVERY = 16
#: LoCoMo's categories in the release's proportions (282, 321, 96, 841, 446 of 1,986 questions).
CATEGORY_WEIGHTS = (0.142, 0.162, 0.048, 0.423, 0.225)

SUBJECTS = (
    "favourite cafe", "gym locker number", "bike lock code", "book club pick", "sister's new city",
    "allotment plot", "piano teacher", "usual train", "go-to pasta shape", "running shoe brand",
    "dentist's street", "fantasy team name", "guitar's nickname", "wifi network name", "balcony plant",
    "weekend market stall", "desk neighbour", "podcast of the month", "tea blend", "hiking boots",
)  # fmt: skip
NOUNS = (
    "harbor", "lantern", "meadow", "orchard", "compass", "falcon", "pebble", "willow", "quarry", "ember",
    "canyon", "thistle", "beacon", "saddle", "marble", "juniper", "spindle", "cobalt", "tundra", "atlas",
)  # fmt: skip
EVENTS = (
    "repainted the kitchen", "ran a half marathon", "adopted a kitten", "started a pottery class",
    "fixed the old bicycle", "visited the coast", "planted tomatoes", "finished a jigsaw of 2,000 pieces",
)  # fmt: skip
NAMES = (
    ("Caro", "Mel"), ("Jun", "Ines"), ("Ravi", "Hanna"), ("Ola", "Teo"), ("Mira", "Sam"), ("Luz", "Ken"),
)  # fmt: skip


def _answer(r: random.Random) -> str:
    return f"{r.choice(FACT_VALUES)} {r.choice(NOUNS)} {r.randint(2, 99)}"


def _text(r: random.Random, low: int, high: int) -> str:
    return filler(r, int(r.randint(low, high) * CHARS_PER_TOKEN))


def _with(text: str, sentence: str, r: random.Random) -> str:
    """*text* with *sentence* put at a drawn sentence boundary."""
    cuts = [i + 1 for i, ch in enumerate(text) if ch == "." and i + 1 < len(text)]
    at = r.choice(cuts) if cuts else len(text)
    return f"{text[:at]} {sentence}{text[at:]}".strip()


def _lme_date(when: datetime) -> str:
    return when.strftime("%Y/%m/%d (%a) %H:%M")


def longmemeval_instance(seed: int, k: int, sessions: int, turns: int) -> dict[str, Any]:
    """Synthetic LongMemEval instance *k* of *seed* (see the module docstring)."""
    r = random.Random(derive_seed(seed, f"synth.longmemeval.{k}"))
    qtype = QUESTION_TYPES[k % len(QUESTION_TYPES)]
    abstention = k % ABSTENTION_EVERY == ABSTENTION_EVERY - 1
    qid = f"synth_{k:06d}" + ("_abs" if abstention else "")
    subject, asked = r.sample(SUBJECTS, 2)
    answer = _answer(r)
    n_ev = min(sessions, r.randint(2, 3) if qtype in ("knowledge-update", "multi-session") else 1)
    at = sorted(r.sample(range(sessions), n_ev))
    on_assistant = qtype == "single-session-assistant" and turns > 1
    asked_at = datetime(2023, 5, 20, 9, 0) + timedelta(days=k % 365, minutes=r.randint(0, 600))
    gaps = [r.randint(3, 30) for _ in range(sessions)]
    when = asked_at - timedelta(hours=sum(gaps))
    ids, dates, hay = [], [], []
    for s in range(sessions):
        date, when = when, when + timedelta(hours=gaps[s])
        evidence = s in at
        session: list[dict[str, Any]] = []
        for i in range(turns):
            role = "user" if i % 2 == 0 else "assistant"
            lo, hi = (60, 180) if role == "user" else (173, 519)
            session.append({"role": role, "content": _text(r, lo, hi)})
        if evidence:
            j = at.index(s)
            value = answer if j == n_ev - 1 or qtype != "knowledge-update" else _answer(r)
            slots = [i for i in range(turns) if (i % 2 == 1) == on_assistant]
            i = r.choice(slots)
            said = f"Your {subject} is {value}." if on_assistant else f"By the way, my {subject} is {value}."
            session[i]["content"] = _with(str(session[i]["content"]), said, r)
            for t, turn in enumerate(session):
                turn["has_answer"] = t == i
        ids.append(f"answer_{k:06d}_{at.index(s) + 1}" if evidence else f"synth_{k:06d}_{s}")
        dates.append(_lme_date(date))
        hay.append(session)
    return {
        "question_id": qid,
        "question_type": qtype,
        "question": f"What is my {asked if abstention else subject}?",
        "answer": f"You did not mention your {asked}; you mentioned your {subject}."
        if abstention
        else answer,
        "question_date": _lme_date(asked_at),
        "haystack_session_ids": ids,
        "haystack_dates": dates,
        "haystack_sessions": hay,
        "answer_session_ids": [ids[s] for s in at],
    }


def _locomo_date(when: datetime) -> str:
    hour = when.hour % 12 or 12
    return f"{hour}:{when.minute:02d} {'am' if when.hour < 12 else 'pm'} on {when.day} {when:%B}, {when.year}"


def locomo_sample(seed: int, k: int, sessions: int, turns: int) -> dict[str, Any]:
    """Synthetic LoCoMo sample *k* of *seed* (see the module docstring)."""
    r = random.Random(derive_seed(seed, f"synth.locomo.{k}"))
    a, b = NAMES[k % len(NAMES)]
    conv: dict[str, Any] = {"speaker_a": a, "speaker_b": b}
    when = datetime(2023, 1, 8, 10, 0) + timedelta(days=r.randint(0, 200))
    texts: list[list[str]] = []
    speakers: list[list[str]] = []
    dates: list[datetime] = []
    for _s in range(sessions):
        when += timedelta(days=r.randint(3, 20), minutes=r.randint(0, 600))
        dates.append(when)
        first = r.randint(0, 1)
        speakers.append([(a, b)[(first + i) % 2] for i in range(turns)])
        texts.append([_text(r, 12, 50) for _ in range(turns)])
    n_q = max(5, round(sessions * turns / 3))
    qa = []
    for q in range(n_q):
        category = q + 1 if q < 5 else r.choices(range(1, 6), weights=CATEGORY_WEIGHTS)[0]
        hops = 2 if category == 1 and sessions > 1 else 1
        where = [(s, r.randrange(turns)) for s in r.sample(range(sessions), hops)]
        subject, answer = r.choice(SUBJECTS), _answer(r)
        s0, i0 = where[0]
        speaker = speakers[s0][i0]
        if category == 2:
            event = r.choice(EVENTS)
            answer = f"{dates[s0].day} {dates[s0]:%B} {dates[s0].year}"
            texts[s0][i0] = _with(texts[s0][i0], f"Today, {answer}, I {event}.", r)
            question = f"When did {speaker} say they {event}?"
        else:
            for s, i in where:
                texts[s][i] = _with(texts[s][i], f"My {subject} is {answer}.", r)
            if category == 5:
                other = b if speaker == a else a
                question = f"What is {other}'s {subject}?"
            else:
                question = f"What is {speaker}'s {subject}?"
        item: dict[str, Any] = {"question": question}
        item["adversarial_answer" if category == 5 else "answer"] = answer
        item["evidence"] = [f"D{s + 1}:{i + 1}" for s, i in sorted(where)]
        item["category"] = category
        qa.append(item)
    for s in range(sessions):
        conv[f"session_{s + 1}_date_time"] = _locomo_date(dates[s])
        conv[f"session_{s + 1}"] = [
            {"speaker": speakers[s][i], "dia_id": f"D{s + 1}:{i + 1}", "text": texts[s][i]}
            for i in range(turns)
        ]
    return {
        "qa": qa,
        "conversation": conv,
        "event_summary": {},
        "observation": {},
        "session_summary": {},
        "sample_id": f"synth-conv-{k}",
    }


def check_sizes(kind: str, instances: int, sessions: int, turns: int) -> None:
    """Refuse a request outside the bounds memsim's own loader reads back (one line)."""
    if kind not in KINDS:
        raise UsageError(f"unknown workload kind {kind!r} (expected longmemeval or locomo)")
    if not 1 <= instances <= MAX_SYNTH_INSTANCES:
        raise UsageError(f"--instances must be 1 to {MAX_SYNTH_INSTANCES:,}, not {instances}")
    if not 1 <= sessions <= MAX_SESSIONS:
        raise UsageError(f"--sessions must be 1 to {MAX_SESSIONS:,}, not {sessions}")
    if not 1 <= turns <= MAX_SYNTH_TURNS_PER_SESSION:
        raise UsageError(f"--turns must be 1 to {MAX_SYNTH_TURNS_PER_SESSION:,}, not {turns}")
    if sessions * turns > MAX_TURNS:
        raise UsageError(
            f"--sessions x --turns is {sessions * turns:,} turns per instance; "
            f"the loader's limit is {MAX_TURNS:,}"
        )


def write(
    kind: str,
    fh: BinaryIO,
    *,
    instances: int,
    sessions: int,
    turns: int,
    seed: int,
    on_instance: Callable[[int], None] | None = None,
) -> int:
    """Stream a synthetic *kind* file of *instances* to *fh*, one instance in memory at a time; returns
    the bytes written. *on_instance* is called after each instance (a progress bar)."""
    check_sizes(kind, instances, sessions, turns)
    make = longmemeval_instance if kind == "longmemeval" else locomo_sample
    size = fh.write(b"[")
    for k in range(instances):
        body = json.dumps(make(seed, k, sessions, turns), ensure_ascii=False).encode("utf-8")
        size += fh.write(b",\n" if k else b"\n") + fh.write(body)
        if on_instance is not None:
            on_instance(k)
    size += fh.write(b"\n]\n")
    return size


#: Seconds of ``memsim bench --workload`` work per conversation turn, on one worker with the default
#: designs (four, and the three baselines) and windows: 20 instances of 48 x 10 turns ran in 10 s
#: (measured 2026-12-06 on a loaded 2-core machine; a rough rate for a size warning, not a benchmark).
BENCH_SECONDS_PER_TURN = 0.001
#: ``--instances``' default: about a minute of that bench work at the default 48 sessions of 10 turns.
DEFAULT_INSTANCES = 120


def plan(kind: str, instances: int, sessions: int, turns: int, seed: int) -> tuple[int, float]:
    """(about how many bytes the file will have, about how many seconds a default bench of it takes on
    one worker): the first instance's size times *instances*, and the turns times
    :data:`BENCH_SECONDS_PER_TURN`."""
    make = longmemeval_instance if kind == "longmemeval" else locomo_sample
    first = len(json.dumps(make(seed, 0, sessions, turns), ensure_ascii=False).encode("utf-8"))
    return first * instances, instances * sessions * turns * BENCH_SECONDS_PER_TURN


def _about(seconds: float) -> str:
    if seconds < 90:
        return f"{max(1, round(seconds)):,} s"
    if seconds < 5400:
        return f"{round(seconds / 60):,} min"
    return f"{seconds / 3600:,.1f} h"


def run_cli(
    *, kind: str, instances: int, sessions: int, turns: int, seed: int, out: Path, progress: bool
) -> tuple[Path, int]:
    """``memsim workload synth``: validate, stream the file to a hidden name, rename it into place."""
    from sim.outputs import Outputs
    from sim.progress import progress_bar

    check_sizes(kind, instances, sessions, turns)
    outputs = Outputs()
    target = outputs.file(out, "--out")
    size, seconds = plan(kind, instances, sessions, turns, seed)
    from sim.progress import phase

    phase(
        f"workload synth: {instances:,} {kind} instances of {sessions:,} sessions x {turns:,} turns, about "
        f"{size / 1e6:,.1f} MB; `memsim bench --workload {kind}:{out.name}` runs about {_about(seconds)} of "
        "work on it (default designs and windows, one worker)"
    )
    written = 0
    with outputs.transaction(), progress_bar(f"synth {kind}", instances, enabled=progress) as (bar, task):

        def writer(tmp: Path) -> None:
            nonlocal written
            with open(tmp, "wb") as fh:
                written = write(
                    kind, fh, instances=instances, sessions=sessions, turns=turns, seed=seed,
                    on_instance=lambda _k: bar.advance(task),
                )  # fmt: skip

        outputs.write_with(target, writer)
    return target, written
