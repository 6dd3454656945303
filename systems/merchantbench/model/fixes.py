"""The fixed variants' mechanisms in the ReAct loop: each is a minimal repair of one claimed failure mode,
switched on by a :class:`sim.variant.Variant` (names in :mod:`systems.merchantbench.state`) and needing
nothing the real agent lacks: its own history, its tool calls through ``/act``, its step traces on the
server's disk, and the text of its observations. Upstream behaviour stays in :mod:`.agent`.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from sim.text import extract_facts
from sim.tokens import count_tokens
from systems.merchantbench.model.constants import MAINTENANCE_PREFIX, MEMORY_DOC_MAX_BYTES, SYSTEM
from systems.merchantbench.model.estimate import provider_text, sanitize_message_for_llm
from systems.merchantbench.model.fixtable import FIXES
from systems.merchantbench.model.history import group_trim, last_observation
from systems.merchantbench.state import GROUP_TRIM, HttpError

if TYPE_CHECKING:
    from systems.merchantbench.model.agent import ReactAgent

SAVE_ATTEMPTS = 3
"""How many times ``save-before-compact`` tries its save within one step."""
_MENTION = re.compile(r"FACT-\d{4,}")


# -- aligned-trim: a first message that stays put (the prompt-cache claim) ----------------------------
def aligned_trim(
    agent: ReactAgent, body: list[dict[str, Any]], idx: list[int], costs: list[int]
) -> tuple[list[dict[str, Any]], list[int], list[int]]:
    """``aligned-trim``: the request the trim chose (*body*, the history indices *idx* of its messages, -1
    for a clipped copy, and their estimated *costs*), cut to start at the agent's floor, an absolute
    history position. While the trim keeps the floor's message, everything before the floor is left out,
    so the request starts where the previous one did. When the trim has dropped it, the floor moves to
    the oldest non-tool message of the trim's selection whose suffix costs at most half of the selection
    (never past the step's observation), and the request starts there: a prompt cache then serves every
    request until the next move."""
    h = agent.history
    first = next((i for i in idx if i >= 0), None)
    if first is None:
        return body, idx, costs
    if h.base + first > agent._aligned_floor:
        half, acc, floor = sum(costs) / 2, 0, None
        for k in range(len(idx) - 1, -1, -1):
            acc += costs[k]
            if idx[k] >= 0 and body[k].get("role") != "tool" and (acc <= half or floor is None):
                floor = h.base + idx[k]
            if acc > half and floor is not None:
                break
        floor = h.base + first if floor is None else floor
        obs = last_observation(h.msgs)  # the step's observation (its question) is never left out
        if obs is not None and obs in idx:
            floor = min(floor, h.base + obs)
        agent._aligned_floor = floor
    keep = [k for k, i in enumerate(idx) if i < 0 or h.base + i >= agent._aligned_floor]
    return [body[k] for k in keep], [idx[k] for k in keep], [costs[k] for k in keep]


# -- provider-budget: the request trimmed in provider tokens (mode 4) ---------------------------------
def provider_budget_request(agent: ReactAgent) -> tuple[list[dict[str, Any]], list[str], list[int]]:
    """``provider-budget``: the history trimmed to window - system - tools - output reserve in exact
    provider tokens (cl100k of each message's provider text); a lone message over that budget is clipped
    to fit. With ``group-trim`` on, the group trim runs on those costs. Returns the sanitized messages,
    their provider texts, and the indices of the history messages they came from (-1 for a clipped copy)."""
    h, c = agent.history, agent.config
    if agent._tools_exact is None:
        agent._tools_exact = count_tokens(agent.tools_json)
    budget = (
        c.context_window - count_tokens(agent.system_prompt or "") - agent._tools_exact - c.output_reserve
    )
    n = len(h)
    if budget <= 0 or n == 0:
        return [], [], []
    if agent.variant.has(GROUP_TRIM):
        kept = group_trim(h, budget, cost=h.exact, measure=_exact_cost)
        total = sum(h.exact(i) if m is h.msgs[i] else _exact_cost(m) for i, m in kept)
        obs = last_observation(h.msgs)
        if total > budget and obs is not None:  # the kept observation alone is over: clip it, as a lone one
            room = budget - (total - h.exact(obs))
            kept = [(i, clip_prefix(m, room) if i == obs else m) for i, m in kept]
        return _from_kept(h, kept)
    start, total = n, 0
    for i in range(n - 1, -1, -1):
        cost = h.exact(i)
        if start < n and total + cost > budget:
            break
        start, total = i, total + cost
    while start < n and h.msgs[start].get("role") == "tool":
        start += 1
    idx = list(range(start, n))
    msgs, parts = [h.sent[i] for i in idx], [h.part(i) for i in idx]
    if len(msgs) == 1 and total > budget:  # a lone message over budget: clip it
        m = dict(msgs[0])
        content = str(m.get("content") or "")
        while content and count_tokens(provider_text({**m, "content": content})) > budget:
            content = content[: max(0, len(content) * 9 // 10 - 8)]
        m["content"] = content
        msgs, parts, idx = [m], [provider_text(m)], [-1]
    return msgs, parts, idx


def clip_prefix(message: dict[str, Any], room: int) -> dict[str, Any]:
    """*message* with its content cut to the longest prefix whose exact provider cost fits *room*."""
    content = str(message.get("content") or "")
    lo, hi = 0, len(content)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if _exact_cost({**message, "content": content[:mid]}) <= room else (lo, mid - 1)
    return {**message, "content": content[:lo]}


def _exact_cost(message: dict[str, Any]) -> int:
    return count_tokens(provider_text(sanitize_message_for_llm(message)))


def _from_kept(
    h: Any, kept: list[tuple[int, dict[str, Any]]]
) -> tuple[list[dict[str, Any]], list[str], list[int]]:
    msgs, parts, idx = [], [], []
    for i, m in kept:
        if m is h.msgs[i]:
            msgs.append(h.sent[i])
            parts.append(h.part(i))
            idx.append(i)
        else:
            s = sanitize_message_for_llm(m)
            msgs.append(s)
            parts.append(provider_text(s))
            idx.append(-1)
    return msgs, parts, idx


def group_request(agent: ReactAgent) -> tuple[list[dict[str, Any]], list[str], list[int]]:
    """``group-trim`` at B (estimated tokens): :func:`~.history.group_trim` of the history."""
    return _from_kept(agent.history, group_trim(agent.history, agent.config.context_window))


# -- save-before-compact (modes 1 and 6) --------------------------------------------------------------
def dropped_text(agent: ReactAgent, kept: list[tuple[int, dict[str, Any]]] | None, start: int) -> str:
    """The provider text of every message the compaction would drop (whole originals of messages the
    group trim only cut), oldest first."""
    h = agent.history
    if kept is None:
        return "\n".join(h.part(i) for i in range(start))
    whole = {i for i, m in kept if m is h.msgs[i]}
    return "\n".join(h.part(i) for i in range(len(h)) if i not in whole)


def save_before_compact(agent: ReactAgent, t: int) -> None:
    """``save-before-compact``, at the start of a step while a compaction is pending and nothing was saved
    in its cycle: the agent reads its document and writes it back with the messages the trim will drop
    appended (as ``## Saved before compaction (step t)``; if over 256 KiB, the oldest appended text goes
    first), then compacts. Both acts are the agent's own maintenance and are not remembered in history; an
    HTTP error is retried up to :data:`SAVE_ATTEMPTS` times, after which the compaction waits a step more.
    A :class:`~systems.merchantbench.state.ServerUnavailable` escapes like any act's."""
    kept, start = agent._compaction_plan(agent.config.keep)
    text = dropped_text(agent, kept, start)
    if not text:
        agent._saved_in_cycle = True
    for attempt in range(SAVE_ATTEMPTS if text else 0):
        try:
            read = _maintenance_call(t, attempt, "read_memory_doc", "{}")
            res = agent._act(read, t, agent.act_context())
            doc = json.loads(res["tool_results"][0]["content"]).get("content", "")
            body = _appended(doc, f"## Saved before compaction (step {t})\n", text)
            write = _maintenance_call(t, attempt, "write_memory_doc", json.dumps({"content": body}))
            agent._act(write, t, agent.act_context())
        except HttpError as exc:
            agent.sim.trace.op(
                SYSTEM, "save_before_compact", agent=agent.agent_id, phase="fail", t=t, status=exc.status
            )
            continue
        if agent._saved_in_cycle:
            agent.sim.trace.op(SYSTEM, "save_before_compact", agent=agent.agent_id, t=t, chars=len(text))
            break
    agent.compact_history_if_pending()


def _maintenance_call(t: int, attempt: int, name: str, arguments: str) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": f"{MAINTENANCE_PREFIX} saving what the compaction drops",
        "tool_calls": [
            {
                "id": f"call_save_{t}_{attempt}_{name}",
                "type": "function",
                "function": {"name": name, "arguments": arguments},
            }
        ],
    }


def _appended(doc: str, header: str, text: str) -> str:
    head = (doc + "\n\n" if doc else "") + header
    room = MEMORY_DOC_MAX_BYTES - len(head.encode("utf-8"))
    data = text.encode("utf-8")
    if len(data) > room:
        data = data[len(data) - max(0, room) :]
    return head + data.decode("utf-8", "ignore")


# -- unique-call-ids (mode 7) -------------------------------------------------------------------------
def unique_id(agent: ReactAgent, call_id: str) -> str:
    """``unique-call-ids``: *call_id*, or, if the agent already sent it in this step, the same id with a
    ``~n`` suffix that it has not sent."""
    sent = agent._ids_sent
    out, n = call_id, 1
    while out in sent:
        out, n = f"{call_id}~{n}", n + 1
    sent.add(out)
    return out


# -- trace-recall (mode 13) ---------------------------------------------------------------------------
def recall_from_traces(agent: ReactAgent, t: int, observation: str) -> None:
    """``trace-recall``: the fact ids the observation names (``FACT-nnnn``) that the request would not show
    are looked up in the server's step traces (``read_step_index`` of every earlier step); the fact tokens
    found are appended to the history as one ``[trace-recall]`` user message."""
    named = set(_MENTION.findall(observation))
    if not named:
        return
    h = agent.history
    start = h.trim_start(agent.config.context_window)[0]
    visible: set[str] = set()
    for i in range(start, len(h)):
        visible |= extract_facts(h.part(i))
    missing = named - visible
    if not missing:
        return
    found: dict[str, None] = {}
    for past in range(t):
        step = agent.env.read_step_index(past)
        for m in (step or {}).get("messages", []):
            text = provider_text(m)
            for f in sorted(missing & extract_facts(text)):
                found.update(dict.fromkeys(re.findall(rf"{f}=[a-z]+", text)))
    if found:
        h.append({"role": "user", "content": "[trace-recall]\n" + "\n".join(found)})
        agent.sim.trace.op(SYSTEM, "trace_recall", agent=agent.agent_id, t=t, facts=sorted(missing))


# The agent calls these by name (.fixtable); it never imports this module.
FIXES.register(
    aligned_trim, provider_budget_request, group_request, save_before_compact, unique_id, recall_from_traces
)
