"""Drivers of the WORK LOG claims: folding and the stalled restart (MEM-RTE-worklog-fold,
MEM-OBJ-work-log)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from hypothesis import strategies as st
from pydantic import Field
from typing_extensions import TypedDict

from sim.claims import Verdict
from sim.engine import Simulation
from sim.text import extract_facts
from sim.variant import Variant
from systems.rsiagent import properties as props
from systems.rsiagent.drivers.common import FILL, INSTRUCTION, fact
from systems.rsiagent.model import KEEP_FLOOR, ActorLoop, stalled_handoff
from systems.rsiagent.policies import Summarizer
from systems.rsiagent.state import LoopConfig, LoopResult, Message


def _content(size: int, positions: list[int], first: int) -> str:
    body = (FILL * (size // len(FILL) + 1))[:size]
    out = body
    for j, pos in enumerate(sorted(positions, reverse=True)):
        at = min(len(out), size * pos // 10)
        out = out[:at] + f" {fact(first + j)} " + out[at:]
    return out


def _drive(loop: ActorLoop, observations: list[str]) -> list[str]:
    """The opening call, then one model call per observation; returns the last call's request."""
    parts = loop.call("PROGRAM: start", record=False)
    for obs in observations:
        loop.observe(obs)
        parts = loop.call("PROGRAM: run", record=False)
    return parts


# -- 5. a fact lost from the middle of a folded message ----------------------------------------------------
class FoldMiddleExample(TypedDict):
    """Observations (size, fact positions in tenths of the size) and the fold batch."""

    envs: Annotated[
        list[
            tuple[
                Literal[300, 3000, 4200, 6000],
                Annotated[list[Annotated[int, Field(ge=0, le=10)]], Field(max_length=2)],
            ]
        ],
        Field(min_length=1, max_length=5),
    ]
    batch: Annotated[int, Field(ge=1, le=2)]


def fold_middle_examples() -> Any:
    env = st.tuples(st.sampled_from([300, 3000, 4200, 6000]), st.lists(st.integers(0, 10), max_size=2))
    return st.fixed_dictionaries({"envs": st.lists(env, min_size=1, max_size=5), "batch": st.integers(1, 2)})


def check_fold_middle(sim: Simulation, ex: dict[str, Any], variant: Variant) -> Verdict:
    """Every observed fact reaches the next model request, as the WORK LOG or verbatim, while the fold
    compacts what its trigger says (lossless summarizer, ample cap)."""
    cfg = LoopConfig(history_keep_pairs=1, keep_chars=0, fold_batch=ex["batch"], worklog_max_chars=100_000)
    loop = ActorLoop(sim, cfg, Summarizer(), instruction=INSTRUCTION, variant=variant)
    observations = []
    n = 1
    for size, pos in ex["envs"]:
        observations.append(_content(size, pos, n))
        n += len(pos)
    parts = _drive(loop, observations)
    observed = frozenset().union(*(extract_facts(o) for o in observations))
    verdict = props.check_facts_reach_request(observed, "\n".join(parts))
    if not verdict.holds:
        return verdict
    return props.check_fold_ran(loop.pairs - 1, cfg.history_keep_pairs, loop.covered, cfg.fold_batch)


# -- 6. the digest fallback erases the log -----------------------------------------------------------------
class DigestExample(TypedDict):
    """Facts in the WORK LOG before, observation sizes (each starts with a fact) and the log cap."""

    log_facts: Annotated[int, Field(ge=0, le=6)]
    envs: Annotated[list[Annotated[int, Field(ge=20, le=300)]], Field(min_length=1, max_length=3)]
    cap: Literal[200, 400, 800]


def digest_examples() -> Any:
    return st.fixed_dictionaries(
        {
            "log_facts": st.integers(0, 6),
            "envs": st.lists(st.integers(20, 300), min_size=1, max_size=3),
            "cap": st.sampled_from([200, 400, 800]),
        }
    )


def check_digest(sim: Simulation, ex: dict[str, Any], variant: Variant) -> Verdict:
    """With a blank summarizer, every fact the WORK LOG held and every observed fact stays in the next
    request (the log or the verbatim history)."""
    cfg = LoopConfig(history_keep_pairs=1, keep_chars=0, fold_batch=1, worklog_max_chars=ex["cap"])
    loop = ActorLoop(sim, cfg, Summarizer(blank=True), instruction=INSTRUCTION, variant=variant)
    old = "WORK LOG\n" + "\n".join(f"- {fact(i)}" for i in range(1, ex["log_facts"] + 1))
    loop.summary = old[: ex["cap"]].rsplit("\n", 1)[0] if len(old) > ex["cap"] else old
    before = loop.summary
    observations = [(f"{fact(100 + k)} " + FILL * 12)[:size] for k, size in enumerate(ex["envs"])]
    parts = _drive(loop, observations)
    observed = frozenset().union(*(extract_facts(o) for o in observations))
    return props.check_log_and_batch_kept(before, observed, "\n".join(parts))


# -- 7. the fold guard stuck above high water --------------------------------------------------------------
class GuardExample(TypedDict):
    """Model calls, the chars of each (observation, reply) pair, high water (low is half), fold batch and
    the keep window's character budget (0: ``history_keep_pairs`` pairs)."""

    pairs: Annotated[int, Field(ge=1, le=40)]
    pair_chars: Literal[200, 400, 800]
    high: Literal[2000, 4000, 8000]
    batch: Annotated[int, Field(ge=1, le=10)]
    keep_chars: Literal[0, 1500, 6000, 24000]


def guard_examples() -> Any:
    return st.fixed_dictionaries(
        {
            "pairs": st.integers(1, 40),
            "pair_chars": st.sampled_from([200, 400, 800]),
            "high": st.sampled_from([2000, 4000, 8000]),
            "batch": st.integers(1, 10),
            "keep_chars": st.sampled_from([0, 1500, 6000, 24000]),
        }
    )


def check_guard(sim: Simulation, ex: dict[str, Any], variant: Variant) -> Verdict:
    """Folds come in full batches (upstream's deliberate floor guard) and bring the context back under
    high water within a batch of model calls whenever the 6-pair floor fits under low water."""
    low = ex["high"] // 2
    cfg = LoopConfig(
        history_keep_pairs=80,
        keep_chars=ex["keep_chars"],
        ctx_high_water=ex["high"],
        ctx_low_water=low,
        fold_batch=ex["batch"],
        worklog_max_chars=100,
    )
    loop = ActorLoop(sim, cfg, Summarizer(), instruction="t", variant=variant)
    half = ex["pair_chars"] // 2
    sizes: list[tuple[int, bool]] = []
    loop.call("P" * half, record=False)
    for _ in range(ex["pairs"]):
        loop.observe("E" * half)
        floor = len(loop.summary) + sum(loop.pair_sizes[-KEEP_FLOOR:])
        loop.call("P" * half, record=False)
        sizes.append((loop.sized, floor <= low))
    return props.check_fold_guard(sizes, [ev.pairs for ev in loop.folds], cfg.ctx_high_water, cfg.fold_batch)


# -- 8. the resume handoff truncates the log ---------------------------------------------------------------
class HandoffExample(TypedDict):
    """WORK LOG facts, the handoff cap (upstream 12,000; the pivot's is half, the strategy review's slice
    of the log two thirds) and the pivot path."""

    facts: Annotated[int, Field(ge=1, le=40)]
    cap: Literal[120, 240, 480]
    pivot: bool


def handoff_examples() -> Any:
    return st.fixed_dictionaries(
        {
            "facts": st.integers(1, 40),
            "cap": st.sampled_from([120, 240, 480]),
            "pivot": st.booleans(),
        }
    )


def check_handoff(sim: Simulation, ex: dict[str, Any], variant: Variant) -> Verdict:
    """Every fact of the WORK LOG handed to a fresh attempt reaches it. The example scales upstream's
    character slices together: the handoff's 12,000 to *cap*, the pivot's 6,000 to half of it and the
    strategy review's 8,000 to two thirds (issue 42: unscaled, the review saw every example's whole log
    and carried its facts over on the pivot path, which upstream at its scale does not). The review's
    2,500-character answer is not scaled: it restates fact tokens, whose size the scaling does not
    shrink, and at upstream's scale it holds every example's facts (40 tokens, about 700 characters)."""
    cap = ex["cap"]
    cfg = LoopConfig(
        history_keep_pairs=80,
        worklog_max_chars=2000,
        handoff_cap=cap,
        pivot_cap=cap // 2,
        review_cap=cap * 8_000 // 12_000,
    )
    wl = "WORK LOG\n" + "\n".join(f"- {fact(i)}" for i in range(1, ex["facts"] + 1))
    res = LoopResult("stalled", 10, wl, surface_delta="" if ex["pivot"] else "M project/x.py")
    h = stalled_handoff(sim, cfg, res, [], variant=variant)
    return props.check_handoff_keeps_log(h.worklog, h.message)


# -- 9. the pivot review is blind to the synthesized log ---------------------------------------------------
class ReviewExample(TypedDict):
    """Facts per history message (alternating user/assistant) and whether a WORK LOG exists."""

    messages: Annotated[list[Annotated[int, Field(ge=0, le=2)]], Field(min_length=1, max_length=14)]
    worklog: bool


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
    return props.check_review_sees_log(h.worklog, h.review_input_worklog)
