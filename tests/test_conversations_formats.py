"""The conversation loaders (issue 28): the shipped samples load as their formats say, and every bad input
is one :class:`UsageError` line naming the file, the instance (or line) and the field, found without
reading the rest of a big file.
"""

from __future__ import annotations

import copy
import json
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from sim.conversations import SAMPLES, sample_kind, sample_path
from sim.conversations.formats import has_turn_labels, iter_instances, parse_workload_spec
from sim.conversations.formats.locomo import parse_date as locomo_date
from sim.conversations.formats.longmemeval import parse_date as lme_date
from sim.conversations.formats.stream import iter_json_list
from sim.conversations.model import Instance
from sim.conversations.synth import longmemeval_instance
from sim.errors import UsageError
from sim.workload import load_workload_file


def load(name: str) -> list[Instance]:
    return list(iter_instances(sample_kind(name), sample_path(name)))


def sample_json(name: str) -> Any:
    return json.loads(sample_path(name).read_text(encoding="utf-8"))


# -- the samples, as the formats say -------------------------------------------------------------------
def test_every_sample_loads() -> None:
    """Each shipped sample loads in its format, ids unique within each instance."""
    for name in SAMPLES:
        instances = load(name)
        assert instances, name
        for k, inst in enumerate(instances):
            assert inst.index == k and inst.workload == sample_kind(name)
            ids = [t.turn_id for t in inst.turns]
            assert len(ids) == len(set(ids))
            assert all(0 <= t.session_index < len(inst.sessions) for t in inst.turns)
            for q in inst.questions:
                assert set(q.evidence) <= set(ids)
                assert 0 <= q.after_turn <= len(inst.turns)


def test_longmemeval_turns_sessions_and_evidence() -> None:
    """Turn ids are ``<session id>:<i>``, dated with their session; evidence is the ``has_answer`` turns
    of the answer sessions; an ``_abs`` id makes an abstention question with no gold answer."""
    raw = sample_json("longmemeval_s")
    for inst, data in zip(load("longmemeval_s"), raw, strict=True):
        assert inst.instance_id == data["question_id"]
        assert inst.sessions == tuple(data["haystack_session_ids"])
        first = inst.turns[0]
        assert first.turn_id == f"{data['haystack_session_ids'][0]}:0"
        assert first.time_s == lme_date(data["haystack_dates"][0], "")
        expected = [
            f"{sid}:{i}"
            for sid, session in zip(data["haystack_session_ids"], data["haystack_sessions"])
            if sid in data["answer_session_ids"]
            for i, turn in enumerate(session)
            if turn.get("has_answer")
        ]
        (q,) = inst.questions
        assert list(q.evidence) == expected and expected
        assert q.after_turn == len(inst.turns)
        assert q.abstention == data["question_id"].endswith("_abs")
        if q.abstention:
            assert q.answer is None
        else:
            assert q.answer == str(data["answer"])
            if isinstance(data["answer"], str):  # the answer is in an evidence turn
                texts = {t.turn_id: t.text for t in inst.turns}
                assert any(q.answer.lower() in texts[e].lower() for e in q.evidence)


def test_the_three_longmemeval_shapes_load() -> None:
    """``_oracle`` holds only evidence sessions (unsorted), ``_m`` many more sessions than ``_s``."""
    s, oracle, m = load("longmemeval_s"), load("longmemeval_oracle"), load("longmemeval_m")
    by_id = {i.instance_id: i for i in s}
    for inst in oracle:
        assert all(sid.startswith("answer_") for sid in inst.sessions)
        assert set(inst.questions[0].evidence) == set(by_id[inst.instance_id].questions[0].evidence)
    assert any(list(i.sessions) != sorted(i.sessions) for i in oracle)
    assert min(len(i.sessions) for i in m) >= 5 * max(len(i.sessions) for i in s)


def test_locomo_roles_categories_and_evidence_notations() -> None:
    """speaker_a is the user, turn ids are dia_ids, category 5 is an abstention question, a bare-number
    answer is its text, and ``"D1:5; D2:4"`` is two evidence ids."""
    inst = load("locomo")[0]
    assert inst.turns[0].role == "user" and inst.turns[0].speaker == "Priya"
    assert inst.turns[1].role == "assistant" and inst.turns[1].turn_id == "D1:2"
    assert inst.sessions[0] == "session_1"
    assert inst.turns[0].time_s == locomo_date("7:10 pm on 4 March, 2023", "") == 1677957000
    by_type = {q.question_type for q in inst.questions}
    assert by_type == {f"category-{n}" for n in range(1, 6)}
    q5 = [q for q in inst.questions if q.question_type == "category-5"]
    assert all(q.abstention and q.answer is None for q in q5)
    multi = next(q for q in inst.questions if q.question_type == "category-1")
    assert multi.evidence == ("D1:5", "D2:4")
    assert any(q.answer == "150" for q in inst.questions)
    assert "lopsided" in next(t.text for t in inst.turns if t.turn_id == "D1:5")  # text only, no caption


def test_native_turns_and_probes() -> None:
    """Each line a user turn; a probe line a question after its turn, with its evidence and answer."""
    (inst,) = load("native")
    assert inst.instance_id == "native_conversation" and inst.sessions == ("",)
    assert [t.turn_id for t in inst.turns[:2]] == ["t01", "t02"]
    assert "FACT-0001=teal" in inst.turns[0].text and inst.turns[0].time_s is None
    fact, decision, both, two = inst.questions
    assert (fact.evidence, fact.answer, fact.after_turn) == (("t01",), "teal", 7)
    assert fact.question == "Question: what is the value of FACT-0001?"
    assert (decision.evidence, decision.answer) == (("t04",), "Saturday 02:00 to 05:00 UTC")
    assert both.evidence == ("t06", "t11")  # named, then every earlier carrier of the fact
    assert two.evidence == ("t02", "t09") and not any(q.abstention for q in inst.questions)


def test_native_file_routing_and_the_fact_benchmark(tmp_path: Path) -> None:
    """A file with turn ids or evidence is a conversation file; one without keeps the fact-token
    benchmark, which still reads both."""
    plain = tmp_path / "plain.jsonl"
    plain.write_text(
        '{"observation": "a", "facts": ["FACT-0001=red"]}\n{"observation": "b", "probe": "FACT-0001"}\n'
    )
    assert not has_turn_labels(plain)
    assert has_turn_labels(sample_path("native"))
    assert not has_turn_labels(tmp_path / "missing.jsonl")
    steps = load_workload_file(plain).steps
    assert [s.probe for s in steps] == [None, "FACT-0001"]
    conv = load_workload_file(sample_path("native"))
    assert [s.probe for s in conv.steps if s.probe] == ["FACT-0001", "FACT-0003"]


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("longmemeval:data/x.json", ("longmemeval", Path("data/x.json"))),
        ("LoCoMo:/tmp/locomo10.json", ("locomo", Path("/tmp/locomo10.json"))),
        ("runs/w.jsonl", ("native", Path("runs/w.jsonl"))),
        ("C:/data/w.jsonl", ("native", Path("C:/data/w.jsonl"))),
        ("./odd:name.jsonl", ("native", Path("odd:name.jsonl"))),
    ],
)
def test_workload_specs(spec: str, expected: tuple[str, Path]) -> None:
    assert parse_workload_spec(spec) == expected


def test_workload_spec_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An unknown prefix is one line; a file whose name merely looks prefixed is a path."""
    for bad, words in [
        ("lme:F.json", "unknown format 'lme'"),
        ("longmemeval:", "names no file"),
        ("", "empty"),
    ]:
        with pytest.raises(UsageError, match=words) as exc:
            parse_workload_spec(bad)
        assert "\n" not in str(exc.value)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "notes:v2.jsonl").write_text("{}\n")
    assert parse_workload_spec("notes:v2.jsonl") == ("native", Path("notes:v2.jsonl"))


# -- bad input: one line naming the instance and the field --------------------------------------------
def _lme() -> list[dict[str, Any]]:
    return copy.deepcopy(sample_json("longmemeval_s"))


def _locomo() -> list[dict[str, Any]]:
    return copy.deepcopy(sample_json("locomo"))


def _set(path: list[Any], value: Any) -> Any:
    def edit(doc: Any) -> Any:
        node = doc
        for key in path[:-1]:
            node = node[key]
        if value is _DROP:
            del node[path[-1]]
        else:
            node[path[-1]] = value
        return doc

    return edit


_DROP = object()
LME_CASES = [
    (_set([3, "question_date"], _DROP), "instance 3: question_date: missing"),
    (
        _set([3, "haystack_sessions", 3, 2, "role"], "system"),
        'instance 3: haystack_sessions[3][2].role: expected "user" or "assistant"',
    ),
    (
        _set([2, "haystack_sessions", 1, 0, "content"], 7),
        "instance 2: haystack_sessions[1][0].content: expected a string, got a number",
    ),
    (
        _set([2, "haystack_sessions", 1, 0, "has_answer"], "yes"),
        "instance 2: haystack_sessions[1][0].has_answer: expected true or false",
    ),
    (
        _set([1, "answer_session_ids", 0], "answer_nowhere"),
        "instance 1: answer_session_ids[0]: 'answer_nowhere' names no session",
    ),
    (_set([1, "haystack_session_ids", 2], "sharegpt_002000_0"), "instance 1: haystack_session_ids[2]"),
    (
        _set([4, "haystack_dates"], []),
        "instance 4: haystack_sessions: 10 sessions, 10 haystack_session_ids and 0",
    ),
    (_set([4, "haystack_dates", 0], "yesterday"), "instance 4: haystack_dates[0]: expected a date"),
    (
        _set([4, "haystack_dates", 0], "2024/02/30 (Fri) 10:00"),
        "instance 4: haystack_dates[0]: not a valid date",
    ),
    (
        _set([2, "question_id"], "memsim_lme_001"),
        "instance 2: question_id: 'memsim_lme_001' repeats instance 0's",
    ),
    (_set([0, "answer"], None), "instance 0: answer: expected a string or a number, got null"),
    (
        _set([0, "haystack_sessions", 0], {"role": "user"}),
        "instance 0: haystack_sessions[0]: expected a list",
    ),
    (_set([3], "an instance"), "instance 3: expected an object"),
]


@pytest.mark.parametrize(("edit", "message"), LME_CASES)
def test_longmemeval_bad_instances(tmp_path: Path, edit: Any, message: str) -> None:
    f = tmp_path / "lme.json"
    f.write_text(json.dumps(edit(_lme())))
    with pytest.raises(UsageError) as exc:
        list(iter_instances("longmemeval", f))
    text = str(exc.value)
    assert text.startswith(f"longmemeval {f}: ") and message in text and "\n" not in text


def _dangling(doc: list[dict[str, Any]]) -> Any:
    doc[1]["qa"][3]["evidence"] = ["D2:5", "D9:9"]
    return doc


LOCOMO_CASES = [
    (_dangling, "instance 1: qa[3].evidence[1]: 'D9:9' names no turn of the conversation"),
    (
        _set([0, "conversation", "session_2", 3, "dia_id"], "D2:3"),
        "instance 0: conversation.session_2[3].dia_id: 'D2:3' repeats",
    ),
    (
        _set([0, "conversation", "session_1", 0, "speaker"], "Mallory"),
        "instance 0: conversation.session_1[0].speaker: 'Mallory' is neither",
    ),
    (_set([1, "qa", 0, "category"], 7), "instance 1: qa[0].category: expected 1 to 5, got 7"),
    (_set([1, "qa", 0, "category"], True), "instance 1: qa[0].category: expected an integer, got true/false"),
    (_set([1, "qa", 0, "answer"], _DROP), "instance 1: qa[0].answer: missing"),
    (_set([1, "qa", 5, "adversarial_answer"], _DROP), "instance 1: qa[5].adversarial_answer: missing"),
    (_set([1, "qa", 1, "evidence"], "D1:1"), "instance 1: qa[1].evidence: expected a list"),
    (_set([1, "qa", 1, "evidence", 0], 3), "instance 1: qa[1].evidence[0]: expected a string"),
    (
        _set([0, "conversation", "session_3_date_time"], "the third of April"),
        "instance 0: conversation.session_3_date_time: expected a date",
    ),
    (
        _set([0, "conversation", "speaker_b"], "Priya"),
        "instance 0: conversation.speaker_b: the same name as speaker_a",
    ),
    (_set([0, "sample_id"], _DROP), "instance 0: sample_id: missing"),
    (
        _set([1, "sample_id"], "memsim-locomo-1"),
        "instance 1: sample_id: 'memsim-locomo-1' repeats instance 0's",
    ),
]


@pytest.mark.parametrize(("edit", "message"), LOCOMO_CASES)
def test_locomo_bad_samples(tmp_path: Path, edit: Any, message: str) -> None:
    f = tmp_path / "locomo.json"
    f.write_text(json.dumps(edit(_locomo())))
    with pytest.raises(UsageError) as exc:
        list(iter_instances("locomo", f))
    text = str(exc.value)
    assert text.startswith(f"locomo {f}: ") and message in text and "\n" not in text


def test_locomo_reads_the_released_notations(tmp_path: Path) -> None:
    """The release's other notations name the turns they plainly mean; its known dangling ids (by
    sample id) are dropped, and the same id elsewhere is bad input."""
    doc = _locomo()
    qa = doc[0]["qa"]
    qa[0]["evidence"] = ["(D1:3)", "D2:04", "D:3:1", "D1:1 D1:2,D1:4", "", "D1:3"]
    f = tmp_path / "l.json"
    f.write_text(json.dumps(doc))
    q = next(iter_instances("locomo", f)).questions[0]
    assert q.evidence == ("D1:3", "D2:4", "D3:1", "D1:1", "D1:2", "D1:4")
    qa[0]["evidence"] = ["D1:3", "D10:19", "D"]
    doc[0]["sample_id"] = "conv-42"
    f.write_text(json.dumps(doc))
    assert next(iter_instances("locomo", f)).questions[0].evidence == ("D1:3",)
    doc[0]["sample_id"] = "conv-43"
    f.write_text(json.dumps(doc))
    with pytest.raises(UsageError, match=r"instance 0: qa\[0\]\.evidence\[1\]: 'D10:19' names no turn"):
        list(iter_instances("locomo", f))


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "is empty"),
        (b"  \n\t ", "is empty"),
        (b'{"question_id": "x"}', "is not a JSON list of instances (it starts with '{')"),
        (b"[]", "holds no instances"),
        (b"[{}, ", "instance 0: question_id: missing"),
        (b'[{"question_id": "\xff"}]', "instance 0: not UTF-8 text"),
        (b"[1, 2] trailing", "instance 0: expected an object"),
        (b"[" + b"[" * 40 + b"]" * 40 + b"]", "instance 0 is nested deeper than 32 levels"),
        (b"[" + b"[" * 2_000_000, "instance 0 is nested deeper than 32 levels"),
        (b'[{"a": NaN}]', "instance 0: not valid JSON"),
    ],
)
def test_file_level_errors(tmp_path: Path, content: bytes, message: str) -> None:
    f = tmp_path / "f.json"
    f.write_bytes(content)
    with pytest.raises(UsageError) as exc:
        list(iter_instances("longmemeval", f))
    assert message in str(exc.value) and "\n" not in str(exc.value)


def test_an_instance_of_too_many_values_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The container bound is counted on the raw bytes as they are read (here lowered to 10,000, so the
    test builds few lists: the real bound, 500,000, is far above any released instance)."""
    from sim.conversations.formats import stream

    monkeypatch.setattr(stream, "MAX_CONTAINERS", 10_000)
    f = tmp_path / "f.json"
    f.write_bytes(b"[[" + b"[]," * 200_000)
    readers: list[Any] = []
    with pytest.raises(UsageError, match="instance 0 opens more than 10,000 lists and objects"):
        list(stream.iter_json_list("longmemeval", f, lambda v, i: v, reader=readers))
    assert readers[0].read_bytes == 65536  # refused on the first buffer


def test_an_instance_over_its_byte_bound_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The byte bound of one instance counts from the end of the previous one (here lowered to 200 KB:
    the real one is 64 MiB); the instances before it load."""
    from sim.conversations.formats import stream

    monkeypatch.setattr(stream, "MAX_INSTANCE_BYTES", 200_000)
    small = longmemeval_instance(1, 0, 2, 2)
    big = longmemeval_instance(1, 1, 40, 10)  # about 450 KB
    f = tmp_path / "f.json"
    f.write_text(json.dumps([small, small | {"question_id": "two"}, big]))
    seen: list[str] = []
    with pytest.raises(UsageError, match="instance 2 is over the 200,000-byte limit of one instance"):
        for inst in iter_instances("longmemeval", f):
            seen.append(inst.instance_id)
    assert seen == [small["question_id"], "two"]


def test_missing_file_and_directory(tmp_path: Path) -> None:
    for kind in ("longmemeval", "locomo", "native"):
        with pytest.raises(UsageError, match=r"not found|cannot read"):
            list(iter_instances(kind, tmp_path / "nope.json"))
        with pytest.raises(UsageError, match="not a regular file"):
            list(iter_instances(kind, tmp_path))


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (
            ['{"observation": "a", "turn_id": "x"}', '{"observation": "b", "turn_id": "x"}'],
            "line 2: turn_id: 'x' is already line 1's",
        ),
        (
            ['{"observation": "a", "turn_id": "L2"}', '{"observation": "b"}'],
            "line 2: turn_id: 'L2' is already line 1's",
        ),
        (
            ['{"observation": "a"}', '{"observation": "b", "evidence": ["L9"], "question": "?"}'],
            "line 2: evidence[0]: 'L9' names no earlier line's turn",
        ),
        (
            ['{"observation": "a", "evidence": ["L1"], "question": "?"}'],
            "line 1: evidence[0]: 'L1' names no earlier",
        ),
        (['{"observation": "a"}', '{"observation": "b", "evidence": ["L1"]}'], "line 2: question: missing"),
        (
            ['{"observation": "a", "answer": "x"}'],
            "line 1: answer: a line with no probe, evidence or question",
        ),
        (['{"observation": "a", "turn_id": ""}'], "line 1: turn_id: String should have at least 1 character"),
        (['{"observation": "a", "evidence": "L1"}'], "line 1: evidence: Input should be a valid list"),
        (['{"observation": "a"}'], "asks no question"),
        (
            ['{"observation": "a"}', '{"observation": "b", "probe": "FACT-0001"}'],
            "line 2: probe: FACT-0001 was not carried",
        ),
    ],
)
def test_native_bad_lines(tmp_path: Path, lines: list[str], message: str) -> None:
    f = tmp_path / "w.jsonl"
    f.write_text("\n".join(lines) + "\n")
    with pytest.raises(UsageError) as exc:
        list(iter_instances("native", f))
    assert message in str(exc.value) and "\n" not in str(exc.value)


# -- streaming: a broken instance stops the read; memory holds one instance --------------------------------
def _big_file(path: Path, n: int, broken: int) -> int:
    """*n* synthetic LongMemEval instances (about 250 KB each), instance *broken* with a bad role."""
    with open(path, "wb") as fh:
        fh.write(b"[")
        for k in range(n):
            inst = longmemeval_instance(7, k, 24, 10)
            if k == broken:
                inst["haystack_sessions"][3][2]["role"] = "narrator"
            fh.write((b",\n" if k else b"\n") + json.dumps(inst).encode())
        fh.write(b"\n]")
    return path.stat().st_size


def test_a_broken_instance_stops_the_read_where_it_is(tmp_path: Path) -> None:
    """The error names instance 5 and its field after reading about six instances' bytes of forty."""
    from sim.conversations.formats.longmemeval import build

    f = tmp_path / "big.json"
    size = _big_file(f, 40, 5)
    readers: list[Any] = []
    with pytest.raises(UsageError, match=r"instance 5: haystack_sessions\[3\]\[2\]\.role: expected"):
        list(iter_json_list("longmemeval", f, build, reader=readers))
    (reader,) = readers
    assert reader.read_bytes < size * 8 // 40  # six instances and one read-ahead buffer, not the file


def test_memory_holds_one_instance_not_the_file(tmp_path: Path) -> None:
    """Reading to a broken instance near the end of the file keeps far less than the file in memory
    (peak traced allocations), and each instance is released once the next is read."""
    f = tmp_path / "big.json"
    size = _big_file(f, 30, 28)
    tracemalloc.start()
    try:
        with pytest.raises(UsageError, match="instance 28: "):
            for _inst in iter_instances("longmemeval", f):
                pass
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < size / 4, (peak, size)
