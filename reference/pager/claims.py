"""The ``pager`` reference design's claims (declarations; checks in drivers.py)."""

from __future__ import annotations

from reference.pager import drivers as dr
from reference.pager.state import NO_SEARCH, STOPWORDS_FIX
from sim.claims import Claim, claim_factory

_claim = claim_factory("pager")

CLAIMS: list[Claim] = [
    _claim(
        "common-words",
        ("PAGER-OBJ-recall-store", "PAGER-RTE-recall-search"),
        "A pager's search page is crowded out by common words: once the message holding the question's "
        "one rare word is evicted, keyword search ranks messages sharing more of the question's function "
        "words (what, did, I, the, was) above it, and they fill the page (its 5 hits, or the window left "
        "for it).",
        f"{STOPWORDS_FIX}: the query's common function words are dropped before the search",
        dr.crowd_strategy,
        dr.crowd_check,
        fixes=(STOPWORDS_FIX,),
        off=(NO_SEARCH,),
        example_type=dr.CrowdExample,
    ),
]
