"""The deep exhaustive profile (``memsim claims --exhaustive --scope deep``, issue 42): every claim's own
bound doubled within its type, a declared deep shape where plain doubling would not finish, the same
runner and ledger as the declared scopes.

The deep ledger's time is a benchmark (``benchmarks/bench_exhaustive.py --scope deep``), not a test."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import pytest
from pydantic import Field
from test_cli import cli  # memsim ARGS in-process: (exit code, stdout, stderr)
from test_exhaustive import CHEAP, TOY, Toy
from typing_extensions import TypedDict

from sim import claims as cl
from sim.exhaustive import ScopeError, derive, enumerate_cases, seq, values
from sim.exhaustive.declared import scope_of
from sim.exhaustive.scope import DEEP, MAX_CASES, bound_of, deepen
from sim.testing import check_scope

CLAIMS = list(cl.registry())


def test_deep_doubles_every_sequence_within_the_type() -> None:
    """TOY's operations run 0..3 as declared; deep, 0..4 (the type's max_length of 4, not 6)."""
    assert TOY.count(DEEP) == 2 * sum(4**k for k in range(5))
    assert TOY.describe(DEEP)["bound"] == DEEP
    nested = Toy.__annotations__  # the toy's fields stay the same shape, only the bounds move
    assert set(enumerate_cases(TOY, DEEP)[-1]) == set(nested)
    assert bound_of(deepen(seq(seq(values(0), 2), 3))) == (6, None)


def test_a_declared_deep_shape_replaces_the_doubled_one() -> None:
    """``derive(deep=...)`` replaces a path in the doubled shape (declared domains doubled, derived lists
    at twice max_len); its note is said beside the scope's; an unknown deep path is refused."""
    s = derive(Toy, max_len=1, paths={"ops.*": values(0, 1, 5, 9)}, deep={"ops.*": values(9)}, deep_note="x")

    assert s.count() == 2 * (1 + 4)
    assert enumerate_cases(s, DEEP) == [{"kind": k, "ops": [9] * n} for n in range(3) for k in ("a", "b")]
    assert s.describe(DEEP)["note"] == "deep: x" and s.describe()["note"] == ""
    with pytest.raises(ScopeError, match="no field 'opz' in Toy \\(deep\\)"):
        derive(Toy, deep={"opz": values(1)})


def test_a_nested_declared_sequence_is_doubled_too() -> None:
    class Nested(TypedDict):
        runs: Annotated[list[Annotated[list[int], Field(max_length=4)]], Field(max_length=3)]

    s = derive(Nested, max_len=1, paths={"runs.*": seq(values(0), 1, cap=4)})
    deep = s.at(DEEP)

    assert s.count() == 1 + 2 and bound_of(deep) == (2, 3)
    assert sorted(len(c["runs"]) for c in enumerate_cases(s, DEEP)) == [0] + [1] * 3 + [2] * 9
    assert max(len(r) for c in enumerate_cases(s, DEEP) for r in c["runs"]) == 2


@pytest.mark.parametrize("claim_id", CLAIMS)
def test_every_claims_deep_scope_doubles_its_bound_and_holds_a_counterexample(claim_id: str) -> None:
    """The claim's bound (its longest sequence) at least doubles where the type's cap allows, the scope
    stays under the case limit, its ends are valid examples, and a faithful counterexample is among its
    first cases."""
    scope = scope_of(claim_id)
    declared, deep = bound_of(scope.shape), bound_of(scope.at(DEEP))

    if declared is not None:
        assert deep is not None
        n, cap = declared
        want = 2 * n if cap is None else min(2 * n, cap)
        assert deep[0] >= want, (claim_id, declared, deep)
    assert scope.count(DEEP) <= MAX_CASES
    assert check_scope(claim_id, bound=DEEP) == []


def test_the_deep_profile_stays_within_the_benchmarks_case_budget() -> None:
    """All deep scopes together hold at most 350,000 cases (329,315 now): the deep ledger ran them (fixed
    and combined each, faithful and off to their first counterexample: 645,850 case runs) in 321
    processor seconds, so about 160 s on 2 idle processes, within the 5 minutes with room for a claim or
    two; a claim whose doubled scope explodes declares a thinner deep shape instead."""
    total = sum(scope_of(c).count(DEEP) for c in CLAIMS)

    assert sum(scope_of(c).count() for c in CLAIMS) < total <= 350_000


def test_deep_ledger_on_the_command_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _out, err = cli(
        capsys, "claims", "--exhaustive", "--scope", "deep", "--claim", CHEAP[0],
        "--json", str(tmp_path / "l.json"), "--markdown", str(tmp_path / "l.md"),
    )  # fmt: skip
    doc: dict[str, Any] = json.loads((tmp_path / "l.json").read_text())
    fixed = doc["claims"][0]["fixed"]

    assert code == 0, err
    assert doc["exhaustive"] == "scope deep" and fixed["scope"]["bound"] == DEEP
    assert fixed["holds_all"] is True and fixed["total"] == scope_of(CHEAP[0]).count(DEEP)
    assert "`memsim claims --exhaustive --scope deep --markdown FILE`" in (tmp_path / "l.md").read_text()


@pytest.mark.parametrize("value", ["shallow", "0", "13", "-1"])
def test_a_bad_scope_is_exit_2(capsys: pytest.CaptureFixture[str], tmp_path: Path, value: str) -> None:
    code, out, err = cli(
        capsys, "claims", "--exhaustive", "--scope", value, "--claim", CHEAP[0], "--json", str(tmp_path / "l")
    )

    assert code == 2 and out == "" and err.count("\n") == 1 and "--scope" in err, err
    assert not (tmp_path / "l").exists()


def test_mirror_retry_completes_even_when_the_retry_itself_crashed() -> None:
    """The deep scope's first find: with the crash on the driver's final retry (the second part PUT of
    write, mirror, write) no retry completed, so mirror-intent and compact-manifest together showed the
    transcript without the landed part (meta is the manifest). The property is about the state after a
    completed retry: the driver retries once more when its retry crashed, and all fixes together hold."""
    c = cl.get("tracecraft.mirror-not-idempotent")
    ex = {"ops": ["write", "mirror", "write"], "crash": "after_part", "at": 2}

    assert c.run(c.decode(ex), cl.COMBINED).holds
    faithful = {"ops": ["write"], "crash": "after_part", "at": 1}  # the retry uploads the part again
    assert not c.run(c.decode(faithful), cl.FAITHFUL).holds
