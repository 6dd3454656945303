"""The ReAct baseline's process-local history (MEM-OBJ-history): incremental cost ledger, the suffix trim
over cached costs, the reminder and notice texts, and the fixed variants' group-atomic trim.

Upstream: ``agent/baselines/react_160k_compact_30k.py`` (``self.history``, ``_compaction_reminder``,
``_compaction_notice``, ``_trim_messages_to_token_budget``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from sim.tokens import count_tokens
from systems.merchantbench.model.constants import MAINTENANCE_PREFIX
from systems.merchantbench.model.estimate import (
    message_token_estimate,
    provider_text,
    sanitize_message_for_llm,
    suffix_start,
)


def compaction_reminder(trigger: int, keep: int) -> str:
    """The pending-path reminder (a user message)."""
    return (
        f"{MAINTENANCE_PREFIX}\nConversation reached the {trigger:,}-token limit. After this turn, history "
        f"will be compacted to the latest ~{keep:,} estimated tokens. Call write_memory_doc now if "
        "important details should be kept."
    )


def compaction_notice(trigger: int, keep: int) -> str:
    """The immediate-path notice (a user message; no write tool offered)."""
    return (
        f"{MAINTENANCE_PREFIX}\nConversation reached the {trigger:,}-token limit. History was compacted "
        f"to the latest ~{keep:,} estimated tokens."
    )


def is_maintenance(message: dict[str, Any]) -> bool:
    """Whether *message* is a compaction reminder or notice."""
    c = message.get("content")
    return message.get("role") == "user" and isinstance(c, str) and c.startswith(MAINTENANCE_PREFIX)


class History:
    """``self.history`` with each message's cost cached once, a running total, and the sanitized copy
    and provider text cached per message, so trimming and assembly cost what they keep."""

    __slots__ = ("_exact", "_parts", "costs", "msgs", "sent", "total")

    def __init__(self, messages: Iterable[dict[str, Any]] = ()) -> None:
        self.msgs: list[dict[str, Any]] = []
        self.sent: list[dict[str, Any]] = []
        self.costs: list[int] = []
        self._parts: list[str | None] = []
        self._exact: list[int | None] = []
        self.total = 0
        for m in messages:
            self.append(m)

    def __len__(self) -> int:
        return len(self.msgs)

    def append(self, message: dict[str, Any]) -> None:
        """Append one message, costing it once."""
        c = message_token_estimate(message)
        self.msgs.append(message)
        self.sent.append(sanitize_message_for_llm(message))
        self.costs.append(c)
        self._parts.append(None)
        self._exact.append(None)
        self.total += c

    def part(self, i: int) -> str:
        """The provider text of message *i* (cached)."""
        p = self._parts[i]
        if p is None:
            p = self._parts[i] = provider_text(self.sent[i])
        return p

    def exact(self, i: int) -> int:
        """The cl100k count of message *i*'s provider text (cached)."""
        e = self._exact[i]
        if e is None:
            e = self._exact[i] = count_tokens(self.part(i))
        return e

    def set_content(self, i: int, content: str) -> None:
        """Overwrite message *i*'s content in place (the dict object is mutated, as upstream)."""
        self.msgs[i]["content"] = content
        self.total -= self.costs[i]
        self.costs[i] = message_token_estimate(self.msgs[i])
        self.total += self.costs[i]
        self.sent[i] = sanitize_message_for_llm(self.msgs[i])
        self._parts[i] = None
        self._exact[i] = None

    def truncate(self, n: int) -> None:
        """``history = history[:n]``."""
        for lst in (self.msgs, self.sent, self.costs, self._parts, self._exact):
            del lst[n:]
        self.total = sum(self.costs)

    def keep_from(self, start: int) -> None:
        """``history = history[start:]``."""
        self.total -= sum(self.costs[:start])
        for lst in (self.msgs, self.sent, self.costs, self._parts, self._exact):
            del lst[:start]

    def reset(self, messages: Iterable[dict[str, Any]]) -> None:
        """Replace the whole history."""
        self.truncate(0)
        for m in messages:
            self.append(m)

    def trim_start(self, budget: int) -> tuple[int, int]:
        """Where upstream's trim at *budget* starts, and the kept total, walking back over cached costs."""
        n = len(self.msgs)
        if budget <= 0:
            return n, 0
        start, total = suffix_start(self.costs.__getitem__, n, budget)
        while start < n and self.msgs[start].get("role") == "tool":
            total -= self.costs[start]
            start += 1
        return start, total

    def trim(self, budget: int) -> list[dict[str, Any]]:
        """``_trim_messages_to_token_budget(history, budget)`` over the cached costs."""
        return self.msgs[self.trim_start(budget)[0] :]


TRUNCATED = "…[truncated]"
"""Appended to a tool result that the group trim cut to fit."""


def last_observation(messages: list[dict[str, Any]]) -> int | None:
    """The index of the newest user message that is not a reminder or notice (the step's observation)."""
    for k in range(len(messages) - 1, -1, -1):
        m = messages[k]
        if m.get("role") == "user" and not is_maintenance(m):
            return k
    return None


def group_trim(
    history: History,
    budget: int,
    *,
    cost: Callable[[int], int] | None = None,
    measure: Callable[[dict[str, Any]], int] = message_token_estimate,
) -> list[tuple[int, dict[str, Any]]]:
    """Fixed variant ``group-trim``: the latest observation and the user messages after it (reminders) are
    always kept; then whole groups (a message and the tool results after it), newest first, while they fit
    in the budget left; the newest group is kept even when it does not fit, its tool results cut to fit
    (each ending in :data:`TRUNCATED`), unless even its non-tool part does not fit. Tool results never lead.
    *cost* prices history message *i* (default: the estimate); *measure* prices a truncated copy.
    Returns (index, message or truncated copy) pairs in history order."""
    msgs = history.msgs
    price = cost or history.costs.__getitem__
    obs = last_observation(msgs)
    pinned = {k for k in range(obs, len(msgs)) if msgs[k].get("role") == "user"} if obs is not None else set()
    kept = {k: msgs[k] for k in pinned}
    room = budget - sum(price(k) for k in pinned)
    total, i, first = 0, len(msgs) - 1, True
    while i >= 0 and total < room:
        if i in pinned:
            i -= 1
            continue
        j = i
        while j >= 0 and j not in pinned and msgs[j].get("role") == "tool":
            j -= 1
        if j < 0 or j in pinned:  # results whose call is gone: never sent
            i = j
            continue
        g = sum(price(k) for k in range(j, i + 1))
        if total + g <= room:
            kept.update((k, msgs[k]) for k in range(j, i + 1))
            total += g
        elif first:
            cut = _truncate_group([(k, msgs[k]) for k in range(j, i + 1)], room - total, measure)
            if cut is not None:
                kept.update(cut)
            break
        else:
            break
        first = False
        i = j - 1
    return sorted(kept.items())


def _truncate_group(
    group: list[tuple[int, dict[str, Any]]], room: int, measure: Callable[[dict[str, Any]], int]
) -> list[tuple[int, dict[str, Any]]] | None:
    fixed = sum(measure(m) for _, m in group if m.get("role") != "tool")
    tools = [k for k, m in group if m.get("role") == "tool"]
    if not tools or fixed > room:
        return None
    per = (room - fixed) // len(tools)
    out = []
    for k, m in group:
        if m.get("role") == "tool" and measure(m) > per:
            m = _shrink(m, per, measure)
        out.append((k, m))
    return out


def _shrink(message: dict[str, Any], room: int, measure: Callable[[dict[str, Any]], int]) -> dict[str, Any]:
    """The message with its content cut to the longest prefix (plus the marker) that *measure* fits in
    *room* (the marker alone when nothing fits)."""
    content = str(message.get("content") or "")
    lo, hi = 0, len(content)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if measure({**message, "content": content[:mid] + TRUNCATED}) <= room:
            lo = mid
        else:
            hi = mid - 1
    return {**message, "content": content[:lo] + TRUNCATED}
