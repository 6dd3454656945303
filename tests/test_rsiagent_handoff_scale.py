"""The ``resume-truncates-log`` claim's scaled-down examples give the verdict upstream's code gives at its
own scale (issue 42): the example's caps are upstream's 12,000 / 6,000-character handoff slices scaled
down, and the strategy review's 8,000-character slice of the WORK LOG scales with them, so on the pivot
path a fact past the review's slice is lost in the example as it is at full scale.

Upstream's verdict is the model at upstream's literal constants (``LoopConfig()``: 12,000, 6,000, 8,000
and the review's 2,500-character answer; ``core/actor.py`` ``handoff_message``, ``pivot_handoff_message``,
``strategy_review_ask``, ``_strategy_review``) on the example's WORK LOG scaled up by 12,000 / cap: a
fact token is read once its id and the first letter of its value are in (``sim.text.FACT_RE``), so each
token's readable prefix ends at the scale times its end in the example; the rest is filler."""

from __future__ import annotations

import re

import pytest

from sim.engine import Simulation
from sim.variant import FAITHFUL
from systems.rsiagent import properties as props
from systems.rsiagent.drivers.worklog import check_handoff
from systems.rsiagent.model import stalled_handoff
from systems.rsiagent.state import LoopConfig, LoopResult

FACT = re.compile(r"FACT-\d{4}=\w+")
READABLE = len("FACT-0001=t")
CAPS = (120, 240, 480)


def _example_log(facts: int) -> str:
    return "WORK LOG\n" + "\n".join(f"- FACT-{i:04d}=teal" for i in range(1, facts + 1))


def _scaled_up(log: str, scale: int) -> str:
    """*log* at *scale* times its size: every fact token's readable prefix ends at *scale* times its end
    in *log*."""
    out = "WORK LOG"
    for m in FACT.finditer(log):
        out += "\n- " + "." * (scale * (m.start() + READABLE) - READABLE - len(out) - 3) + m.group()
    return out


def _upstream_verdict(facts: int, cap: int, pivot: bool) -> bool:
    log = _scaled_up(_example_log(facts), 12_000 // cap)
    res = LoopResult("stalled", 10, log, surface_delta="" if pivot else "M project/x.py")
    h = stalled_handoff(Simulation(0), LoopConfig(history_keep_pairs=80), res, [], variant=FAITHFUL)
    return props.check_handoff_keeps_log(h.worklog, h.message).holds


def _memsim_verdict(facts: int, cap: int, pivot: bool) -> bool:
    return check_handoff(Simulation(0), {"facts": facts, "cap": cap, "pivot": pivot}, FAITHFUL).holds


def test_the_scaled_up_log_keeps_each_facts_relative_position() -> None:
    """The oracle's log: every fact's readable prefix ends at the example's position times the scale, in
    order, nothing else a fact."""
    log = _example_log(40)
    for scale in (25, 50, 100):
        big = _scaled_up(log, scale)
        ends = [(m.start() + READABLE) * scale for m in FACT.finditer(log)]
        assert ends == [m.start() + READABLE for m in FACT.finditer(big)]
        assert [m.group() for m in FACT.finditer(big)] == [m.group() for m in FACT.finditer(log)]
        assert big.strip() == big


@pytest.mark.parametrize("pivot", [False, True])
def test_every_example_gives_upstreams_verdict_at_scale(pivot: bool) -> None:
    """Every example of the claim's space (1 to 40 facts, each cap) holds in memsim exactly when it holds
    in upstream's code at upstream's scale; on the pivot path some examples fail (facts past the review's
    slice and the pivot's log slice)."""
    differ = [
        (facts, cap)
        for facts in range(1, 41)
        for cap in CAPS
        if _memsim_verdict(facts, cap, pivot) != _upstream_verdict(facts, cap, pivot)
    ]
    assert differ == []
    assert any(not _upstream_verdict(facts, 120, pivot) for facts in range(1, 41))
