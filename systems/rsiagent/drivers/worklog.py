"""Drivers of the WORK LOG claims: folding and the stalled restart (MEM-RTE-worklog-fold,
MEM-OBJ-work-log)."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from sim.claims import Verdict
from sim.engine import Simulation
from sim.text import extract_facts
from sim.variant import Variant
from systems.rsiagent import properties as props
from systems.rsiagent.drivers.common import (
    FILL,
    INSTRUCTION,
    fact,
)
from systems.rsiagent.model import (
    ActorLoop,
    stalled_handoff,
)
from systems.rsiagent.policies import (
    Summarizer,
)
from systems.rsiagent.state import LoopConfig, LoopResult, Message

# -- 5. a fact lost from the middle of a folded message ----------------------------------------------------


def _content(size: int, positions: list[int], first: int) -> str:
    body = (FILL * (size // len(FILL) + 1))[:size]
    out = body
    for j, pos in enumerate(sorted(positions, reverse=True)):
        at = min(len(out), size * pos // 10)
        out = out[:at] + f" {fact(first + j)} " + out[at:]
    return out


def fold_middle_examples() -> Any:
    env = st.tuples(st.sampled_from([300, 3000, 4200, 6000]), st.lists(st.integers(0, 10), max_size=2))
    return st.fixed_dictionaries({"envs": st.lists(env, min_size=1, max_size=4), "batch": st.integers(1, 2)})


def check_fold_middle(sim: Simulation, ex: dict[str, Any], variant: Variant) -> Verdict:
    """Every fact of a folded message reaches the WORK LOG (lossless summarizer, ample cap)."""
    cfg = LoopConfig(history_keep_pairs=1, keep_chars=0, fold_batch=ex["batch"], worklog_max_chars=100_000)
    loop = ActorLoop(sim, cfg, Summarizer(), instruction=INSTRUCTION, variant=variant)
    n = 1
    for size, pos in ex["envs"]:
        loop.call("PROGRAM: run")
        loop.observe(_content(size, pos, n))
        n += len(pos)
    loop.call("PROGRAM: run")
    folded: set[str] = set()
    for m in loop.messages[: 2 * loop.covered]:
        folded |= extract_facts(m.content)
    return props.check_fold_keeps_facts(frozenset(folded), loop.summary)


# -- 6. the digest fallback erases the log -----------------------------------------------------------------
def digest_examples() -> Any:
    return st.fixed_dictionaries(
        {
            "log_facts": st.integers(0, 6),
            "envs": st.lists(st.integers(20, 300), min_size=1, max_size=3),
            "cap": st.sampled_from([200, 400, 800]),
        }
    )


def check_digest(sim: Simulation, ex: dict[str, Any], variant: Variant) -> Verdict:
    """A blank summary's digest fallback never drops facts the WORK LOG already held."""
    cfg = LoopConfig(history_keep_pairs=1, keep_chars=0, fold_batch=1, worklog_max_chars=ex["cap"])
    loop = ActorLoop(sim, cfg, Summarizer(blank=True), instruction=INSTRUCTION, variant=variant)
    old = "WORK LOG\n" + "\n".join(f"- {fact(i)}" for i in range(1, ex["log_facts"] + 1))
    loop.summary = old[: ex["cap"]].rsplit("\n", 1)[0] if len(old) > ex["cap"] else old
    before = loop.summary
    for size in ex["envs"]:
        loop.call("PROGRAM: run")
        loop.observe((FILL * 20)[:size])
    loop.call("PROGRAM: run")
    return props.check_log_kept(before, loop.summary)


# -- 7. the fold guard stuck above high water --------------------------------------------------------------
def guard_examples() -> Any:
    return st.fixed_dictionaries(
        {
            "pairs": st.integers(1, 24),
            "pair_chars": st.sampled_from([60, 120, 400]),
            "high": st.sampled_from([600, 1200, 2400]),
            "batch": st.integers(1, 10),
            "keep_chars": st.sampled_from([0, 300, 3000]),
        }
    )


def check_guard(sim: Simulation, ex: dict[str, Any], variant: Variant) -> Verdict:
    """After each fold step the context is at or below high water, or nothing is left to fold."""
    cfg = LoopConfig(
        history_keep_pairs=80,
        keep_chars=ex["keep_chars"],
        ctx_high_water=ex["high"],
        ctx_low_water=ex["high"] // 2,
        fold_batch=ex["batch"],
        worklog_max_chars=100,
    )
    loop = ActorLoop(sim, cfg, Summarizer(), instruction="t", variant=variant)
    half = ex["pair_chars"] // 2
    for _ in range(ex["pairs"]):
        loop.call("P" * half)
        loop.observe("E" * half)
        v = props.check_fold_guard(loop.size(), cfg.ctx_high_water, loop.foldable())
        if not v.holds:
            return v
    return Verdict.ok()


# -- 8. the resume handoff truncates the log ---------------------------------------------------------------
def handoff_examples() -> Any:
    return st.fixed_dictionaries(
        {
            "facts": st.integers(1, 40),
            "cap": st.sampled_from([120, 240, 480]),
            "pivot": st.booleans(),
        }
    )


def check_handoff(sim: Simulation, ex: dict[str, Any], variant: Variant) -> Verdict:
    """Every fact of the WORK LOG handed to a fresh attempt reaches it."""
    cfg = LoopConfig(
        history_keep_pairs=80, worklog_max_chars=2000, handoff_cap=ex["cap"], pivot_cap=ex["cap"] // 2
    )
    wl = "WORK LOG\n" + "\n".join(f"- {fact(i)}" for i in range(1, ex["facts"] + 1))
    res = LoopResult("stalled", 10, wl, surface_delta="" if ex["pivot"] else "M project/x.py")
    h = stalled_handoff(sim, cfg, res, [], variant=variant)
    return props.check_handoff_keeps_log(h.worklog, h.message)


# -- 9. the pivot review is blind to the synthesized log ---------------------------------------------------
def review_examples() -> Any:
    return st.fixed_dictionaries(
        {
            "messages": st.lists(st.integers(0, 2), min_size=1, max_size=14),
            "worklog": st.booleans(),
        }
    )


def check_review(sim: Simulation, ex: dict[str, Any], variant: Variant) -> Verdict:
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
    h = stalled_handoff(sim, cfg, res, history, variant=variant)
    tail = "\n".join(m.content[:1500] for m in history[-6:])
    return props.check_review_sees_log(h.worklog, h.review_input_worklog + "\n" + tail)
