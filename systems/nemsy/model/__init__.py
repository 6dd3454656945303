"""The Nemsy model: a Markdown Wiki (``sources/``, ``queries/``, ``insights/``, ``index.md``, ``log.md``)
with an ingest ledger, a recency Wiki loader, query archive, insight save and chat, in a sim.files tree.

Upstream: arrrr110/Nemsy @ 2338bab0aab96a91efb90a80249f33510b630260 (``agent.py``, ``vault.py``,
``cli.py``, ``web.py``), as specified by ``shared/fidelity/nemsy.md``. Operations keep upstream's names
(``ingest``, ``_parse_and_write_ingest``, ``_update_index``, ``append_log``, ``record_ingest``,
``get_file_status``, ``_load_wiki_context`` (here :func:`load_wiki_context`), ``query``,
``_archive_query_result``, ``save_insight``, ``delete_wiki_note``, ``find_index_context``,
``collect_files``...). The model is not an LLM: the ingest responder, answerer and insight rewriter are
seeded policies (:mod:`systems.nemsy.policies`).

One module per concept: :mod:`.constants` (names, paths, limits), :mod:`.prompts` (what each route sends),
:mod:`.pages` (pure page-text functions), :mod:`.base` (shared state and request recording),
:mod:`.ledger`, :mod:`.vault`, :mod:`.loader`, :mod:`.agent`, and the routes :mod:`.cli`, :mod:`.chat`,
:mod:`.web`; :mod:`.nemsy`
assembles them.

A source's "resolved path" is its tree path with a leading ``/``. The agent clock gives page dates
(``date.today()``), log minutes and ledger timestamps; the clock is UTC and stands for upstream's local
time. Where the fidelity note and report 002 disagree (the index entry's full-width parentheses, the CRLF
marker failure, ARCHIVABLE never archiving by itself), the note wins; see ``fidelity.DIFFERENCES``.
"""

from systems.nemsy.model.base import Answerer, Responder, Rewriter
from systems.nemsy.model.chat import ChatSession
from systems.nemsy.model.constants import (
    ARCHIVABLE,
    CHAT_PAGES,
    COLLECT_EXTENSIONS,
    CONTEXT_CHARS,
    DEFAULT_MODEL,
    EMPTY_HASH,
    EMPTY_WIKI,
    GUIDANCE_FILE,
    HISTORY_DIR,
    INDEX_FILE,
    INDEX_HEAD,
    INGEST_PAGES,
    INGEST_WIDE_PAGES,
    INSIGHTS,
    LEDGER_PATH,
    LEDGER_VERSION,
    LINT_PAGES,
    LOG_FILE,
    NEMSY_DIR,
    QUERIES,
    QUERY_PAGES,
    QUESTIONS_HEADING,
    RAW_DIR,
    REASONING_MODEL,
    SCAN_CONFIRM_OVER,
    SKIP_DIRS,
    SOURCES,
    SYSTEM,
    TOKEN_LOG_PATH,
    VAULT_DIR,
    WIKI_DIR,
)
from systems.nemsy.model.ledger import (
    cli_file_status,
    content_hash,
    display_file_status,
    summarize_token_log,
)
from systems.nemsy.model.ledgerfiles import LedgerFile, TokenLogFile
from systems.nemsy.model.loader import (
    clip_index,
    context_tokens,
    index_section_tokens,
    is_stale_derivation,
    load_wiki_context,
)
from systems.nemsy.model.mtimeindex import MtimeIndex
from systems.nemsy.model.nemsy import Nemsy
from systems.nemsy.model.pages import (
    facts_in,
    frontmatter_dumps,
    frontmatter_metadata,
    index_entry,
    index_stems,
    loadable,
    parse_ingest_response,
    parse_ingest_response_strict,
    parse_ingest_response_with,
    path_key,
    resolve_candidates,
    resolve_citation,
    sanitize_title,
    select_wiki_pages,
    short_hash,
    unwrap_fence,
)
from systems.nemsy.model.prompts import (
    UPSTREAM_SYSTEM_TOKENS,
    WIKI_PATH,
    ModelCall,
    system_prompt,
)
from systems.nemsy.model.web import HTTPError

__all__ = [
    "ARCHIVABLE",
    "CHAT_PAGES",
    "COLLECT_EXTENSIONS",
    "CONTEXT_CHARS",
    "DEFAULT_MODEL",
    "EMPTY_HASH",
    "EMPTY_WIKI",
    "GUIDANCE_FILE",
    "HISTORY_DIR",
    "INDEX_FILE",
    "INDEX_HEAD",
    "INGEST_PAGES",
    "INGEST_WIDE_PAGES",
    "INSIGHTS",
    "LEDGER_PATH",
    "LEDGER_VERSION",
    "LINT_PAGES",
    "LOG_FILE",
    "NEMSY_DIR",
    "QUERIES",
    "QUERY_PAGES",
    "QUESTIONS_HEADING",
    "RAW_DIR",
    "REASONING_MODEL",
    "SCAN_CONFIRM_OVER",
    "SKIP_DIRS",
    "SOURCES",
    "SYSTEM",
    "TOKEN_LOG_PATH",
    "UPSTREAM_SYSTEM_TOKENS",
    "VAULT_DIR",
    "WIKI_DIR",
    "WIKI_PATH",
    "Answerer",
    "ChatSession",
    "HTTPError",
    "LedgerFile",
    "ModelCall",
    "MtimeIndex",
    "Nemsy",
    "Responder",
    "Rewriter",
    "TokenLogFile",
    "cli_file_status",
    "clip_index",
    "content_hash",
    "context_tokens",
    "display_file_status",
    "facts_in",
    "frontmatter_dumps",
    "frontmatter_metadata",
    "index_entry",
    "index_section_tokens",
    "index_stems",
    "is_stale_derivation",
    "load_wiki_context",
    "loadable",
    "parse_ingest_response",
    "parse_ingest_response_strict",
    "parse_ingest_response_with",
    "path_key",
    "resolve_candidates",
    "resolve_citation",
    "sanitize_title",
    "select_wiki_pages",
    "short_hash",
    "summarize_token_log",
    "system_prompt",
    "unwrap_fence",
]
