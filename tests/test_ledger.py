"""The claims ledger and replay: `memsim claims` saves shrunk examples that `memsim replay` reruns, and a
scenario trace database replays to an identical trace."""

import json

from sim import claims as cl
from sim.cli import main
from sim.trace import read_trace

CLAIM = "nemsy.duplicate-index-on-reingest"


def _run(argv: list[str]) -> int:
    try:
        main(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    return 0


def test_claims_table_saves_and_replays_a_counterexample(tmp_path, capsys) -> None:
    """One claim through the CLI: table, JSON, Markdown, the saved example, and its replay both ways."""
    assert CLAIM in cl.registry("nemsy")
    saved = tmp_path / "examples"

    code = _run(
        [
            "claims",
            "--system",
            "nemsy",
            "--profile",
            "quick",
            "--claim",
            CLAIM,
            "--save",
            str(saved),
            "--json",
            str(tmp_path / "l.json"),
            "--markdown",
            str(tmp_path / "l.md"),
        ]
    )

    assert code == 0
    out = capsys.readouterr().out
    assert "1 claim: 1/1 counterexamples found on upstream's designs; 1 fixed variant held" in out
    doc = json.loads((tmp_path / "l.json").read_text())
    assert (doc["profile"], doc["seed"]) == ("quick", 0)
    rows = doc["claims"]
    assert [r["claim"] for r in rows] == [CLAIM] and rows[0]["faithful_ok"] and rows[0]["fixed_ok"]
    assert isinstance(rows[0]["records"], list)
    assert (
        "| claim | records | statement | faithful | fixed | off | combined | s |"
        in (tmp_path / "l.md").read_text()
    )
    example = saved / f"{CLAIM}.json"
    assert json.loads(example.read_text())["claim"] == CLAIM

    assert _run(["replay", str(example), "--out", str(tmp_path)]) == 0
    assert "[faithful]: VIOLATED" in capsys.readouterr().out
    assert read_trace(tmp_path / f"{CLAIM}.faithful.db").meta["claim"] == CLAIM
    assert _run(["replay", str(example), "--variant", "fixed", "--out", str(tmp_path)]) == 0
    assert "[fixed]: holds" in capsys.readouterr().out


def test_scenario_trace_replays_identically(tmp_path, capsys) -> None:
    """A trace written by `memsim run --out` reruns from its meta table to an identical trace."""
    assert _run(["run", "nemsy_title_collision", "--out", str(tmp_path)]) == 0
    first = capsys.readouterr().out

    assert _run(["replay", str(tmp_path / "nemsy_title_collision.db")]) == 0

    out = capsys.readouterr().out
    assert out.startswith(first)
    assert "identical trace" in out
    assert (tmp_path / "nemsy_title_collision.replay.db").read_bytes() == (
        tmp_path / "nemsy_title_collision.db"
    ).read_bytes()
