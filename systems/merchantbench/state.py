"""Frozen value records of the MerchantBench model and its switch names: fixes, off switches, LLM replies,
act outcomes. Variants are :class:`sim.variant.Variant` values of these names (``design.DESIGN.switches``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any

# -- fix names (each failure mode's minimal fix is a switch; the faithful design has none) -------------
SAVE_BEFORE_COMPACT = "save-before-compact"
"""A compaction waits for a successful ``write_memory_doc`` in its cycle; if the step ends without one,
the next step begins with the agent saving what the trim will drop (it reads the document and writes it
back with the dropped messages appended), then compacts (modes 1 and 6)."""
GROUP_TRIM = "group-trim"
"""Every trim (request at B, compaction at K) keeps the latest observation and whole call/result groups,
newest first; the newest group's results are truncated to fit instead of dropped (modes 2 and 3)."""
PROVIDER_BUDGET = "provider-budget"
"""Trim in provider tokens to window - system - tools - reserve; clip a lone oversized message (mode 4)."""
TRIGGER_UNTRIMMED = "trigger-untrimmed"
"""Fire on max(reported prompt tokens, untrimmed history estimate), so no trim drops silently (mode 4)."""
RESET_PENDING_ON_425 = "reset-pending-on-425"
"""After a 425 truncation, clear pending and the pre-assistant copy so the reminder is re-issued (mode 5)."""
UNIQUE_CALL_IDS = "unique-call-ids"
"""The agent gives a call whose id it already sent in this step (a provider reusing ids, or identical
id-less calls) a fresh id; the server's idempotency is unchanged and still absorbs resent requests
(mode 7)."""
REDACT_RETRY_COPY = "redact-retry-copy"
"""The Forbidden retry redacts a copy of the request; ``history`` keeps the tool results (mode 8)."""
INJECTIVE_IDS = "injective-ids"
"""Percent-escape agent ids (injective, case-safe) and keep histories in their own directory (mode 9)."""
FRAMED_VERSIONS = "framed-versions"
"""Number versions by parsing framed entries (headers plus ``bytes`` lengths), not by substring (mode 10)."""
ATOMIC_WRITE = "atomic-write"
"""Append the history entry first, then temp file + replace for the document (mode 11)."""
RAW_NEWLINES = "raw-newlines"
"""Read the document with ``newline=""`` so CRLF and CR survive (mode 12)."""
TRACE_RECALL = "trace-recall"
"""When an observation names a fact id that is not in the request, look it up in the step traces and add
the matching fact tokens to the history (mode 13; keyed by the observation's own text, no oracle)."""
ALIGNED_TRIM = "aligned-trim"
"""The request's trim keeps a fixed first message for as long as the window allows; when the window forces
it out, the first message moves forward to keep about half of what the trim kept. Between those moves each
request is the previous one plus new messages, so the provider's cache serves the whole earlier request
(the prompt-cache claim)."""

FIXES = (
    SAVE_BEFORE_COMPACT, GROUP_TRIM, PROVIDER_BUDGET, TRIGGER_UNTRIMMED, RESET_PENDING_ON_425,
    UNIQUE_CALL_IDS, REDACT_RETRY_COPY, INJECTIVE_IDS, FRAMED_VERSIONS, ATOMIC_WRITE, RAW_NEWLINES,
    TRACE_RECALL, ALIGNED_TRIM,
)  # fmt: skip

# -- off switches (a claim's mechanism switched off or emptied: its property must reject it) -----------
COMPACTION_OFF = "compaction-off"
"""The compaction never runs: a fired reminder stays pending and the history is never trimmed to K."""
REMINDER_OFF = "reminder-off"
"""The trigger fires but shows nothing: no reminder or notice message, no pre-assistant copy."""
EMPTY_REQUEST = "empty-request"
"""The request's trimmed history is always empty (the system prompt and tool schemas only)."""
READ_EMPTY = "read-empty"
"""``read_memory_doc`` returns an empty document, whatever is on disk."""
IDEMPOTENCY_OFF = "idempotency-off"
"""No idempotency cache: a resent mutating call runs again."""
DOCUMENTS_OFF = "documents-off"
"""``write_memory_doc`` reports success but stores no document."""
HISTORY_OFF = "history-off"
"""``write_memory_doc`` appends no history entry."""
TRACES_OFF = "traces-off"
"""The server writes no step traces."""
CACHE_BREAKPOINTS_OFF = "cache-breakpoints-off"
"""The request carries no ``cache_control`` breakpoints (the provider caches nothing of it)."""

OFF = (
    COMPACTION_OFF, REMINDER_OFF, EMPTY_REQUEST, READ_EMPTY, IDEMPOTENCY_OFF, DOCUMENTS_OFF, HISTORY_OFF,
    TRACES_OFF, CACHE_BREAKPOINTS_OFF,
)  # fmt: skip


@dataclass(frozen=True)
class ReactConfig:
    """The ReAct baseline's knobs: window B, trigger T, keep K (estimated tokens), hops per step."""

    context_window: int = 160_000
    trigger: int = 160_000
    keep: int = 30_000
    max_hops: int = 30
    max_steps: int = 2_200
    model_name: str = "qwen-plus"
    output_reserve: int = 0
    llm_latency_s: float = 1.0


@dataclass(frozen=True)
class ToolCall:
    """One tool call proposed by the model (``id`` None means the provider gave none)."""

    name: str
    arguments: Any = "{}"
    id: str | None = None


@dataclass(frozen=True)
class Reply:
    """One LLM response: text, tool calls, and ``usage.prompt_tokens`` (None when usage is missing)."""

    content: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    prompt_tokens: int | None = None
    reasoning_content: str | None = None


@dataclass(frozen=True)
class HttpError(Exception):
    """An HTTP error status from the env server (``requests.HTTPError`` after ``raise_for_status``).

    ``str()`` is requests' own text, ``"{status} Client Error: {REASON} for url: {url}"`` (``Server
    Error`` for 5xx; REASON is the upper-case status phrase the server sends), as the ``[act-error]``
    text carries it (``agent/sdk/merchantbench_tool_client.py`` ``act``; Corrections 7). *code* is the
    JSON body's ``error``.
    """

    status: int
    code: str = ""
    url: str = ""

    def __str__(self) -> str:
        kind = "Client" if self.status < 500 else "Server"
        return f"{self.status} {kind} Error: {HTTPStatus(self.status).phrase.upper()} for url: {self.url}"


@dataclass(frozen=True)
class ServerUnavailable(Exception):
    """The env server does not answer (``requests.ConnectionError``; it is not an ``HTTPError``).

    *message* is requests' text: a refused connection while the server is down, or an aborted one when
    the server process died while handling the request (Corrections 11).
    """

    message: str

    type_name = "ConnectionError"

    def __str__(self) -> str:
        return self.message


@dataclass(frozen=True)
class LLMError(Exception):
    """A provider error; classified on ``"{type_name}: {message}"``."""

    type_name: str
    message: str
    status: int | None = None
    """``e.response.status_code`` of the SDK exception, when it has a response."""

    def __str__(self) -> str:
        return self.message


@dataclass(frozen=True)
class FaultSchedule:
    """A provider and server fault schedule keyed by (env tick, hop or act index within the step).

    ``llm`` maps to an LLM error kind (``forbidden``, ``burst``, ``rate``, ``allocation``, ``transient``,
    ``server``, ``invalid``, ``unknown``); ``act`` maps to an HTTP status (425, 400, 409, 429, 500);
    ``no_usage`` lists LLM calls that return no usage; ``outage`` entries ``(t, act, n)`` make the server
    stop answering at that act: it refuses the next *n* requests (acts and observations, that act
    included), then answers again with its state intact; ``resend`` entries ``(t, act)`` lose that act's
    response after the server ran it, and the client resends the same request once (a retrying client:
    upstream's ReAct client does not retry, its SDK's idempotency exists for clients that do).
    """

    llm: tuple[tuple[int, int, str], ...] = ()
    act: tuple[tuple[int, int, int], ...] = ()
    no_usage: tuple[tuple[int, int], ...] = ()
    outage: tuple[tuple[int, int, int], ...] = ()
    resend: tuple[tuple[int, int], ...] = ()

    def llm_fault(self, t: int, call: int) -> str | None:
        for ft, fc, kind in self.llm:
            if (ft, fc) == (t, call):
                return kind
        return None

    def act_fault(self, t: int, act: int) -> int | None:
        for ft, fa, status in self.act:
            if (ft, fa) == (t, act):
                return status
        return None

    def outage_at(self, t: int, act: int) -> int:
        """How many requests the server refuses from the act *act* of tick *t* on (0: none)."""
        return sum(n for ft, fa, n in self.outage if (ft, fa) == (t, act))


@dataclass(frozen=True)
class StepResult:
    """How one ReAct step ended: ``done``, ``stale`` (425), ``forced`` (forced EOS), ``exited`` (the agent
    process died: the server did not answer) or ``finished`` (the observation route answered 410)."""

    t: int
    outcome: str
    hops: int
    detail: str = ""
    compacted: bool = False
    requests: tuple[int, ...] = field(default=())


@dataclass(frozen=True)
class SentRequest:
    """One LLM request as the claims log it: the env tick, the hop, the sanitized messages, how many history
    messages the trim left out, whether a compaction was pending, and whether it was the Forbidden retry."""

    t: int
    hop: int
    messages: list[dict[str, Any]]
    dropped: int
    pending: bool
    retry: bool = False


@dataclass(frozen=True)
class Compaction:
    """One compaction as the claims log it: the tick, the provider texts of the history before, the
    messages after and their estimated total, the memory document on disk right after, and whether the
    last request before it showed a reminder or notice."""

    t: int
    before: tuple[str, ...]
    after: tuple[dict[str, Any], ...]
    after_total: int
    document: str
    reminder_seen: bool
