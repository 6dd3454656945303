"""The MerchantBench history lets go of the text no later read can reach (issue 33): a long bench cell's
memory is flat after warm-up, and what it sends is what it sent when it kept everything."""

from __future__ import annotations

from typing import Any

import pytest

from sim.bench.tasks import build_adapter, parse_designs
from sim.engine import Simulation
from sim.workload import make_workload
from systems.merchantbench.model import agent as agent_mod
from systems.merchantbench.model.history import RELEASED, History

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
    """The characters of content the history holds (any message not a plain dict holds none)."""
    return sum(len(str(m.get("content") or "")) for m in h.msgs if type(m) is dict)


def test_history_text_is_bounded_by_the_trims_after_warm_up() -> None:
    agent, _ = _cell()
    h, c = agent.history, agent.config
    reach = max(c.context_window, c.keep)
    assert agent.compactions == 0  # the silent slide: no compaction ever bounds this history
    assert sum(h.costs) > 8 * reach
    # what is kept is a suffix the two trims (window, keep) and the last tool block can still reach
    kept = [i for i, m in enumerate(h.msgs) if m is not RELEASED]
    assert kept and kept == list(range(kept[0], len(h)))
    bound = 2 * reach + max(h.costs)
    assert sum(h.costs[i] for i in kept) <= bound
    assert _retained_chars(h) <= 4 * bound  # an estimated token is at least four characters of JSON


def test_requests_are_the_same_as_with_every_message_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    _, released = _cell()
    _, kept = _cell(monkeypatch)
    assert released == kept
