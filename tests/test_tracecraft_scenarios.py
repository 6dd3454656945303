"""Tracecraft's scenarios: bounded parameters (typos and unknown agents are errors) and the requests each
run records (what an agent's harness hands the model, labelled by kind)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from sim import scenario as sc
from sim.errors import UsageError

NAMES = ["tracecraft_claim_contention", "tracecraft_cursor_reuse", "tracecraft_skewed_team"]


@pytest.mark.parametrize("name", NAMES)
def test_every_numeric_parameter_is_bounded(name: str) -> None:
    """Each numeric field has a lower and an upper bound and a description (sim.scenario.Params)."""
    params = sc.get(name).params

    assert issubclass(params, sc.Params)
    for field_name, info in params.model_fields.items():
        assert info.description, field_name
        if info.annotation in (int, float):
            kinds = {type(m).__name__ for m in info.metadata}
            assert kinds & {"Ge", "Gt"} and kinds & {"Le", "Lt"}, field_name


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"skews": {"zed": 10.0}}, "unknown agent"),
        ({"skews": {"bob": 1e9}}, "skews.bob: Input should be less than or equal to"),
        ({"duration_s": 0}, "duration_s"),
        ({"send_every_s": 1e6}, "send_every_s"),
        ({"typo": 1}, "no parameter 'typo'"),
    ],
)
def test_skewed_team_refuses_bad_parameters(params: dict[str, object], message: str) -> None:
    """An unknown agent in ``skews``, an out-of-range skew, duration or cadence, and a typo are errors."""
    with pytest.raises(UsageError, match=message):
        sc.plan("tracecraft_skewed_team", params=params)


@pytest.mark.parametrize("name", NAMES)
def test_scenario_records_what_reaches_the_model(name: str, tmp_path: Path) -> None:
    """Every run records requests whose parts are labelled (system prompt, CLI output as messages)."""
    db = tmp_path / "trace.db"
    sc.execute(name, trace_path=db)
    conn = sqlite3.connect(db)
    rows = conn.execute("SELECT route, detail FROM requests").fetchall()
    conn.close()

    assert rows
    assert all('"tokens_by_kind"' in detail and '"system"' in detail for _, detail in rows)
    assert {route for route, _ in rows} <= {"tracecraft.claim", "tracecraft.resume", "tracecraft.inbox"}
