"""Every registered claim (memsim's four designs' and any installed plugin's) declares an exhaustive scope
that is finite, valid for its example type, and holds a faithful counterexample (``sim.testing.check_scope``).

The parametrization is over whatever claims are registered, so a claim added without a scope fails here.
Each case runs only until its first faithful counterexample; the whole exhaustive ledger (every case, every
direction) is ``benchmarks/bench_exhaustive.py``.
"""

from __future__ import annotations

import pytest

from sim import claims as cl
from sim.testing import check_scope


@pytest.mark.parametrize("claim_id", list(cl.registry()))
def test_every_claim_has_a_valid_scope_with_a_faithful_counterexample(claim_id: str) -> None:
    assert check_scope(claim_id) == []
