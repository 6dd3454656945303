"""Record coverage: every record ID in each design's report is covered by a model element and a test, or
carries a "Not modeled:" reason; every test a coverage entry names exists."""

import re
from pathlib import Path

import pytest

from sim.fidelity import coverage
from sim.registry import designs

ROOT = Path(__file__).resolve().parent.parent
SYSTEMS = sorted(designs())


@pytest.mark.parametrize("system", SYSTEMS)
def test_every_record_id_is_covered(system: str) -> None:
    """No record ID of the design's report is left without coverage."""
    uncovered = [rid for rid, cov in coverage(system) if cov is None or not cov.covered]

    assert uncovered == []


@pytest.mark.parametrize("system", SYSTEMS)
def test_named_tests_exist(system: str) -> None:
    """Each test node named in the coverage table exists (file and function)."""
    missing = []
    for rid, cov in coverage(system):
        for node in cov.tests if cov else ():
            path, _, name = node.partition("::")
            func = name.split("::")[-1].split("[")[0]
            f = ROOT / path
            if not f.exists() or not re.search(rf"def {re.escape(func)}\b", f.read_text(encoding="utf-8")):
                missing.append(f"{rid}: {node}")

    assert missing == []


@pytest.mark.parametrize("system", SYSTEMS)
def test_report_record_ids_are_complete(system: str) -> None:
    """The declared record IDs are exactly the IDs in the design's report, which ships in docs/reports."""
    report = designs()[system].report
    text = (ROOT / report.path).read_text(encoding="utf-8")
    ids = sorted({i.rstrip("-") for i in re.findall(r"\b(?:MEM|RT)-[A-Z]{3}-[a-z0-9-]+", text)})

    assert ids == list(report.record_ids)
