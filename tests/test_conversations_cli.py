"""``memsim bench --workload longmemeval:F | locomo:F | F.jsonl`` end to end on files in the released
formats written here (issue 28). Every test needs the loaders (``sim.conversations.formats``) and is
skipped without them."""

from __future__ import annotations

import csv
import json
import sqlite3
from pathlib import Path

import pytest

pytest.importorskip("sim.conversations.formats")

from conversation_helpers import WORDS
from test_cli import cli

from sim.conversations_outputs import COLUMNS as QUESTION_COLUMNS


def _text(k: int, n: int = 30) -> str:
    return f"Turn {k}: " + " ".join(WORDS[(k * 7 + i) % len(WORDS)] for i in range(n)) + "."


def longmemeval_file(path: Path, instances: int = 2, sessions: int = 5, turns: int = 4) -> Path:
    """A LongMemEval ``_s``-shaped file: evidence turns carry ``has_answer``; the answer is in one."""
    data = []
    for i in range(instances):
        sids = [f"answer_{i}_{k}" if k == 1 else f"s_{i}_{k}" for k in range(sessions)]
        hay = []
        for k in range(sessions):
            sess = []
            for j in range(turns):
                turn = {
                    "role": "user" if j % 2 == 0 else "assistant",
                    "content": _text(1000 * i + 10 * k + j),
                }
                if k == 1 and j == 0:
                    turn["content"] += " My cat is called Biscuit."
                    turn["has_answer"] = True
                sess.append(turn)
            hay.append(sess)
        data.append({
            "question_id": f"q{i}", "question_type": "single-session-user",
            "question": "What is my cat called?", "answer": "Biscuit",
            "question_date": "2023/06/01 (Thu) 10:00",
            "haystack_session_ids": sids,
            "haystack_dates": [f"2023/05/{10 + k:02d} (Wed) 09:00" for k in range(sessions)],
            "haystack_sessions": hay, "answer_session_ids": [sids[1]],
        })  # fmt: skip
    path.write_text(json.dumps(data))
    return path


def locomo_file(path: Path) -> Path:
    """A LoCoMo-shaped file: one sample, two sessions, two questions (one adversarial)."""
    conv: dict[str, object] = {"speaker_a": "Ana", "speaker_b": "Ben"}
    for s in (1, 2):
        conv[f"session_{s}_date_time"] = f"1:56 pm on {s} May, 2023"
        conv[f"session_{s}"] = [
            {"speaker": "Ana" if j % 2 == 0 else "Ben", "dia_id": f"D{s}:{j + 1}", "text": _text(10 * s + j)}
            for j in range(4)
        ]
    sample = {
        "sample_id": "conv-1",
        "conversation": conv,
        "qa": [
            {"question": "What did Ana say first?", "answer": "garden", "evidence": ["D1:1"], "category": 4},
            {
                "question": "Who owns a boat?",
                "adversarial_answer": "Ben",
                "evidence": ["D2:2"],
                "category": 5,
            },
        ],
    }
    path.write_text(json.dumps([sample]))
    return path


def _bench(capsys, tmp_path: Path, workload: str, *extra: str) -> tuple[int, str, str, Path]:
    out = tmp_path / "out"
    res = cli(capsys, "bench", "--workload", workload, "--designs", "rsiagent,tracecraft", "--budgets",
              "1500,16000", "--out", str(out), "--no-plots", *extra)  # fmt: skip
    return (*res, out)


def _rows(out: Path) -> list[dict[str, str]]:
    with open(out / "questions.csv") as fh:
        return list(csv.DictReader(fh))


def test_longmemeval_end_to_end(capsys, tmp_path):
    wl = f"longmemeval:{longmemeval_file(tmp_path / 'lme.json')}"
    code, stdout, err, out = _bench(capsys, tmp_path, wl, "--html")
    assert code == 0, err
    rows = _rows(out)
    assert list(rows[0]) == list(QUESTION_COLUMNS)
    assert {r["design"] for r in rows} == {"rsiagent", "tracecraft", "oracle", "oracle-sessions", "full"}
    assert len(rows) == 2 * 2 * 5  # instances × windows × (designs + baselines)
    oracle = [r for r in rows if r["design"] == "oracle"]
    assert all(r["evidence_in_context"] == r["evidence_turns"] == "1" for r in oracle)
    assert all(r["answer_in_context"] == "1" for r in oracle)
    for r in rows:
        lost = json.loads(r["lost"])
        assert len(lost) == int(r["evidence_turns"]) - int(r["evidence_in_context"])
        assert all(why for _t, why in lost)
    db = sqlite3.connect(out / "results.db")
    assert db.execute("select count(*) from questions").fetchone()[0] == len(rows)
    db.close()
    assert (out / "index.html").exists() and "wrote" in stdout


def test_locomo_end_to_end(capsys, tmp_path):
    code, _out, err, out = _bench(capsys, tmp_path, f"locomo:{locomo_file(tmp_path / 'locomo.json')}")
    assert code == 0, err
    rows = _rows(out)
    assert {r["question_type"] for r in rows} == {"category-4", "category-5"}
    assert all(r["answer_in_context"] == "" for r in rows if r["question_type"] == "category-5")
    with open(out / "aggregate.csv") as fh:
        agg = list(csv.DictReader(fh))
    assert {"all", "category-4", "category-5"} <= {a["question_type"] for a in agg}


def test_workers_two_gives_the_rows_of_one(capsys, tmp_path):
    wl = f"longmemeval:{longmemeval_file(tmp_path / 'lme.json', instances=3)}"
    assert _bench(capsys, tmp_path / "a", wl)[0] == 0
    assert _bench(capsys, tmp_path / "b", wl, "--workers", "2")[0] == 0
    assert (tmp_path / "a/out/questions.csv").read_text() == (tmp_path / "b/out/questions.csv").read_text()


@pytest.mark.parametrize(
    "spec", ["longmemeval:{bad}", "locomo:{bad}", "longmemeval:{missing}", "weird:{bad}"]
)
def test_bad_input_exits_2_and_writes_nothing(capsys, tmp_path, spec):
    good = json.loads(longmemeval_file(tmp_path / "ok.json", instances=3).read_text())
    good[2]["haystack_sessions"] = "not a list"  # the third instance is bad: met after two good ones
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(good))
    code, stdout, err, out = _bench(capsys, tmp_path, spec.format(bad=bad, missing=tmp_path / "none.json"))
    assert code == 2, err
    assert stdout == "" and err.count("\n") == 1 and err.startswith("memsim: error: ")
    assert not out.exists()


def test_native_file_without_turn_labels_keeps_the_fact_benchmark(capsys, tmp_path):
    f = tmp_path / "w.jsonl"
    f.write_text("\n".join(json.dumps({"observation": f"obs {i}", "facts": [f"FACT-{i:04d}=amber"]})
                           for i in range(1, 12)) + "\n")  # fmt: skip
    code, _o, err, out = _bench(capsys, tmp_path, str(f))
    assert code == 0, err
    assert (out / "results.csv").exists() and not (out / "questions.csv").exists()


@pytest.mark.parametrize("name", ["longmemeval_s", "locomo", "native"])
def test_each_shipped_sample_end_to_end(capsys, tmp_path, name):
    """Each format from its shipped sample: every design and baseline, the oracle's turn recall 1.0."""
    from sim.conversations.samples import SAMPLES, sample_path

    kind = SAMPLES[name][1]
    path = sample_path(name)
    wl = str(path) if kind == "native" else f"{kind}:{path}"
    out = tmp_path / "out"
    code, _o, err = cli(
        capsys, "bench", "--workload", wl, "--budgets", "4000", "--out", str(out), "--no-plots"
    )
    assert code == 0, err
    rows = _rows(out)
    assert {r["design"] for r in rows} >= {
        "merchantbench",
        "nemsy",
        "rsiagent",
        "tracecraft",
        "oracle",
        "full",
    }
    oracle = [r for r in rows if r["design"] == "oracle" and r["over_window"] == "0"]
    assert oracle and all(r["evidence_in_context"] == r["evidence_turns"] for r in oracle)
    for r in rows:
        assert len(json.loads(r["lost"])) == int(r["evidence_turns"]) - int(r["evidence_in_context"])


def test_the_demo_runs_the_conversation_bench_on_the_shipped_sample(tmp_path):
    from sim.demo import _conversation_bench
    from sim.outputs import Outputs

    said: list[str] = []
    o = Outputs()
    with o.transaction():
        links = _conversation_bench(tmp_path, o, said.append, 1, False)
    assert sum("turn recall at the" in line for line in said) == 2
    assert sum("x the median instance" in line for line in said) == 2
    assert [link[1] for link in links] == [f"conversations/{k}/index.html" for k in ("longmemeval", "locomo")]
    for kind in ("longmemeval", "locomo"):
        rows = _rows(tmp_path / "conversations" / kind)
        assert {"merchantbench", "nemsy", "rsiagent", "tracecraft", "oracle", "oracle-sessions", "full"} <= {
            r["design"] for r in rows
        }


@pytest.mark.slow
def test_dask_gives_the_rows_of_one_local_worker(capsys, tmp_path):
    pytest.importorskip("dask.distributed", reason="the dask extra is not installed")
    wl = f"locomo:{locomo_file(tmp_path / 'locomo.json')}"
    assert _bench(capsys, tmp_path / "a", wl)[0] == 0
    assert _bench(capsys, tmp_path / "b", wl, "--executor", "dask", "--workers", "2")[0] == 0
    assert (tmp_path / "a/out/questions.csv").read_text() == (tmp_path / "b/out/questions.csv").read_text()
