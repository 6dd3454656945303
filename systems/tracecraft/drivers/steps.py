"""Drivers of the step, handoff and registration claims (fidelity note §3 items 15–19 and 21)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from hypothesis import strategies as st
from pydantic import Field
from typing_extensions import TypedDict

from sim.claims import Verdict
from sim.engine import Simulation
from sim.faults import Crash
from sim.variant import Variant
from systems.tracecraft import faults as fp
from systems.tracecraft import properties as pr
from systems.tracecraft.drivers.common import (
    ERRORS,
    MODEL,
    Gen,
    World,
    advance,
    arm,
    attempt,
    background,
    record,
    system,
)
from systems.tracecraft.model import LEASE_S

# 15 -----------------------------------------------------------------------------------------------
PermanentClaimOp = tuple[
    Literal["claim", "complete", "wait"], Literal["a", "b", ""], Literal["", "force", "blocked", "700", "100"]
]
PermanentClaimExample = Annotated[list[PermanentClaimOp], Field(min_length=3, max_length=7)]


#: What follows a's first claim in :func:`permanent_claim_examples`, in the strategy's order.
PERMANENT_CLAIM_OPS = (
    ("complete", "b", "force"),
    ("complete", "a", "blocked"),
    ("wait", "", "700"),
    ("claim", "b", ""),
    ("complete", "a", ""),
    ("claim", "a", ""),
    ("complete", "b", ""),
    ("wait", "", "100"),
)


def permanent_claim_examples() -> Any:
    """After a claims s1: claims, completes (plain, --force, --blocked) by a and b, and waits."""
    return st.lists(st.sampled_from(PERMANENT_CLAIM_OPS), min_size=2, max_size=6).map(
        lambda xs: [("claim", "a", ""), *xs]
    )


def permanent_claim(sim: Simulation, ops: Any, variant: Variant, world: World = MODEL) -> Verdict:
    tc = system(world, sim, variant)
    agents = {n: tc.agent(n) for n in ("a", "b")}
    forced_by: str | None = None
    overridden: str | None = None  # the claim owner whose step another agent forced
    claimed_since_force: set[str] = set()
    last_claim_at: float | None = None
    for kind, who, arg in ops:
        if kind == "wait":
            advance(sim, int(arg))
            continue
        c = agents[who]
        if kind == "claim":
            status = tc.bucket.get_json("steps/s1/status.json") or {}
            owner = (tc.bucket.get_json("steps/s1/claim.json") or {}).get("agent")
            expired = last_claim_at is not None and sim.now - last_claim_at > LEASE_S and owner != who
            ok, msg = attempt(c, c.claim("s1"))
            if ok:
                last_claim_at = sim.now
                claimed_since_force.add(who)
            elif owner is None:
                return Verdict.violated(f"{who} cannot claim the unclaimed step: {msg}")
            elif expired and status.get("status") != "complete":
                return Verdict.violated(f"{who} cannot take over a claim idle for > {LEASE_S} s: {msg}")
            continue
        force = arg.startswith("force")
        owner = (tc.bucket.get_json("steps/s1/claim.json") or {}).get("agent")
        ok, msg = attempt(c, c.complete("s1", force=force, blocked=arg.endswith("blocked")))
        if not ok and owner == who:
            return Verdict.violated(f"the claim owner {who} cannot complete its step: {msg}")
        if ok and force:
            forced_by, claimed_since_force = who, set()
            overridden = owner if owner not in (None, who) else None
            last_claim_at = sim.now
        elif ok and overridden == who and who not in claimed_since_force:
            return Verdict.violated(
                f"the original owner {who} overwrote the result {forced_by} forced, without a new claim"
            )
    return Verdict.ok()


# 16 -----------------------------------------------------------------------------------------------
CompletedStepRegressesExample = Annotated[
    list[tuple[Literal["claim", "complete"], Literal["a", "b"]]], Field(max_length=6)
]


def completed_step_regresses_examples() -> Any:
    op = st.tuples(st.sampled_from(["claim", "complete"]), st.sampled_from(["a", "b"]))
    return st.lists(op, max_size=6)


def completed_step_regresses(sim: Simulation, ops: Any, variant: Variant, world: World = MODEL) -> Verdict:
    tc = system(world, sim, variant)
    agents = {n: tc.agent(n) for n in ("a", "b")}
    for kind, who in ops:
        c = agents[who]
        before = c.call(c.step_status("s1"))[0]
        owner = (tc.bucket.get_json("steps/s1/claim.json") or {}).get("agent")
        ok, msg = attempt(c, c.claim("s1") if kind == "claim" else c.complete("s1"))
        served = owner is None and before != "complete" if kind == "claim" else owner in (None, who)
        if served and not ok:  # claiming a free step, completing one's own or an unclaimed step
            return Verdict.violated(f"{who}'s {kind} of s1 ({before}, claimed by {owner}) was refused: {msg}")
        after = c.call(c.step_status("s1"))[0]
        if kind == "claim" and before == "complete" and after != "complete":
            return Verdict.violated(f"{who}'s claim turned a complete step back into {after}")
    return Verdict.ok()


# 17 -----------------------------------------------------------------------------------------------
STATES = ("complete", "blocked", "needs_review")


class StatusBeforeHandoffExample(TypedDict):
    states: Annotated[
        list[tuple[Literal["complete", "blocked", "needs_review"], bool]], Field(min_length=1, max_length=4)
    ]
    poll_at: Annotated[list[Annotated[int, Field(ge=0, le=10)]], Field(max_length=3)]


def status_before_handoff_examples() -> Any:
    return record(
        {
            # (state, crash): a's successive ``complete`` calls; crash: a dies inside that call, between
            # its two PUTs (the first such call ends the worker)
            "states": st.lists(
                st.sampled_from([(state, crash) for crash in (False, True) for state in STATES]),
                min_size=1,
                max_size=4,
            ),
            "poll_at": st.lists(st.integers(0, 10), max_size=3),
        }
    )


def status_before_handoff(sim: Simulation, ex: Any, variant: Variant, world: World = MODEL) -> Verdict:
    crash_at = next((n + 1 for n, (_, crash) in enumerate(ex["states"]) if crash), 0)
    if crash_at:
        point = fp.COMPLETE_AFTER_HANDOFF if variant.has("handoff-first") else fp.COMPLETE_AFTER_STATUS
        arm(sim, [f"crash@{point}#{crash_at}"])
    tc = system(world, sim, variant, latency=1.0)
    a, w = tc.agent("a"), tc.agent("w")
    a.call(a.claim("s1"))
    seen: list[tuple[Any, Any]] = []
    acked: list[str] = []  # states of the completes that returned
    ended: list[tuple[str, str]] = []  # (how the worker ended, its state): crashed or refused

    def worker() -> Gen:
        for n, (state, _) in enumerate(ex["states"]):
            try:
                yield from a.complete(
                    "s1", note=f"n{n}", blocked=state == "blocked", needs_review=state == "needs_review"
                )
                acked.append(state)
            except Crash:
                ended.append(("crashed", state))
                return  # the process died
            except ERRORS as exc:
                ended.append((f"refused: {exc}", state))
                return

    def waiter() -> Gen:
        for t in [*sorted(ex["poll_at"]), 100]:
            yield sim.timeout(max(0, t - sim.now))
            yield from w._rt()
            status = tc.bucket.get_json("steps/s1/status.json") or {}
            ref = status.get("handoff")
            yield from w._rt()
            handoff = tc.bucket.get_json(f"steps/s1/handoffs/{ref}.json" if ref else "steps/s1/handoff.json")
            seen.append((status, handoff))

    sim.process(worker())
    sim.process(waiter())
    sim.run()
    if ended and ended[0][0].startswith("refused"):
        return Verdict.violated(f"the claim owner's complete --{ended[0][1]} was {ended[0][0]}")
    final = (seen[-1][0] or {}).get("status")
    allowed = {acked[-1] if acked else "in_progress"} | {s for how, s in ended if how == "crashed"}
    if final not in allowed:
        return Verdict.violated(f"after the worker's completes {acked} the step reads {final}")
    for status, handoff in seen:
        if status.get("status") != "complete":
            continue
        if handoff is None:
            return Verdict.violated("a waiter saw status complete while the handoff was missing")
        if handoff.get("state") != "complete":
            return Verdict.violated(
                f"a waiter saw status complete with a stale handoff ({handoff.get('state')})"
            )
    return Verdict.ok()


# 18 -----------------------------------------------------------------------------------------------
HandoffNoConsumerExample = Annotated[
    list[tuple[Literal["", "use the cache", "see report.md"], Literal["b", "c"]]],
    Field(min_length=1, max_length=3),
]


def handoff_no_consumer_examples() -> Any:
    step = st.tuples(st.sampled_from(["", "use the cache", "see report.md"]), st.sampled_from(["b", "c"]))
    return st.lists(step, min_size=1, max_size=3)


def handoff_no_consumer(sim: Simulation, steps: Any, variant: Variant, world: World = MODEL) -> Verdict:
    tc = system(world, sim, variant)
    a = tc.agent("a")
    deliveries = []
    for i, (note, nxt) in enumerate(steps):
        sid = f"s{i}"
        a.call(a.claim(sid))
        attempt(a, a.complete(sid, note=note, to=nxt))
        reader = tc.agent(nxt)
        ok, received = attempt(reader, reader.wait_for([sid]))
        handoffs = received.values() if ok else []
        text = " ".join(str(h.get("note")) for h in handoffs if h) + " ".join(reader.stdout)
        if note:
            deliveries.append((f"{sid} note to {nxt}", note in text))
    return pr.check_delivered(deliveries)


# 19 -----------------------------------------------------------------------------------------------
RegistrationNotLivenessExample = Annotated[
    list[tuple[Literal["a", "b"], Literal["claim", "send", "set"], Literal[0, 60, 250, 400]]],
    Field(max_length=5),
]


def registration_not_liveness_examples() -> Any:
    op = st.tuples(
        st.sampled_from(["a", "b"]),
        st.sampled_from(["claim", "send", "set"]),
        st.sampled_from([0, 60, 250, 400]),
    )
    return st.lists(op, max_size=5)


def registration_not_liveness(sim: Simulation, ops: Any, variant: Variant, world: World = MODEL) -> Verdict:
    tc = system(world, sim, variant)
    agents = {n: tc.agent(n) for n in ("a", "b")}
    for c in agents.values():
        c.call(c.init())
    last: dict[str, float] = {"a": 0.0, "b": 0.0}
    for n, (who, what, wait) in enumerate(ops):
        advance(sim, wait)
        c = agents[who]
        cmd = (
            c.claim(f"s{n}")
            if what == "claim"
            else c.send("a", "x")
            if what == "send"
            else c.memory_set("k", "v")
        )
        attempt(c, cmd)
        last[who] = sim.now
    advance(sim, 30)
    obs = tc.agent("observer")
    active = [n for n, t in last.items() if sim.now - t <= 300]
    return pr.check_not_stale(obs.call(obs.agents()), active)


# 21 -----------------------------------------------------------------------------------------------
class HfRacyClaimsExample(TypedDict):
    gaps: Annotated[list[Annotated[float, Field(ge=0.0, le=2.0)]], Field(min_length=1, max_length=4)]
    latency: Annotated[float, Field(ge=0.25, le=1.0)]


def hf_racy_claims_examples() -> Any:
    """Claimants start *gaps* seconds after one another (2.0 s first: the staggered control)."""
    return record(
        {
            "gaps": st.lists(st.sampled_from([2.0, 1.0, 0.5, 0.0]), min_size=1, max_size=4),
            "latency": st.sampled_from([0.25, 1.0]),
        }
    )


def hf_racy_claims(sim: Simulation, ex: Any, variant: Variant, world: World = MODEL) -> Verdict:
    tc = system(world, sim, variant, backend="hf", latency=ex["latency"])
    out: dict[Any, Any] = {}
    starts = [0.0]
    for gap in ex["gaps"]:
        starts.append(starts[-1] + gap)
    for i, t in enumerate(starts):
        c = tc.agent(f"agent{i}")
        background(sim, c.claim("s1"), out, c.agent_id, t)
    sim.run()
    owner = (tc.bucket.get_json("steps/s1/claim.json") or {}).get("agent")
    return pr.check_single_winner({k: v[0] for k, v in out.items()}, owner)
