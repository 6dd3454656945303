"""Upstream's constants of the MerchantBench memory tools and ReAct baseline (exact values).

Upstream: Artemonim/merchantbench @ 47eafeae: ``env/tools/tools.py`` (document size limit, version markers),
``agent/baselines/react_160k_compact_30k.py`` (window, trigger, keep, hops, steps, retry delays, texts).
"""

from __future__ import annotations

import json

from systems.merchantbench.state import ReactConfig

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
    sort_keys=True,
)
OBSERVATION_CONNECTION_RETRIES = 3
"""The tool client's ``observation_connection_retries``: a ``ConnectionError`` is retried this many times."""
DEFAULT_CONFIG = ReactConfig()
STEP_INDEX_PID = 4242  # the modeled server pid in temp-file names
