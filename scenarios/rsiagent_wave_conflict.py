"""A four-branch parallel wave with a sibling conflict (RSIAgent ``evolve_parallel_phase1``).

Covers: RT-RTE-learning-admission (wave annotation), MEM-OBJ-memory, MEM-OBJ-memory-journal.

Scenario: the canonical bank holds ``lessons/env.md`` (FACT-0100). Four branches start from that
pre-wave snapshot as concurrent SimPy processes with different work durations, so they finish in
reverse order; all are drained, then commits run in assignment order. Branch 1 appends FACT-0101 to
env.md. Branch 2 read env.md while working and, at its commit, rewrites it from that stale context plus
FACT-0102. Branches 3 and 4 add their own files. Three designs run the same wave: upstream (the latest
canonical bank is pushed into each branch at its serialized commit), the counterfactual that pushes
only at wave start (every later branch's whole-tree install erases its siblings' lessons), and the
``wave-sibling-check`` fix (overwrites of sibling-changed files are merged).
"""

from __future__ import annotations

import json

from sim.engine import Simulation
from sim.scenario import Context, main
from systems.rsiagent.model import (
    Host,
    ProjectSpec,
    Variant,
    atomic_install_memory,
    bank_facts,
    build_corpus,
    evolve_parallel_phase1,
)
from systems.rsiagent.policies import ActorWork, Distiller
from systems.rsiagent.state import SWITCHES

SYSTEM = "rsiagent"
SEED = 11
CORPUS = build_corpus(["Open the quarterly budget spreadsheet and sort the second column by date."])
ROOT = "/home/user/evolution_project"


def specs() -> list[ProjectSpec]:
    return [
        ProjectSpec(
            1,
            f"Project w1 in {ROOT}",
            ActorWork(duration_s=400.0),
            distiller=Distiller(revise=(("lessons/env.md", "locale is C.UTF-8: FACT-0101=teal"),)),
        ),
        ProjectSpec(
            2,
            f"Project w2 in {ROOT}",
            ActorWork(reads=("lessons/env.md",), duration_s=300.0),
            distiller=Distiller(rewrite_read=(("lessons/env.md", "python is 3.11: FACT-0102=gold"),)),
        ),
        ProjectSpec(
            3,
            f"Project w3 in {ROOT}",
            ActorWork(duration_s=200.0),
            distiller=Distiller(add=(("lessons/git.md", "FACT-0103=navy"),)),
        ),
        ProjectSpec(
            4,
            f"Project w4 in {ROOT}",
            ActorWork(duration_s=100.0),
            distiller=Distiller(add=(("lessons/tests.md", "FACT-0104=plum"),)),
        ),
    ]


def run_design(sim: Simulation, variant: Variant) -> tuple[Host, list[str]]:
    host = Host(sim, corpus=CORPUS, variant=variant)
    atomic_install_memory(sim, host, {"lessons/env.md": b"shell is bash: FACT-0100=red"})
    res = evolve_parallel_phase1(sim, host, specs())
    lines = []
    for k, (rec, ch) in enumerate(zip(res.commits, res.changes), start=1):
        touched = {key: v for key, v in ch.items() if v and key != "unchanged"}
        extra = f" conflicts merged: {list(rec.conflicts)}" if rec.conflicts else ""
        lines.append(f"    branch {k}: {rec.outcome} {touched}{extra}")
    facts = sorted(bank_facts(host.canonical()))
    lost = sorted({f"FACT-010{i}" for i in range(5)} - set(facts))
    env = host.canonical().get("lessons/env.md", b"").decode().replace("\n", " | ")
    lines += [
        f"    final facts: {facts}",
        f"    lost: {lost}",
        f"    env.md: {env}",
        f"    outcomes.md written: {res.outcome_written}; state.json: "
        f"{json.loads(host.volume.tree.read_text(host.STATE))['status']}",
    ]
    return host, lines


def run(ctx: Context) -> list[str]:
    sim = ctx.sim
    sim.trace.keep = True  # the summary reads the trace; keep it in memory even when it streams to --out
    out = ["wave of 4 branches from the pre-wave snapshot {lessons/env.md: FACT-0100}"]
    host, lines = run_design(sim, Variant())
    finish = [(o.time, o.agent) for o in sim.trace.data.ops if o.op == "verify"]
    commits = [o.data["episode"] for o in sim.trace.data.ops if o.op == "commit_learning"]
    out.append("  branch verdicts at (simulated s): " + ", ".join(f"{a}@{t:g}" for t, a in finish))
    out.append(f"  commit order (assignment order): {commits}")
    out.append("  upstream (latest canonical pushed at each serialized commit):")
    out += lines
    for title, variant in (
        (
            "counterfactual (canonical pushed only at wave start)",
            SWITCHES.variant(counterfactuals=["push-at-wave-start"]),
        ),
        ("fixed (wave-sibling-check merges sibling-changed files)", SWITCHES.fixed("wave-sibling-check")),
    ):
        other = Simulation(sim.seed)
        _, lines = run_design(other, variant)
        other.close()
        out.append(f"  {title}:")
        out += lines
    out.append(f"  journal episodes (upstream): {[j.episode for j in host.journal_lines()]}")
    return out


if __name__ == "__main__":
    main(__name__)
