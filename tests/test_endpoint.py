"""A user's S3 endpoint (``--store http://...``): a moto server on 127.0.0.1 stands in for MinIO."""

import pytest

from sim.cli import main
from sim.objects import MotoServer
from sim.scenario import execute, get


@pytest.mark.moto
def test_scenario_on_a_user_endpoint_matches_the_committed_output(monkeypatch) -> None:
    """The cursor-reuse scenario prints its committed summary when run against an endpoint URL."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "memsim")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "memsim-secret")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    server = MotoServer()
    try:
        lines = execute("tracecraft_cursor_reuse", store=server.url)
    finally:
        server.stop()

    assert "\n".join(lines) + "\n" == get("tracecraft_cursor_reuse").expected_path.read_text()


def test_unreachable_endpoint_is_one_line_and_exit_2(monkeypatch, capsys) -> None:
    """A refused connection is a usage error, not a traceback."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "memsim")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "memsim-secret")

    with pytest.raises(SystemExit) as exc:
        main(["run", "tracecraft_cursor_reuse", "--store", "http://127.0.0.1:1"])

    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("memsim: error: cannot use the S3 endpoint")
