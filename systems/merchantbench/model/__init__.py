"""MerchantBench operations, named as upstream, one module per concept.

Upstream: Artemonim/merchantbench @ 47eafeae, read through ``../shared/fidelity/merchantbench.md``:

* :mod:`.constants`, :mod:`.tools` — upstream's constants and the published tool surface;
* :mod:`.estimate` — the token estimator, the suffix trim, request sanitizing;
* :mod:`.memory` — the memory document tools (``env/tools/tools.py``);
* :mod:`.server` — the env server: hook, ``/act`` admission, dispatch, idempotency (``env/web``);
* :mod:`.traces` — step traces (``env/storage/agent_log.py``);
* :mod:`.runs` — run deletion and unload (``env/web/runner.py``);
* :mod:`.hermes` — the Hermes ``state.db`` reader;
* :mod:`.history` — the ReAct history ledger, reminder texts, the fixed variants' group trim;
* :mod:`.llm` — provider error classification;
* :mod:`.agent` — the ReAct 160k/compact-30k loop (``agent/baselines/react_160k_compact_30k.py``).

Every fix of a failure mode is a switch of :class:`sim.variant.Variant` (names in
:mod:`systems.merchantbench.state`); the default is the faithful design.
"""

from systems.merchantbench.model import fixes as fixes  # fills the agent's fix table (.fixtable)
from systems.merchantbench.model.agent import ReactAgent, run_step
from systems.merchantbench.model.constants import (
    ALLOCATION_QUOTA_DELAYS_S,
    CONTEXT_WINDOW,
    DEFAULT_CONFIG,
    FALLBACK_HOPS_EXHAUSTED,
    FALLBACK_NO_TOOL_CALL,
    KEEP_TOKENS,
    LEGACY_VERSION_MARKER,
    MAINTENANCE_PREFIX,
    MAX_HOPS,
    MAX_STEPS,
    MAX_TURNS_PER_STEP,
    MEMORY_DOC_MAX_BYTES,
    POLICY_REDACTED_TOOL_CONTENT,
    RETRY_DELAYS_S,
    RETRYABLE_CODES,
    STEP_INDEX_PID,
    SYSTEM,
    TRIGGER_TOKENS,
    VERSION_MARKER,
)
from systems.merchantbench.model.estimate import (
    estimate_tokens,
    history_token_estimate,
    message_token_estimate,
    provider_text,
    sanitize_message_for_llm,
    trim_messages_to_token_budget,
)
from systems.merchantbench.model.hermes import read_hermes_trace
from systems.merchantbench.model.history import (
    History,
    compaction_notice,
    compaction_reminder,
    group_trim,
    is_maintenance,
)
from systems.merchantbench.model.llm import LLM_ERRORS, LLMFailure, classify_llm_error
from systems.merchantbench.model.memory import (
    count_history_entries,
    framed_version_count,
    history_entry,
    injective_agent_id,
    next_memory_version,
    parse_history_entries,
    safe_agent_id,
)
from systems.merchantbench.model.runs import RunRegistry
from systems.merchantbench.model.server import MerchantEnv, read_memory_doc, write_memory_doc
from systems.merchantbench.model.tools import (
    DEFAULT_DENYLIST,
    EOS_CALL,
    MUTATING_TOOLS,
    UPSTREAM_SCHEMA_TOKENS,
    tool_schemas,
    tools_json,
)
from systems.merchantbench.model.tools import __getattr__ as __getattr__  # TOOL_SCHEMAS, TOOLS_JSON, lazily
from systems.merchantbench.model.traces import indent_json

__all__ = [
    "ALLOCATION_QUOTA_DELAYS_S",
    "CONTEXT_WINDOW",
    "DEFAULT_CONFIG",
    "DEFAULT_DENYLIST",
    "EOS_CALL",
    "FALLBACK_HOPS_EXHAUSTED",
    "FALLBACK_NO_TOOL_CALL",
    "KEEP_TOKENS",
    "LEGACY_VERSION_MARKER",
    "LLM_ERRORS",
    "MAINTENANCE_PREFIX",
    "MAX_HOPS",
    "MAX_STEPS",
    "MAX_TURNS_PER_STEP",
    "MEMORY_DOC_MAX_BYTES",
    "MUTATING_TOOLS",
    "POLICY_REDACTED_TOOL_CONTENT",
    "RETRYABLE_CODES",
    "RETRY_DELAYS_S",
    "STEP_INDEX_PID",
    "SYSTEM",
    "TOOLS_JSON",
    "TOOL_SCHEMAS",
    "TRIGGER_TOKENS",
    "UPSTREAM_SCHEMA_TOKENS",
    "VERSION_MARKER",
    "History",
    "LLMFailure",
    "MerchantEnv",
    "ReactAgent",
    "RunRegistry",
    "classify_llm_error",
    "compaction_notice",
    "compaction_reminder",
    "count_history_entries",
    "estimate_tokens",
    "framed_version_count",
    "group_trim",
    "history_entry",
    "history_token_estimate",
    "indent_json",
    "injective_agent_id",
    "is_maintenance",
    "message_token_estimate",
    "next_memory_version",
    "parse_history_entries",
    "provider_text",
    "read_hermes_trace",
    "read_memory_doc",
    "run_step",
    "safe_agent_id",
    "sanitize_message_for_llm",
    "tool_schemas",
    "tools_json",
    "trim_messages_to_token_budget",
    "write_memory_doc",
]
