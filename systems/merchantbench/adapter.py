"""The context-budget benchmark adapter for MerchantBench: the workload through the ReAct baseline.

Mapping: each workload step is one env tick; its observation (with the probe question appended at a
probe) is the user message of ``_drive_step``, and the step runs the real ReAct loop of
:class:`~systems.merchantbench.model.ReactAgent` against a :class:`~systems.merchantbench.model.MerchantEnv`
on an in-memory tree, with B = *budget*, T = *budget* and K = ``round(budget * 30 / 160)`` (the
160k/160k/30k defaults scaled with the window; knobs in :mod:`~systems.merchantbench.knobs` change the
scaling, the schema size, the provider and the host policy; *variant* switches fixes on). The provider
reports the exact cl100k count of the whole request (system prompt, the 4,127-token tool schemas,
messages) as ``usage.prompt_tokens``, which drives the trigger.

**Upstream finding: above B of about 27,000 the reminder never fires, and the window slides silently.**
The request is trimmed to B *estimated* tokens (chars/4), and on the workload's English prose cl100k
counts about 0.84 of that estimate. A request trimmed to B therefore reports about 0.84·B plus the tool
schemas and system prompt (about 4,160 tokens), which is below T = B once B is above about 27,000. The
trigger never fires, the trim drops the oldest messages on every hop with no reminder, and ``history``
grows in process memory without bound: after the 220 steps of workload seed 1 at B = 40,000 (and at the
default 160,000) it holds 526 messages, about 303,000 estimated tokens, with no compaction; the largest
request is 37,725 exact tokens at B = 40,000 and 137,421 at 160,000, below T. The trigger does fire after
a step whose observation *alone* exceeds B (the trim always keeps the newest message, so that request
overflows the window and its reported count reaches T). Below the threshold the schemas dominate: at
B = 8,000 they are half the window, every request reports at least 4,160 tokens, and the reminder fires
every four or five steps (seed 0: 43 compactions in 220 steps, seed 1: 48). At the default 160k window see
also the ``merchantbench_suffix_eviction`` scenario (reported tokens peak at 138,957 < T). The claim
``merchantbench.silent-slide`` checks this, and the ``trigger-untrimmed`` fix closes it. This is upstream
behaviour, not an adapter artefact; chat-template tokens are not counted (they would lower the threshold
a little).

Host policy (the model stand-in, :class:`~systems.merchantbench.policies.SavePolicy`):

* **save on the reminder**: when a compaction reminder is visible, the model calls ``read_memory_doc``,
  then ``write_memory_doc`` with every fact token it can see (the read result included), minus
  ``drawn.lossiness`` of them (stream ``merchantbench.adapter.summarizer``). The compaction follows the
  *read* (it follows any successful act), so the write sees only the K-suffix, or no reminder at all;
* **read on probe**: upstream never loads the document into the prompt by itself, so at a probe step the
  model calls ``read_memory_doc`` first and answers on the next hop. The request returned for the step
  is the last hop's that still showed the step's observation (the one the answer is made from, unless a
  compaction in the step dropped the observation and with it the question: a later hop cannot answer
  what it does not see); it holds the read result if that survived the trim;
* otherwise the model replies without tool calls (an end-of-step carrying a short note).

The returned :class:`~sim.workload.ModelRequest` has one part per message of that request plus the
system prompt and the tool schemas, and the Claude cache breakpoints upstream sets on it
(:mod:`~systems.merchantbench.model.caching`: the system prompt, the last two messages and the last
assistant message; ``memsim bench --provider anthropic`` prices them).
It also carries the design's own estimate: the system message plus
the trimmed history, chars/4 style; the tool schemas are not in it, as upstream. ``drawn.skew_s`` has no
effect. The ReAct agent reads no clock, and every timestamp (history ``wall_ms``, hook times, mtimes) is
the env server's.

**Real conversations** (:mod:`sim.conversations`; turn steps carry ``turn_id``): each exchange is one
env tick. A user turn waits; the assistant turn after it is the model's reply in that tick: the tick's
observation is the user turn (``speaker: text``, after a ``Session <id> (<date>)`` line at a session's
first turn) and the stand-in's plain reply is the assistant turn's text, which upstream's
``_remember_act`` keeps as ``{role: assistant, content}``. A user turn with no reply before the next user
turn or a question gets the stand-in's own short reply; an assistant turn with no user turn before it
follows a ``(continue)`` observation. The trigger, trim to B, reminder, save and compaction run as for
the fact workload; the save stand-in (:func:`~systems.merchantbench.policies.verbatim_notes`, knob
``conversation_save_tokens``, default 2,000) writes the notes it read plus the visible messages
verbatim, the newest that fit. A question step asks from the state the turns left and changes nothing:
the question as a user message, with read-on-probe the ``read_memory_doc`` call and its result (the
document as stored), then the request upstream assembles (system prompt, tool schemas,
``trim(history, B)``); the messages are then removed again. Not modeled: a reminder or compaction the
question's own hop would trigger. A turn step returns only the system prompt (route ``react.turn``): the
benchmark scores the question requests, and the tick's own requests are not turned into provider texts.
A lost evidence turn's reason (:meth:`Adapter.lost_reason`):
``trimmed-from-suffix@hop<h>`` (still in ``history``, but before the suffix the question's request kept
at hop ``h``), ``compacted-not-saved@tick<t>`` (dropped by the compaction at env tick ``t``, and not in
the memory document), ``compacted-saved-not-read@tick<t>`` (in the document, which the question's
request does not show whole).
"""

from __future__ import annotations

from typing import Any

from sim.engine import Simulation
from sim.files import MemoryTree
from sim.tokens import count_tokens
from sim.variant import FAITHFUL, Variant
from sim.workload import Drawn, ModelRequest, StorageStats, WorkStep
from systems.merchantbench.knobs import Knobs
from systems.merchantbench.model import MerchantEnv, ReactAgent, run_step
from systems.merchantbench.model.dispatch import result_text
from systems.merchantbench.policies import SavePolicy
from systems.merchantbench.state import TRACE_RECALL, ReactConfig

SYSTEM_PROMPT = (
    "You run an online shop in MerchantBench. Each hour you receive an observation. Use the tools; keep "
    "long-term notes with write_memory_doc and recover them with read_memory_doc. End every hour with "
    "end_of_step."
)


#: What a conversation's turn step returns: the benchmark scores question requests only, so a turn's tick
#: is not materialized as provider texts (building them every tick cost more than the tick).
TURN_REQUEST = ModelRequest((SYSTEM_PROMPT,), None, "react.turn")


class _CountingTree(MemoryTree):
    """An in-memory tree that also counts the bytes written (for write amplification)."""

    def __init__(self, *args: object, **kw: object) -> None:
        super().__init__(*args, **kw)  # type: ignore[arg-type]
        self.bytes_written = 0

    def _write(self, path: str, data: bytes, append: bool) -> None:
        self.bytes_written += len(data)
        super()._write(path, data, append)


class Adapter:
    """MerchantBench's ReAct baseline with the memory document, scaled to the window *budget*, as *variant*
    (:class:`~sim.variant.Variant` of the design's switches) with *knobs* (:class:`~.knobs.Knobs`)."""

    name = "merchantbench"

    def __init__(
        self, sim: Simulation, budget: int, drawn: Drawn, *, variant: Variant = FAITHFUL, knobs: Any = None
    ) -> None:
        k: Knobs = knobs if knobs is not None else Knobs.model_validate({})
        self.sim, self.variant, self.knobs = sim, variant, k
        self.tree = _CountingTree(mtime=sim.clock("server").seconds)
        # Step files beyond the newest 256 are counted, not kept (flat memory in long cells); the
        # trace-recall fix reads old step files, so with it every file stays.
        retention = None if variant.has(TRACE_RECALL) else 256
        self.env = MerchantEnv(
            sim,
            self.tree,
            brief=SYSTEM_PROMPT,
            variant=variant,
            schema_tokens=k.schema_tokens,
            trace_retention=retention,
        )
        policy = SavePolicy(
            save=k.save,
            k=k.save_every,
            read_on_probe=k.read_on_probe,
            lossiness=drawn.lossiness,
            rng=sim.rng("merchantbench.adapter.summarizer"),
        )
        window = max(1, round(budget * k.window_scale))
        keep = k.keep if k.keep is not None else round(window * 30 / 160)
        config = ReactConfig(
            context_window=window, trigger=round(window * k.trigger_ratio), keep=keep, max_hops=k.max_hops
        )
        self.agent = ReactAgent(
            sim,
            self.env,
            "agent_0",
            policy,
            config=config,
            variant=variant,
            provider_tokenizer=k.provider,
            record_every=0,
        )
        self.policy = policy
        # real conversations: the waiting user turn (id, text), each turn's (absolute history position,
        # message), the compactions (history base after, env tick), the question request's kept start
        self._waiting: tuple[str, str] | None = None
        self._where: dict[str, tuple[int, dict[str, Any]]] = {}
        self._compactions: list[tuple[int, int]] = []
        self._asked: tuple[int, int] = (0, 0)

    def step(self, step: WorkStep) -> ModelRequest:
        """Run one env tick of the ReAct loop (across a respawn, if the agent process exits); the last
        request of the tick that still showed its observation (and so the probe question). A
        conversation's turn and question steps: see the module docstring."""
        if step.turn_id is not None:
            return self._turn(step)
        if step.question_id is not None:
            return self._ask(step.question)
        text = f"Day {step.index // 24 + 1}, Hour {step.index % 24}\n{step.observation}"
        if step.probe:
            text += "\n" + step.question
        self.agent, _ = run_step(self.agent, text, needed=(step.probe,) if step.probe else ())
        agent = self.agent
        if agent.seen_parts:
            parts, est = agent.seen_parts, agent.seen_estimate
        else:
            parts, est = agent.last_parts, agent.last_request_estimate
        return ModelRequest(tuple(parts), est, "react.hop", agent.cache_breakpoints(parts))

    def _tick(self, user: tuple[str | None, str], reply: tuple[str | None, str | None]) -> ModelRequest:
        """One env tick whose observation is *user* and whose plain reply is *reply* (each (turn id, text);
        a None text: the stand-in's own)."""
        self.policy.verbatim_tokens = self.knobs.conversation_save_tokens
        self.policy.reply_text = reply[1]
        before = self.agent.history.origin
        self.agent, _ = run_step(self.agent, user[1])
        self.policy.reply_text = None
        agent = self.agent
        h = agent.history
        if h.origin != before:
            self._compactions.append((h.origin, agent.env.t - 1))
        start = (agent._obs_at or h.base) - h.base
        if user[0] is not None and agent._obs_at is not None and agent._observation is not None:
            self._where[user[0]] = (agent._obs_at, agent._observation)
        if reply[0] is not None:
            for i in range(max(0, start), len(h)):
                m = h.msgs[i]
                if m.get("role") == "assistant" and m.get("content") == reply[1] and not m.get("tool_calls"):
                    self._where[reply[0]] = (h.base + i, m)
                    break
            else:
                if h.origin != before:  # kept, then dropped by this tick's own compaction
                    self._where[reply[0]] = (h.origin - 1, {"role": "assistant", "content": reply[1]})
        return TURN_REQUEST

    def _turn(self, step: WorkStep) -> ModelRequest:
        """A conversation turn: a user turn waits for its reply; an assistant turn runs the tick."""
        head = ""
        if step.new_session:
            from sim.conversations.baselines import date_text

            when = date_text(step.time_s)
            head = f"Session {step.session_id}" + (f" ({when})" if when else "") + "\n"
        text = f"{head}{step.speaker}: {step.observation}"
        assert step.turn_id is not None
        if step.role != "assistant":
            self._flush()
            self._waiting = (step.turn_id, text)
            return TURN_REQUEST
        user: tuple[str | None, str] = self._waiting or (None, head + "(continue)")
        self._waiting = None
        return self._tick(user, (step.turn_id, step.observation))

    def _flush(self) -> None:
        if self._waiting is not None:
            user, self._waiting = self._waiting, None
            self._tick(user, (None, None))

    def _ask(self, question: str) -> ModelRequest:
        """The request for a question, built from the state the turns left and removed again."""
        self._flush()
        agent = self.agent
        h = agent.history
        n0 = len(h)
        h.append({"role": "user", "content": question})
        if self.knobs.read_on_probe:
            call = {
                "id": "call_0_0",
                "type": "function",
                "function": {"name": "read_memory_doc", "arguments": "{}"},
            }
            h.append({"role": "assistant", "content": "", "tool_calls": [call]})
            doc = result_text(agent.env.read_memory_doc(agent.agent_id))
            h.append({"role": "tool", "tool_call_id": "call_0_0", "name": "read_memory_doc", "content": doc})
        _msgs, parts, est = agent.build_request()
        self._asked = (h.origin + agent.dropped, agent.hops + 1)
        exact = None
        texts = None
        if agent._span is not None:  # the faithful trim's span: the history's per-message counts, summed
            start, end = agent._span
            exact = count_tokens(agent.system_prompt or "") + agent._tools_count() + h.exact_sum(start, end)
            # The same texts as ``tuple(parts)``, from the history's per-message cache (each message's
            # provider text built once while it stays in the window, not once per question).
            texts = (*parts.head, *h.parts(start, end))
        req = ModelRequest(tuple(parts) if texts is None else texts, est, "react.hop", exact=exact)
        h.truncate(n0)
        return req

    def lost_reason(self, turn_id: str) -> str:
        """Why conversation turn *turn_id* is not in the last question's request."""
        where = self._where.get(turn_id)
        if where is None:
            return "not-in-request"
        pos, msg = where
        h = self.agent.history
        start, hop = self._asked
        if pos >= h.origin:
            return f"trimmed-from-suffix@hop{hop}" if pos < start else "not-in-request"
        tick = next((t for base, t in self._compactions if base > pos), -1)
        doc = self.env.document_text(self.agent.agent_id)
        content = msg.get("content")
        if isinstance(content, str) and content and content in doc:
            return f"compacted-saved-not-read@tick{tick}"
        return f"compacted-not-saved@tick{tick}"

    def storage(self) -> StorageStats:
        """Durable bytes under the run directory (documents, histories, every step file, the ones no longer
        kept in memory included), bytes written, storage operations."""
        durable = self.tree.total_bytes() + self.env.trace_bytes_dropped
        return StorageStats(durable, self.tree.bytes_written, self.tree.ops)
