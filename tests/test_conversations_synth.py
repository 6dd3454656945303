"""``memsim workload synth`` (issue 28): deterministic files of the real shape that load back through the
loaders, answers in their evidence turns, written as a stream and atomically, bad options one line."""

from __future__ import annotations

import io
import json
from collections import Counter
from pathlib import Path

import pytest

from sim.cli import main
from sim.conversations.formats import iter_instances
from sim.conversations.synth import QUESTION_TYPES, write
from sim.errors import UsageError


def synth(kind: str, seed: int = 1, instances: int = 16, sessions: int = 3, turns: int = 4) -> bytes:
    buf = io.BytesIO()
    write(kind, buf, instances=instances, sessions=sessions, turns=turns, seed=seed)
    return buf.getvalue()


@pytest.mark.parametrize("kind", ["longmemeval", "locomo"])
def test_same_seed_same_bytes(kind: str) -> None:
    a, b = synth(kind, seed=5), synth(kind, seed=5)
    assert a == b and a != synth(kind, seed=6)


def test_longmemeval_shape(tmp_path: Path) -> None:
    """Every question type in turn, the sixteenth an abstention, evidence sessions named and dated across
    the haystack before the question, each answer stated in an evidence turn."""
    f = tmp_path / "s.json"
    f.write_bytes(synth("longmemeval", instances=16, sessions=6, turns=4))
    raw = json.loads(f.read_bytes())
    insts = list(iter_instances("longmemeval", f))
    assert len(insts) == 16
    assert [i.questions[0].question_type for i in insts[:6]] == list(QUESTION_TYPES)
    assert [i.questions[0].abstention for i in insts] == [False] * 15 + [True]
    for inst, data in zip(insts, raw, strict=True):
        (q,) = inst.questions
        assert len(inst.sessions) == 6 and len(inst.turns) == 24
        assert data["haystack_dates"] == sorted(data["haystack_dates"])
        assert data["haystack_dates"][-1] < data["question_date"]
        assert q.evidence and all(e.split(":")[0] in data["answer_session_ids"] for e in q.evidence)
        assert all(sid.startswith("answer_") for sid in data["answer_session_ids"])
        texts = {t.turn_id: t for t in inst.turns}
        if q.answer is not None:
            assert q.answer in texts[q.evidence[-1]].text
        if q.question_type == "single-session-assistant":
            assert {texts[e].role for e in q.evidence} == {"assistant"}


def test_longmemeval_s_sized_instance_is_about_112k_tokens() -> None:
    """``--sessions 48 --turns 10`` makes an instance of ``_s``'s size (~112k cl100k tokens)."""
    from sim.conversations.synth import longmemeval_instance
    from sim.tokens import count_tokens_uncached

    inst = longmemeval_instance(0, 0, 48, 10)
    tokens = sum(count_tokens_uncached(t["content"]) for s in inst["haystack_sessions"] for t in s)
    assert 100_000 < tokens < 125_000


def test_locomo_shape(tmp_path: Path) -> None:
    """Categories 1 to 5 all asked, adversarial questions carry only adversarial_answer, multi-hop
    evidence spans two sessions, and every evidence turn states the answer."""
    f = tmp_path / "l.json"
    f.write_bytes(synth("locomo", instances=2, sessions=4, turns=9))
    raw = json.loads(f.read_bytes())
    insts = list(iter_instances("locomo", f))
    for inst, data in zip(insts, raw, strict=True):
        assert len(inst.sessions) == 4 and len(inst.turns) == 36 and len(inst.questions) == 12
        cats = Counter(q["category"] for q in data["qa"])
        assert set(cats) == {1, 2, 3, 4, 5}
        for q, item in zip(inst.questions, data["qa"], strict=True):
            if item["category"] == 5:
                assert "answer" not in item and q.abstention
            if item["category"] == 1:
                assert len({e.split(":")[0] for e in q.evidence}) == 2
            said = q.answer if q.answer is not None else item["adversarial_answer"]
            assert all(said in t.text for t in inst.turns if t.turn_id in q.evidence)


def test_the_output_is_a_stream() -> None:
    """No write is larger than one instance: the file is never held whole."""

    class Recorder(io.BytesIO):
        largest = 0

        def write(self, data: bytes) -> int:  # type: ignore[override]
            self.largest = max(self.largest, len(data))
            return super().write(data)

    out = Recorder()
    total = write("longmemeval", out, instances=12, sessions=4, turns=4, seed=0)
    assert total == len(out.getvalue()) and out.largest < 2 * total / 12


def test_sizes_are_bounded() -> None:
    with pytest.raises(UsageError, match="loader's limit"):
        write("locomo", io.BytesIO(), instances=1, sessions=1000, turns=1000, seed=0)
    with pytest.raises(UsageError, match="unknown workload kind"):
        write("lme", io.BytesIO(), instances=1, sessions=1, turns=1, seed=0)


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exc:
        main(list(args))
    out, err = capsys.readouterr()
    return int(exc.value.code or 0), out, err


def test_cli_writes_a_file_that_loads(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "sub" / "l.json"
    args = ["workload", "synth", "locomo", "--instances", "2", "--sessions", "2", "--turns", "3"]
    code, out, err = _cli(capsys, *args, "--seed", "4", "--out", str(f))
    assert code == 0 and out.startswith(f"wrote {f} (2 locomo instances, ")
    assert err.startswith("memsim: workload synth: 2 locomo instances of 2 sessions x 3 turns, about ")
    assert len(list(iter_instances("locomo", f))) == 2
    assert sorted(p.name for p in f.parent.iterdir()) == ["l.json"]  # no temporary left


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["lme", "--out", "F"], "unknown workload kind 'lme'"),
        (["locomo", "--sessions", "1000", "--turns", "1000", "--out", "F"], "loader's limit"),
        (["locomo", "--instances", "0", "--out", "F"], "--instances"),
        (["locomo", "--out", "."], "is a directory"),
    ],
)
def test_cli_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch, args, words) -> None:
    """Exit 2, one ``memsim: error:`` line, nothing on stdout, nothing written."""
    monkeypatch.chdir(tmp_path)
    code, out, err = _cli(capsys, "workload", "synth", *args)
    assert code == 2 and out == "" and words in err
    assert err.startswith("memsim: error: ") and err.count("\n") == 1
    assert list(tmp_path.iterdir()) == []
