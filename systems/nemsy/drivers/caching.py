"""The prompt-cache claim's workload and driver: one source ingested per step, then a CLI query over the
Wiki, every query priced by OpenAI-style automatic prefix caching (Nemsy sends no cache breakpoints; its
upstream provider, DeepSeek, caches prefixes automatically too)."""

from __future__ import annotations

from typing import Any

from sim.cache import ProviderConfig
from sim.claims import Verdict
from sim.engine import Simulation
from sim.text import observation
from sim.variant import Variant
from systems.nemsy import properties as pr
from systems.nemsy.drivers.common import Example, Int, OneOf, fact, fact_id, st, system, tick
from systems.nemsy.model import SYSTEM, load_wiki_context

CACHE = Example("CacheExample", steps=Int(2, 40), chars=OneOf(200, 800, 2000))


def cache_strategy() -> Any:
    s = st()
    return s.fixed_dictionaries({"steps": s.integers(2, 40), "chars": s.sampled_from([200, 800, 2000])})


def cache_check(sim: Simulation, ex: dict[str, Any], variant: Variant) -> Verdict:
    """Each step: write and ingest a source of *chars* characters holding one fact, then ask about that
    fact with the CLI query route (the 30 newest pages and the whole index)."""
    sim.use_provider(ProviderConfig.of("openai"))
    n = system(sim, variant)
    rng = sim.rng("nemsy.claims.cache")
    for i in range(ex["steps"]):
        n.write_source(f"s{i:02d}.md", observation(rng, ex["chars"], [fact(i)]))
        n.cli_ingest(f"s{i:02d}.md")
        tick(sim, 60.0)
        question = f"What is {fact_id(i)}?"
        call = n.query_call(question, load_wiki_context(n, query=question))
        parts, kinds = call.parts()
        sim.request(SYSTEM, call.route, parts, agent="cache", kinds=kinds, needed={fact_id(i)})
    queries = [r for r in sim.trace.data.requests if r.agent == "cache"]
    return pr.check_query_prefix_cached(queries)
