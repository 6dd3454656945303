"""MerchantBench's failure modes (fidelity note section 5) as claims: declarations only.

Each claim names its report records, its statement, its minimal fix and its off switch (switch names in
``state.py``), its example type and its workload and driver (``drivers/``); the runner checks faithful
(must fail, shrunk), fixed (must hold), off (the feature switched off, must fail) and combined (every fix
on, must hold).
"""

from __future__ import annotations

import json
from typing import Any

from sim.claims import Claim, claim_factory
from systems.merchantbench.drivers import caching as cc
from systems.merchantbench.drivers import context as cx
from systems.merchantbench.drivers import documents as dd
from systems.merchantbench.state import (
    ALIGNED_TRIM,
    ATOMIC_WRITE,
    CACHE_BREAKPOINTS_OFF,
    COMPACTION_OFF,
    DOCUMENTS_OFF,
    EMPTY_REQUEST,
    FRAMED_VERSIONS,
    GROUP_TRIM,
    HISTORY_OFF,
    IDEMPOTENCY_OFF,
    INJECTIVE_IDS,
    PROVIDER_BUDGET,
    RAW_NEWLINES,
    READ_EMPTY,
    REDACT_RETRY_COPY,
    REMINDER_OFF,
    RESET_PENDING_ON_425,
    SAVE_BEFORE_COMPACT,
    TRACE_RECALL,
    TRACES_OFF,
    TRIGGER_UNTRIMMED,
    UNIQUE_CALL_IDS,
)

SYSTEM = "merchantbench"


def _brief(ex: Any) -> str:
    text = json.dumps(ex, ensure_ascii=False)
    return text if len(text) <= 240 else text[:237] + "..."


_claim = claim_factory(SYSTEM, summarize=_brief)

_SAVE_FIX = (
    f"{SAVE_BEFORE_COMPACT}: the compaction waits for a save in its cycle; a step that ends without one "
    "makes the agent save what the trim drops (read, then write the document back with it appended) "
    "before compacting at the next step"
)

CLAIMS: list[Claim] = [
    _claim(
        "cache-prefix-reset",
        ("RT-RTE-context-trim", "RT-CMP-openai-model", "MEM-CLM-telemetry-limits"),
        "With Claude prompt caching (upstream's breakpoints on the system prompt, the last two messages "
        "and the last assistant message), the suffix trim at B drops the cached prefix to the system "
        "prompt and tool schemas: once the history outgrows B every hop's trim moves the request's first "
        "message, so each request reads only the head from the cache and writes its whole kept history "
        "again at 1.25x. Property: every request's history is within the window, and after the window "
        "fills the cache serves at least half of the history tokens sent.",
        f"{ALIGNED_TRIM}: keep the request's first message until the window forces it out, then move it "
        "forward to keep about half of what the trim kept (the request is the previous one plus new "
        "messages until the next move)",
        cc.cache_strategy,
        cc.cache_check,
        fixes=(ALIGNED_TRIM,),
        off=(CACHE_BREAKPOINTS_OFF,),
        slow=True,
        example_type=cc.CacheExample,
    ),
    _claim(
        "suffix-eviction",
        ("RT-RTE-context-trim", "MEM-OBJ-history", "MEM-RTE-document-write"),
        "A fact observed but not saved is evicted by the suffix trim: the compaction (which follows any "
        "successful act, even a read or an end-of-step) drops it from the history, and it is not in the "
        "memory document. Property: every reminder is followed by a compaction by the next step, and no "
        "compaction drops a fact that is then in neither the history nor the document.",
        _SAVE_FIX,
        cx.suffix_strategy,
        cx.suffix_check,
        fixes=(SAVE_BEFORE_COMPACT,),
        off=(COMPACTION_OFF,),
        slow=True,
        example_type=cx.SuffixExample,
    ),
    _claim(
        "orphaned-read-result",
        ("RT-RTE-context-trim", "MEM-RTE-document-read"),
        "Right after a read_memory_doc the trim at B can keep the tool result but not its assistant call, "
        "then drop it as a leading tool message: the model never sees the document. Property: the request "
        "after a successful read shows the step's question and the document's fact in the read's result, "
        "after its call.",
        f"{GROUP_TRIM}: trim whole call/result groups, always keep the latest observation, and cut the "
        "newest group's results to fit instead of dropping them",
        cx.orphan_strategy,
        cx.orphan_check,
        fixes=(GROUP_TRIM,),
        off=(READ_EMPTY,),
        slow=True,
        example_type=cx.OrphanExample,
    ),
    _claim(
        "large-save-empties-history",
        ("RT-RTE-context-trim", "MEM-OBJ-history"),
        "The compaction right after a large write_memory_doc empties the history: once the write call "
        "costs more than K minus its result, only the result fits and it is dropped as a leading tool "
        "message, so history becomes [] (the step's observation, the reminder and the save are all gone). "
        "Property: every reminder is followed by a compaction, and each leaves the step's observation in a "
        "history within K (plus the user messages it keeps).",
        f"{GROUP_TRIM}: group-atomic trim that always keeps the latest observation",
        cx.large_save_strategy,
        cx.large_save_check,
        fixes=(GROUP_TRIM,),
        off=(COMPACTION_OFF,),
        slow=True,
        example_type=cx.LargeSaveExample,
    ),
    _claim(
        "no-provider-ceiling",
        ("RT-RTE-context-trim", "RT-CMP-openai-model"),
        "Requests have no provider-token ceiling: B bounds only the chars/4 estimate of the trimmed "
        "history, so a request's exact provider count exceeds the window (the system prompt and the "
        "4,127-token tool schemas come on top; CJK and digits, which the estimate undercounts, and a lone "
        "message over B, which is always kept, overflow further). Property: every request is within the "
        "window and shows its step's observation (whole or a clipped prefix).",
        f"{PROVIDER_BUDGET}: trim in provider tokens to window - system - tools - reserve, clip a lone "
        "oversized message",
        cx.ceiling_strategy,
        cx.ceiling_check,
        fixes=(PROVIDER_BUDGET,),
        off=(EMPTY_REQUEST,),
        example_type=cx.CeilingExample,
    ),
    _claim(
        "silent-slide",
        ("RT-RTE-context-trim", "RT-RTE-react-loop"),
        "With T = B above about 27,000 and prose, the provider counts fewer tokens than the estimate, so "
        "the reported prompt tokens of a request trimmed to B stay below T even with the tool schemas: "
        "the reminder never fires and the window slides. Property: each request keeps its history within "
        "B, and one that leaves history out shows a reminder.",
        f"{TRIGGER_UNTRIMMED}: fire on max(reported prompt tokens, untrimmed history estimate) with T <= B",
        cx.slide_strategy,
        cx.slide_check,
        fixes=(TRIGGER_UNTRIMMED,),
        off=(REMINDER_OFF,),
        slow=True,
        example_type=cx.SlideExample,
    ),
    _claim(
        "reminder-lost-on-425",
        ("RT-RTE-react-loop", "RT-RTE-act-gate"),
        "A 425 truncates history to the pre-observation length, removing the reminder, but pending stays "
        "set: the next successful act compacts although the model never saw the reminder. Property: every "
        "reminder is followed by a compaction by the next step, and each compaction follows a request that "
        "showed the reminder.",
        f"{RESET_PENDING_ON_425}: after a 425 clear pending so the reminder is re-issued",
        cx.stale_strategy,
        cx.stale_check,
        fixes=(RESET_PENDING_ON_425,),
        off=(REMINDER_OFF,),
        example_type=cx.StaleExample,
    ),
    _claim(
        "forced-eos-compacts",
        ("RT-RTE-react-loop", "MEM-RTE-document-write"),
        "After the reminder a write attempt fails (400 end_of_step_must_be_last, 500); the forced "
        "end-of-step succeeds and compaction runs without the write, dropping unsaved facts. Property: as "
        "suffix-eviction's (compactions happen, none drops a fact that is then nowhere).",
        _SAVE_FIX,
        cx.forced_strategy,
        cx.forced_check,
        fixes=(SAVE_BEFORE_COMPACT,),
        off=(COMPACTION_OFF,),
        example_type=cx.ForcedExample,
    ),
    _claim(
        "reused-call-id",
        ("RT-CLM-http-controls", "MEM-RTE-document-write"),
        "A provider that reuses a call id within a step gets a 409 (different content: the write is lost "
        "and the step force-ended) or a silent replay (same content: no history entry). Property: every "
        "write the model sends lands exactly once, also when a request is resent after a lost response.",
        f"{UNIQUE_CALL_IDS}: the agent renames a call id it already sent in the step; the server's "
        "idempotency stays and absorbs resent requests",
        cx.reuse_strategy,
        cx.reuse_check,
        fixes=(UNIQUE_CALL_IDS,),
        off=(IDEMPOTENCY_OFF,),
        example_type=cx.ReuseExample,
    ),
    _claim(
        "forbidden-erases-read",
        ("RT-RTE-react-loop", "MEM-RTE-document-read"),
        "A Forbidden response permanently overwrites the last tool group in history with the redaction "
        "content, whatever caused it: a read_memory_doc result there is lost for the rest of the run. "
        "Property: after a read, every later request (the Forbidden retry excepted) shows the document's "
        "fact, and read results in history are the server's.",
        f"{REDACT_RETRY_COPY}: redact only the retry's copy of the request",
        cx.forbidden_strategy,
        cx.forbidden_check,
        fixes=(REDACT_RETRY_COPY,),
        off=(READ_EMPTY,),
        example_type=cx.ForbiddenExample,
    ),
    _claim(
        "id-aliasing",
        ("MEM-OBJ-memory-doc",),
        "Distinct agent ids map to one document (agent 0 / agent_0, José / Josè, ../x / x, and "
        "Agent_0 / agent_0 on a case-insensitive filesystem): one agent reads the other's notes. Property: "
        "each agent reads back what it wrote.",
        f"{INJECTIVE_IDS}: injective, case-safe percent-escaping plus a separate history directory",
        dd.alias_strategy,
        dd.alias_check,
        fixes=(INJECTIVE_IDS,),
        off=(DOCUMENTS_OFF,),
        example_type=dd.AliasExample,
    ),
    _claim(
        "index-aliasing",
        ("MEM-OBJ-memory-doc", "MEM-OBJ-memory-history"),
        "Agent id 'agent_0.history' writes its document to agent_0's history file, replacing the "
        "archive (and agent_0's next version is 1 again). Property: each agent's history holds exactly "
        "its own writes and only grows.",
        f"{INJECTIVE_IDS}: injective encoding ('.' escaped) and a separate history directory",
        dd.index_strategy,
        dd.index_check,
        fixes=(INJECTIVE_IDS,),
        off=(HISTORY_OFF,),
        example_type=dd.IndexExample,
    ),
    _claim(
        "version-inflation",
        ("MEM-OBJ-memory-history",),
        "Versions are 1 + substring counts of the markers anywhere in the history file, so a body "
        "containing a marker inflates every later version number. Property: the history holds one entry "
        "per write, labelled 1..n, with the written bodies.",
        f"{FRAMED_VERSIONS}: count framed entries (headers plus byte lengths), not substrings",
        dd.version_strategy,
        dd.version_check,
        fixes=(FRAMED_VERSIONS,),
        off=(HISTORY_OFF,),
        example_type=dd.VersionExample,
    ),
    _claim(
        "overwrite-then-append",
        ("MEM-RTE-document-write", "MEM-OBJ-memory-history"),
        "The document is truncated and rewritten before the history append, with no rollback: a crash "
        "or failure between (or during) leaves a document no history entry records. Property: the "
        "document is the last committed write (or the interrupted one) and is recorded in the history.",
        f"{ATOMIC_WRITE}: append the history entry first, then temp file + os.replace for the document",
        dd.txn_strategy,
        dd.txn_check,
        fixes=(ATOMIC_WRITE,),
        off=(DOCUMENTS_OFF,),
        example_type=dd.TxnExample,
    ),
    _claim(
        "crlf-not-preserved",
        ("MEM-RTE-document-read",),
        "read_memory_doc uses universal newlines: a written '\\r\\n' or '\\r' comes back as '\\n' with a "
        "different byte count. Property: a read returns exactly what was written, with its byte count.",
        f"{RAW_NEWLINES}: newline='' on read",
        dd.crlf_strategy,
        dd.crlf_check,
        fixes=(RAW_NEWLINES,),
        off=(DOCUMENTS_OFF,),
        example_type=dd.CrlfExample,
    ),
    _claim(
        "traces-not-reloaded",
        ("MEM-OBJ-step-traces", "MEM-RTE-trace-inspection", "MEM-CLM-telemetry-limits"),
        "Evicted turns stay in the server's step traces but are never reloaded: a later probe for an "
        "evicted fact finds it in t_NNNNN.json and not in the request. Property: a probe's first request "
        "holds the fact it asks for.",
        f"{TRACE_RECALL}: when an observation names a fact id the request would not show, look it up in "
        "the step traces and add the fact tokens found",
        cx.recall_strategy,
        cx.recall_check,
        fixes=(TRACE_RECALL,),
        off=(TRACES_OFF,),
        example_type=cx.RecallExample,
    ),
]
