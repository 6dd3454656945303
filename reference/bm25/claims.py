"""The ``bm25`` reference design's claims (declarations; checks in drivers.py)."""

from __future__ import annotations

from reference.bm25 import drivers as dr
from reference.bm25.state import NEIGHBOURS, NO_RETRIEVAL
from sim.claims import Claim, claim_factory

_claim = claim_factory("bm25")

CLAIMS: list[Claim] = [
    _claim(
        "unlike-phrasing",
        ("BM25-ALG-okapi-index", "BM25-RTE-topk-pack"),
        "Retrieval misses evidence phrased unlike the question: a turn sharing no word with the question "
        "scores 0 and is never retrieved, even when the turn right before it matches, so only the recent "
        "tail can carry it.",
        f"{NEIGHBOURS}: each retrieved turn brings the turns beside it in its session (LongMemEval's round: "
        "a user turn with its reply)",
        dr.unlike_strategy,
        dr.unlike_check,
        fixes=(NEIGHBOURS,),
        off=(NO_RETRIEVAL,),
        example_type=dr.UnlikeExample,
    ),
]
