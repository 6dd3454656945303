"""MerchantBench: one whole-replacement memory document per agent, plus a ReAct history trimmed by recency.

Provenance: Artemonim/merchantbench (Apache-2.0) at revision 47eafeae429219d6767ebdb23514e20656a4fbc3, as
read in ``../shared/fidelity/merchantbench.md`` (the report, ``../shared/seeds/000_c579f24b79686c34.txt``,
cites d9e5bd75, which could not be read; where the two disagree the fidelity note wins, see
``fidelity.DIFFERENCES``). Covered: the memory document tools and their version history
(``env/tools/tools.py``), ``/act`` admission and idempotency (``env/web/routes_agent.py``,
``env/tools/dispatch.py``), step traces (``env/storage/agent_log.py``), run deletion and unload
(``env/web/runner.py``), the Hermes ``state.db`` reader, and the ReAct 160k/compact-30k baseline
(``agent/baselines/react_160k_compact_30k.py``). Not covered: the simulator's domain state, scoring,
external Hermes internals.
"""

from systems.merchantbench.model import (
    History,
    MerchantEnv,
    ReactAgent,
    RunRegistry,
    compaction_notice,
    compaction_reminder,
    estimate_tokens,
    history_token_estimate,
    message_token_estimate,
    next_memory_version,
    read_hermes_trace,
    safe_agent_id,
    sanitize_message_for_llm,
    trim_messages_to_token_budget,
)
from systems.merchantbench.policies import SavePolicy, ScriptedModel
from systems.merchantbench.state import FaultSchedule, ReactConfig

__all__ = [
    "FaultSchedule",
    "History",
    "MerchantEnv",
    "ReactAgent",
    "ReactConfig",
    "RunRegistry",
    "SavePolicy",
    "ScriptedModel",
    "compaction_notice",
    "compaction_reminder",
    "estimate_tokens",
    "history_token_estimate",
    "message_token_estimate",
    "next_memory_version",
    "read_hermes_trace",
    "safe_agent_id",
    "sanitize_message_for_llm",
    "trim_messages_to_token_budget",
]
