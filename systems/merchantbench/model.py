"""MerchantBench operations, named as upstream: the memory document tools, ``/act`` admission, step traces,
run deletion/unload, the Hermes ``state.db`` reader, and the ReAct baseline's history and trim loop.

Upstream: Artemonim/merchantbench @ 47eafeae (``env/tools/tools.py``, ``env/tools/dispatch.py``,
``env/web/routes_agent.py``, ``env/storage/agent_log.py``, ``env/web/runner.py`` and
``agent/baselines/react_160k_compact_30k.py``), read through ``../shared/fidelity/merchantbench.md``.
Every fix of a failure mode is a switch in :class:`~systems.merchantbench.state.Variant`; the default is
the faithful design. Wall times (``wall_ms`` of history entries, hook times, file mtimes) come from the
env server's modeled clock (``sim.clock("server")``: the tools run in the server process, which calls
``time.time()``); the step number is the env tick.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections import Counter
from collections.abc import Callable, Generator, Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from sim.engine import Simulation
from sim.faults import Crash, WriteFailed
from sim.files import FileTree
from sim.text import extract_facts
from sim.tokens import count_tokens, register_estimator
from systems.merchantbench import faults as fp
from systems.merchantbench.state import (
    ATOMIC_WRITE,
    COMPACT_AFTER_SAVE,
    FAITHFUL_VARIANT,
    FRAMED_VERSIONS,
    GROUP_TRIM,
    INJECTIVE_IDS,
    PIN_OBSERVATION,
    PROVIDER_BUDGET,
    RAW_NEWLINES,
    REDACT_RETRY_COPY,
    RESET_PENDING_ON_425,
    TRACE_RECALL,
    TRIGGER_UNTRIMMED,
    UNIQUE_CALL_KEYS,
    FaultSchedule,
    HttpError,
    LLMError,
    ReactConfig,
    Reply,
    StepResult,
    Variant,
)

SYSTEM = "merchantbench"

# -- constants (upstream values) -----------------------------------------------------------------------
MEMORY_DOC_MAX_BYTES = 262_144
VERSION_MARKER = "<!-- merchantbench-memory-version "
LEGACY_VERSION_MARKER = "<!-- realshop-memory-version "
CONTEXT_WINDOW = 160_000
TRIGGER_TOKENS = 160_000
KEEP_TOKENS = 30_000
MAX_HOPS = 30
MAX_STEPS = 2_200
MAX_TURNS_PER_STEP = 30
RETRY_DELAYS_S = (2, 5, 10, 20, 40, 60, 60, 60)
ALLOCATION_QUOTA_DELAYS_S = (30, 60, 120, 120, 120, 120, 120, 120)
RETRYABLE_CODES = frozenset(
    {"Throttling.BurstRate", "Throttling.RateQuota", "Throttling.AllocationQuota", "transient"}
)
MAINTENANCE_PREFIX = "[context-maintenance]"
FALLBACK_NO_TOOL_CALL = "[fallback] no tool call — release hook"
FALLBACK_HOPS_EXHAUSTED = "[fallback] hop budget exhausted — release hook"
POLICY_REDACTED_TOOL_CONTENT = json.dumps(
    {
        "hint": "continue with known numeric facts or query narrower if needed",
        "reason": "provider returned Forbidden; previous tool output was removed from the LLM prompt",
        "redacted_for_policy_retry": True,
    },
    ensure_ascii=False,
)
DEFAULT_CONFIG = ReactConfig()
STEP_INDEX_PID = 4242  # the modeled server pid in temp-file names

EOS_CALL: dict[str, Any] = {
    "id": "call_eos",
    "type": "function",
    "function": {"name": "end_of_step", "arguments": "{}"},
}

TOOL_SCHEMAS: tuple[dict[str, Any], ...] = (
    {"type": "function", "function": {
        "name": "read_memory_doc",
        "description": "Read your long-term memory document for this run. Use it to recover long-term notes, "
                       "plans, supplier/product decisions, and open follow-ups that may have fallen out of "
                       "the context window. Returns empty content if no document exists.",
        "parameters": {"type": "object", "properties": {}, "additionalProperties": False}}},
    {"type": "function", "function": {
        "name": "write_memory_doc",
        "description": "Overwrite your long-term memory document (Markdown, max 256 KiB) with concise "
                       "structured strategy, product notes, open tasks and decisions. Every version is "
                       "archived.",
        "parameters": {"type": "object", "properties": {"content": {"type": "string"}},
                       "required": ["content"], "additionalProperties": False}}},
    {"type": "function", "function": {
        "name": "query_balance", "description": "Return the current cash balance.",
        "parameters": {"type": "object", "properties": {}, "additionalProperties": False}}},
    {"type": "function", "function": {
        "name": "end_of_step", "description": "Finish your turn for this hour and release the hook.",
        "parameters": {"type": "object", "properties": {}, "additionalProperties": False}}},
)  # fmt: skip
MUTATING_TOOLS = frozenset({"write_memory_doc"})
TOOLS_JSON = json.dumps(list(TOOL_SCHEMAS), ensure_ascii=False, sort_keys=True)


# ======================================================================================================
# Pure functions (same behaviour as upstream)
# ======================================================================================================
_UNSAFE_ID = re.compile(r"[^A-Za-z0-9_.-]+")


def safe_agent_id(agent_id: Any) -> str:
    """The file-name form of *agent_id* (MEM-OBJ-memory-doc): ``"agent"`` if falsy, runs outside
    ``[A-Za-z0-9_.-]`` become one ``_``, ``._`` stripped at both ends, ``"agent"`` if empty."""
    s = _UNSAFE_ID.sub("_", str(agent_id or "agent")).strip("._")
    return s or "agent"


def injective_agent_id(agent_id: Any) -> str:
    """Fixed variant (``injective-ids``): percent-escape every character outside ``[a-z0-9_-]`` (upper-case
    letters included, as ``%XX`` of their UTF-8 bytes) behind an ``id-`` prefix; injective, and still
    injective on a case-insensitive filesystem. ``None`` is treated as ``""``."""
    text = "" if agent_id is None else str(agent_id)
    out = []
    for ch in text:
        if ch.isascii() and (ch.islower() or ch.isdigit() or ch in "_-"):
            out.append(ch)
        else:
            out.extend(f"%{b:02X}" for b in ch.encode("utf-8", "surrogatepass"))
    return "id-" + "".join(out)


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


def _suffix_start(costs: Callable[[int], int], n: int, budget: int) -> tuple[int, int]:
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
    start, _ = _suffix_start(lambda i: message_token_estimate(messages[i]), len(messages), budget)
    while start < len(messages) and messages[start].get("role") == "tool":
        start += 1
    return list(messages[start:])


def next_memory_version(history_text: str) -> int:
    """``1 +`` the substring counts of the current and the legacy version markers anywhere in the history
    file (MEM-OBJ-memory-history); earlier bodies count too."""
    return 1 + history_text.count(VERSION_MARKER) + history_text.count(LEGACY_VERSION_MARKER)


_FRAME = re.compile(
    rb"<!-- (?:merchantbench|realshop)-memory-version (\d+) -->\n## Memory version \d+\n- step: [^\n]*\n"
    rb"- wall_ms: [^\n]*\n- bytes: (\d+)\n\n"
)


def parse_history_entries(history: bytes) -> list[tuple[int, bytes]]:
    """The framed entries of a history file as (labelled version, body bytes), parsed header by header
    using each entry's ``bytes`` length to skip its body; parsing stops at the first malformed frame."""
    pos = 0
    out: list[tuple[int, bytes]] = []
    while pos < len(history):
        if out:
            if history[pos : pos + 2] != b"\n\n":
                break
            pos += 2
        m = _FRAME.match(history, pos)
        if m is None:
            break
        size = int(m[2])
        body = history[m.end() : m.end() + size]
        pos = m.end() + size + (1 if size and not body.endswith(b"\n") else 0)
        out.append((int(m[1]), body))
    return out


def framed_version_count(history: bytes) -> int:
    """Fixed variant (``framed-versions``): the number of framed entries (markers inside bodies are not
    counted)."""
    return len(parse_history_entries(history))


def history_entry(version: int, step: int, wall_ms: int, size: int, content: str, *, first: bool) -> str:
    """The text one write appends to the history file (``\\n\\n`` first unless the file is empty)."""
    text = "" if first else "\n\n"
    text += (
        f"{VERSION_MARKER}{version} -->\n## Memory version {version}\n- step: {step}\n"
        f"- wall_ms: {wall_ms}\n- bytes: {size}\n\n{content}"
    )
    if content and not content.endswith("\n"):
        text += "\n"
    return text


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


def classify_llm_error(text: str) -> str:
    """Upstream's classification of ``"{Type}: {e}"`` (first match wins)."""
    low = text.lower()
    if "invalidparameter" in low and ("function.arguments" in text or "must be in json format" in low):
        return "InvalidParameter"
    for code in ("Throttling.BurstRate", "Throttling.RateQuota", "Throttling.AllocationQuota"):
        if code in text:
            return code
    if "Forbidden" in text:
        return "Forbidden"
    markers = ("connection", "timeout", "timed out", " 500", " 502", " 503", " 504")
    if any(m in low for m in markers):
        return "transient"
    return "unknown"


LLM_ERRORS: dict[str, LLMError] = {
    "invalid": LLMError("BadRequestError", "InvalidParameter: function.arguments must be in JSON format"),
    "burst": LLMError("RateLimitError", "Throttling.BurstRate: request rate increased too quickly"),
    "rate": LLMError("RateLimitError", "Throttling.RateQuota: requests rate limit exceeded"),
    "allocation": LLMError("RateLimitError", "Throttling.AllocationQuota: free allocated quota exceeded"),
    "forbidden": LLMError("PermissionDeniedError", "Error code: 403 - Forbidden: inappropriate content"),
    "transient": LLMError("APIConnectionError", "Connection error: timed out"),
    "unknown": LLMError("APIError", "something unexpected"),
}


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


def is_maintenance(message: dict[str, Any]) -> bool:
    """Whether *message* is a compaction reminder or notice."""
    c = message.get("content")
    return message.get("role") == "user" and isinstance(c, str) and c.startswith(MAINTENANCE_PREFIX)


register_estimator("merchantbench", estimate_tokens)


# ======================================================================================================
# The process-local history with incremental accounting (MEM-OBJ-history)
# ======================================================================================================
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
        start, total = _suffix_start(self.costs.__getitem__, n, budget)
        while start < n and self.msgs[start].get("role") == "tool":
            total -= self.costs[start]
            start += 1
        return start, total

    def trim(self, budget: int) -> list[dict[str, Any]]:
        """``_trim_messages_to_token_budget(history, budget)`` over the cached costs."""
        return self.msgs[self.trim_start(budget)[0] :]


def group_trim(history: History, budget: int, *, pin_observation: bool) -> list[tuple[int, dict[str, Any]]]:
    """Fixed variant (``group-trim``, ``pin-observation``): keep whole call/result groups, newest first,
    while they fit; the newest group is always kept, its tool results truncated to fit; with
    *pin_observation* the latest observation and any reminder after it are always kept.
    Returns (index, raw message or truncated copy) pairs in order."""
    msgs, costs = history.msgs, history.costs
    kept: list[tuple[int, dict[str, Any]]] = []
    total, i, first = 0, len(msgs) - 1, True
    while i >= 0 and budget > 0:
        j = i
        while j > 0 and msgs[j].get("role") == "tool":
            j -= 1
        if msgs[j].get("role") == "tool":  # orphaned results at the very start: never sent
            break
        g = sum(costs[j : i + 1])
        group = [(k, msgs[k]) for k in range(j, i + 1)]
        if first:
            first = False
            if g > budget:
                group = _truncate_group(group, budget)
                g = sum(message_token_estimate(m) for _, m in group)
        elif total + g > budget:
            break
        kept[:0] = group
        total += g
        i = j - 1
        if total >= budget:
            break
    if pin_observation:
        start = kept[0][0] if kept else len(msgs)
        last_obs = next(
            (
                k
                for k in range(len(msgs) - 1, -1, -1)
                if msgs[k].get("role") == "user" and not is_maintenance(msgs[k])
            ),
            None,
        )
        if last_obs is not None and last_obs < start:
            pins = [(k, msgs[k]) for k in range(last_obs, start) if msgs[k].get("role") == "user"]
            kept[:0] = pins
    return kept


def _truncate_group(group: list[tuple[int, dict[str, Any]]], budget: int) -> list[tuple[int, dict[str, Any]]]:
    fixed = sum(message_token_estimate(m) for _, m in group if m.get("role") != "tool")
    tools = [k for k, m in group if m.get("role") == "tool"]
    room = max(0, budget - fixed) // max(1, len(tools))
    out = []
    for k, m in group:
        if m.get("role") == "tool" and message_token_estimate(m) > room:
            keep_chars = max(0, (room - 40) * 4)
            m = {**m, "content": str(m.get("content", ""))[:keep_chars] + "…[truncated]"}
        out.append((k, m))
    return out


_SCALAR = json.JSONEncoder(ensure_ascii=False).encode
_STR: Callable[[str], str] = json.encoder.encode_basestring  # type: ignore[attr-defined]


def indent_json(value: Any, level: int = 0) -> str:
    """``json.dumps(value, indent=2, ensure_ascii=False)`` for plain JSON values, nested at *level* (the
    standard library's indented encoder is pure Python; this one leaves scalars to the C encoder)."""
    if isinstance(value, dict):
        if not value:
            return "{}"
        pad = "\n" + "  " * (level + 1)
        items = [f"{_STR(str(k))}: {indent_json(v, level + 1)}" for k, v in value.items()]
        return "{" + pad + ("," + pad).join(items) + "\n" + "  " * level + "}"
    if isinstance(value, (list, tuple)):
        if not value:
            return "[]"
        pad = "\n" + "  " * (level + 1)
        return (
            "[" + pad + ("," + pad).join(indent_json(v, level + 1) for v in value) + "\n" + "  " * level + "]"
        )
    if isinstance(value, str):
        return _STR(value)
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if type(value) is int:
        return int.__repr__(value)
    return _SCALAR(value)


# ======================================================================================================
# The environment server: memory document tools, /act admission, step traces (env/)
# ======================================================================================================
class MerchantEnv:
    """One run's environment server (``env``): tick ``t``, the hook, the agents, the idempotency cache and
    the run directory ``<runs_root>/<run_id>/`` on a :mod:`sim.files` tree.

    *casefold_paths* models a case-insensitive filesystem (``Agent_0`` and ``agent_0`` are one file).
    Not modeled: simulator domain state (products, orders, cash), observation assembly, leases.
    """

    def __init__(
        self,
        sim: Simulation,
        tree: FileTree,
        *,
        run_id: str = "run-0001",
        runs_root: str = "runs",
        variant: Variant = FAITHFUL_VARIANT,
        agents: Iterable[str] = ("agent_0",),
        tool_denylist: Iterable[str] = ("market_brief", "hot_search_terms"),
        schedule: FaultSchedule | None = None,
        casefold_paths: bool = False,
        max_turns_per_step: int = MAX_TURNS_PER_STEP,
    ) -> None:
        self.sim = sim
        self.tree = tree
        self.run_id = run_id
        self.runs_root = runs_root
        self.variant = variant
        self.agents: list[str] = list(agents)
        self.dead: set[str] = set()
        self.tool_denylist = frozenset(tool_denylist)
        self.schedule = schedule or FaultSchedule()
        self.casefold_paths = casefold_paths
        self.max_turns_per_step = max_turns_per_step
        self.t = 0
        self.hook_open = True
        self.unloaded = False
        self.turns: Counter[str] = Counter()
        self.done: set[str] = set()
        self.idempotency: dict[str, tuple[tuple[str, str], dict[str, Any]]] = {}
        self.act_seq = 0
        self.results_log: list[tuple[int, str, str]] = []
        self._step_messages: list[dict[str, Any]] = []
        self._step_json: dict[str, list[str]] = {}
        self._step_agents: list[str | None] = []
        self._step_turns: list[dict[str, Any]] = []
        self._hook_open_wall_ms = self._server_ms()

    # -- paths ---------------------------------------------------------------------------------------
    @property
    def run_dir(self) -> str:
        return f"{self.runs_root}/{self.run_id}"

    @property
    def memory_dir(self) -> str:
        return f"{self.run_dir}/agent/memory"

    def _fs(self, path: str) -> str:
        return path.lower() if self.casefold_paths else path

    def memory_doc_path(self, agent_id: Any) -> str:
        """``<runs_root>/<run_id>/agent/memory/<safe>.md`` (fixed: the injective encoding)."""
        if self.variant.has(INJECTIVE_IDS):
            return self._fs(f"{self.memory_dir}/{injective_agent_id(agent_id)}.md")
        return self._fs(f"{self.memory_dir}/{safe_agent_id(agent_id)}.md")

    def memory_history_path(self, agent_id: Any) -> str:
        """``…/agent/memory/<safe>.history.md`` (fixed: ``…/agent/memory/history/<encoded>.md``)."""
        if self.variant.has(INJECTIVE_IDS):
            return self._fs(f"{self.memory_dir}/history/{injective_agent_id(agent_id)}.md")
        return self._fs(f"{self.memory_dir}/{safe_agent_id(agent_id)}.history.md")

    def step_index_path(self, t: int) -> str:
        return f"{self.run_dir}/agent/by_step/t_{t:05d}.json"

    def _server_ms(self) -> int:
        return self.sim.clock("server").ms()

    # -- memory document tools (env/tools/tools.py) --------------------------------------------------
    def write_memory_doc(self, agent_id: Any, content: Any) -> dict[str, Any]:
        """Overwrite the document, then append a history entry (MEM-OBJ-memory-doc, MEM-OBJ-memory-history,
        MEM-RTE-document-write). Non-strings are ``str()``-coerced; over 262,144 UTF-8 bytes returns
        ``ok: False`` and touches nothing. No rollback if the append fails.

        Raises UnicodeEncodeError (lone surrogate), :class:`~sim.faults.Crash` or
        :class:`~sim.faults.WriteFailed` at the declared points (``/act`` turns these into 500).
        Not modeled: directory fsyncs; concurrent writers (calls run under ``env.lock``).
        """
        if not isinstance(content, str):
            content = str(content)
        data = content.encode("utf-8")
        size = len(data)
        if size > MEMORY_DOC_MAX_BYTES:
            result = {"ok": False, "error": f"content too large ({size} bytes, max {MEMORY_DOC_MAX_BYTES})"}
            self.sim.trace.op(SYSTEM, "write_memory_doc", agent=str(agent_id), phase="fail", bytes=size)
            return result
        doc = self.memory_doc_path(agent_id)
        clock = self.sim.clock("server").seconds  # the env server process writes the files
        faults = self.sim.faults
        if self.variant.has(ATOMIC_WRITE):
            self._append_memory_history(agent_id, content, size)
            self.tree.replace_atomic(
                doc,
                data,
                tmp_suffix=".tmp",
                clock=clock,
                between=lambda: faults.point(fp.WRITE_DOC_BEFORE_REPLACE),
            )
        else:
            try:
                faults.point(fp.WRITE_DOC_PARTIAL)
            except Crash:
                self.tree.write_text(doc, content[: len(content) // 2], clock=clock)
                raise
            self.tree.write_bytes(doc, data, clock=clock)
            faults.point(fp.WRITE_DOC_AFTER_DOCUMENT)
            faults.point(fp.WRITE_DOC_HISTORY_APPEND)
            self._append_memory_history(agent_id, content, size)
        self.sim.trace.op(SYSTEM, "write_memory_doc", agent=str(agent_id), bytes=size, path=doc, t=self.t)
        return {"ok": True, "bytes": size}

    def _append_memory_history(self, agent_id: Any, content: str, size: int) -> int:
        path = self.memory_history_path(agent_id)
        existing = self.tree.read_bytes(path) if self.tree.exists(path) else b""
        if self.variant.has(FRAMED_VERSIONS):
            version = framed_version_count(existing) + 1
        else:
            version = next_memory_version(existing.decode("utf-8", "replace"))
        wall_ms = self._server_ms()  # int(time.time()*1000) in the env server, not the agent's clock
        entry = history_entry(version, self.t, wall_ms, size, content, first=not existing)
        self.tree.append_text(path, entry, clock=self.sim.clock("server").seconds)
        return version

    def read_memory_doc(self, agent_id: Any) -> dict[str, Any]:
        """The whole latest document (MEM-RTE-document-read): universal newlines (fixed: raw), bytes of what
        was read; a missing or empty file gives ``content ""`` and ``bytes 0``. No cap, no versions."""
        path = self.memory_doc_path(agent_id)
        content = ""
        if self.tree.exists(path):
            content = self.tree.read_text(path, translate_newlines=not self.variant.has(RAW_NEWLINES))
        result = {"ok": True, "content": content, "bytes": len(content.encode("utf-8"))}
        self.sim.trace.op(SYSTEM, "read_memory_doc", agent=str(agent_id), bytes=result["bytes"], t=self.t)
        return result

    def memory_versions(self, agent_id: Any) -> list[int]:
        """The version numbers labelled in *agent_id*'s history file, in order (MEM-OBJ-memory-history; for
        checkers)."""
        path = self.memory_history_path(agent_id)
        if not self.tree.exists(path):
            return []
        text = self.tree.read_text(path, translate_newlines=False)
        return [int(v) for v in re.findall(r"^## Memory version (\d+)$", text, flags=re.M)]

    # -- observation and /act admission (routes_agent.py + tools/dispatch.py) -------------------------
    def deliver_observation(self, agent_id: str, text: str) -> None:
        """The step's observation for *agent_id*, recorded in the step trace as a user message
        (RT-RTE-react-loop, MEM-OBJ-step-traces); raises :class:`HttpError` 410 when dead or unloaded.
        Not modeled: observation assembly from simulator state (the workload supplies the text)."""
        if self.unloaded or agent_id in self.dead:
            raise HttpError(410, "agent_dead")
        self._step_messages.append({"role": "user", "content": text})
        self._step_agents.append(agent_id)

    def offered_tools(self) -> frozenset[str]:
        """The tool names offered to the agent (schemas minus the denylist) (RT-OBJ-tool-registry).
        Not modeled: the simulator's domain tools beyond ``query_balance`` (TOOL_SCHEMAS is a four-tool
        stand-in; upstream's schema texts are not in the note, so the descriptions are paraphrases)."""
        return frozenset(s["function"]["name"] for s in TOOL_SCHEMAS) - self.tool_denylist

    def act(
        self,
        agent_id: str,
        messages: list[dict[str, Any]],
        *,
        step: int,
        context: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """``POST /act`` (RT-RTE-act-gate): admission, then every tool call of the last (assistant) message
        under ``env.lock``, the step trace written live; an ``end_of_step`` closes the hook.

        Raises :class:`HttpError`: 410 dead or unloaded, 425 ``stale_step``/``hook_closed`` (pure
        end-of-step exempt from ``hook_closed``), 429 over ``max_turns_per_step``, 400
        ``end_of_step_must_be_last``, 409 idempotency key reused with another fingerprint (before any call
        runs), 500 when a tool raised. Injected statuses come from the fault schedule.
        Not modeled: the lease/lock wait (SimPy runs one process at a time); multi-agent hooks beyond
        "all agents ended".
        """
        if self.unloaded or agent_id in self.dead:
            raise HttpError(410, "agent_dead")
        assistant = messages[-1] if messages else {}
        calls = list(assistant.get("tool_calls") or [])
        names = [c.get("function", {}).get("name", "") for c in calls]
        pure_eos = names == ["end_of_step"]
        if step != self.t:
            raise HttpError(425, "stale_step")
        if not self.hook_open and not pure_eos:
            raise HttpError(425, "hook_closed")
        n = self.turns[agent_id]
        if n >= self.max_turns_per_step and not pure_eos:
            raise HttpError(429, "max_turns_per_step")
        if "end_of_step" in names and names[-1] != "end_of_step":
            raise HttpError(400, "end_of_step_must_be_last")
        injected = self.schedule.act_fault(self.t, n)
        if injected is not None:
            self.turns[agent_id] = n + 1
            if injected == 425:
                self.close_hook()
                raise HttpError(425, "hook_closed")
            raise HttpError(injected, "injected")
        self.act_seq += 1
        keys: list[str | None] = []
        for c, name in zip(calls, names):
            if name in MUTATING_TOOLS:
                mkey = f"{agent_id}:{self.t}:{c.get('id')}"
                if self.variant.has(UNIQUE_CALL_KEYS):
                    mkey = f"{agent_id}:{self.t}:{self.act_seq}:{c.get('id')}"
                cached = self.idempotency.get(mkey)
                if cached is not None and cached[0] != _fingerprint(name, c):
                    self.sim.trace.op(SYSTEM, "act", agent=agent_id, phase="fail", status=409, key=mkey)
                    raise HttpError(409, "idempotency_key_reused")
                keys.append(mkey)
            else:
                keys.append(None)
        results = []
        try:
            for c, name, key in zip(calls, names, keys):
                results.append(self._dispatch(agent_id, c, name, key))
        except (Crash, WriteFailed, UnicodeEncodeError) as exc:
            self.sim.trace.op(
                SYSTEM,
                "act",
                agent=agent_id,
                phase="crash" if isinstance(exc, Crash) else "fail",
                status=500,
                error=str(exc),
            )
            raise HttpError(500, "internal_error") from exc
        self.turns[agent_id] = n + 1
        self._step_messages.extend(messages)
        self._step_agents.extend([agent_id] * len(messages))
        for c, name, r in zip(calls, names, results):
            text = json.dumps(r, ensure_ascii=False)
            self._step_messages.append(
                {"role": "tool", "tool_call_id": c.get("id"), "name": name, "content": text}
            )
            self._step_agents.append(agent_id)
            self.results_log.append((self.t, str(c.get("id")), text))
        self._step_turns.append(
            {"agent": agent_id, "turn": n, "tools": names, "context": _accepted_context(context)}
        )
        self.write_step_live()
        step_done = "end_of_step" in names
        self.sim.trace.op(SYSTEM, "act", agent=agent_id, t=self.t, tools=names, step_done=step_done)
        if step_done:
            self.done.add(agent_id)
            if all(a in self.done or a in self.dead for a in self.agents):
                self.close_hook()
        return {"results": results, "step_done": step_done}

    def _dispatch(self, agent_id: str, call: dict[str, Any], name: str, key: str | None) -> dict[str, Any]:
        raw = call.get("function", {}).get("arguments")
        try:
            args = json.loads(raw) if isinstance(raw, str) and raw.strip() else (raw or {})
        except ValueError:
            return {"ok": False, "error": "invalid_arguments", "detail": "arguments are not valid JSON"}
        if not isinstance(args, dict):
            return {"ok": False, "error": "invalid_arguments", "detail": "arguments must be an object"}
        if name in self.tool_denylist:
            return {"ok": False, "error": "tool_denied", "tool": name}
        if key is not None:
            cached = self.idempotency.get(key)
            if cached is not None:
                return {**cached[1], "_idempotent_replay": True}
        if name == "read_memory_doc":
            return self.read_memory_doc(agent_id)
        if name == "write_memory_doc":
            content = args.get("content")
            if not isinstance(content, str) or set(args) - {"content"}:
                return {"ok": False, "error": "invalid_arguments", "detail": "content (string) is required"}
            result = self.write_memory_doc(agent_id, content)
            if result.get("ok") and key is not None:
                self.idempotency[key] = (_fingerprint(name, call), result)
            return result
        if name == "end_of_step":
            return {"ok": True, "step_done": True}
        if name == "query_balance":
            return {"ok": True, "cash": 1000 + self.t}
        return {"ok": False, "error": "unknown_tool", "tool": name}

    # -- hook and step traces (env/storage/agent_log.py) ---------------------------------------------
    def close_hook(self) -> None:
        """Close the step's hook: write the final step index, advance ``t``, open the next hook
        (RT-RTE-act-gate, MEM-OBJ-step-traces)."""
        self.write_step_index()
        self.t += 1
        self.hook_open = True
        self.turns.clear()
        self.done.clear()
        self._step_messages, self._step_agents, self._step_turns = [], [], []
        self._step_json = {}
        self._hook_open_wall_ms = self._server_ms()

    def _step_payload(self, close_ms: int) -> dict[str, Any]:
        return {
            "t": self.t,
            "n_turns": len(self._step_turns),
            "hook_open_wall_ms": self._hook_open_wall_ms,
            "hook_close_wall_ms": close_ms,
            "messages": list(self._step_messages),
            "message_agents": list(self._step_agents),
            "turns": list(self._step_turns),
        }

    def write_step_live(self) -> None:
        """Atomic write of the in-progress step (after each ``/act``), ``hook_close_wall_ms`` 0
        (MEM-OBJ-step-traces)."""
        self._write_step(self._step_payload(0), "write_step_live")

    def write_step_index(self) -> None:
        """Atomic write of the final step index at hook close (MEM-OBJ-step-traces)."""
        self._write_step(self._step_payload(self._server_ms()), "write_step_index")

    def _dump_step(self, payload: dict[str, Any]) -> str:
        """``json.dumps(payload, indent=2, ensure_ascii=False)``, with each list item (message, agent,
        turn) encoded once per step, so writing the step after every act does not re-encode it."""
        fields = []
        for k, v in payload.items():
            if isinstance(v, list) and v:
                cache = self._step_json.setdefault(k, [])
                while len(cache) < len(v):
                    cache.append("    " + indent_json(v[len(cache)], 2))
                body = "[\n" + ",\n".join(cache[: len(v)]) + "\n  ]"
            else:
                body = indent_json(v, 1)
            fields.append(f'  "{k}": {body}')
        return "{\n" + ",\n".join(fields) + "\n}"

    def _write_step(self, payload: dict[str, Any], op: str) -> None:
        path = self.step_index_path(self.t)
        suffix = f".tmp.{STEP_INDEX_PID}.{self.sim.streams.hex('merchantbench.step_tmp', 6)}"
        data = self._dump_step(payload).encode("utf-8")
        faults = self.sim.faults
        self.tree.replace_atomic(
            path,
            data,
            tmp_suffix=suffix,
            clock=self.sim.clock("server").seconds,
            between=lambda: faults.point(fp.STEP_TRACE_BEFORE_REPLACE),
        )
        self.sim.trace.op(SYSTEM, op, agent="server", t=self.t, bytes=len(data))

    def read_step_index(self, t: int) -> dict[str, Any] | None:
        """``read_step_index``: the step's JSON; None if missing or corrupt (MEM-RTE-trace-inspection)."""
        path = self.step_index_path(t)
        if not self.tree.exists(path):
            return None
        try:
            data = json.loads(self.tree.read_bytes(path).decode("utf-8"))
        except (ValueError, UnicodeDecodeError):
            return None
        return data if isinstance(data, dict) else None

    def trace_index(self) -> dict[str, int]:
        """The trace index summary (MEM-CLM-telemetry-limits, MEM-RTE-trace-inspection): ``{tokens: max
        reported, compactions: turns with compacted True}``."""
        tokens, compactions = 0, 0
        t = 0
        while (step := self.read_step_index(t)) is not None or t < self.t:
            for turn in (step or {}).get("turns", []):
                ctx = turn.get("context") or {}
                tokens = max(tokens, int(ctx.get("tokens", 0) or 0))
                compactions += 1 if ctx.get("compacted") is True else 0
            t += 1
        return {"tokens": tokens, "compactions": compactions}


def _fingerprint(name: str, call: dict[str, Any]) -> tuple[str, str]:
    raw = call.get("function", {}).get("arguments")
    try:
        canon = json.dumps(
            json.loads(raw) if isinstance(raw, str) else raw,
            sort_keys=True,
            separators=(",", ":"),
            ensure_ascii=False,
        )
    except ValueError:
        canon = str(raw)
    return name, canon


def _accepted_context(context: dict[str, Any] | None) -> dict[str, Any]:
    ctx = dict(context or {})
    if "compacted" in ctx and not isinstance(ctx["compacted"], bool):
        del ctx["compacted"]
    return ctx


def write_memory_doc(env: MerchantEnv, agent_id: Any, content: Any) -> dict[str, Any]:
    """Upstream's ``write_memory_doc(env, aid, content)`` (see :meth:`MerchantEnv.write_memory_doc`)."""
    return env.write_memory_doc(agent_id, content)


def read_memory_doc(env: MerchantEnv, agent_id: Any) -> dict[str, Any]:
    """Upstream's ``read_memory_doc(env, aid)`` (see :meth:`MerchantEnv.read_memory_doc`)."""
    return env.read_memory_doc(agent_id)


# ======================================================================================================
# Run deletion and unload (env/web/runner.py, MEM-RTE-run-withdrawal)
# ======================================================================================================
class RunRegistry:
    """The runner's registry of runs: in-memory runtimes (``env`` per run) over one run tree.

    Not modeled: worker threads and the bootstrap process (a run is either stopping cleanly or
    ``stuck``), database leases and ``PRAGMA wal_checkpoint``.
    """

    def __init__(self, sim: Simulation, tree: FileTree, runs_root: str = "runs") -> None:
        self.sim = sim
        self.tree = tree
        self.runs_root = runs_root
        self.envs: dict[str, MerchantEnv] = {}
        self.status: dict[str, str] = {}
        self.stuck: set[str] = set()
        self._deleting: set[str] = set()

    def create_run(self, run_id: str, **kw: Any) -> MerchantEnv:
        """Start a run: its env and its ``state.db`` marker under ``<runs_root>/<run_id>/``."""
        env = MerchantEnv(self.sim, self.tree, run_id=run_id, runs_root=self.runs_root, **kw)
        self.tree.write_bytes(f"{self.runs_root}/{run_id}/state.db", b"SQLite format 3\x00")
        self.envs[run_id] = env
        self.status[run_id] = "running"
        return env

    def add_agent(self, run_id: str, agent_id: str) -> None:
        """``RunRegistry.add_agent``: any id is accepted."""
        self.env(run_id).agents.append(agent_id)

    def finish(self, run_id: str) -> None:
        """Mark the run finished (terminal)."""
        self.status[run_id] = "finished"

    def env(self, run_id: str) -> MerchantEnv:
        """The loaded runtime; raises :class:`HttpError` 410 when unloaded or deleted (no rehydrate)."""
        env = self.envs.get(run_id)
        if env is None:
            raise HttpError(410, "run_not_loaded")
        return env

    def _run_dir(self, run_id: str) -> str:
        if not run_id or "/" in run_id or "\\" in run_id or run_id in (".", ".."):
            raise ValueError(f"run path escapes runs_root: {run_id!r}")
        return f"{self.runs_root}/{run_id}"

    def delete_run(self, run_id: str) -> dict[str, Any]:
        """``delete_run`` (MEM-RTE-run-withdrawal): stop the worker, drop in-memory state, remove the whole
        run directory (documents, histories, traces, ``hermes_home`` together; 12 attempts). Raises
        ValueError when the path escapes."""
        d = self._run_dir(run_id)
        if not (self.tree.exists(f"{d}/state.db") or self.tree.is_dir(f"{d}/agent")):
            return {"deleted": False, "reason": "not found"}
        if run_id in self._deleting:
            return {"deleted": False, "reason": "already deleting"}
        self._deleting.add(run_id)
        try:
            if run_id in self.stuck:
                self.sim.trace.op(SYSTEM, "delete_run", phase="fail", run_id=run_id, reason="busy")
                return {"deleted": False, "reason": "worker is still stopping", "status": "busy"}
            env = self.envs.pop(run_id, None)
            if env is not None:
                env.unloaded = True
            self.status[run_id] = "stopped"
            last = ""
            for _attempt in range(12):
                try:
                    self.sim.faults.point(fp.DELETE_RUN_RMTREE)
                    self.tree.rmtree(d)
                    break
                except WriteFailed as exc:
                    last = str(exc)
            else:
                self.sim.trace.op(SYSTEM, "delete_run", phase="fail", run_id=run_id, reason=last)
                return {
                    "deleted": False,
                    "reason": f"failed to remove run directory: {last}",
                    "status": "error",
                }
            self.sim.trace.op(SYSTEM, "delete_run", run_id=run_id)
            return {"deleted": True, "run_id": run_id}
        finally:
            self._deleting.discard(run_id)

    def release_terminal_runtime(self, run_id: str) -> bool:
        """Unload (MEM-RTE-run-withdrawal): drop only the in-memory runtime of a finished or stopped run;
        files remain, and observation and ``/act`` return 410 afterwards."""
        if self.status.get(run_id) not in ("finished", "stopped"):
            return False
        env = self.envs.pop(run_id, None)
        if env is None:
            return False
        env.unloaded = True
        self.sim.trace.op(SYSTEM, "release_terminal_runtime", run_id=run_id)
        return True


# ======================================================================================================
# Hermes state.db reader (routes_agent, MEM-RTE-trace-inspection)
# ======================================================================================================
_STEP_RE = re.compile(r"^Day\s+(\d+),\s*Hour\s+(\d+)\b")


def _truthy(value: Any) -> bool:
    return str(value).strip().lower() in ("1", "true", "yes", "on")


def read_hermes_trace(db_path: str | Path, run_id: str, include_compacted: Any = None) -> dict[str, Any]:
    """Read a Hermes ``state.db`` read-only (MEM-RTE-trace-inspection) (``?mode=ro``): the session lineage
    from ``merchantbench-{rid}`` (else ``realshop-{rid}``, else every merchantbench/realshop session by
    ``started_at``), messages with ``active = 1`` unless *include_compacted* is truthy, grouped by the
    ``Day D, Hour H`` user message into steps ``(D-1)*24+H``; the first system prompt is prepended to the
    lowest step. Any ``sqlite3.Error`` gives an empty result."""
    empty: dict[str, Any] = {"steps": {}, "stats": {"total_raw": 0, "total_active": 0, "total_compacted": 0}}
    try:
        conn = sqlite3.connect(f"file:{Path(db_path).as_posix()}?mode=ro", uri=True)
    except sqlite3.Error:
        return empty
    try:
        sessions: list[str] = []
        for root in (f"merchantbench-{run_id}", f"realshop-{run_id}"):
            rows = conn.execute(
                "WITH RECURSIVE lineage(id) AS (SELECT id FROM sessions WHERE id = ? UNION "
                "SELECT s.id FROM sessions s JOIN lineage l ON s.parent_session_id = l.id) "
                "SELECT s.id FROM sessions s JOIN lineage l ON s.id = l.id ORDER BY s.started_at, s.id",
                (root,),
            ).fetchall()
            if rows:
                sessions = [r[0] for r in rows]
                break
        if not sessions:
            sessions = [
                r[0]
                for r in conn.execute(
                    "SELECT id FROM sessions WHERE source IN ('merchantbench','realshop') ORDER BY started_at"
                )
            ]
        if not sessions:
            return empty
        marks = ",".join("?" * len(sessions))
        stats_row = conn.execute(
            f"SELECT COUNT(*), COALESCE(SUM(active = 1), 0), COALESCE(SUM(active != 1), 0) FROM messages "
            f"WHERE session_id IN ({marks})",
            sessions,
        ).fetchone()
        active = "" if _truthy(include_compacted) else " AND active = 1"
        rows = conn.execute(
            f"SELECT role, content FROM messages WHERE session_id IN ({marks}){active} "
            "ORDER BY timestamp, id",
            sessions,
        ).fetchall()
        prompt = next(
            (
                p
                for (p,) in conn.execute(
                    f"SELECT system_prompt FROM sessions WHERE id IN ({marks}) ORDER BY started_at, id",
                    sessions,
                )
                if p
            ),
            None,
        )
    except sqlite3.Error:
        return empty
    finally:
        conn.close()
    steps: dict[int, list[dict[str, Any]]] = {}
    current: int | None = None
    for role, content in rows:
        text = content or ""
        m = _STEP_RE.match(text.lstrip()) if role == "user" else None
        if m:
            current = (int(m[1]) - 1) * 24 + int(m[2])
            steps.setdefault(current, [])
        if current is None:
            continue
        steps[current].append({"role": role, "content": text})
    if prompt and steps:
        lowest = min(steps)
        steps[lowest].insert(0, {"role": "system", "content": prompt})
    return {
        "steps": steps,
        "stats": {"total_raw": stats_row[0], "total_active": stats_row[1], "total_compacted": stats_row[2]},
    }


# ======================================================================================================
# The ReAct baseline (agent/baselines/react_160k_compact_30k.py, RT-RTE-react-loop)
# ======================================================================================================
class _LLMFailure(Exception):
    def __init__(self, error: LLMError, code: str, retries: int) -> None:
        super().__init__(str(error))
        self.error, self.code, self.retries = error, code, retries


class ReactAgent:
    """The ReAct 160k/compact-30k baseline for one agent: process-local ``history`` (system prompt kept
    outside it), the per-hop trigger, request assembly at window B, the act loop and compaction.

    *model* is a stand-in with ``respond(agent, messages, t, hop) -> Reply`` (see ``policies.py``).
    *provider_tokenizer* is what the provider's ``usage.prompt_tokens`` counts: ``"cl100k"`` (the exact
    count of the whole request: system prompt, tool schemas, messages) or ``"estimate"`` (the design's
    own estimate plus the tool schemas' estimate; the fast path); a stand-in may report its own
    ``prompt_tokens`` instead. *record_every* records every n-th hop
    with ``sim.request`` (0: none). Not modeled: Claude cache breakpoints (the system prompt is counted
    but sent via ``extra_body``), streaming, ``max_steps`` and CLI overrides.
    """

    def __init__(
        self,
        sim: Simulation,
        env: MerchantEnv,
        agent_id: str,
        model: Any,
        *,
        config: ReactConfig = DEFAULT_CONFIG,
        variant: Variant = FAITHFUL_VARIANT,
        schedule: FaultSchedule | None = None,
        provider_tokenizer: str = "cl100k",
        record_every: int = 1,
        route: str = "react.hop",
    ) -> None:
        if provider_tokenizer not in ("cl100k", "estimate"):
            raise ValueError(f"provider_tokenizer must be cl100k or estimate, not {provider_tokenizer!r}")
        self.sim, self.env, self.agent_id, self.model = sim, env, agent_id, model
        self.config, self.variant = config, variant
        self.schedule = schedule or env.schedule
        self.provider_tokenizer, self.record_every, self.route = provider_tokenizer, record_every, route
        self.history = History()
        self.system_prompt = ""
        self.last_prompt_tokens = 0
        self.compaction_pending = False
        self.pre_assistant: list[dict[str, Any]] = []
        self.health: Counter[str] = Counter()
        self.compactions = 0
        self.hops = 0
        self.last_request: list[dict[str, Any]] = []
        self.last_parts: list[str] = []
        self.last_request_estimate = 0
        self.last_request_had_reminder = False
        self.last_provider_tokens = 0
        self._saved_in_cycle = False
        self._write_failed_in_cycle = False
        self._redact_copy: set[int] = set()
        self._calls_this_step = 0
        self._needed: frozenset[str] = frozenset()
        self._observation: dict[str, Any] | None = None
        self._t = 0  # the env tick of the step being driven (env.t moves on when the hook closes)
        self._tools_est = estimate_tokens(TOOLS_JSON)
        self._tools_exact: int | None = None
        self.dropped = 0
        self.keep_log = False
        self.request_log: list[tuple[int, list[dict[str, Any]], int, bool]] = []
        self.act_log: list[tuple[int, int, list[dict[str, Any]], str, list[dict[str, Any]]]] = []

    # -- brief -----------------------------------------------------------------------------------------
    def brief(self, text: str) -> None:
        """Take the system prompt from the first brief only (RT-OBJ-system-brief, RT-BAP-brief-guidance);
        it is kept outside ``history``."""
        if not self.system_prompt:
            self.system_prompt = text

    @property
    def tool_names(self) -> frozenset[str]:
        return self.env.offered_tools()

    # -- trigger and compaction ----------------------------------------------------------------------
    def maybe_add_compaction_reminder(self) -> None:
        """``_maybe_add_compaction_reminder`` (RT-RTE-context-trim): unless pending or ``T <= 0``, fire when
        the reported prompt tokens (else the untrimmed history estimate) reach T: immediate path (trim to
        K, notice) without ``write_memory_doc``, else the pending path (reminder)."""
        c = self.config
        if self.compaction_pending or c.trigger <= 0:
            return
        trig = self.last_prompt_tokens if self.last_prompt_tokens > 0 else self.history.total
        if self.variant.has(TRIGGER_UNTRIMMED):
            trig = max(self.last_prompt_tokens, self.history.total)
        if trig < c.trigger:
            return
        if "write_memory_doc" not in self.tool_names:
            self._apply_trim(c.keep)
            msg = {"role": "user", "content": compaction_notice(c.trigger, c.keep)}
            path = "immediate"
        else:
            msg = {"role": "user", "content": compaction_reminder(c.trigger, c.keep)}
            path = "pending"
        self.history.append(msg)
        self.compaction_pending = True
        self._saved_in_cycle = False
        self._write_failed_in_cycle = False
        self.pre_assistant = [dict(msg)]
        self.sim.trace.op(
            SYSTEM,
            "compaction_trigger",
            agent=self.agent_id,
            t=self._t,
            path=path,
            trig=trig,
            history=len(self.history),
        )

    def _apply_trim(self, budget: int) -> None:
        if self.variant.has(GROUP_TRIM) or self.variant.has(PIN_OBSERVATION):
            kept = group_trim(self.history, budget, pin_observation=self.variant.has(PIN_OBSERVATION))
            self.history.reset([m for _, m in kept])
        else:
            self.history.keep_from(self.history.trim_start(budget)[0])

    def compact_history_if_pending(self) -> bool:
        """``_compact_history_if_pending`` (RT-RTE-context-trim, MEM-OBJ-history): after any successful act,
        if pending, ``history = trim(history, K)``, reset ``last_prompt_tokens``, clear pending and the
        pre-assistant list (fixed ``compact-after-save``: only once a write succeeded in this cycle)."""
        if not self.compaction_pending:
            return False
        if self.variant.has(COMPACT_AFTER_SAVE) and not self._saved_in_cycle:
            return False
        before = len(self.history)
        self._apply_trim(self.config.keep)
        self.last_prompt_tokens = 0
        self.compaction_pending = False
        self.pre_assistant = []
        self.compactions += 1
        self.sim.trace.op(
            SYSTEM,
            "compact",
            agent=self.agent_id,
            t=self._t,
            before=before,
            after=len(self.history),
            reminder_seen=self.last_request_had_reminder,
            saved=self._saved_in_cycle,
            write_failed=self._write_failed_in_cycle,
            obs_kept=any(m is self._observation for m in self.history.msgs),
        )
        return True

    # -- request assembly ----------------------------------------------------------------------------
    def _system_message(self) -> dict[str, Any] | None:
        if self.system_prompt and "claude" not in self.config.model_name.lower():
            return {"role": "system", "content": self.system_prompt}
        return None

    def build_request(self) -> tuple[list[dict[str, Any]], list[str], int]:
        """The hop's request: system message plus ``trim(history, B)``, sanitized (RT-RTE-react-loop).
        Nothing is subtracted from B for the system prompt or tool schemas. Returns the messages, the
        provider parts (system prompt, tool schemas, one text per message) and the design's estimate."""
        h, sysmsg = self.history, self._system_message()
        parts = [self.system_prompt, TOOLS_JSON] if self.system_prompt else [TOOLS_JSON]
        est = message_token_estimate(sysmsg) if sysmsg else 0
        msgs: list[dict[str, Any]] = [sysmsg] if sysmsg else []
        if self.variant.has(PROVIDER_BUDGET):
            body, body_parts = self._provider_budget_trim()
            msgs.extend(body)
            parts.extend(body_parts)
            est += history_token_estimate(body)
            self.dropped = len(h) - len(body)
        elif self.variant.has(GROUP_TRIM) or self.variant.has(PIN_OBSERVATION):
            for i, m in group_trim(
                h, self.config.context_window, pin_observation=self.variant.has(PIN_OBSERVATION)
            ):
                s = h.sent[i] if m is h.msgs[i] else sanitize_message_for_llm(m)
                msgs.append(s)
                parts.append(h.part(i) if m is h.msgs[i] else provider_text(s))
                est += message_token_estimate(m)
            self.dropped = len(h) - (len(msgs) - (1 if sysmsg else 0))
        else:
            start, kept = h.trim_start(self.config.context_window)
            est += kept
            self.dropped = start
            for i in range(start, len(h)):
                if i in self._redact_copy:
                    s = {**h.sent[i], "content": POLICY_REDACTED_TOOL_CONTENT}
                    msgs.append(s)
                    parts.append(provider_text(s))
                else:
                    msgs.append(h.sent[i])
                    parts.append(h.part(i))
        return msgs, parts, est

    def _provider_budget_trim(self) -> tuple[list[dict[str, Any]], list[str]]:
        h = self.history
        if self._tools_exact is None:
            self._tools_exact = count_tokens(TOOLS_JSON)
        budget = (
            self.config.context_window
            - count_tokens(self.system_prompt)
            - self._tools_exact
            - self.config.output_reserve
        )
        n = len(h)
        if budget <= 0 or n == 0:
            return [], []
        start, total = n, 0
        for i in range(n - 1, -1, -1):
            c = h.exact(i)
            if start < n and total + c > budget:
                break
            start, total = i, total + c
        while start < n and h.msgs[start].get("role") == "tool":
            start += 1
        msgs = [h.sent[i] for i in range(start, n)]
        parts = [h.part(i) for i in range(start, n)]
        if msgs and total > budget and len(msgs) == 1:  # a lone message over budget: clip it
            m = dict(msgs[0])
            content = str(m.get("content") or "")
            while content and count_tokens(provider_text({**m, "content": content})) > budget:
                content = content[: max(0, len(content) * 9 // 10 - 8)]
            m["content"] = content
            msgs, parts = [m], [provider_text(m)]
        return msgs, parts

    def act_context(self) -> dict[str, Any]:
        """``_act_context`` (MEM-CLM-telemetry-limits): ``tokens`` (reported, else the request estimate),
        ``compacted`` while pending, and the non-zero health counters (MEM-CLM-telemetry-limits)."""
        ctx: dict[str, Any] = {
            "tokens": self.last_prompt_tokens if self.last_prompt_tokens > 0 else self.last_request_estimate
        }
        if self.compaction_pending:
            ctx["compacted"] = True
        ctx.update({k: v for k, v in self.health.items() if v})
        return ctx

    # -- the LLM call with retries ---------------------------------------------------------------------
    def _call_llm(self, hop: int) -> Generator[Any, Any, Reply]:
        retries, forbidden_retried = 0, False
        self._redact_copy = set()
        while True:
            msgs, parts, est = self.build_request()
            self.hops += 1
            self.last_request, self.last_request_estimate = msgs, est
            self.last_parts = parts
            self.last_request_had_reminder = any(is_maintenance(m) for m in msgs)
            if self.keep_log:
                self.request_log.append((self.env.t, msgs, self.dropped, self.compaction_pending))
            provider = self._provider_tokens(parts, est, msgs)
            self.last_provider_tokens = provider
            call = self._calls_this_step
            self._calls_this_step += 1
            yield self.sim.timeout(self.config.llm_latency_s)
            kind = self.schedule.llm_fault(self.env.t, call)
            if kind is None:
                self._redact_copy = set()
                reply: Reply = self.model.respond(self, msgs, self.env.t, hop)
                usage: int | None = provider if reply.prompt_tokens is None else reply.prompt_tokens
                if (self.env.t, call) in self.schedule.no_usage:
                    usage = None
                return replace(reply, prompt_tokens=usage)
            err = LLM_ERRORS[kind]
            code = classify_llm_error(f"{err.type_name}: {err}")
            self.health["provider_api_failed_attempts"] += 1
            self.sim.trace.op(SYSTEM, "llm_error", agent=self.agent_id, phase="fail", t=self._t, code=code)
            if code == "Forbidden" and not forbidden_retried:
                forbidden_retried = True
                self._redact_last_tool_group()
                continue
            if code in RETRYABLE_CODES:
                delays = ALLOCATION_QUOTA_DELAYS_S if code == "Throttling.AllocationQuota" else RETRY_DELAYS_S
                if retries < len(delays):
                    yield self.sim.timeout(delays[retries])
                    retries += 1
                    continue
                self.health["retry_exhausted"] += 1
            self._redact_copy = set()
            raise _LLMFailure(err, code, retries)

    def _provider_tokens(self, parts: list[str], est: int, msgs: list[dict[str, Any]]) -> int:
        record = self.record_every > 0 and self.hops % self.record_every == 0
        exact: int | None = None
        if record:
            rec = self.sim.request(
                SYSTEM,
                self.route,
                parts,
                agent=self.agent_id,
                estimate=est,
                needed=self._needed,
                t=self.env.t,
                pending=self.compaction_pending,
                dropped=self.dropped,
            )
            exact = rec.exact_tokens
        if self.provider_tokenizer == "estimate":
            return est + self._tools_est
        return exact if exact is not None else sum(count_tokens(p) for p in parts)

    def _redact_last_tool_group(self) -> list[int]:
        """The one-shot Forbidden redaction: the last contiguous block of tool messages (past trailing
        non-tool messages) gets the redaction content, in place in ``history`` (fixed
        ``redact-retry-copy``: only in the retry's request)."""
        msgs = self.history.msgs
        i = len(msgs) - 1
        while i >= 0 and msgs[i].get("role") != "tool":
            i -= 1
        block = []
        while i >= 0 and msgs[i].get("role") == "tool":
            block.append(i)
            i -= 1
        if self.variant.has(REDACT_RETRY_COPY):
            self._redact_copy = set(block)
        else:
            for k in block:
                self.history.set_content(k, POLICY_REDACTED_TOOL_CONTENT)
        self.sim.trace.op(
            SYSTEM,
            "forbidden_redaction",
            agent=self.agent_id,
            t=self._t,
            messages=len(block),
            in_place=not self.variant.has(REDACT_RETRY_COPY),
        )
        return block

    # -- acting --------------------------------------------------------------------------------------
    def _act(self, message: dict[str, Any], t: int) -> dict[str, Any]:
        try:
            res = self.env.act(
                self.agent_id, [*self.pre_assistant, message], step=t, context=self.act_context()
            )
        except HttpError as exc:
            if self.keep_log:
                self.act_log.append((t, self.hops, message.get("tool_calls") or [], str(exc.status), []))
            raise
        if self.keep_log:
            self.act_log.append((t, self.hops, message.get("tool_calls") or [], "ok", res["results"]))
        names = [c["function"]["name"] for c in message.get("tool_calls") or []]
        if any(n == "write_memory_doc" and r.get("ok") for n, r in zip(names, res["results"])):
            self._saved_in_cycle = True
        return res

    def _note_failed_write(self, message: dict[str, Any]) -> None:
        if any(c["function"]["name"] == "write_memory_doc" for c in message.get("tool_calls") or []):
            self._write_failed_in_cycle = True

    def remember_act(self, message: dict[str, Any], results: list[dict[str, Any]]) -> None:
        """``_remember_act`` (MEM-OBJ-history): an end-of-step-only act keeps just ``{role: assistant,
        content}`` (when the content is non-empty and not ``[llm-error]``); any other act keeps the
        assistant message and one tool message per result."""
        calls = message.get("tool_calls") or []
        if len(calls) == 1 and calls[0]["function"]["name"] == "end_of_step":
            c = message.get("content") or ""
            if c and not c.startswith("[llm-error]"):
                kept = {"role": "assistant", "content": c}
                if message.get("reasoning_content"):
                    kept["reasoning_content"] = message["reasoning_content"]
                self.history.append(kept)
            return
        self.history.append(message)
        for call, r in zip(calls, results):
            self.history.append(
                {
                    "role": "tool",
                    "tool_call_id": call["id"],
                    "name": call["function"]["name"],
                    "content": json.dumps(r, ensure_ascii=False),
                }
            )

    def force_end_of_step(self, content: str, t: int) -> bool:
        """``_force_end_of_step`` (RT-RTE-react-loop): send the pre-assistant messages and an EOS; on success
        remember and compact if pending; on an HTTP error clear pending, the pre-assistant list and the
        last prompt tokens (the reminder stays in history)."""
        msg = {"role": "assistant", "content": content, "tool_calls": [dict(EOS_CALL)]}
        try:
            res = self._act(msg, t)
        except HttpError as exc:
            self.compaction_pending = False
            self.pre_assistant = []
            self.last_prompt_tokens = 0
            self.sim.trace.op(
                SYSTEM, "force_end_of_step", agent=self.agent_id, phase="fail", t=t, status=exc.status
            )
            return False
        self.remember_act(msg, res["results"])
        self.compact_history_if_pending()
        self.sim.trace.op(SYSTEM, "force_end_of_step", agent=self.agent_id, t=t, reason=content[:40])
        return True

    def drive_step(self, observation: str, *, needed: Iterable[str] = ()) -> Generator[Any, Any, StepResult]:
        """``_drive_step`` as a SimPy process (RT-RTE-react-loop, RT-RTE-act-gate): append the observation,
        then up to ``max_hops`` hops of trigger check, request, LLM call and ``/act``; 425 truncates to the
        pre-observation length (pending and the pre-assistant copy kept), other HTTP errors and LLM
        failures force an EOS; an exception inside the step (e.g. 410 on the observation) forces a
        ``[step-crash]`` EOS, as ``run()`` does."""
        t = self.env.t
        try:
            return (yield from self._drive_step(observation, needed=needed))
        except (HttpError, LLMError, KeyError, ValueError, TypeError) as exc:
            # run(): an exception inside the step forces an end-of-step with the crash text.
            text = f"[step-crash] {type(exc).__name__}: {exc}"
            self.force_end_of_step(text, t)
            return StepResult(t, "forced", 0, text)

    def _drive_step(self, observation: str, *, needed: Iterable[str] = ()) -> Generator[Any, Any, StepResult]:
        t = self._t = self.env.t
        self._calls_this_step = 0
        self._needed = frozenset(needed)
        len0 = len(self.history)
        self.env.deliver_observation(self.agent_id, observation)
        self._observation = {"role": "user", "content": observation}
        self.history.append(self._observation)
        if self.variant.has(TRACE_RECALL) and self._needed:
            self._recall_from_traces(t)
        compactions0 = self.compactions
        for hop in range(self.config.max_hops):
            self.maybe_add_compaction_reminder()
            try:
                reply = yield from self._call_llm(hop)
            except _LLMFailure as f:
                text = f"[llm-error] {f.error.type_name}: {f.error} detail_code={f.code} retries={f.retries}"
                self.force_end_of_step(text, t)
                return StepResult(t, "forced", hop + 1, text, self.compactions > compactions0)
            self.last_prompt_tokens = (
                reply.prompt_tokens if reply.prompt_tokens and reply.prompt_tokens > 0 else 0
            )
            if not reply.tool_calls:
                msg: dict[str, Any] = {
                    "role": "assistant",
                    "content": reply.content or FALLBACK_NO_TOOL_CALL,
                    "tool_calls": [dict(EOS_CALL)],
                }
            else:
                calls = [
                    {
                        "id": c.id or f"call_{hop}_{i}",
                        "type": "function",
                        "function": {
                            "name": c.name,
                            "arguments": c.arguments if c.arguments not in (None, "") else "{}",
                        },
                    }
                    for i, c in enumerate(reply.tool_calls)
                ]
                msg = {"role": "assistant", "content": reply.content or None, "tool_calls": calls}
            if reply.reasoning_content:
                msg["reasoning_content"] = reply.reasoning_content
            try:
                res = self._act(msg, t)
            except HttpError as exc:
                self._note_failed_write(msg)
                if exc.status == 425:
                    self.history.truncate(len0)
                    if self.variant.has(RESET_PENDING_ON_425):
                        self.compaction_pending = False
                        self.pre_assistant = []
                    self.sim.trace.op(
                        SYSTEM, "stale_step", agent=self.agent_id, t=t, pending=self.compaction_pending
                    )
                    return StepResult(t, "stale", hop + 1, str(exc), self.compactions > compactions0)
                self.force_end_of_step(f"[act-error] HTTPError: {exc}", t)
                return StepResult(t, "forced", hop + 1, str(exc), self.compactions > compactions0)
            self.remember_act(msg, res["results"])
            self.compact_history_if_pending()
            if res["step_done"]:
                return StepResult(t, "done", hop + 1, "", self.compactions > compactions0)
        self.force_end_of_step(FALLBACK_HOPS_EXHAUSTED, t)
        return StepResult(t, "forced", self.config.max_hops, "hops", self.compactions > compactions0)

    def _recall_from_traces(self, t: int) -> None:
        """Fixed variant (``trace-recall``): for each needed fact not in the history, scan the step traces
        and append a ``[trace-recall]`` user message with the matching fact tokens."""
        visible: set[str] = set()
        for i in range(len(self.history)):
            visible |= extract_facts(self.history.part(i))
        missing = self._needed - visible
        if not missing:
            return
        found: list[str] = []
        for past in range(t):
            step = self.env.read_step_index(past)
            for m in (step or {}).get("messages", []):
                text = provider_text(m)
                for f in missing & extract_facts(text):
                    found.extend(tok for tok in re.findall(rf"{f}=[a-z]+", text))
        if found:
            lines = "\n".join(dict.fromkeys(found))
            self.history.append({"role": "user", "content": f"[trace-recall]\n{lines}"})
            self.sim.trace.op(SYSTEM, "trace_recall", agent=self.agent_id, t=t, facts=sorted(missing))

    def run_step(self, observation: str, *, needed: Iterable[str] = ()) -> StepResult:
        """Run one step to completion in the simulation (a SimPy process) and return how it ended."""
        proc = self.sim.process(self.drive_step(observation, needed=needed))
        self.sim.run(proc)
        result = proc.value
        assert isinstance(result, StepResult)
        return result
