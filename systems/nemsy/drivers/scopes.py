"""Each Nemsy claim's exhaustive scope (``memsim claims --exhaustive``): the values it probes.

Most Nemsy examples are short operation sequences over a handful of sources, so the scopes are the types'
whole enums and small ranges with sequences of up to two or three operations; the recency window and the
index budget are probed at their bounds (``max_files`` 0 to 2 around a page count of 4, the smallest and
largest index budgets).
"""

from __future__ import annotations

from typing import Any

from sim.exhaustive import Scope, derive, seq, values
from systems.nemsy.drivers import caching, chat, ledger, parser, wiki


def _reply(ex: dict[str, Any]) -> Any:
    """The parser claims' checks see only what the reply an example builds holds (its text, the facts of
    its sections, whether it has content): examples that build the same reply are one case (a heading
    placed past the last section lands where ``at`` = the section count puts it)."""
    return parser.build_response(ex)


SCOPES: dict[str, Scope] = {
    "recency-window": derive(wiki.RECENCY),
    "delete-leaves-index": derive(wiki.DELETE),
    "duplicate-index-on-reingest": derive(wiki.REINGEST),
    "title-collision": derive(  # the strategy ingests each path once (unique=True)
        wiki.COLLISION, paths={"": seq(values(*wiki.COLLIDING_PATHS), 2, min_len=1, cap=4, unique=True)}
    ),
    "ledger-done-without-page": derive(ledger.LEDGER, max_len=1),
    "unbounded-index": derive(
        wiki.INDEX,
        max_len=4,
        budget=values(400, 1600),
        note="up to 4 operations; the smallest and largest budget",
    ),
    "derived-feedback": derive(wiki.DERIVED),
    "stale-chat-snapshot": derive(chat.SNAPSHOT),
    "trimming-loses-history": derive(chat.TRIM),
    "status-split-touch": derive(ledger.STATUS),
    "status-split-backdated": derive(ledger.STATUS),
    "status-split-blank": derive(ledger.STATUS),
    "corrupt-ledger-reset": derive(ledger.CORRUPT),
    "parser-lost-sections": derive(parser.PARSER, max_len=3, canonical=_reply),
    "parser-stray-hash": derive(parser.PARSER, max_len=3, canonical=_reply),
    "parser-md-fence": derive(parser.PARSER, max_len=3, canonical=_reply),
    "parser-empty-summary": derive(parser.PARSER, max_len=3, canonical=_reply),
    "ambiguous-citation": derive(wiki.CITATION),
    "web-ignores-flags": derive(ledger.WEB),
    "reasoning-archive-crash": derive(ledger.REASON),
    "cache-question-first": derive(
        caching.CACHE,
        steps=values(2, 20, 40),
        note="20 queries: the index outgrows the minimum cacheable prefix",
    ),
}
