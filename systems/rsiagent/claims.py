"""RSIAgent's failure modes (fidelity note §3), each with its minimal fix as a :class:`Variant` switch.

Examples are plain JSON values drawn by Hypothesis; each ``check`` builds a fresh host and guest in the
given simulation, runs the example against the faithful (upstream) or fixed variant and applies one
named checker of :mod:`systems.rsiagent.properties`. Two claims are counterfactual: their "faithful"
direction is a weaker design upstream does *not* ship (pushing canonical memory at wave start; committing
from a raw ``pull_memory``) and their "fixed" direction is upstream itself; the statement says so.
Thresholds are small parameters of the examples (handoff caps, high water, worklog cap) so that each
claim runs in well under a second; the model's defaults are upstream's.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Callable
from typing import Any

from hypothesis import strategies as st

from sim.claims import FAITHFUL as FAITHFUL_NAME
from sim.claims import Claim, Verdict, claim_factory
from sim.engine import Simulation
from sim.faults import Crash, FaultPlan, WriteFailed
from sim.text import extract_facts
from systems.rsiagent import faults as fp
from systems.rsiagent import properties as props
from systems.rsiagent.model import (
    FAITHFUL,
    ActorLoop,
    GuestVM,
    Host,
    JournalConflict,
    PracticeInfrastructureError,
    ProjectSpec,
    Variant,
    admit,
    atomic_install_memory,
    audit_hits,
    bank_facts,
    build_corpus,
    commit_learning,
    curriculum_turn,
    evolve_parallel_phase1,
    evolve_practice_project,
    memory_revisit,
    osworld_attach_memory,
    read_archive,
    recover_install,
    stalled_handoff,
    write_memory,
)
from systems.rsiagent.policies import (
    ActorWork,
    CurriculumTurn,
    Diagnosis,
    Distiller,
    Reconciler,
    Summarizer,
)
from systems.rsiagent.state import Bank, LoopConfig, LoopResult, Message

SYSTEM = "rsiagent"
OTHER_TASK = (
    "Open the quarterly budget spreadsheet and sort the second column by date in descending order, "
    "then export it as a PDF named report."
)
CORPUS = build_corpus([OTHER_TASK])
INSTRUCTION = "Build a small command line tool under /home/user/evolution_project that counts words."
NAMES = ("a.md", "b.md", "c.md")


def fact(i: int, value: str = "teal") -> str:
    return f"FACT-{i:04d}={value}"


def _bank(items: Any) -> Bank:
    return {n: t.encode("utf-8") for n, t in items}


def _variant(variant: str, fix: str, *, counterfactual: str = "") -> Variant:
    if counterfactual:
        return Variant.counterfactual(counterfactual) if variant == FAITHFUL_NAME else FAITHFUL
    return FAITHFUL if variant == FAITHFUL_NAME else Variant.fixed(fix)


def _guarded(fn: Callable[[Simulation, Any, str], Verdict]) -> Callable[[Simulation, Any, str], Verdict]:
    def check(sim: Simulation, example: Any, variant: str) -> Verdict:
        try:
            return fn(sim, example, variant)
        except Exception as exc:  # a check never raises: report the error as the verdict
            return Verdict.violated(f"error: {type(exc).__name__}: {exc}")

    check.__doc__ = fn.__doc__
    return check


def _arm(sim: Simulation, specs: list[str]) -> None:
    sim.faults = FaultPlan.parse(specs)


# -- 1. work-phase lesson lost -----------------------------------------------------------------------------
def _s_work_lesson() -> Any:
    return st.fixed_dictionaries(
        {
            "lessons": st.lists(st.tuples(st.sampled_from(NAMES), st.integers(1, 9)), max_size=3),
            "recall": st.booleans(),
            "add": st.lists(st.tuples(st.sampled_from(NAMES), st.integers(10, 19)), max_size=2),
            "delete": st.lists(st.sampled_from(NAMES), max_size=2, unique=True),
        }
    )


@_guarded
def _c_work_lesson(sim: Simulation, ex: dict[str, Any], variant: str) -> Verdict:
    """A lesson the Actor writes into ~/.memory while working reaches the committed bank."""
    host = Host(sim, corpus=CORPUS, variant=_variant(variant, "draft-work-delta"))
    lessons = [(n, fact(i)) for n, i in ex["lessons"]]
    spec = ProjectSpec(
        1,
        INSTRUCTION,
        ActorWork(lessons=tuple(lessons)),
        distiller=Distiller(
            add=tuple((n, fact(i)) for n, i in ex["add"]),
            delete=tuple(ex["delete"]),
            recall_work=ex["recall"],
        ),
    )
    rec = evolve_practice_project(sim, host, spec)
    return props.check_work_lessons_kept(_bank(lessons), ex["delete"], rec.after_bank)


# -- 2. repeated episode id overwrites the archive ---------------------------------------------------------
def _tree() -> Any:
    return st.dictionaries(st.sampled_from(NAMES), st.integers(1, 30), min_size=1, max_size=2)


def _s_journal_ids() -> Any:
    return st.fixed_dictionaries(
        {"cycles": st.lists(st.lists(_tree(), min_size=1, max_size=2), min_size=1, max_size=3)}
    )


def _archives(host: Host) -> dict[int, Bank]:
    out = {}
    for p in host.volume.tree.list(host.JOURNAL):
        name = p.rsplit("/", 1)[-1]
        if name.startswith("ep") and name.endswith(".tgz"):
            out[int(name[2:-4])] = read_archive(host.volume.tree.read_bytes(p))
    return out


@_guarded
def _c_journal_ids(sim: Simulation, ex: dict[str, Any], variant: str) -> Verdict:
    """Every journaled tree stays recoverable from its archive (experience_index restarts per cycle)."""
    host = Host(sim, corpus=CORPUS, variant=_variant(variant, "exclusive-journal"))
    journaled: list[tuple[int, Bank]] = []
    for cycle in ex["cycles"]:
        for idx, tree in enumerate(cycle, start=1):
            files = {n: fact(v).encode() for n, v in tree.items()}
            try:
                admit(
                    sim,
                    host,
                    files,
                    episode=idx,
                    authorized=INSTRUCTION,
                    meta={"kind": "unified", "terminal_outcome": "PASS"},
                )
            except JournalConflict:
                break  # the fixed variant refuses the reused id; this commit does not happen
            journaled.append((idx, files))
    return props.check_journal_recoverable(journaled, _archives(host))


# -- 3. journal ahead of install ---------------------------------------------------------------------------
def _s_journal_install() -> Any:
    return st.fixed_dictionaries(
        {
            "commits": st.lists(_tree(), min_size=1, max_size=3),
            "fail": st.none() | st.tuples(st.sampled_from(["stage", "rename"]), st.integers(1, 3)),
        }
    )


@_guarded
def _c_journal_install(sim: Simulation, ex: dict[str, Any], variant: str) -> Verdict:
    """Every journal.jsonl line describes a tree that was installed."""
    host = Host(sim, corpus=CORPUS, variant=_variant(variant, "journal-after-install"))
    if ex["fail"]:
        point = fp.INSTALL_STAGE if ex["fail"][0] == "stage" else fp.INSTALL_RENAME
        _arm(sim, [f"fail@{point}#{ex['fail'][1]}"])
    installed: list[Bank] = [host.canonical()]
    for ep, tree in enumerate(ex["commits"], start=1):
        files = {n: fact(v).encode() for n, v in tree.items()}
        try:
            admit(
                sim,
                host,
                files,
                episode=ep,
                authorized=INSTRUCTION,
                meta={"kind": "practice", "terminal_outcome": "PASS"},
            )
        except WriteFailed:
            break  # the install raised: the run ends infra
        installed.append(host.canonical())
    return props.check_journal_matches_installs(host.journal_lines(), _archives(host), installed)


# -- 4a/4b. waves: lost update (counterfactual) and stale rewrite (upstream residue) -----------------------
WAVE_NAMES = NAMES[:2]
#: What a branch's distillation does to each bank file ("keep" first so examples shrink towards no-ops).
#: ``rewrite`` rewrites a file the Actor read during work from its (stale) context, plus a new line.
WAVE_ACTIONS = ("keep", "add", "delete")
WAVE_ACTIONS_STALE = ("keep", "add", "rewrite", "delete")


def _s_wave(stale: bool) -> Callable[[], Any]:
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


@_guarded
def _c_wave_lost_update(sim: Simulation, ex: dict[str, Any], variant: str) -> Verdict:
    """Facts committed by an earlier branch survive the later branches' whole-tree installs."""
    return _run_wave(
        sim, ex, Host(sim, corpus=CORPUS, variant=_variant(variant, "", counterfactual="push-at-wave-start"))
    )


@_guarded
def _c_wave_stale(sim: Simulation, ex: dict[str, Any], variant: str) -> Verdict:
    """A branch that rewrites a file from its work-time context does not drop a sibling's committed lines."""
    return _run_wave(sim, ex, Host(sim, corpus=CORPUS, variant=_variant(variant, "wave-sibling-check")))


# -- 5. a fact lost from the middle of a folded message ----------------------------------------------------
FILL = "lorem ipsum dolor sit amet "


def _content(size: int, positions: list[int], first: int) -> str:
    body = (FILL * (size // len(FILL) + 1))[:size]
    out = body
    for j, pos in enumerate(sorted(positions, reverse=True)):
        at = min(len(out), size * pos // 10)
        out = out[:at] + f" {fact(first + j)} " + out[at:]
    return out


def _s_fold_middle() -> Any:
    env = st.tuples(st.sampled_from([300, 3000, 4200, 6000]), st.lists(st.integers(0, 10), max_size=2))
    return st.fixed_dictionaries({"envs": st.lists(env, min_size=1, max_size=4), "batch": st.integers(1, 2)})


@_guarded
def _c_fold_middle(sim: Simulation, ex: dict[str, Any], variant: str) -> Verdict:
    """Every fact of a folded message reaches the WORK LOG (lossless summarizer, ample cap)."""
    cfg = LoopConfig(history_keep_pairs=1, keep_chars=0, fold_batch=ex["batch"], worklog_max_chars=100_000)
    loop = ActorLoop(
        sim, cfg, Summarizer(), task=INSTRUCTION, variant=_variant(variant, "complete-fold-input")
    )
    n = 1
    for size, pos in ex["envs"]:
        loop.add_pair(Message("assistant", "PROGRAM: run"), Message("user", _content(size, pos, n)))
        n += len(pos)
    folded: set[str] = set()
    for m in loop.messages[: 2 * loop.covered]:
        folded |= extract_facts(m.content)
    return props.check_fold_keeps_facts(frozenset(folded), loop.summary)


# -- 6. the digest fallback erases the log -----------------------------------------------------------------
def _s_digest() -> Any:
    return st.fixed_dictionaries(
        {
            "log_facts": st.integers(0, 6),
            "envs": st.lists(st.integers(20, 300), min_size=1, max_size=3),
            "cap": st.sampled_from([200, 400, 800]),
        }
    )


@_guarded
def _c_digest(sim: Simulation, ex: dict[str, Any], variant: str) -> Verdict:
    """A blank summary's digest fallback never drops facts the WORK LOG already held."""
    cfg = LoopConfig(history_keep_pairs=1, keep_chars=0, fold_batch=1, worklog_max_chars=ex["cap"])
    loop = ActorLoop(
        sim, cfg, Summarizer(blank=True), task=INSTRUCTION, variant=_variant(variant, "trim-digest")
    )
    old = "WORK LOG\n" + "\n".join(f"- {fact(i)}" for i in range(1, ex["log_facts"] + 1))
    loop.summary = old[: ex["cap"]].rsplit("\n", 1)[0] if len(old) > ex["cap"] else old
    before = loop.summary
    for size in ex["envs"]:
        loop.add_pair(Message("assistant", "PROGRAM: run"), Message("user", (FILL * 20)[:size]))
    return props.check_log_kept(before, loop.summary)


# -- 7. the fold guard stuck above high water --------------------------------------------------------------
def _s_guard() -> Any:
    return st.fixed_dictionaries(
        {
            "pairs": st.integers(1, 24),
            "pair_chars": st.sampled_from([60, 120, 400]),
            "high": st.sampled_from([600, 1200, 2400]),
            "batch": st.integers(1, 10),
            "keep_chars": st.sampled_from([0, 300, 3000]),
        }
    )


@_guarded
def _c_guard(sim: Simulation, ex: dict[str, Any], variant: str) -> Verdict:
    """After each fold step the context is at or below high water, or nothing is left to fold."""
    cfg = LoopConfig(
        history_keep_pairs=80,
        keep_chars=ex["keep_chars"],
        ctx_high_water=ex["high"],
        ctx_low_water=ex["high"] // 2,
        fold_batch=ex["batch"],
        worklog_max_chars=100,
    )
    loop = ActorLoop(sim, cfg, Summarizer(), task="t", variant=_variant(variant, "partial-fold-batch"))
    half = ex["pair_chars"] // 2
    for _ in range(ex["pairs"]):
        loop.add_pair(Message("assistant", "P" * half), Message("user", "E" * half))
        v = props.check_fold_guard(loop.size(), cfg.ctx_high_water, loop.foldable())
        if not v.holds:
            return v
    return Verdict.ok()


# -- 8. the resume handoff truncates the log ---------------------------------------------------------------
def _s_handoff() -> Any:
    return st.fixed_dictionaries(
        {
            "facts": st.integers(1, 40),
            "cap": st.sampled_from([120, 240, 480]),
            "pivot": st.booleans(),
        }
    )


@_guarded
def _c_handoff(sim: Simulation, ex: dict[str, Any], variant: str) -> Verdict:
    """Every fact of the WORK LOG handed to a fresh attempt reaches it."""
    cfg = LoopConfig(
        history_keep_pairs=80, worklog_max_chars=2000, handoff_cap=ex["cap"], pivot_cap=ex["cap"] // 2
    )
    wl = "WORK LOG\n" + "\n".join(f"- {fact(i)}" for i in range(1, ex["facts"] + 1))
    res = LoopResult("stalled", 10, wl, surface_delta="" if ex["pivot"] else "M project/x.py")
    h = stalled_handoff(sim, cfg, res, [], variant=_variant(variant, "handoff-cap-worklog"))
    return props.check_handoff_keeps_log(h.worklog, h.message)


# -- 9. the pivot review is blind to the synthesized log ---------------------------------------------------
def _s_review() -> Any:
    return st.fixed_dictionaries(
        {
            "messages": st.lists(st.integers(0, 2), min_size=1, max_size=14),
            "worklog": st.booleans(),
        }
    )


@_guarded
def _c_review(sim: Simulation, ex: dict[str, Any], variant: str) -> Verdict:
    """The strategy review sees the worklog that is handed over."""
    cfg = LoopConfig(history_keep_pairs=80, worklog_max_chars=100_000, resume_synthesize_worklog=True)
    history = []
    n = 1
    for i, k in enumerate(ex["messages"]):
        text = "observation " + " ".join(fact(n + j) for j in range(k))
        n += k
        history.append(Message("assistant" if i % 2 else "user", text))
    wl = "WORK LOG\n- FACT-0999=gold" if ex["worklog"] else ""
    res = LoopResult("stalled", 10, wl, tuple(history), surface_delta="")
    h = stalled_handoff(sim, cfg, res, history, variant=_variant(variant, "review-gets-wl"))
    tail = "\n".join(m.content[:1500] for m in history[-6:])
    return props.check_review_sees_log(h.worklog, h.review_input_worklog + "\n" + tail)


# -- 10. the write_memory bypass ---------------------------------------------------------------------------
def _s_write_memory() -> Any:
    return st.fixed_dictionaries(
        {
            "files": st.lists(
                st.tuples(
                    st.sampled_from(["a.md", "sub/b.md", "../x.md", "../../../y.md"]),
                    st.sampled_from(["fact", "leak"]),
                ),
                max_size=3,
            ),
            "crash": st.none() | st.integers(1, 3),
        }
    )


def _outside(host: Host) -> list[str]:
    keep = (host.CANONICAL + "/", host.JOURNAL + "/", "lineage/boundary_audit.json", "lineage/.")
    return [p for p in host.volume.tree.list() if not p.startswith(keep)]


@_guarded
def _c_write_memory(sim: Simulation, ex: dict[str, Any], variant: str) -> Verdict:
    """A bank write is audited, journaled, stays inside the bank and is never left partial."""
    host = Host(sim, corpus=CORPUS, variant=_variant(variant, "admit-direct-writes"))
    old = {"old.md": fact(500).encode()}
    atomic_install_memory(sim, host, old)
    files = {
        n: (fact(i) if kind == "fact" else OTHER_TASK).encode() for i, (n, kind) in enumerate(ex["files"])
    }
    if ex["crash"]:
        _arm(sim, [f"crash@{fp.WRITE_MEMORY_EACH}#{ex['crash']}"])
    with contextlib.suppress(Crash):
        write_memory(sim, host, files)
    bank = host.canonical()
    if bank != old and bank != {n: d for n, d in files.items() if not n.startswith("..")}:
        return Verdict.violated(f"partial bank left: {sorted(bank)}")
    hits = [n for n, d in bank.items() if audit_hits(d, CORPUS, "")]
    return props.check_bank_admitted(bank, _outside(host), bool(host.journal_lines()), hits, bank != old)


# -- 11. stale curriculum notes ----------------------------------------------------------------------------
ACTIONS = ("write", "empty", "blank", "corrupt", "none")


def _s_notes() -> Any:
    return st.fixed_dictionaries({"turns": st.lists(st.sampled_from(ACTIONS), min_size=1, max_size=4)})


@_guarded
def _c_notes(sim: Simulation, ex: dict[str, Any], variant: str) -> Verdict:
    """The next Curriculum charter shows the notes as the last turn left the file."""
    host = Host(sim, corpus=CORPUS, variant=_variant(variant, "empty-notes-clear"))
    vm = GuestVM(sim, "curriculum")
    expected = ""
    for i, action in enumerate(ex["turns"]):
        text = f"Hypothesis {i}: {fact(i + 1)}"
        curriculum_turn(
            sim, host, vm, CurriculumTurn(notes_action=action, notes_text=text, instruction=INSTRUCTION)
        )
        expected = {"write": text, "empty": "", "blank": "  \n", "corrupt": "", "none": expected}[action]
        v = props.check_notes_current(host.notes, expected)
        if not v.holds:
            return Verdict.violated(f"after turn {i + 1} ({action}): {v.detail}")
    return Verdict.ok()


# -- 12. the install window is visible as an empty bank ----------------------------------------------------
def _s_install_window() -> Any:
    return st.fixed_dictionaries(
        {
            "old": st.lists(st.sampled_from(NAMES), max_size=2, unique=True),
            "new": st.lists(st.sampled_from(NAMES), max_size=2, unique=True),
            "crash": st.none() | st.sampled_from(list(fp.INSTALL_POINTS)),
        }
    )


@_guarded
def _c_install_window(sim: Simulation, ex: dict[str, Any], variant: str) -> Verdict:
    """Every read during an install, and the first read after a crash and restart, sees the old or the new
    bank; no backup is orphaned."""
    v = _variant(variant, "exchange-install")
    host = Host(sim, corpus=CORPUS, variant=v)
    old = {n: fact(10 + i).encode() for i, n in enumerate(ex["old"])}
    new = {n: fact(20 + i).encode() for i, n in enumerate(ex["new"])}
    if old:
        atomic_install_memory(sim, host, old)
    reads: list[tuple[str, Bank]] = []
    host.volume.observe = lambda point: reads.append((point, host.canonical()))
    if ex["crash"]:
        _arm(sim, [f"crash@{ex['crash']}"])
    try:
        atomic_install_memory(sim, host, new)
    except Crash:
        host.volume.observe = None
        if v.has("exchange-install"):
            recover_install(sim, host)
    reads.append(("restart", host.canonical()))
    verdict = props.check_reads_old_or_new(reads, old, new)
    if not verdict.holds:
        return verdict
    orphans = host.volume.siblings("lineage", ".memory.backup-")
    return Verdict.violated(f"orphaned backup {orphans}") if orphans else Verdict.ok()


# -- 13. a partial wave commit -----------------------------------------------------------------------------
def _s_partial_wave() -> Any:
    return st.fixed_dictionaries({"leaks": st.lists(st.booleans(), min_size=1, max_size=4)})


@_guarded
def _c_partial_wave(sim: Simulation, ex: dict[str, Any], variant: str) -> Verdict:
    """A wave publishes all its branches or leaves the canonical bank unchanged."""
    host = Host(sim, corpus=CORPUS, variant=_variant(variant, "stage-wave"))
    specs = []
    for k, leak in enumerate(ex["leaks"]):
        adds = [(f"b{k}.md", fact(k + 1))] + ([(f"leak{k}.md", OTHER_TASK)] if leak else [])
        specs.append(ProjectSpec(k + 1, INSTRUCTION, ActorWork(), distiller=Distiller(add=tuple(adds))))
    snapshot = host.canonical()
    res = evolve_parallel_phase1(sim, host, specs)
    return props.check_wave_atomic(host.canonical(), snapshot, res.outcome_written)


# -- 14. OSWorld misreports memory -------------------------------------------------------------------------
def _s_osworld() -> Any:
    return st.fixed_dictionaries(
        {
            "files": st.lists(st.sampled_from(NAMES), max_size=3, unique=True),
            "fail": st.none() | st.sampled_from(["upload", "extract"]),
        }
    )


@_guarded
def _c_osworld(sim: Simulation, ex: dict[str, Any], variant: str) -> Verdict:
    """An OSWorld record claims memory, and nudges name ~/.memory, only when the bank was delivered."""
    if ex["fail"] == "upload":
        _arm(sim, [f"fail@{fp.OSWORLD_PUSH}"])
    elif ex["fail"] == "extract":
        _arm(sim, [f"fail@{fp.PUSH_EXTRACT}"])
    vm = GuestVM(sim, "osworld")
    bank = {n: fact(i + 1).encode() for i, n in enumerate(ex["files"])}
    rec = osworld_attach_memory(sim, vm, bank, _variant(variant, "osworld-record-off"))
    nudge = memory_revisit(rec.env_memory_dir, "fold")
    delivered = vm.bank() == bank  # what the Actor's machine actually holds
    return props.check_memory_claim(rec.memory_mode, delivered, rec.env_memory_dir if nudge else None)


# -- 15. diagnosis-phase edits promoted --------------------------------------------------------------------
def _s_diagnosis() -> Any:
    return st.fixed_dictionaries(
        {
            "add": st.lists(st.sampled_from(NAMES), max_size=2),
            "edits": st.lists(st.sampled_from(NAMES), max_size=2),
        }
    )


@_guarded
def _c_diagnosis(sim: Simulation, ex: dict[str, Any], variant: str) -> Verdict:
    """The installed bank is the bank at reconciliation end."""
    host = Host(sim, corpus=CORPUS, variant=_variant(variant, "diagnosis-snapshot"))
    spec = ProjectSpec(
        1,
        INSTRUCTION,
        ActorWork(),
        distiller=Distiller(add=tuple((n, fact(i + 1)) for i, n in enumerate(ex["add"]))),
        reconciler=Reconciler(),
        diagnosis=Diagnosis(bank_edits=tuple((n, fact(50 + i)) for i, n in enumerate(ex["edits"]))),
    )
    rec = evolve_practice_project(sim, host, spec)
    reconciled = [op.data["bank"] for op in sim.trace.data.ops if op.op == "reconcile"][-1]
    installed = {n: hashlib.sha256(d).hexdigest() for n, d in rec.after_bank.items()}
    return props.check_diagnosis_not_promoted(installed, reconciled)


# -- 16. a failed pull looks empty -------------------------------------------------------------------------
def _s_pull() -> Any:
    return st.fixed_dictionaries(
        {
            "guest": st.lists(st.sampled_from(NAMES), max_size=3, unique=True),
            "failures": st.integers(0, 5),  # 3 or more: every attempt fails
        }
    )


@_guarded
def _c_pull(sim: Simulation, ex: dict[str, Any], variant: str) -> Verdict:
    """A commit never replaces a non-empty guest bank by an empty canonical bank."""
    host = Host(sim, corpus=CORPUS, variant=_variant(variant, "", counterfactual="raw-pull"))
    vm = GuestVM(sim, "vm-ep001")
    vm.volume.mkdir(vm.MEMORY)
    for i, n in enumerate(ex["guest"]):
        vm.write_bank_file(n, fact(i + 1).encode())
    guest = vm.bank()
    _arm(sim, [f"fail@{fp.PULL_ATTEMPT}#{i}" for i in range(1, ex["failures"] + 1)])
    try:
        rec = commit_learning(sim, host, vm, 1, "PASS", authorized=INSTRUCTION)
    except PracticeInfrastructureError:
        return Verdict.ok("terminal pull refused: infra")
    return props.check_no_silent_empty(guest, rec.after_bank, rec.outcome)


# -- registry ----------------------------------------------------------------------------------------------
ADM = ("RT-RTE-learning-admission", "MEM-OBJ-memory")
JRN = ("MEM-OBJ-memory-journal", "RT-RTE-learning-admission")
FOLD = ("MEM-RTE-worklog-fold", "MEM-OBJ-work-log")


_claim = claim_factory(SYSTEM)


CLAIMS: list[Claim] = [
    _claim(
        "work-lesson-lost",
        ("RT-RTE-learning-admission", "MEM-OBJ-memory", "RT-RTE-task-execution"),
        "A lesson the Actor writes to ~/.memory while working is wiped by the pre-distillation reset "
        "and lost unless distillation rewrites it.",
        "draft-work-delta: carry the work-phase delta into the reset bank as a visible draft",
        _s_work_lesson,
        _c_work_lesson,
    ),
    _claim(
        "journal-episode-overwrite",
        JRN,
        "A repeated episode id (experience_index restarts per cycle root) silently overwrites "
        "ep{NNN}.tgz while journal.jsonl keeps both lines: the first tree is unrecoverable.",
        "exclusive-journal: create the archive exclusively (a reused id is refused)",
        _s_journal_ids,
        _c_journal_ids,
    ),
    _claim(
        "journal-ahead-of-install",
        JRN,
        "The journal is written before the install, so an install that raises leaves a journal line "
        "for a tree that was never installed.",
        "journal-after-install: journal only after the install succeeded",
        _s_journal_install,
        _c_journal_install,
    ),
    _claim(
        "wave-lost-update-counterfactual",
        ("RT-RTE-learning-admission", "MEM-OBJ-memory"),
        "Counterfactual: if canonical memory were pushed only at wave start, a later branch's whole-tree "
        "install would erase an earlier sibling's committed lesson; upstream's re-push of the latest "
        "canonical bank at each serialized commit (the 'fixed' direction here) prevents it.",
        "upstream: push the latest canonical bank into each branch at its serialized commit",
        _s_wave(False),
        _c_wave_lost_update,
    ),
    _claim(
        "wave-stale-rewrite",
        ("RT-RTE-learning-admission", "MEM-OBJ-memory"),
        "Upstream residue: a branch that read a file during work and rewrites it from its stale context "
        "at commit drops the lines a sibling committed to that file.",
        "wave-sibling-check: merge (line union) overwrites of files a sibling changed since the snapshot",
        _s_wave(True),
        _c_wave_stale,
    ),
    _claim(
        "fold-mid-message-loss",
        FOLD,
        "A fact between character 1,500 and len-2,500 of a message over 4,000 characters never reaches "
        "the summarizer when that message is folded.",
        "complete-fold-input: render the complete (chunked) content for the summarizer",
        _s_fold_middle,
        _c_fold_middle,
    ),
    _claim(
        "digest-fallback-wipes-log",
        FOLD,
        "On a blank summary the digest fallback appends to the WORK LOG and keeps the newest tail under "
        "the cap, erasing the old log's facts.",
        "trim-digest: trim the digest, never the log",
        _s_digest,
        _c_digest,
    ),
    _claim(
        "fold-guard-stuck",
        FOLD,
        "With fewer than fold_batch foldable pairs outside the keep window no fold happens, so the "
        "context stays above high water.",
        "partial-fold-batch: fold a partial last batch",
        _s_guard,
        _c_guard,
    ),
    _claim(
        "resume-truncates-log",
        ("MEM-OBJ-work-log", "MEM-RTE-worklog-fold", "RT-OBJ-loop-result"),
        "A stalled restart hands over only a fixed-size head of the WORK LOG (upstream: the first 12,000 "
        "characters, 6,000 on a pivot; scaled down in the examples), so facts further down a log that may "
        "hold 500,000 characters never reach the fresh attempt.",
        "handoff-cap-worklog: cap the handoff at worklog_max_chars",
        _s_handoff,
        _c_handoff,
    ),
    _claim(
        "pivot-review-blind",
        ("MEM-OBJ-work-log", "MEM-RTE-worklog-fold"),
        "On the pivot path the strategy review is fed res.worklog (empty without a fold), not the "
        "synthesized wl that is handed over.",
        "review-gets-wl: pass wl to the strategy review",
        _s_review,
        _c_review,
    ),
    _claim(
        "write-memory-bypass",
        JRN,
        "The direct write_memory API bypasses admission: even one ordinary file is installed with no "
        "journal entry; other inputs also install unaudited leaking text, write '../' names outside the "
        "bank, or (on a crash after the delete-everything step) leave a partial bank.",
        "admit-direct-writes: route it through pull-audit-journal-staged install with name checks",
        _s_write_memory,
        _c_write_memory,
    ),
    _claim(
        "stale-curriculum-notes",
        ("MEM-OBJ-curriculum-notes", "RT-RTE-curriculum-search"),
        "An empty or unreadable notes file reads as '' and keeps the old notes, so the next charter "
        "still shows them.",
        "empty-notes-clear: a present-but-empty (or unreadable) file clears the notes",
        _s_notes,
        _c_notes,
    ),
    _claim(
        "install-window-empty",
        ADM,
        "Between the backup rename and the stage rename the bank does not exist: a read there gives {}; "
        "a crash there also starts the next run empty with an orphaned backup.",
        "exchange-install: atomic exchange of stage and bank plus startup recovery",
        _s_install_window,
        _c_install_window,
    ),
    _claim(
        "partial-wave-commit",
        ADM,
        "An audit rejection at branch k>=2 quarantines the run after branches 1..k-1 were installed: "
        "canonical changed and the wave outcome is never written.",
        "stage-wave: commit into a wave stage and publish once",
        _s_partial_wave,
        _c_partial_wave,
    ),
    _claim(
        "osworld-misreport",
        ("RT-RTE-task-execution", "MEM-OBJ-memory"),
        "OSWorld continues memory-OFF after a failed push while the record says "
        "frozen_host_snapshot_copy_in_only and nudges still name ~/.memory.",
        "osworld-record-off: clear env_memory_dir and record memory OFF",
        _s_osworld,
        _c_osworld,
    ),
    _claim(
        "diagnosis-edits-promoted",
        ("MEM-OBJ-learning-diagnosis", "RT-RTE-learning-admission"),
        "Bank edits made during the learning-diagnosis phase (after reconciliation) are pulled and "
        "installed.",
        "diagnosis-snapshot: take the candidate at reconciliation end",
        _s_diagnosis,
        _c_diagnosis,
    ),
    _claim(
        "failed-pull-looks-empty",
        ADM,
        "Counterfactual: a raw pull_memory returns {} after 3 failures; a caller that commits it installs "
        "an empty bank. Upstream's _pull_terminal_memory count check (the 'fixed' direction) refuses it.",
        "upstream: _pull_terminal_memory (types, safe names, directory, find count)",
        _s_pull,
        _c_pull,
    ),
]
