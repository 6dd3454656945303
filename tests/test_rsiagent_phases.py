"""The phase-gated project, curriculum notes, the none ablation, benchmark attachment and parallel waves
(RT-RTE-task-execution, RT-RTE-learning-admission, MEM-OBJ-learning-diagnosis, MEM-OBJ-curriculum-notes,
RT-RTE-curriculum-search)."""

import json

import pytest

from sim.engine import Simulation
from sim.faults import FaultPlan
from systems.rsiagent import faults as fp
from systems.rsiagent.model import (
    OSWORLD_MODE,
    FrozenMemoryUploadError,
    GuestVM,
    Host,
    PracticeInfrastructureError,
    ProjectSpec,
    Variant,
    ale_attach_memory,
    build_corpus,
    curriculum_turn,
    evolve_parallel_phase1,
    evolve_practice,
    evolve_practice_project,
    fence_grams,
    manifest,
    memory_revisit,
    osworld_attach_memory,
    parse_wave_handoff,
    read_curriculum_notes,
    tree_sha256,
    wave_resume_allowed,
)
from systems.rsiagent.policies import (
    ActorWork,
    CurriculumTurn,
    Diagnosis,
    Distiller,
    Reconciler,
    VerifierPolicy,
)
from systems.rsiagent.state import SWITCHES

LEAK = "open the quarterly budget spreadsheet and sort the second column"
TARGET = "Record the team standup in the video editor and export it as an mp4 file to the desktop folder."
CORPUS = build_corpus([LEAK, TARGET])
INSTR = "Write a word counter under /home/user/evolution_project."


def _host(sim: Simulation, *fixes: str, **kw: object) -> Host:
    variant = SWITCHES.fixed(*fixes) if fixes else Variant()
    return Host(sim, corpus=CORPUS, variant=variant, target=TARGET, **kw)  # type: ignore[arg-type]


def test_learning_audit_authorizes_the_target_direction() -> None:
    """``practice_loop.py:1696-1699``: the silent audit authorizes the *target direction*, so a bank that
    quotes the target is installed, while one that quotes the practice project's own text is rejected
    when that text shares an 8-gram with the corpus."""
    project = (
        "Open the quarterly budget spreadsheet and sort the second column under /home/user/evolution_project."
    )
    sim = Simulation(1)
    host = _host(sim)
    quote_target = ProjectSpec(1, project, ActorWork(), distiller=Distiller(add=(("t.md", TARGET),)))
    assert evolve_practice_project(sim, host, quote_target).outcome == "installed"
    quote_project = ProjectSpec(2, project, ActorWork(), distiller=Distiller(add=(("p.md", project),)))
    assert evolve_practice_project(sim, host, quote_project).outcome == "quarantined"
    assert host.boundary_log[0]["file"] == "p.md"


def test_promote_route_authorizes_the_target_audit_surface() -> None:
    """``_promote_learning`` authorizes ``_target_audit_surface``: the target plus ``NORMAL TASK-VISIBLE
    INPUT PATHS:`` and the visible inputs, one per line."""
    sim = Simulation(1)
    host = _host(sim, visible_inputs=("/home/user/Desktop/standup.mp4",))
    assert host.audit_surface() == TARGET
    assert host.audit_surface(promote=True) == (
        TARGET + "\n\nNORMAL TASK-VISIBLE INPUT PATHS:\n/home/user/Desktop/standup.mp4"
    )
    spec = ProjectSpec(
        1, INSTR, ActorWork(), distiller=Distiller(add=(("t.md", TARGET),)), diagnosis=Diagnosis()
    )
    rec = evolve_practice_project(sim, host, spec)
    assert rec.outcome == "installed"
    assert host.journal_lines()[0].meta == {"kind": "unified-practice-project", "terminal_outcome": "PASS"}
    out = json.loads(host.volume.tree.read_text("lineage/episodes/ep001/outcome.json"))
    assert out["kind"] == "unified_practice_project" and out["learning_diagnosis"] == Diagnosis().text


def test_work_phase_edits_are_discarded() -> None:
    """Work-phase bank edits are wiped by the reset: distillation sees the canonical bank only."""
    sim = Simulation(1)
    host = _host(sim)
    spec = ProjectSpec(1, INSTR, ActorWork(lessons=(("w.md", "FACT-0001=red"),)))

    rec = evolve_practice_project(sim, host, spec)

    assert rec.outcome == "installed"
    assert rec.after_bank == {}
    distill = next(r for r in sim.trace.data.requests if r.route == "actor.distill")
    assert "FACT-0001" not in distill.fact_ids


def test_draft_work_delta_keeps_the_lesson() -> None:
    """Fixed variant: the work delta is a visible draft and reaches the committed bank."""
    sim = Simulation(1)
    host = _host(sim, "draft-work-delta")
    rec = evolve_practice_project(
        sim, host, ProjectSpec(1, INSTR, ActorWork(lessons=(("w.md", "FACT-0001=red"),)))
    )

    assert rec.after_bank == {"w.md": b"FACT-0001=red"}


def test_next_actor_sees_the_promoted_bank_as_inventory() -> None:
    """A promoted lesson appears in the next project's charter as a name and size, never its body."""
    sim = Simulation(1)
    host = _host(sim)
    evolve_practice_project(
        sim, host, ProjectSpec(1, INSTR, ActorWork(), distiller=Distiller(add=(("l.md", "FACT-0002=tan"),)))
    )
    evolve_practice_project(sim, host, ProjectSpec(2, INSTR, ActorWork()))

    work = [r for r in sim.trace.data.requests if r.route == "actor.work"]
    assert len(work) == 2
    assert work[1].fact_ids == frozenset()
    assert [j.episode for j in host.journal_lines()] == [1, 2]


def test_pulls_equal_audits_equal_installs() -> None:
    """Each committed project pulls, audits and installs exactly once."""
    sim = Simulation(1)
    host = _host(sim)
    for ep in (1, 2):
        evolve_practice_project(sim, host, ProjectSpec(ep, INSTR, ActorWork()))
    ops = [o.op for o in sim.trace.data.ops]

    assert (
        ops.count("pull_terminal_memory")
        == ops.count("silent_audit")
        == ops.count("atomic_install_memory")
        == 2
    )


def test_rejection_keeps_bank_and_writes_no_journal() -> None:
    """A leaking lesson quarantines: the old bank stays and nothing is journaled."""
    sim = Simulation(1)
    host = _host(sim)
    evolve_practice_project(
        sim, host, ProjectSpec(1, INSTR, ActorWork(), distiller=Distiller(add=(("a.md", "ok"),)))
    )
    rec = evolve_practice_project(
        sim, host, ProjectSpec(2, INSTR, ActorWork(), distiller=Distiller(add=(("b.md", LEAK),)))
    )

    assert rec.outcome == "quarantined" and host.state == "quarantined"
    assert host.canonical() == {"a.md": b"ok"}
    assert len(host.journal_lines()) == 1


def test_fail_verdict_is_recorded() -> None:
    """A FAIL verdict still opens distillation; the journal meta records the terminal outcome."""
    sim = Simulation(1)
    host = _host(sim)
    evolve_practice_project(
        sim,
        host,
        ProjectSpec(
            1,
            INSTR,
            ActorWork(),
            VerifierPolicy("FAIL", fenced_decoy=True),
            distiller=Distiller(add=(("f.md", "failed because"),)),
        ),
    )

    assert host.journal_lines()[0].meta == {"kind": "practice-terminal-memory", "terminal_outcome": "FAIL"}
    raw = host.volume.tree.read_text("lineage/episodes/ep001/outcome.json")
    out = json.loads(raw)
    assert sorted(out) == [
        "actor_handoffs",
        "memory_after",
        "memory_before",
        "project",
        "project_index",
        "schema_version",
        "terminal_outcome",
        "verification_cycles",
        "verifier_reports",
    ]
    assert out["terminal_outcome"] == "FAIL" and "f.md" in out["memory_after"] and raw.endswith("}\n")
    assert raw.startswith('{\n  "actor_handoffs"')  # indent 2, sorted keys
    md = host.volume.tree.read_text("lineage/episodes/ep001/outcome.md")
    assert md.startswith("PROJECT 1\n\nORIGINAL NATURAL-LANGUAGE PROJECT (verbatim):\n" + INSTR)
    assert not host.volume.tree.exists("lineage/checkpoints/project_001/memory/f.md")


def test_state_json_at_project_end_and_on_every_exit() -> None:
    """``state.json``: the running record at each project's end (``practice_loop.py:1732-1740``), the
    ``finish()`` record on every exit, quarantine included (``1292-1309``)."""
    sim = Simulation(1)
    host = _host(sim)
    specs = [
        ProjectSpec(1, INSTR, ActorWork(), distiller=Distiller(add=(("a.md", "ok"),))),
        ProjectSpec(2, INSTR, ActorWork(), distiller=Distiller(add=(("b.md", LEAK),))),
    ]
    evolve_practice_project(sim, host, specs[0])
    state = json.loads(host.volume.tree.read_text("lineage/state.json"))
    assert state == {
        "schema_version": 1,
        "status": "running",
        "projects": 1,
        "last_project": 1,
        "target_sha256": host.target_sha256(),
        "memory_manifest": manifest({"a.md": b"ok"}),
    }
    evolve_practice_project(sim, host, specs[1])
    final = json.loads(host.volume.tree.read_text("lineage/state.json"))
    assert final["status"] == "quarantined" and final["projects"] == 1
    assert set(final) >= {"reason", "terminal_text", "phase1_exploration", "checkpoint_projects"}
    sim = Simulation(1)
    host = _host(sim)
    evolve_practice(sim, host, specs[:1])
    assert json.loads(host.volume.tree.read_text("lineage/state.json"))["status"] == "converged"


def test_checkpoints_only_for_configured_projects_through_the_staged_install() -> None:
    """Checkpoints for ``checkpoint_projects`` only (``practice_loop.py:1234-1262``): the staged install
    into ``checkpoints/project_NNN/memory`` plus ``manifest.json``; project 0 at the start."""
    sim = Simulation(1)
    host = _host(sim, checkpoint_projects=(0, 2))
    specs = [
        ProjectSpec(ep, INSTR, ActorWork(), distiller=Distiller(add=((f"l{ep}.md", "x"),))) for ep in (1, 2)
    ]
    evolve_practice(sim, host, specs)
    tree = host.volume.tree

    assert not tree.exists("lineage/checkpoints/project_001/memory/l1.md")
    assert tree.read_bytes("lineage/checkpoints/project_002/memory/l2.md") == b"x"
    m = json.loads(tree.read_text("lineage/checkpoints/project_002/manifest.json"))
    assert m["kind"] == "phase1_memory_checkpoint" and sorted(m["memory_manifest"]) == ["l1.md", "l2.md"]
    assert host.volume.isdir("lineage/checkpoints/project_000/memory")


def test_diagnosis_edits_are_still_pulled() -> None:
    """Bank edits made in the learning-diagnosis phase are installed upstream; the snapshot fix drops them."""
    spec = ProjectSpec(
        1, INSTR, ActorWork(), reconciler=Reconciler(), diagnosis=Diagnosis(bank_edits=(("d.md", "late"),))
    )
    sim = Simulation(1)
    assert evolve_practice_project(sim, _host(sim), spec).after_bank == {"d.md": b"late"}
    sim = Simulation(1)
    assert evolve_practice_project(sim, _host(sim, "diagnosis-snapshot"), spec).after_bank == {}


def test_canonical_push_failure_is_infra() -> None:
    """Practice: a failed canonical push raises PracticeInfrastructureError."""
    sim = Simulation(1)
    sim.faults = FaultPlan.parse([f"fail@{fp.PUSH_UPLOAD}"])
    with pytest.raises(PracticeInfrastructureError, match="canonical memory push failed"):
        evolve_practice_project(sim, _host(sim), ProjectSpec(1, INSTR, ActorWork()))


def test_notes_only_nonempty_read_replaces() -> None:
    """An empty, corrupt or absent notes file keeps the old notes; whitespace-only replaces them."""
    sim = Simulation(1)
    host = _host(sim)
    vm = GuestVM(sim, "cur")
    shown = []
    for action in ["write", "empty", "corrupt", "none", "blank"]:
        curriculum_turn(
            sim, host, vm, CurriculumTurn(notes_action=action, notes_text="H1", instruction=INSTR)
        )
        shown.append(host.notes)

    assert shown == ["H1", "H1", "H1", "H1", "  \n"]


def test_notes_read_rules() -> None:
    """The read returns "" for absent, zero-size and invalid UTF-8 files."""
    sim = Simulation(1)
    vm = GuestVM(sim, "cur")
    assert read_curriculum_notes(sim, vm) == ""
    vm.volume.write(vm.NOTES, b"\xff")
    assert read_curriculum_notes(sim, vm) == ""
    assert read_curriculum_notes(sim, vm, SWITCHES.fixed("empty-notes-clear")) == ""
    vm.volume.tree.delete(vm.NOTES)
    assert read_curriculum_notes(sim, vm, SWITCHES.fixed("empty-notes-clear")) is None


def test_notes_audit_hit_quarantines() -> None:
    """Notes are audited by the exam fence's ``audit_text`` (its own ``[a-z0-9']+`` words, the path, repo
    and task-id rules), not the shingle audit: notes quoting an exam instruction, a benchmark path or an
    exam task id quarantine the run."""
    for notes in (LEAK, "see evaluation_examples/task_class", "like Task_042 did"):
        sim = Simulation(1)
        host = _host(sim, fence=fence_grams([LEAK]))
        curriculum_turn(sim, host, GuestVM(sim, "cur"), CurriculumTurn(notes_text=notes, instruction=INSTR))
        assert host.state == "quarantined" and host.notes == "", notes
    sim = Simulation(1)
    host = _host(sim)
    curriculum_turn(sim, host, GuestVM(sim, "cur"), CurriculumTurn(notes_text=LEAK, instruction=INSTR))
    assert host.state == "running" and host.notes == LEAK  # not an exam-seat instruction: no fence gram


def test_none_ablation_changes_only_what_curriculum_sees() -> None:
    """access=none attaches an empty tree to the Curriculum and records memory_access.json."""
    sim = Simulation(1)
    host = _host(sim)
    evolve_practice_project(
        sim, host, ProjectSpec(1, INSTR, ActorWork(), distiller=Distiller(add=(("a.md", "x"),)))
    )
    vm = GuestVM(sim, "cur")
    curriculum_turn(sim, host, vm, CurriculumTurn(instruction=INSTR), access="none")

    assert vm.bank() == {}
    rec = json.loads(host.volume.tree.read_text("lineage/curriculum/memory_access.json"))
    assert rec == {
        "access": "none",
        "attached_files": 0,
        "attached_bytes": 0,
        "attached_tree_sha256": tree_sha256({}),
        "actor_learning_diagnosis_available": True,
    }
    assert host.canonical() == {"a.md": b"x"}
    with pytest.raises(ValueError):
        curriculum_turn(
            sim, host, vm, CurriculumTurn(instruction=INSTR), access="none", phase2_outcome_protocol=False
        )
    host.volume.write("lineage/curriculum_empty_memory/x", b"1")
    with pytest.raises(PracticeInfrastructureError):
        curriculum_turn(sim, host, vm, CurriculumTurn(instruction=INSTR), access="none")


def test_osworld_continues_memory_off_but_claims_memory() -> None:
    """OSWorld: a failed push continues with no preamble, env_memory_dir set and the record unchanged."""
    sim = Simulation(1)
    sim.faults = FaultPlan.parse([f"fail@{fp.OSWORLD_PUSH}"])
    rec = osworld_attach_memory(sim, GuestVM(sim, "os"), {"a.md": b"1"})

    assert (rec.memory_mode, rec.delivered, rec.preamble, rec.env_memory_dir) == (
        OSWORLD_MODE,
        False,
        "",
        "~/.memory",
    )
    assert memory_revisit(rec.env_memory_dir, "fold").startswith("\n\n[MEMORY RETRIEVAL OPPORTUNITY]")


def test_ale_raises_on_failed_upload() -> None:
    """ALE: a failed upload raises; a good one is verified and listed."""
    sim = Simulation(1)
    rec = ale_attach_memory(sim, GuestVM(sim, "ale"), {"a.md": b"1"})
    assert rec.preamble.endswith("\nCurrent durable-memory inventory (1 files):\na.md  1B\n\n")
    sim.faults = FaultPlan.parse([f"fail@{fp.ALE_PUSH}"])
    with pytest.raises(FrozenMemoryUploadError, match="Frozen evaluation memory upload failed"):
        ale_attach_memory(sim, GuestVM(sim, "ale2"), {"a.md": b"1"})


def _wave_specs(n: int, leak_at: int | None = None) -> list[ProjectSpec]:
    out = []
    for k in range(n):
        adds = [(f"b{k}.md", f"FACT-{k + 1:04d}=red")] + ([("leak.md", LEAK)] if k == leak_at else [])
        out.append(
            ProjectSpec(
                k + 1, INSTR, ActorWork(duration_s=10.0 * (n - k)), distiller=Distiller(add=tuple(adds))
            )
        )
    return out


def test_wave_branches_run_concurrently_and_commit_in_assignment_order() -> None:
    """Branches overlap in simulated time; commits follow assignment order, not completion order."""
    sim = Simulation(1)
    host = _host(sim)
    res = evolve_parallel_phase1(sim, host, _wave_specs(4))

    assert res.outcome_written and sorted(host.canonical()) == ["b0.md", "b1.md", "b2.md", "b3.md"]
    verdicts = [o for o in sim.trace.data.ops if o.op == "verify"]
    assert [o.agent for o in verdicts] == ["verifier-4", "verifier-3", "verifier-2", "verifier-1"]
    assert [o.data["episode"] for o in sim.trace.data.ops if o.op == "commit_learning"] == [1, 2, 3, 4]
    assert res.changes[1] == {"created": ["b1.md"], "deleted": [], "modified": [], "unchanged": ["b0.md"]}
    assert [j.meta["kind"] for j in host.journal_lines()] == ["phase1-parallel-terminal-memory"] * 4
    state = json.loads(host.volume.tree.read_text("lineage/state.json"))
    assert (state["schema_version"], state["status"], state["waves"], state["projects"]) == (
        2,
        "running",
        1,
        4,
    )
    assert not wave_resume_allowed(host)  # a running lineage is not an infrastructure stop
    host.finish("infra", "operator stop")
    assert wave_resume_allowed(host)


def test_wave_writes_before_after_and_changes_per_branch() -> None:
    """``_commit_branch_memory``: each committed branch leaves full staged copies of the canonical tree
    before and after its commit, and its outcome records the changes."""
    sim = Simulation(1)
    host = _host(sim)
    res = evolve_parallel_phase1(sim, host, _wave_specs(2))
    vol = host.volume

    assert vol.read_tree("lineage/episodes/ep001/memory_before_commit") == {}
    assert vol.isdir("lineage/episodes/ep001/memory_before_commit")
    assert sorted(vol.read_tree("lineage/episodes/ep001/memory_after_commit")) == ["b0.md"]
    assert sorted(vol.read_tree("lineage/episodes/ep002/memory_before_commit")) == ["b0.md"]
    assert sorted(vol.read_tree("lineage/episodes/ep002/memory_after_commit")) == ["b0.md", "b1.md"]
    out = json.loads(vol.tree.read_text("lineage/episodes/ep002/outcome.json"))
    assert out["memory_changes"] == res.changes[1] and out["schema_version"] == 2
    assert out["wave_index"] == 1 and out["project_id"] == "p002"
    assert vol.tree.read_text("lineage/waves/wave_001/outcomes.md").startswith("WAVE 1 CURRICULUM RATIONALE:")


def test_wave_partial_commit_on_rejection() -> None:
    """A rejection at branch 3 leaves branches 1-2 installed and no outcomes.md; resume refuses."""
    sim = Simulation(1)
    host = _host(sim)
    res = evolve_parallel_phase1(sim, host, _wave_specs(4, leak_at=2))

    assert not res.outcome_written and host.state == "quarantined"
    assert sorted(host.canonical()) == ["b0.md", "b1.md"]
    assert not host.volume.tree.exists("lineage/waves/wave_001/outcomes.md")
    assert not host.volume.isdir("lineage/episodes/ep003/memory_after_commit")
    assert json.loads(host.volume.tree.read_text("lineage/state.json"))["status"] == "quarantined"
    assert not wave_resume_allowed(host)
    host.finish("infra", "pretend the stop was infrastructure")
    assert not wave_resume_allowed(host)  # the ledger's memory chain ends before the canonical bank


def test_wave_aborts_before_any_commit_on_branch_error() -> None:
    """A branch failure drains the others and aborts before any commit."""
    sim = Simulation(1)
    host = _host(sim)
    specs = _wave_specs(3)
    specs[1] = ProjectSpec(2, INSTR, ActorWork(), VerifierPolicy("MAYBE"))
    res = evolve_parallel_phase1(sim, host, specs)

    assert res.aborted.startswith("branch 2") and host.canonical() == {}
    assert [o for o in sim.trace.data.ops if o.op == "commit_learning"] == []


def test_a_five_project_wave_runs_at_most_four_branches_at_once() -> None:
    """``max_parallel`` is host scheduling capacity, not wave width (``phase1_wave.py``): a five-project
    wave is valid; the fifth branch starts when a slot frees."""
    sim = Simulation(1)
    host = _host(sim)
    specs = [
        ProjectSpec(k + 1, INSTR, ActorWork(duration_s=100.0), distiller=Distiller(add=((f"b{k}.md", "x"),)))
        for k in range(5)
    ]
    res = evolve_parallel_phase1(sim, host, specs)

    assert res.outcome_written and len(host.canonical()) == 5
    verdicts = {o.agent: o.time for o in sim.trace.data.ops if o.op == "verify"}
    assert sorted(verdicts.values()) == [100.0] * 4 + [210.0]


def test_wave_publication_rules() -> None:
    """``parse_wave_handoff``: rejects a blank rationale, a non-WAVE decision listing projects, a WAVE
    with none, non-string or malformed or repeated ids, non-dict records and instructions without the
    project root; strips the rationale and instructions; any width."""
    ok = {
        "decision": "WAVE",
        "rationale": " r ",
        "projects": [
            {"id": f"p-{i}", "instruction": " work in /home/user/evolution_project "} for i in range(6)
        ],
    }
    parsed = parse_wave_handoff(json.dumps(ok))
    assert parsed is not None and parsed.rationale == "r" and len(parsed.projects) == 6
    assert parsed.projects[0].instruction == "work in /home/user/evolution_project"
    saturated = parse_wave_handoff(json.dumps({"decision": "SATURATED", "rationale": "done", "projects": []}))
    assert saturated is not None and saturated.projects == ()
    project = ok["projects"][0]  # type: ignore[index]
    for bad in (
        {**ok, "decision": "GO"},
        {**ok, "rationale": "  "},
        {"decision": "STALLED", "rationale": "r", "projects": [project]},
        {**ok, "projects": []},
        {**ok, "projects": [project, project]},
        {**ok, "projects": [{"id": 1, "instruction": "/home/user/evolution_project"}]},
        {**ok, "projects": [{"id": "P1", "instruction": "/home/user/evolution_project"}]},
        {**ok, "projects": [{"id": "p1", "instruction": "elsewhere"}]},
        {**ok, "projects": ["p1"]},
        [ok],
    ):
        assert parse_wave_handoff(json.dumps(bad)) is None, bad
    assert parse_wave_handoff("not json") is None


def test_verdict_must_be_unique_outside_fences() -> None:
    """No verdict, or two, outside code fences is a protocol error (upstream's unique-token test)."""
    from systems.rsiagent.model import VerifierProtocolError, parse_verdict

    for report in ("no verdict", "VERDICT: PASS\nVERDICT: FAIL", "```\nVERDICT: PASS\n```"):
        with pytest.raises(VerifierProtocolError):
            parse_verdict(report)


def test_existing_checkpoint_is_infra() -> None:
    """checkpoints/project_NNN/memory must not exist before the commit writes it."""
    sim = Simulation(1)
    host = _host(sim, checkpoint_projects=(1,))
    host.volume.write("lineage/checkpoints/project_001/memory/x.md", b"stale")
    with pytest.raises(PracticeInfrastructureError, match="already exists"):
        evolve_practice_project(sim, host, ProjectSpec(1, INSTR, ActorWork()))


def test_same_seed_gives_identical_journal_bytes() -> None:
    """The journal archive is deterministic: the same seed and run give byte-identical ep001.tgz."""

    def archive() -> bytes:
        sim = Simulation(9)
        host = _host(sim)
        sim.env.run(until=125.5)
        evolve_practice_project(
            sim,
            host,
            ProjectSpec(1, INSTR, ActorWork(), distiller=Distiller(add=(("a.md", "FACT-0001=red"),))),
        )
        return host.volume.tree.read_bytes("lineage/memory_journal/ep001.tgz")

    assert archive() == archive()
