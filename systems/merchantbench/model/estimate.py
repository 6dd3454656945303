"""Upstream's token estimator, trim and request sanitizing (RT-RTE-context-trim, RT-RTE-react-loop).

Upstream: ``agent/baselines/react_160k_compact_30k.py`` (``_est_tokens``, ``_message_token_estimate``,
``_trim_messages_to_token_budget``, ``_sanitize_message_for_llm``); pure functions, same results.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from sim.tokens import register_estimator


def estimate_tokens(value: Any) -> int:
    """Upstream's estimator (RT-RTE-context-trim): 0 for None; non-strings as sorted ``json.dumps``
    (``ensure_ascii=False``); then ``max(1, (n_ascii + 2*n_non_ascii) // 4)``."""
    if value is None:
        return 0
    s = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)
    n = len(s)
    non_ascii = 0 if s.isascii() else n - len(s.encode("ascii", "ignore"))
    return max(1, (n + non_ascii) // 4)


def message_token_estimate(message: dict[str, Any]) -> int:
    """The cost of one message: the estimate of the whole message dict plus 4."""
    return estimate_tokens(message) + 4


def history_token_estimate(messages: Iterable[dict[str, Any]]) -> int:
    """The cost of a history: the sum of its messages' costs."""
    return sum(message_token_estimate(m) for m in messages)


def suffix_start(costs: Callable[[int], int], n: int, budget: int) -> tuple[int, int]:
    """Upstream's backward walk: (start index of the kept suffix, its total). Newest always kept."""
    start, total = n, 0
    for i in range(n - 1, -1, -1):
        c = costs(i)
        if start < n and total + c > budget:
            break
        start, total = i, total + c
        if total >= budget:
            break
    return start, total


def trim_messages_to_token_budget(messages: Sequence[dict[str, Any]], budget: int) -> list[dict[str, Any]]:
    """Upstream's ``_trim_messages_to_token_budget`` (RT-RTE-context-trim): ``[]`` if ``budget <= 0``; the
    newest message always, then older ones while they fit (contiguous suffix, stop once ``total >=
    budget``); leading ``tool`` messages dropped. The same dict objects, not copies; may be ``[]``."""
    if budget <= 0:
        return []
    start, _ = suffix_start(lambda i: message_token_estimate(messages[i]), len(messages), budget)
    while start < len(messages) and messages[start].get("role") == "tool":
        start += 1
    return list(messages[start:])


def _sanitize_arguments(raw: Any) -> str:
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return "{}"
    text = raw if isinstance(raw, str) else json.dumps(raw, sort_keys=True)
    try:
        parsed = json.loads(text)
    except ValueError:
        parsed = None
    if not isinstance(parsed, dict):
        return json.dumps({"_invalid_json_arguments": raw})
    return text


def sanitize_message_for_llm(message: dict[str, Any]) -> dict[str, Any]:
    """Upstream's ``_sanitize_message_for_llm``: messages whose ``tool_calls`` is a list are shallow-copied
    with each call's arguments fixed (None/blank → ``"{}"``, non-string → sorted ``json.dumps``, unparsable
    or non-object → ``{"_invalid_json_arguments": raw}``); every other message is returned as is."""
    calls = message.get("tool_calls")
    if not isinstance(calls, list):
        return message
    out = dict(message)
    fixed = []
    for c in calls:
        if isinstance(c, dict) and isinstance(c.get("function"), dict):
            fn = dict(c["function"])
            fn["arguments"] = _sanitize_arguments(fn.get("arguments"))
            c = {**c, "function": fn}
        fixed.append(c)
    out["tool_calls"] = fixed
    return out


def provider_text(message: dict[str, Any]) -> str:
    """The text a provider tokenizes for one message: role, content and each tool call's name and
    arguments (Not modeled: chat-template tokens)."""
    content = message.get("content")
    parts = [
        str(message.get("role", "")),
        content
        if isinstance(content, str)
        else ("" if content is None else json.dumps(content, ensure_ascii=False)),
    ]
    for c in message.get("tool_calls") or ():
        fn = c.get("function", {}) if isinstance(c, dict) else {}
        parts.append(f"{fn.get('name', '')} {fn.get('arguments', '')}")
    return "\n".join(parts)


register_estimator("merchantbench", estimate_tokens)
