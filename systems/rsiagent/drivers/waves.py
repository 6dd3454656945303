"""Drivers of the parallel-wave claims (RT-RTE-learning-admission annotation)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal

from hypothesis import strategies as st
from pydantic import Field
from typing_extensions import TypedDict

from sim.claims import Verdict
from sim.engine import Simulation
from sim.variant import Variant
from systems.rsiagent import properties as props
from systems.rsiagent.drivers.common import (
    INSTRUCTION,
    NAMES,
    OTHER_TASK,
    fact,
    new_host,
)
from systems.rsiagent.model import (
    Host,
    ProjectSpec,
    bank_facts,
    evolve_parallel_phase1,
)
from systems.rsiagent.policies import (
    ActorWork,
    Distiller,
)

# -- 4a/4b. waves: lost update (counterfactual) and stale rewrite (upstream residue) -----------------------
WAVE_NAMES = NAMES[:2]
#: What a branch's distillation does to each bank file ("keep" first so examples shrink towards no-ops).
#: ``rewrite`` rewrites a file the Actor read during work from its (stale) context, plus a new line.
WAVE_ACTIONS = ("keep", "add", "delete")
WAVE_ACTIONS_STALE = ("keep", "add", "rewrite", "delete")


WaveName = Literal["a.md", "b.md"]


class WaveExample(TypedDict):
    """The pre-wave bank's files and, per branch, what its distillation does to each file."""

    initial: Annotated[list[WaveName], Field(max_length=2)]
    branches: Annotated[
        list[dict[WaveName, Literal["keep", "add", "delete"]]], Field(min_length=2, max_length=3)
    ]


class StaleWaveExample(TypedDict):
    """As :class:`WaveExample`, with ``rewrite`` (rewrite a file read during work from that context)."""

    initial: Annotated[list[WaveName], Field(min_length=1, max_length=2)]
    branches: Annotated[
        list[dict[WaveName, Literal["keep", "add", "rewrite", "delete"]]], Field(min_length=2, max_length=3)
    ]


def wave_examples(stale: bool) -> Callable[[], Any]:
    """Branches draw one action per bank file (flat, so each example is cheap to draw and to shrink)."""

    def strategy() -> Any:
        action = st.sampled_from(WAVE_ACTIONS_STALE if stale else WAVE_ACTIONS)
        return st.fixed_dictionaries(
            {
                "initial": st.lists(
                    st.sampled_from(WAVE_NAMES), min_size=1 if stale else 0, max_size=2, unique=True
                ),
                "branches": st.lists(
                    st.fixed_dictionaries({n: action for n in WAVE_NAMES}), min_size=2, max_size=3
                ),
            }
        )

    return strategy


def _run_wave(sim: Simulation, ex: dict[str, Any], host: Host) -> Verdict:
    for i, n in enumerate(ex["initial"]):  # seed the pre-wave canonical bank (setup, not under test)
        host.volume.write(f"{host.CANONICAL}/{n}", fact(900 + i).encode())
    specs = []
    added: list[frozenset[str]] = []
    for k, b in enumerate(ex["branches"]):
        names = sorted(b)
        adds = tuple((n, fact(100 * (k + 1) + j)) for j, n in enumerate(names) if b[n] == "add")
        rewrites = tuple((n, fact(100 * (k + 1) + 50 + j)) for j, n in enumerate(names) if b[n] == "rewrite")
        deletes = tuple(n for n in names if b[n] == "delete")
        specs.append(
            ProjectSpec(
                k + 1,
                INSTRUCTION,
                ActorWork(reads=tuple(n for n, _ in rewrites)),
                distiller=Distiller(add=adds, delete=deletes, rewrite_read=rewrites),
            )
        )
        # a rewrite needs the file in the snapshot (the Actor can only have read an existing file)
        kept = [f for _, f in adds] + [f for (n, f) in rewrites if n in ex["initial"]]
        added.append(frozenset(f.split("=")[0] for f in kept))
    res = evolve_parallel_phase1(sim, host, specs)
    if res.aborted:
        return Verdict.violated(f"wave aborted: {res.aborted}")
    committed = []
    for k, _rec in enumerate(res.commits):
        withdrawn: set[str] = set()
        for j in range(k + 1, len(res.commits)):
            before = res.commits[j].before_bank
            for name in specs[j].distiller.delete:
                withdrawn |= bank_facts({name: before.get(name, b"")})
        committed.append((added[k], frozenset(withdrawn)))
    return props.check_sibling_facts_survive(committed, host.canonical())


def check_wave_lost_update(sim: Simulation, ex: dict[str, Any], variant: Variant) -> Verdict:
    """Facts committed by an earlier branch survive the later branches' whole-tree installs."""
    return _run_wave(sim, ex, new_host(sim, variant))


def check_wave_stale(sim: Simulation, ex: dict[str, Any], variant: Variant) -> Verdict:
    """A branch that rewrites a file from its work-time context does not drop a sibling's committed lines."""
    return _run_wave(sim, ex, new_host(sim, variant))


# -- 13. a partial wave commit -----------------------------------------------------------------------------
class PartialWaveExample(TypedDict):
    """Per branch, whether its distilled bank also quotes another benchmark task (a leak)."""

    leaks: Annotated[list[bool], Field(min_length=1, max_length=4)]


def partial_wave_examples() -> Any:
    return st.fixed_dictionaries({"leaks": st.lists(st.booleans(), min_size=1, max_size=4)})


def check_partial_wave(sim: Simulation, ex: dict[str, Any], variant: Variant) -> Verdict:
    """A wave publishes all its branches (a wave without a leak publishes) or leaves the canonical bank
    unchanged."""
    host = new_host(sim, variant)
    specs = []
    for k, leak in enumerate(ex["leaks"]):
        adds = [(f"b{k}.md", fact(k + 1))] + ([(f"leak{k}.md", OTHER_TASK)] if leak else [])
        specs.append(ProjectSpec(k + 1, INSTRUCTION, ActorWork(), distiller=Distiller(add=tuple(adds))))
    snapshot = host.canonical()
    res = evolve_parallel_phase1(sim, host, specs)
    facts = frozenset(fact(k + 1).split("=")[0] for k in range(len(specs)))
    return props.check_wave_atomic(
        host.canonical(), snapshot, res.outcome_written, facts, not any(ex["leaks"])
    )
