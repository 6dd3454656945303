"""Agent-id aliasing: distinct agents share one memory document, and one can overwrite another's history.

Covers: MEM-OBJ-memory-doc, MEM-OBJ-memory-history, MEM-RTE-document-write, MEM-RTE-document-read;
claims merchantbench.id-aliasing, merchantbench.index-aliasing and merchantbench.version-inflation.

Scenario: a run registers agents whose ids differ only in characters the file-name sanitizer folds
(``agent 0``, ``agent:0``, ``_agent_0_``, ``José``/``Josè``, ``../x``/``x``). Each id writes its own note
and reads back. Then ``agent_0`` writes twice and the id ``agent_0.history`` writes "junk": its document
path is agent_0's history file, so agent_0's archive is replaced and its next entry is numbered 1 again.
The same sequence is repeated with the ``injective-ids`` fix (percent-escaping, histories in their own
directory), and on a case-insensitive filesystem, where ``Agent_0`` and ``agent_0`` also collide.

What reaches each agent's model is its ``read_memory_doc`` result: every read is recorded as a request
(route ``read_memory_doc``, one ``memory`` part: the tool message the agent's next prompt carries).
"""

from __future__ import annotations

import json

from sim.scenario import Context, main
from sim.variant import Variant
from systems.merchantbench.design import DESIGN
from systems.merchantbench.model import MerchantEnv, injective_agent_id, safe_agent_id
from systems.merchantbench.state import INJECTIVE_IDS

SYSTEM = "merchantbench"
SEED = 7

IDS = ("agent_0", "agent 0", "agent:0", "_agent_0_", "Agent_0", "José", "Josè", "../x", "x", "中文", "!!!")


def _isolation(ctx: Context, variant: Variant, casefold: bool, label: str) -> list[str]:
    env = MerchantEnv(
        ctx.sim, ctx.sim.tree("memory"), variant=variant, casefold_paths=casefold, run_id=f"run-{label}"
    )
    for aid in IDS:
        ctx.sim.run(until=ctx.sim.now + 1)
        env.write_memory_doc(aid, f"note of {aid}")
    wrong = []
    for aid in IDS:
        result = env.read_memory_doc(aid)
        got = result["content"]
        text = json.dumps(result, ensure_ascii=False)
        ctx.sim.request(SYSTEM, "read_memory_doc", [text], agent=aid, kinds=["memory"], run=label)
        if got != f"note of {aid}":
            wrong.append(f"{aid!r} reads {got!r}")
    docs = sorted({p.rsplit("/", 1)[-1] for p in env.tree.list(env.memory_dir) if "history" not in p})
    return [
        f"{label}: {len(IDS)} ids -> {len(docs)} documents; {len(wrong)} ids read another id's note",
        *(f"  {w}" for w in wrong),
    ]


def _history_alias(ctx: Context, variant: Variant, label: str) -> list[str]:
    env = MerchantEnv(ctx.sim, ctx.sim.tree("memory"), variant=variant, run_id=f"run-h-{label}")
    env.write_memory_doc("agent_0", "plan: restock tea")
    env.write_memory_doc("agent_0", "plan: restock tea and cups")
    before = env.memory_versions("agent_0")
    env.write_memory_doc("agent_0.history", "junk")
    after_junk = env.memory_versions("agent_0")
    env.write_memory_doc("agent_0", "plan: close the shop early")
    hist = env.tree.read_text(env.memory_history_path("agent_0"))
    return [
        f"{label}: agent_0 history path {env.memory_history_path('agent_0')}; "
        f"'agent_0.history' document path {env.memory_doc_path('agent_0.history')}",
        f"  agent_0 versions {before} -> after 'agent_0.history' writes junk: {after_junk} "
        f"-> after agent_0's "
        f"next write: {env.memory_versions('agent_0')}",
        f"  agent_0 history starts with {hist[:24]!r}",
    ]


def run(ctx: Context) -> list[str]:
    lines = ["id -> safe_agent_id (upstream) | injective_agent_id (fix)"]
    groups: dict[str, list[str]] = {}
    for aid in IDS:
        groups.setdefault(safe_agent_id(aid), []).append(aid)
        lines.append(f"  {aid!r:12} -> {safe_agent_id(aid)!r:14} | {injective_agent_id(aid)!r}")
    lines.append("collisions: " + "; ".join(f"{k}: {v}" for k, v in groups.items() if len(v) > 1))
    lines += _isolation(ctx, Variant(), False, "faithful")
    lines += _isolation(ctx, Variant(), True, "faithful, case-insensitive fs")
    lines += _isolation(ctx, DESIGN.switches.fixed(INJECTIVE_IDS), True, "injective-ids, case-insensitive fs")
    lines += _history_alias(ctx, Variant(), "faithful")
    lines += _history_alias(ctx, DESIGN.switches.fixed(INJECTIVE_IDS), "injective-ids")
    return lines


if __name__ == "__main__":
    main(__name__)
