"""LongMemEval's retrieval metrics (sim.conversations.retrieval): hand-computed cases, an independent
index-based computation in numpy on generated rankings, and the columns in a conversation run's rows."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sim.conversations import retrieval as rv


def test_hand_computed_turn_level() -> None:
    ranked = ["a", "b", "c", "d"]
    # k=2: b is in the top 2, d is not; DCG [0, 1] = 0 + 1/log2(2) = 1; ideal [1, 1] = 2.
    assert rv.evaluate(ranked, {"b", "d"}, 2) == (1.0, 0.0, 0.5)
    # k=5: all in; DCG [0, 1, 0, 1] = 1 + 1/log2(4) = 1.5; ideal [1, 1, 0, 0] = 2.
    assert rv.evaluate(ranked, {"b", "d"}, 5) == (1.0, 1.0, 0.75)
    # the first two positions are both undiscounted: [1, 0, 1] at k=3 is 1 + 0 + 1/log2(3).
    assert rv.dcg([1, 0, 1], 3) == pytest.approx(1 + 1 / math.log2(3))
    assert rv.evaluate(["a", "b"], {"c"}, 5) == (0.0, 0.0, 0.0)


def test_hand_computed_session_level_widens_k_to_k_sessions() -> None:
    ranked = ["s1:0", "s1:1", "s2:0", "s3:0", "s2:1"]
    session_of = {t: t.split(":")[0] for t in ranked}
    # k=2: the first 2 turns name one session, so K' = 3 (s1, s1, s2); s2 is in: any = all = 1;
    # NDCG: mapped relevance [0, 0, 1, 0, 1], DCG@3 = 1/log2(3), ideal [1, 1, 0, 0, 0] DCG@3 = 2.
    got = rv.evaluate_turn2session(ranked, {"s2:1"}, 2, session_of)
    assert got[:2] == (1.0, 1.0)
    assert got[2] == pytest.approx((1 / math.log2(3)) / 2)
    # k=5 asks for 5 sessions; only 3 exist, so K' runs past the ranking (every turn).
    assert rv.evaluate_turn2session(ranked, {"s3:0"}, 5, session_of)[:2] == (1.0, 1.0)


def _longmemeval_style(rankings: list[int], correct: list[str], corpus_ids: list[str], k: int) -> tuple:
    """An independent computation in LongMemEval's own terms: *rankings* index *corpus_ids*."""

    def dcg(rel: np.ndarray, k: int) -> float:
        rel = rel[:k].astype(float)
        if not rel.size:
            return 0.0
        return float(rel[0] + np.sum(rel[1:] / np.log2(np.arange(2, rel.size + 1))))

    relevances = np.array([1 if d in correct else 0 for d in corpus_ids])
    ideal = dcg(np.sort(relevances)[::-1], k)
    actual = dcg(relevances[np.array(rankings, dtype=int)], k) if rankings else 0.0
    recalled = {corpus_ids[i] for i in rankings[:k]}
    return (float(any(d in recalled for d in correct)), float(all(d in recalled for d in correct)),
            0.0 if ideal == 0 else actual / ideal)  # fmt: skip


@given(
    n=st.integers(1, 30),
    seed=st.randoms(use_true_random=False),
    k=st.sampled_from([1, 3, 5, 10, 30, 50]),
    n_correct=st.integers(1, 4),
)
def test_matches_an_independent_index_based_computation(n: int, seed, k: int, n_correct: int) -> None:
    corpus = [f"t{i}" for i in range(n)]
    order = list(range(n))
    seed.shuffle(order)
    correct = seed.sample(corpus, min(n_correct, n))
    got = rv.evaluate([corpus[i] for i in order], set(correct), k)
    want = _longmemeval_style(order, correct, corpus, k)
    assert got[:2] == want[:2]
    assert got[2] == pytest.approx(want[2], abs=1e-12)


def test_metrics_columns_and_abstention_left_out_of_means() -> None:
    r = rv.Ranking("turn", ("a:0", "b:0", "a:1"))
    m = rv.metrics(r, ("a:1",), {"a:0": "a", "a:1": "a", "b:0": "b"})
    assert set(m) == set(rv.COLUMNS)
    assert m["recall_any_at_5_turn"] == 1.0 and m["recall_all_at_5_session"] == 1.0
    assert rv.metrics(None, ("a:1",), {}) == dict.fromkeys(rv.COLUMNS)
    assert (
        rv.metrics(rv.Ranking("session", ("b", "a")), ("a:1",), {"a:1": "a"})["recall_any_at_5_turn"] is None
    )
    rows = [
        {"design": "d", "budget": 1, "question_type": "x", "abstention": 0, **m},
        {"design": "d", "budget": 1, "question_type": "x", "abstention": 1,
         **dict.fromkeys(rv.COLUMNS, 0.0)},
    ]  # fmt: skip
    agg = rv.aggregate_into([{"design": "d", "budget": 1, "question_type": "all"}], rows)
    assert agg[0]["recall_any_at_5_turn"] == 1.0


def test_a_ranking_design_gets_retrieval_columns_in_a_conversation_run() -> None:
    from sim.bench.tasks import DesignSpec
    from sim.conversations.run import run_baseline, run_design
    from sim.conversations.toy import tiny_instance

    inst = tiny_instance()
    rows = run_design(inst, DesignSpec("bm25", "bm25"), 6000)
    assert rows[0]["recall_any_at_5_turn"] is not None and rows[0]["ndcg_at_10_session"] is not None
    base = run_baseline(inst, "full", (6000,))
    assert base[0]["recall_any_at_5_turn"] is None


def test_retrieval_columns_reach_csv_sqlite_and_page(tmp_path) -> None:
    import csv
    import sqlite3

    from sim.bench.tasks import DesignSpec
    from sim.conversations.run import run_baseline, run_design
    from sim.conversations.toy import tiny_instance
    from sim.conversations_outputs import write_outputs
    from sim.outputs import Outputs
    from sim.report.conversations import render_conversations_dir

    inst = tiny_instance()
    rows = run_design(inst, DesignSpec("bm25", "bm25"), 6000) + run_baseline(inst, "oracle", (6000,))
    o = Outputs()
    with o.transaction():
        write_outputs(rows, tmp_path, outputs=o, html=True, title="t")
    with open(tmp_path / "aggregate.csv") as fh:
        agg = {r["design"]: r for r in csv.DictReader(fh) if r["question_type"] == "all"}
    assert agg["bm25"]["recall_any_at_5_turn"] != "" and agg["oracle"]["recall_any_at_5_turn"] == ""
    conn = sqlite3.connect(tmp_path / "results.db")
    got = conn.execute("SELECT recall_any_at_10_session FROM questions WHERE design = 'bm25'").fetchone()
    conn.close()
    assert got[0] is not None
    assert 'id="retrieval-metrics"' in (tmp_path / "index.html").read_text()
    assert 'id="retrieval-metrics"' in render_conversations_dir(tmp_path)
