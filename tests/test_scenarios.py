"""Every scenario's default output equals its committed ``.out`` (SimPy's docs/conftest.py idea), through
:func:`sim.testing.check_scenario`, the check a plugin's own tests run on its scenarios.

Scenarios that declare ``STORES`` (e.g. Tracecraft's: memory and moto) must print the same summary on
every listed object store.
"""

import pytest

from sim.scenario import scenarios
from sim.testing import check_scenario

SCENARIOS = list(scenarios().values())
CASES = [(sc, store) for sc in SCENARIOS for store in (sc.stores or (None,))]


@pytest.mark.design_level
@pytest.mark.parametrize(
    ("sc", "store"), CASES, ids=[f"{sc.name}-{store or 'memory'}" for sc, store in CASES]
)
def test_scenario_output_matches_committed(sc, store) -> None:
    """The default run prints exactly the committed expected output."""
    assert check_scenario(sc.name, store) == []
