"""A long run: 2,200 hourly steps of the ReAct baseline at the default 160k/160k/30k settings (MerchantBench).

Covers: RT-RTE-react-loop, RT-RTE-context-trim, MEM-OBJ-history, MEM-OBJ-memory-doc,
MEM-OBJ-memory-history, MEM-OBJ-step-traces, MEM-CLM-telemetry-limits.

Scenario: STEPS steps (upstream's ``max_steps``) with observation sizes drawn from an exponential
distribution (mean OBS_MEAN cl100k tokens, 20 to OBS_MAX), a fact in about half of them, and a probe
every PROBE_EVERY steps for a random earlier fact. The model saves on the reminder (reads its document,
then writes every fact it can see) and reads the document on a probe. The provider counts like the
design's estimator (the fast path: no tokenizer in the loop); the exact cl100k count of the request is
taken at SAMPLES evenly spaced steps only, to show the estimator's gap. Prints the loop's totals, the
history's peak, the document and history files, the step traces and the probe recall.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from sim.scenario import Context, main
from sim.text import extract_facts, fact_token, fact_value, observation
from systems.merchantbench.model import MerchantEnv, ReactAgent, parse_history_entries
from systems.merchantbench.policies import SavePolicy
from systems.merchantbench.state import ReactConfig

SYSTEM = "merchantbench"
SEED = 2200


class Params(BaseModel):
    """Scenario parameters."""

    model_config = ConfigDict(extra="forbid")

    steps: int = Field(2_200, ge=10, le=20_000, description="env ticks (upstream max_steps)")
    obs_mean: int = Field(300, ge=20, le=20_000, description="mean observation size (cl100k tokens)")
    obs_max: int = Field(8_000, ge=20, le=50_000, description="largest observation (cl100k tokens)")
    probe_every: int = Field(100, ge=2, description="steps between probes")
    samples: int = Field(4, ge=0, le=50, description="steps whose request is counted exactly (cl100k)")
    window: int = Field(160_000, ge=1_000, description="B (estimated tokens)")
    trigger: int = Field(160_000, ge=1_000, description="T")
    keep: int = Field(30_000, ge=100, description="K")


SYSTEM_PROMPT = "You run an online shop in MerchantBench. Keep notes with write_memory_doc."


def run(ctx: Context) -> list[str]:
    p = ctx.params
    sim = ctx.sim
    rng = sim.rng("scenario.sizes")
    text_rng = sim.rng("scenario.text")
    env = MerchantEnv(sim, sim.tree("memory"), brief=SYSTEM_PROMPT)
    config = ReactConfig(context_window=p.window, trigger=p.trigger, keep=p.keep)
    agent = ReactAgent(
        sim,
        env,
        "agent_0",
        SavePolicy(save="reminder", read_on_probe=True),
        config=config,
        provider_tokenizer="estimate",
        record_every=0,
    )
    sample_at = {round((i + 1) * p.steps / p.samples) - 1 for i in range(p.samples)} if p.samples else set()
    seen: list[str] = []
    probes = hits = 0
    peak_hist = peak_msgs = peak_req = 0
    req_total = 0
    outcomes: dict[str, int] = {}
    gaps: list[str] = []
    for t in range(p.steps):
        size = min(p.obs_max, max(20, int(rng.expovariate(1.0 / p.obs_mean))))
        facts = []
        if rng.random() < 0.5:
            facts = [fact_token(len(seen) + 1, fact_value(rng))]
            seen.append(f"FACT-{len(seen) + 1:04d}")
        text = f"Day {t // 24 + 1}, Hour {t % 24}\n" + observation(text_rng, int(size * 4.8), facts)
        probe = None
        if t and t % p.probe_every == 0 and seen:
            probe = rng.choice(seen)
            text += f"\nQuestion: what is the value of {probe}?"
        result = agent.run_step(text, needed=(probe,) if probe else ())
        outcomes[result.outcome] = outcomes.get(result.outcome, 0) + 1
        peak_hist = max(peak_hist, agent.history.total)
        peak_msgs = max(peak_msgs, len(agent.history))
        peak_req = max(peak_req, agent.last_request_estimate)
        req_total += agent.last_request_estimate
        if probe:
            probes += 1
            hits += probe in extract_facts("\n".join(agent.last_parts))
        if t in sample_at:
            rec = sim.request(
                SYSTEM,
                "react.hop",
                agent.last_parts,
                agent="agent_0",
                estimate=agent.last_request_estimate,
                t=t,
            )
            gaps.append(
                f"t={t}: estimate {rec.estimate:,} (history only) vs exact {rec.exact_tokens:,} (whole "
                f"request), ratio {rec.exact_tokens / max(1, rec.estimate or 1):.3f}"
            )
    ops = sim.trace.data.ops
    fired = sum(1 for o in ops if o.op == "compaction_trigger")
    doc = env.read_memory_doc("agent_0")
    hist_bytes = (
        env.tree.read_bytes(env.memory_history_path("agent_0"))
        if env.tree.exists(env.memory_history_path("agent_0"))
        else b""
    )
    traces = env.tree.list(f"{env.run_dir}/agent/by_step")
    index = env.trace_index()
    return [
        f"MerchantBench long run: {p.steps:,} steps, observations ~{p.obs_mean} tokens (max {p.obs_max:,}), "
        f"B={p.window:,} T={p.trigger:,} K={p.keep:,}, estimator-counting provider",
        f"steps: {outcomes}; hops {agent.hops:,}; simulated time {sim.now:,.0f} s",
        f"reminders {fired}, compactions {agent.compactions}; history now {len(agent.history)} messages / "
        f"{agent.history.total:,} est. tokens; peak {peak_msgs} messages / {peak_hist:,} est. tokens",
        f"request estimate: mean {req_total // p.steps:,}, peak {peak_req:,}",
        f"memory document: {doc['bytes']:,} bytes, {len(extract_facts(doc['content']))} facts; history file "
        f"{len(hist_bytes):,} bytes, {len(parse_history_entries(hist_bytes))} versions",
        f"step traces: {len(traces)} files, {env.tree.total_bytes(f'{env.run_dir}/agent/by_step'):,} bytes; "
        f"trace index {index}",
        f"facts observed {len(seen)}; probes {probes}, answered from the request {hits} "
        f"({hits / max(1, probes):.0%})",
        *gaps,
    ]


if __name__ == "__main__":
    main(__name__)
