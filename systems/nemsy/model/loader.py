"""The Wiki loader (``agent._load_wiki_context``, ``agent.py`` 127-150): what every route sends as the Wiki.

The index in full (outside the page count), then the N newest other pages by mtime, each as
``=== path ===\\ncontent``, joined by blank lines; ``（Wiki 目前为空）`` when there is no ``*.md``. No size
cap. Pages per route: :data:`~systems.nemsy.model.constants.INGEST_PAGES` (10, wide 50), ``QUERY_PAGES`` (30),
``CHAT_PAGES`` (20), ``LINT_PAGES`` (50); fidelity note §2.6.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from sim.tokens import count_tokens
from systems.nemsy.model.constants import EMPTY_WIKI, INDEX_FILE, QUERY_PAGES
from systems.nemsy.model.ledger import content_hash
from systems.nemsy.model.pages import index_blocks, index_stems
from systems.nemsy.model.prompts import IndexRun, context_segments, tile
from systems.nemsy.state import (
    FIX_BOUNDED_INDEX,
    FIX_INVALIDATE_DERIVED,
    FIX_RELEVANCE,
    OFF_LOADER_EMPTY,
    OFF_LOADER_EVERY_PAGE,
    WikiContext,
)

if TYPE_CHECKING:
    from systems.nemsy.model.vault import Vault


def load_wiki_context(
    n: Vault, max_files: int = QUERY_PAGES, *, query: str | None = None, route: str = "wiki.query"
) -> WikiContext:
    """(RT-BAP-wiki-context, MEM-OBJ-wiki-index, RT-RTE-wiki-answer) ``_load_wiki_context(max_files)`` of
    installation *n*: the index in full (outside the page count), then the *max_files* newest other pages
    (not ``index.md``/``log.md`` by basename), each as ``=== path ===\\ncontent``, joined by blank lines;
    ``（Wiki 目前为空）`` when there is no ``*.md``. No size cap anywhere. *query* is what the route asks
    (only the relevance-selection fix reads it); *route* labels the trace record.

    The relevance-selection, invalidate-derived and shared-context-budget fixes change the selection; the
    off switches ``loader-every-page`` and ``loader-empty`` ignore *max_files* or load nothing.
    """
    if not n.pages.has_md() or n.fixed(OFF_LOADER_EMPTY):
        ctx = WikiContext((), max_files, empty_text="" if n.pages.has_md() else EMPTY_WIKI)
        n._op("_load_wiki_context", route=route, max_files=max_files, pages=[], index_chars=0)
        return ctx
    blocks = n.index_blocks()
    if n.fixed(FIX_BOUNDED_INDEX):  # a clipped index: new blocks, counted as they come
        pages, blocks = _within_budget(n, n.context_chars, _select(n, max_files, query), blocks)
        tally = None
    else:
        pages = [(rel, n.read_wiki_note(rel) or "") for rel in _select(n, max_files, query)]
        tally = n.index_tally()
    ctx = WikiContext(tuple(pages), max_files, blocks, index_tally=tally)
    n._op(
        "_load_wiki_context",
        route=route,
        max_files=max_files,
        pages=list(ctx.pages),
        index_chars=ctx.index_chars,
        chars=_chars(ctx),
    )
    return ctx


def _within_budget(
    n: Vault, budget: int, chosen: list[str], blocks: tuple[str, ...] | None
) -> tuple[list[tuple[str, str]], tuple[str, ...] | None]:
    """The shared-context-budget fix: the chosen pages, newest first, while they fit *budget* characters,
    then the index with as many of its newest entries as fit what is left (its head always kept)."""
    pages: list[tuple[str, str]] = []
    used = 0
    for rel in chosen:
        content = n.read_wiki_note(rel) or ""
        size = len(f"=== {rel} ===\n") + len(content) + (2 if pages else 0)
        if used + size <= budget:
            pages.append((rel, content))
            used += size
    if blocks is None:
        return pages, None
    room = budget - used - len(f"=== {INDEX_FILE} ===\n") - (2 if pages else 0)
    clipped = clip_index("".join(blocks), room)
    return pages, (index_blocks(clipped) if clipped is not None else None)


def _chars(ctx: WikiContext) -> int:
    """``len(ctx.text)`` without building it."""
    parts = [len(f"=== {INDEX_FILE} ===\n") + ctx.index_chars] if ctx.index_blocks is not None else []
    parts += [len(f"=== {rel} ===\n") + len(c) for rel, c in ctx.page_sections]
    return sum(parts) + 2 * max(0, len(parts) - 1)


def _select(n: Vault, max_files: int, query: str | None) -> list[str]:
    if n.fixed(OFF_LOADER_EVERY_PAGE):
        max_files = len(n.pages)
    if not (n.fixed(FIX_RELEVANCE) and query) and not n.fixed(FIX_INVALIDATE_DERIVED):
        return n.pages.newest(max_files)
    candidates = n.pages.loadable()
    if n.fixed(FIX_INVALIDATE_DERIVED):
        candidates = [p for p in candidates if not is_stale_derivation(n, p)]
    if n.fixed(FIX_RELEVANCE) and query:
        terms = {t.lower() for t in re.findall(r"[\w-]{3,}", query)}
        scored = []
        for rank, rel in enumerate(candidates):
            body = (n.read_wiki_note(rel) or "").lower()
            hits = sum(1 for t in terms if t in body)
            scored.append((-hits, rank, rel))
        scored.sort()
        candidates = [rel for _, _, rel in scored]
    return candidates[: max(0, max_files)]


def clip_index(index_text: str, limit: int) -> str | None:
    """The shared-context-budget fix's index: its non-entry lines and, newest first, one entry per page (the
    newest) while they fit *limit* characters, in file order; None when not even the non-entry lines fit."""
    lines = index_text.splitlines(keepends=True)
    head = [ln for ln in lines if not ln.startswith("- [[")]
    size = sum(len(h) for h in head)
    if size > limit:
        return None
    kept: list[str] = []
    seen: set[str] = set()
    for ln in reversed([ln for ln in lines if ln.startswith("- [[")]):
        stems = index_stems(ln)
        if stems and stems[0] in seen:
            continue
        if size + len(ln) > limit:
            break
        seen.update(stems)
        kept.append(ln)
        size += len(ln)
    return "".join(head) + "".join(reversed(kept))


def is_stale_derivation(n: Vault, rel: str, _seen: frozenset[str] = frozenset()) -> bool:
    """Whether derived page *rel* was made from a page that has since changed, disappeared or itself
    become stale (transitively)."""
    inputs = n.derivations.get(rel)
    if not inputs or rel in _seen:
        return False
    for page, digest in inputs.items():
        text = n.read_wiki_note(page)
        if text is None or content_hash(text) != digest:
            return True
        if is_stale_derivation(n, page, _seen | {rel}):
            return True
    return False


def _tiled_tokens(ctx: WikiContext) -> int:
    parts, _ = tile(context_segments(ctx), runs=True)
    return sum(p.tally.tokens if isinstance(p, IndexRun) else count_tokens(p) for p in parts)


def context_tokens(ctx: WikiContext) -> int:
    """``count_tokens(ctx.text)`` without building the text (issue 42): the context's parts as a request
    tiles them (:func:`.prompts.tile`, cut only where cl100k starts a new chunk anyway), the index's
    leading blocks taken from their tally, so the cost does not grow with the index."""
    if ctx.index_blocks is None and not ctx.page_sections:
        return count_tokens(ctx.empty_text)
    return _tiled_tokens(ctx)


def index_section_tokens(ctx: WikiContext) -> int:
    """``count_tokens(f"=== index.md ===\\n{index}")`` of the context's index (0 without one), counted as
    :func:`context_tokens` counts."""
    if ctx.index_blocks is None:
        return 0
    return _tiled_tokens(WikiContext((), ctx.max_files, ctx.index_blocks, index_tally=ctx.index_tally))
