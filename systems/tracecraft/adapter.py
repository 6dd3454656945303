"""Tracecraft's adapter for the cross-design context-budget benchmark (request-led read-back).

Tracecraft has no context manager of its own: what reaches the model is whatever the host asks the CLI
for (MEM-RTE-evaluator-readback's sibling, the shipped agent prompt RT-BAP-agent-prompt: "after memory
set → memory get"). The adapter therefore states a **host policy** and runs it through the model's real
operations on the in-memory object store:

* **Write side.** Each observation is appended to the host's claude-code session file as one JSONL line
  and mirrored (``session mirror``: redaction, a part, a meta rebuild, the local cursor). Each fact token
  the observation introduces is saved with ``memory set <FACT-id> <token>`` by a seeded saver that drops
  a ``drawn.lossiness`` fraction of them (stream ``tracecraft.adapter.summarizer``).
* **Maintenance.** Every ``compact_every`` flushes the host runs ``session compact`` (bytes unchanged).
* **Read side (the request).** A fixed system prompt; the ``inbox --new`` output (the benchmark has no
  teammates, so it is the empty read a host still makes); ``memory get`` of the last ``memory_keys``
  keys the host set, newest last; then ``session show --tail N`` lines, newest first, as many whole
  lines as fit in what the budget leaves (exact cl100k counts: Tracecraft has no estimator, so the
  request's ``estimate`` is None); then the step's question when it is a probe.

The host policy's numbers are the design's knobs (:class:`systems.tracecraft.design.Knobs`, defaults 20
keys, 60 tail lines, a compact every 50 flushes, no store latency); the design runs as *variant* (``memsim
bench --designs tracecraft:fixed`` runs every fix). Each step advances the simulation clock by one second.
Every ``memory get`` is a GET of the store; the bucket only skips decoding a body it decoded before
(:meth:`~systems.tracecraft.model.bucket.Bucket.get_shared`), so no read is served stale.

**What the host holds** (:mod:`systems.tracecraft.model.retention`, issue 33): its session file from the
mirror's cursor on, a merged part's last ``tail_lines + 1`` lines (the rest of the part counted, not
held), and the bucket's 4,096 newest written objects in memory, the older ones in a temporary SQLite
database, so a cell's memory is flat however long it runs and every request, storage figure and trace
record is the same as with everything in memory (``self.keys`` keeps only the ``memory_keys`` newest).

**Real conversations** (:mod:`sim.conversations`; turn steps carry ``turn_id``): each turn is one line
of the host's session file, ``{"role", "speaker", "content"}`` with the dataset's role and text, mirrored
as above when its session ends (where claude-code's SessionEnd hook runs: one mirror per session, not per
line) and before a question; the simulation clock stands at the session's dates, so parts are stamped
with them. The save
stand-in (knobs ``conversation_save``, ``conversation_save_tokens``): the host saves each user turn of
at most 300 tokens verbatim with ``memory set turn-<n>``; assistant turns and longer user turns are not
saved. A turn step makes no read-back (the host reads back to answer); a question step makes the
read-back above with the question last, and changes nothing. The benchmark has no teammates, so
``inbox --new`` is empty and no evidence is mail. A lost evidence turn's reason
(:meth:`Adapter.lost_reason`) names both read paths: ``never-saved`` or ``memory-key-not-read-back`` (saved,
but not among the ``memory_keys`` newest keys), then ``+outside-session-tail`` (older than the
``session show --tail`` lines) or ``+tail-cut-by-window`` (in the tail, but the newest lines that fit the
window stop before it); ``altered-in-...`` where a read path showed the turn changed (the mirror's
redaction).
"""

from __future__ import annotations

import itertools
import json
from typing import Any

from sim.engine import Simulation
from sim.text import extract_facts
from sim.tokens import count_tokens
from sim.variant import FAITHFUL, Variant
from sim.workload import Drawn, ModelRequest, StorageStats, WorkStep
from systems.tracecraft.design import Knobs
from systems.tracecraft.model import FileTailHarness, Tracecraft
from systems.tracecraft.model.retention import HostTree, TailStore
from systems.tracecraft.policies import SaveFacts

SYSTEM_PROMPT = (
    "You are a coding agent on a Tracecraft team. Shared memory, mail and the mirrored session transcript "
    "below were read back with the tracecraft CLI. Answer from them."
)
DEFAULTS = Knobs.model_validate({})
MEMORY_KEYS = DEFAULTS.memory_keys  # host policy: memory get of the last 20 keys it set
TAIL_LINES = DEFAULTS.tail_lines  # host policy: session show --tail 60, then as many newest lines as fit
COMPACT_EVERY = DEFAULTS.compact_every  # host policy: session compact every 50 flushes (maintenance)
SESSION = "bench-session"


class Adapter:
    """The Tracecraft host policy above, on the model's real operations (in-memory store)."""

    name = "tracecraft"

    def __init__(
        self, sim: Simulation, budget: int, drawn: Drawn, *, variant: Variant = FAITHFUL, knobs: Any = None
    ) -> None:
        self.sim = sim
        self.variant = variant
        self.knobs: Knobs = knobs if isinstance(knobs, Knobs) else Knobs.model_validate(dict(knobs or {}))
        self.budget = budget
        self.drawn = drawn
        # What the host reads again, no more (retention module): the merged part's last lines, the session
        # file from the mirror's cursor on.
        self.store = TailStore(keep_lines=self.knobs.tail_lines + 1)
        self.tc = Tracecraft(sim, self.store, project="bench", variant=variant, latency=self.knobs.latency_s)
        self.home = HostTree(mtime=sim.clock("host").seconds)
        self.harness = FileTailHarness("claude-code", self.home)
        self.host = self.tc.agent("host", home=self.home)
        self.path = self.harness.session_path(SESSION)
        # the newest memory_keys keys the host set, least recently set first (what its read-back gets)
        self.keys: dict[str, None] = {}
        self.saver = SaveFacts(drawn.lossiness, sim.rng("tracecraft.adapter.summarizer"))
        self._fixed = count_tokens(SYSTEM_PROMPT)
        # real conversations: each turn's line in the session file and memory key, and what the last
        # read-back showed (lines in the file, tail lines shown, keys read)
        self._lines = 0
        self._line_of: dict[str, int] = {}
        self._key_of: dict[str, str] = {}
        self._shown: tuple[int, int, set[str]] = (0, 0, set())
        self._unmirrored = False

    def step(self, step: WorkStep) -> ModelRequest:
        """Mirror the observation, save its facts, and assemble the read-back request (a conversation's
        turn and question steps: see the module docstring)."""
        self.sim.run(until=self.sim.now + 1)
        if step.question_id is not None:
            if self._unmirrored:
                self._mirror()
            return self._readback(step.question)
        if step.new_session and self._unmirrored:
            self._mirror()  # the session before this one has ended
        if step.turn_id is not None:
            record: dict[str, Any] = {"role": step.role, "speaker": step.speaker, "content": step.observation}
        else:
            record = {"role": "tool", "step": step.index, "content": step.observation}
        line = json.dumps(record, ensure_ascii=False)
        self.home.append_bytes(self.path, (line + "\n").encode("utf-8"), clock=self.host.clock.seconds)
        self._lines += 1
        if step.turn_id is None:
            self._mirror()
        else:
            self._unmirrored = True
        every = self.knobs.compact_every
        if every and step.index % every == every - 1:
            self.host.call(self.host.session_compact(SESSION))
        if step.turn_id is not None:
            self._line_of[step.turn_id] = self._lines - 1
            self._save_turn(step)
            return ModelRequest((SYSTEM_PROMPT,), None, "tracecraft.write")
        for token in step.facts:
            if not self.saver.keep(token):
                continue
            key = token.split("=", 1)[0]
            self._set(key, token)
        return self._readback(step.question)

    def _mirror(self) -> None:
        flush = self.host.call(self.host.mirror(self.harness, SESSION))
        if flush.cursor_range is not None:  # the mirror never reads behind its cursor again
            self.home.release(self.path, flush.cursor_range[1])
        self._unmirrored = False

    def _set(self, key: str, value: str) -> None:
        self.host.call(self.host.memory_set(key, value))
        keys = self.keys
        keys.pop(key, None)
        keys[key] = None
        if len(keys) > self.knobs.memory_keys:  # an older key is not read back before it is set again
            del keys[next(iter(keys))]

    def _save_turn(self, step: WorkStep) -> None:
        """The conversation save stand-in: a user turn of at most ``conversation_save_tokens`` tokens,
        verbatim, under the next ``turn-<n>`` key."""
        k = self.knobs
        if k.conversation_save == "none" or step.role != "user" or not step.observation:
            return
        if count_tokens(step.observation) > k.conversation_save_tokens:
            return
        key = f"turn-{len(self._key_of):05d}"
        assert step.turn_id is not None
        self._key_of[step.turn_id] = key
        self._set(key, step.observation)

    def _readback(self, question: str) -> ModelRequest:
        """The read-back request: system prompt, ``inbox --new``, the newest keys' values, the session
        tail's newest lines that fit, the question."""
        inbox = [m.render() for m in self.host.call(self.host.inbox(new=True))]
        parts = [SYSTEM_PROMPT, "inbox --new:\n" + ("\n".join(inbox) or "(no new messages)")]
        recent = list(itertools.islice(reversed(self.keys), self.knobs.memory_keys))[::-1]
        memory = [f"{k}: {self.host.call(self.host.memory_get(k))}" for k in recent]
        parts.append("memory:\n" + "\n".join(memory))
        tail_parts: list[str] = []
        left = self.budget - self._fixed - sum(count_tokens(p) for p in parts[1:])
        if question:
            left -= count_tokens(question)
        lines: list[str] = []
        if self.knobs.tail_lines:
            _, lines = self.host.call(self.host.session_show(SESSION, tail=self.knobs.tail_lines))
        self.host.stdout.clear()
        self.host.stderr.clear()
        for ln in reversed(lines):
            cost = count_tokens(ln)
            if cost > left:
                break
            tail_parts.append(ln)
            left -= cost
        parts += list(reversed(tail_parts))
        self._shown = (self._lines, len(tail_parts), set(recent))
        if question:
            parts.append(question)
        return ModelRequest(parts=tuple(parts), estimate=None, route="tracecraft.readback")

    def lost_reason(self, turn_id: str) -> str:
        """Why conversation turn *turn_id* is not in the last read-back: its memory path, then its tail."""
        lines, shown, read = self._shown
        key = self._key_of.get(turn_id)
        mem = (
            "never-saved"
            if key is None
            else ("altered-in-memory-read-back" if key in read else "memory-key-not-read-back")
        )
        line = self._line_of.get(turn_id)
        if line is None:
            return mem
        behind = lines - line  # 1: the newest line
        tail = "outside-session-tail" if behind > min(self.knobs.tail_lines, lines) else "tail-cut-by-window"
        if behind <= shown:
            tail = "altered-in-session-tail"  # shown, but changed by the mirror (redaction)
        return f"{mem}+{tail}"

    def storage(self) -> StorageStats:
        """Durable bytes in the bucket, bytes PUT, and store operations."""
        return StorageStats(
            durable_bytes=self.store.total_bytes(),
            bytes_written=self.tc.bucket.bytes_written,
            ops=sum(self.store.ops.values()),
        )

    def facts_in_memory(self) -> frozenset[str]:
        """The fact ids saved in shared memory (for tests): the live keys the bucket lists."""
        live = [k for k in self.tc.bucket.list_keys("memory/") if not k.startswith("memory/_history/")]
        return frozenset(f for k in live for f in extract_facts(k[len("memory/") : -len(".json")] + "=x"))
