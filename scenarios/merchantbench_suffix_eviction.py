"""Suffix eviction: unsaved facts leave the ReAct history (MerchantBench, 160k/160k/30k defaults).

Covers: RT-RTE-context-trim, RT-RTE-react-loop, MEM-OBJ-history, MEM-RTE-document-write,
MEM-RTE-document-read; claims merchantbench.suffix-eviction and merchantbench.silent-slide.

Scenario: one agent observes FACTS facts, one per ~OBS_TOKENS-token observation, then calm hours until
step PROBE_STEP asks for fact PROBE_FACT; the model reads its memory document on the probe (read on
probe). Four runs over the same observations:

1. provider tokenizer cl100k, never saves: the reported prompt tokens of a request trimmed to B stay
   below T (prose is ~4.8 characters per cl100k token, the estimator counts 4), so the reminder never
   fires and the window slides silently;
2. a provider that counts like the estimator, never saves: the reminder fires, the model ends its turn,
   compaction keeps ~K and the early facts are gone, from the history and from the (empty) document;
3. same provider, saves on the reminder (read, then write what it sees): compaction already runs after
   the read act, so the write only holds the surviving suffix;
4. as 3 with the ``compact-after-save`` fix: the write now sees the whole request, but the request was
   already trimmed to B for several steps before the reminder fired (the trigger reads the trimmed
   request), so the earliest facts are still missing;
5. as 4 plus ``trigger-untrimmed``: the reminder fires as soon as the untrimmed history reaches T, the
   write holds every fact, and the probe is answered from the document.

Every hop's request is recorded in the trace (route ``react.hop.run<N>``, tokens by kind: system prompt,
tool schemas, messages, memory reads, reminders).
"""

from __future__ import annotations

from pydantic import Field

from sim.scenario import Context, main
from sim.scenario import Params as BaseParams
from sim.text import extract_facts, fact_token, fact_value, observation
from sim.variant import Variant
from systems.merchantbench.design import DESIGN
from systems.merchantbench.model import MerchantEnv, ReactAgent
from systems.merchantbench.policies import SavePolicy
from systems.merchantbench.state import SAVE_BEFORE_COMPACT, TRIGGER_UNTRIMMED, ReactConfig

SYSTEM = "merchantbench"
FIXED = DESIGN.switches.fixed
SEED = 42


class Params(BaseParams):
    """Scenario parameters."""

    facts: int = Field(40, ge=1, le=200, description="facts observed, one per load step")
    obs_tokens: int = Field(
        4_000, ge=100, le=20_000, description="observation size (cl100k tokens, ~4.8 chars)"
    )
    probe_step: int = Field(60, ge=2, le=500, description="the step that asks for the fact")
    probe_fact: int = Field(3, ge=1, le=200, description="which fact the probe asks for")
    window: int = Field(
        160_000, ge=1_000, le=2_000_000, description="B, the context window (estimated tokens)"
    )
    trigger: int = Field(160_000, ge=1_000, le=2_000_000, description="T, the compaction trigger")
    keep: int = Field(30_000, ge=100, le=2_000_000, description="K, the compaction keep target")


SYSTEM_PROMPT = "You run an online shop in MerchantBench. Keep notes with write_memory_doc."


def _observations(ctx: Context) -> tuple[list[str], str]:
    p = ctx.params
    rng = ctx.sim.rng("scenario.observations")
    values = ctx.sim.rng("scenario.values")
    out = []
    probe_token = ""
    for t in range(p.probe_step + 1):
        facts = [fact_token(t + 1, fact_value(values))] if t < p.facts else []
        if t + 1 == p.probe_fact and facts:
            probe_token = facts[0]
        size = int(p.obs_tokens * 4.8) if t < p.facts else 400
        text = f"Day {t // 24 + 1}, Hour {t % 24}\n" + observation(rng, size, facts)
        if t == p.probe_step:
            text += f"\nQuestion: what is the value of FACT-{p.probe_fact:04d}?"
        out.append(text)
    return out, probe_token


def _run(ctx: Context, obs: list[str], label: str, provider: str, save: str, variant: Variant) -> list[str]:
    p = ctx.params
    sim = ctx.sim
    env = MerchantEnv(sim, sim.tree("memory"), run_id=f"run-{label[0]}", brief=SYSTEM_PROMPT)
    config = ReactConfig(context_window=p.window, trigger=p.trigger, keep=p.keep)
    agent = ReactAgent(
        sim,
        env,
        "agent_0",
        SavePolicy(save=save, read_on_probe=True),
        config=config,
        variant=variant,
        provider_tokenizer=provider,
        record_every=1,
        route=f"react.hop.run{label[0]}",
    )
    seq0 = len(sim.trace.data.ops)
    max_provider = max_hist = 0
    probe = f"FACT-{p.probe_fact:04d}"
    for t, text in enumerate(obs):
        agent.run_step(text, needed=(probe,) if t == p.probe_step else ())
        max_provider = max(max_provider, agent.last_provider_tokens)
        max_hist = max(max_hist, agent.history.total)
    ops = sim.trace.data.ops[seq0:]
    fired = [o.data["t"] for o in ops if o.op == "compaction_trigger"]
    doc = env.read_memory_doc("agent_0")["content"]
    in_request = probe in agent.request_facts()
    answer = next(
        (m.get("content") for m in reversed(agent.history.msgs) if m.get("role") == "assistant"), ""
    )
    return [
        f"{label}:",
        f"  reminders fired at steps {fired[:6]}{' ...' if len(fired) > 6 else ''} ({len(fired)} total); "
        f"compactions {agent.compactions}",
        f"  history at the end: {agent.history.upstream_len} messages, "
        f"{agent.history.total:,} estimated tokens "
        f"(peak {max_hist:,}); peak reported prompt tokens {max_provider:,}",
        f"  memory document: {len(doc.encode()):,} bytes, {len(extract_facts(doc))} facts",
        f"  probe {probe}: in the final request {'yes' if in_request else 'no'}; answer {answer!r}",
    ]


def run(ctx: Context) -> list[str]:
    p = ctx.params
    obs, token = _observations(ctx)
    lines = [
        f"MerchantBench suffix eviction: {p.facts} facts in ~{p.obs_tokens:,}-token observations, probe for "
        f"FACT-{p.probe_fact:04d} ({token}) at step {p.probe_step}; B={p.window:,} T={p.trigger:,} "
        f"K={p.keep:,}",
    ]
    runs = [
        ("1 cl100k provider, never saves", "cl100k", "never", Variant()),
        ("2 estimator-like provider, never saves", "estimate", "never", Variant()),
        ("3 estimator-like provider, saves on the reminder", "estimate", "reminder", Variant()),
        (
            "4 as 3, fix save-before-compact",
            "estimate",
            "reminder",
            DESIGN.switches.fixed(SAVE_BEFORE_COMPACT),
        ),
        (
            "5 as 4, plus fix trigger-untrimmed",
            "estimate",
            "reminder",
            FIXED(SAVE_BEFORE_COMPACT, TRIGGER_UNTRIMMED),
        ),
    ]
    # Each run's route named as the summary names the run (the report page labels its series so).
    ctx.sim.trace.set_meta(variants={f"react.hop.run{label[0]}": label for label, *_ in runs})
    for label, provider, save, variant in runs:
        lines += _run(ctx, obs, label, provider, save, variant)
    return lines


if __name__ == "__main__":
    main(__name__)
