"""Frozen values, switch names and lost-reason codes of the summary-buffer design."""

from __future__ import annotations

from sim.variant import Switches

PIN_FACTS = "pin-fact-tokens"
"""The fix: a fold carries every fact token (``FACT-0017=amber``) of the messages it folds into the
summary, and the summary's cap never squeezes one out (a summary prompt that says "keep every fact")."""
NO_SUMMARY = "no-summary"
"""The off switch: no summary at all; what the buffer prunes is gone (the buffer alone)."""

SWITCHES = Switches("summary-buffer", fixes=(PIN_FACTS,), off=(NO_SUMMARY,))

#: Lost-reason codes (``<code>@fold<k>``, k the 1-based fold that lost the turn).
DROPPED = "dropped-in-summary"
SQUEEZED = "squeezed-from-summary"
NO_SUMMARY_LOST = "pruned-no-summary"
