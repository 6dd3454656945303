"""Drivers of the mail and inbox-cursor claims (fidelity note §3 items 9–13)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from hypothesis import strategies as st
from pydantic import Field
from typing_extensions import TypedDict

from sim.claims import Verdict
from sim.engine import Simulation
from sim.variant import Variant
from systems.tracecraft import properties as pr
from systems.tracecraft.drivers.common import MODEL, Gen, World, advance, attempt, background, record, system
from systems.tracecraft.model import Tracecraft, validate_recipient
from systems.tracecraft.protocol import TracecraftError


# 9 ------------------------------------------------------------------------------------------------
class SeenCapReplayExample(TypedDict):
    seen_cap: Annotated[int, Field(ge=1, le=6)]
    batches: Annotated[list[Annotated[int, Field(ge=0, le=8)]], Field(min_length=1, max_length=4)]
    gap_s: Literal[1, 100, 400]


def seen_cap_replay_examples() -> Any:
    return record(
        {
            "seen_cap": st.integers(1, 6),
            "batches": st.lists(st.integers(0, 8), min_size=1, max_size=4),
            "gap_s": st.sampled_from([1, 100, 400]),
        }
    )


def seen_cap_replay(sim: Simulation, ex: Any, variant: Variant, world: World = MODEL) -> Verdict:
    tc = system(world, sim, variant, seen_cap=ex["seen_cap"])
    alice, bob = tc.agent("alice"), tc.agent("bob")
    sent: list[str] = []
    shown: list[str] = []
    for n in [*ex["batches"], 0]:
        for i in range(n):
            sent.append(alice.call(alice.send("bob", f"m{i}")))
            advance(sim, 1)
        shown += [m.key for m in bob.call(bob.inbox(new=True))]
        advance(sim, ex["gap_s"])
    return pr.check_exactly_once(sent, shown, "bob")


# 10 -----------------------------------------------------------------------------------------------
def mail_op_choices(
    skews: list[int], extra: tuple[tuple[str, int, int], ...]
) -> tuple[tuple[str, int, int], ...]:
    """The ops :func:`mail_ops` draws from, in its order (the exhaustive scope enumerates the same)."""
    return (
        ("send", 0, 0),
        *extra[:1],
        *(("send", i, 0) for i in range(1, len(skews))),
        *extra[1:],
        ("wait", 0, 10),
        ("wait", 0, 700),
    )


def mail_ops(skews: list[int], extra: tuple[tuple[str, int, int], ...]) -> Any:
    """Lists of (kind, sender, arg), one draw per op: a send by each sender (``("send", 0, d)``: d
    seconds between stamping and the PUT), waits, and *extra*; bob runs ``inbox --new`` after every op."""
    return st.lists(st.sampled_from(mail_op_choices(skews, extra)), min_size=2, max_size=6)


MailOp = tuple[
    Literal["send", "wait", "junk"], Annotated[int, Field(ge=0, le=3)], Literal[0, 10, 120, 350, 700]
]


class SkewHidesMailExample(TypedDict):
    skews: tuple[Literal[0], Literal[-120], Literal[-600], Literal[-900]]
    ops: Annotated[list[MailOp], Field(min_length=2, max_length=6)]


def skew_hides_mail_examples() -> Any:
    """Senders s1-s3 run 2, 10 and 15 minutes slow; s0 may send late within the grace window (120 s
    between stamping and the PUT), and bob may wait inside that delay. A PUT later than the grace window
    is upstream's documented limit (see the claim's intent), so it is not drawn."""
    return record({"skews": st.just(SKEW_SKEWS), "ops": mail_ops(SKEW_SKEWS, SKEW_EXTRA)})


SKEW_SKEWS = [0, -120, -600, -900]
#: A late arrival within the grace (120 s between stamping and the PUT), a wait inside its delay.
SKEW_EXTRA = (("send", 0, 120), ("wait", 0, 350))


def mail_run(sim: Simulation, tc: Tracecraft, ex: Any) -> Verdict:
    """Senders with skewed clocks; bob polls ``inbox --new`` after every op (an agent's per-turn check) and
    once more at the end; every message sent must be shown exactly once."""
    senders = []
    for i, skew in enumerate(ex["skews"]):
        sim.clock(f"s{i}").skew(skew)
        senders.append(tc.agent(f"s{i}"))
    bob = tc.agent("bob")
    out: dict[Any, Any] = {}
    shown: list[str] = []
    for n, (kind, who, arg) in enumerate(ex["ops"]):
        if kind == "send":
            background(sim, senders[who].send("bob", f"msg{n}", delay=arg), out, n)
            advance(sim, 1)
        elif kind == "junk":  # a leaf written directly through the backend API, 19 nines
            key = "messages/bob/9999999999999999999_x_00000000.json"
            tc.bucket.put_json(key, {"from": "x", "to": "bob", "message": "junk", "sent_at": "9999"})
        else:
            advance(sim, arg)
        shown += [m.key for m in bob.call(bob.inbox(new=True))]
    sim.run()
    advance(sim, 1)
    shown += [m.key for m in bob.call(bob.inbox(new=True))]
    sent = [v[1] for v in out.values() if v[0]]
    return pr.check_exactly_once(sent, shown, "bob")


def skew_hides_mail(sim: Simulation, ex: Any, variant: Variant, world: World = MODEL) -> Verdict:
    return mail_run(sim, system(world, sim, variant), ex)


# 11 -----------------------------------------------------------------------------------------------
class FutureKeyBlindsExample(TypedDict):
    skews: tuple[Literal[0], Literal[30], Literal[3600]]
    ops: Annotated[list[MailOp], Field(min_length=2, max_length=6)]


def future_key_blinds_examples() -> Any:
    return record({"skews": st.just(FUTURE_SKEWS), "ops": mail_ops(FUTURE_SKEWS, FUTURE_EXTRA)})


FUTURE_SKEWS = [0, 30, 3600]
#: A direct 9999… leaf; an arrival late within the grace.
FUTURE_EXTRA = (("junk", 0, 0), ("send", 0, 120))


def future_key_blinds(sim: Simulation, ex: Any, variant: Variant, world: World = MODEL) -> Verdict:
    return mail_run(sim, system(world, sim, variant), ex)


# 12 -----------------------------------------------------------------------------------------------
class SharedCursorReshowExample(TypedDict):
    send_every: Annotated[int, Field(ge=2, le=20)]
    r1_every: Annotated[int, Field(ge=2, le=20)]
    r2_every: Annotated[int, Field(ge=2, le=20)]
    r2_pause: Annotated[int, Field(ge=0, le=20)]


def shared_cursor_reshow_examples() -> Any:
    every = st.integers(2, 20)
    return record(
        {
            "send_every": every,
            "r1_every": every,
            "r2_every": every,
            "r2_pause": st.integers(0, 20),
        }
    )


def shared_cursor_reshow(sim: Simulation, ex: Any, variant: Variant, world: World = MODEL) -> Verdict:
    """For 60 s alice sends periodically while two readers with bob's id run --new periodically."""
    horizon = 60
    tc = system(world, sim, variant, latency=1.0)
    alice = tc.agent("alice")
    readers = {r: tc.agent("bob", reader=r) for r in ("r1", "r2")}
    readers["r2"].cursor_pause = ex["r2_pause"]  # a reader suspended between display and cursor write
    shown: dict[str, list[str]] = {"r1": [], "r2": []}
    sent: list[str] = []

    def sender() -> Gen:
        n = 0
        while sim.now < horizon:
            sent.append((yield from alice.send("bob", f"m{n}")))
            n += 1
            yield sim.timeout(ex["send_every"])

    def reader(r: str) -> Gen:
        while sim.now < horizon:
            yield sim.timeout(ex[f"{r}_every"])
            shown[r] += [m.key for m in (yield from readers[r].inbox(new=True))]

    sim.process(sender())
    for r in readers:
        sim.process(reader(r))
    sim.run()
    for r, c in readers.items():  # each reader reads once more after the sender stopped
        shown[r] += [m.key for m in c.call(c.inbox(new=True))]
    return pr.check_exactly_once_per_reader(sent, shown)


# 13 -----------------------------------------------------------------------------------------------
AGENT_IDS = ("alice", "team/x", "_x", "a_b", "x/", "c.d")


UnvalidatedAgentIdExample = Annotated[
    list[tuple[Literal[AGENT_IDS], Literal["send", "set"]]], Field(max_length=5)  # type: ignore[valid-type]
]


def _valid(agent_id: str) -> bool:
    try:
        return validate_recipient(agent_id, what="Agent id") == agent_id
    except TracecraftError:
        return False


def unvalidated_agent_id_examples() -> Any:
    return st.lists(st.tuples(st.sampled_from(AGENT_IDS), st.sampled_from(["send", "set"])), max_size=5)


def unvalidated_agent_id(sim: Simulation, ops: Any, variant: Variant, world: World = MODEL) -> Verdict:
    tc = system(world, sim, variant)
    bob = tc.agent("bob")
    deliveries = []
    for n, (aid, what) in enumerate(ops):
        c = tc.agent(aid)
        if what == "send":
            ok, key = attempt(c, c.send("bob", f"hi{n}"))
            if _valid(aid):  # a valid agent id (the recipient rules) must be served
                deliveries.append((f"{aid} send accepted", ok))
            if ok:
                lines = bob.call(bob.inbox())
                deliveries.append((f"{aid} send", any(m.key == key for m in lines)))
        else:
            ok, _ = attempt(c, c.memory_set("k", f"v{n}"))
            if _valid(aid):
                deliveries.append((f"{aid} memory set accepted", ok))
            if ok:
                hok, hist = attempt(bob, bob.memory_history("k", limit=0))
                deliveries.append((f"{aid} memory set", hok and any(h.endswith(f": v{n}") for h in hist)))
    return pr.check_delivered(deliveries)
