"""What the Nemsy model tests share: an installation with the fact-token policies, simulated time, and
one ingest of a file (``test_nemsy_model.py``, ``test_nemsy_drawn.py``)."""

from __future__ import annotations

from sim.engine import Simulation
from systems.nemsy import Nemsy
from systems.nemsy.policies import FactAnswerer, IngestResponder, InsightRewriter

INDEX_HEAD = "---\nauto_generated: true\ntitle: Wiki 索引\n---\n\n# Nemsy Wiki 索引\n\n## 最近添加\n\n"


def make(sim: Simulation | None = None, **kw) -> Nemsy:
    sim = sim or Simulation(0)
    kw.setdefault("responder", IngestResponder())
    kw.setdefault("answerer", FactAnswerer())
    kw.setdefault("rewriter", InsightRewriter())
    return Nemsy(sim, **kw)


def tick(n: Nemsy, seconds: float = 1.0) -> None:
    n.sim.env.run(until=n.sim.now + seconds)


def ingest_file(n: Nemsy, rel: str, text: str, **kw) -> str | None:
    n.write_source(rel, text)
    out = n.cli_ingest(rel, **kw)
    tick(n)
    return out[-1].page if out else None
