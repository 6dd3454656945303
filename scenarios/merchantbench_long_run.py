"""A long run: 2,200 hourly steps of the ReAct baseline at the default 160k/160k/30k settings (MerchantBench).

Covers: RT-RTE-react-loop, RT-RTE-context-trim, MEM-OBJ-history, MEM-OBJ-memory-doc,
MEM-OBJ-memory-history, MEM-OBJ-step-traces, MEM-CLM-telemetry-limits.

Scenario: STEPS steps (upstream's ``max_steps``) with observation sizes drawn from an exponential
distribution (mean OBS_MEAN cl100k tokens, 20 to OBS_MAX), a fact in about half of them, and a probe
every PROBE_EVERY steps for a random earlier fact. The model saves on the reminder (reads its document,
then writes every fact it can see) and reads the document on a probe. The provider counts like the
design's estimator (the fast path: no tokenizer in the loop); every hop's request is recorded in the trace
(its exact cl100k count and tokens by kind), and SAMPLES evenly spaced steps print the estimator's gap.

It streams: the trace goes to the SQLite file as it is written (``KEEP_TRACE = False``), the server keeps
only the newest TRACE_RETENTION step files on its in-memory tree (with running totals of the rest), the
memory history file (which every save appends the whole document to, so it grows with the square of the
run's length) lives in a temp file (a :class:`~sim.spill.SpillTree` tail file) and is never read whole
(the env counts its version markers as it grows; the summary counts its entries header by header), and
the summary keeps counters only, so ``--param steps=200000 --out D`` runs in flat memory.
"""

from __future__ import annotations

from pydantic import Field

from sim.scenario import Context, main
from sim.scenario import Params as BaseParams
from sim.spill import SpillTree
from sim.text import extract_facts, fact_id, fact_token, fact_value, observation
from systems.merchantbench.model import MerchantEnv, ReactAgent, count_history_entries, run_step
from systems.merchantbench.policies import SavePolicy
from systems.merchantbench.state import ReactConfig

SYSTEM = "merchantbench"
SEED = 2200
KEEP_TRACE = False
TRACE_RETENTION = 256
"""Final step files kept on the server's in-memory tree (older ones are counted, then removed)."""


class Params(BaseParams):
    """Scenario parameters."""

    steps: int = Field(2_200, ge=10, le=1_000_000, description="env ticks (upstream max_steps is 2,200)")
    obs_mean: int = Field(300, ge=20, le=20_000, description="mean observation size (cl100k tokens)")
    obs_max: int = Field(8_000, ge=20, le=50_000, description="largest observation (cl100k tokens)")
    probe_every: int = Field(100, ge=2, le=100_000, description="steps between probes")
    samples: int = Field(4, ge=0, le=50, description="steps whose estimator gap is printed")
    record_every: int = Field(1, ge=0, le=1_000, description="record every n-th hop's request (0: none)")
    window: int = Field(160_000, ge=1_000, le=2_000_000, description="B (estimated tokens)")
    trigger: int = Field(160_000, ge=1_000, le=2_000_000, description="T")
    keep: int = Field(30_000, ge=100, le=2_000_000, description="K")


SYSTEM_PROMPT = "You run an online shop in MerchantBench. Keep notes with write_memory_doc."


def _add(hops: int, reminders: int, compactions: int, agent: ReactAgent) -> tuple[int, int, int]:
    return hops + agent.hops, reminders + agent.reminders, compactions + agent.compactions


def run(ctx: Context) -> list[str]:
    p = ctx.params
    sim = ctx.sim
    rng = sim.rng("scenario.sizes")
    text_rng = sim.rng("scenario.text")
    tree = SpillTree(sim.clock("").seconds, tail=lambda path: path.endswith(".history.md"))
    env = MerchantEnv(sim, tree, brief=SYSTEM_PROMPT, trace_retention=TRACE_RETENTION)
    config = ReactConfig(context_window=p.window, trigger=p.trigger, keep=p.keep)
    agent = ReactAgent(
        sim,
        env,
        "agent_0",
        SavePolicy(save="reminder", read_on_probe=True),
        config=config,
        provider_tokenizer="estimate",
        record_every=p.record_every,
    )
    sample_at = {round((i + 1) * p.steps / p.samples) - 1 for i in range(p.samples)} if p.samples else set()
    n_facts = probes = hits = 0
    peak_hist = peak_msgs = peak_req = 0
    req_total = hops = reminders = compactions = 0
    outcomes: dict[str, int] = {}
    gaps: list[str] = []
    for t in range(p.steps):
        size = min(p.obs_max, max(20, int(rng.expovariate(1.0 / p.obs_mean))))
        facts = []
        if rng.random() < 0.5:
            n_facts += 1
            facts = [fact_token(n_facts, fact_value(rng))]
        text = f"Day {t // 24 + 1}, Hour {t % 24}\n" + observation(text_rng, int(size * 4.8), facts)
        probe = None
        if t and t % p.probe_every == 0 and n_facts:
            probe = fact_id(rng.randint(1, n_facts))
            text += f"\nQuestion: what is the value of {probe}?"
        before = agent
        agent, result = run_step(agent, text, needed=(probe,) if probe else ())
        if agent is not before:  # a respawned process starts its counters at 0
            hops, reminders, compactions = _add(hops, reminders, compactions, before)
        outcomes[result.outcome] = outcomes.get(result.outcome, 0) + 1
        peak_hist = max(peak_hist, agent.history.total)
        peak_msgs = max(peak_msgs, agent.history.upstream_len)
        peak_req = max(peak_req, agent.last_request_estimate)
        req_total += agent.last_request_estimate
        if probe:
            probes += 1
            hits += probe in agent.request_facts()
        if t in sample_at and agent.last_exact:
            est, exact = agent.last_request_estimate, agent.last_exact
            gaps.append(
                f"t={t}: estimate {est:,} (history only) vs exact {exact:,} (whole request), "
                f"ratio {exact / max(1, est):.3f}"
            )
    hops, reminders, compactions = _add(hops, reminders, compactions, agent)
    doc = env.read_memory_doc("agent_0")
    hist_path = env.memory_history_path("agent_0")
    hist_size = tree.size(hist_path) if tree.exists(hist_path) else 0
    hist_entries = count_history_entries(lambda at, n: tree.peek(hist_path, at, n), hist_size)
    return [
        f"MerchantBench long run: {p.steps:,} steps, observations ~{p.obs_mean} tokens (max {p.obs_max:,}), "
        f"B={p.window:,} T={p.trigger:,} K={p.keep:,}, estimator-counting provider",
        f"steps: {outcomes}; hops {hops:,}; simulated time {sim.now:,.0f} s",
        f"reminders {reminders}, compactions {compactions}; "
        f"history now {agent.history.upstream_len} messages / {agent.history.total:,} est. tokens; "
        f"peak {peak_msgs} messages / {peak_hist:,} est. tokens",
        f"request estimate: mean {req_total // p.steps:,}, peak {peak_req:,}",
        f"memory document: {doc['bytes']:,} bytes, {len(extract_facts(doc['content']))} facts; history file "
        f"{hist_size:,} bytes, {hist_entries} versions",
        f"step traces: {env.trace_files} files, {env.trace_bytes:,} bytes (the newest {TRACE_RETENTION} kept "
        f"in memory); trace index {env.trace_index()}",
        f"facts observed {n_facts}; probes {probes}, answered from the request {hits} "
        f"({hits / max(1, probes):.0%})",
        *gaps,
    ]


if __name__ == "__main__":
    main(__name__)
