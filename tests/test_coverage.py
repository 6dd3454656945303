"""Record coverage: every record ID in the four reports is covered by a model element and a test, or
carries a "Not modeled:" reason; every test a coverage entry names exists."""

import re
from pathlib import Path

import pytest

from sim.fidelity import coverage, report_records

ROOT = Path(__file__).resolve().parent.parent
SYSTEMS = sorted(report_records())


@pytest.mark.parametrize("system", SYSTEMS)
def test_every_record_id_is_covered(system: str) -> None:
    """No record ID of the system's report is left without coverage."""
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


def test_report_record_ids_are_complete() -> None:
    """The shipped record list matches the IDs in the reports when the reports are present."""
    seeds = ROOT.parent / "shared" / "seeds"
    if not seeds.is_dir():
        seeds = ROOT.parent.parent / "shared" / "seeds"
    data = report_records()
    for entry in data.values():
        path = seeds / entry["seed"]
        if path.exists():
            ids = sorted(set(re.findall(r"\b(?:MEM|RT)-[A-Z]{3}-[a-z0-9-]+", path.read_text())))
            assert [i.rstrip("-") for i in ids] == entry["records"]
    assert sum(len(e["records"]) for e in data.values()) == 85
