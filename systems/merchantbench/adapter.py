"""The context-budget benchmark adapter for MerchantBench: the workload through the ReAct baseline.

Mapping: each workload step is one env tick; its observation (with the probe question appended at a
probe) is the user message of ``_drive_step``, and the step runs the real ReAct loop of
:class:`~systems.merchantbench.model.ReactAgent` against a :class:`~systems.merchantbench.model.MerchantEnv`
on an in-memory tree, with B = *budget*, T = *budget* and K = ``round(budget * 30 / 160)`` (the
160k/160k/30k defaults scaled with the window). The provider reports the exact cl100k count of the whole
request (system prompt, tool schemas, messages) as ``usage.prompt_tokens``, which drives the trigger.

**Upstream finding: with T = B the reminder almost never fires, and the window slides silently.** The
request is trimmed to B *estimated* tokens (chars/4), and on the workload's English prose cl100k counts
about 0.84 of that estimate. A request trimmed to B therefore reports about 0.84·B plus the tool schemas
and system prompt (about 320 tokens here), which is below T = B for any B above about 2,000. The trigger
never fires, the trim drops the oldest messages on every hop with no reminder, and ``history`` grows in
process memory without bound: after the 220 steps of workload seed 1 at B = 8,000 it holds 526 messages,
about 303,000 estimated tokens, with no compaction. The trigger does fire after a step whose observation
*alone* exceeds B. The trim always keeps the newest message, so that request overflows the window (over
B in exact tokens) and its reported count reaches T; one compaction follows. Seed 0 at B = 8,000 has one
such step, a 9,600-estimated-token observation, and so one compaction. At the default 160k window the
same holds (see the ``merchantbench_suffix_eviction`` scenario: reported tokens peak at 135,107 < T).
The claim ``merchantbench.silent-slide`` checks this, and the ``trigger-untrimmed`` fix closes it. This is
upstream behaviour, not an adapter artefact. What would move the threshold: the tool schemas here are a
four-tool stand-in (about 280 tokens), whereas upstream offers every simulator tool outside the denylist,
and chat-template tokens are not counted. Both raise the reported count by a fixed amount per request,
so the slide stops only below a correspondingly larger B.

Host policy (the model stand-in, :class:`~systems.merchantbench.policies.SavePolicy`):

* **save on the reminder**: when a compaction reminder is visible, the model calls ``read_memory_doc``,
  then ``write_memory_doc`` with every fact token it can see (the read result included), minus
  ``drawn.lossiness`` of them (stream ``merchantbench.adapter.summarizer``). The compaction follows the
  *read* (it follows any successful act), so the write sees only the K-suffix, or no reminder at all;
* **read on probe**: upstream never loads the document into the prompt by itself, so at a probe step the
  model calls ``read_memory_doc`` first and answers on the next hop. The request returned for the step
  is the last hop's (the one the answer is made from); it holds the read result if that survived the
  trim;
* otherwise the model replies without tool calls (an end-of-step carrying a short note).

The returned :class:`~sim.workload.ModelRequest` has one part per message of that request plus the
system prompt and the tool schemas. It also carries the design's own estimate: the system message plus
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
from systems.merchantbench.model import MerchantEnv, ReactAgent
from systems.merchantbench.policies import SavePolicy
from systems.merchantbench.state import ReactConfig

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
    """MerchantBench's ReAct baseline with the memory document, scaled to the window *budget*."""

    name = "merchantbench"

    def __init__(
        self, sim: Simulation, budget: int, drawn: Drawn, *, variant: Variant = FAITHFUL, knobs: Any = None
    ) -> None:
        self.sim = sim
        self.variant, self.knobs = variant, knobs  # switches and knobs: not used yet
        self.tree = _CountingTree(mtime=sim.clock("server").seconds)
        self.env = MerchantEnv(sim, self.tree, brief=SYSTEM_PROMPT)
        policy = SavePolicy(
            save="reminder",
            read_on_probe=True,
            lossiness=drawn.lossiness,
            rng=sim.rng("merchantbench.adapter.summarizer"),
        )
        config = ReactConfig(context_window=budget, trigger=budget, keep=round(budget * 30 / 160))
        self.agent = ReactAgent(sim, self.env, "agent_0", policy, config=config, record_every=0)

    def step(self, step: WorkStep) -> ModelRequest:
        """Run one env tick of the ReAct loop; the request of its last hop."""
        text = f"Day {step.index // 24 + 1}, Hour {step.index % 24}\n{step.observation}"
        if step.probe:
            text += "\n" + step.question
        self.agent.run_step(text, needed=(step.probe,) if step.probe else ())
        agent = self.agent
        if agent.seen_parts:  # the last request that still showed this step's observation (and question)
            return ModelRequest(tuple(agent.seen_parts), agent.seen_estimate, "react.hop")
        return ModelRequest(tuple(agent.last_parts), agent.last_request_estimate, "react.hop")

    def storage(self) -> StorageStats:
        """Durable bytes under the run directory, bytes written (documents, histories, step traces)."""
        return StorageStats(self.tree.total_bytes(), self.tree.bytes_written, self.tree.ops)
