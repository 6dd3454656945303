"""Every registered claim in each direction it declares: faithful and off must yield a shrunk
counterexample that still fails on replay; fixed and combined must hold under the same search (profile
from ``MEMSIM_CLAIMS_PROFILE``, default ``ci``)."""

import os

import pytest

from sim import claims as cl
from sim import search
from sim.replay import load_example

PROFILE = os.environ.get("MEMSIM_CLAIMS_PROFILE", "ci")
CLAIMS = list(cl.registry().values())
CASES = [(c, d) for c in CLAIMS for d in c.directions]


@pytest.mark.parametrize(("claim", "direction"), CASES, ids=[f"{c.id}:{d}" for c, d in CASES])
def test_direction_comes_out_as_expected(claim: cl.Claim, direction: str) -> None:
    """The direction holds (fixed, combined) or yields a counterexample that replays (faithful, off)."""
    outcome = search.run_direction(claim, direction, PROFILE)

    assert outcome.passed, f"{claim.id} [{direction}]: {outcome.summary}: {outcome.detail}"
    assert outcome.examples > 0
    if not cl.EXPECT_HOLDS[direction]:
        assert not claim.run(outcome.example, direction).holds
        # The saved form (what `memsim claims --save` writes) replays to the same violation.
        saved, variant, example = load_example(cl.save_example(claim, outcome, direction).dumps())
        assert (saved.id, variant) == (claim.id, direction)
        assert not claim.run(example, direction).holds
