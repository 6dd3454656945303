"""Hypothesis strategies for the MerchantBench tests: messages, histories, agent ids, policies, faults."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

from systems.merchantbench.policies import SAVE_POLICIES
from systems.merchantbench.state import FaultSchedule

TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=60)

AGENT_IDS = st.one_of(
    st.sampled_from(
        ["agent_0", "agent 0", "agent:0", "_agent_0_", "Agent_0", "José", "../x", "agent_0.history"]
    ),
    st.text(alphabet="aA0_ .:/-é🙂", max_size=6),
)


@st.composite
def tool_call(draw: Any, name: str | None = None) -> dict[str, Any]:
    """One OpenAI-format tool call (arguments sometimes invalid, blank or non-string)."""
    args = draw(
        st.one_of(
            st.just("{}"),
            st.just(""),
            st.none(),
            st.just("not json"),
            st.just("[1]"),
            st.dictionaries(st.sampled_from(["content", "k"]), TEXT, max_size=2),
            st.builds(lambda c: json.dumps({"content": c}), TEXT),
        )
    )
    return {
        "id": draw(st.sampled_from(["call_0_0", "call_1_0", "c0"])),
        "type": "function",
        "function": {
            "name": name or draw(st.sampled_from(["read_memory_doc", "write_memory_doc", "query_balance"])),
            "arguments": args,
        },
    }


@st.composite
def message(draw: Any) -> dict[str, Any]:
    """A user, assistant (with or without tool calls) or tool message."""
    kind = draw(st.sampled_from(["user", "assistant", "assistant_calls", "tool"]))
    if kind == "user":
        return {"role": "user", "content": draw(TEXT)}
    if kind == "assistant":
        return {"role": "assistant", "content": draw(TEXT)}
    if kind == "assistant_calls":
        return {
            "role": "assistant",
            "content": None,
            "tool_calls": draw(st.lists(tool_call(), min_size=1, max_size=2)),
        }
    return {
        "role": "tool",
        "tool_call_id": "call_0_0",
        "name": "read_memory_doc",
        "content": json.dumps({"ok": True, "content": draw(TEXT)}),
    }


HISTORIES = st.lists(message(), max_size=14)
BUDGETS = st.integers(-5, 400)

SAVE_POLICY_KW = st.fixed_dictionaries(
    {
        "save": st.sampled_from(SAVE_POLICIES),
        "k": st.integers(1, 3),
        "read_on_probe": st.booleans(),
        "domain_calls": st.booleans(),
        "oversize_chars": st.integers(0, 2000),
        "eos_first": st.booleans(),
    }
)

FAULT_SCHEDULES = st.builds(
    FaultSchedule,
    llm=st.lists(
        st.tuples(
            st.integers(0, 3),
            st.integers(0, 3),
            st.sampled_from(["forbidden", "burst", "transient", "invalid", "unknown"]),
        ),
        max_size=3,
    ).map(tuple),
    act=st.lists(
        st.tuples(st.integers(0, 3), st.integers(0, 2), st.sampled_from([425, 400, 500, 429])), max_size=2
    ).map(tuple),
    no_usage=st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3)), max_size=3).map(tuple),
)

# -- JSON values for the encoders (tests/test_merchantbench_jsontext.py) ------------------------------------
#: Characters over every path of the ASCII-first string encoder: short escapes, DEL, rare control
#: characters, non-ASCII and astral characters, and a backslash before "u" (the false alarm that sends a
#: text back to the other encoder).
_JSON_CHARS = list('ab u"\\/\n\t\r\b\f\x7f\x00\x01\x1fé€😀')
#: Text as a step file can hold it (UTF-8 encodable), or any text.
UTF8_TEXT = st.text(st.sampled_from(_JSON_CHARS), max_size=8) | st.text(max_size=6)
#: The same with a lone surrogate too (json.dumps writes it; UTF-8 cannot encode it).
JSON_TEXT = st.text(st.sampled_from([*_JSON_CHARS, "\ud800"]), max_size=8) | st.text(max_size=6)
#: The non-string keys json.dumps converts (int, float, bool, None).
JSON_OTHER_KEYS = st.integers() | st.booleans() | st.none() | st.floats()


def json_scalars(text: st.SearchStrategy[str]) -> st.SearchStrategy[Any]:
    """Every scalar the encoders meet: floats with NaN, infinities and -0.0, integers of any size, *text*."""
    return st.none() | st.booleans() | st.integers() | st.integers(-(2**80), 2**80) | st.floats() | text


def json_values(text: st.SearchStrategy[str], *, other_keys: bool) -> st.SearchStrategy[Any]:
    """Nested JSON values: lists, tuples, empty containers, dicts with *text* keys and, with *other_keys*,
    dicts with the other keys json.dumps accepts (unsortable together: not for ``sort_keys``)."""

    def containers(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        out = (
            st.lists(inner, max_size=4)
            | st.tuples(inner, inner)
            | st.just([])
            | st.just({})
            | st.dictionaries(text, inner, max_size=4)
        )
        return out | st.dictionaries(JSON_OTHER_KEYS, inner, max_size=3) if other_keys else out

    return st.recursive(json_scalars(text), containers, max_leaves=25)


JSON_SCALARS = json_scalars(JSON_TEXT)
#: Any JSON value json.dumps takes.
JSON_VALUES = json_values(JSON_TEXT, other_keys=True)
#: JSON values whose dict keys are all strings (sortable: for ``sort_keys=True``).
JSON_DOCS = json_values(JSON_TEXT, other_keys=False)
#: JSON values with string keys that UTF-8 can encode (what a step file can hold).
UTF8_DOCS = json_values(UTF8_TEXT, other_keys=False)
