"""The claims runner on a toy design: four directions over one strategy, variants validated against the
design's declared switches, the never-raise guard, saved examples and their bounds."""

from __future__ import annotations

from typing import Annotated

import pytest
from hypothesis import strategies as st
from pydantic import Field

from sim import claims as cl
from sim import registry, search
from sim.engine import Simulation
from sim.errors import UsageError
from sim.replay import load_example
from sim.variant import FAITHFUL, Switches, Variant

SWITCHES = Switches("coretest", fixes=("clamp", "other-fix"), off=("no-total",), counterfactuals=("cf",))
DESIGN = registry.Design("coretest", "tests", "toy", registry.Report("toy report"), SWITCHES)


@pytest.fixture(autouse=True)
def toy_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry, "designs", lambda: {"coretest": DESIGN})


def toy_strategy() -> st.SearchStrategy[list[int]]:
    return st.lists(st.integers(0, 100), max_size=8)


def check(sim: Simulation, xs: list[int], variant: Variant) -> cl.Verdict:
    """ "The total is reported and stays under 10": clamp keeps it under 10, no-total reports nothing."""
    if variant.has("no-total"):
        return cl.Verdict.violated("no total reported")  # the service is gone: the property rejects it
    total = min(sum(xs), 9) if variant.has("clamp") else sum(xs)
    return cl.Verdict.ok() if total < 10 else cl.Verdict.violated(f"total {total} >= 10")


def make_claim(**kw) -> cl.Claim:
    base = dict(
        check=check,
        fixes=("clamp",),
        off=("no-total",),
        summarize=lambda xs: f"{len(xs)} item(s) summing to {sum(xs)}",
    )
    return cl.Claim("coretest.total", "coretest", ("CORE-1",), "totals stay under 10", "clamp at 9",
                    toy_strategy, **{**base, **kw})  # fmt: skip


def test_each_direction_maps_to_its_variant() -> None:
    """faithful: none; fixed: the claim's fixes; off: the fixes plus the off switch; combined: every fix."""
    c = make_claim()

    assert c.variant(cl.FAITHFUL) == FAITHFUL
    assert c.variant(cl.FIXED) == Variant(fixes=frozenset({"clamp"}))
    assert c.variant(cl.OFF) == Variant(fixes=frozenset({"clamp"}), off=frozenset({"no-total"}))
    assert c.variant(cl.COMBINED) == Variant(fixes=frozenset({"clamp", "other-fix"}))
    assert make_claim(counterfactuals=("cf",)).variant(cl.FAITHFUL) == Variant(
        counterfactuals=frozenset({"cf"})
    )


def test_faithful_and_off_find_shrunk_counterexamples() -> None:
    """A direction that must fail yields the minimal counterexample."""
    faithful = search.run_direction(make_claim(), cl.FAITHFUL, "ci")
    off = search.run_direction(make_claim(), cl.OFF, "ci")

    assert faithful.passed and faithful.example == [10] and faithful.detail == "total 10 >= 10"
    assert off.passed and off.example == [] and off.detail == "no total reported"


def test_fixed_and_combined_hold_for_every_example() -> None:
    """A direction that must hold runs the whole profile and says how many examples."""
    for direction in (cl.FIXED, cl.COMBINED):
        out = search.run_direction(make_claim(), direction, "ci")

        assert out.passed and out.examples == 100


def test_a_fix_that_does_not_hold_is_reported_with_its_example() -> None:
    """A "fix" that does not hold is reported failed with the shrunk example and the violation."""
    out = search.run_direction(make_claim(fixes=("other-fix",)), cl.FIXED, "ci")

    assert not out.passed
    assert out.example == [10]
    assert out.detail == "total 10 >= 10"


def test_fixed_and_combined_share_one_search_that_sees_the_same_examples() -> None:
    """One search checks both holding directions: each sees exactly the examples, in the order, that a
    search of its own draws (the ledger relies on it to halve Hypothesis' share)."""
    seen: dict[str, list[list[int]]] = {cl.FIXED: [], cl.COMBINED: []}

    def recording(direction_of: dict[Variant, str]):
        def check_and_record(sim: Simulation, xs: list[int], variant: Variant) -> cl.Verdict:
            seen[direction_of[variant]].append(list(xs))
            return check(sim, xs, variant)

        return check_and_record

    claim = make_claim()
    direction_of = {claim.variant(d): d for d in (cl.FIXED, cl.COMBINED)}
    together = search.check_holds_together(
        make_claim(check=recording(direction_of)), (cl.FIXED, cl.COMBINED), "ci"
    )
    shared = {d: list(v) for d, v in seen.items()}
    for d in seen:
        seen[d].clear()
    alone = {d: search.check_holds(make_claim(check=recording(direction_of)), "ci", 0, d) for d in seen}

    assert shared[cl.FIXED] == shared[cl.COMBINED] == seen[cl.FIXED] == seen[cl.COMBINED]
    assert len(shared[cl.FIXED]) == 100
    for d in (cl.FIXED, cl.COMBINED):
        assert together[d].passed and alone[d].passed
        assert together[d].examples == alone[d].examples == 100


def test_a_shared_search_that_fails_reports_each_direction_as_alone() -> None:
    """When one holding direction fails, each is run on its own: the failure is shrunk and reported
    exactly as a separate search reports it, and the other direction still holds."""
    claim = make_claim(fixes=("other-fix",))  # fixed fails (other-fix does not clamp); combined holds
    together = search.check_holds_together(claim, (cl.FIXED, cl.COMBINED), "ci")
    alone = {d: search.check_holds(claim, "ci", 0, d) for d in (cl.FIXED, cl.COMBINED)}

    assert not together[cl.FIXED].passed and together[cl.FIXED].example == [10]
    assert together[cl.COMBINED].passed
    for d in alone:
        assert (together[d].passed, together[d].example, together[d].examples, together[d].detail) == (
            alone[d].passed, alone[d].example, alone[d].examples, alone[d].detail,
        )  # fmt: skip
    with pytest.raises(ValueError, match="must fail"):
        search.check_holds_together(claim, (cl.FIXED, cl.OFF), "ci")


def test_a_property_that_accepts_the_off_switch_is_reported() -> None:
    """An off direction that finds nothing means the property cannot tell a fix from deleting the feature."""

    def lenient(sim: Simulation, xs: list[int], variant: Variant) -> cl.Verdict:
        return cl.Verdict.ok() if variant.has("clamp") or sum(xs) < 10 else cl.Verdict.violated("big")

    out = search.run_direction(make_claim(check=lenient), cl.OFF, "quick")

    assert not out.passed
    assert out.detail == "no counterexample found on the off variant"


def test_an_exception_in_a_check_is_a_violation_marked_raised() -> None:
    """The never-raise guard: one place, for every design."""

    def broken(sim: Simulation, xs: list[int], variant: Variant) -> cl.Verdict:
        raise KeyError("boom")

    verdict = make_claim(check=broken).run([1], cl.FIXED)

    assert not verdict.holds and verdict.raised
    assert verdict.detail == "raised KeyError: 'boom'"


def test_undeclared_switch_names_are_usage_errors() -> None:
    """A typo in a fix name is an error, not a silent faithful run."""
    with pytest.raises(UsageError, match="unknown coretest fix 'clmp'"):
        SWITCHES.variant(["clmp"])
    with pytest.raises(UsageError, match="off switch"):
        SWITCHES.variant(off=["nope"])
    assert SWITCHES.parse("fixed") == SWITCHES.all_fixes()
    assert SWITCHES.parse("fix=clamp,off=no-total") == Variant(
        frozenset({"clamp"}), off=frozenset({"no-total"})
    )


def test_unknown_profile_is_usage_error() -> None:
    """Profiles are quick, ci and thorough."""
    with pytest.raises(UsageError, match="unknown profile"):
        search.run_direction(make_claim(), cl.FAITHFUL, "nope")


def test_claim_run_uses_a_fresh_simulation() -> None:
    """``Claim.run`` without a simulation gives the check a fresh seed-0 Simulation."""
    seen: list[int] = []

    def probe(sim: Simulation, x: int, variant: Variant) -> cl.Verdict:
        seen.append(sim.seed)
        return cl.Verdict.ok()

    assert make_claim(check=probe).run(1, cl.FIXED).holds
    assert seen == [0]


ToyExample = list[Annotated[int, Field(ge=0, le=100)]]


def test_saved_examples_round_trip_and_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """A saved example loads back; one outside the declared example type is refused with one line."""
    c = make_claim(example_type=ToyExample)
    monkeypatch.setattr(cl, "get", lambda cid: c)
    out = search.run_direction(c, cl.FAITHFUL, "ci")

    claim, direction, example = load_example(cl.save_example(c, out).dumps())

    assert (claim.id, direction, example) == (c.id, cl.FAITHFUL, [10])
    with pytest.raises(UsageError, match=r"does not fit claim coretest\.total"):
        load_example('{"claim": "coretest.total", "example": [999999999]}')
    with pytest.raises(UsageError, match="does not fit"):
        load_example('{"claim": "coretest.total", "example": 42}')


@pytest.mark.parametrize("text", ["not json", "[]", '{"example": 1}', "null", "[" * 100000 + "]" * 100000])
def test_load_example_rejects_non_examples(text: str) -> None:
    """Text that is not a saved claim example is a UsageError (never a RecursionError)."""
    with pytest.raises(UsageError):
        load_example(text)
