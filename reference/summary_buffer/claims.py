"""The summary buffer's claims (declarations only; drivers in drivers.py, checkers in properties.py)."""

from __future__ import annotations

from reference.summary_buffer import drivers as dr
from reference.summary_buffer.state import NO_SUMMARY, PIN_FACTS
from sim.claims import Claim, claim_factory

_claim = claim_factory("summary-buffer")

CLAIMS: list[Claim] = [
    _claim(
        "fold-loses-fact",
        ("SBM-ALG-prune", "SBM-POL-summarizer"),
        "A summary fold loses a fact a later question needs: once later messages push the fact's message "
        "past max_token_limit it is pruned from the buffer, and the running summary keeps only what the "
        "summarizer chose to keep.",
        f"{PIN_FACTS}: a fold carries every fact token of the messages it folds into the summary, which "
        "never squeezes one out",
        dr.fold_strategy,
        dr.fold_check,
        fixes=(PIN_FACTS,),
        off=(NO_SUMMARY,),
        example_type=dr.FoldExample,
    ),
]
