"""Every scenario's default output equals its committed ``.out`` (SimPy's docs/conftest.py idea).

Scenarios that declare ``STORES`` (e.g. Tracecraft's: memory and moto) must print the same summary on
every listed object store.
"""

import pytest

from sim.scenario import execute, scenarios

SCENARIOS = list(scenarios().values())
CASES = [(sc, store) for sc in SCENARIOS for store in (sc.stores or (None,))]


@pytest.mark.parametrize(
    ("sc", "store"), CASES, ids=[f"{sc.name}-{store or 'memory'}" for sc, store in CASES]
)
def test_scenario_output_matches_committed(sc, store) -> None:
    """The default run prints exactly the committed expected output."""
    assert sc.expected_path.exists(), f"missing {sc.expected_path.name}"
    expected = sc.expected_path.read_text(encoding="utf-8")

    actual = "\n".join(execute(sc.name, store=store)) + "\n"

    assert actual == expected
