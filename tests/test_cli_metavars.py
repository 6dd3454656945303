"""Help reads as a person writes a command: arguments by their metavar, no braces, no type tags."""

from __future__ import annotations

import re

import pytest

from sim.cli import main

COMMANDS = {"run": "SCENARIO", "replay": "FILE", "report": "INPUT", "doc": "[TOPIC] [SCENARIO]"}


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_arguments_show_as_written(capsys: pytest.CaptureFixture[str], command: str) -> None:
    """``memsim run --help`` says ``memsim run [OPTIONS] SCENARIO`` and lists ``SCENARIO`` (typer wrote
    ``{SCENARIO}`` and ``SCENARIO <str>``)."""
    with pytest.raises(SystemExit) as exc:
        main([command, "--help"])
    out = capsys.readouterr().out

    assert exc.value.code in (0, None)
    assert f" {command} [OPTIONS] {COMMANDS[command]}\n" in out.splitlines(keepends=True)[0]
    assert "{" not in out and not re.search(r"<(str|path|int)>", out)
    assert "[[" not in out
