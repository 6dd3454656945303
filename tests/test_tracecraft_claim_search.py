"""The claims' searches are not vacuous: the examples the fixed direction runs include ones that fail on
the faithful design, so each fixed variant is exercised on the very hazard its claim is about."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

from sim import claims as cl

CLAIMS = list(cl.registry("tracecraft").values())
SEARCH = settings(
    max_examples=40,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


@pytest.mark.parametrize("claim", CLAIMS, ids=[c.id for c in CLAIMS])
def test_fixed_search_meets_the_hazard(claim: cl.Claim) -> None:
    """Among the quick search's examples, some fail on the faithful design and all hold on the fixed one."""
    hazards: list[object] = []

    @SEARCH
    @given(claim.strategy())
    def search(example: object) -> None:
        if not claim.run(example, cl.FAITHFUL).holds:
            hazards.append(example)
            assert claim.run(example, cl.FIXED).holds, claim.summarize(example)

    search()

    assert hazards, f"{claim.id}: no example of the search fails on the faithful design"
