"""Claim contention: N agents race for one step, on S3's conditional PUT and on HF's check-then-write.

Covers: RT-RTE-step-control, RT-OBJ-step-state, RT-CMP-get-store, MEM-RTE-evaluator-readback;
claim tracecraft.hf-racy-claims; the crash point tracecraft.claim.after_claim.

Scenario: as upstream's contention_bench, each trial releases N agents at once (SimPy processes, each
store round trip LATENCY_S) on a fresh ``steps/<sid>/claim.json``; a separate verifier re-reads the
stored owner. The invariant is exactly one WIN and stored owner == declared winner. On the S3 backend
(``IfNoneMatch="*"``) it holds in every trial; on the HF backend, whose conditional put is exists-then-
write, every agent that checks before the first write wins. After each trial every claimant's harness
hands the model the agent prompt and what ``claim`` printed (one request each: on HF every claimant is told
it won, under a best-effort warning). A last trial crashes the winner between the claim PUT and the status
PUT: readers report the step in_progress from the claim alone.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from sim import scenario as sc
from sim.faults import Crash, FaultPlan
from sim.scenario import Context, main
from systems.tracecraft import faults as fp
from systems.tracecraft.adapter import SYSTEM_PROMPT
from systems.tracecraft.model import Tracecraft
from systems.tracecraft.protocol import TracecraftError

SYSTEM = "tracecraft"
SEED = 21
STORES = ("memory", "moto")


class Params(sc.Params):
    """The trials."""

    agents: int = Field(8, ge=2, le=64, description="concurrent claimants per trial")
    trials: int = Field(5, ge=1, le=200, description="trials per backend")
    latency_s: float = Field(0.02, gt=0, le=10, description="seconds per store round trip")
    spread_s: float = Field(0.01, ge=0, le=10, description="max release jitter (seconds, seeded)")


def _trial(ctx: Context, tc: Tracecraft, sid: str, n: int) -> tuple[list[str], str | None]:
    sim = ctx.sim
    rng = sim.rng("scenario.claim_contention.release")
    outcome: dict[str, bool] = {}

    told: dict[str, str] = {}

    def claimant(name: str, delay: float) -> Any:
        yield sim.timeout(delay)
        c = tc.agent(name)
        try:
            yield from c.claim(sid)
            outcome[name] = True
            told[name] = "\n".join(c.stdout + c.stderr)  # the tool result: stdout, then the HF warning
        except TracecraftError as exc:
            outcome[name] = False
            told[name] = f"Error: {exc}"

    procs = [sim.process(claimant(f"agent{i:02d}", rng.uniform(0, ctx.params.spread_s))) for i in range(n)]
    sim.run(until=sim.env.all_of(procs))
    for name in sorted(told):  # what each claimant's harness hands the model after its claim
        sim.request(
            SYSTEM, "tracecraft.claim", [SYSTEM_PROMPT, told[name]], agent=name, kinds=["system", "message"],
            backend=tc.backend, step=sid,
        )  # fmt: skip
    verifier = tc.agent("verifier")
    owner = (verifier.call(verifier.step_status(sid)))[1]
    return sorted(a for a, won in outcome.items() if won), owner


def run(ctx: Context) -> list[str]:
    """Run the trials on both backends, then the crash-window trial."""
    p = ctx.params
    out = []
    store = ctx.open_store()
    try:
        for backend in ("s3", "hf"):
            tc = Tracecraft(ctx.sim, store, project=f"bench-{backend}", backend=backend, latency=p.latency_s)
            held = 0
            wins = []
            for t in range(p.trials):
                winners, owner = _trial(ctx, tc, f"trial-{t}", p.agents)
                ok = len(winners) == 1 and owner == winners[0]
                held += ok
                wins.append(len(winners))
            out.append(
                f"{backend}: {p.trials} trials x {p.agents} agents: winners per trial {wins}; "
                f"invariant held in {held}/{p.trials}"
            )
        tc = Tracecraft(ctx.sim, store, project="crash")
        ctx.sim.faults = FaultPlan.parse([f"crash@{fp.CLAIM_AFTER_CLAIM}"])  # a fresh plan for this trial
        a, reader = tc.agent("agent00"), tc.agent("reader")
        try:
            a.call(a.claim("deploy"))
        except Crash as exc:
            out.append(f"crash window: {exc}")
        status = reader.call(reader.step_status("deploy"))
        keys = tc.bucket.list_keys("steps/deploy/")
        out.append(f"crash window: stored {keys}; step-status says {status[0]} by {status[1]}")
        try:
            reader.call(reader.claim("deploy"))
        except TracecraftError as exc:
            out.append(f"crash window: a second claim fails: {exc}")
    finally:
        store.close()
    return out


if __name__ == "__main__":
    main(__name__)
