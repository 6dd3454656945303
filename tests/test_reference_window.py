"""The window reference design (issue 39): the same messages kept as LangChain's ``trim_messages`` with
``strategy="last"`` on generated histories, the incremental window equal to trimming the whole history,
the start-on rule's lost reason, and the design-level conventions."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reference.common import AI, HUMAN, SYSTEM, message
from reference.window.model import Window, trim_last
from sim.testing import check_adapter, check_coverage, check_report
from sim.tokens import count_tokens

lc = pytest.importorskip("langchain_core.messages")

ROOT = Path(__file__).resolve().parent.parent
WORDS = ("the", "cat", "Biscuit", "FACT-0001=amber", "week", "🙂", "naïve", "42", "—", "\n")

texts = st.lists(st.sampled_from(WORDS), min_size=0, max_size=30).map(" ".join)
histories = st.lists(st.tuples(st.sampled_from((HUMAN, AI)), texts), min_size=0, max_size=14)


def _lc(role: str, text: str) -> object:
    cls = {HUMAN: lc.HumanMessage, AI: lc.AIMessage, SYSTEM: lc.SystemMessage}[role]
    return cls(content=text)


def _counter(msgs: list) -> int:
    """memsim's per-message exact cl100k count, summed: the token_counter the window's docstring states."""
    return sum(count_tokens(m.content) for m in msgs)


@given(histories, st.booleans(), st.integers(0, 200), st.booleans(), texts)
def test_trim_last_keeps_what_trim_messages_keeps(history, with_system, max_tokens, start_on_human, sys_text):
    """On any history (with or without a leading system message, either start-on setting) trim_last keeps
    exactly the messages trim_messages(strategy="last", include_system=True, allow_partial=False) keeps."""
    msgs = ([message(SYSTEM, sys_text)] if with_system else []) + [message(r, t) for r, t in history]
    ours = trim_last(msgs, max_tokens, start_on_human=start_on_human)
    theirs = lc.trim_messages(
        [_lc(m.role, m.text) for m in msgs],
        max_tokens=max_tokens,
        token_counter=_counter,
        strategy="last",
        include_system=True,
        start_on="human" if start_on_human else None,
        allow_partial=False,
    )
    assert [(m.role, m.text) for m in ours] == [
        ({"human": HUMAN, "ai": AI, "system": SYSTEM}[m.type], m.content) for m in theirs
    ]


@given(histories, st.integers(1, 200), texts)
def test_the_window_is_trim_last_of_the_whole_history(history, max_tokens, q_text):
    """The window that forgets what can no longer fit sends what trimming the whole history would."""
    system = message(SYSTEM, "You are a helpful assistant.")
    w = Window(system, max_tokens)
    full = []
    for k, (role, text) in enumerate(history):
        m = message(role, text, f"t{k}")
        w.add(m)
        full.append(m)
        q = message(HUMAN, f"Question: {q_text}")
        expected = trim_last([system, *full, q], max_tokens)
        if expected[-1] is not q:
            expected.append(q)
        assert w.context(q) == expected


def test_start_on_human_cuts_a_fitting_ai_turn():
    """An AI turn that fits the window is cut when the human turn before it does not fit: its lost reason
    says so; with start_on=None it is kept."""
    system = message(SYSTEM, "sys")
    big = message(HUMAN, "word " * 300, "t0")
    reply = message(AI, "Biscuit is the cat.", "t1")
    q = message(HUMAN, "Question: what is my cat called?")
    budget = system.tokens + reply.tokens + q.tokens + 5
    for start_on, expect in ((True, "dropped-by-start-on-human"), (False, None)):
        w = Window(system, budget, start_on_human=start_on)
        w.add(big)
        w.add(reply)
        sent = w.context(q)
        assert (reply in sent) is (not start_on)
        assert w.lost_reason("t0") == "trimmed-out-of-window"
        if expect:
            assert w.lost_reason("t1") == expect


@pytest.mark.parametrize("check", [check_report, check_coverage])
def test_the_window_declares_its_report_and_coverage(check):
    assert check("window", ROOT) == []


def test_the_window_keeps_the_adapter_contract():
    assert check_adapter("window", budget=6000) == []


def test_the_window_is_labelled_a_reference_design():
    from sim.registry import design, label

    assert design("window").kind == "reference"
    assert label("window") == "window (reference design of a documented algorithm)"
    assert label("nemsy") == "nemsy"


@pytest.mark.skipif(not os.environ.get("MEMSIM_LOCOMO_FILE"), reason="MEMSIM_LOCOMO_FILE is not set")
def test_window_recall_on_locomo_matches_trim_messages_itself():
    """On the first LoCoMo conversation at 8,000 tokens the benchmark's turn recall is what trim_messages
    itself keeps of the same messages (an independent count)."""
    from reference.common import SYSTEM_PROMPT, question_message, step_message
    from sim.bench.tasks import parse_designs
    from sim.conversations.formats import iter_instances
    from sim.conversations.metrics import Scorer, present
    from sim.conversations.run import conversation_steps, run_design

    inst = next(iter(iter_instances("locomo", Path(os.environ["MEMSIM_LOCOMO_FILE"]))))
    rows = run_design(inst, parse_designs("window")[0], 8000)
    scorer = Scorer(inst)
    history: list = [lc.SystemMessage(content=SYSTEM_PROMPT)]
    got: dict[str, tuple[int, int]] = {}
    for step in conversation_steps(inst):
        m = step_message(step)
        if m is not None:
            history.append(_lc(m.role, m.text))
            continue
        q = question_message(step)
        kept = lc.trim_messages([*history, _lc(HUMAN, q.text)], max_tokens=8000, token_counter=_counter,
                                strategy="last", include_system=True, start_on="human")  # fmt: skip
        blob = "\n".join(k.content for k in kept)
        ev = scorer.evidence(scorer.questions[step.question_id])
        got[step.question_id] = (len(ev), sum(present(t.text, blob) for t in ev))
    assert [(r["evidence_turns"], r["evidence_in_context"]) for r in rows] == [
        got[r["question_id"]] for r in rows
    ]
