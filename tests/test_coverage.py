"""Record coverage: every record ID in each installed design's report is covered by a model element and a
test, or carries a "Not modeled:" reason; every test a coverage entry names exists; the declared record IDs
are exactly the report's. The checks are :mod:`sim.testing`'s, which a plugin's own tests call too; the
files (named tests, the report) are read for memsim's own designs, whose tree this is."""

from pathlib import Path

import pytest

from sim.registry import REFERENCE, designs, registered_by
from sim.testing import check_coverage, check_report

ROOT = Path(__file__).resolve().parent.parent
SYSTEMS = sorted(designs())


def _root(system: str) -> Path | None:
    """memsim's tree for its own designs; a plugin's tests check its files against its own tree."""
    return ROOT if registered_by(system) == "memsim" else None


@pytest.mark.design_level
@pytest.mark.parametrize("system", SYSTEMS)
def test_every_record_id_is_covered_and_named_tests_exist(system: str) -> None:
    """No record ID of the design's report is left without coverage; each named test node exists."""
    assert check_coverage(system, _root(system)) == []


@pytest.mark.design_level
@pytest.mark.parametrize("system", SYSTEMS)
def test_report_record_ids_are_complete(system: str) -> None:
    """The declared record IDs are exactly the IDs in the design's report, which ships in docs/reports."""
    assert check_report(system, _root(system)) == []


def test_the_memsim_tree_checks_its_own_report_files() -> None:
    """memsim's four read their report from docs/reports (a check that cannot read it proves nothing); its
    reference designs (documented algorithms) have no analysis report."""
    own = [d for d in designs().values() if registered_by(d.name) == "memsim" and d.kind != REFERENCE]

    assert own and all(d.report.path and (ROOT / d.report.path).is_file() for d in own)
