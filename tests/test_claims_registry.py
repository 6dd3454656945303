"""Every registered claim, both ways: the faithful design must yield a shrunk counterexample, the fixed
variant must hold under the same search (profile from ``HYPOTHESIS_PROFILE``, default ``ci``)."""

import os

import pytest

from sim import claims as cl

PROFILE = os.environ.get("MEMSIM_CLAIMS_PROFILE", "ci")
CLAIMS = list(cl.registry().values())


@pytest.mark.parametrize("claim", CLAIMS, ids=[c.id for c in CLAIMS])
def test_faithful_design_yields_a_counterexample(claim: cl.Claim) -> None:
    """The faithful design fails the claim's property, and the shrunk example still fails on replay."""
    outcome = cl.find_counterexample(claim, PROFILE)
    assert outcome.passed, f"{claim.id}: {outcome.detail}"
    assert not claim.run(outcome.example, cl.FAITHFUL).holds
    # The saved form (what `memsim claims --save` writes) replays to the same violation.
    _, variant, example = cl.load_example(cl.save_example(claim, outcome).dumps())
    assert variant == cl.FAITHFUL
    assert not claim.run(example, cl.FAITHFUL).holds


@pytest.mark.parametrize("claim", CLAIMS, ids=[c.id for c in CLAIMS])
def test_fixed_variant_holds(claim: cl.Claim) -> None:
    """The fixed variant holds for every example of the same search."""
    outcome = cl.check_fixed(claim, PROFILE)
    assert outcome.passed, f"{claim.id}: {outcome.summary}: {outcome.detail}"
    assert outcome.examples > 0
