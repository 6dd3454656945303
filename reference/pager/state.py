"""Switch names, constants and frozen values of the ``pager`` reference design."""

from __future__ import annotations

from dataclasses import dataclass

STOPWORDS_FIX = "stopwords"
"""The fix: the search query's common function words (:data:`reference.retrieval.STOPWORDS`) are dropped, so
a message matching many of them cannot outrank one matching the question's rare word."""
NO_SEARCH = "no-search"
"""The off switch: the recall store is never searched (no page reaches the request)."""

FIXES = (STOPWORDS_FIX,)
OFF = (NO_SEARCH,)

#: MemGPT's constants (cpacker/MemGPT ``memgpt/constants.py``, read 2026-12-06): the share of the window
#: at which the queue is summarized, the share of the queue's tokens evicted, the newest messages kept,
#: and the page size of a recall search (Letta ``letta/constants.py`` RETRIEVAL_QUERY_DEFAULT_PAGE_SIZE).
MESSAGE_SUMMARY_WARNING_FRAC = 0.75
MESSAGE_SUMMARY_TRUNC_TOKEN_FRAC = 0.75
MESSAGE_SUMMARY_TRUNC_KEEP_N_LAST = 3
RETRIEVAL_QUERY_DEFAULT_PAGE_SIZE = 5


@dataclass(frozen=True, slots=True)
class Message:
    """One message of the conversation: its id, session, role, the text as shown (``speaker: text``), its
    cl100k count, and the message's own text (what the search reads)."""

    turn_id: str
    session_id: str
    role: str
    text: str
    tokens: int
    raw: str
