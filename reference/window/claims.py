"""The window's claims: none.

A window that forgets what no longer fits is the algorithm, not a failure of it: a "fix" would be a
different design (``summary-buffer`` folds what falls out; ``bm25`` and ``pager`` retrieve it). The one
surprising loss, ``start_on="human"`` cutting an AI message that fit the window because the human message
before it did not, is the documented purpose of the option (a chat provider wants the first non-system
message to be a human one); its "fix" (``start_on=None``) trades that validity for one message, so it is a
knob (``window.start_on_human``) and a lost reason (``dropped-by-start-on-human``), measured in the
benchmark, not a claim.
"""

from __future__ import annotations

from sim.claims import Claim

CLAIMS: list[Claim] = []
