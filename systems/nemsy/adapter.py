"""Nemsy under the cross-design context-budget benchmark.

Host policy (what this adapter assumes a user of Nemsy does with the workload):

* every workload observation is saved as a raw source document ``origin-sources/obs-NNNN.md`` and
  ingested through the real CLI path (``nemsy ingest obs-NNNN.md``: hash status, ingest prompt with the
  newest ``ingest_pages`` pages plus the full index, parser, page, index line, log line, ledger record).
  The ingest responder copies the observation's fact tokens into ``---SUMMARY---`` and drops the drawn
  ``lossiness`` fraction of them (stream ``nemsy.adapter.summarizer``);
* each step then asks the model through the knob ``route`` (default the CLI query: the full
  ``index.md`` plus the 30 newest pages plus the step's text, the probe question when there is one,
  otherwise the observation as the user's message). That request, with upstream-sized prompts, is what
  :meth:`Adapter.step` returns; the ingest call of the same step is made (and costs a model call) but is
  not returned, since the benchmark counts one request per step;
* ``step_seconds`` of simulated time pass per step (page mtimes order the recency window); nothing is
  archived.

The *variant* (``memsim bench --designs nemsy:fixed``) and the knobs
(:class:`~systems.nemsy.design.NemsyKnobs`) apply to both calls. Nemsy has no token budget: it counts
pages, not tokens, and the index is loaded in full outside the page count. ``budget`` (the provider
window) therefore changes nothing here; requests grow past the window when the index and the pages do,
and the benchmark reports those requests as over the window. The estimate is None: Nemsy makes no token
estimate of its own.
"""

from __future__ import annotations

from typing import Any

from sim.engine import Simulation
from sim.variant import FAITHFUL, Variant
from sim.workload import Drawn, ModelRequest, StorageStats, WorkStep
from systems.nemsy.design import NemsyKnobs
from systems.nemsy.model import CHAT_PAGES, QUERY_PAGES, Nemsy, load_wiki_context
from systems.nemsy.policies import IngestResponder


class Adapter:
    """Nemsy's ingest-then-ask mechanics applied to each workload step."""

    name = "nemsy"

    def __init__(
        self, sim: Simulation, budget: int, drawn: Drawn, *, variant: Variant = FAITHFUL, knobs: Any = None
    ) -> None:
        self.sim = sim
        self.variant = variant
        self.knobs: NemsyKnobs = knobs if knobs is not None else NemsyKnobs()
        self.budget = budget
        self.drawn = drawn
        self.responder = IngestResponder(rng=sim.rng("nemsy.adapter.summarizer"), lossiness=drawn.lossiness)
        k = self.knobs
        self.nemsy = Nemsy(
            sim,
            agent="nemsy",
            variant=variant,
            context_chars=k.context_chars,
            responder=self.responder,
            record_requests=False,
            wiki_path=k.wiki_path,
            ingest_pages=k.ingest_pages,
        )
        default = CHAT_PAGES if k.route == "web_chat" else QUERY_PAGES
        self.pages = k.pages if k.pages is not None else default
        self.source_bytes = 0

    def step(self, step: WorkStep) -> ModelRequest:
        """Ingest the observation as a source document, then assemble the chosen route's request."""
        n = self.nemsy
        rel = f"obs-{step.index:04d}.md"
        n.write_source(rel, step.observation)
        self.source_bytes += len(step.observation.encode("utf-8"))
        n.cli_ingest(rel)
        text = step.question if step.probe else step.observation
        route = self.knobs.route
        ctx = load_wiki_context(n, self.pages, query=text, route=f"wiki.{route}")
        if route == "web_query":
            call = n.web_query_call(text, ctx)
        elif route == "web_chat":
            call = n.chat_call(ctx, (), text, web=True)
        else:
            call = n.query_call(text, ctx, reasoning=route == "reasoning")
        self.sim.env.run(until=self.sim.now + self.knobs.step_seconds)
        parts, _ = call.parts()
        return ModelRequest(parts=parts, estimate=None, route=call.route)

    def storage(self) -> StorageStats:
        """The vault, Wiki, ledger and token log: bytes stored, bytes written, file operations."""
        tree = self.nemsy.tree
        return StorageStats(
            durable_bytes=tree.total_bytes(),
            bytes_written=self.nemsy.bytes_written + self.source_bytes,
            ops=tree.ops,
        )
