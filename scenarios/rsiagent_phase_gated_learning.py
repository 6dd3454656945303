"""Phase-gated learning of one project, then a leaking lesson (RSIAgent).

Covers: RT-RTE-task-execution, RT-RTE-learning-admission, MEM-OBJ-memory, MEM-OBJ-memory-journal,
MEM-OBJ-learning-diagnosis, RT-BAP-actor-method.

Scenario: project 1 runs the whole phase sequence on a fresh machine. While working, the Actor writes a
lesson into ~/.memory (FACT-0001); the Verifier says PASS; the reset pushes the canonical bank again, so
distillation sees an empty bank and records a different lesson (FACT-0002) and a note quoting the run's
target direction (admitted: the silent audit authorizes the target); the learning diagnosis that follows
reconciliation also edits the bank (FACT-0003), and that edit is pulled and installed. The commit
journals ep001.tgz before the staged install. Project 2's Actor sees the promoted bank as names and sizes
only; its distillation quotes another benchmark task verbatim, so the silent audit rejects the whole
candidate and the run is quarantined with the bank unchanged and no journal line.
"""

from __future__ import annotations

import json

from pydantic import Field, field_validator

from sim import scenario
from sim.scenario import Context, main
from systems.rsiagent.model import (
    Host,
    ProjectSpec,
    bank_facts,
    build_corpus,
    evolve_practice_project,
    inventory_listing,
    tree_sha256,
)
from systems.rsiagent.policies import ActorWork, Diagnosis, Distiller, Reconciler, VerifierPolicy
from systems.rsiagent.state import FIXES, SWITCHES

SYSTEM = "rsiagent"
SEED = 3
OTHER_TASKS = [
    "Open the quarterly budget spreadsheet and sort the second column by date in descending order.",
    "In the terminal, find every log file larger than ten megabytes under var log and compress it.",
]
#: The run's target direction: one of the benchmark's instructions, so it is in the corpus too.
TARGET = "Count how often each word appears in the report file and save the ten most frequent words."
INSTRUCTION = "Build a word-frequency tool under /home/user/evolution_project with a --top flag."


class Params(scenario.Params):
    """Which fixes to switch on (default: the faithful design)."""

    fixes: list[str] = Field(
        default_factory=list, max_length=len(FIXES), description="fix names (systems.rsiagent.state.FIXES)"
    )

    @field_validator("fixes")
    @classmethod
    def _known_fixes(cls, v: list[str]) -> list[str]:
        unknown = sorted(set(v) - set(FIXES))
        if unknown:
            raise ValueError(f"unknown RSIAgent fix {', '.join(unknown)}: expected one of {', '.join(FIXES)}")
        return v


def run(ctx: Context) -> list[str]:
    sim = ctx.sim
    sim.trace.keep = True  # the summary reads the trace; keep it in memory even when it streams to --out
    host = Host(
        sim,
        corpus=build_corpus([*OTHER_TASKS, TARGET]),
        variant=SWITCHES.fixed(*ctx.params.fixes),
        target=TARGET,
    )
    out = [
        f"corpus: {len(host.corpus)} shingles from {len(OTHER_TASKS)} other tasks and the target; "
        f"fixes: {ctx.params.fixes}"
    ]

    p1 = ProjectSpec(
        1,
        INSTRUCTION,
        ActorWork(
            lessons=(("work-notes.md", "Tokenize on \\W+ first: FACT-0001=teal"),),
            observed=("FACT-0001=teal",),
            candidate="wordfreq.py --top 10",
        ),
        VerifierPolicy("PASS", fenced_decoy=True),
        Distiller(
            add=(
                ("lessons/tooling.md", "Use collections.Counter: FACT-0002=amber"),
                ("lessons/target.md", "The target: " + TARGET),
            )
        ),
        Reconciler(),
        Diagnosis("Bottleneck: tokenization.", bank_edits=(("lessons/diagnosis.md", "FACT-0003=plum"),)),
    )
    rec = evolve_practice_project(sim, host, p1)
    work = next(o for o in sim.trace.data.ops if o.op == "actor_work")
    distill = next(r for r in sim.trace.data.requests if r.route == "actor.distill")
    seen = next(o for o in sim.trace.data.ops if o.op == "distill").data["visible"]
    why = (
        "work delta carried in as a draft"
        if host.variant.has("draft-work-delta")
        else "work-phase edits discarded"
    )
    lines = [(j.episode, j.files, j.bytes, j.meta["terminal_outcome"]) for j in host.journal_lines()]
    out += [
        "project 1:",
        f"  work phase wrote {work.data['work_lessons']} (facts FACT-0001)",
        f"  verdict: {rec.verdict} (a decoy VERDICT inside a code fence is ignored)",
        f"  distillation's bank after the reset: {seen} ({why})",
        f"  distillation's Actor context holds {sorted(distill.fact_ids)} (not re-recorded)",
        f"  outcome: {rec.outcome}; committed bank:",
        *[f"    {line}" for line in inventory_listing(rec.after_bank).splitlines()],
        f"  committed facts: {sorted(bank_facts(rec.after_bank))}",
        "  lessons/target.md quotes the target direction verbatim: admitted (the audit authorizes the "
        f"target): {'lessons/target.md' in rec.after_bank}",
        f"  work-phase lesson FACT-0001 lost: {'FACT-0001' not in bank_facts(rec.after_bank)}",
        f"  diagnosis-phase edit FACT-0003 promoted: {'FACT-0003' in bank_facts(rec.after_bank)}",
        f"  journal (episode, files, bytes, outcome): {lines}; kind {host.journal_lines()[0].meta['kind']}",
        f"  tree sha256: {tree_sha256(rec.after_bank)[:16]}",
    ]
    ops = [o.op for o in sim.trace.data.ops if o.op in ("journal", "atomic_install_memory")]
    out.append(f"  write order: {' -> '.join(ops)}")

    p2 = ProjectSpec(
        2,
        INSTRUCTION,
        ActorWork(candidate="wordfreq.py --top 5"),
        VerifierPolicy("FAIL"),
        Distiller(add=(("lessons/logs.md", "Seen before: " + OTHER_TASKS[1]),)),
    )
    rec2 = evolve_practice_project(sim, host, p2)
    charter = [r for r in sim.trace.data.requests if r.route == "actor.work"][-1]
    out += [
        "project 2:",
        f"  actor charter: {charter.exact_tokens} tokens, facts in it: {sorted(charter.fact_ids)}",
        f"  verdict: {rec2.verdict}; outcome: {rec2.outcome}; run state: {host.state}",
        f"  rejected files: {host.boundary_log[0]['file']} (hits: {len(host.boundary_log[0]['hits'])})",
        f"  bank unchanged: {host.canonical() == rec.after_bank}; journal lines: {len(host.journal_lines())}",
        f"  state.json: {json.loads(host.volume.tree.read_text(host.STATE))['status']}",
        f"  model requests: {len(sim.trace.data.requests)}; trace ops: {len(sim.trace.data.ops)}",
    ]
    return out


if __name__ == "__main__":
    main(__name__)
