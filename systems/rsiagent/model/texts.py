"""The texts the RSIAgent model sends, sized like upstream's (cl100k tokens and, where the text enters a
history whose character size drives folding, characters).

Short format strings are upstream's (``core/loop.py`` ``run_attempt`` headers and ``_fold_once``'s user
text, ``core/actor.py`` handoff headings, ``explore/charter.py`` inventory headers): facts carry over.
Longer prose is our own wording with upstream's size: ``SUMMARIZER_SYSTEM`` (``core/actor.py``, 1,445
characters, 307 tokens), the restart handoff paragraph (``handoff_message``, 259 / 50), the pivot
paragraph (``pivot_handoff_message``, 279 / 60), the strategy-review system prompt (27 tokens) and ask (83
tokens with both sections empty), the opening message's paragraph (``opening_message`` with no budget,
363 / 76), the memory-revisit event sentences and their tail (``core/loop.py`` ``_MEMORY_REVISIT``, 192 /
37), ``memory_preamble``'s prose (``explore/charter.py``) and the practice Actor charter
(``self_evolving_actor_charter`` plus ``_actor_runtime_contract``). ``tests/test_rsiagent_texts.py`` pins
every size.
"""

from __future__ import annotations

#: ``run_attempt``: the first context message after a fold (the raw instruction, then the WORK LOG).
TASK_HEADER = "TASK (verbatim, unchanged — this is the actual goal):\n"
WORKLOG_HEADER = (
    "\n\nWORK LOG — your running summary of earlier turns (full details live in the machine; re-probe if "
    "you need specifics):\n"
)
SUMMARIZER_SYSTEM = (
    "You keep the WORK LOG for your own earlier turns of a long task. The log stands in for those "
    "turns in your context, so whatever you leave out is no longer visible to you (the machine still "
    "holds the ground truth).\n\nYou receive the CURRENT LOG and a batch of OLDER TURNS to merge. Reply "
    "with the UPDATED LOG and nothing else. Rules:\n- Write down only what the turns actually contain; "
    "never invent or embellish.\n- Keep each DECISION with a one-line reason, each extracted FACT, "
    "value, path or name EXACTLY as it was written (copy strings verbatim; never reword identifiers "
    "or numbers), each open question or unresolved item, and the work that remains.\n- Dead ends and "
    'repetitions: one line each ("tried X: failed because Y").\n- Merge into existing entries rather '
    "than duplicating.\n- Put the most decision-relevant content FIRST: CURRENT STATE, then KEY VALUES "
    "/ EXTRACTED DATA (dimensions, identifiers, paths, field values, reproduction credentials), then "
    "NEXT STEPS / OPEN ITEMS. Tool, format and reference notes that machine files can supply again go "
    "LAST.\n- When unsure whether something matters, KEEP it in its original words.\n- The log has a "
    "fixed character budget and is cut from the BOTTOM when it overflows, so keep re-derivable "
    "reference detail last and NEVER drop extracted task DATA (values, dimensions, identifiers, "
    "credentials): when space runs short, drop a reference or format note and name the file path it "
    "can be read from again."
)
OPENING_TAIL = (
    "You are at a fresh shell on the machine where this task has to be done, and nothing has been "
    "examined yet. Estimate how much work the task requires and declare done only once you consider "
    "its end state ready. Begin your reply with one line 'PLAN: <your phases>' (revising it later "
    "whenever reality differs), then submit your first program, the reconnaissance one."
)
HANDOFF_PARAGRAPH = (
    "NOTE: an earlier attempt at this task ran on this same machine and stopped before it was "
    "finished. Everything it did is still on this machine, so your reconnaissance will turn up that "
    "work; check which parts are already correct and continue from there onward."
)
PIVOT_PARAGRAPH = (
    "NOTE: an earlier attempt at this task on this same machine stalled WITHOUT changing any files, "
    "so there is no partial work to protect. Pick a MATERIALLY DIFFERENT strategy from the one it "
    "used (another tool, entry point or method); do not run the failed approach again unchanged."
)
REVIEW_SYSTEM = (
    "You are writing a post-mortem of your own stalled attempt at a computer task. Be concrete and "
    "mechanical, never self-critical."
)
REVIEW_ASK = (
    "A task attempt has just stalled and changed no files. In fewer than 200 words, answer: (1) WHICH "
    "strategy was it following (tools, method, order)? (2) WHERE precisely did it get stuck? (3) "
    "Which MATERIALLY DIFFERENT strategy should a new attempt try first (a different tool, entry "
    "point or method, not the same one again)? Plain text only."
)
#: ``_memory_revisit``: prefix + event sentence + tail, appended to a user message.
REVISIT_PREFIX = "\n\n[MEMORY RETRIEVAL OPPORTUNITY] "
REVISIT_EVENTS = {
    "verifier": "The Verifier Agent has returned new evidence about the current candidate.",
    "fold": "Some earlier conversation context got compressed into the work log.",
    "recovery": "The conversation or this machine channel has recovered from an interruption.",
    "stagnation": "Recent actions follow one repeating or low-content pattern.",
}
REVISIT_TAIL = (
    " Durable memory remains available at ~/.memory. Consider re-reading files that were useful before "
    "or opening unread files that could matter now; decide yourself what, if anything, to retrieve."
)
#: ``memory_preamble``: the header (upstream's ``[YOUR MEMORY — `` label, our words: 372 characters, 76
#: tokens, 5 lines), the state sentence, the retrieval paragraph (402 / 86, 5 lines, right after the state
#: line) and the inventory lines (upstream's format strings).
PREAMBLE_HEAD = (
    "[YOUR MEMORY — notes from your own earlier practice in this environment.\n"
    "They can be mistaken, stale or irrelevant to this task: treat them as hints\n"
    "and check them against the live environment. They live under ~/.memory/ as a copy\n"
    "of the durable host snapshot: local edits during work are discarded\n"
    "and never update durable memory. The full list of files follows beneath.\n"
)
PREAMBLE_MID = (
    "Understand the task first, then consult memory as far as you judge useful: list,\n"
    "search, preview, re-read or wholly read files, in whichever sequence. Study files as deeply\n"
    "as needed before relying on them. If new evidence changes your understanding, if\n"
    "you stall, or if earlier context gets compressed, reconsider the helpful files\n"
    "and the unread ones. You alone decide what to retrieve, and how to.]\n"
)
PREAMBLE_FULL = "The inventory has contents."
PREAMBLE_EMPTY = "No saved durable memory can be retrieved in this attempt yet."
CHARTER_HEAD = (
    "ACTOR AGENT — NEW PROJECT.\n"
    "\n"
    "You start as a fresh Actor Agent context for this project. Durable memory from earlier\n"
    "projects is under ~/.memory; it may help, or be wrong, stale or beside the point, so\n"
    "choose what to inspect and check it against the live environment. You cannot see the\n"
    "Curriculum Agent's private reasoning.\n"
    "\n"
)
CHARTER_PROJECT = "\n\nPROJECT (the Curriculum Agent's natural-language handoff, verbatim):\n---\n"
CHARTER_TAIL = (
    "\n"
    "---\n"
    "\n"
    "Programs are how you act, not a license to reinterpret the project: each action is a\n"
    "submitted program, and programs may inspect and drive the machine or automate an\n"
    "application the project needs. You pick the implementation. Whatever you pick,\n"
    "the candidate has to meet the project's requirements as written, including any named-application,\n"
    "native-editable-state, behaviour, rendered-output, workflow or provenance requirement.\n"
    "\n"
    "Solve the project with your own judgment and the machine's general-purpose tools.\n"
    "Strategy, investigation, amount of work and when to stop are yours to choose.\n"
    "Every input and deliverable of the project lives under /home/user/evolution_project; keep that\n"
    "tree in place so the harness can rebuild exactly the candidate that will be verified.\n"
    "\n"
    "The Verifier Agent decides correctness, not you and not the harness. When you\n"
    "choose to stop working on the project, write one complete, lossless handoff to\n"
    "~/actor_handoff.md. Its first non-empty line is STATUS: SUBMIT; after it, freely record\n"
    "what you delivered, where artifacts are, what changed, and any doubt or open state the\n"
    "Verifier Agent should investigate. SUBMIT is neutral: it claims neither success\n"
    "nor failure, and it is the same for complete, partial or blocked work.\n"
    "\n"
    "This episode has exactly one Actor Agent work phase and one Verifier Agent verdict; there is\n"
    "no repair or second verification of the same project. Leave durable memory alone during\n"
    "project work. Once the Verifier returns PASS or FAIL, this same Actor Agent context\n"
    "gets separate memory-distillation and reconciliation phases together with the full report.\n"
    "No turn count is prescribed for this work phase at all. Declare done only when the handoff shows\n"
    "the state you decided to submit.\n"
    "\n"
    "GENERIC RUNTIME OWNERSHIP BOUNDARY:\n"
    "The whole replayable project tree is /home/user/evolution_project. Keep the supplied inputs,\n"
    "the editable project state, the project-local dependencies it needs and the final deliverables\n"
    "inside that root, and do not leave it empty. Put throwaway application extractions, caches,\n"
    "reference-frame dumps, probes and parameter sweeps outside it (under /tmp, say), and delete\n"
    "any such debris created inside the root by accident before your terminal handoff. Do not delete "
    "the supplied inputs or anything needed to replay the submitted project.\n"
    "The harness snapshots this root only and does not judge what is in it. During project work\n"
    "~/.memory is canonical, read-only experience: work-phase changes to it are discarded. Only the "
    "terminal memory-distillation phase that comes later\n"
    "can promote memory.\n"
)


def memory_revisit(env_memory_dir: str | None, event: str) -> str:
    """``_memory_revisit``: the ``[MEMORY RETRIEVAL OPPORTUNITY]`` note of a ``verifier`` bounce, a
    ``fold``, a ``recovery`` (a recovered channel, the restart handoff) or ``stagnation`` (the first
    repeat, a detected cycle); "" when no memory is attached (``env_memory_dir`` unset). Raises
    ValueError on another event."""
    if event not in REVISIT_EVENTS:
        raise ValueError(f"unknown revisit event {event!r}")
    return REVISIT_PREFIX + REVISIT_EVENTS[event] + REVISIT_TAIL if env_memory_dir else ""


def opening_message(instruction: str) -> str:
    """``opening_message(instruction, None)`` (the agent-decided-stop roles: no turn or wall budget)."""
    return f"TASK:\n{instruction}\n\n" + OPENING_TAIL


def fold_request(summary: str, rendered: str) -> str:
    """``_fold_once``'s user text (and ``_synthesize_worklog``'s with an empty log)."""
    log = summary or "(empty)"
    return f"CURRENT LOG:\n{log}\n\nOLDER TURNS TO FOLD IN:\n{rendered}\n\nOutput the updated log only."


def handoff_message(worklog: str, cap: int = 12_000) -> str:
    """``handoff_message``: the paragraph, then ``worklog.strip()[:12000]`` only when the log is not blank."""
    log = worklog.strip()
    return HANDOFF_PARAGRAPH + ("\n\nThe previous attempt's work log:\n" + log[:cap] if log else "")


def pivot_handoff_message(review: str, worklog: str, cap: int = 6_000) -> str:
    """``pivot_handoff_message``: the paragraph, ``review.strip()[:2500]`` and ``worklog.strip()[:6000]``,
    each only when not blank."""
    out = PIVOT_PARAGRAPH
    if review.strip():
        out += "\n\nThe previous attempt's self-review:\n" + review.strip()[:2500]
    if worklog.strip():
        out += "\n\nIts work log (facts it discovered remain true):\n" + worklog.strip()[:cap]
    return out


def strategy_review_ask(worklog: str, tail: str, cap: int = 8_000) -> str:
    """``strategy_review_ask``: the ask, ``worklog.strip()[:8000]`` (*cap*: a scaled example's slice) and
    ``tail.strip()[:6000]``, each only when not blank, joined by blank lines."""
    parts = [REVIEW_ASK]
    if worklog.strip():
        parts.append("WORK LOG of the attempt:\n" + worklog.strip()[:cap])
    if tail.strip():
        parts.append("FINAL TURNS of the attempt:\n" + tail.strip()[:6000])
    return "\n\n".join(parts)


def memory_preamble(listing: str) -> str:
    """``memory_preamble(listing)``: the prose, then ``Current durable-memory inventory (N files):`` and the
    listing (N = its lines), or ``Current durable-memory inventory: empty (0 files).``"""
    if listing:
        files = f"\nCurrent durable-memory inventory ({len(listing.splitlines())} files):\n{listing}\n"
        state = PREAMBLE_FULL
    else:
        files = "\nCurrent durable-memory inventory: empty (0 files).\n"
        state = PREAMBLE_EMPTY
    return f"{PREAMBLE_HEAD}{state}\n{PREAMBLE_MID}{files}\n"


def actor_charter(project: str, listing: str) -> str:
    """``self_evolving_actor_charter`` + ``_actor_runtime_contract``: the inventory fenced by ``---`` lines
    (``listing.strip() or "(no durable memory files yet)"``), then the project verbatim."""
    inventory = listing.strip() or "(no durable memory files yet)"
    return (
        f"{CHARTER_HEAD}DURABLE MEMORY FILES:\n---\n{inventory}\n---{CHARTER_PROJECT}{project.strip()}"
        f"{CHARTER_TAIL}"
    )
