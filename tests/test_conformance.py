"""Design-level conformance of every installed design, through :mod:`sim.testing` (the functions a plugin's
own tests call), and the registry's colour fallback that keeps plugins' colours apart."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from sim import registry
from sim.registry import Design, Report, designs
from sim.testing import check_adapter, check_colour
from sim.variant import Switches

SYSTEMS = sorted(designs())


@pytest.mark.design_level
@pytest.mark.parametrize("system", SYSTEMS)
def test_every_design_keeps_the_adapter_contract(system: str) -> None:
    """At a window where no design's faithful trim drops the step's own observation (MerchantBench's
    ReAct trim can, at 6,000 tokens, and with it the probe question: upstream's behaviour, stated in its
    adapter's docstring), every adapter keeps the contract."""
    assert check_adapter(system, budget=16000) == []


@pytest.mark.design_level
@pytest.mark.parametrize("system", SYSTEMS)
def test_every_design_has_a_colour_of_its_own(system: str) -> None:
    assert check_colour(system) == []


def _fake(name: str, colour: str = "") -> Design:
    return Design(name, "json", name, Report(name), Switches(name), colour=colour)


def test_fallback_colours_never_take_a_registered_designs_colour(monkeypatch: pytest.MonkeyPatch) -> None:
    """Twenty designs without a colour beside four that declare the palette's first four: all differ
    (a hash onto the palette gave some of them a declared colour, and some the same one)."""
    declared = {f"d{i}": _fake(f"d{i}", c) for i, c in enumerate(registry.PALETTE[:4])}
    plain = {f"plugin{i:02d}": _fake(f"plugin{i:02d}") for i in range(20)}
    fake: Mapping[str, Design] = dict(sorted({**declared, **plain}.items()))
    monkeypatch.setattr(registry, "designs", lambda: fake)
    registry.colours.cache_clear()
    try:
        got = dict(registry.colours())
    finally:
        registry.colours.cache_clear()

    assert [got[n] for n in declared] == list(registry.PALETTE[:4])
    assert len({c.lower() for c in got.values()} | {registry.ORACLE_COLOUR.lower()}) == len(fake) + 1
    assert all(c.startswith("#") and len(c) == 7 for c in got.values())


def test_a_fallback_colour_depends_only_on_the_installed_designs(monkeypatch: pytest.MonkeyPatch) -> None:
    """The same installed set gives the same colours (whatever a run includes)."""
    fake = {"alpha": _fake("alpha"), "beta": _fake("beta", "#0072B2")}
    monkeypatch.setattr(registry, "designs", lambda: fake)
    registry.colours.cache_clear()
    try:
        first = dict(registry.colours())
        registry.colours.cache_clear()
        second = dict(registry.colours())
    finally:
        registry.colours.cache_clear()

    assert first == second and first["alpha"] != "#0072B2"
