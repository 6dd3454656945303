"""Driver of the artifact-address claim (fidelity note §3 item 20b)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from hypothesis import strategies as st
from pydantic import Field

from sim.claims import Verdict
from sim.engine import Simulation
from sim.variant import Variant
from systems.tracecraft.drivers.common import MODEL, World, attempt, system

# 20b ----------------------------------------------------------------------------------------------
ArtifactCollisionExample = Annotated[
    list[tuple[Literal[None, "shared", "A.1", "a-1", "a.1", "s2"], Literal["r.txt", "plan.md"]]],
    Field(min_length=1, max_length=5),
]


def artifact_collision_examples() -> Any:
    steps = [None, "shared", "A.1", "a-1", "a.1", "s2"]
    uploads = [(step, name) for name in ("r.txt", "plan.md") for step in steps]
    return st.lists(st.sampled_from(uploads), min_size=1, max_size=5)


def artifact_collision(sim: Simulation, uploads: Any, variant: Variant, world: World = MODEL) -> Verdict:
    tc = system(world, sim, variant)
    a = tc.agent("a")
    latest: dict[tuple[Any, str], bytes] = {}
    for n, (step, name) in enumerate(uploads):
        body = f"upload {n}".encode()
        a.call(a.artifact_upload(name, body, step))
        latest[(step, name)] = body
    for (step, name), body in latest.items():
        ok, got = attempt(a, a.artifact_download(name, step))
        if not ok or got != body:
            return Verdict.violated(
                f"{name} of {step or 'the pool'} was overwritten by another address: {got!r}"
            )
    return Verdict.ok()
