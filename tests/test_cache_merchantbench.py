"""MerchantBench's Claude cache breakpoints and cached-token reading: memsim's counterparts of upstream's
``tests/test_react_160k_compact_30k.py`` @ 47eafeae ``test_compact_react_extracts_provider_specific_cached_
tokens``, ``..._claude_cache_breakpoints_skip_empty_text_blocks`` and ``..._claude_omits_empty_cached_
system_prompt`` (the facts they check, on memsim's request parts), and the same placement on the requests
the benchmark records."""

from __future__ import annotations

import json
from typing import Any

from sim.bench.tasks import build_adapter, tasks_for, workload_of
from sim.cache import CacheCharge, parse_provider
from sim.engine import Simulation
from sim.workload import drive
from systems.merchantbench.adapter import SYSTEM_PROMPT
from systems.merchantbench.model.agent import Parts
from systems.merchantbench.model.caching import (
    cached_tokens,
    message_breakpoints,
    request_breakpoints,
    system_blocks,
    token_usage,
)


def test_extracts_provider_specific_cached_tokens() -> None:
    """``prompt_tokens_details.cached_tokens`` first, then ``cacheReadInputTokensCompatible``, then
    ``cache_read_input_tokens``; a None or 0 falls through; nothing is 0."""
    assert cached_tokens({"prompt_tokens_details": {"cached_tokens": 128}}) == 128
    assert (
        cached_tokens(
            {"prompt_tokens_details": {"cached_tokens": None}, "cacheReadInputTokensCompatible": 64}
        )
        == 64
    )
    assert (
        cached_tokens({"prompt_tokens_details": {"cached_tokens": None}, "cache_read_input_tokens": 32}) == 32
    )
    assert cached_tokens({"prompt_tokens_details": {"cached_tokens": 0}, "cache_read_input_tokens": 5}) == 5
    assert cached_tokens({}) == cached_tokens(None) == 0


def test_cached_tokens_read_back_from_each_providers_usage() -> None:
    """What memsim's provider cache reports, in each provider's own usage fields, reads back as the
    request's cache-read tokens; the act's ``token_usage`` input is the prompt minus them."""
    c = CacheCharge(read=4096, write=300, uncached=50, cost_tokens=0.0, cost_usd=0.0)
    for provider in ("anthropic", "openai"):
        assert cached_tokens(c.usage(provider)) == 4096
    assert token_usage(4446, 20, c.usage("openai")) == {
        "input": 350,
        "output": 20,
        "cache_read": 4096,
        "total": 4466,
    }


def test_claude_cache_breakpoints_skip_empty_text_blocks() -> None:
    """Upstream's four messages: the last assistant message (content ``""``, a tool call only) gets no
    mark; the tool result and the new observation (the last two) get one each."""
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "previous observation"},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "call_a", "type": "function",
            "function": {"name": "search_products", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "call_a", "name": "search_products", "content": '{"ok": true}'},
        {"role": "user", "content": "new observation"},
    ]  # fmt: skip
    assert message_breakpoints(messages) == (2, 3)
    assert 1 not in message_breakpoints(messages)
    # a list content: marked when a block has text, not when every block is empty
    assert message_breakpoints([{"role": "user", "content": [{"type": "text", "text": "x"}]}]) == (0,)
    assert message_breakpoints([{"role": "user", "content": [{"type": "text", "text": ""}]}]) == ()
    # a non-empty last assistant message further back is the third mark
    older: list[dict[str, Any]] = [{"role": "assistant", "content": "plan"}, *messages[2:]]
    assert message_breakpoints(older) == (0, 1, 2)


def test_claude_omits_empty_cached_system_prompt() -> None:
    """An empty system prompt sends no ``extendParams.system`` and gets no breakpoint; a non-empty one is
    marked on the head's last part (system prompt then tool schemas)."""
    msgs = [{"role": "user", "content": "day 1 observation"}]
    assert system_blocks("") is None and system_blocks(None) is None
    assert system_blocks("brief") == [
        {"type": "text", "text": "brief", "cache_control": {"type": "ephemeral"}}
    ]
    assert request_breakpoints("", 1, msgs) == (1,)  # head is the tool schemas alone: only the message
    assert request_breakpoints("brief", 2, msgs) == (1, 2)


def test_benchmark_requests_carry_upstreams_breakpoints() -> None:
    """Every request the MerchantBench adapter returns marks the head and at most three messages (four
    in all), never a message with empty content; under ``--provider anthropic`` the head is read from
    the cache after the first request (the system prompt and tool schemas are a stable prefix)."""
    task = tasks_for(["merchantbench"], [6000], 1, 30)[0]
    assert task.spec is not None
    sim = Simulation(0, provider=parse_provider("anthropic"))
    adapter = build_adapter(task.spec, sim, 6000, workload_of(task))
    seen: list[tuple[tuple[int, ...], int, dict]] = []

    def check(step: object, req: object, rec: object) -> None:
        parts = adapter.agent.seen_parts or adapter.agent.last_parts
        assert isinstance(parts, Parts)
        bps = req.breakpoints  # type: ignore[attr-defined]
        assert len(bps) <= 4 and bps[0] == len(parts.head) - 1
        assert adapter.agent.system_prompt == SYSTEM_PROMPT
        for b in bps[1:]:
            assert parts.body[b - len(parts.head)].get("content")
        seen.append((bps, len(parts.head), json.loads(rec.detail)["cache"]))  # type: ignore[attr-defined]

    drive(adapter, sim, workload_of(task), check)
    assert seen and all(c["cache_read_tokens"] > 0 for _b, _h, c in seen[1:])


def test_forbidden_retry_resends_without_message_marks(monkeypatch: Any) -> None:
    """Upstream's Forbidden retry rebuilds ``messages`` with ``_build_llm_messages`` and no
    ``_add_cache_breakpoints`` while ``{**request, ...}`` keeps ``extra_body`` (``react:451-459`` @
    47eafeae): the resent request marks only the system block; the requests before and after it keep
    their message marks."""
    from sim.variant import Variant
    from systems.merchantbench.drivers.common import BIG, drive, make_agent
    from systems.merchantbench.policies import SavePolicy
    from systems.merchantbench.state import FaultSchedule, ReactConfig

    sim = Simulation(0, provider=parse_provider("anthropic"))
    config = ReactConfig(context_window=BIG, trigger=BIG, keep=BIG)
    schedule = FaultSchedule(llm=((1, 0, "forbidden"),))
    agent = make_agent(sim, Variant(), SavePolicy(read_on_probe=True), config, schedule=schedule, exact=True)
    agent.env.write_memory_doc("agent_0", "# Notes\n- FACT-0001=teal\n")
    marks: list[tuple[int, ...]] = []
    real = sim.request

    def spy(*args: Any, **kwargs: Any) -> Any:
        marks.append(tuple(kwargs["breakpoints"]))
        return real(*args, **kwargs)

    monkeypatch.setattr(sim, "request", spy)
    texts = ["Day 1, Hour 0\nQuestion: what is the value of FACT-0001?", "Day 1, Hour 1\nquiet hour"]
    agent, _ = drive(agent, texts)
    sent = agent.request_log
    assert len(marks) == len(sent) and [r.retry for r in sent].count(True) == 1
    system_mark = (1,)  # the head is the system prompt then the tool schemas
    for bps, req in zip(marks, sent):
        if req.retry:
            assert bps == system_mark
        else:
            assert bps[:1] == system_mark and len(bps) > 1
