"""Tracecraft's claims in their four directions: declarations, example types, and the degenerate fixes
issue 12 found, pinned so that a property that stops rejecting them fails here.

``tests/test_claims_registry.py`` runs every direction of every claim; these tests pin what it cannot see:
each claim's switches and example type, and two earlier fixes that the rewritten properties must reject
(a ``part-cond-put`` lock that is never removed, a ``history-is-live`` fix without ordered stamps).
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter, ValidationError

from sim import claims as cl
from sim.engine import Simulation
from sim.variant import Variant
from systems.tracecraft import protocol
from systems.tracecraft.design import DESIGN
from systems.tracecraft.model import bucket as model_bucket
from systems.tracecraft.model import memory as model_memory

CLAIMS = list(cl.registry("tracecraft").values())


@pytest.mark.parametrize("claim", CLAIMS, ids=[c.id for c in CLAIMS])
def test_claim_declares_three_directions(claim: cl.Claim) -> None:
    """No legacy claim: a fix, an off switch, an example type and a sentence saying what the fix does."""
    assert claim.fixes and claim.off and claim.example_type is not None
    assert set(claim.fixes) <= set(DESIGN.switches.fixes)
    assert set(claim.off) <= set(DESIGN.switches.off)
    assert claim.fix.startswith(claim.fixes[0] + ": ")


def _inflate(x: Any) -> Any:
    """*x* with every integer 10⁹ and every list 300 times longer: outside every declared bound."""
    if isinstance(x, bool) or x is None or isinstance(x, str):
        return x
    if isinstance(x, int | float):
        return 10**9
    if isinstance(x, dict):
        return {k: _inflate(v) for k, v in x.items()}
    return [_inflate(v) for v in x] * 300


@pytest.mark.parametrize("claim", CLAIMS, ids=[c.id for c in CLAIMS])
def test_example_type_accepts_the_strategy_and_bounds_it(claim: cl.Claim) -> None:
    """Every drawn example (as JSON) fits the declared type; the same example inflated does not."""
    adapter = TypeAdapter(claim.example_type)
    drawn: list[Any] = []

    @settings(max_examples=25, deadline=None, database=None)
    @given(claim.strategy())
    def fits(example: Any) -> None:
        adapter.validate_python(claim.encode(example), strict=False)
        drawn.append(claim.encode(example))

    fits()
    big = next(x for x in reversed(drawn) if _inflate(x) != x)
    with pytest.raises(ValidationError):
        adapter.validate_python(_inflate(big), strict=False)


def _two_mirrors(variant: Variant) -> bool:
    """Whether the two-mirrors property holds on a round, a lost state, then another round."""
    claim = cl.get("tracecraft.two-mirrors")
    rnd = {"first": 1, "second_at": 0, "append": 0, "append_at": 0, "lose_state": True}
    return claim.run([rnd, dict(rnd, lose_state=False)], variant).holds


def test_two_mirrors_rejects_a_lock_that_is_never_removed(monkeypatch: pytest.MonkeyPatch) -> None:
    """issue 12: with the lock left in place, every flush after a lost state conflicts forever and the
    transcript stops growing; the property rejects that fix, and accepts the lock that is removed."""
    fixed = DESIGN.switches.fixed("part-cond-put")
    assert _two_mirrors(fixed)
    real_delete = model_bucket.Bucket.delete

    def keep_locks(self: model_bucket.Bucket, key: str) -> None:
        if not key.endswith(".lock"):
            real_delete(self, key)

    monkeypatch.setattr(model_bucket.Bucket, "delete", keep_locks)

    assert not _two_mirrors(fixed)


def test_history_live_rejects_unordered_stamps(monkeypatch: pytest.MonkeyPatch) -> None:
    """issue 12: 'get equals history --limit 1' is a tautology once live is the newest snapshot; the
    property also asks for real-time order, which the fix's ordered stamps give and a writer's skewed
    clock alone does not (b, 5 s slow, sets after a has finished)."""
    claim = cl.get("tracecraft.history-newest-not-live")
    example = {"sets": [[0, 0], [1, 4]], "skew_b": -5, "crash_at": 0}
    fixed = DESIGN.switches.fixed("history-is-live")
    assert claim.run(example, fixed).holds
    monkeypatch.setattr(model_memory, "stamp_above", lambda own, *_a, **_k: own)

    assert not claim.run(example, fixed).holds


@given(st.integers(0, 10**6), st.lists(st.integers(-(10**6), 10**6), max_size=5))
def test_stamp_above_sorts_above_every_recent_key(own: int, offsets: list[int]) -> None:
    """The fixes' stamp sorts after every listed key stamped at most 30 min ahead, and never leaves 19
    digits."""
    base = 1_767_571_200_000_000_000 + own
    prefix = "messages/bob/"
    keys = [f"{prefix}{base + d}_x_0000000{i}.json" for i, d in enumerate(offsets)]
    junk = f"{prefix}9999999999999999999_x_00000000.json"

    stamp = protocol.stamp_above(base, [*keys, junk], prefix)

    assert stamp >= base and len(str(stamp)) == 19
    assert all(stamp > base + d for d in offsets)
    assert protocol.stamp_above(base, [junk], prefix) == base


def test_off_switches_are_rejected_where_the_old_properties_accepted_them() -> None:
    """The one-sided properties issue 12 lists, replayed: an empty upload, a reader that shows nothing,
    an inbox with no cursor and a show that always refuses now fail their claims."""
    key = "AKIAIOSFODNN7EXAMPLE"
    skews = [0, -120, -600, -900]
    cases = {
        "tracecraft.stop-deletes-cursor": [["mirror", 1]],
        "tracecraft.redaction-per-chunk": {"before": "", "secret": key, "after": "", "cuts": []},
        "tracecraft.seen-cap-replay": {"seen_cap": 1, "batches": [1], "gap_s": 1},
        "tracecraft.skew-hides-mail": {"skews": skews, "ops": [["send", 0, 0], ["send", 0, 0]]},
        "tracecraft.session-id-ambiguity": [["claude-code", "s1"]],
    }
    for cid, example in cases.items():
        claim = cl.get(cid)
        sim = Simulation(0)
        assert claim.run(example, cl.FIXED).holds, cid
        assert not claim.run(example, cl.OFF, sim).holds, cid
        sim.close()
