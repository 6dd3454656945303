"""Nemsy under the cross-design context-budget benchmark.

Host policy (what this adapter assumes a user of Nemsy does with the workload):

* every workload observation is saved as a raw source document ``origin-sources/obs-NNNN.md`` and
  ingested through the real CLI path (``nemsy ingest obs-NNNN.md``: hash status, ingest prompt with the
  10 newest pages plus the full index, parser, page, index line, log line, ledger record). The ingest
  responder copies the observation's fact tokens into ``---SUMMARY---`` and drops the drawn
  ``lossiness`` fraction of them (stream ``nemsy.adapter.summarizer``);
* each step then asks the model through the query route: the full ``index.md`` plus the 30 newest pages
  plus the step's text (the probe question when there is one, otherwise the observation as the user's
  message). That request is what :meth:`Adapter.step` returns; the ingest call of the same step is made
  (and costs a model call) but is not returned, since the benchmark counts one request per step;
* one simulated minute passes per step (page mtimes order the recency window); nothing is archived.

Nemsy has no token budget: it counts pages, not tokens, and the index is loaded in full outside the page
count. ``budget`` (the provider window) therefore changes nothing here; requests grow past the window
when the index and the 30 pages do, and the benchmark reports those requests as over the window. The
estimate is None: Nemsy makes no token estimate of its own.
"""

from __future__ import annotations

from typing import Any

from sim.engine import Simulation
from sim.variant import FAITHFUL, Variant
from sim.workload import Drawn, ModelRequest, StorageStats, WorkStep
from systems.nemsy.model import QUERY_PAGES, Nemsy, load_wiki_context
from systems.nemsy.policies import IngestResponder

STEP_SECONDS = 60.0


class Adapter:
    """Nemsy's ingest-then-query mechanics applied to each workload step."""

    name = "nemsy"

    def __init__(
        self, sim: Simulation, budget: int, drawn: Drawn, *, variant: Variant = FAITHFUL, knobs: Any = None
    ) -> None:
        self.sim = sim
        self.variant, self.knobs = variant, knobs  # switches and knobs: not used yet
        self.budget = budget
        self.drawn = drawn
        self.responder = IngestResponder(rng=sim.rng("nemsy.adapter.summarizer"), lossiness=drawn.lossiness)
        self.nemsy = Nemsy(sim, agent="nemsy", responder=self.responder, record_requests=False)
        self.source_bytes = 0

    def step(self, step: WorkStep) -> ModelRequest:
        """Ingest the observation as a source document, then assemble the query-route request."""
        n = self.nemsy
        rel = f"obs-{step.index:04d}.md"
        n.write_source(rel, step.observation)
        self.source_bytes += len(step.observation.encode("utf-8"))
        n.cli_ingest(rel)
        text = step.question if step.probe else step.observation
        ctx = load_wiki_context(n, QUERY_PAGES, query=text, route="wiki.query")
        self.sim.env.run(until=self.sim.now + STEP_SECONDS)
        parts, _ = n.query_call(text, ctx).parts()
        return ModelRequest(parts=parts, estimate=None, route="wiki.query")

    def storage(self) -> StorageStats:
        """The vault, Wiki, ledger and token log: bytes stored, bytes written, file operations."""
        tree = self.nemsy.tree
        return StorageStats(
            durable_bytes=tree.total_bytes(),
            bytes_written=self.nemsy.bytes_written + self.source_bytes,
            ops=tree.ops,
        )
