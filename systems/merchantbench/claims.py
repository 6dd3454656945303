"""MerchantBench's failure modes (fidelity note section 5) as claims: declarations only.

Each claim names its report records, its statement, its minimal fix (switch names in ``state.py``) and its
workload and driver (``drivers.py``); the runner checks faithful (must fail, shrunk), fixed (must hold),
off (the feature switched off, must fail) and combined (every fix on, must hold).
"""

from __future__ import annotations

import json
from typing import Any

from sim.claims import Claim, claim_factory
from systems.merchantbench import drivers as dr
from systems.merchantbench.state import (
    ATOMIC_WRITE,
    COMPACT_AFTER_SAVE,
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
)

SYSTEM = "merchantbench"


def _brief(ex: Any) -> str:
    text = json.dumps(ex, ensure_ascii=False)
    return text if len(text) <= 240 else text[:237] + "..."


_claim = claim_factory(SYSTEM, summarize=_brief)


CLAIMS: list[Claim] = [
    _claim(
        "suffix-eviction",
        ("RT-RTE-context-trim", "MEM-OBJ-history", "MEM-RTE-document-write"),
        "A fact observed but not saved is evicted by the suffix trim: after compaction it is in neither "
        "the history nor the memory document (compaction follows any successful act, even a read).",
        f"{COMPACT_AFTER_SAVE}: keep the compaction pending until a write_memory_doc succeeds in the cycle",
        dr.suffix_strategy,
        dr.suffix_check,
        fixes=(COMPACT_AFTER_SAVE,),
    ),
    _claim(
        "orphaned-read-result",
        ("RT-RTE-context-trim", "MEM-RTE-document-read"),
        "Right after a read_memory_doc the trim can keep the tool result but not its assistant call, then "
        "drop it as a leading tool message: the model never sees the document.",
        f"{GROUP_TRIM}: trim call/result groups atomically; truncate an oversized newest group",
        dr.orphan_strategy,
        dr.orphan_check,
        fixes=(GROUP_TRIM,),
    ),
    _claim(
        "large-save-empties-history",
        ("RT-RTE-context-trim", "MEM-OBJ-history"),
        "The compaction right after a large write_memory_doc empties the history: once the write call "
        "costs more than K minus its result, only the result fits and it is dropped as a leading tool "
        "message, so history becomes [] (the step's observation, the reminder and the save are all gone).",
        f"{GROUP_TRIM}+{PIN_OBSERVATION}: group-atomic trim with a guaranteed tail holding the observation",
        dr.large_save_strategy,
        dr.large_save_check,
        fixes=(GROUP_TRIM, PIN_OBSERVATION),
    ),
    _claim(
        "no-provider-ceiling",
        ("RT-RTE-context-trim", "RT-CMP-openai-model"),
        "Requests have no provider-token ceiling: B bounds only the chars/4 estimate of the trimmed "
        "history, so a request's exact provider count exceeds the window B (the system prompt and tool "
        "schemas come on top; CJK and digits, which the estimate undercounts, and a lone message over B, "
        "which is always kept, overflow further).",
        f"{PROVIDER_BUDGET}: trim in provider tokens to window - system - tools - reserve, clip a lone "
        "oversized message",
        dr.ceiling_strategy,
        dr.ceiling_check,
        fixes=(PROVIDER_BUDGET,),
    ),
    _claim(
        "silent-slide",
        ("RT-RTE-context-trim", "RT-RTE-react-loop"),
        "With T = B and prose the provider counts fewer tokens than the estimate, so the reported prompt "
        "tokens of a request trimmed to B stay below T: the reminder never fires and the window slides.",
        f"{TRIGGER_UNTRIMMED}: fire on max(reported prompt tokens, untrimmed history estimate) with T <= B",
        dr.slide_strategy,
        dr.slide_check,
        fixes=(TRIGGER_UNTRIMMED,),
    ),
    _claim(
        "reminder-lost-on-425",
        ("RT-RTE-react-loop", "RT-RTE-act-gate"),
        "A 425 truncates history to the pre-observation length, removing the reminder, but pending stays "
        "set: the next successful act compacts although the model never saw the reminder.",
        f"{RESET_PENDING_ON_425}: after a 425 clear pending so the reminder is re-issued",
        dr.stale_strategy,
        dr.stale_check,
        fixes=(RESET_PENDING_ON_425,),
    ),
    _claim(
        "forced-eos-compacts",
        ("RT-RTE-react-loop", "MEM-RTE-document-write"),
        "After the reminder a write attempt fails (400 end_of_step_must_be_last, 500); the forced "
        "end-of-step succeeds and compaction runs without the write.",
        f"{COMPACT_AFTER_SAVE}: keep the compaction pending until a write succeeds",
        dr.forced_strategy,
        dr.forced_check,
        fixes=(COMPACT_AFTER_SAVE,),
    ),
    _claim(
        "reused-call-id",
        ("RT-CLM-http-controls", "MEM-RTE-document-write"),
        "A provider that reuses a call id within a step gets a 409 (different content: the write is lost "
        "and the step force-ended) or a silent replay (same content: no history entry).",
        f"{UNIQUE_CALL_KEYS}: idempotency keys unique per call (act sequence in the key)",
        dr.reuse_strategy,
        dr.reuse_check,
        fixes=(UNIQUE_CALL_KEYS,),
    ),
    _claim(
        "forbidden-erases-read",
        ("RT-RTE-react-loop", "MEM-RTE-document-read"),
        "A Forbidden response permanently overwrites the last tool group in history with the redaction "
        "content, whatever caused it: a read_memory_doc result there is lost for the rest of the run.",
        f"{REDACT_RETRY_COPY}: redact only the retry's copy of the request",
        dr.forbidden_strategy,
        dr.forbidden_check,
        fixes=(REDACT_RETRY_COPY,),
    ),
    _claim(
        "id-aliasing",
        ("MEM-OBJ-memory-doc",),
        "Distinct agent ids map to one document (agent 0 / agent_0, José / Josè, ../x / x, and "
        "Agent_0 / agent_0 on a case-insensitive filesystem): one agent reads the other's notes.",
        f"{INJECTIVE_IDS}: injective, case-safe percent-escaping plus a separate history directory",
        dr.alias_strategy,
        dr.alias_check,
        fixes=(INJECTIVE_IDS,),
    ),
    _claim(
        "index-aliasing",
        ("MEM-OBJ-memory-doc", "MEM-OBJ-memory-history"),
        "Agent id 'agent_0.history' writes its document to agent_0's history file, replacing the "
        "archive (and agent_0's next version is 1 again).",
        f"{INJECTIVE_IDS}: injective encoding ('.' escaped) and a separate history directory",
        dr.index_strategy,
        dr.index_check,
        fixes=(INJECTIVE_IDS,),
    ),
    _claim(
        "version-inflation",
        ("MEM-OBJ-memory-history",),
        "Versions are 1 + substring counts of the markers anywhere in the history file, so a body "
        "containing a marker inflates every later version number.",
        f"{FRAMED_VERSIONS}: count framed entries (headers plus byte lengths), not substrings",
        dr.version_strategy,
        dr.version_check,
        fixes=(FRAMED_VERSIONS,),
    ),
    _claim(
        "overwrite-then-append",
        ("MEM-RTE-document-write", "MEM-OBJ-memory-history"),
        "The document is truncated and rewritten before the history append, with no rollback: a crash "
        "or failure between (or during) leaves a document no history entry records.",
        f"{ATOMIC_WRITE}: append the history entry first, then temp file + os.replace for the document",
        dr.txn_strategy,
        dr.txn_check,
        fixes=(ATOMIC_WRITE,),
    ),
    _claim(
        "crlf-not-preserved",
        ("MEM-RTE-document-read",),
        "read_memory_doc uses universal newlines: a written '\\r\\n' or '\\r' comes back as '\\n' with a "
        "different byte count.",
        f"{RAW_NEWLINES}: newline='' on read",
        dr.crlf_strategy,
        dr.crlf_check,
        fixes=(RAW_NEWLINES,),
    ),
    _claim(
        "traces-not-reloaded",
        ("MEM-OBJ-step-traces", "MEM-RTE-trace-inspection", "MEM-CLM-telemetry-limits"),
        "Evicted turns stay in the server's step traces but are never reloaded: a later probe for an "
        "evicted fact finds it in t_NNNNN.json and not in the request.",
        f"{TRACE_RECALL}: on a probe whose fact is out of context, reload matching turns from the traces",
        dr.recall_strategy,
        dr.recall_check,
        fixes=(TRACE_RECALL,),
    ),
]
