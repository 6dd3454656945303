"""The MerchantBench history lets go of the text no later read can reach (issue 33): a long bench cell's
memory is flat after warm-up, and what it sends is what it sent when it kept everything."""

from __future__ import annotations

from typing import Any

import pytest
from conversation_helpers import make_instance
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies_merchantbench import SAVE_POLICY_KW

from sim.bench.tasks import build_adapter, parse_designs
from sim.conversations import run as conv
from sim.engine import Simulation
from sim.variant import Variant
from sim.workload import make_workload
from systems.merchantbench import MerchantEnv, ReactAgent, ReactConfig, SavePolicy
from systems.merchantbench.model import agent as agent_mod
from systems.merchantbench.model.history import History
from systems.merchantbench.state import (
    REDACT_RETRY_COPY,
    RESET_PENDING_ON_425,
    TRIGGER_UNTRIMMED,
    FaultSchedule,
)

STEPS = 250
WINDOW = 32_000


def _cell(monkeypatch: pytest.MonkeyPatch | None = None) -> tuple[Any, list[tuple[str, ...]]]:
    if monkeypatch is not None:  # upstream's in-process history: every message's text kept
        monkeypatch.setattr(agent_mod, "release_budget", lambda *_: 0)
    workload = make_workload(0, STEPS)
    sim = Simulation(0, keep_trace=False)
    adapter = build_adapter(parse_designs("merchantbench")[0], sim, WINDOW, workload)
    requests = [tuple(adapter.step(step).parts) for step in workload.steps]
    sim.close()
    return adapter.agent, requests


def _retained_chars(h: History) -> int:
    """The characters of content the history holds."""
    return sum(len(str(m.get("content") or "")) for m in h.msgs)


def _stores(h: History) -> list[int]:
    """The length of every per-message store of the history."""
    return [len(x) for x in (h.msgs, h.sent, h.costs, h.kinds, h._cum, h._ex, h._fx, h._ecum)]


def test_history_text_is_bounded_by_the_trims_after_warm_up() -> None:
    agent, _ = _cell()
    h, c = agent.history, agent.config
    reach = max(c.context_window, c.keep)
    assert agent.compactions == 0  # the silent slide: no compaction ever bounds this history
    assert h.total > 8 * reach
    # what is held is a suffix the two trims (window, keep) and the last tool block can still reach
    bound = 2 * reach + max(h.costs)
    assert sum(h.costs) <= bound
    assert _retained_chars(h) <= 4 * bound  # an estimated token is at least four characters of JSON


def test_history_holds_nothing_per_released_message() -> None:
    """Upstream's history has every message (its length and total still count them), but no store of the
    model keeps an entry for a released one, not even a stand-in or a prefix sum: the model's history is
    the same size at any length of the run."""
    agent, _ = _cell()
    h = agent.history
    assert h.upstream_len == h.released + len(h) and h.total > sum(h.costs)
    assert len(h) < h.upstream_len // 4
    assert max(_stores(h)) == len(h)


def test_a_compaction_after_a_release_drops_the_released_messages_too() -> None:
    """``history = history[start:]`` with *start* the first message held (every held message fits in K)
    still drops the released ones before it: upstream's history then starts at the first one held."""
    h = History({"role": "user", "content": "x" * n} for n in (4000, 40, 40, 40))
    assert h.release(100) == 1 and (len(h), h.upstream_len) == (3, 4)
    start, kept = h.trim_start(100)
    assert start == 0 and kept == sum(h.costs) < h.total
    h.keep_from(start)
    assert (h.released, h.upstream_len, h.total) == (0, 3, kept)


def test_requests_are_the_same_as_with_every_message_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    _, released = _cell()
    _, kept = _cell(monkeypatch)
    assert released == kept


def _conversation(monkeypatch: pytest.MonkeyPatch | None = None) -> tuple[History, dict[str, str]]:
    if monkeypatch is not None:
        monkeypatch.setattr(agent_mod, "release_budget", lambda *_: 0)
    instance = make_instance(0, sessions=20, turns=10, words=200, questions=3)
    sim = Simulation(0, keep_trace=False)
    adapter = conv.build_adapter(parse_designs("merchantbench")[0], sim, 30_000, conv.drawn_for(instance))
    for step in conv.conversation_steps(instance):
        adapter.step(step)
    sim.close()
    reasons = {t: adapter.lost_reason(t) for q in instance.questions for t in q.evidence}
    return adapter.agent.history, reasons


def test_a_released_turn_is_still_in_upstreams_history(monkeypatch: pytest.MonkeyPatch) -> None:
    """In a conversation that slides silently, an evidence turn the history released is still in
    upstream's history, trimmed from the request's suffix: the same reason as with every message kept."""
    h, reasons = _conversation()
    assert h.released > 0 and h.origin == 0
    assert any(r.startswith("trimmed-from-suffix@") for r in reasons.values())
    assert reasons == _conversation(monkeypatch)[1]


STEPS_DRAWN = 24
#: Provider and server faults at any tick of the run (not only the first few): a Forbidden rewrites the
#: last tool block, a 425 truncates the step, a missing usage lets the untrimmed history fire the trigger.
LATE_FAULTS = st.builds(
    FaultSchedule,
    llm=st.lists(
        st.tuples(
            st.integers(0, STEPS_DRAWN - 1),
            st.integers(0, 3),
            st.sampled_from(["forbidden", "burst", "transient", "invalid", "unknown"]),
        ),
        max_size=6,
    ).map(tuple),
    act=st.lists(
        st.tuples(st.integers(0, STEPS_DRAWN - 1), st.integers(0, 2), st.sampled_from([425, 400, 500, 429])),
        max_size=4,
    ).map(tuple),
    no_usage=st.lists(st.tuples(st.integers(0, STEPS_DRAWN - 1), st.integers(0, 3)), max_size=4).map(tuple),
)


def _run(policy_kw: dict, schedule: FaultSchedule, cfg: ReactConfig, variant: Variant, sizes: list[int],
         keep: bool) -> tuple[list[Any], list[Any]]:  # fmt: skip
    sim = Simulation(0)
    env = MerchantEnv(sim, sim.tree("memory"), schedule=schedule, brief="You run a shop.", schema_tokens=300)
    agent = ReactAgent(sim, env, "agent_0", SavePolicy(**policy_kw), config=cfg, variant=variant)
    agent.keep_log = keep  # a claim log keeps every message's text (release_budget is 0)
    outcomes = []
    for i, chars in enumerate(sizes):
        result = agent.run_step(f"Day 1, Hour {i}\nFACT-{i + 1:04d}=red " + "w" * chars)
        outcomes.append((result.outcome, tuple(agent.last_parts), agent.last_provider_tokens))
    records = [(r.exact_tokens, r.estimate, sorted(r.facts)) for r in sim.trace.data.requests]
    return outcomes, records


@settings(max_examples=30)
@given(
    SAVE_POLICY_KW,
    LATE_FAULTS,
    st.sampled_from([500, 10**9]),
    st.sampled_from([(), (REDACT_RETRY_COPY,), (TRIGGER_UNTRIMMED, RESET_PENDING_ON_425)]),
    st.lists(st.integers(0, 1600), min_size=STEPS_DRAWN // 2, max_size=STEPS_DRAWN),
)
def test_release_changes_nothing_a_run_sends_under_faults(
    policy_kw: dict, schedule: FaultSchedule, trigger: int, fixes: tuple[str, ...], sizes: list[int]
) -> None:
    """Under drawn faults at any tick (Forbidden redactions, 425 truncations, missing usage), with the
    compaction firing or never (the silent slide) and under the variants that release too, every hop's
    request, its exact count and fact ids are those of the same run keeping every message's text."""
    cfg = ReactConfig(context_window=600, trigger=trigger, keep=150, max_hops=6)
    variant = Variant(fixes=frozenset(fixes)) if fixes else Variant()
    released = _run(policy_kw, schedule, cfg, variant, sizes, keep=False)
    assert released == _run(policy_kw, schedule, cfg, variant, sizes, keep=True)
