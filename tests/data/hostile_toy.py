"""A toy user scenario for tests/test_hostile.py: one agent stepping a modeled wall clock.

Covers: nothing of a design (it runs no design code); it exercises memsim's own edges: the trace, the
agent clock, the object store option and the script hook.
Scenario: agent ``alice`` takes ``steps`` steps ``step_s`` simulated seconds apart and records its wall
clock at each; with a store other than memory it also writes and reads back one object per step. The
bounds of ``step_s`` are deliberately loose (as a careless user's script might set them), so the clock's
own limit is what refuses a step it cannot represent.
"""

from __future__ import annotations

from pydantic import Field

from sim.scenario import Context, main
from sim.scenario import Params as BaseParams

SYSTEM = "tracecraft"
SEED = 5
STORES = ("memory", "moto", "moto-server")


class Params(BaseParams):
    """The toy's parameters."""

    steps: int = Field(3, ge=0, le=10_000_000, description="steps alice takes")
    step_s: float = Field(1.0, gt=0, le=1e300, description="simulated seconds between steps")


def run(ctx: Context) -> list[str]:
    """Step alice's clock; with a store, write and read one object per step."""
    sim, p = ctx.sim, ctx.params
    clock = sim.clock("alice")
    store = ctx.open_store() if ctx.store_kind != "memory" else None
    lines = []
    try:
        for i in range(p.steps):
            sim.run(until=(i + 1) * p.step_s)
            at = clock.iso()
            if store is not None:
                store.put(f"step/{i}", at.encode())
            sim.trace.op("tracecraft", "toy.step", agent="alice", i=i, at=at)
            if i < 3:
                lines.append(f"step {i}: {at}")
    finally:
        if store is not None:
            store.close()
    lines.append(f"{p.steps} steps, last at {clock.iso()}")
    return lines


if __name__ == "__main__":
    main(__name__)
