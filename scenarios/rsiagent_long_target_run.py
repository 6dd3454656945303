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

It streams (issue 42): the trace goes to ``--out`` as it is written (``KEEP_TRACE = False``); the summary
reads running counters (:class:`Tally`: requests, ``fold_guard`` stops, the strategy review request), the
folds as each call makes them (``keep_fold_events=False``) and the folded facts as intervals; the loop lets
folded pairs go (``keep_folded=False``: a restart reads only unfolded messages, so the lines are those of a
loop that keeps everything). A million turns run in flat memory::

    memsim run rsiagent_long_target_run --param turns=1000000 --out DIR

peaks at 162,764 KB (162,456 KB at 250,000 turns: 0.0004 KB a turn between them), 596 s of CPU (180 s
at 250,000: linear), its trace 356 MB on disk (measured 2026-12-06, ``/usr/bin/time``, loaded machine).
"""

from __future__ import annotations

from collections import deque
from typing import Any

from pydantic import Field

from sim import scenario
from sim.engine import Simulation
from sim.scenario import Context, main
from sim.text import extract_facts, fact_token, filler
from sim.trace import RequestRecord
from sim.tracefacts import EMPTY, FactSet
from systems.rsiagent.adapter import scaled_target
from systems.rsiagent.model import ActorLoop, resume, resume_eligible, stalled_handoff
from systems.rsiagent.policies import Summarizer
from systems.rsiagent.state import LoopResult

SYSTEM = "rsiagent"
SEED = 7
KEEP_TRACE = False  # the summary reads running counters (:class:`Tally`), not the trace's records
COLORS = ("teal", "amber", "plum", "navy", "gold", "rose")


class Params(scenario.Params):
    """Run length, window and the summarizer's blank rate."""

    turns: int = Field(460, ge=20, le=1_000_000, description="Actor turns (model calls after the opening)")
    budget: int = Field(
        16_000,
        ge=2000,
        le=1_000_000,
        description="window (tokens) the target role's thresholds are scaled to",
    )
    blank_rate: float = Field(
        0.1, ge=0.0, le=1.0, description="fraction of blank summaries (digest fallback)"
    )


class Tally:
    """What the summary needs of the trace, counted as the records are written (so the trace itself can
    stream to ``--out`` or nowhere): the requests, the ``fold_guard`` ops and the last
    ``loop.strategy_review`` request."""

    def __init__(self, sim: Simulation) -> None:
        self.requests = 0
        self.guards = 0
        self.review: RequestRecord | None = None
        trace = sim.trace
        request, op = trace.request, trace.op

        def counted_request(*args: Any, **kwargs: Any) -> RequestRecord:
            rec = request(*args, **kwargs)
            self.requests += 1
            if rec.route == "loop.strategy_review":
                self.review = rec
            return rec

        def counted_op(system: str, name: str, **kwargs: Any) -> Any:
            self.guards += name == "fold_guard"
            return op(system, name, **kwargs)

        trace.request = counted_request  # type: ignore[method-assign]
        trace.op = counted_op  # type: ignore[method-assign,assignment]


def run(ctx: Context) -> list[str]:
    sim = ctx.sim
    tally = Tally(sim)
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
        keep_folded=False,  # a folded message's text goes once the WORK LOG stands in for it
        keep_fold_events=False,  # ``loop.folds`` holds the last call's folds; the summary counts them
    )
    observed = middle = peak = 0
    n = 1
    unfolded: deque[frozenset[str]] = deque()  # the fact ids of each history pair not yet folded
    gone = 0  # pairs whose facts are in ``folded``
    folded: FactSet = EMPTY  # the fact ids of the folded pairs, as intervals
    sizes: set[int] = set()
    digests = lost = 0
    lost_first: list[str] = []  # the first three lost mid-message facts (each fact is observed once)
    for t in range(p.turns):
        if t % 25 == 24:
            tok = fact_token(n, rng.choice(COLORS))
            body = filler(rng, 3000) + f" {tok} " + filler(rng, 3000)
            middle += 1
            n += 1
            toks = [tok]
        else:
            toks = [fact_token(n, rng.choice(COLORS)), fact_token(n + 1, rng.choice(COLORS))]
            n += 2
            body = filler(rng, 280) + f" {toks[0]} " + filler(rng, 280) + f" {toks[1]}"
        observed += len(toks)
        loop.call(f"PROGRAM: step {t}", turn=t)
        for ev in loop.folds:  # this call's folds
            sizes.add(ev.pairs)
            digests += ev.mode == "digest"
            lost += len(ev.lost_middle_facts)
            lost_first = sorted(lost_first + list(ev.lost_middle_facts))[:3]
        while gone < loop.covered:  # pairs folded by this call
            new = unfolded.popleft()
            gone += 1
            if new:
                folded = folded.apply(FactSet.of(f for f in new if f not in folded), EMPTY)
        user, reply = loop.history[-2:]
        unfolded.append(extract_facts(user.content) | extract_facts(reply.content))
        loop.observe(body)
        peak = max(peak, loop.size())
    in_log = extract_facts(loop.summary)
    out = [
        f"target role scaled to {p.budget} tokens: keep_chars={cfg.keep_chars} high={cfg.ctx_high_water} "
        f"low={cfg.ctx_low_water} worklog_max_chars={cfg.worklog_max_chars} fold_batch={cfg.fold_batch}",
        f"turns: {p.turns}; facts observed: {observed}; peak size: {peak} chars",
        f"folds: {loop.fold_count} covering {loop.covered} pairs; unfolded pairs: "
        f"{loop.pairs - loop.covered}; size now {loop.size()} chars",
        f"fold sizes (pairs): {sorted(sizes)}; stopped above high water: {tally.guards} times",
        f"digest fallbacks (blank summaries): {digests}",
        f"folded facts: {len(folded)}; in the WORK LOG: {sum(f in folded for f in in_log)}",
        f"mid-message facts (6,000-char dumps): {middle}; lost in folds: {lost} (first: {lost_first})",
        f"WORK LOG: {len(loop.summary)} chars, {len(in_log)} facts",
    ]
    res = loop.result("stalled")
    eligible = resume_eligible(res, 0, cfg, wall_left_s=3600.0)
    h = stalled_handoff(sim, cfg, res, loop.history, summarizer=summarizer, env_memory_dir="~/.memory")
    handed = extract_facts(h.message)
    review = tally.review
    assert review is not None  # the pivot path asks the strategy review
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
    out.append(f"model requests recorded: {tally.requests}")
    return out


if __name__ == "__main__":
    main(__name__)
