"""Fuzzing what ``memsim report`` and ``memsim replay`` read: claims ledgers, bench databases, traces
(issue 26).

Each input starts as what its writer produces (a ledger row as :func:`sim.ledger.to_json` writes it, the
tables of a real ``memsim bench`` run, the trace of a real scenario run) and is mutated: a field dropped,
retyped or added, a row deleted, a table dropped or given a column, the file truncated or re-encoded.
Property: exit 0 or 2 (``replay`` may also exit 1, its verdict "differs"), never an internal error or a
traceback, on 2 exactly one ``memsim: error:`` line and nothing written. Helpers: ``tests/fuzzing.py``.
"""

from __future__ import annotations

import contextlib
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from fuzzing import LEAVES, Workspace, encoded, fuzz_settings, json_text, mutated, run_cli
from hypothesis import given
from hypothesis import strategies as st

DIRECTION = {
    "ok": True,
    "examples": 3,
    "seconds": 0.1,
    "example": [1, {"a": "b"}],
    "summary": "[1]",
    "detail": "d",
}
ROW = {
    "claim": "merchantbench.suffix-eviction", "system": "merchantbench", "records": ["MEM-X"],
    "statement": "s", "fix": "f", "fixes": ["f"], "counterfactual": False, "intent": "", "seed": 0,
    "seconds": 0.1, "real": "", "off_switches": ["o"], "faithful_ok": True, "fixed_ok": True, "off_ok": True,
    "combined_ok": False, "faithful": DIRECTION, "fixed": {**DIRECTION, "example": None}, "off": DIRECTION,
    "combined": None, "as_expected": False,
}  # fmt: skip
LEDGER = {"profile": "ci", "seed": 0, "memsim_version": "0.3.0", "claims": [ROW, {**ROW, "system": "toy"}]}


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    return Workspace(tmp_path_factory.mktemp("fuzz-report"))


@fuzz_settings(ci=40, thorough=800)
@given(data=st.data())
def test_fuzz_claims_ledger(ws: Workspace, data: st.DataObject) -> None:
    doc = data.draw(mutated(LEDGER))
    raw = data.draw(encoded(json_text(doc)))
    r = ws.check(["report", "l.json", "-o", "l.html"], {"l.json": raw})
    if json_text(doc) == json_text(LEDGER) and raw == json_text(doc).encode():  # True == 1 in Python
        assert r.code == 0, r


# -- SQLite inputs -------------------------------------------------------------------------------------------
def _sql_value(v: Any) -> Any:
    """*v* as SQLite can bind it (an integer out of its range becomes text, a container its JSON)."""
    if isinstance(v, bool) or v is None or isinstance(v, float | str):
        return v
    if isinstance(v, int):
        return v if -(2**63) <= v < 2**63 else str(v)
    return json_text(v)


@st.composite
def db_mutation(draw: st.DrawFn, tables: dict[str, list[str]]) -> tuple[str, ...]:
    """One change to a database with *tables* (name to columns), as SQL with its parameters."""
    table = draw(st.sampled_from(sorted(tables)))
    column = draw(st.sampled_from(tables[table]))
    kind = draw(st.sampled_from(["set", "set", "set", "null", "delete", "drop", "add", "dup"]))
    if kind == "set":
        return (
            f'UPDATE "{table}" SET "{column}" = ? WHERE rowid = (SELECT min(rowid) FROM "{table}")',
            "value",
        )
    if kind == "null":
        return (f'UPDATE "{table}" SET "{column}" = NULL',)
    if kind == "delete":
        return (f'DELETE FROM "{table}"',)
    if kind == "drop":
        return (f'DROP TABLE "{table}"',)
    if kind == "add":
        return (
            f'ALTER TABLE "{table}" ADD COLUMN "{draw(st.text("abcxyz_", min_size=1, max_size=6))}" TEXT',
        )
    return (f'INSERT INTO "{table}" SELECT * FROM "{table}" LIMIT 1',)


def _tables(db: Path) -> dict[str, list[str]]:
    con = sqlite3.connect(db)
    names = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    out = {n: [r[1] for r in con.execute(f'PRAGMA table_info("{n}")')] for n in names}
    con.close()
    return out


def _mutate_db(data: st.DataObject, src: Path) -> bytes:
    """The bytes of *src* with zero to three drawn changes applied (then, sometimes, truncated)."""
    dst = src.with_name("mutated.db")
    shutil.copyfile(src, dst)
    tables = _tables(src)
    con = sqlite3.connect(dst)
    for sql, *param in data.draw(st.lists(db_mutation(tables), max_size=3)):
        args = (_sql_value(data.draw(LEAVES)),) if param else ()
        with contextlib.suppress(sqlite3.Error):  # a change the database refuses: no change
            con.execute(sql, args)
    con.commit()
    con.close()
    raw = dst.read_bytes()
    dst.unlink()
    if data.draw(st.integers(0, 9)) == 0:
        raw = raw[: data.draw(st.integers(0, len(raw)))]
    return raw


@pytest.fixture(scope="module")
def bench_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("bench")
    args = [
        "--designs",
        "tracecraft",
        "--budgets",
        "8000,16000",
        "--seeds",
        "2",
        "--steps",
        "10",
        "--no-plots",
    ]
    r = run_cli(["bench", *args, "--out", "b"], base)
    assert r.code == 0, r
    return base / "b" / "results.db"


@fuzz_settings(ci=30, thorough=500)
@given(data=st.data())
def test_fuzz_bench_database(ws: Workspace, bench_db: Path, data: st.DataObject) -> None:
    ws.check(["report", "b", "-o", "b.html"], {"b/results.db": _mutate_db(data, bench_db)})


#: A built-in scenario with model requests and a short run (its trace: 4 requests, 16 ops).
TRACE_SCENARIO = "tracecraft_cursor_reuse"


@pytest.fixture(scope="module")
def trace_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("trace")
    r = run_cli(["run", TRACE_SCENARIO, "--out", "t"], base)
    assert r.code == 0, r
    return base / "t" / f"{TRACE_SCENARIO}.db"


@fuzz_settings(ci=30, thorough=500)
@given(data=st.data())
def test_fuzz_trace_for_report(ws: Workspace, trace_db: Path, data: st.DataObject) -> None:
    ws.check(["report", "t.db", "-o", "t.html"], {"t.db": _mutate_db(data, trace_db)})


@fuzz_settings(ci=20, thorough=300)
@given(data=st.data())
def test_fuzz_trace_for_replay(ws: Workspace, trace_db: Path, data: st.DataObject) -> None:
    ws.check(["replay", "t.db", "--out", "r"], {"t.db": _mutate_db(data, trace_db)}, ok=(0, 1, 2))


@pytest.fixture(scope="module")
def conversation_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A conversation sweep's database (issue 37: its ``questions`` table is read back by ``report``)."""
    base = tmp_path_factory.mktemp("conversations")
    synth = ["workload", "synth", "locomo", "--instances", "1", "--sessions", "2", "--turns", "4"]
    assert run_cli([*synth, "--out", "w.json"], base).code == 0
    r = run_cli(["bench", "--workload", "locomo:w.json", "--designs", "tracecraft", "--budgets", "8000",
                 "--out", "c", "--no-plots"], base)  # fmt: skip
    assert r.code == 0, r
    return base / "c" / "results.db"


@fuzz_settings(ci=30, thorough=500)
@given(data=st.data())
def test_fuzz_conversation_questions_table(ws: Workspace, conversation_db: Path, data: st.DataObject) -> None:
    """The ``questions`` table mutated (a value retyped, NaN, text for a count, JSON broken): exit 0 or 2."""
    ws.check(["report", "c", "-o", "c.html"], {"c/results.db": _mutate_db(data, conversation_db)})


#: What the ``lost`` column may hold after an edit: JSON of any shape (pairs of leaves among it), or text.
LOST = st.one_of(
    st.builds(json_text, LEAVES),
    st.lists(st.lists(LEAVES, max_size=3), max_size=3).map(json_text),
    st.lists(st.tuples(st.text(max_size=6), st.text(max_size=6)).map(list), max_size=5).map(json_text),
    st.text(max_size=20),
)


@fuzz_settings(ci=30, thorough=500)
@given(data=st.data())
def test_fuzz_conversation_lost_column(ws: Workspace, conversation_db: Path, data: st.DataObject) -> None:
    """The ``lost`` column (JSON text the page parses) replaced by any JSON or text: exit 0 or 2."""
    dst = ws.base / "src.db"
    shutil.copyfile(conversation_db, dst)
    con = sqlite3.connect(dst)
    con.execute("UPDATE questions SET lost = ? WHERE rowid = 1", (data.draw(LOST),))
    con.commit()
    con.close()
    raw = dst.read_bytes()
    dst.unlink()
    ws.check(["report", "c", "-o", "c.html"], {"c/results.db": raw})
