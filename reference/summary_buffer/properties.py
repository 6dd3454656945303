"""Pure checkers over what reached the model: a verdict, never an exception."""

from __future__ import annotations

from collections.abc import Sequence

from sim.claims import Verdict
from sim.text import extract_facts


def check_fact_in_request(request: Sequence[str], needed: str) -> Verdict:
    """The request carries the fact the question needs."""
    if any(needed in extract_facts(p) for p in request):
        return Verdict.ok()
    return Verdict.violated(f"{needed} is not in the request ({len(request)} parts)")
