"""The Wiki loader (``agent._load_wiki_context``, ``agent.py`` 127-150): what every route sends as the Wiki.

The index in full (outside the page count), then the N newest other pages by mtime, each as
``=== path ===\\ncontent``, joined by blank lines; ``（Wiki 目前为空）`` when there is no ``*.md``. No size
cap. Pages per route: :data:`~systems.nemsy.model.constants.INGEST_PAGES` (10, wide 50), ``QUERY_PAGES`` (30),
``CHAT_PAGES`` (20), ``LINT_PAGES`` (50); fidelity note §2.6.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from systems.nemsy.model.constants import EMPTY_WIKI, INDEX_FILE, QUERY_PAGES
from systems.nemsy.model.ledger import content_hash
from systems.nemsy.model.pages import index_blocks
from systems.nemsy.state import FIX_BOUNDED_INDEX, FIX_INVALIDATE_DERIVED, FIX_RELEVANCE, WikiContext

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

    The relevance-selection, invalidate-derived and shared-context-budget fixes change the selection.
    """
    if not n.pages.md:
        ctx = WikiContext((), max_files, empty_text=EMPTY_WIKI)
        n._op("_load_wiki_context", route=route, max_files=max_files, pages=[], index_chars=0)
        return ctx
    pages: list[tuple[str, str]] = []
    blocks = n.index_blocks()
    budget = n.context_chars if n.fixed(FIX_BOUNDED_INDEX) else None
    used = 0
    if blocks is not None:
        if budget is not None:
            blocks = index_blocks(clip_index("".join(blocks), budget // 2))
        used = len(f"=== {INDEX_FILE} ===\n") + sum(len(b) for b in blocks)
    for rel in _select(n, max_files, query):
        content = n.read_wiki_note(rel) or ""
        if budget is not None:
            size = len(f"\n\n=== {rel} ===\n") + len(content)
            if used + size > budget:
                continue
            used += size
        pages.append((rel, content))
    ctx = WikiContext(tuple(pages), max_files, blocks)
    n._op(
        "_load_wiki_context",
        route=route,
        max_files=max_files,
        pages=list(ctx.pages),
        index_chars=ctx.index_chars,
        chars=_chars(ctx),
    )
    return ctx


def _chars(ctx: WikiContext) -> int:
    """``len(ctx.text)`` without building it."""
    parts = [len(f"=== {INDEX_FILE} ===\n") + ctx.index_chars] if ctx.index_blocks is not None else []
    parts += [len(f"=== {rel} ===\n") + len(c) for rel, c in ctx.page_sections]
    return sum(parts) + 2 * max(0, len(parts) - 1)


def _select(n: Vault, max_files: int, query: str | None) -> list[str]:
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


def clip_index(index_text: str, limit: int) -> str:
    """The index with only its newest entries, so that it fits *limit* characters (shared-budget fix)."""
    if len(index_text) <= limit:
        return index_text
    lines = index_text.splitlines(keepends=True)
    head = [ln for ln in lines if not ln.startswith("- [[")]
    entries = [ln for ln in lines if ln.startswith("- [[")]
    size = sum(len(h) for h in head)
    kept: list[str] = []
    for ln in reversed(entries):
        if size + len(ln) > limit:
            break
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
