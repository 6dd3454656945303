"""The trace's ``facts`` column (schema 3): key frames and deltas per stream, against the full encoding.

A full set's list (a key frame, :func:`sim.trace.encode_facts`) is byte for byte the plain encoding it
replaced (``reference_encode_facts``). A stream is the requests of one ``(system, agent, route)``. Every
request's column must resolve, in order, to exactly the set the request held: checked against that
reference encoding and against a reader written here from the documented format alone
(``decode_facts`` and ``json``), for any interleaving of streams, ids of any width, empty sets, and sets
that grow, shrink, come back and are replaced, in short histories and in long ones through a real trace
file (every row within 255 rows of its stream's key frame). The writer's choice of key frame or delta is
checked against the documented rule, and what the records say (``facts``, ``fact_ids``, ``has_fact``) is
the full set whether they were just recorded or read back. A schema-2 trace (full lists only) reads as
the same records.
"""

from __future__ import annotations

import dataclasses
import json
import pickle
import random
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from collections import OrderedDict
from pathlib import Path

import pytest
from facts_reference import reference_encode_facts
from hypothesis import example, given
from hypothesis import strategies as st

from sim.replay import same_records
from sim.report.runview import read_run
from sim.text import fact_id
from sim.trace import (
    RequestRecord,
    Trace,
    TraceError,
    decode_facts,
    encode_facts,
    facts_include,
    iter_requests,
    read_trace,
)
from sim.tracefacts import EMPTY, FactFrameReader, FactFrames, FactSet, delta_text, fact_number

# -- a full set's list (a key frame): the same bytes as the plain encoding it replaced ---------------
ODD_IDS = [
    "FACT-00017",
    "FACT-017",
    "FACT-",
    "FACT-١٢٣٤",
    "FACT-12345x",
    "X-1",
    'FACT-"0001',
    "a\\",
    "FACT-0001..FACT-0003",
]
listed_fact_sets = st.builds(
    lambda base, offsets, odd: {f"FACT-{base + k:04d}" for k in offsets} | odd,
    st.sampled_from([0, 1, 9_990, 99_995, 10**8]),
    st.sets(st.integers(0, 80), max_size=60),
    st.sets(st.sampled_from(ODD_IDS), max_size=3),
)


@given(listed_fact_sets)
@example({"FACT-9998", "FACT-9999", "FACT-10000", "FACT-10001"})
@example(set())
def test_fact_encoding_is_byte_identical_to_the_reference(ids: set[str]) -> None:
    """The numbered, byte-searched encoding writes exactly the reference bytes, for ids of any width,
    runs of any length and ids that are not canonical."""
    assert encode_facts(ids) == reference_encode_facts(ids)
    assert encode_facts(frozenset(ids)) == reference_encode_facts(ids)


@given(listed_fact_sets, st.lists(st.integers(0, 10**8 + 100), max_size=5), st.sampled_from(ODD_IDS))
def test_facts_include_agrees_with_decoding(ids: set[str], probes: list[int], odd: str) -> None:
    """``facts_include`` answers exactly ``fact in decode_facts(column)``, inside ranges and out."""
    if any(".." in f for f in ids):  # such an id decodes as a range: not a column the trace writes
        ids = {f for f in ids if ".." not in f}
    column = encode_facts(ids)
    decoded = decode_facts(column)

    for f in [*ids, *(fact_id(n) for n in probes), odd]:
        assert facts_include(column, f) == (f in decoded)


def test_a_request_with_thousands_of_facts_encodes_in_ranges() -> None:
    """A long folded log with a gap every seventh fact: one item per run of six, across the 10,000 mark."""
    ids = {fact_id(n) for n in range(1, 30_001) if n % 7 != 3}
    column = encode_facts(ids)

    assert column == reference_encode_facts(ids)
    assert column.startswith('["FACT-0001", "FACT-0002", "FACT-0004..FACT-0009", "FACT-0011..FACT-0016"')
    assert '"FACT-9993..FACT-9998", "FACT-10000..FACT-10005"' in column
    assert column.endswith('"FACT-29992..FACT-29997", "FACT-29999", "FACT-30000"]')
    assert len(json.loads(column)) == 2 + (29_992 - 4) // 7 + 1 + 2
    assert decode_facts(column) == ids


@pytest.mark.parametrize("n", [0, 1, 2, 3])
def test_short_runs_stay_ids(n: int) -> None:
    """Runs of one or two ids are written as ids, three or more as a range."""
    ids = {fact_id(10_000 + k) for k in range(n)}

    assert encode_facts(ids) == reference_encode_facts(ids)


#: Non-canonical ids the column can hold (an id with ``..`` in it reads as a range: the writer refuses it).
ODD = [f for f in ODD_IDS if ".." not in f]
BASES = [0, 1, 9_990, 99_995, 10**8, 10**30]  # ids of any width: FACT-0000 ... FACT-1000...0 (31 digits)
SYSTEMS, AGENTS, ROUTES = ["mb", "rsi"], ["", "actor", "critic"], ["react.hop", "wiki.query"]


def stream_keys(least: int, most: int) -> st.SearchStrategy[list[tuple[str, str, str]]]:
    """Distinct ``(system, agent, route)`` stream keys, *least* to *most* of them."""
    return st.lists(
        st.tuples(st.sampled_from(SYSTEMS), st.sampled_from(AGENTS), st.sampled_from(ROUTES)),
        min_size=least,
        max_size=most,
        unique=True,
    )


MOVES = ["grow", "grow", "grow", "same", "drop", "cut", "old", "odd", "new", "empty"]


def fid(n: int) -> str:
    return f"FACT-{n:04d}"


@st.composite
def fact_sets(draw: st.DrawFn, base: int | None = None) -> set[str]:
    """Ids near one base, in runs (so the encoding has ranges), with a few non-canonical ones."""
    b = draw(st.sampled_from(BASES)) if base is None else base
    nums: set[int] = set()
    for start, length in draw(st.lists(st.tuples(st.integers(0, 120), st.integers(1, 9)), max_size=8)):
        nums |= set(range(start, start + length))
    return {fid(b + n) for n in nums} | draw(st.sets(st.sampled_from(ODD), max_size=2))


@st.composite
def histories(draw: st.DrawFn) -> list[tuple[tuple[str, str, str], set[str]]]:
    """Requests of several interleaved streams, each stream's set moved request by request."""
    streams = draw(stream_keys(1, 4))
    base = draw(st.sampled_from(BASES))
    current: dict[tuple[str, str, str], set[int]] = {s: set() for s in streams}
    odd: dict[tuple[str, str, str], set[str]] = {s: set() for s in streams}
    out = []
    for _ in range(draw(st.integers(1, 40))):
        s = draw(st.sampled_from(streams))
        ids = current[s]
        top = max(ids, default=0)
        move = draw(st.sampled_from(MOVES))
        if move == "grow":
            ids |= set(range(top + draw(st.integers(1, 3)), top + 3 + draw(st.integers(1, 6))))
        elif move == "drop" and ids:
            ids -= set(draw(st.lists(st.sampled_from(sorted(ids)), max_size=4)))
        elif move == "cut" and ids:  # a folded log loses its oldest facts
            ids -= set(sorted(ids)[: draw(st.integers(1, len(ids)))])
        elif move == "old":
            ids.add(draw(st.integers(0, top + 1)))
        elif move == "odd":
            odd[s] ^= {draw(st.sampled_from(ODD))}
        elif move == "new":
            ids.clear()
            ids |= {n - base for n in map(fact_number, draw(fact_sets(base))) if n >= 0}
        elif move == "empty":
            ids.clear()
            odd[s].clear()
        out.append((s, {fid(base + n) for n in ids} | odd[s]))
    return out


class DocumentedReader:
    """A reader written from the format in ``sim/trace.py``'s docstring, with ``decode_facts`` and json."""

    def __init__(self) -> None:
        self.last: dict[tuple[str, str, str], tuple[int, frozenset[str]]] = {}

    def resolve(self, seq: int, stream: tuple[str, str, str], text: str) -> frozenset[str]:
        value = json.loads(text)
        if text.startswith("["):
            ids = decode_facts(text)
        else:
            assert text.startswith("{") and isinstance(value, dict)
            assert text == json.dumps(value, ensure_ascii=False, sort_keys=True)  # canonical JSON
            assert set(value) <= {"add", "base", "del"} and all(value.get(k, True) for k in ("add", "del"))
            base_seq, base = self.last[stream]
            assert value["base"] == base_seq  # the stream's previous request
            add = decode_facts(json.dumps(value.get("add", [])))
            drop = decode_facts(json.dumps(value.get("del", [])))
            assert drop <= base and not add & base
            ids = (base - drop) | add
        self.last[stream] = (seq, ids)
        return ids


class DocumentedRule:
    """The documented choice: a key frame for a stream the writer does not remember (the 64 most recently
    used), after 255 deltas, or when this delta and those since the last key frame would be longer than
    it; otherwise the delta, whose text is expected exactly."""

    def __init__(self) -> None:
        self.streams: OrderedDict[tuple[str, str, str], dict[str, object]] = OrderedDict()

    def expect(self, seq: int, stream: tuple[str, str, str], ids: frozenset[str]) -> str | None:
        """The expected delta text, or None for a key frame; then records what was written."""
        st_ = self.streams.pop(stream, None)
        delta = None
        if st_ is not None and int(st_["deltas"]) < 255:  # type: ignore[call-overload]
            prev: frozenset[str] = st_["ids"]  # type: ignore[assignment]
            add, drop = ids - prev, prev - ids
            value: dict[str, object] = {"base": st_["seq"]}
            if add:
                value["add"] = json.loads(reference_encode_facts(add))
            if drop:
                value["del"] = json.loads(reference_encode_facts(drop))
            text = json.dumps(value, ensure_ascii=False, sort_keys=True)
            if int(st_["spent"]) + len(text) <= int(st_["key"]):  # type: ignore[call-overload]
                delta = text
                self.streams[stream] = {
                    **st_,
                    "ids": ids,
                    "seq": seq,
                    "spent": int(st_["spent"]) + len(text),  # type: ignore[call-overload]
                    "deltas": int(st_["deltas"]) + 1,  # type: ignore[call-overload]
                }
        if delta is None:
            key = reference_encode_facts(ids)
            self.streams[stream] = {"ids": ids, "seq": seq, "key": len(key), "spent": 0, "deltas": 0}
            if len(self.streams) > 64:
                self.streams.popitem(last=False)
        return delta


def write_all(history: list[tuple[tuple[str, str, str], set[str]]]) -> list[str]:
    """The columns the writer gives the history, each checked as it is written."""
    frames, reader, documented, rule = FactFrames(), FactFrameReader(), DocumentedReader(), DocumentedRule()
    columns = []
    for seq, (stream, ids) in enumerate(history, 1):
        text, full = frames.encode(frozenset(ids), stream, seq)
        expected_delta = rule.expect(seq, stream, frozenset(ids))

        assert full.text() == reference_encode_facts(ids) and full.ids() == ids
        assert text == (expected_delta or reference_encode_facts(ids))
        assert reader.resolve(seq, stream, text) == full
        assert documented.resolve(seq, stream, text) == ids
        columns.append(text)
    return columns


@given(histories())
def test_every_column_resolves_to_its_full_set(history) -> None:
    """Any interleaving of streams: each column is the documented key frame or delta, and resolves (by
    the reader and by a reader written from the documentation) to exactly the request's set."""
    write_all(history)


def test_a_growing_log_is_written_in_deltas_a_hundredth_of_its_full_size() -> None:
    """A WORK LOG that gains two ids a request and sheds its oldest ten every 25th (2,000 requests, up to
    ~3,000 ids, across the 10,000 mark) and a second route that stays empty: the column holds under 1%
    of the full lists' characters, every key frame within 256 rows of its stream, and each row resolves."""
    stream, other = ("rsi", "actor", "target.step"), ("rsi", "actor", "verify")
    history: list[tuple[tuple[str, str, str], set[str]]] = []
    ids: set[str] = set()
    for step in range(2_000):
        ids |= {fid(9_000 + 3 * step), fid(9_001 + 3 * step)}
        if step % 25 == 24:
            ids -= set(sorted(ids, key=fact_number)[:10])
        history += [(stream, set(ids)), (other, set())]
    columns = write_all(history)

    full = sum(len(reference_encode_facts(ids)) for _, ids in history)
    assert sum(map(len, columns)) < full / 100
    keys = [i for i, c in enumerate(columns[::2]) if c.startswith("[")]
    assert keys[0] == 0 and max(b - a for a, b in zip(keys, [*keys[1:], len(columns) // 2])) <= 256
    assert all(c == "[]" for c in columns[1::2])  # an empty set: its key frame is shorter than any delta


def test_a_stream_the_writer_forgot_restarts_with_a_key_frame() -> None:
    """70 streams in turn (more than the 64 remembered): each request is a key frame, and resolves."""
    history = [
        (("s", f"agent{a}", "r"), {fid(n) for n in range(2 * rnd, 2 * rnd + 80, 2)})
        for rnd in range(3)
        for a in range(70)
    ]
    columns = write_all(history)

    assert all(c.startswith("[") for c in columns)
    assert all(c.startswith("{") for c in write_all(history[:64] + history[70:134])[64:])


@given(fact_sets(), fact_sets(), st.lists(st.integers(-2, 140), max_size=6))
def test_fact_sets_agree_with_python_sets(a: set[str], b: set[str], probes: list[int]) -> None:
    """FactSet (edges) against the same operations on sets of strings, for ids of any width."""
    x, y = FactSet.of(a), FactSet.of(b)
    base = min(map(fact_number, a | b), default=0)

    assert x.ids() == a and len(x) == len(a) and bool(x) == bool(a)
    assert x.text() == reference_encode_facts(a) and FactSet.parse(x.text()) == x
    assert all(p < q for p, q in zip(x.edges, x.edges[1:])) and len(x.edges) % 2 == 0
    for f in a | b | {fid(max(0, base + p)) for p in probes} | set(ODD):
        assert (f in x) == (f in a)
    assert x.minus_size(y) == len(a - b) and x.overlap(y) == len(a & b)
    canonical = {f for f in a - b if fact_number(f) >= 0}
    gone = sorted(canonical, key=fact_number) + sorted(a - b - canonical)
    assert x.minus(y, 10_000) == gone and x.minus(y, 3) == gone[:3]
    assert x.apply(FactSet.of(b - a), FactSet.of(a - b)) == y  # a delta from a to b
    for absent in ("FACT-99999999", "X-404"):  # a delta must remove ids the base holds
        with pytest.raises(ValueError):
            x.apply(EMPTY, FactSet.of({absent}))
    if a:  # and add ids it does not
        with pytest.raises(ValueError):
            x.apply(FactSet.of({sorted(a)[0]}), EMPTY)
    delta = {"add": b - a, "base": 7, "del": a - b}
    expected = {k: v if k == "base" else json.loads(reference_encode_facts(v)) for k, v in delta.items() if v}
    assert delta_text(FactSet.of(b - a), 7, FactSet.of(a - b)) == json.dumps(
        expected, ensure_ascii=False, sort_keys=True
    )


@given(fact_sets(), st.lists(st.tuples(st.integers(0, 130), st.booleans()), max_size=12))
def test_nearby_sets_share_edges_and_still_compare_exactly(a: set[str], edits) -> None:
    """A set and a few ids toggled (the report's "left since the previous request"): exact counts, where the
    walk skips the long stretches of equal edges."""
    base = min(map(fact_number, a), default=10**8)
    b = set(a)
    for n, on in edits:
        (b.add if on else b.discard)(fid(base + n))
    x, y = FactSet.of(a), FactSet.of(b)

    assert x.minus_size(y) == len(a - b) and y.minus_size(x) == len(b - a)
    assert x.apply(FactSet.of(b - a), FactSet.of(a - b)) == y


@given(histories())
def test_records_hold_the_full_set_live_and_read_back(history) -> None:
    """Through a real trace file: what ``Trace.request`` returns, what the trace keeps, ``read_trace`` and
    ``iter_requests`` give the same records, whose ``facts`` is the full set's reference encoding."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "t.db"
        trace = Trace(path, keep=True)
        live = []
        for (system, agent, route), ids in history:
            trace.op(system, "tick", agent=agent)
            rec = trace.request(
                system, route, agent=agent, exact_tokens=1, estimate=None, messages=1, facts=ids
            )
            live.append(rec)
        trace.close(complete=True)
        back, streamed = read_trace(path).requests, list(iter_requests(path))
        view = read_run(path)

    for rec, (_, ids) in zip(live, history):
        assert rec.facts == reference_encode_facts(ids)
        assert rec.fact_ids == ids and len(rec.fact_set) == len(ids)
        assert all(rec.has_fact(f) for f in ids) and not rec.has_fact("FACT-99999999999")
    assert back == streamed == live == trace.data.requests
    assert [r.facts for r in back] == [reference_encode_facts(ids) for _, ids in history]
    assert sum(r.facts for rs in view.requests.values() for r in rs) == sum(len(ids) for _, ids in history)


# -- long interleaved streams through a real trace file --------------------------------------------
#: A program's moves, each applied ``repeat`` times to its stream: long repeats of the cheap ones reach
#: the 255-delta bound; ``new`` replaces the set, ``empty`` clears it.
LONG_MOVES = ["grow", "same", "slide", "drop", "cut", "old", "odd", "new", "empty"]
Program = tuple[list[tuple[str, str, str]], int, list[tuple[int, str, int, int]]]


@st.composite
def programs(draw: st.DrawFn) -> Program:
    """Streams, an id base and segments ``(stream index, move, repeat, seed)``: short histories and long
    runs of one move (up to 300 requests of a stream in a row), interleaved."""
    streams = draw(stream_keys(2, 5))
    segments = st.tuples(
        st.integers(0, len(streams) - 1),
        st.sampled_from(LONG_MOVES),
        st.sampled_from([1, 1, 2, 3, 7, 40, 255, 256, 300]),
        st.integers(0, 2**16),
    )
    return streams, draw(st.sampled_from(BASES)), draw(st.lists(segments, min_size=1, max_size=10))


def run_program(program: Program) -> list[tuple[tuple[str, str, str], frozenset[str]]]:
    """The requests a program makes: each segment's move applied *repeat* times to its stream's set."""
    streams, base, segments = program
    sets: dict[tuple[str, str, str], set[str]] = {s: set() for s in streams}
    tops = dict.fromkeys(streams, 0)
    out = []
    for index, move, repeat, seed in segments:
        stream, rng = streams[index], random.Random(seed)
        ids = sets[stream]
        for _ in range(repeat):
            canonical = sorted(n for n in map(fact_number, ids) if n >= 0)
            if move == "grow" and len(ids) < 600:  # a log: new ids above the top, sometimes a gap
                tops[stream] += rng.randint(1, 2)
                ids |= {fid(base + tops[stream] + k) for k in range(rng.randint(1, 2))}
                tops[stream] += 1
            elif move == "slide":  # a capped log: the newest id in, the oldest out
                tops[stream] += 1
                ids.add(fid(base + tops[stream]))
                if canonical:
                    ids.discard(fid(canonical[0]))
            elif move == "drop" and canonical:
                ids.discard(fid(rng.choice(canonical)))
            elif move == "cut" and canonical:  # a fold: the oldest facts go
                ids -= {fid(n) for n in canonical[: rng.randint(1, len(canonical))]}
            elif move == "old":  # an older id comes back (or one already there)
                ids.add(fid(base + rng.randint(0, tops[stream] + 1)))
            elif move == "odd":
                ids ^= {rng.choice(ODD)}
            elif move == "new":
                ids.clear()
                for _ in range(rng.randint(0, 6)):
                    start = rng.randint(0, 300)
                    ids |= {fid(base + n) for n in range(start, start + rng.randint(1, 30))}
                tops[stream] = 310
            elif move == "empty":
                ids.clear()
            out.append((stream, frozenset(ids)))
    return out


#: One stream of 700 unchanged requests whose key frame is long (600 ids, few runs), beside a second
#: stream: the writer must start a key frame after 255 deltas.
SAME_LONG: Program = (
    [("rsi", "actor", "react.hop"), ("mb", "", "wiki.query")],
    9_990,
    [(0, "grow", 700, 5), (0, "odd", 1, 1), (0, "same", 700, 0), (1, "grow", 300, 2), (0, "slide", 256, 3)],
)


@example(SAME_LONG)
@given(programs())
def test_long_streams_read_back_exactly_from_key_frames_at_most_255_rows_back(program: Program) -> None:
    """Random sequences of fact sets over several streams, written through ``Trace`` to a file: every
    record ``read_trace`` and ``iter_requests`` give back is the request's full set, and every row of a
    stream resolves from a key frame at most 255 of its stream's rows back, through deltas no longer in
    all than that key frame (read from the raw column, by the documented format alone)."""
    history = run_program(program)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "t.db"
        trace = Trace(path, keep=False)
        for (system, agent, route), ids in history:
            trace.request(system, route, agent=agent, exact_tokens=1, estimate=None, messages=1, facts=ids)
        trace.close(complete=True)
        back, streamed = read_trace(path).requests, list(iter_requests(path))
        con = sqlite3.connect(path)
        rows = con.execute("SELECT seq, system, agent, route, facts FROM requests ORDER BY seq").fetchall()
        con.close()

    encoded: dict[frozenset[str], str] = {}
    assert back == streamed and len(back) == len(history) == len(rows)
    for rec, ((system, agent, route), ids) in zip(back, history):
        assert (rec.system, rec.agent, rec.route) == (system, agent, route)
        assert rec.fact_ids == ids and len(rec.fact_set) == len(ids)
        if ids not in encoded:
            encoded[ids] = reference_encode_facts(ids)
        assert rec.facts == encoded[ids]

    documented = DocumentedReader()
    since: dict[tuple[str, str, str], tuple[int, int, int]] = {}  # rows since the key frame, its size, spent
    farthest = 0
    for (seq, system, agent, route, text), (_, ids) in zip(rows, history):
        stream = (system, agent, route)
        assert documented.resolve(seq, stream, text) == ids
        if text.startswith("["):
            since[stream] = (0, len(text), 0)
        else:
            rows_back, key, spent = since[stream]  # a stream's first row is a key frame (KeyError if not)
            since[stream] = (rows_back + 1, key, spent + len(text))
        rows_back, key, spent = since[stream]
        assert rows_back <= 255 and spent <= key
        farthest = max(farthest, rows_back)
    assert farthest == 255 or program != SAME_LONG  # the explicit example reaches the bound


def test_a_record_is_the_same_value_from_text_or_from_a_set() -> None:
    """The ``facts`` field reads as the full list whichever form the record holds; records stay frozen,
    picklable and replaceable."""
    ids = {fid(n) for n in (1, 2, 3, 7, 10_000)} | {"FACT-00017"}
    text = reference_encode_facts(ids)
    a = RequestRecord(1, 0.0, "a", "s", "r", 5, None, 1, facts=text)
    b = dataclasses.replace(a, facts=FactSet.of(ids))

    assert a == b and hash(a) == hash(b) and b.facts == text and repr(a) == repr(b)
    assert a.fact_ids == b.fact_ids == ids and a.fact_set == b.fact_set
    assert pickle.loads(pickle.dumps(b)) == a and dataclasses.replace(b, seq=2).facts == text
    assert RequestRecord(1, 0.0, "a", "s", "r", 5, None, 1).facts == "[]"
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.facts = "[]"  # type: ignore[misc]


def test_an_id_that_reads_as_a_range_is_refused() -> None:
    """``FACT-0001..FACT-0003`` as an id would read back as three ids: the trace refuses to write it."""
    trace = Trace(keep=True)
    with pytest.raises(ValueError, match="range"):
        trace.request("s", "r", exact_tokens=1, estimate=None, messages=1, facts={"FACT-0001..FACT-0003"})


def _small_trace(path: Path) -> Path:
    trace = Trace(path, keep=False)
    for step in range(6):
        trace.request(
            "s", "r", agent="a", exact_tokens=1, estimate=None, messages=1,
            facts={fid(n) for n in range(2 * step, 80 + 4 * step, 2)},  # no runs: a long key frame
        )  # fmt: skip
    trace.close(complete=True)
    return path


def _set_facts(seq: int, text: str) -> str:
    return f"UPDATE requests SET facts = '{text}' WHERE seq = {seq}"


CORRUPT = {
    "a wrong base": "UPDATE requests SET facts = replace(facts, '\"base\": 2', '\"base\": 1') WHERE seq = 3",
    "a stream that starts with a delta": "DELETE FROM requests WHERE seq = 1",
    "removes an id its base lacks": _set_facts(3, '{"base": 2, "del": ["FACT-0999"]}'),
    "adds an id its base holds": _set_facts(3, '{"add": ["FACT-0010"], "base": 2}'),
    "an unknown key": _set_facts(3, '{"and": [], "base": 2}'),
    "a number": "UPDATE requests SET facts = 42 WHERE seq = 3",
    "neither list nor object": _set_facts(1, "FACT-0001"),
    "a reversed range": _set_facts(1, '["FACT-0009..FACT-0003"]'),
    "5,000 nested lists": "UPDATE requests SET facts = replace(hex(zeroblob(5000)), '00', '[') WHERE seq = 1",
}


@pytest.mark.parametrize("sql", CORRUPT.values(), ids=CORRUPT.keys())
def test_a_corrupt_facts_column_is_a_trace_error(tmp_path: Path, sql: str) -> None:
    """Every reader refuses a column that does not resolve (exit 2 at the command line), never guesses."""
    path = _small_trace(tmp_path / "t.db")
    assert [r.seq for r in iter_requests(path)] == list(range(1, 7))  # the control reads
    with sqlite3.connect(path) as con:
        con.execute(sql)

    with pytest.raises(TraceError, match="not a memsim trace"):
        read_trace(path)
    with pytest.raises(TraceError, match="not a memsim trace"):
        list(iter_requests(path))
    with pytest.raises(TraceError, match="not a memsim trace"):
        read_run(path)


def test_replay_compares_the_rows_as_written(tmp_path: Path) -> None:
    """Two runs of one history give the same rows; one changed fact in one delta is a different trace."""
    a, b = _small_trace(tmp_path / "a.db"), _small_trace(tmp_path / "b.db")
    assert same_records(a, b)
    with sqlite3.connect(b) as con:
        con.execute("UPDATE requests SET facts = replace(facts, 'FACT-0080', 'FACT-0081') WHERE seq = 2")
        assert con.execute("SELECT facts FROM requests WHERE seq = 2").fetchone()[0].startswith("{")

    assert not same_records(a, b)


# -- schema 2: every facts column a full list (a key frame) --------------------------------------------
def _as_schema_2(src: Path, dst: Path) -> Path:
    """A copy of the trace *src* as schema 2 wrote it: each facts column the full list, schema "2"."""
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, dst)
    full = [(r.facts, r.seq) for r in iter_requests(src)]
    con = sqlite3.connect(dst)
    with con:
        con.executemany("UPDATE requests SET facts = ? WHERE seq = ?", full)
        con.execute("UPDATE meta SET value = '2' WHERE key = 'schema_version'")
    con.close()
    return dst


def _deltas(path: Path) -> int:
    con = sqlite3.connect(path)
    try:
        return int(
            con.execute("SELECT count(*) FROM requests WHERE json_type(facts) = 'object'").fetchone()[0]
        )
    finally:
        con.close()


def test_a_schema_2_trace_reads_as_the_same_records(tmp_path: Path) -> None:
    """Schema 2's full lists are key frames: ``read_trace``, ``iter_requests``, the report and the record
    comparison of replay read a schema-2 trace as the schema-3 trace of the same run."""
    new = _small_trace(tmp_path / "new.db")
    old = _as_schema_2(new, tmp_path / "old.db")
    assert _deltas(new) > 0 and _deltas(old) == 0

    assert read_trace(old).requests == list(iter_requests(old)) == read_trace(new).requests
    assert read_trace(old).meta["schema_version"] == "2"
    assert dataclasses.replace(read_run(old), path="", meta={}) == dataclasses.replace(
        read_run(new), path="", meta={}
    )
    assert same_records(new, old) and same_records(old, new)
    with sqlite3.connect(old) as con:  # one fact changed in one full list
        con.execute("UPDATE requests SET facts = replace(facts, 'FACT-0080', 'FACT-0081') WHERE seq = 2")
    assert not same_records(new, old) and not same_records(old, new)


@pytest.mark.parametrize(
    "sql, message",
    [
        ("UPDATE meta SET value = '2' WHERE key = 'schema_version'", "a delta, which schema 2 never wrote"),
        ("UPDATE meta SET value = '1' WHERE key = 'schema_version'", "schema '1'; this memsim reads schemas"),
    ],
    ids=["schema 2 with deltas", "schema 1"],
)
def test_a_trace_schema_2_never_wrote_is_refused(tmp_path: Path, sql: str, message: str) -> None:
    """A schema-2 trace holding a delta, and schema 1, are trace errors for every reader."""
    path = _small_trace(tmp_path / "t.db")
    with sqlite3.connect(path) as con:
        con.execute(sql)

    for read in (read_trace, lambda p: list(iter_requests(p)), read_run):
        with pytest.raises(TraceError, match=re.escape(message)):
            read(path)


def test_memsim_replays_and_reports_a_schema_2_trace(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``memsim replay`` of a scenario's trace rewritten as schema 2 is an identical trace (exit 0), and a
    changed fact is not (exit 1); ``memsim report`` writes its page (exit 0)."""
    from sim.cli import main

    def memsim(*args: str) -> int:
        try:
            main(list(args))
        except SystemExit as exc:
            return int(exc.code or 0)
        return 0

    name = "merchantbench_suffix_eviction"
    assert memsim("run", name, "--out", str(tmp_path / "run")) == 0
    old = _as_schema_2(tmp_path / "run" / f"{name}.db", tmp_path / "old" / f"{name}.db")
    assert _deltas(tmp_path / "run" / f"{name}.db") > 0
    capsys.readouterr()

    assert memsim("replay", str(old), "--out", str(tmp_path / "a")) == 0
    assert "identical trace" in capsys.readouterr().out
    assert memsim("report", str(old), "-o", str(tmp_path / "old.html")) == 0
    assert (tmp_path / "old.html").stat().st_size > 0
    with sqlite3.connect(old) as con:
        seq, text = con.execute("SELECT seq, facts FROM requests WHERE facts != '[]' ORDER BY seq").fetchone()
        con.execute(
            "UPDATE requests SET facts = ? WHERE seq = ?", (encode_facts(decode_facts(text) | {"X-1"}), seq)
        )
    capsys.readouterr()
    assert memsim("replay", str(old), "--out", str(tmp_path / "b")) == 1
    assert "TRACE DIFFERS" in capsys.readouterr().out


WRITE = """
import sys
from sim.trace import Trace
trace = Trace(sys.argv[1], keep=False)
for step in range(400):
    ids = {f"FACT-{n:04d}" for n in range(9_900 + step // 3, 10_000 + 2 * step) if n % 7}
    ids |= {"FACT-00017", "X-1", "a\\\\"} if step % 5 else {"FACT-017"}
    trace.request("s", ("r", "q")[step % 2], agent="ab"[step % 3 % 2], exact_tokens=1, estimate=None,
                  messages=1, facts=ids)
trace.close(complete=True)
"""


@pytest.mark.slow
def test_the_column_is_byte_identical_across_hash_seeds(tmp_path: Path) -> None:
    """Set iteration order differs between processes; the bytes written do not."""
    for seed in ("1", "2"):
        subprocess.run(
            [sys.executable, "-c", WRITE, str(tmp_path / f"{seed}.db")],
            check=True,
            env={"PYTHONHASHSEED": seed, "PATH": ""},
            cwd=Path(__file__).resolve().parent.parent,
        )

    assert (tmp_path / "1.db").read_bytes() == (tmp_path / "2.db").read_bytes()
