"""Verifier replay and scratch (MEM-RTE-verifier-replay, MEM-OBJ-verifier-scratch): ``core/verifier.py``."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sim.engine import Simulation
from sim.faults import WriteFailed
from systems.rsiagent import faults as fp
from systems.rsiagent.model.common import NO_PROGRESS_SEGMENTS, SYSTEM, AgenticVerifierNoProgressError
from systems.rsiagent.model.functions import journal_archive
from systems.rsiagent.state import (
    Message,
)

LOSSLESS = "LOSSLESS RESULT OF YOUR PREVIOUS SUBSTANTIVE ACTION"
ORIGINAL = "ORIGINAL CONTEXT THAT PRECEDED YOUR NEXT RECORDED ACTION"


def parse_turn(text: str) -> str | None:
    """``parse_turn``: ``program`` or ``look`` when the reply's first non-empty line starts ``PROGRAM:`` or
    ``LOOK:``, else None.

    Not modeled: upstream's real action grammar.
    """
    first = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    if first.startswith("PROGRAM:"):
        return "program"
    if first.startswith("LOOK:"):
        return "look"
    return None


def actionless_fingerprint(text: str) -> str | None:
    """sha256 of the lowercased, whitespace-collapsed reply, only for actionless replies."""
    if parse_turn(text) is not None:
        return None
    return hashlib.sha256(" ".join(text.lower().split()).encode("utf-8")).hexdigest()


def substantive_checkpoint(
    base: Sequence[Message], raw: Sequence[Message]
) -> tuple[list[Message], Message | None]:
    """``_agentic_substantive_checkpoint``: keep *raw* through its last new Program/Look assistant turn;
    that action's observation becomes the pending observation. No new action: *base*. Raises ValueError
    when *raw* does not extend *base* or pairs are incomplete."""
    if list(raw[: len(base)]) != list(base) or len(raw) % 2 != len(base) % 2:
        raise ValueError("raw segment must extend base with complete pairs")
    last = None
    for i in range(len(base), len(raw)):
        if raw[i].role == "assistant" and parse_turn(raw[i].content) is not None:
            last = i
    if last is None:
        return list(base), None
    pending = raw[last + 1] if last + 1 < len(raw) else None
    return list(raw[: last + 1]), pending


def _merge_images(*msgs: Message) -> tuple[dict[str, str], ...]:
    out: list[dict[str, str]] = []
    keys: set[Any] = set()
    for m in msgs:
        for att in m.images:
            k = att.get("sha256") or (att.get("mime_type"), att.get("data"))
            if k not in keys:
                keys.add(k)
                out.append(att)
    return tuple(out)


def semantic_replay(history: Sequence[Message]) -> list[Message]:
    """Semantic replay: the first user turn verbatim, then only substantive (Program/Look) pairs; each
    later user turn is the LOSSLESS RESULT of the previous action plus, if different, the ORIGINAL
    CONTEXT that preceded the next action (images merged)."""
    if not history:
        return []
    out = [history[0]]
    acts = [i for i, m in enumerate(history) if m.role == "assistant" and parse_turn(m.content)]
    for j, i in enumerate(acts):
        if j > 0:
            prev = acts[j - 1]
            result = history[prev + 1]
            ctx = history[i - 1]
            text = f"{LOSSLESS}\n{result.content}"
            msgs = [result]
            if i - 1 != prev + 1:
                text += f"\n\n{ORIGINAL}\n{ctx.content}"
                msgs.append(ctx)
            out.append(Message("user", text, images=_merge_images(*msgs)))
        out.append(history[i])
    if acts and acts[-1] + 1 < len(history):
        res = history[acts[-1] + 1]
        out.append(Message("user", f"{LOSSLESS}\n{res.content}", images=res.images))
    return out


def _chars(msgs: Sequence[Message]) -> int:
    return sum(len(m.content) for m in msgs)


def recovery_history(history: Sequence[Message], *, recurrent: bool) -> list[Message]:
    """The Verifier's recovered history: semantic replay when an actionless fingerprint recurred (or the
    persisted ``transport_recurrence`` flag is set) and the replay is shorter; otherwise unchanged."""
    if recurrent:
        replay = semantic_replay(history)
        if _chars(replay) < _chars(history):
            return replay
    return list(history)


@dataclass
class VerifierSession:
    """The persistent Verifier role state across segments (MEM-RTE-verifier-replay): history, pending
    observation, seen actionless fingerprints and the no-progress counter."""

    history: list[Message] = field(default_factory=list)
    pending: Message | None = None
    fingerprints: set[str] = field(default_factory=set)
    no_progress: int = 0
    transport_recurrence: bool = False

    def segment(self, sim: Simulation, raw: Sequence[Message]) -> list[Message]:
        """Record one raw segment: checkpoint it, update fingerprints, replay when they recur and count
        segments without progress (three raise :class:`AgenticVerifierNoProgressError`)."""
        base = list(self.history)
        kept, pending = substantive_checkpoint(base, raw)
        progress = len(kept) > len(base)
        recurrent = self.transport_recurrence
        for m in raw[len(base) :]:
            fpn = actionless_fingerprint(m.content) if m.role == "assistant" else None
            if fpn is not None:
                if fpn in self.fingerprints and not progress:
                    recurrent = self.transport_recurrence = True
                self.fingerprints.add(fpn)
        self.history = recovery_history(kept, recurrent=recurrent)
        if pending is not None:
            self.pending = pending
        self.no_progress = 0 if progress else self.no_progress + 1
        sim.trace.op(
            SYSTEM,
            "verifier_segment",
            agent="verifier",
            progress=progress,
            replay=recurrent,
            kept=len(self.history),
            no_progress=self.no_progress,
        )
        if self.no_progress >= NO_PROGRESS_SEGMENTS:
            raise AgenticVerifierNoProgressError(f"{NO_PROGRESS_SEGMENTS} segments without progress")
        return self.history


@dataclass
class Scratch:
    """The Verifier's private scratch filesystem behind its protected executor (opaque bytes)."""

    files: dict[str, bytes] = field(default_factory=dict)
    closed: bool = False
    rolled_back: bool = False


def detach_executor(sim: Simulation, scratch: Scratch, *, retry_path: bool) -> bytes | None:
    """``detach_executor`` (MEM-OBJ-verifier-scratch): export the scratch archive, close, roll back (always).
    A failed export (``fail@rsiagent.verifier.export_scratch``) is tolerated only on the infra-retry path
    (the archive becomes None); otherwise it re-raises."""
    archive: bytes | None = None
    try:
        sim.faults.point(fp.SCRATCH_EXPORT)
        archive = journal_archive(scratch.files, 0)
    except WriteFailed:
        if not retry_path:
            scratch.closed = scratch.rolled_back = True
            sim.trace.op(SYSTEM, "detach_executor", agent="verifier", phase="fail", retry_path=False)
            raise
    finally:
        scratch.closed = scratch.rolled_back = True
    sim.trace.op(
        SYSTEM, "detach_executor", agent="verifier", exported=archive is not None, retry_path=retry_path
    )
    return archive
