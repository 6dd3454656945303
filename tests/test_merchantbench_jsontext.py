"""MerchantBench's JSON encoders against the standard library, byte for byte: the step-trace encoder
(``indent_json``, ``turn_json`` and the step file it assembles) against ``json.dumps(..., indent=2,
ensure_ascii=False)``, and the prebuilt compact encoders (``sorted_json``, ``result_json`` and their
ASCII-only halves) against ``json.dumps`` with the same arguments."""

from __future__ import annotations

import collections
import datetime
import enum
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies_merchantbench import JSON_DOCS, JSON_SCALARS, JSON_TEXT, JSON_VALUES, UTF8_DOCS, UTF8_TEXT

from sim.engine import Simulation
from sim.jsontext import encoder, record_json
from systems.merchantbench import MerchantEnv
from systems.merchantbench.model import EOS_CALL
from systems.merchantbench.model import jsontext as jt
from systems.merchantbench.model.traces import indent_json, turn_json


def _indented(value: Any, level: int) -> str:
    """What the step file holds for *value* nested at *level*: the standard library's text, each line after
    the first indented by 2 * level more spaces."""
    return json.dumps(value, indent=2, ensure_ascii=False).replace("\n", "\n" + "  " * level)


class _Int(enum.IntEnum):
    ONE = 1


class _Str(str):
    pass


class _Float(float):
    pass


def _nested(depth: int, leaf: Any) -> Any:
    value = leaf
    for i in range(depth):
        value = [value, i] if i % 2 else {"k": value, "n": i}
    return value


EXAMPLES: dict[str, Any] = {
    "non-ascii": {"é": "café", "€": ["€", "😀", "日本"], "mixed": "a\u00e9\U0001f600b"},
    "escapes": ['"', "\\", "\n\r\t\b\f", "\x00\x01\x1f", "\x7f", "/"],
    "backslash-u false alarm": {"a\\u0041": "\\u00e9 is not é", "x": ["\\u", "\\\\u"]},
    "lone surrogate": ["\ud800", {"k\udfff": "\ud83d"}],
    "floats": [0.0, -0.0, 0.1, 1.0, -1.5, 1e16, 1e300, 5e-324, float("nan"), float("inf"), float("-inf")],
    "float in dict": {"f": 2.5, "g": 1e-7, "nested": {"h": -0.0}},
    "ints": [0, -1, 2**63, -(2**100), True, False, None],
    "empty containers": [{}, [], (), {"a": {}}, {"b": []}, [[]], [{}], [[], {}]],
    "empty top-level dict": {},
    "empty top-level list": [],
    "tuples": (1, ("a", (2.5, ())), {"t": (None,)}),
    "nested containers": {"a": [{"b": {"c": [1, [2, {"d": "é"}]]}}], "e": [[["deep"]]]},
    "non-string keys flat": {7: "a", 2.5: "b", True: "c", None: "d", -0.0: "e", float("inf"): "f"},
    "non-string keys nested": {1: [1, 2], "s": {False: {None: []}}, 3.5: {"x": "é"}},
    "message": {
        "role": "assistant",
        "content": "thinking… é",
        "tool_calls": [
            {
                "id": "call_0_0",
                "type": "function",
                "function": {"name": "write_memory_doc", "arguments": '{"content": "# Notes\\n- é"}'},
                "tool_origin": "merchantbench_env",
            }
        ],
        "tool_origin": "merchantbench_env",
    },
    "scalar subclasses": {"i": _Int.ONE, "s": _Str("é"), "f": _Float(0.5), "l": [_Int.ONE, _Str("x")]},
    "dict subclass": collections.OrderedDict([("b", 1), ("a", [collections.OrderedDict(z=2)])]),
    "deeper than the level tables": _nested(70, "é"),
    "string": 'é\n"x"',
    "float": 1.25,
    "int": 12345678901234567890,
    "none": None,
    "bool": True,
}


@pytest.mark.parametrize("value", list(EXAMPLES.values()), ids=list(EXAMPLES))
def test_indent_json_examples(value: Any) -> None:
    """Each example, at every nesting level a step file uses, is the standard library's indented text."""
    for level in range(5):
        assert indent_json(value, level) == _indented(value, level)


@given(JSON_VALUES, st.integers(0, 4))
def test_indent_json_equals_the_standard_encoder(value: Any, level: int) -> None:
    """Any JSON value (non-ASCII, escapes, NaN and infinities, tuples, empty and nested containers,
    non-string keys) at any level is json.dumps(value, indent=2, ensure_ascii=False), re-indented."""
    assert indent_json(value, level) == _indented(value, level)


@pytest.mark.parametrize(
    "value",
    [{1}, {"a": [1, {2}]}, {(1, 2): "tuple key"}, [{"a": {(1,): 0}}], [datetime.date(2025, 6, 1)]],
    ids=["set", "nested set", "tuple key", "nested tuple key", "date"],
)
def test_indent_json_refuses_what_json_dumps_refuses(value: Any) -> None:
    """A value json.dumps cannot encode raises TypeError from both."""
    with pytest.raises(TypeError):
        json.dumps(value, indent=2, ensure_ascii=False)
    with pytest.raises(TypeError):
        indent_json(value, 2)


def test_indent_json_circular_reference_raises_as_json_dumps_does() -> None:
    """A circular value raises ValueError from both."""
    loop: list[Any] = ["x"]
    loop.append({"again": loop})
    with pytest.raises(ValueError, match="Circular"):
        json.dumps(loop, indent=2, ensure_ascii=False)
    with pytest.raises(ValueError, match="Circular"):
        indent_json(loop)


# -- turn records ---------------------------------------------------------------------------------------
_COUNTS = st.just({}) | st.dictionaries(JSON_TEXT, st.integers() | st.booleans() | st.floats(), max_size=2)
#: Turn records of the env server's key order, with values of the server's types or not.
TURNS = st.fixed_dictionaries(
    {
        "turn_idx": st.integers() | st.booleans(),
        "agent_id": JSON_SCALARS,
        "token_usage": _COUNTS,
        "tool_origins": _COUNTS,
        "message_origins": _COUNTS,
        "tool_call_origins": _COUNTS,
        "tool_result_origins": _COUNTS,
        "received_at_wall_ms": st.integers() | st.floats(),
    },
    optional={"context": JSON_VALUES},
)
_ORIGIN = st.just({}) | st.dictionaries(st.just("merchantbench_env") | JSON_TEXT, st.integers(), max_size=1)
#: Turn records exactly as the env server writes them (``_turn_meta``): the shape turn_json writes itself.
SERVER_TURNS = st.fixed_dictionaries(
    {
        "turn_idx": st.integers(0, 10**6),
        "agent_id": JSON_TEXT,
        "token_usage": st.just({}),
        "tool_origins": _ORIGIN,
        "message_origins": _ORIGIN,
        "tool_call_origins": _ORIGIN,
        "tool_result_origins": _ORIGIN,
        "received_at_wall_ms": st.integers(0, 2**63),
    },
    optional={
        "context": st.fixed_dictionaries(
            {},
            optional={
                "tokens": st.integers(1),
                "compacted": st.booleans(),
                "retry_exhausted": st.integers(0),
            },
        )
        | JSON_VALUES
    },
)


def test_turn_json_examples() -> None:
    """The server's turn records (no counts, every count, a context) and records of other shapes."""
    env = "merchantbench_env"
    base = {
        "turn_idx": 0,
        "agent_id": "agent_0",
        "token_usage": {},
        "tool_origins": {env: 2},
        "message_origins": {env: 1},
        "tool_call_origins": {env: 1},
        "tool_result_origins": {},
        "received_at_wall_ms": 1767571200000,
    }
    turns = [
        base,
        {**base, "tool_origins": {}, "message_origins": {}, "tool_call_origins": {}, "agent_id": "José"},
        {**base, "context": {"tokens": 120000, "compacted": True, "retry_exhausted": 1}},
        {**base, "context": {"é": [1.5, {"x": None}]}},
        {**base, "token_usage": {"prompt": 3}},
        {**base, "tool_origins": {env: 1, "other": 2}},
        {**base, "received_at_wall_ms": 1.5},
        {**base, "turn_idx": True},
        {**base, "agent_id": None},
        {**base, "context": {}, "extra": 1},
        {**base, "not_context": [1, {"é": 2.5}]},
        dict(reversed(list(base.items()))),
        {},
        {"turn_idx": 0},
    ]
    for turn in turns:
        assert turn_json(turn) == _indented(turn, 2)


@given(SERVER_TURNS | TURNS | st.dictionaries(JSON_TEXT, JSON_SCALARS, max_size=3))
def test_turn_json_equals_the_standard_encoder(turn: dict[str, Any]) -> None:
    """A turn record, of the env server's shape or not, is json.dumps(turn, indent=2) at level 2."""
    assert turn_json(turn) == _indented(turn, 2)


# -- the step file --------------------------------------------------------------------------------------
_ACTS = st.lists(
    st.fixed_dictionaries(
        {"content": st.none() | UTF8_TEXT, "doc": UTF8_TEXT},
        optional={"extra": UTF8_DOCS, "ctx": st.booleans()},
    ),
    min_size=1,
    max_size=4,
)


@given(_ACTS, UTF8_TEXT)
def test_step_file_is_json_dumps_of_the_step_after_every_write(acts: list[dict[str, Any]], obs: str) -> None:
    """Every write of the step file (live after each act, final at hook close) is byte for byte
    ``json.dumps(step, indent=2, ensure_ascii=False)`` of the step as it stands: items encoded once and
    joined must equal the whole step encoded afresh."""
    sim = Simulation(0)
    env = MerchantEnv(sim, sim.tree("memory"), brief="Shop brief: é")
    written: list[bool] = []
    replace = env.tree.replace_atomic

    def check(path: str, data: bytes, **kw: Any) -> None:
        close_ms = json.loads(data)["hook_close_wall_ms"]
        assert close_ms in (0, env.server_clock.ms())
        assert data == json.dumps(env.step_payload(close_ms), indent=2, ensure_ascii=False).encode("utf-8")
        written.append(close_ms != 0)
        replace(path, data, **kw)

    env.tree.replace_atomic = check  # type: ignore[method-assign]
    env.deliver_observation("agent_0", obs)
    for i, a in enumerate(acts):
        call = {
            "id": f"call_{i}",
            "type": "function",
            "function": {"name": "write_memory_doc", "arguments": json.dumps({"content": a["doc"]})},
        }
        msg: dict[str, Any] = {"role": "assistant", "content": a["content"], "tool_calls": [call]}
        if "extra" in a:
            msg["extra"] = a["extra"]
        ctx = {"tokens": 100 + i, "compacted": True} if a.get("ctx") else None
        env.act("agent_0", [msg], step=0, context=ctx)
    sim.run(until=3)
    env.act("agent_0", [{"role": "assistant", "content": "done é", "tool_calls": [dict(EOS_CALL)]}], step=0)

    assert written == [False] * (len(acts) + 1) + [True]
    assert env.t == 1


# -- the compact encoders -------------------------------------------------------------------------------
COMPACT_EXAMPLES = [v for k, v in EXAMPLES.items() if "non-string keys" not in k] + [
    {"b": 1, "a": {"d": [], "c": {}}},
    {"z": "é", "y": "\\u", "x": [1.5, float("nan")]},
]


@pytest.mark.parametrize("value", COMPACT_EXAMPLES)
def test_compact_encoders_examples(value: Any) -> None:
    """sorted_json and result_json, the trace's record_json, and the ASCII-only encoders they try first,
    write json.dumps's text."""
    _check_compact(value)


@given(JSON_DOCS)
def test_compact_encoders_equal_json_dumps(value: Any) -> None:
    """The same for any JSON value with string keys."""
    _check_compact(value)


@given(JSON_VALUES)
def test_result_json_with_any_keys_equals_json_dumps(value: Any) -> None:
    """result_json (unsorted) takes every key json.dumps takes."""
    assert jt.result_json(value) == json.dumps(value, ensure_ascii=False, default=str)


def _check_compact(value: Any) -> None:
    assert jt.sorted_json(value) == json.dumps(value, ensure_ascii=False, sort_keys=True)
    assert jt.result_json(value) == json.dumps(value, ensure_ascii=False, default=str)
    assert record_json(value) == json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    ascii_sorted = encoder(ascii_only=True, sort_keys=True, default=None)
    ascii_result = encoder(ascii_only=True, sort_keys=False, default=str)
    assert ascii_sorted(value) == json.dumps(value, ensure_ascii=True, sort_keys=True)
    assert ascii_result(value) == json.dumps(value, ensure_ascii=True, default=str)


def test_result_json_default_and_circular_reference() -> None:
    """default=str applies to unknown objects; a circular value raises as json.dumps does, and the next
    call is unaffected (the encoder's circular-reference markers start clean)."""
    loop: list[Any] = []
    loop.append(loop)

    assert jt.result_json({"when": datetime.date(2025, 6, 1)}) == '{"when": "2025-06-01"}'
    with pytest.raises(ValueError, match="Circular"):
        jt.result_json({"a": [1, loop]})
    with pytest.raises(ValueError, match="Circular"):
        jt.sorted_json(loop)
    with pytest.raises(TypeError):
        jt.sorted_json({"when": datetime.date(2025, 6, 1)})
    with pytest.raises(TypeError):
        jt.sorted_json({"b": 1, 2: "mixed keys"})
    assert jt.result_json({"a": [1, [2]]}) == '{"a": [1, [2]]}'
    assert jt.sorted_json({"b": [1], "a": [2]}) == '{"a": [2], "b": [1]}'


@pytest.mark.parametrize("dumps", [jt.sorted_json, jt.result_json], ids=["sorted_json", "result_json"])
def test_a_failed_call_leaves_no_stale_circular_marker(dumps: Any) -> None:
    """A container that was being encoded when a call raised is encoded normally by the next call once it
    is no longer circular (the C encoder leaves its markers behind when it raises)."""
    holder: list[Any] = [1]
    holder.append({"me": holder})
    with pytest.raises(ValueError, match="Circular"):
        dumps(holder)
    holder.pop()

    assert dumps(holder) == json.dumps(holder) == "[1]"
