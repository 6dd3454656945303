"""Upstream's token estimator, trim and request sanitizing (RT-RTE-context-trim, RT-RTE-react-loop).

Upstream: ``agent/baselines/react_160k_compact_30k.py`` (``_est_tokens``, ``_message_token_estimate``,
``_trim_messages_to_token_budget``, ``_sanitize_message_for_llm``); pure functions, same results.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from sim.tokens import register_estimator
from systems.merchantbench.model.jsontext import sorted_json


def estimate_tokens(value: Any) -> int:
    """Upstream's estimator (RT-RTE-context-trim): 0 for None; non-strings as sorted ``json.dumps``
    (``ensure_ascii=False``); then ``max(1, (n_ascii + 2*n_non_ascii) // 4)``."""
    if value is None:
        return 0
    s = value if isinstance(value, str) else sorted_json(value)
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


def _invalid_json_arguments(value: str) -> str:
    return json.dumps({"_invalid_json_arguments": value}, ensure_ascii=False, sort_keys=True)


def coerce_arguments(value: Any) -> str:
    """Upstream's ``_coerce_json_argument_string`` (react 125-147; Corrections 3): None → ``"{}"``; a
    non-string → ``json.dumps(value, ensure_ascii=False, sort_keys=True)`` returned as is (``[]`` stays
    ``[]``; a ``TypeError`` falls back to ``str(value)`` handled as a string); a blank string → ``"{}"``;
    a string that does not parse or parses to a non-object → ``{"_invalid_json_arguments": value}``
    (non-ASCII kept literal); a valid object string is kept byte for byte."""
    if value is None:
        return "{}"
    if not isinstance(value, str):
        try:
            return json.dumps(value, ensure_ascii=False, sort_keys=True)
        except TypeError:
            value = str(value)
    if not value.strip():
        return "{}"
    try:
        parsed = json.loads(value)
    except (TypeError, ValueError):
        return _invalid_json_arguments(value)
    if not isinstance(parsed, dict):
        return _invalid_json_arguments(value)
    return value


def sanitize_message_for_llm(message: dict[str, Any]) -> dict[str, Any]:
    """Upstream's ``_sanitize_message_for_llm`` (react 150-172): a message whose ``tool_calls`` is a list is
    shallow-copied with each dict call's arguments passed through :func:`coerce_arguments`; every other
    message is returned as is (the same object)."""
    calls = message.get("tool_calls")
    if not isinstance(calls, list):
        return message
    out = dict(message)
    fixed = []
    for c in calls:
        if isinstance(c, dict) and isinstance(c.get("function"), dict):
            fn = dict(c["function"])
            fn["arguments"] = coerce_arguments(fn.get("arguments"))
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
