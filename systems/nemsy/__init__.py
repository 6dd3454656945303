"""Nemsy: a Markdown Wiki memory read back as the whole index plus the N newest pages, with no token budget.

Source, query and insight pages live beside an append-only ``index.md``, a ``log.md`` and a hash ledger.

Provenance: arrrr110/Nemsy at 2338bab0aab96a91efb90a80249f33510b630260 (``src/nemsy/agent.py``,
``vault.py``, ``cli.py``, ``web.py``), per ``shared/seeds/002_131b93d732f956e0.txt`` and
``shared/fidelity/nemsy.md`` (the note wins where they disagree; see ``fidelity.DIFFERENCES``). Covered:
ingest (parser, page, index, log, ledger, guidance), the loader on every route, query and archive, web
query/ingest/chat, insight save, CLI chat (snapshot, trimming), delete, citation resolve, the token log.
Not covered: provider behaviour, prompts' exact text, the browser UI (see ``fidelity.NOT_MODELED``).
"""

from systems.nemsy.model import (
    ChatSession,
    Nemsy,
    cli_file_status,
    content_hash,
    display_file_status,
    index_entry,
    load_wiki_context,
    parse_ingest_response,
    resolve_citation,
    sanitize_title,
    select_wiki_pages,
)
from systems.nemsy.state import LedgerRecord, Message, WikiContext

__all__ = [
    "ChatSession",
    "LedgerRecord",
    "Message",
    "Nemsy",
    "WikiContext",
    "cli_file_status",
    "content_hash",
    "display_file_status",
    "index_entry",
    "load_wiki_context",
    "parse_ingest_response",
    "resolve_citation",
    "sanitize_title",
    "select_wiki_pages",
]
