"""Issue 38 part A: results a researcher can publish. The window gate (a request over the window delivers
nothing) in both benchmarks, windows fitted to the corpus, speaker roles, intervals resampled by
instance, the baselines' names in --designs; and, with ``MEMSIM_LOCOMO_FILE``, the real LoCoMo file."""

from __future__ import annotations

import json
import os
import random
import sqlite3
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("sim.conversations.formats")

from conversation_helpers import make_instance
from test_cli import cli

from sim.bench.metrics import Metrics
from sim.bench.stats import MIN_SEEDS, bootstrap
from sim.bench.tasks import DesignSpec
from sim.conversations.formats import iter_instances
from sim.conversations.intervals import by_instance
from sim.conversations.metrics import aggregate
from sim.conversations.roles import DEFAULT_ROLES, POSITIONAL, Roles, apply_roles, parse_roles, roles_for
from sim.conversations.run import run_instance
from sim.conversations.samples import sample_path
from sim.conversations.window import OVER_WINDOW, enforce_window
from sim.conversations.windows import MIN_WINDOW, fit, fit_file, instance_tokens
from sim.errors import UsageError
from sim.trace import RequestRecord
from sim.workload import WorkStep

FULL = DesignSpec("full", "full")


# -- the gate ---------------------------------------------------------------------------------------------
def _row(over: int) -> dict[str, object]:
    return {
        "question_id": "q", "over_window": over, "evidence_turns": 3, "evidence_in_context": 2,
        "evidence_sessions": 2, "sessions_in_context": 1, "answer_in_context": 1,
        "lost": json.dumps([["t2", "folded@3"]]),
    }  # fmt: skip


def test_gate_zeroes_an_over_window_row_and_keeps_the_as_built_figure() -> None:
    got = enforce_window(_row(1), ["t0", "t1", "t2"])
    assert (got["evidence_in_context"], got["sessions_in_context"], got["answer_in_context"]) == (0, 0, 0)
    assert json.loads(got["lost"]) == [["t0", OVER_WINDOW], ["t1", OVER_WINDOW], ["t2", OVER_WINDOW]]
    assert (got["evidence_in_context_unenforced"], got["sessions_in_context_unenforced"]) == (2, 1)
    assert enforce_window(got, ["t0", "t1", "t2"]) == got  # applied twice: nothing more


def test_gate_leaves_a_row_within_the_window_as_built() -> None:
    row = _row(0)
    got = enforce_window(row, ["t0", "t1", "t2"])
    assert {k: got[k] for k in row} == row
    assert got["evidence_in_context_unenforced"] == 2


def test_full_scores_zero_where_the_conversation_is_over_the_window() -> None:
    """``full`` sends the whole haystack: over the window it delivers nothing, each evidence turn lost
    with the reason; within it, everything."""
    inst = make_instance(sessions=6, turns=6, words=60, questions=2)
    size = instance_tokens(inst)
    small, large = (MIN_WINDOW + size) // 2, size * 2
    rows = run_instance(inst, FULL, (small, large))
    for r in rows:
        if r["budget"] == small:
            assert r["over_window"] == 1 and r["evidence_in_context"] == 0
            assert r["evidence_in_context_unenforced"] == r["evidence_turns"] > 0
            assert {why for _tid, why in json.loads(r["lost"])} == {OVER_WINDOW}
        else:
            assert r["over_window"] == 0 and r["evidence_in_context"] == r["evidence_turns"]
    agg = {a["budget"]: a for a in aggregate(rows) if a["question_type"] == "all"}
    assert agg[small]["evidence_recall_turn"] == 0.0 and agg[small]["evidence_recall_turn_unenforced"] == 1.0
    assert agg[large]["evidence_recall_turn"] == 1.0
    assert agg[small]["scored"] == 2 and agg[small]["questions"] == 2


def _record(tokens: int, fact: str) -> RequestRecord:
    rec = RequestRecord(0, 0.0, "a", "s", "r", tokens, None, 1)
    object.__setattr__(rec, "facts", json.dumps([fact]))
    return rec


def test_fact_token_probe_over_the_window_scores_zero() -> None:
    """The fact-token benchmark's probe recall counts a hit only in a request within the window; the
    as-built share is ``recall_unenforced``."""
    m = Metrics(1000)
    probe = WorkStep(0, "x", probe="FACT-0001")
    m(probe, None, _record(1500, "FACT-0001"))  # type: ignore[arg-type]
    m(WorkStep(1, "x", probe="FACT-0001"), None, _record(900, "FACT-0001"))  # type: ignore[arg-type]
    assert (m.probes, m.hits, m.hits_unenforced) == (2, 1, 2)


# -- windows fitted to the corpus -------------------------------------------------------------------------
def test_windows_are_half_whole_and_twice_the_median_on_a_500_grid() -> None:
    assert fit([17_400, 18_000, 30_000]).windows == (9_000, 18_000, 36_000)
    assert fit([10_250, 10_250]).windows == (5_000, 10_500, 20_500)  # 5,125 -> 5,000; 10,250 -> 10,500
    assert fit([100]).windows == (MIN_WINDOW,)  # every fraction below the smallest window: one window
    got = fit_file("locomo", str(sample_path("locomo_demo")))
    assert got.instances == 5 and len(got.windows) == 3


def test_cli_fits_windows_without_budgets_and_records_them(capsys, tmp_path: Path) -> None:
    out = tmp_path / "out"
    path = sample_path("locomo")
    code, stdout, err = cli(capsys, "bench", "--workload", f"locomo:{path}", "--designs", "tracecraft",
                            "--out", str(out), "--no-plots")  # fmt: skip
    assert code == 0, err
    fitted = fit_file("locomo", str(path))
    assert fitted.describe() in stdout
    from sim.provenance import read_db_meta

    record = read_db_meta(out / "results.db")
    assert record is not None
    meta = record["settings"]  # the provenance record's settings (sim.provenance)
    assert meta["budgets"] == list(fitted.windows)
    assert meta["windows"] == ",".join(str(w) for w in fitted.windows)
    assert meta["roles"] == DEFAULT_ROLES.text() == "both=user"


# -- speaker roles ----------------------------------------------------------------------------------------
def test_roles_parse_every_spelling_and_refuse_the_rest() -> None:
    assert parse_roles("a=user,b=assistant") == POSITIONAL == parse_roles(" b=assistant , a=user ")
    assert parse_roles("both=user") == Roles("user", "user")
    assert parse_roles("swap") == Roles("assistant", "user")
    for bad in ("a=user", "a=bot,b=user", "both=user,a=user", "a=user,a=assistant", ""):
        with pytest.raises(UsageError):
            parse_roles(bad)
    assert roles_for("locomo", None) == DEFAULT_ROLES and roles_for("longmemeval", None) is None
    with pytest.raises(UsageError):
        roles_for("longmemeval", "both=user")


def test_roles_decide_what_tracecraft_saves() -> None:
    """tracecraft's conversation save keeps user turns only: read as ``a=user,b=assistant`` speaker_b's
    evidence is never saved (only a session tail can show it); with both speakers users it is saved."""
    inst = next(iter(iter_instances("locomo", sample_path("locomo_demo"))))
    spec = DesignSpec("tracecraft", "tracecraft")
    b_turns = {t.turn_id for t in inst.turns if t.role == "assistant"}  # speaker_b, as the loader reads

    def b_lost(roles: Roles) -> dict[str, str]:
        rows = run_instance(apply_roles(inst, roles), spec, (2_000,))
        assert not any(r["over_window"] for r in rows)
        return {tid: why for r in rows for tid, why in json.loads(r["lost"]) if tid in b_turns}

    positional, both = b_lost(POSITIONAL), b_lost(DEFAULT_ROLES)
    assert positional and all(why.startswith("never-saved") for why in positional.values())
    assert not any(why.startswith("never-saved") for why in both.values())
    assert apply_roles(inst, POSITIONAL) is inst
    assert {t.role for t in apply_roles(inst, DEFAULT_ROLES).turns} == {"user"}


def test_cli_refuses_roles_outside_a_two_person_corpus(capsys, tmp_path: Path) -> None:
    path = sample_path("longmemeval_s")
    code, _o, err = cli(capsys, "bench", "--workload", f"longmemeval:{path}", "--roles", "swap", "--out",
                        str(tmp_path / "o"), "--budgets", "4000")  # fmt: skip
    assert code == 2 and err.count("memsim: error:") == 1 and "--roles" in err
    assert not (tmp_path / "o").exists()


# -- intervals by instance --------------------------------------------------------------------------------
def _clustered(instances: int = 8, per: int = 40) -> list[tuple[str, float]]:
    """Questions whose recall is mostly set by their instance (each instance all 1s or all 0s, nearly)."""
    r = random.Random(38)
    out = []
    for k in range(instances):
        p = 0.9 if k % 2 else 0.1
        out += [(f"c{k}", float(r.random() < p)) for _ in range(per)]
    return out


def test_bootstrap_by_instance_is_deterministic_and_wider_than_by_question() -> None:
    values = _clustered()
    one, two = by_instance(values), by_instance(list(values))
    assert one == two and one is not None and one.n == 8 and one.enough
    by_q = bootstrap([v for _i, v in values], "by-question")
    assert by_q is not None
    assert (one.hi - one.lo) > 2 * (by_q.hi - by_q.lo)
    assert one.lo <= one.mean <= one.hi


def test_too_few_instances_claim_no_interval(capsys, tmp_path: Path) -> None:
    rows = []
    for k in range(MIN_SEEDS - 1):
        rows += run_instance(make_instance(k, questions=3), FULL, (200_000,))
    (a,) = [a for a in aggregate(rows) if a["question_type"] == "all"]
    assert a["instances"] == MIN_SEEDS - 1 and a["evidence_recall_turn_lo"] is None
    wl = f"locomo:{sample_path('locomo')}"
    code, stdout, err = cli(capsys, "bench", "--workload", wl, "--designs", "full", "--budgets", "4000",
                            "--out", str(tmp_path / "o"), "--no-plots")  # fmt: skip
    assert code == 0, err
    assert "too few to conclude" in stdout and "scored / questions" in stdout and "category-4" in stdout


# -- names ------------------------------------------------------------------------------------------------
def test_every_baseline_name_is_accepted_on_conversations_and_refused_on_facts(capsys, tmp_path) -> None:
    path = sample_path("locomo")
    for k, names in enumerate(("oracle", "oracle-sessions", "full", "full,tracecraft")):
        out = tmp_path / f"o{k}"
        code, _o, err = cli(capsys, "bench", "--workload", f"locomo:{path}", "--designs", names,
                            "--budgets", "4000", "--out", str(out), "--no-plots")  # fmt: skip
        assert code == 0, (names, err)
        designs = {r[0] for r in sqlite3.connect(out / "results.db").execute("SELECT design FROM questions")}
        assert designs == {"oracle", "oracle-sessions", "full"} | ({"tracecraft"} if "," in names else set())
    f = tmp_path / "f"
    code, _o, err = cli(capsys, "bench", "--designs", "full", "--budgets", "4000", "--out", str(f))
    assert code == 2 and "conversation" in err and not f.exists()


# -- the real LoCoMo file (skips without it) --------------------------------------------------------------
LOCOMO = os.environ.get("MEMSIM_LOCOMO_FILE")


@pytest.mark.skipif(not LOCOMO, reason="set MEMSIM_LOCOMO_FILE to the released locomo10.json")
def test_real_locomo_full_delivers_nothing_over_8k_and_intervals_are_by_conversation() -> None:
    assert LOCOMO is not None
    instances = list(iter_instances("locomo", LOCOMO))
    rows = []
    for inst in instances:
        got = run_instance(inst, FULL, (8_000,))
        over = instance_tokens(inst) > 8_000
        for r in got:
            if over:  # the whole conversation is over the window: nothing delivered
                assert r["over_window"] == 1 and r["evidence_in_context"] == 0
                assert {why for _t, why in json.loads(r["lost"])} <= {OVER_WINDOW}
        rows += got
    assert all(instance_tokens(i) > 8_000 for i in instances)  # every released conversation is
    (a,) = [a for a in aggregate(rows) if a["question_type"] == "all"]
    assert a["evidence_recall_turn"] == 0.0 and a["evidence_recall_turn_unenforced"] == 1.0
    assert a["instances"] == 10 and a["questions"] == 1_986 and a["scored"] == 1_536
    rsi = []
    for inst in instances:
        rsi += run_instance(inst, DesignSpec("rsiagent", "rsiagent"), (8_000,))
    scored = [r for r in rsi if r["evidence_turns"] and not r["abstention"]]
    values = [(r["instance"], r["evidence_in_context_unenforced"] / r["evidence_turns"]) for r in scored]
    conv, ques = by_instance(values), bootstrap([v for _i, v in values], "q")
    assert conv is not None and ques is not None
    assert conv.hi - conv.lo > 2 * (ques.hi - ques.lo)  # about [0.39, 0.50] against [0.41, 0.46]


# -- the gate as a property -------------------------------------------------------------------------------
@given(
    sessions=st.integers(1, 5),
    turns=st.integers(1, 6),
    words=st.integers(8, 80),
    window=st.integers(MIN_WINDOW, 6_000),
    design=st.sampled_from(["full", "oracle-sessions", "tracecraft"]),
)
@settings(deadline=None)
def test_no_request_over_the_window_is_credited(sessions, turns, words, window, design) -> None:
    """Whatever the conversation and the window: a row over the window has nothing in context and every
    evidence turn lost as request-over-window; no row is credited more than its request as built."""
    inst = make_instance(sessions=sessions, turns=turns, words=words, questions=2)
    for r in run_instance(inst, DesignSpec(design, design), (window,)):
        assert r["evidence_in_context"] <= r["evidence_in_context_unenforced"]
        lost = json.loads(r["lost"])
        assert len(lost) == r["evidence_turns"] - r["evidence_in_context"]
        if r["over_window"]:
            assert r["evidence_in_context"] == r["sessions_in_context"] == 0
            assert [why for _t, why in lost] == [OVER_WINDOW] * r["evidence_turns"]
        else:
            assert r["evidence_in_context"] == r["evidence_in_context_unenforced"]
