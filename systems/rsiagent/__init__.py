"""RSIAgent: a phase-gated, Actor-owned memory bank admitted by a silent audit, journaled and installed by
rename, plus the Actor's folded WORK LOG, stalled restart and the Verifier's substantive replay.

Provenance: AetherLabsAI/RSIAgent. The report (seed 003) cites revision 4d7ef437, which could not be read;
the fidelity note describes revisions e8e8c220, 57c8ac28 and 586733a8, identical for transport, audit,
journal, install, fold and resume. Covered: ``explore/commit.py`` (push/pull, silent audit, journal,
staged install, ``write_memory``), the phase sequence of ``evolve_practice`` / ``_promote_learning``,
``evolve_parallel_phase1`` waves, curriculum notes and the ``none`` ablation, OSWorld/ALE attachment,
``core/loop.py`` folding and ``run_with_resume``, ``core/verifier.py`` checkpoint/replay/scratch and
``llm/client.py`` durable images. Where the note and the report disagree the note wins (see
``systems.rsiagent.fidelity.DIFFERENCES``).
"""

from systems.rsiagent.model import (
    ActorLoop,
    GuestVM,
    Host,
    ProjectSpec,
    Variant,
    cap_worklog,
    digest_lines,
    effective_keep,
    evolve_parallel_phase1,
    evolve_practice_project,
    fold_input,
    inventory_listing,
    shingles,
    silent_audit,
    tree_sha256,
)

__all__ = [
    "ActorLoop",
    "GuestVM",
    "Host",
    "ProjectSpec",
    "Variant",
    "cap_worklog",
    "digest_lines",
    "effective_keep",
    "evolve_parallel_phase1",
    "evolve_practice_project",
    "fold_input",
    "inventory_listing",
    "shingles",
    "silent_audit",
    "tree_sha256",
]
