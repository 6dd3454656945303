"""MerchantBench's public pure functions against the fidelity note's exact examples."""

import json

from hypothesis import given, settings
from strategies_merchantbench import AGENT_IDS, BUDGETS, HISTORIES, JSON_DOCS, JSON_TEXT

from sim.tokens import estimator
from systems.merchantbench import (
    History,
    compaction_notice,
    compaction_reminder,
    estimate_tokens,
    history_token_estimate,
    message_token_estimate,
    next_memory_version,
    safe_agent_id,
    sanitize_message_for_llm,
    trim_messages_to_token_budget,
)
from systems.merchantbench.model import (
    LEGACY_VERSION_MARKER,
    classify_llm_error,
    framed_version_count,
    history_entry,
    injective_agent_id,
    parse_history_entries,
)


def test_safe_agent_id_collisions_to_agent_0() -> None:
    """Every id the note lists as aliasing agent_0 maps to agent_0."""
    ids = [
        "agent_0",
        "agent 0",
        "agent  0",
        "agent:0",
        "agent/0",
        "agent 🙂 0",
        "_agent_0_",
        ".agent_0.",
        "agent_0.",
    ]

    assert {safe_agent_id(i) for i in ids} == {"agent_0"}


def test_safe_agent_id_collisions_to_agent() -> None:
    """Falsy, dot/underscore-only and non-ASCII-only ids map to "agent"."""
    assert {safe_agent_id(i) for i in ["agent", "", None, "...", "___", "!!!", "中文"]} == {"agent"}


def test_safe_agent_id_more_collisions() -> None:
    """José/Josè both give Jos, ../x and x both give x, the dash is kept, case is kept."""
    assert (safe_agent_id("José"), safe_agent_id("Josè")) == ("Jos", "Jos")
    assert (safe_agent_id("../x"), safe_agent_id("x")) == ("x", "x")
    assert safe_agent_id("-a-") == "-a-"
    assert safe_agent_id("Agent_0") == "Agent_0"
    assert safe_agent_id("agent_0.history") == "agent_0.history"


@given(AGENT_IDS, AGENT_IDS)
def test_injective_agent_id_is_injective_even_case_folded(a: str, b: str) -> None:
    """The fix's encoding never maps two distinct ids to one name, even after lower-casing."""
    if a != b:
        assert injective_agent_id(a).lower() != injective_agent_id(b).lower()


def test_estimate_tokens_examples() -> None:
    """None is 0, the empty string 1 (floor), ASCII chars/4, non-ASCII counts twice."""
    assert estimate_tokens(None) == 0
    assert estimate_tokens("") == 1
    assert estimate_tokens("abcdefgh") == 2
    assert estimate_tokens("价格") == 1  # (0 + 2*2) // 4
    assert estimate_tokens("价格库存") == 2
    assert estimate_tokens({"b": 1, "a": "é"}) == len('{"a": "é", "b": 1}') // 4 + 0


@given(JSON_TEXT | JSON_DOCS)
def test_estimate_tokens_is_upstreams_formula(value) -> None:
    """estimate_tokens is upstream's: sorted json.dumps (non-ASCII kept), then (n + non-ASCII) // 4."""
    s = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)
    expected = 0 if value is None else max(1, (len(s) + sum(1 for ch in s if not ch.isascii())) // 4)

    assert estimate_tokens(value) == expected


def test_message_cost_example() -> None:
    """{"role":"user","content":"hi"} costs 12 (the note's example)."""
    assert message_token_estimate({"role": "user", "content": "hi"}) == 12


def test_history_cost_is_the_sum() -> None:
    """A history costs the sum of its messages."""
    msgs = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "ok"}]

    assert history_token_estimate(msgs) == sum(message_token_estimate(m) for m in msgs)


def test_estimator_is_registered() -> None:
    """The design's estimator is registered with sim.tokens under "merchantbench"."""
    assert estimator("merchantbench")("abcdefgh") == 2


def _budget150() -> list[dict]:
    return [
        {"role": "user", "content": "Day 1, Hour 0: check the stock"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"id": "c0", "type": "function", "function": {"name": "read_memory_doc", "arguments": "{}"}}
            ],
        },
        {
            "role": "tool",
            "tool_call_id": "c0",
            "name": "read_memory_doc",
            "content": json.dumps({"ok": True, "content": "x" * 300, "bytes": 300}),
        },
    ]


def test_trim_budget_150_example_orphans_and_drops_the_read() -> None:
    """The note's example: costs 19/40/111 at budget 150 keep only the result, then drop it: []."""
    msgs = _budget150()

    assert [message_token_estimate(m) for m in msgs] == [19, 40, 111]
    assert trim_messages_to_token_budget(msgs, 150) == []


def test_trim_newest_always_kept_even_over_budget() -> None:
    """A single message over budget is still kept."""
    big = {"role": "user", "content": "x" * 4000}

    assert trim_messages_to_token_budget([{"role": "user", "content": "a"}, big], 10) == [big]


def test_trim_nonpositive_budget_is_empty() -> None:
    """budget <= 0 gives []."""
    assert trim_messages_to_token_budget([{"role": "user", "content": "a"}], 0) == []


def test_trim_returns_the_same_objects() -> None:
    """The trim returns the same dict objects, not copies."""
    msgs = [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}]

    assert all(x is y for x, y in zip(trim_messages_to_token_budget(msgs, 1000), msgs))


def test_trim_stops_once_total_reaches_budget() -> None:
    """Walking back stops as soon as the kept total reaches the budget."""
    msgs = [{"role": "user", "content": "a" * 40}] * 3
    cost = message_token_estimate(msgs[0])

    assert len(trim_messages_to_token_budget(msgs, cost)) == 1
    assert len(trim_messages_to_token_budget(msgs, 2 * cost)) == 2


@settings(max_examples=50)
@given(HISTORIES, BUDGETS)
def test_trim_result_is_a_contiguous_suffix_without_leading_tools(msgs: list[dict], budget: int) -> None:
    """The result is a suffix of the input, never starts with a tool message, and fits unless it is the
    single newest message."""
    out = trim_messages_to_token_budget(msgs, budget)

    assert out == msgs[len(msgs) - len(out) :]
    assert not out or out[0]["role"] != "tool"
    assert len(out) <= 1 or history_token_estimate(out) <= budget or out[-1] is not msgs[-1]


@settings(max_examples=50)
@given(HISTORIES, BUDGETS)
def test_incremental_trim_equals_upstream_trim(msgs: list[dict], budget: int) -> None:
    """The ledger's trim over cached costs returns exactly what upstream's trim returns."""
    h = History(msgs)

    assert h.trim(budget) == trim_messages_to_token_budget(msgs, budget)
    assert h.total == history_token_estimate(msgs)


def test_window_ids_come_back_as_the_same_set_until_one_enters_or_leaves() -> None:
    """``History.facts`` hands back the set it returned last time while the window slides over messages
    that bring no new id and drop none (the trace then skips comparing the sets), and a new one otherwise."""
    h = History([{"role": "user", "content": c} for c in ("FACT-0001=red", "FACT-0002=red", "no facts")])
    first = h.facts(0, 2)

    assert h.facts(0, 3) is first  # "no facts" entered
    h.append({"role": "user", "content": "FACT-0001=red again"})
    assert h.facts(0, 4) is first  # FACT-0001 twice now: no id entered
    assert h.facts(1, 4) is first  # one FACT-0001 left, the other stays
    assert h.facts(2, 4) is not first and h.facts(2, 4) == {"FACT-0001"}  # FACT-0002 left
    h.append({"role": "user", "content": "FACT-0003=red"})
    assert h.facts(2, 5) == {"FACT-0001", "FACT-0003"}


def test_next_memory_version_examples() -> None:
    """Empty history → 1; one legacy marker → 2; a marker inside a body counts too."""
    assert next_memory_version("") == 1
    assert next_memory_version(f"{LEGACY_VERSION_MARKER}1 -->\n## Memory version 1\n") == 2
    body1 = history_entry(1, 0, 0, 39, "<!-- merchantbench-memory-version 9 -->", first=True)
    assert next_memory_version(body1) == 3


def test_next_memory_version_needs_the_trailing_space() -> None:
    """Markers include the trailing space: "<!-- merchantbench-memory-version" alone does not count."""
    assert next_memory_version("<!-- merchantbench-memory-version") == 1


def test_history_entry_format() -> None:
    """The entry's exact lines; \\n\\n first unless the file is empty; final \\n only if missing."""
    assert history_entry(2, 7, 1234, 3, "abc", first=False) == (
        "\n\n<!-- merchantbench-memory-version 2 -->\n## Memory version 2\n- step: 7\n- wall_ms: 1234\n"
        "- bytes: 3\n\nabc\n"
    )
    assert history_entry(1, 0, 5, 0, "", first=True).endswith("- bytes: 0\n\n")
    assert history_entry(1, 0, 5, 2, "a\n", first=True).endswith("\n\na\n")


def test_framed_count_ignores_markers_in_bodies() -> None:
    """The fixed counter parses frames: a marker inside a body is not an entry."""
    text = history_entry(1, 0, 0, 39, "<!-- merchantbench-memory-version 9 -->", first=True)
    text += history_entry(2, 0, 0, 1, "x", first=False)

    assert framed_version_count(text.encode()) == 2
    assert [v for v, _ in parse_history_entries(text.encode())] == [1, 2]


def test_sanitize_fixes_arguments_in_a_copy() -> None:
    """Blank/None → "{}", non-string → sorted json, invalid/non-object → wrapped; the original is kept."""
    calls = [
        {"id": i, "type": "function", "function": {"name": "f", "arguments": a}}
        for i, a in enumerate([None, "  ", {"b": 1, "a": 2}, "not json", "[1]", '{"k": 1}'])
    ]
    msg = {"role": "assistant", "content": None, "tool_calls": calls}

    out = sanitize_message_for_llm(msg)

    assert [c["function"]["arguments"] for c in out["tool_calls"]] == [
        "{}",
        "{}",
        '{"a": 2, "b": 1}',
        '{"_invalid_json_arguments": "not json"}',
        '{"_invalid_json_arguments": "[1]"}',
        '{"k": 1}',
    ]
    assert msg["tool_calls"][0]["function"]["arguments"] is None
    assert out is not msg


def test_sanitize_passes_other_messages_through() -> None:
    """Messages without a tool_calls list come back as the same object."""
    m = {"role": "user", "content": "hi"}

    assert sanitize_message_for_llm(m) is m


def test_compaction_texts_render_the_defaults() -> None:
    """Reminder and notice texts, with thousands separators and the ~ before K."""
    assert compaction_reminder(160_000, 30_000) == (
        "[context-maintenance]\nConversation reached the 160,000-token limit. After this turn, history will "
        "be compacted to the latest ~30,000 estimated tokens. Call write_memory_doc now if important details "
        "should be kept."
    )
    assert compaction_notice(160_000, 30_000) == (
        "[context-maintenance]\nConversation reached the 160,000-token limit. History was compacted to the "
        "latest ~30,000 estimated tokens."
    )


def test_notice_mentions_neither_memory_nor_tool() -> None:
    """Upstream test: the no-write notice mentions neither "memory" nor "tool"."""
    text = compaction_notice(120, 50).lower()

    assert "memory" not in text and "tool" not in text


def test_classify_llm_error_first_match_wins() -> None:
    """InvalidParameter, the Throttling codes, Forbidden, transient, else unknown."""
    assert (
        classify_llm_error("BadRequestError: InvalidParameter: function.arguments must be in JSON format")
        == "InvalidParameter"
    )
    assert classify_llm_error("RateLimitError: Throttling.BurstRate") == "Throttling.BurstRate"
    assert classify_llm_error("RateLimitError: Throttling.AllocationQuota") == "Throttling.AllocationQuota"
    assert classify_llm_error("PermissionDeniedError: 403 Forbidden") == "Forbidden"
    assert classify_llm_error("APIConnectionError: Connection error") == "transient"
    assert classify_llm_error("APIStatusError: HTTP 503") == "unknown"  # the text is not searched for codes
    assert classify_llm_error("APIStatusError: HTTP 503", 503) == "transient"  # e.response.status_code
    assert classify_llm_error("ValueError: odd") == "unknown"


def test_large_save_at_k_30000_empties_the_history() -> None:
    """The note's example: a write call carrying 130,000 characters costs 32,545 and its result 32; at
    K=30,000 only the result fits, is dropped as a leading tool message, and the history becomes []."""
    write = {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "id": "c0",
                "type": "function",
                "function": {"name": "write_memory_doc", "arguments": json.dumps({"content": "x" * 130_000})},
            }
        ],
    }
    result = {
        "role": "tool",
        "tool_call_id": "c0",
        "name": "write_memory_doc",
        "content": json.dumps({"ok": True, "bytes": 130_000}),
    }
    msgs = [
        {"role": "user", "content": "Day 3, Hour 1"},
        {"role": "user", "content": compaction_reminder(160_000, 30_000)},
        write,
        result,
    ]

    assert (message_token_estimate(write), message_token_estimate(result)) == (32_545, 32)
    assert trim_messages_to_token_budget(msgs, 30_000) == []


def test_claim_observations_are_remembered_only_on_a_fresh_stream() -> None:
    """The claims' observation texts are a pure function of the seed and the sizes on a fresh stream: a
    repeat returns the same texts and leaves the stream where making them would; a stream already drawn
    from is not served from the memo."""
    from sim.engine import Simulation
    from systems.merchantbench.drivers import common

    sizes = [(300, 1), (50, 0), (900, 2)]
    common._OBS_MEMO.clear()
    first = Simulation(3)
    made = common.observations(first, sizes)
    after = first.rng(common._OBS_STREAM).random()
    again = Simulation(3)
    assert common.observations(again, sizes) == made
    assert again.rng(common._OBS_STREAM).random() == after
    assert common.observations(Simulation(4), sizes) != made
    used = Simulation(3)
    used.rng(common._OBS_STREAM).random()
    assert common.observations(used, sizes) != made
