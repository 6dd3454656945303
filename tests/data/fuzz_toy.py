"""A toy user scenario for the fuzzers (tests/test_fuzz_*.py): small, with parameters of every kind.

Covers: nothing of a design (it runs no design code); it gives the fuzzers a scenario whose parameters
have every type a scenario declares (an integer, floats, a literal, a bool, a tuple, a string) and tight
bounds, so no fuzzed value makes a run long.
Scenario: agent ``alice`` takes ``steps`` steps ``step_s`` simulated seconds apart; the other parameters
are echoed in the summary.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from sim.scenario import Context, main
from sim.scenario import Params as BaseParams

SYSTEM = "tracecraft"
SEED = 5
STORES = ("memory",)


class Params(BaseParams):
    """The toy's parameters (each bounded)."""

    steps: int = Field(2, ge=0, le=20, description="steps alice takes")
    step_s: float = Field(1.0, gt=0, le=1e6, description="simulated seconds between steps")
    ratio: float = Field(0.5, ge=0, le=10, description="echoed")
    mode: Literal["a", "b"] = Field("a", description="echoed")
    flag: bool = Field(False, description="echoed")
    tags: tuple[int, ...] = Field((1, 2), max_length=4, description="echoed")
    name: str = Field("x", max_length=20, description="echoed")


def run(ctx: Context) -> list[str]:
    """Step alice's clock and echo the parameters."""
    sim, p = ctx.sim, ctx.params
    clock = sim.clock("alice")
    for i in range(p.steps):
        sim.run(until=(i + 1) * p.step_s)
        sim.trace.op("tracecraft", "toy.step", agent="alice", i=i, at=clock.iso())
    return [f"{p.steps} steps, last at {clock.iso()}", f"{p.ratio} {p.mode} {p.flag} {p.tags} {p.name!r}"]


if __name__ == "__main__":
    main(__name__)
