"""WORK LOG folding and stalled restart (MEM-RTE-worklog-fold, MEM-OBJ-work-log, RT-OBJ-loop-result)."""

from sim.engine import Simulation
from systems.rsiagent.model import (
    ROLE_DEFAULTS,
    TASK_HEADER,
    WORKLOG_HEADER,
    ActorLoop,
    digest_fallback,
    phase_cfg,
    render_fold,
    resume,
    resume_eligible,
    stalled_handoff,
    synthesize_worklog,
)
from systems.rsiagent.policies import Summarizer
from systems.rsiagent.state import SWITCHES, LoopConfig, LoopResult, Message

TARGET = ROLE_DEFAULTS["target"]


def _pair(chars: int, tag: str = "") -> tuple[Message, Message]:
    half = chars // 2
    return Message("assistant", "P" * half), Message(
        "user", (tag + " " + "E" * half)[:half] if tag else "E" * half
    )


def test_role_defaults_table() -> None:
    """Target folds (80 pairs, 500k chars, 900k/500k water, batch 10, 500k log); actor does not."""
    assert (
        TARGET.history_keep_pairs,
        TARGET.keep_chars,
        TARGET.ctx_high_water,
        TARGET.ctx_low_water,
        TARGET.fold_batch,
        TARGET.worklog_max_chars,
        TARGET.max_resumes,
        TARGET.max_iters,
    ) == (80, 500_000, 900_000, 500_000, 10, 500_000, 1, 500)
    assert TARGET.resume_synthesize_worklog and TARGET.resume_with_worklog and TARGET.strategy_pivot
    assert not ROLE_DEFAULTS["actor"].folding and ROLE_DEFAULTS["actor"].max_resumes == 0
    assert not ROLE_DEFAULTS["practice_verifier"].folding
    assert ROLE_DEFAULTS["config"].fold_batch == 10 and ROLE_DEFAULTS["config"].worklog_max_chars == 40_000
    assert phase_cfg(TARGET).history_keep_pairs == 0 and phase_cfg(TARGET).max_resumes == 0


def test_config_defaults_row_and_role_overrides() -> None:
    """§2.18: the Config row (streak limits 3/3/3/16 included) and the verifier-like roles' overrides."""
    c = ROLE_DEFAULTS["config"]
    assert (
        c.history_keep_pairs,
        c.keep_chars,
        c.ctx_high_water,
        c.ctx_low_water,
        c.fold_batch,
        c.worklog_max_chars,
        c.max_resumes,
        c.resume_with_worklog,
        c.resume_synthesize_worklog,
        c.strategy_pivot,
        c.max_iters,
        c.wall_clock_secs,
        c.agent_decided_stop,
        c.escalation_model,
    ) == (0, 0, 0, 0, 10, 40_000, 1, True, False, True, 24, 7200, False, "")
    assert (c.max_consec_dry, c.max_consec_degenerate, c.max_consec_done, c.max_consec_repeat) == (
        3,
        3,
        3,
        16,
    )
    for role in ("actor", "verifier", "practice_verifier", "escalation"):
        r = ROLE_DEFAULTS[role]
        assert (
            r.history_keep_pairs,
            r.max_resumes,
            r.max_iters,
            r.wall_clock_secs,
            r.agent_decided_stop,
        ) == (
            0,
            0,
            2000,
            86_400,
            True,
        ), role
    pv = ROLE_DEFAULTS["practice_verifier"]
    assert (pv.keep_chars, pv.ctx_high_water, pv.ctx_low_water) == (500_000, 900_000, 500_000)
    assert ROLE_DEFAULTS["target"].escalation_model == "moonshotai/kimi-k3"


def test_reproduced_fold_stops_above_high_water() -> None:
    """100 pairs of 120k chars under the target defaults: 90 folded, 10 left, size still above high."""
    sim = Simulation(1)
    loop = ActorLoop(sim, TARGET, Summarizer(), task="t")
    for _ in range(100):
        a, e = _pair(120_000)
        loop.messages += [a, e]
        loop._cum += [loop._cum[-1] + len(a.content), loop._cum[-1] + len(a.content) + len(e.content)]
        loop._pair_content.append(120_000)

    loop.maybe_fold()

    assert loop.covered == 90 and loop.pairs - loop.covered == 10
    assert loop.size() > TARGET.ctx_high_water
    assert [f.pairs for f in loop.folds] == [10] * 9


def test_size_counts_reasoning() -> None:
    """Size is summary + content + reasoning of unfolded messages."""
    sim = Simulation(1)
    loop = ActorLoop(sim, LoopConfig(), Summarizer(), task="t")
    loop.add_pair(Message("assistant", "ab", reasoning="xyz"), Message("user", "c"))
    loop.summary = "12345"

    assert loop.size() == 5 + 2 + 3 + 1


def test_no_folding_without_keep_pairs() -> None:
    """history_keep_pairs = 0 (practice, memory, handoff phases) never folds."""
    sim = Simulation(1)
    loop = ActorLoop(sim, phase_cfg(TARGET.scaled(0.0001)), Summarizer(), task="t")
    for _ in range(50):
        loop.add_pair(*_pair(400))

    assert loop.covered == 0


def test_legacy_mode_folds_all_foldable_in_one_call() -> None:
    """high water 0: once a batch is foldable, every foldable pair folds in one call."""
    sim = Simulation(1)
    cfg = LoopConfig(history_keep_pairs=6, keep_chars=0, fold_batch=3)
    loop = ActorLoop(sim, cfg, Summarizer(), task="t")
    for _ in range(9):
        loop.add_pair(*_pair(10))

    assert [(f.first_pair, f.pairs) for f in loop.folds] == [(0, 3)]
    assert loop.covered == 3


def test_hysteresis_folds_down_to_low_water() -> None:
    """Above high water, whole batches fold while size > low water and a batch is foldable."""
    sim = Simulation(1)
    cfg = LoopConfig(
        history_keep_pairs=80,
        keep_chars=100,
        ctx_high_water=1000,
        ctx_low_water=400,
        fold_batch=2,
        worklog_max_chars=50,
    )
    loop = ActorLoop(sim, cfg, Summarizer(), task="t")
    for _ in range(10):
        loop.add_pair(*_pair(100))
    assert loop.covered == 0
    loop.add_pair(*_pair(100))

    assert [(f.first_pair, f.pairs) for f in loop.folds] == [(0, 2), (2, 2)]
    assert loop.size() == 709 and loop.foldable() == 1  # above low water: fewer than a batch left


def test_fold_renders_you_env_and_clips() -> None:
    """The summarizer sees [YOU]/[ENV] plus fold_input(content); reasoning never."""
    batch = [Message("assistant", "run", reasoning="secret"), Message("user", "x" * 5000)]

    out = render_fold(batch)

    assert out.startswith("[YOU]\nrun\n\n[ENV]\n" + "x" * 1500 + "\n…[trace middle elided]…\n")
    assert "secret" not in out
    assert render_fold(batch, complete=True) == "[YOU]\nrun\n\n[ENV]\n" + "x" * 5000


def test_mid_message_fact_is_lost_in_a_fold() -> None:
    """A fact at character 3,000 of a 6,000-character message never reaches the WORK LOG."""
    sim = Simulation(1)
    cfg = LoopConfig(history_keep_pairs=1, keep_chars=0, fold_batch=1, worklog_max_chars=10_000)
    loop = ActorLoop(sim, cfg, Summarizer(), task="t")
    body = "y" * 3000 + " FACT-0007=teal " + "y" * 3000
    loop.add_pair(Message("assistant", "PROGRAM: cat"), Message("user", body))
    loop.add_pair(Message("assistant", "PROGRAM: ls"), Message("user", "FACT-0008=red"))

    assert loop.folds[0].lost_middle_facts == ("FACT-0007",)
    assert "FACT-0007" not in loop.summary
    fixed = ActorLoop(
        Simulation(1), cfg, Summarizer(), task="t", variant=SWITCHES.fixed("complete-fold-input")
    )
    fixed.add_pair(Message("assistant", "PROGRAM: cat"), Message("user", body))
    fixed.add_pair(Message("assistant", "PROGRAM: ls"), Message("user", "x"))
    assert "FACT-0007=teal" in fixed.summary


def test_digest_fallback_keeps_newest_tail() -> None:
    """A blank summary appends digest lines; over the cap the newest tail wins at a line boundary."""
    log = "WORK LOG\n- FACT-0001=red"
    batch = [Message("assistant", "a" * 50), Message("user", "b" * 50)]

    assert digest_fallback(log, batch, 1000) == log + "\n[you] " + "a" * 50 + "\n[env] " + "b" * 50
    assert digest_fallback(log, batch, 70) == "[env] " + "b" * 50
    assert digest_fallback(log, batch, 70, trim_digest=True) == log


def test_prompt_after_fold_has_task_and_log_then_tail() -> None:
    """After a fold: TASK (verbatim) + WORK LOG as one message, the unfolded messages, then the nudge."""
    sim = Simulation(1)
    cfg = LoopConfig(history_keep_pairs=1, keep_chars=0, fold_batch=1)
    loop = ActorLoop(sim, cfg, Summarizer(), task="do it", env_memory_dir="~/.memory")
    loop.add_pair(Message("assistant", "a1"), Message("user", "FACT-0001=red"))
    loop.add_pair(Message("assistant", "a2"), Message("user", "e2"))

    parts = loop.request("Question?")

    assert parts[0] == f"{TASK_HEADER}\ndo it\n\n{WORKLOG_HEADER}\nWORK LOG\n- FACT-0001=red"
    assert parts[1:3] == ["a2", "e2"]
    assert parts[3].startswith("[MEMORY RETRIEVAL OPPORTUNITY]") and parts[4] == "Question?"
    assert sim.trace.data.requests[-1].route == "loop.step"
    assert loop.result("done").worklog == loop.summary


def test_resume_eligibility() -> None:
    """Only stalled, with resumes left, 10 iterations and 300 s remaining."""
    res = LoopResult("stalled", 400, "")
    assert resume_eligible(res, 0, TARGET, 300)
    assert not resume_eligible(res, 1, TARGET, 3000)
    assert not resume_eligible(LoopResult("stalled", 491, ""), 0, TARGET, 3000)
    assert not resume_eligible(res, 0, TARGET, 299)
    for status in ("safety_ceiling", "budget", "stalled_quiescent"):
        assert not resume_eligible(LoopResult(status, 1, ""), 0, TARGET, 3000)


def test_synthesized_log_uses_last_60_messages() -> None:
    """The synthesized worklog renders only history[-60:]."""
    history = [Message("user" if i % 2 == 0 else "assistant", f"m{i}") for i in range(70)]

    wl = synthesize_worklog(history, 100_000)

    assert "m9\n" not in wl + "\n" and "m10" in wl and wl.startswith("[ENV]\nm10")


def test_handoff_truncates_to_12k_and_pivot_to_6k() -> None:
    """The plain handoff carries wl[:12000]; the pivot handoff wl[:6000]."""
    sim = Simulation(1)
    wl = "z" * 20_000
    plain = stalled_handoff(sim, TARGET, LoopResult("stalled", 1, wl, surface_delta="M x"), [])
    pivot = stalled_handoff(sim, TARGET, LoopResult("stalled", 1, wl), [])

    assert plain.message.count("z") == 12_000 and not plain.pivot
    assert pivot.message.count("z") == 6_000 and pivot.pivot
    fixed = stalled_handoff(
        sim,
        TARGET,
        LoopResult("stalled", 1, wl, surface_delta="M x"),
        [],
        variant=SWITCHES.fixed("handoff-cap-worklog"),
    )
    assert fixed.message.count("z") == 20_000


def test_pivot_review_gets_res_worklog_not_wl() -> None:
    """With an empty worklog the review input is empty although wl was synthesized."""
    sim = Simulation(1)
    history = [Message("user", f"FACT-{i:04d}=red") for i in range(1, 10)]
    h = stalled_handoff(sim, TARGET, LoopResult("stalled", 1, "", tuple(history)), history)

    assert h.review_input_worklog == "" and "FACT-0001" in h.worklog
    review = next(r for r in sim.trace.data.requests if r.route == "loop.strategy_review")
    assert "FACT-0001" not in review.fact_ids and "FACT-0009" in review.fact_ids


def test_resume_starts_fresh_context_with_handoff() -> None:
    """A resumed attempt has no old pairs and carries the handoff in its task."""
    sim = Simulation(1)
    loop = ActorLoop(sim, TARGET, Summarizer(), task="t", env_memory_dir="~/.memory")
    loop.add_pair(Message("assistant", "a"), Message("user", "FACT-0001=red"))
    h = stalled_handoff(sim, TARGET, loop.result("stalled"), loop.messages)
    fresh = resume(loop, h)

    assert fresh.pairs == 0 and "FACT-0001" in fresh.task
    fresh.add_pair(Message("assistant", "b"), Message("user", "FACT-0002=tan"))
    assert [m.content for m in fresh.result("stalled").history] == [
        "a",
        "FACT-0001=red",
        "b",
        "FACT-0002=tan",
    ]
    assert fresh.context()[-1].startswith("[MEMORY RETRIEVAL OPPORTUNITY]")
