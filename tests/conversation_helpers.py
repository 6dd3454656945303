"""Small conversation instances built in code for the conversation benchmark's tests (issue 28)."""

from __future__ import annotations

import random

from sim.conversations.model import Instance, Question, Turn

WORDS = [
    "garden",
    "river",
    "morning",
    "coffee",
    "travel",
    "budget",
    "sister",
    "concert",
    "recipe",
    "bicycle",
    "museum",
    "library",
    "weekend",
    "project",
    "deadline",
    "doctor",
    "vacation",
    "camera",
    "painting",
    "marathon",
    "kitchen",
    "neighbor",
    "festival",
    "apartment",
]


def sentence(r: random.Random, n: int) -> str:
    return " ".join(r.choice(WORDS) for _ in range(n)).capitalize() + "."


def make_instance(
    index: int = 0,
    *,
    sessions: int = 6,
    turns: int = 6,
    words: int = 40,
    seed: int = 0,
    questions: int = 1,
    workload: str = "longmemeval",
    dated: bool = True,
) -> Instance:
    """A LongMemEval-shaped instance: *sessions* sessions of *turns* alternating user/assistant turns,
    each a unique text of about *words* words; *questions* questions at the end, each with two evidence
    turns (a user turn in an early session and one in a late one) and an answer taken from one of them."""
    r = random.Random(seed * 1000 + index)
    ts: list[Turn] = []
    sids = tuple(f"s{index}_{k}" for k in range(sessions))
    for k, sid in enumerate(sids):
        for i in range(turns):
            role = "user" if i % 2 == 0 else "assistant"
            text = f"[{sid}:{i}] " + " ".join(sentence(r, 8) for _ in range(max(1, words // 8)))
            ts.append(
                Turn(f"{sid}:{i}", sid, k, role, role, text, 1_680_000_000 + 86_400 * k if dated else None)
            )
    qs = []
    for j in range(questions):
        a = ts[(j * 2) % (turns * max(1, sessions // 2))]
        b = ts[-turns + (j * 2) % turns]
        answer = a.text.split()[3]
        qs.append(
            Question(
                f"q{index}_{j}",
                "multi-session" if j % 2 == 0 else "single-session-user",
                f"What did I say about {answer}?",
                answer,
                False,
                (a.turn_id, b.turn_id),
                len(ts),
                1_680_000_000 + 86_400 * sessions if dated else None,
            )
        )
    return Instance(workload, index, f"inst{index}", sids, tuple(ts), tuple(qs))
