"""WORK LOG folding and stalled restart (MEM-RTE-worklog-fold, MEM-OBJ-work-log, RT-OBJ-loop-result)."""

import json
import random

from sim.engine import Simulation
from sim.text import extract_facts
from systems.rsiagent.model import (
    HANDOFF_PARAGRAPH,
    PIVOT_PARAGRAPH,
    REVISIT_EVENTS,
    ROLE_DEFAULTS,
    SUMMARIZER_SYSTEM,
    TASK_HEADER,
    WORKLOG_HEADER,
    ActorLoop,
    digest_fallback,
    memory_revisit,
    opening_message,
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


def _fill(loop: ActorLoop, pairs: int, chars: int) -> None:
    """Append *pairs* (user, assistant) pairs of *chars* characters straight to the history."""
    half = chars // 2
    for _ in range(pairs):
        loop._append(Message("user", "E" * half), Message("assistant", "P" * half))


def _turns(loop: ActorLoop, observations: list[str]) -> list[list[str]]:
    """Model calls: the pending message (first the opening), then one call per observation."""
    out = [loop.call("PROGRAM: start", record=False)]
    for i, obs in enumerate(observations):
        loop.observe(obs)
        out.append(loop.call(f"PROGRAM: step {i}", record=False))
    return out


class Trailing(Summarizer):
    """A summarizer whose answer ends in whitespace (upstream strips it)."""

    def summarize(self, worklog: str, rendered: str, rng: random.Random | None = None) -> str:
        return super().summarize(worklog, rendered, rng) + "\n\n"


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
    """100 pairs of 120k chars under the target defaults: 90 folded, 10 left, size still above high
    (``core/loop.py`` ``_fold_summary``: full batches only, the keep window is 6 pairs)."""
    loop = ActorLoop(Simulation(1), TARGET, Summarizer(), instruction="t")
    _fill(loop, 100, 120_000)

    loop.maybe_fold()

    assert loop.covered == 90 and loop.pairs - loop.covered == 10
    assert loop.size() > TARGET.ctx_high_water
    assert [f.pairs for f in loop.folds] == [10] * 9


def test_size_counts_reasoning_and_not_the_pending_message() -> None:
    """Size is summary + content + reasoning of the unfolded history; the pending message is not counted."""
    loop = ActorLoop(Simulation(1), LoopConfig(), Summarizer(), instruction="t")
    loop._append(Message("user", "c"), Message("assistant", "ab", reasoning="xyz"))
    loop.summary = "12345"
    loop.observe("x" * 1000)

    assert loop.size() == 5 + 1 + 2 + 3


def test_no_folding_without_keep_pairs() -> None:
    """history_keep_pairs = 0 (practice, memory, handoff phases) never folds."""
    loop = ActorLoop(Simulation(1), phase_cfg(TARGET.scaled(0.0001)), Summarizer(), instruction="t")
    _turns(loop, ["e" * 400] * 50)

    assert loop.covered == 0


def test_history_is_user_assistant_pairs_with_the_task_as_pair_0() -> None:
    """``run_attempt``: the opening TASK message is the first user message; each model call appends the
    user message it sent and the reply."""
    loop = ActorLoop(Simulation(1), LoopConfig(), Summarizer(), instruction="do it")
    _turns(loop, ["obs0"])

    assert [(m.role, m.content) for m in loop.history] == [
        ("user", opening_message("do it")),
        ("assistant", "PROGRAM: start"),
        ("user", "obs0"),
        ("assistant", "PROGRAM: step 0"),
    ]
    assert opening_message("do it").startswith("TASK:\ndo it\n\n")


def test_minimal_alignment_keep_1_batch_1() -> None:
    """Issue 15 item 2's minimal case (``core/loop.py`` ``run_attempt``): keep 1 pair, batch 1, two
    50-character observations: model call 3 folds pair 0 (the TASK pair) and shows observations [0, 1]
    verbatim (0 in the history, 1 pending)."""
    cfg = LoopConfig(history_keep_pairs=1, keep_chars=0, fold_batch=1, worklog_max_chars=10_000)
    loop = ActorLoop(Simulation(1), cfg, Summarizer(), instruction="t")
    o0, o1 = "FACT-0001=red " + "a" * 36, "FACT-0002=tan " + "b" * 36

    calls = _turns(loop, [o0, o1])

    assert [len(c) for c in calls[:2]] == [1, 3]  # no fold yet: the whole history, then the pending one
    assert [(f.first_pair, f.pairs) for f in loop.folds] == [(0, 1)]
    third = calls[2]
    assert third[0].startswith(TASK_HEADER + "t" + WORKLOG_HEADER)
    assert third[1:] == [o0, "PROGRAM: step 0", o1]


def test_fold_runs_before_the_call_and_the_pending_observation_is_not_foldable() -> None:
    """A huge pending observation does not trigger the fold of its own call (it is not yet history)."""
    cfg = LoopConfig(
        history_keep_pairs=1, keep_chars=0, ctx_high_water=2000, ctx_low_water=1000, fold_batch=1
    )
    loop = ActorLoop(Simulation(1), cfg, Summarizer(), instruction="t")
    calls = _turns(loop, ["x" * 50_000])

    assert loop.folds == [] and calls[1][-1] == "x" * 50_000
    loop.observe("next")
    loop.call("PROGRAM: again", record=False)
    assert [(f.first_pair, f.pairs) for f in loop.folds] == [(0, 1)]


def test_fold_note_is_appended_to_the_pending_message_and_enters_the_history() -> None:
    """``user += _memory_revisit(cfg, "fold")`` when the fold advanced ``covered``: the note is part of the
    user message, so it is counted and later folded."""
    cfg = LoopConfig(history_keep_pairs=1, keep_chars=0, fold_batch=1)
    loop = ActorLoop(Simulation(1), cfg, Summarizer(), instruction="t", env_memory_dir="~/.memory")
    calls = _turns(loop, ["e1", "e2"])
    note = memory_revisit("~/.memory", "fold")

    assert calls[2][-1] == "e2" + note
    assert loop.history[-2].content == "e2" + note
    assert note.startswith("\n\n[MEMORY RETRIEVAL OPPORTUNITY] " + REVISIT_EVENTS["fold"])
    assert memory_revisit(None, "fold") == ""


def test_legacy_mode_folds_all_foldable_in_one_call() -> None:
    """With 9 pairs in the history and keep 6, the 10th call folds pairs 0-2 in one summarizer call."""
    cfg = LoopConfig(history_keep_pairs=6, keep_chars=0, fold_batch=3)
    loop = ActorLoop(Simulation(1), cfg, Summarizer(), instruction="t")
    _turns(loop, ["e"] * 9)

    assert [(f.first_pair, f.pairs) for f in loop.folds] == [(0, 3)]
    assert loop.covered == 3


def test_hysteresis_folds_down_to_low_water() -> None:
    """Above high water, whole batches fold while size > low water and a batch lies outside the keep
    window; fewer than a batch left stops the fold above low water."""
    cfg = LoopConfig(
        history_keep_pairs=80,
        keep_chars=100,
        ctx_high_water=1000,
        ctx_low_water=400,
        fold_batch=2,
        worklog_max_chars=50,
    )
    loop = ActorLoop(Simulation(1), cfg, Summarizer(), instruction="t")
    _fill(loop, 11, 100)

    loop.maybe_fold()

    assert [(f.first_pair, f.pairs) for f in loop.folds] == [(0, 2), (2, 2)]
    assert loop.size() == 700 + len(loop.summary) and loop.foldable() == 1


def test_fold_renders_you_env_and_clips() -> None:
    """The summarizer sees [YOU]/[ENV] plus fold_input(content); reasoning never."""
    batch = [Message("assistant", "run", reasoning="secret"), Message("user", "x" * 5000)]

    out = render_fold(batch)

    assert out.startswith("[YOU]\nrun\n\n[ENV]\n" + "x" * 1500 + "\n…[trace middle elided]…\n")
    assert "secret" not in out
    assert render_fold(batch, complete=True) == "[YOU]\nrun\n\n[ENV]\n" + "x" * 5000


def test_fold_request_is_the_summarizer_prompt_and_the_log_then_the_turns() -> None:
    """``_fold_once``: ``SUMMARIZER_SYSTEM`` and ``CURRENT LOG:`` (``(empty)`` at first), ``OLDER TURNS TO
    FOLD IN:``, ``Output the updated log only.``"""
    sim = Simulation(1, keep_trace=True)
    cfg = LoopConfig(history_keep_pairs=1, keep_chars=0, fold_batch=1)
    loop = ActorLoop(sim, cfg, Summarizer(), instruction="t")
    _turns(loop, ["e1", "e2"])
    fold = next(r for r in sim.trace.data.requests if r.route == "loop.fold")

    assert json.loads(fold.detail)["tokens_by_kind"]["system"] == 307
    assert SUMMARIZER_SYSTEM.startswith("You keep the WORK LOG")


def test_mid_message_fact_is_lost_in_a_fold() -> None:
    """A fact at character 3,000 of a 6,000-character message never reaches the WORK LOG."""
    cfg = LoopConfig(history_keep_pairs=1, keep_chars=0, fold_batch=1, worklog_max_chars=10_000)
    body = "y" * 3000 + " FACT-0007=teal " + "y" * 3000
    loop = ActorLoop(Simulation(1), cfg, Summarizer(), instruction="t")
    _turns(loop, [body, "FACT-0008=red", "x"])

    assert loop.folds[1].lost_middle_facts == ("FACT-0007",)
    assert "FACT-0007" not in loop.summary
    fixed = ActorLoop(
        Simulation(1), cfg, Summarizer(), instruction="t", variant=SWITCHES.fixed("complete-fold-input")
    )
    _turns(fixed, [body, "FACT-0008=red", "x"])
    assert "FACT-0007=teal" in fixed.summary


def test_fold_strips_the_summary() -> None:
    """``_fold_once`` stores ``_cap_worklog(out.strip(), cap)``: trailing whitespace is not kept."""
    cfg = LoopConfig(history_keep_pairs=1, keep_chars=0, fold_batch=1)
    loop = ActorLoop(Simulation(1), cfg, Trailing(), instruction="t")
    _turns(loop, ["FACT-0001=red", "e"])
    assert loop.summary == "WORK LOG" and not loop.summary.endswith("\n")

    loop.observe("f")
    loop.call("PROGRAM: more", record=False)
    assert loop.summary == "WORK LOG\n- FACT-0001=red"


def test_digest_fallback_keeps_newest_tail() -> None:
    """A blank summary appends digest lines after ``"\n"`` (there even when the log is empty); over the cap
    the newest tail wins at a line boundary."""
    log = "WORK LOG\n- FACT-0001=red"
    batch = [Message("assistant", "a" * 50), Message("user", "b" * 50)]

    assert digest_fallback(log, batch, 1000) == log + "\n[you] " + "a" * 50 + "\n[env] " + "b" * 50
    assert digest_fallback("", batch, 1000) == "\n[you] " + "a" * 50 + "\n[env] " + "b" * 50
    assert digest_fallback(log, batch, 70) == "[env] " + "b" * 50
    assert digest_fallback("", [Message("user", "c" * 300)], 100) == ("[env] " + "c" * 214)[-100:]


def test_prompt_after_fold_has_task_and_log_then_tail() -> None:
    """After a fold: TASK (verbatim) + the raw instruction + WORK LOG as one message, the unfolded history,
    the pending message with the fold note, then the (transient) question."""
    sim = Simulation(1, keep_trace=True)
    cfg = LoopConfig(history_keep_pairs=1, keep_chars=0, fold_batch=1)
    loop = ActorLoop(sim, cfg, Summarizer(), instruction="do it", env_memory_dir="~/.memory")
    loop.call("a1")
    loop.observe("FACT-0001=red")
    loop.call("a2")
    loop.observe("e2")

    parts = loop.call("a3", question="Question?")

    assert parts[0] == TASK_HEADER + "do it" + WORKLOG_HEADER + "WORK LOG"
    assert parts[1:3] == ["FACT-0001=red", "a2"]
    assert parts[3] == "e2" + memory_revisit("~/.memory", "fold") and parts[4] == "Question?"
    req = sim.trace.data.requests[-1]
    assert req.route == "loop.step" and set(json.loads(req.detail)["tokens_by_kind"]) == {
        "worklog",
        "message",
    }
    assert loop.result("done").worklog == loop.summary
    assert "Question?" not in [m.content for m in loop.history]


def test_texts_are_sized_like_upstream() -> None:
    """The fold headers (12 + 26 tokens) and the summarizer prompt (307) set the request sizes."""
    from sim.tokens import count_tokens

    assert (count_tokens(TASK_HEADER), count_tokens(WORKLOG_HEADER)) == (12, 26)
    assert (len(SUMMARIZER_SYSTEM), count_tokens(SUMMARIZER_SYSTEM)) == (1444, 307)


def test_resume_eligibility() -> None:
    """Only stalled, with resumes left, 10 iterations and 300 s remaining."""
    res = LoopResult("stalled", 400, "")
    assert resume_eligible(res, 0, TARGET, 300)
    assert not resume_eligible(res, 1, TARGET, 3000)
    assert not resume_eligible(LoopResult("stalled", 491, ""), 0, TARGET, 3000)
    assert not resume_eligible(res, 0, TARGET, 299)
    for status in ("safety_ceiling", "budget", "stalled_quiescent"):
        assert not resume_eligible(LoopResult(status, 1, ""), 0, TARGET, 3000)


def test_synthesized_log_is_one_summarizer_call_over_the_last_60_messages() -> None:
    """``_synthesize_worklog``: one summarizer call over ``history[-60:]``, stripped and capped."""
    sim = Simulation(1, keep_trace=True)
    history = [Message("user" if i % 2 == 0 else "assistant", f"FACT-{i:04d}=red") for i in range(70)]

    wl = synthesize_worklog(sim, Trailing(), history, 100_000)

    synth = [r for r in sim.trace.data.requests if r.route == "loop.synthesize_worklog"]
    assert len(synth) == 1 and "FACT-0009" not in synth[0].fact_ids and "FACT-0010" in synth[0].fact_ids
    assert wl.startswith("WORK LOG\n- FACT-0010=red") and wl == wl.strip()
    assert extract_facts(wl) == {f"FACT-{i:04d}" for i in range(10, 70)}
    assert synthesize_worklog(Simulation(1), Summarizer(blank=True), history, 100) == ""


def test_handoff_truncates_to_12k_and_pivot_to_6k() -> None:
    """The plain handoff carries ``wl.strip()[:12000]``; the pivot handoff ``wl.strip()[:6000]``."""
    sim = Simulation(1)
    wl = "\n" + "z" * 20_000
    plain = stalled_handoff(sim, TARGET, LoopResult("stalled", 1, wl, surface_delta="M x"), [])
    pivot = stalled_handoff(sim, TARGET, LoopResult("stalled", 1, wl), [])

    assert plain.message == HANDOFF_PARAGRAPH + "\n\nThe previous attempt's work log:\n" + "z" * 12_000
    assert pivot.message.startswith(PIVOT_PARAGRAPH) and pivot.message.count("z") == 6_000 and pivot.pivot
    fixed = stalled_handoff(
        sim,
        TARGET,
        LoopResult("stalled", 1, wl, surface_delta="M x"),
        [],
        variant=SWITCHES.fixed("handoff-cap-worklog"),
    )
    assert fixed.message.count("z") == 20_000


def test_blank_log_leaves_the_log_section_out() -> None:
    """``handoff_message``/``pivot_handoff_message`` add a section only when its text is not blank."""
    sim = Simulation(1)
    plain = stalled_handoff(
        sim, ROLE_DEFAULTS["config"], LoopResult("stalled", 1, "\n", surface_delta="M"), []
    )

    assert plain.message == HANDOFF_PARAGRAPH


def test_pivot_review_gets_res_worklog_not_wl() -> None:
    """With an empty worklog the review is asked about an empty log although wl was synthesized."""
    sim = Simulation(1, keep_trace=True)
    history = [Message("user", f"FACT-{i:04d}=red") for i in range(1, 10)]
    h = stalled_handoff(sim, TARGET, LoopResult("stalled", 1, "", tuple(history)), history)

    assert "WORK LOG of the attempt" not in h.review_input_worklog and "FACT-0001" in h.worklog
    review = next(r for r in sim.trace.data.requests if r.route == "loop.strategy_review")
    assert "FACT-0001" not in review.fact_ids and "FACT-0009" in review.fact_ids
    assert json.loads(review.detail)["tokens_by_kind"]["system"] == 27


def test_resume_starts_fresh_context_with_handoff_and_recovery_note() -> None:
    """A resumed attempt has no old pairs; its opening message is the handoff, the ``recovery`` note, then
    the TASK message (``run_attempt(opening_extra=extra)``)."""
    sim = Simulation(1)
    loop = ActorLoop(sim, TARGET, Summarizer(), instruction="t", env_memory_dir="~/.memory")
    _turns(loop, ["FACT-0001=red"])
    h = stalled_handoff(sim, TARGET, loop.result("stalled"), loop.history, env_memory_dir="~/.memory")
    fresh = resume(loop, h)

    assert fresh.pairs == 0 and fresh.pending is not None
    assert fresh.pending == h.message + "\n\n" + opening_message("t")
    assert h.message.endswith(memory_revisit("~/.memory", "recovery")) and "FACT-0001" in h.message
    fresh.call("b")
    assert [m.content for m in fresh.result("stalled").history][:3] == [
        opening_message("t"),
        "PROGRAM: start",
        "FACT-0001=red",
    ]
