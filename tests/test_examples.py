"""Every scenario file in ``examples/`` runs through the CLI as the README shows."""

from pathlib import Path

import pytest

from sim.cli import main

EXAMPLES = sorted((Path(__file__).resolve().parent.parent / "examples").glob("*.toml"))


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_scenario_file_runs(path, tmp_path, capsys) -> None:
    """`memsim run FILE.toml --out DIR` succeeds, prints a summary and writes the trace."""
    with pytest.raises(SystemExit) as exc:
        main(["run", str(path), "--out", str(tmp_path)])

    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert out.strip()
    assert list(tmp_path.glob("*.db"))


def test_there_are_examples() -> None:
    """The README points at examples/; keep at least one there."""
    assert EXAMPLES
