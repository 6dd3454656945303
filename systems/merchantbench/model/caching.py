"""Where the ReAct baseline puts Claude cache breakpoints, and how it reads cached tokens back from a
provider's usage (RT-CMP-openai-model, MEM-CLM-telemetry-limits).

Upstream: ``agent/baselines/react_160k_compact_30k.py`` @ 47eafeae (``_add_cache_breakpoints`` 191-227,
``_extract_cached_tokens`` 254-264, the request in ``_drive_step`` 589-602, ``token_usage`` 616-628);
its tests ``tests/test_react_160k_compact_30k.py``: ``extracts_provider_specific_cached_tokens``,
``claude_cache_breakpoints_skip_empty_text_blocks``, ``claude_omits_empty_cached_system_prompt`` (memsim's
counterparts: ``tests/test_cache_merchantbench.py``).

For a Claude model upstream marks, with ``cache_control: {"type": "ephemeral"}`` (the 5-minute TTL):

* the system prompt, sent as one text block in ``extra_body.extendParams.system``, only when it is
  non-empty (an empty prompt sends no ``extra_body`` at all);
* the last message, the one before it, and the last assistant message (a set: at most three);
  a message whose content is an empty string gets no mark (an assistant turn that only calls tools), and
  in a list content the last block with non-empty text gets it;
* the tool schemas get none.

With the system mark that is at most four, the API's limit. The one-shot Forbidden retry
(``_chat_completion_with_retries``, react 451-459) rebuilds ``messages`` with ``_build_llm_messages``
alone, without ``_add_cache_breakpoints``, and keeps the rest of the request (``{**request, ...}``): the
resent request marks only the system block (``extra_body``), no message.

In memsim's parts the head is the system prompt then the tool schemas (the API renders tools, then
system); both come before every message, so the system mark is placed on the head's last part and covers
both, as the API's system breakpoint covers tools and system. Not modeled: the 1-hour TTL (upstream
never asks for it).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def _marks(message: Mapping[str, Any]) -> bool:
    """Whether upstream's ``_add_cache_breakpoints`` puts ``cache_control`` on *message*: a non-empty
    string content, or a list content with a block of non-empty text."""
    content = message.get("content", "")
    if isinstance(content, str):
        return bool(content)
    if isinstance(content, list):
        return any(isinstance(b, dict) and b.get("text") for b in content)
    return False


def message_breakpoints(messages: Sequence[Mapping[str, Any]]) -> tuple[int, ...]:
    """The indices of *messages* upstream marks: the last, the one before it and the last assistant
    message, each skipped when it has no text to carry the mark."""
    if not messages:
        return ()
    n = len(messages)
    idx = {n - 1}
    if n >= 2:
        idx.add(n - 2)
    for i in range(n - 1, -1, -1):
        if messages[i].get("role") == "assistant":
            idx.add(i)
            break
    return tuple(sorted(i for i in idx if _marks(messages[i])))


def request_breakpoints(
    system_prompt: str | None,
    head: int,
    messages: Sequence[Mapping[str, Any]],
    *,
    policy_retry: bool = False,
) -> tuple[int, ...]:
    """The part indices of a request whose parts are *head* parts (system prompt if any, tool schemas)
    then one per message of *messages*: the system mark on the head's last part (only with a non-empty
    *system_prompt*) and the message marks, none on the Forbidden retry (*policy_retry*)."""
    sys_mark = (head - 1,) if system_prompt and head > 0 else ()
    if policy_retry:
        return sys_mark
    return sys_mark + tuple(head + i for i in message_breakpoints(messages))


def system_blocks(system_prompt: str | None) -> list[dict[str, Any]] | None:
    """The ``extendParams.system`` blocks of a Claude request, or None when upstream sends no
    ``extra_body`` (an empty or missing system prompt)."""
    if not system_prompt:
        return None
    return [{"type": "text", "text": system_prompt, "cache_control": {"type": "ephemeral"}}]


def cached_tokens(usage: Mapping[str, Any] | None) -> int:
    """Upstream's ``_extract_cached_tokens``: ``prompt_tokens_details.cached_tokens`` when truthy, else
    ``cacheReadInputTokensCompatible``, else ``cache_read_input_tokens`` (the first truthy one), else 0."""
    if not usage:
        return 0
    details = usage.get("prompt_tokens_details")
    if isinstance(details, Mapping) and details.get("cached_tokens"):
        return int(details["cached_tokens"])
    for key in ("cacheReadInputTokensCompatible", "cache_read_input_tokens"):
        if usage.get(key):
            return int(usage[key])
    return 0


def token_usage(prompt_tokens: int, output_tokens: int, usage: Mapping[str, Any] | None) -> dict[str, int]:
    """The ``token_usage`` of an act: ``{input: prompt - cached (at least 0), output, cache_read, total:
    prompt + output}``."""
    cached = cached_tokens(usage)
    return {
        "input": max(0, prompt_tokens - cached),
        "output": output_tokens,
        "cache_read": cached,
        "total": prompt_tokens + output_tokens,
    }
