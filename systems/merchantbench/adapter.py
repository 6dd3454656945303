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
"""

from __future__ import annotations

from typing import Any

from sim.engine import Simulation
from sim.files import MemoryTree
from sim.variant import FAITHFUL, Variant
from sim.workload import Drawn, ModelRequest, StorageStats, WorkStep
from systems.merchantbench.knobs import Knobs
from systems.merchantbench.model import MerchantEnv, ReactAgent, run_step
from systems.merchantbench.policies import SavePolicy
from systems.merchantbench.state import TRACE_RECALL, ReactConfig

SYSTEM_PROMPT = (
    "You run an online shop in MerchantBench. Each hour you receive an observation. Use the tools; keep "
    "long-term notes with write_memory_doc and recover them with read_memory_doc. End every hour with "
    "end_of_step."
)


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

    def step(self, step: WorkStep) -> ModelRequest:
        """Run one env tick of the ReAct loop (across a respawn, if the agent process exits); the last
        request of the tick that still showed its observation (and so the probe question)."""
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

    def storage(self) -> StorageStats:
        """Durable bytes under the run directory (documents, histories, every step file, the ones no longer
        kept in memory included), bytes written, storage operations."""
        durable = self.tree.total_bytes() + self.env.trace_bytes_dropped
        return StorageStats(durable, self.tree.bytes_written, self.tree.ops)
