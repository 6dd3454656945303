"""WORK LOG folding over a long target run, then a stalled restart (RSIAgent ``core/loop.py``).

Covers: MEM-RTE-worklog-fold, MEM-OBJ-work-log, RT-OBJ-loop-result, RT-RTE-task-execution.

Scenario: a target-role Actor runs 460 turns. Each observation is about 600 characters with two fact
tokens; every 25th is a 6,000-character dump whose fact sits in the middle. The target role's character
thresholds (keep 500k, high 900k, low 500k, WORK LOG cap 500k characters) are scaled to a 16,000-token
window (× 16,000 / 262,144); pair counts are upstream's (80 kept at most, the 6-pair floor, batches of
10). Each turn is one model call, aligned as upstream's ``run_attempt``: the history is (user, assistant)
pairs whose pair 0 is the opening TASK message, the fold runs before each call, and the pending
observation is neither counted nor foldable. The summarizer keeps every fact token it is shown and
returns a blank summary on 10 % of calls (digest fallback). Folds happen at high water and stop at low
water or when fewer than a batch is foldable. The run then stalls with no file changed: the strategy
review is fed the (non-empty) ``res.worklog``, and the pivot handoff carries only ``wl[:6000]``; a plain
handoff would carry 12,000.
"""

from __future__ import annotations

from pydantic import Field

from sim import scenario
from sim.scenario import Context, main
from sim.text import extract_facts, fact_token, filler
from systems.rsiagent.adapter import scaled_target
from systems.rsiagent.model import ActorLoop, resume, resume_eligible, stalled_handoff
from systems.rsiagent.policies import Summarizer
from systems.rsiagent.state import LoopResult

SYSTEM = "rsiagent"
SEED = 7
COLORS = ("teal", "amber", "plum", "navy", "gold", "rose")


class Params(scenario.Params):
    """Run length, window and the summarizer's blank rate."""

    turns: int = Field(460, ge=20, le=2000, description="Actor turns (model calls after the opening)")
    budget: int = Field(
        16_000,
        ge=2000,
        le=1_000_000,
        description="window (tokens) the target role's thresholds are scaled to",
    )
    blank_rate: float = Field(
        0.1, ge=0.0, le=1.0, description="fraction of blank summaries (digest fallback)"
    )


def run(ctx: Context) -> list[str]:
    sim = ctx.sim
    sim.trace.keep = True  # the summary reads the trace; keep it in memory even when it streams to --out
    p = ctx.params
    cfg = scaled_target(p.budget)
    rng = sim.rng("scenario.observations")
    summarizer = Summarizer(blank_rate=p.blank_rate)
    loop = ActorLoop(
        sim,
        cfg,
        summarizer,
        instruction="Repair the failing CI job.",
        system_prompt="You are the Actor on a target run.",
        env_memory_dir="~/.memory",
    )
    seen: list[str] = []
    middle: list[str] = []
    peak = 0
    n = 1
    for t in range(p.turns):
        if t % 25 == 24:
            tok = fact_token(n, rng.choice(COLORS))
            body = filler(rng, 3000) + f" {tok} " + filler(rng, 3000)
            middle.append(tok.split("=")[0])
            n += 1
            toks = [tok]
        else:
            toks = [fact_token(n, rng.choice(COLORS)), fact_token(n + 1, rng.choice(COLORS))]
            n += 2
            body = filler(rng, 280) + f" {toks[0]} " + filler(rng, 280) + f" {toks[1]}"
        seen += [x.split("=")[0] for x in toks]
        loop.call(f"PROGRAM: step {t}", turn=t)
        loop.observe(body)
        peak = max(peak, loop.size())
    folded_facts: set[str] = set()
    for m in loop.messages[: 2 * loop.covered]:
        folded_facts |= extract_facts(m.content)
    in_log = extract_facts(loop.summary)
    lost_mid = sorted({f for ev in loop.folds for f in ev.lost_middle_facts})
    guards = [o for o in sim.trace.data.ops if o.op == "fold_guard"]
    digests = [ev for ev in loop.folds if ev.mode == "digest"]
    out = [
        f"target role scaled to {p.budget} tokens: keep_chars={cfg.keep_chars} high={cfg.ctx_high_water} "
        f"low={cfg.ctx_low_water} worklog_max_chars={cfg.worklog_max_chars} fold_batch={cfg.fold_batch}",
        f"turns: {p.turns}; facts observed: {len(seen)}; peak size: {peak} chars",
        f"folds: {len(loop.folds)} covering {loop.covered} pairs; unfolded pairs: "
        f"{loop.pairs - loop.covered}; size now {loop.size()} chars",
        f"fold sizes (pairs): {sorted({ev.pairs for ev in loop.folds})}; "
        f"stopped above high water: {len(guards)} times",
        f"digest fallbacks (blank summaries): {len(digests)}",
        f"folded facts: {len(folded_facts)}; in the WORK LOG: {len(in_log & folded_facts)}",
        f"mid-message facts (6,000-char dumps): {len(middle)}; lost in folds: {len(lost_mid)} "
        f"(first: {lost_mid[:3]})",
        f"WORK LOG: {len(loop.summary)} chars, {len(in_log)} facts",
    ]
    res = loop.result("stalled")
    eligible = resume_eligible(res, 0, cfg, wall_left_s=3600.0)
    h = stalled_handoff(sim, cfg, res, loop.history, summarizer=summarizer, env_memory_dir="~/.memory")
    handed = extract_facts(h.message)
    review = next(r for r in reversed(sim.trace.data.requests) if r.route == "loop.strategy_review")
    out += [
        f"stall at turn {p.turns}: resume eligible={eligible} (max_iters {cfg.max_iters}, iters {res.iters})",
        f"pivot handoff (review + wl[:6000]): {len(h.message)} chars, "
        f"{len(handed & in_log)} of {len(in_log)} log facts",
        f"strategy review request: {review.exact_tokens} tokens, {len(review.fact_ids)} facts",
    ]
    plain = stalled_handoff(
        sim,
        cfg,
        LoopResult("stalled", res.iters, res.worklog, surface_delta="M ci.yml"),
        loop.history,
        summarizer=summarizer,
    )
    out.append(
        f"plain handoff (wl[:12000], a file changed): {len(plain.message)} chars carrying "
        f"{len(extract_facts(plain.message) & in_log)} of {len(in_log)} facts"
    )
    fresh = resume(loop, h)
    first = fresh.call("PROGRAM: recon", question="What is the value of FACT-0001?")
    out.append(
        f"fresh attempt: {len(first)} parts; FACT-0001 in context: "
        f"{'FACT-0001' in extract_facts(chr(10).join(first))}"
    )
    out.append(f"model requests recorded: {len(sim.trace.data.requests)}")
    return out


if __name__ == "__main__":
    main(__name__)
