"""Drivers of the shared-memory claims (fidelity note §3 item 14 and the history-immutability claim)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from hypothesis import strategies as st
from pydantic import Field
from typing_extensions import TypedDict

from sim.claims import Verdict
from sim.engine import Simulation
from sim.variant import Variant
from systems.tracecraft import properties as pr
from systems.tracecraft.drivers.common import ERRORS, MODEL, Gen, World, arm, attempt, record, system


# 14 -----------------------------------------------------------------------------------------------
class HistoryNewestNotLiveExample(TypedDict):
    sets: Annotated[
        list[tuple[Literal[0, 1], Annotated[int, Field(ge=0, le=4)]]], Field(min_length=1, max_length=4)
    ]
    skew_b: Literal[0, 5, -5]
    crash_at: Annotated[int, Field(ge=0, le=4)]


def history_newest_not_live_examples() -> Any:
    return record(
        {
            "sets": st.lists(st.tuples(st.sampled_from([0, 1]), st.integers(0, 4)), min_size=1, max_size=4),
            "skew_b": st.sampled_from([0, 0, 5, -5]),
            "crash_at": st.integers(0, 4),
        }
    )


def history_newest_not_live(sim: Simulation, ex: Any, variant: Variant, world: World = MODEL) -> Verdict:
    if ex["crash_at"]:
        arm(sim, [f"crash@tracecraft.memory_set.after_snapshot#{ex['crash_at']}"])
    sim.clock("b").skew(ex["skew_b"])
    tc = system(world, sim, variant, latency=1.0)
    agents = [tc.agent("a"), tc.agent("b")]
    sets: list[tuple[str, float, float, bool]] = []

    def setter(who: int, at: float, value: str) -> Gen:
        yield sim.timeout(at)
        start = sim.now
        try:
            yield from agents[who].memory_set("k", value)
            sets.append((value, start, sim.now, True))
        except ERRORS:
            sets.append((value, start, sim.now, False))  # crashed between its two writes

    for n, (who, at) in enumerate(ex["sets"]):
        sim.process(setter(who, at, f"v{n}"))
    sim.run()
    reader = tc.agent("r")
    ok_live, live = attempt(reader, reader.memory_get("k"))
    ok_hist, hist = attempt(reader, reader.memory_history("k", limit=1))
    newest = hist[-1].split(": ", 1)[1] if ok_hist and hist else None
    return pr.check_register(sets, live if ok_live else None, newest)


# 14b ----------------------------------------------------------------------------------------------
HistoryNotImmutableExample = Annotated[
    list[tuple[Literal["set", "direct_put", "direct_delete"], Literal[0, 1, 2]]], Field(max_length=6)
]


def history_not_immutable_examples() -> Any:
    # (op, i): a CLI ``memory set k``, or a direct backend put/delete of the i-th listed snapshot.
    ops = [(kind, i) for i in range(3) for kind in ("set", "direct_put", "direct_delete")]
    return st.lists(st.sampled_from(ops), max_size=6)


def history_not_immutable(sim: Simulation, ops: Any, variant: Variant, world: World = MODEL) -> Verdict:
    tc = system(world, sim, variant)
    a = tc.agent("a")
    before: list[str] = []
    for n, (kind, i) in enumerate(ops):
        snaps = sorted(k for k in tc.bucket.list_keys("memory/_history/k/"))
        added = None
        if kind == "set":
            ok, _ = attempt(a, a.memory_set("k", f"v{n}"))
            added = f": v{n}" if ok else None
        elif snaps:
            key = snaps[i % len(snaps)]
            if kind == "direct_put":
                forged = {"key": "k", "value": "forged", "set_by": "a", "set_at": "x"}
                attempt(a, a.store_put_json(key, forged))
            else:
                attempt(a, a.store_delete(key))
        ok, after = attempt(a, a.memory_history("k", limit=0))
        after = after if ok else []
        verdict = pr.check_history_append_only(before, after, added)
        if not verdict.holds:
            return verdict
        before = after
    return Verdict.ok()
