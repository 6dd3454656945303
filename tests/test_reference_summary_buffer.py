"""The summary-buffer reference design (issue 39): LangChain's prune (pop from the front until within
max_token_limit), the summary as a system message before the buffer, the seeded summarizer's lost reasons,
the claim's four directions and scope, and the design-level conventions."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reference.common import AI, HUMAN, SYSTEM, message
from reference.summary_buffer.model import SummaryBuffer
from reference.summary_buffer.policies import SUMMARY_HEAD, Summarizer
from sim.testing import check_adapter, check_claims, check_coverage, check_report, check_scope

ROOT = Path(__file__).resolve().parent.parent
SYSTEM_MSG = message(SYSTEM, "sys")


def _buffer(
    limit: int, keep: float = 1.0, cap: int = 10_000, *, seed: int = 0, summarize: bool = True
) -> SummaryBuffer:
    return SummaryBuffer(SYSTEM_MSG, limit, Summarizer(keep, cap, random.Random(seed)), summarize=summarize)


@given(st.lists(st.integers(0, 60), max_size=20), st.integers(1, 120))
def test_prune_pops_from_the_front_until_within_the_limit(sizes, limit):
    """After every save the buffer is the longest run of newest messages within max_token_limit (a newest
    message over the limit on its own leaves it empty), and every other message went to a fold, in order."""
    buf = _buffer(limit)
    sent = []
    for k, n in enumerate(sizes):
        m = message(HUMAN, " ".join(["cat"] * n), f"t{k}")
        sent.append(m)
        buf.add(m)
        suffix, total = [], 0
        for old in reversed(sent):
            if total + old.tokens > limit:
                break
            suffix.insert(0, old)
            total += old.tokens
        assert list(buf.buffer) == suffix
        folded = [it.turn_id for it in buf.summarizer.items]
        assert folded == [m.turn_id for m in sent[: len(sent) - len(suffix)]]  # keep=1.0: every fold kept
    assert buf.total == sum(m.tokens for m in buf.buffer) <= limit


def test_the_summary_is_a_system_message_before_the_buffer():
    buf = _buffer(10)
    buf.add(message(HUMAN, "Alice: my cat is called Biscuit and she is three years old", "t0"))
    buf.add(message(AI, "Bob: nice", "t1"))
    q = message(HUMAN, "Question: what is the cat called?")
    sent = buf.context(q)
    assert sent[0] is SYSTEM_MSG and sent[-1] is q
    assert sent[1].role == SYSTEM and sent[1].text.startswith(SUMMARY_HEAD) and "Biscuit" in sent[1].text
    assert list(sent[2:-1]) == list(buf.buffer)


def test_lost_reasons_name_the_fold():
    """A turn the stand-in does not keep is dropped-in-summary at its fold; one squeezed out by the cap is
    squeezed-from-summary; with no summary it is pruned-no-summary."""
    texts = [f"Alice: turn {k} " + "word " * 20 for k in range(4)]
    drop = _buffer(30, keep=0.0)
    squeeze = _buffer(30, keep=1.0, cap=40)
    none = _buffer(30, summarize=False)
    for buf in (drop, squeeze, none):
        for k, t in enumerate(texts):
            buf.add(message(HUMAN, t, f"t{k}"))
        buf.context(None)
    assert drop.lost_reason("t0") == "dropped-in-summary@fold1"
    assert squeeze.lost_reason("t0") == "squeezed-from-summary@fold2"
    assert none.lost_reason("t1") == "pruned-no-summary@fold2"
    assert drop.lost_reason("t3") == "not-in-request"


def test_the_summarizer_is_seeded():
    def run(seed: int) -> str:
        buf = _buffer(20, keep=0.5, seed=seed)
        for k in range(12):
            buf.add(message(HUMAN, f"Alice: turn {k} " + "word " * 15, f"t{k}"))
        return buf.summarizer.text()

    assert run(3) == run(3)
    assert len({run(s) for s in range(6)}) > 1


def test_claim_directions():
    """summary-buffer.fold-loses-fact: faithful fails (shrunk), pin-fact-tokens holds, no-summary fails,
    all fixes hold."""
    assert check_claims("summary-buffer") == []


def test_scope_conforms():
    assert check_scope("summary-buffer.fold-loses-fact") == []


@pytest.mark.parametrize("check", [check_report, check_coverage])
def test_the_summary_buffer_declares_its_report_and_coverage(check):
    assert check("summary-buffer", ROOT) == []


def test_the_summary_buffer_keeps_the_adapter_contract():
    assert check_adapter("summary-buffer", budget=6000) == []
