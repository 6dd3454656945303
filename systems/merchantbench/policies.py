"""Seeded model stand-ins for the ReAct baseline (no LLM): save policies, read-on-probe, scripted replies.

A stand-in sees exactly the request the design assembled (system message plus the trimmed history) and
decides from it, so what clipping and eviction removed is invisible to it. It copies the fact tokens it
can see (``FACT-0017=amber``); *lossiness* drops that fraction of them with the seeded stream
``merchantbench.policy``. The provider fault schedule (425, Forbidden, HTTP errors, missing usage) is a
:class:`~systems.merchantbench.state.FaultSchedule`, drawn by the strategies in
``tests/strategies_merchantbench.py``.

Save policies:

``never``
    never calls ``write_memory_doc``.
``reminder``
    on a visible compaction reminder, reads the document, then writes every fact token it can see (the
    read result included).
``direct``
    on a visible reminder, writes the visible fact tokens at once (no read first).
``every_k``
    like ``reminder``, but at every step ``t`` with ``t % k == 0`` (``t > 0``).
``oversize``
    on a visible reminder, writes a body of ``oversize_chars`` characters plus the visible facts.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass, field
from typing import Any

from sim.text import FACT_RE
from systems.merchantbench.model import is_maintenance, provider_text
from systems.merchantbench.state import Reply, ToolCall

SAVE_POLICIES = ("never", "reminder", "direct", "every_k", "oversize")
_QUESTION = re.compile(r"Question: what is the value of (FACT-\d{4,})\?")


def visible_fact_tokens(messages: list[dict[str, Any]]) -> list[str]:
    """Every distinct fact token in *messages* (content, tool arguments, tool results), first seen first."""
    seen: dict[str, str] = {}
    for m in messages:
        for num, value in FACT_RE.findall(provider_text(m)):
            seen[f"FACT-{num}"] = f"FACT-{num}={value}"
    return list(seen.values())


#: The separator between the blocks (conversation messages) of a verbatim notes document.
NOTE_SEPARATOR = "\n\n"
NOTES_HEAD = "# Notes"


def verbatim_notes(messages: list[dict[str, Any]], budget: int) -> str:
    """The conversation save stand-in (``verbatim_tokens``; a real conversation has no fact tokens): the
    notes the last visible ``read_memory_doc`` result holds, then every visible conversation message (user
    observations that are not maintenance, assistant replies) not already in them, verbatim, one block
    each; the newest blocks whose cl100k counts fit *budget* are written, oldest first. It reads only the
    request it is shown (no evidence label reaches it)."""
    from sim.tokens import count_tokens

    old: list[str] = []
    fresh: list[str] = []
    for m in messages:
        role, content = m.get("role"), m.get("content")
        if role == "tool" and m.get("name") == "read_memory_doc" and isinstance(content, str):
            try:
                doc = json.loads(content).get("content", "")
            except (ValueError, AttributeError):
                doc = ""
            old = [b for b in str(doc).split(NOTE_SEPARATOR) if b and b != NOTES_HEAD]
        elif (
            isinstance(content, str)
            and content
            and not m.get("tool_calls")
            and ((role == "user" and not is_maintenance(m)) or role == "assistant")
        ):
            fresh.append(content)
    seen = set(old)
    blocks = old + [c for c in dict.fromkeys(fresh) if c not in seen]
    kept: list[str] = []
    used = 0
    for b in reversed(blocks):
        cost = count_tokens(b)
        if used + cost > budget:
            break
        kept.append(b)
        used += cost
    return NOTE_SEPARATOR.join([NOTES_HEAD, *reversed(kept)])


def _step_tail(
    messages: list[dict[str, Any]], lo: int = 0
) -> tuple[dict[str, Any] | None, dict[str, Any] | None, list[dict[str, Any]]]:
    """Over ``messages[lo:]``: (last user message, last non-maintenance user message, messages after the
    last user message)."""
    last_user = None
    last_obs = None
    idx = -1
    for i in range(len(messages) - 1, lo - 1, -1):
        m = messages[i]
        if m.get("role") == "user":
            if last_user is None:
                last_user, idx = m, i
            if not is_maintenance(m):
                last_obs = m
                break
    tail = messages[idx + 1 :] if idx >= 0 else messages[lo:]
    return last_user, last_obs, tail


def _done(tail: list[dict[str, Any]]) -> list[str]:
    return [
        c["function"]["name"] for m in tail if m.get("role") == "assistant" for c in m.get("tool_calls") or []
    ]


@dataclass
class SavePolicy:
    """A seeded stand-in model: a save policy, optional read-on-probe, optional domain calls."""

    save: str = "never"
    k: int = 0
    read_on_probe: bool = False
    lossiness: float = 0.0
    domain_calls: bool = False
    oversize_chars: int = 300_000
    eos_first: bool = False
    rng: random.Random | None = None
    verbatim_tokens: int = 0
    reply_text: str | None = None

    def __post_init__(self) -> None:
        if self.save not in SAVE_POLICIES:
            raise ValueError(f"unknown save policy {self.save!r}: expected one of {SAVE_POLICIES}")
        if self.save == "every_k" and self.k <= 0:
            raise ValueError("every_k needs k >= 1")

    def _keep(self, facts: list[str]) -> list[str]:
        if self.lossiness <= 0:
            return facts
        if self.rng is None:
            raise ValueError("a lossy policy needs rng=sim.rng('merchantbench.policy')")
        rng = self.rng
        return [f for f in facts if rng.random() >= self.lossiness]

    def _saving_now(self, last_user: dict[str, Any] | None, t: int) -> bool:
        if self.save == "never":
            return False
        if self.save == "every_k":
            return t > 0 and t % self.k == 0
        return (
            last_user is not None
            and is_maintenance(last_user)
            and "write_memory_doc" in str(last_user.get("content"))
        )

    def respond(self, agent: Any, messages: list[dict[str, Any]], t: int, hop: int) -> Reply:
        """The reply to one request: a tool call, or text with no tool calls (the loop turns it into an
        end-of-step)."""
        lo = 1 if messages and messages[0].get("role") == "system" else 0
        last_user, last_obs, tail = _step_tail(messages, lo)
        done = _done(tail)
        if "write_memory_doc" not in done and self._saving_now(last_user, t):
            if self.save in ("reminder", "every_k") and "read_memory_doc" not in done:
                return Reply(tool_calls=(ToolCall("read_memory_doc", "{}"),))
            if self.verbatim_tokens:
                content = verbatim_notes(messages[lo:], self.verbatim_tokens)
            else:
                facts = self._keep(visible_fact_tokens(messages[lo:]))
                content = "# Notes\n" + "\n".join(f"- {f}" for f in facts) + ("\n" if facts else "")
            if self.save == "oversize":
                content += "x" * self.oversize_chars
            write = ToolCall("write_memory_doc", json.dumps({"content": content}, ensure_ascii=False))
            if self.eos_first:
                return Reply(tool_calls=(ToolCall("end_of_step", "{}"), write))
            return Reply(tool_calls=(write,))
        question = _QUESTION.search(str(last_obs.get("content"))) if last_obs else None
        if question and self.read_on_probe and "read_memory_doc" not in done:
            return Reply(tool_calls=(ToolCall("read_memory_doc", "{}"),))
        if self.domain_calls and not done:
            return Reply(tool_calls=(ToolCall("query_balance", "{}"),))
        if question:
            fid = question.group(1)
            known = {f.split("=")[0]: f for f in visible_fact_tokens(messages[lo:])}
            return Reply(content=f"answer: {known.get(fid, fid + '=unknown')}")
        if self.reply_text is not None:
            return Reply(content=self.reply_text)
        return Reply(content=f"noted step {t}")


@dataclass
class ScriptedModel:
    """A stand-in that replays scripted replies by (env tick, hop); unscripted hops end the step."""

    script: dict[tuple[int, int], Reply] = field(default_factory=dict)

    def respond(self, agent: Any, messages: list[dict[str, Any]], t: int, hop: int) -> Reply:
        return self.script.get((t, hop), Reply(content=f"noted step {t}"))
