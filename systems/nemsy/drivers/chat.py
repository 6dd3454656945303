"""Drivers of the chat claims: the stale CLI snapshot and trimming (fidelity note §3 items 8, 9)."""

from __future__ import annotations

import json
from typing import Any

from sim.claims import Verdict
from sim.engine import Simulation
from sim.variant import Variant
from systems.nemsy import properties as pr
from systems.nemsy.drivers.common import (
    NAMES,
    Example,
    Int,
    Ops,
    fact,
    fact_id,
    ops_strategy,
    source_text,
    st,
    system,
    tick,
)
from systems.nemsy.model import load_wiki_context

# -- 8. stale CLI chat snapshot --------------------------------------------------------------------
SNAPSHOT = Ops(("ingest", Int(0, 2)), ("turn", Int(0, 2)), ("query-a", Int(0, 2)), ("save",), max_length=6)


def snapshot_strategy() -> Any:
    return ops_strategy(SNAPSHOT)


def snapshot_check(sim: Simulation, ops: list[list[Any]], variant: Variant) -> Verdict:
    """A chat session with /ingest, /query -a and /save between turns: each turn sees a fresh Wiki that
    carries its newest page."""
    n = system(sim, variant)
    for i in range(3):
        n.write_source(f"{NAMES[i]}.md", source_text(i))
    session = n.chat_session(max_files=3)
    for op in ops:
        if op[0] == "ingest":
            session.command(f"/ingest {NAMES[op[1]]}.md")
        elif op[0] == "query-a":
            session.command(f"/query What is {fact_id(op[1])}? -a")
        elif op[0] == "save":
            session.command("/save")
        else:
            used = session.context().text
            fresh = load_wiki_context(n, 3).text
            newest = n.pages.newest(1)
            v = pr.check_snapshot_fresh(used, fresh, newest[0] if newest else None)
            if not v.holds:
                return v
            session.say(f"What is {fact_id(op[1])}?")
        tick(sim)
    return Verdict.ok()


# -- 9. trimming loses history ---------------------------------------------------------------------
TRIM = Example("TrimExample", max_turns=Int(0, 3), turns=Int(1, 5))


def trim_strategy() -> Any:
    s = st()
    return s.fixed_dictionaries({"max_turns": s.integers(0, 3), "turns": s.integers(1, 5)})


def trim_check(sim: Simulation, ex: dict[str, Any], variant: Variant) -> Verdict:
    """Each turn states one fact; every chat request keeps to the trimmed history (at most 2*max_turns
    messages) and the last one still carries every fact stated earlier."""
    n = system(sim, variant)
    session = n.chat_session(max_turns=ex["max_turns"])
    stated: list[str] = []
    for t in range(ex["turns"]):
        session.say(f"Remember {fact(t)}.")
        stated.append(fact_id(t))
        tick(sim)
    session.say("What did I tell you first?")
    chats = [r for r in sim.trace.data.requests if r.route == "wiki.chat"]
    for rec in chats:
        v = pr.check_history_bounded(json.loads(rec.detail)["history"], ex["max_turns"])
        if not v.holds:
            return v
    return pr.check_request_has_facts(chats[-1].fact_ids, stated)
