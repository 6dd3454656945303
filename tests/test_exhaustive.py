"""The exhaustive small-scope mode (``memsim claims --exhaustive``): canonical order and minimality, scope
validation, the reductions' soundness, identical results across workers, resumed runs, the CLI's exit codes.

Every test runs small scopes (seconds); the whole exhaustive ledger is a benchmark
(``benchmarks/bench_exhaustive.py``), not a test.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Literal

import pytest
from pydantic import Field
from test_cli import cli  # memsim ARGS in-process: (exit code, stdout, stderr)
from typing_extensions import TypedDict

from sim import claims as cl
from sim.exhaustive import (
    Scope,
    ScopeError,
    derive,
    enumerate_cases,
    interchangeable,
    record,
    seq,
    validate,
    values,
)
from sim.exhaustive import run as ex_run
from sim.exhaustive import runner as ex_runner
from sim.exhaustive.scope import size

# -- canonical order and minimality on a toy claim --------------------------------------------------------


class Toy(TypedDict):
    kind: Literal["a", "b"]
    ops: Annotated[list[Annotated[int, Field(ge=0, le=9)]], Field(max_length=4)]


TOY = derive(Toy, max_len=3, paths={"ops.*": values(0, 1, 5, 9)})


def toy_fails(ex: dict[str, Any]) -> bool:
    """The toy property's failure: kind b with operations summing to 6 or more."""
    return ex["kind"] == "b" and sum(ex["ops"]) >= 6


def test_enumeration_is_size_first_then_lexicographic() -> None:
    cases = enumerate_cases(TOY)
    sizes = [size(TOY, c) for c in cases]

    assert len(cases) == TOY.count() == 2 * (1 + 4 + 16 + 64)
    assert cases[:3] == [{"kind": "a", "ops": []}, {"kind": "b", "ops": []}, {"kind": "a", "ops": [0]}]
    assert sizes == sorted(sizes)  # (sequence elements, rank sum) never decreases
    assert len({json.dumps(c, sort_keys=True) for c in cases}) == len(cases)


def test_first_counterexample_in_canonical_order_is_minimal() -> None:
    cases = enumerate_cases(TOY)
    failing = [c for c in cases if toy_fails(c)]
    first = failing[0]
    smaller = [c for c in cases if size(TOY, c) < size(TOY, first)]

    assert first == {"kind": "b", "ops": [9]}  # one operation; [1, 5] needs two
    assert size(TOY, first) == min(size(TOY, c) for c in failing)
    assert smaller and not any(toy_fails(c) for c in smaller)


def test_scope_bound_rebounds_every_sequence_within_the_type() -> None:
    assert TOY.count(1) == 2 * (1 + 4)
    assert TOY.count(9) == 2 * sum(4**k for k in range(5))  # capped at the type's max_length of 4
    assert TOY.describe(2)["bound"] == 2


def test_unique_sequences_and_prefix() -> None:
    s = Scope(seq(values("x", "y"), 2, unique=True, prefix=("p",)))

    assert enumerate_cases(s) == [["p"], ["p", "x"], ["p", "y"], ["p", "x", "y"], ["p", "y", "x"]]
    assert s.count() == 5
    assert size(s, ["p", "x", "x"]) is None and size(s, ["x"]) is None


# -- validation ---------------------------------------------------------------------------------------


def test_a_scope_outside_its_example_type_is_refused() -> None:
    bad = derive(Toy, paths={"ops.*": values(0, 10)})  # 10 > le=9

    with pytest.raises(ScopeError, match="outside the example type"):
        validate(bad, Toy)
    assert validate(TOY, Toy) == TOY.count()


def test_derive_refuses_unknown_fields_and_undeclared_strings() -> None:
    class Named(TypedDict):
        name: Annotated[str, Field(max_length=4)]

    with pytest.raises(ScopeError, match="no field 'opz'"):
        derive(Toy, paths={"opz": values(1)})
    with pytest.raises(ScopeError, match="free string needs declared values"):
        derive(Named)
    assert enumerate_cases(derive(Named, name=values("", "ab"))) == [{"name": ""}, {"name": "ab"}]


def test_sequences_longer_than_the_type_allows_are_refused() -> None:
    long = Scope(record(kind=values("a"), ops=seq(values(0), 5)))

    with pytest.raises(ScopeError, match="ops"):
        validate(long, Toy)


def test_a_claim_without_a_scope_is_a_usage_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from sim.errors import UsageError
    from sim.exhaustive import declared

    monkeypatch.setattr(declared, "declared", lambda system: {})
    with pytest.raises(UsageError, match="declares no exhaustive scope"):
        declared.scope_of("nemsy.recency-window")


# -- reductions ---------------------------------------------------------------------------------------


def test_interchangeable_relabels_by_first_appearance() -> None:
    sym = interchangeable("a", "b")

    assert sym([["claim", "b"], ["complete", "a"]]) == [["claim", "a"], ["complete", "b"]]
    assert sym([["claim", "a"], ["complete", "a"]]) == [["claim", "a"], ["complete", "a"]]
    assert sym({"x": "b", "y": "c"}) == {"x": "a", "y": "c"}


REDUCED = ["tracecraft.completed-step-regresses", "merchantbench.id-aliasing", "nemsy.parser-stray-hash"]


@pytest.mark.parametrize("claim_id", REDUCED)
def test_reductions_are_sound(claim_id: str) -> None:
    """Every case a reduction skips has, in every direction, the verdict of the earlier case it stands for;
    so reduced and unreduced runs give the same ledger."""
    claim = cl.get(claim_id)
    scope = ex_runner.scope_of(claim_id)
    small = Scope(scope.shape, symmetry=scope.symmetry, canonical=scope.canonical)
    cases = enumerate_cases(small, 2)
    why = ex_runner.reasons(small, cases)
    assert why.count("symmetry") + why.count("duplicates") > 0
    rep = {}
    for i, case in enumerate(cases):
        reduced = small.symmetry or small.canonical
        assert reduced is not None
        key = json.dumps(reduced(case), sort_keys=True)
        rep.setdefault(key, i)
        for d in cl.DIRECTIONS:
            if why[i]:
                mine = claim.run(claim.decode(case), d).holds
                theirs = claim.run(claim.decode(cases[rep[key]]), d).holds
                assert mine == theirs, (case, cases[rep[key]], d)


def _verdicts(rows: list[Any]) -> list[Any]:
    """The rows' directions without timings (what must not depend on workers, reductions or resuming)."""
    out = []
    for r in rows:
        for name, d in r.directions.items():
            j = d.to_json()
            for k in ("seconds", "cpu_seconds", "reductions", "examples"):
                j.pop(k)
            out.append((r.claim, name, j))
    return out


def test_reduced_and_unreduced_runs_agree() -> None:
    selected = [cl.get("tracecraft.completed-step-regresses")]
    reduced = ex_run.run_ledger(selected, 2, compare=False)
    full = ex_run.run_ledger(selected, 2, compare=False, reduce=False)

    assert sum(reduced[0].directions[cl.FIXED].reductions.values()) > 0
    assert sum(full[0].directions[cl.FIXED].reductions.values()) == 0
    assert _verdicts(reduced) == _verdicts(full)
    assert all(r.as_expected for r in reduced)


# -- workers and resuming ---------------------------------------------------------------------------------

CHEAP = ["tracecraft.history-not-immutable", "nemsy.delete-leaves-index"]


def test_workers_give_identical_results() -> None:
    selected = [cl.get(c) for c in CHEAP]
    one = ex_run.run_ledger(selected, 2, workers=1)
    two = ex_run.run_ledger(selected, 2, workers=2)

    assert _verdicts(one) == _verdicts(two)
    assert [d.hypothesis for r in one for d in r.directions.values()] == [
        d.hypothesis for r in two for d in r.directions.values()
    ]


@pytest.mark.slow  # a local Dask cluster starts in seconds, not tenths
def test_dask_gives_identical_results() -> None:
    pytest.importorskip("dask.distributed", reason="the dask extra is not installed")
    selected = [cl.get(CHEAP[1])]

    assert _verdicts(ex_run.run_ledger(selected, 2, executor="dask", workers=2, compare=False)) == _verdicts(
        ex_run.run_ledger(selected, 2, compare=False)
    )


def test_resume_continues_from_saved_progress(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    selected = [cl.get(c) for c in CHEAP]
    clean = ex_run.run_ledger(selected, 2, compare=False)
    progress = tmp_path / "progress"
    real = ex_runner.run_task
    calls: list[str] = []

    def interrupted(task: ex_runner.Task) -> dict[str, Any]:
        if len(calls) == 3:
            raise KeyboardInterrupt
        calls.append(task.key)
        return real(task)

    monkeypatch.setattr(ex_run, "run_task", interrupted)
    with pytest.raises(KeyboardInterrupt):
        ex_run.run_ledger(selected, 2, compare=False, resume=progress)
    saved = sorted(p.name for p in progress.iterdir() if p.suffix == ".json")
    assert len(saved) == 3 and not [p for p in progress.iterdir() if p.name.startswith(".")]

    calls.clear()
    monkeypatch.setattr(ex_run, "run_task", lambda t: (calls.append(t.key), real(t))[1])
    resumed = ex_run.run_ledger(selected, 2, compare=False, resume=progress)
    total = sum(len(ex_runner.tasks_of(c, 2)) for c in selected)

    assert len(calls) == total - 3  # the saved tasks were not run again
    assert _verdicts(resumed) == _verdicts(clean)


def test_resume_ignores_a_damaged_progress_file(tmp_path: Path) -> None:
    selected = [cl.get(CHEAP[0])]
    progress = tmp_path / "p"
    first = ex_run.run_ledger(selected, 2, compare=False, resume=progress)
    victim = next(p for p in progress.iterdir() if p.suffix == ".json")
    victim.write_text('{"key": "something else", "cases": 1}')

    assert _verdicts(ex_run.run_ledger(selected, 2, compare=False, resume=progress)) == _verdicts(first)


# -- the command line ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args, fragment",
    [
        (["--scope", "2"], "--scope needs --exhaustive"),
        (["--exhaustive", "--scope", "0"], "--scope"),
        (["--exhaustive", "--executor", "ray"], "unknown executor 'ray'"),
        (["--resume", "DIR"], "--resume needs --exhaustive"),
    ],
)
def test_bad_exhaustive_input_is_exit_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, args: list[str], fragment: str
) -> None:
    args = [str(tmp_path / "p") if a == "DIR" else a for a in args]
    code, out, err = cli(capsys, "claims", "--claim", CHEAP[0], "--json", str(tmp_path / "l.json"), *args)

    assert code == 2 and out == "" and err.count("\n") == 1 and fragment in err, err
    assert not (tmp_path / "l.json").exists()


def test_resume_refuses_a_directory_that_is_not_progress(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    code, out, err = cli(capsys, "claims", "--exhaustive", "--claim", CHEAP[0], "--resume", str(tmp_path))

    assert code == 2 and out == "" and "not a progress directory" in err
    assert [p.name for p in tmp_path.iterdir()] == ["notes.txt"]


def test_exhaustive_ledger_json_and_markdown(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _out, err = cli(
        capsys, "claims", "--exhaustive", "--scope", "2", "--claim", CHEAP[0],
        "--json", str(tmp_path / "l.json"), "--markdown", str(tmp_path / "l.md"),
        "--html", str(tmp_path / "l.html"),
    )  # fmt: skip
    doc = json.loads((tmp_path / "l.json").read_text())
    row = doc["claims"][0]

    assert code == 0, err
    assert doc["exhaustive"] == "scope 2"
    for name in cl.DIRECTIONS:
        d = row[name]
        assert (
            d["exhaustive"] is True and d["scope"]["cases"] == d["total"] == 91 and d["scope"]["bound"] == 2
        )
    assert row["fixed"]["holds_all"] is True and row["fixed"]["cases"] == 91
    assert row["faithful"]["first_counterexample"] == [["set", 0], ["direct_put", 0]]
    assert row["faithful"]["hypothesis"]["same"] is True
    md = (tmp_path / "l.md").read_text()
    assert "`memsim claims --exhaustive --scope 2 --markdown FILE`" in md and "| bound |" in md
    assert "holds for all 91 cases within scope" in md
    assert "holds for all 91 cases within scope; scope: [" in (tmp_path / "l.html").read_text()


def test_a_direction_that_fails_within_scope_is_exit_1(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A scope too small to hold the faithful failure (one source: nothing pushes it out of the window)."""
    from sim.exhaustive import declared

    real = declared.declared

    def one_source(system: str) -> dict[str, Scope]:
        scopes = dict(real(system))
        scopes["nemsy.recency-window"] = derive(
            cl.get("nemsy.recency-window").example_type, sources=values(1)
        )
        return scopes

    monkeypatch.setattr(declared, "declared", one_source)
    code, out, err = cli(capsys, "claims", "--exhaustive", "--claim", "nemsy.recency-window")

    assert code == 1, err
    assert "NO COUNTEREXAMPLE in all 16 cases within scope" in out.replace("\n", " ").replace("│", " ") or (
        "NO COUNTEREXAMPLE" in out
    )
