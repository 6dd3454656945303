"""Frozen value records of the Nemsy model: ledger records, chat messages, loaded Wiki contexts, results.

The Wiki itself lives in a :mod:`sim.files` tree (pages are files); these records are what operations
return and what the checkers in :mod:`systems.nemsy.properties` read.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

#: The fix switches, one per failure mode of the fidelity note (section 3), and one per parser quirk of
#: item 12 (the claims split it). The faithful design has none.
FIX_RELEVANCE = "relevance-selection"
FIX_DELETE_SYNC = "synchronized-delete"
FIX_INDEX_UPSERT = "index-upsert"
FIX_INJECTIVE_NAMES = "injective-names"
FIX_LEDGER_FAILED = "ledger-failed-status"
FIX_BOUNDED_INDEX = "shared-context-budget"
FIX_INVALIDATE_DERIVED = "invalidate-derived"
FIX_RELOAD_SNAPSHOT = "reload-after-write"
FIX_SAVE_EVICTED = "summarize-evicted"
FIX_HASH_STATUS = "hash-status-everywhere"
FIX_LEDGER_BACKUP = "ledger-backup"
FIX_STRICT_PARSER = "strict-parser"  # all four parser fixes below, plus a CRLF-tolerant marker
FIX_PARSER_SECTION_ONLY = "questions-section-only"
FIX_PARSER_ANY_LEVEL = "questions-heading-any-level"
FIX_PARSER_ANY_FENCE = "any-fence-unwrapped"
FIX_PARSER_REJECT_EMPTY = "empty-summary-rejected"
FIX_UNIQUE_RESOLVE = "ambiguous-citation-refused"
FIX_WEB_FLAGS = "web-honors-flags"
FIX_REASON_ARCHIVE = "reasoning-tuple-unpacked"
#: The CLI query's user prompt puts the Wiki context first and the question last (the same labels and
#: indents), so consecutive queries share the system prompt and the index as a prompt-cache prefix.
FIX_QUESTION_LAST = "question-after-context"

FIXES = (
    FIX_RELEVANCE, FIX_DELETE_SYNC, FIX_INDEX_UPSERT, FIX_INJECTIVE_NAMES, FIX_LEDGER_FAILED,
    FIX_BOUNDED_INDEX, FIX_INVALIDATE_DERIVED, FIX_RELOAD_SNAPSHOT, FIX_SAVE_EVICTED, FIX_HASH_STATUS,
    FIX_LEDGER_BACKUP, FIX_STRICT_PARSER, FIX_UNIQUE_RESOLVE, FIX_WEB_FLAGS, FIX_REASON_ARCHIVE,
    FIX_PARSER_SECTION_ONLY, FIX_PARSER_ANY_LEVEL, FIX_PARSER_ANY_FENCE, FIX_PARSER_REJECT_EMPTY,
    FIX_QUESTION_LAST,
)  # fmt: skip
#: Off switches: a claim's mechanism switched off or emptied (the degenerate design its property must
#: reject; issue 12). None of them is upstream's design or a fix.
OFF_LOADER_EVERY_PAGE = "loader-every-page"  # the loader ignores max_files and loads every page
OFF_LOADER_EMPTY = "loader-empty"  # the loader returns an empty context
OFF_DELETE_NOOP = "delete-noop"  # a confirmed delete unlinks nothing
OFF_INDEX_NOT_UPDATED = "index-not-updated"  # no writer adds an index entry
OFF_NO_PAGE_WRITE = "no-page-write"  # ingest writes no source page
OFF_LEDGER_NOT_WRITTEN = "ledger-not-written"  # record_ingest writes nothing
OFF_ARCHIVE_NOOP = "archive-noop"  # archiving a query writes nothing
OFF_NO_TRIM = "no-trim"  # the chat history is never trimmed
OFF_DISPLAY_ALWAYS_NEW = "display-always-new"  # the sources display shows every file as new
OFF_PARSER_REJECTS_ALL = "parser-rejects-all"  # the ingest parser rejects every reply
OFF_RESOLVE_ALWAYS_404 = "resolve-always-404"  # citation resolve never finds a page
OFF_WEB_INGEST_NOOP = "web-ingest-noop"  # /api/ingest ingests nothing

OFFS = (
    OFF_LOADER_EVERY_PAGE, OFF_LOADER_EMPTY, OFF_DELETE_NOOP, OFF_INDEX_NOT_UPDATED, OFF_NO_PAGE_WRITE,
    OFF_LEDGER_NOT_WRITTEN, OFF_ARCHIVE_NOOP, OFF_NO_TRIM, OFF_DISPLAY_ALWAYS_NEW, OFF_PARSER_REJECTS_ALL,
    OFF_RESOLVE_ALWAYS_404, OFF_WEB_INGEST_NOOP,
)  # fmt: skip
#: The fixes the ingest parser reads (fidelity note §3 item 12: one per quirk, and all of them).
FIX_PARSER_FIXES = frozenset(
    {FIX_STRICT_PARSER, FIX_PARSER_SECTION_ONLY, FIX_PARSER_ANY_LEVEL, FIX_PARSER_ANY_FENCE,
     FIX_PARSER_REJECT_EMPTY}
)  # fmt: skip


@dataclass(frozen=True)
class LedgerRecord:
    """One source's record in ``ingest_log.json`` (version 2), keyed by the source's resolved path."""

    hash: str
    prev_hash: str | None = None
    size: int = 0
    status: str = "done"  # "empty" | "done" (and "failed" under the ledger-failed-status fix)
    ingest_mode: str | None = "full"
    ingested_at: tuple[str, ...] = ()
    wiki_page: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The JSON object as upstream writes it."""
        return {
            "hash": self.hash,
            "prev_hash": self.prev_hash,
            "size": self.size,
            "status": self.status,
            "ingest_mode": self.ingest_mode,
            "ingested_at": list(self.ingested_at),
            "wiki_page": self.wiki_page,
        }

    @classmethod
    def from_json(cls, data: Any) -> LedgerRecord | None:
        """A record from its JSON object (missing fields: upstream's ``.get`` defaults); None if no dict."""
        if not isinstance(data, dict):
            return None
        at = data.get("ingested_at") or []
        return cls(
            hash=str(data.get("hash", "")),
            prev_hash=data.get("prev_hash"),
            size=int(data.get("size", 0) or 0),
            status=str(data.get("status", "")),
            ingest_mode=data.get("ingest_mode"),
            ingested_at=tuple(str(x) for x in at) if isinstance(at, list) else (),
            wiki_page=data.get("wiki_page"),
        )


@dataclass(frozen=True)
class Message:
    """One chat message (``{"role": ..., "content": ...}`` upstream)."""

    role: str
    content: str


@dataclass(frozen=True)
class BlockTally:
    """Totals over the first *blocks* blocks of an index (:func:`systems.nemsy.model.prompts.tally_blocks`):
    their cl100k tokens (each block counted alone, as a request counts its parts), fact ids and characters,
    the first and the last of them, and whether every cut between two of them is one a request keeps
    (:func:`systems.nemsy.model.prompts.tile` would merge none of them). A request then adds the totals
    instead of re-reading every block, so its cost does not grow with the index."""

    blocks: int = 0
    tokens: int = 0
    facts: frozenset[str] = frozenset()
    chars: int = 0
    first: str = ""
    last: str = ""
    cuts_kept: bool = True


@dataclass(frozen=True)
class WikiContext:
    """One result of ``_load_wiki_context``: the text the model sees and how it was assembled.

    *page_sections* are the loaded pages as ``(relative path, raw content)`` in context order; *index_blocks*
    is ``index.md`` (loaded first, when present) cut into blocks of lines, as the vault keeps it, so that
    a request re-counts only the last block; None when there is no index. *index_tally*, when the vault
    keeps one, totals every block but the last, so that a request does not re-read them either.
    :attr:`sections` and :attr:`text` (what upstream returns: sections as ``=== path ===\\ncontent`` joined
    by blank lines, or *empty_text* when there are none) are built only when asked.
    """

    page_sections: tuple[tuple[str, str], ...]
    max_files: int
    index_blocks: tuple[str, ...] | None = None
    empty_text: str = ""
    #: Totals over the index's leading blocks (all but the last), when the vault keeps them.
    index_tally: BlockTally | None = None

    @cached_property
    def sections(self) -> tuple[tuple[str, str], ...]:
        """Every loaded section in context order, ``index.md`` first when present."""
        if self.index_blocks is None:
            return self.page_sections
        return (("index.md", "".join(self.index_blocks)), *self.page_sections)

    @cached_property
    def text(self) -> str:
        """The context as upstream's loader returns it."""
        if not self.sections:
            return self.empty_text
        return "\n\n".join(f"=== {p} ===\n{c}" for p, c in self.sections)

    @cached_property
    def index_chars(self) -> int:
        """The index's size in characters (0 without an index)."""
        blocks, t = self.index_blocks or (), self.index_tally
        if t is None:
            return sum(len(b) for b in blocks)
        return t.chars + sum(len(b) for b in blocks[t.blocks :])

    @property
    def pages(self) -> tuple[str, ...]:
        """The loaded pages (without ``index.md``), in context order."""
        return tuple(p for p, _ in self.page_sections)

    @property
    def has_index(self) -> bool:
        """Whether ``index.md`` was loaded."""
        return self.index_blocks is not None


@dataclass(frozen=True)
class IngestOutcome:
    """What the CLI did with one collected source file."""

    path: str
    status: str  # the hash status it was classified with: new / changed / done / empty (/ failed)
    #: "ingested", "skipped" (done, not forced), "recorded-empty", "pending" (listed by --dry-run),
    #: "cancelled" (the >20-pending y/N question answered no)
    action: str
    page: str | None = None


@dataclass(frozen=True)
class Resolution:
    """The answer of ``GET /api/wiki/resolve``: the chosen note (None: 404) and every matching note."""

    path: str | None
    candidates: tuple[str, ...] = field(default=())
