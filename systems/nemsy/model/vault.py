"""The vault: Wiki files (``vault.write_wiki_note`` / ``append_wiki_note`` / ``read_wiki_note`` /
``list_wiki_notes`` / ``delete_wiki_note``), ``index.md`` (``agent._update_index``), ``log.md``
(``vault.append_log``) and citation resolve (``web.py`` ``/api/wiki/resolve``).

Upstream's loader stats every Wiki file and reads the N newest; this model keeps an mtime index of the
Wiki (:class:`MtimeIndex`, updated by every write it makes, rebuilt by :meth:`Vault.rescan`), so selecting
the newest N costs O(N) and reads only those N bodies. The result is identical.
"""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Any

from systems.nemsy.model.constants import (
    HISTORY_DIR,
    INDEX_FILE,
    LEDGER_VERSION,
    LOG_FILE,
    QUERIES,
    SOURCES,
    WIKI_DIR,
)
from systems.nemsy.model.ledger import Ledger
from systems.nemsy.model.mtimeindex import MtimeIndex
from systems.nemsy.model.pages import (
    extend_blocks,
    frontmatter_dumps,
    index_entry,
    path_key,
    resolve_candidates,
    resolve_citation,
    without_entries,
)
from systems.nemsy.model.pages import (
    index_blocks as cut_blocks,
)
from systems.nemsy.model.prompts import tally_blocks
from systems.nemsy.state import (
    FIX_DELETE_SYNC,
    FIX_INDEX_UPSERT,
    FIX_UNIQUE_RESOLVE,
    OFF_DELETE_NOOP,
    OFF_INDEX_NOT_UPDATED,
    OFF_RESOLVE_ALWAYS_404,
    BlockTally,
    Resolution,
)

#: The Wiki files the vault appends to (:meth:`Vault.append_wiki_note`'s callers).
_APPENDED = frozenset({INDEX_FILE, LOG_FILE})


class Vault(Ledger):
    """The Wiki file layer of one installation, with ``index.md`` and ``log.md`` (on top of its ledger)."""

    #: ``(blocks,)`` while index.md exists, ``()`` while it does not, None when unknown.
    _index_cache: tuple[tuple[str, ...]] | tuple[()] | None = None
    #: Totals over leading blocks of the cached index (None with it): an append re-cuts only the last
    #: block, so the totals stay true and only grow.
    _index_tally: BlockTally | None = None

    #: Wiki file → its size when the vault last wrote it (whole, or by an append) with no ``\r`` in it: an
    #: append to such a file needs no rewrite, since text mode reads back the same bytes.
    _plain: dict[str, int]

    def rescan(self) -> None:
        """Rebuild the mtime index from the tree (after writes made behind the model's back)."""
        super().rescan()
        self.pages = MtimeIndex()
        self._plain = {}
        self._forget_index()
        prefix = WIKI_DIR + "/"
        for p in self.tree.list(WIKI_DIR):
            self.pages.put(p[len(prefix) :], self.tree.mtime(p))

    def _wiki_write(self, rel: str, text: str) -> None:
        size = self.tree.write_text(self.wiki(rel), text, clock=self.clock.seconds)
        self.bytes_written += size
        self._remember_plain(rel, text, size)
        self.pages.put(rel, self.tree.mtime(self.wiki(rel)))
        self.generation += 1
        if rel == INDEX_FILE:
            self._forget_index()

    def read_wiki_note(self, rel: str) -> str | None:
        """The raw text of Wiki-relative *rel*, or None."""
        if rel == INDEX_FILE:
            return self.index_text()
        return self.tree.read_text_or_none(self.wiki(rel))  # upstream: exists() then read_text()

    def index_text(self) -> str | None:
        """``index.md``'s text, or None."""
        blocks = self.index_blocks()
        return None if blocks is None else "".join(blocks)

    def _forget_index(self) -> None:
        """index.md was written whole, deleted or changed behind the vault: re-read and re-total it."""
        self._index_cache = None
        self._index_tally = None

    def index_tally(self) -> BlockTally | None:
        """Totals over every block of :meth:`index_blocks` but the last (:func:`.prompts.tally_blocks`), or
        None without an index; each block is counted once while the vault only appends to it."""
        blocks = self.index_blocks()
        if blocks is None:
            return None
        t, done = self._index_tally, len(blocks) - 1
        if t is None or t.blocks > done:
            t = tally_blocks(blocks[:done])
        elif t.blocks < done:
            t = tally_blocks(blocks[t.blocks : done], t)
        self._index_tally = t
        return t

    def index_blocks(self) -> tuple[str, ...] | None:
        """``index.md`` cut into blocks of lines (:func:`~systems.nemsy.model.pages.index_blocks`), or None;
        kept in memory between the vault's own writes (a full rewrite or :meth:`rescan` re-reads it)."""
        if self._index_cache is None:
            path = self.wiki(INDEX_FILE)
            self._index_cache = (cut_blocks(self.tree.read_text(path)),) if self.tree.exists(path) else ()
        return self._index_cache[0] if self._index_cache else None

    def append_wiki_note(self, rel: str, text: str) -> None:
        """Append *text* (after a ``\\n`` if the file lacks a trailing newline; ``vault.py`` 137-152).

        Upstream reads the whole file in text mode and writes it back with *text* added, so every ``\\r\\n``
        and ``\\r`` already in the file becomes ``\\n`` (a file ending in ``\\r`` reads as ending in a
        newline: no separator) and a file that is not UTF-8 raises UnicodeDecodeError; *text* itself is
        written as given. The model does exactly that whenever the file may differ from its text-mode
        reading: it holds a ``\\r``, or was not last written by the vault (:attr:`_plain` remembers the size
        of each Wiki file the vault last wrote without a ``\\r``). Otherwise the rewrite would write the
        same bytes back, so the model appends only the new ones (same result and mtime). Either way
        ``bytes_written`` counts the whole rewrite.
        """
        path = self.wiki(rel)
        if not self.tree.exists(path):
            self._wiki_write(rel, text)
            return
        size = self.tree.size(path)
        if self._plain.get(rel) != size:
            existing = self.tree.read_text(path)
            sep = "\n" if existing and not existing.endswith("\n") else ""
            self._wiki_write(rel, existing + sep + text)
            return
        last = self.tree.read_from(path, size - 1)[0] if size else b""
        add = ("\n" if last and last != b"\n" else "") + text
        blocks = self.index_blocks() if rel == INDEX_FILE else None
        self.tree.append_text(path, add, clock=self.clock.seconds)
        self.bytes_written += size + len(data := add.encode("utf-8"))
        self._remember_plain(rel, add, size + len(data))
        self.pages.put(rel, self.tree.mtime(path))
        self.generation += 1
        if blocks is not None:
            # A "\r" enters the file raw; the loader reads it in text mode, so re-read instead of extending.
            self._index_cache = (extend_blocks(blocks, add),) if "\r" not in add else None
            if "\r" in add:
                self._index_tally = None

    def _remember_plain(self, rel: str, text: str, size: int) -> None:
        """Note that the vault just wrote Wiki file *rel* (*size* bytes, ending with *text*): only for the
        files the vault appends to (``index.md``, ``log.md``; issue 42: not an entry per page, which an
        append would rewrite whole, the same bytes either way)."""
        if rel not in _APPENDED:
            return
        if "\r" in text:
            self._plain.pop(rel, None)
        else:
            self._plain[rel] = size

    def write_wiki_note(self, rel: str, content: str, metadata: dict[str, Any] | None = None) -> None:
        """Write (or overwrite) a note through python-frontmatter's ``dumps`` (``vault.py`` 115-134): with no
        *metadata* the text is still ``---\\n{}\\n---\\n\\n`` plus the stripped content."""
        self._wiki_write(rel, frontmatter_dumps(metadata or {}, content))

    def list_wiki_notes(self) -> list[str]:
        """``sorted(wiki.rglob("*.md"))`` as Wiki-relative paths."""
        return sorted(self.pages.md(), key=path_key)

    def touch_wiki_note(self, rel: str) -> None:
        """Bump a page's mtime to now (an editor saving it unchanged)."""
        text = self.read_wiki_note(rel)
        if text is not None:
            self._wiki_write(rel, text)

    # -- index.md and log.md -----------------------------------------------------------------------------
    def _update_index(self, title: str, filename: str, summary_line: str) -> None:
        """(MEM-OBJ-wiki-index) Append ``- [[stem]] — line （date）`` to ``index.md``; create it (with
        frontmatter) when absent (``agent.py`` 153-171). Entries are never deduplicated, pruned or rewritten.

        The index-upsert fix first removes the stem's existing entries.
        """
        stem = PurePosixPath(filename).stem
        if self.fixed(OFF_INDEX_NOT_UPDATED):
            return
        entry = index_entry(stem, summary_line, self.today())
        if self.index_blocks() is None:
            self.write_wiki_note(
                INDEX_FILE,
                f"# Nemsy Wiki 索引\n\n## 最近添加\n\n{entry}",
                {"title": "Wiki 索引", "auto_generated": True},
            )
        else:
            if self.fixed(FIX_INDEX_UPSERT):
                current = self.index_text() or ""
                if f"[[{stem}]]" in current:
                    self._wiki_write(INDEX_FILE, without_entries(current, {stem}))
            self.append_wiki_note(INDEX_FILE, entry)
        self._op("_update_index", stem=stem, summary=summary_line)

    def append_log(self, op: str, title: str, detail: str = "") -> None:
        """(MEM-OBJ-operation-log) Append ``\\n[YYYY-MM-DD HH:MM] op | title[ — detail]\\n`` to ``log.md``."""
        stamp = self.clock.datetime().strftime("%Y-%m-%d %H:%M")
        entry = f"\n[{stamp}] {op} | {title}" + (f" — {detail}" if detail else "") + "\n"
        self.append_wiki_note(LOG_FILE, entry)

    def _remove_page(self, rel: str) -> None:
        """Delete a page and its index entries (used by the index-upsert and synchronized-delete fixes)."""
        if self.tree.exists(self.wiki(rel)):
            self.tree.delete(self.wiki(rel))
            self.pages.drop(rel)
            self._plain.pop(rel, None)
            self.generation += 1
            if rel == INDEX_FILE:
                self._forget_index()
        stem = PurePosixPath(rel).stem
        index = self.index_text()
        if index is not None and f"[[{stem}]]" in index:
            self._wiki_write(INDEX_FILE, without_entries(index, {stem}))

    # -- lifecycle and browser reads ---------------------------------------------------------------------
    def delete_wiki_note(self, filename: str, *, confirmed: bool = False) -> bool:
        """(MEM-CLM-storage-lifecycle) ``vault.delete_wiki_note``: False if missing, RuntimeError unless
        *confirmed*, else unlink. Index, log and ledger are untouched (the synchronized-delete fix removes the
        stem's index entries, logs the delete and drops ledger records pointing at the page). The error
        text is upstream's ``vault.py`` (the note gives none).
        """
        if self.read_wiki_note(filename) is None:
            return False
        if not confirmed:
            raise RuntimeError("删除操作必须先通过 click.confirm() 获得用户确认，再传入 confirmed=True")
        if self.fixed(OFF_DELETE_NOOP):
            return True
        self.tree.delete(self.wiki(filename))
        self.pages.drop(filename)
        self._plain.pop(filename, None)
        self.generation += 1
        if filename == INDEX_FILE:
            self._forget_index()
        if self.fixed(FIX_DELETE_SYNC):
            self._remove_page(filename)
            self.append_log("delete", PurePosixPath(filename).stem)
            self._drop_ledger_records_of(filename)
        self._op("delete_wiki_note", page=filename)
        return True

    def _drop_ledger_records_of(self, filename: str) -> None:
        data = self.load_ingest_log()
        files = {
            k: v
            for k, v in data["files"].items()
            if not (isinstance(v, dict) and v.get("wiki_page") == filename)
        }
        if len(files) != len(data["files"]):
            self._save_ledger({"version": LEDGER_VERSION, "files": files})

    def resolve(self, title: str) -> Resolution:
        """(MEM-RTE-browser-read) ``GET /api/wiki/resolve?title=``: the first note in path order with that
        lower-cased stem (None: 404).

        The ambiguous-citation-refused fix resolves a citation only to the note it names: the one note whose
        stem equals the citation exactly (the model copies stems from the index), else the one note whose
        stem matches it ignoring case; when several notes qualify it answers "ambiguous" (no path, every
        candidate listed) instead of silently choosing the first.
        """
        notes = self.list_wiki_notes()
        cands = resolve_candidates(title, notes)
        chosen = resolve_citation(title, notes)
        if self.fixed(FIX_UNIQUE_RESOLVE):
            target = title.removesuffix(".md") if title.lower().endswith(".md") else title
            exact = [p for p in cands if PurePosixPath(p).stem == target]
            pick = exact if exact else list(cands)
            chosen = pick[0] if len(pick) == 1 else None
        if self.fixed(OFF_RESOLVE_ALWAYS_404):
            chosen = None
        return Resolution(chosen, cands)

    def read_file(self, rel: str) -> str | None:
        """(MEM-RTE-browser-read) ``GET /api/file`` for a Wiki note: its raw text (no model call).

        Not modeled: /api/file's lexical containment check (the file tree refuses escaping paths itself).
        """
        return self.read_wiki_note(rel)

    def status(self) -> dict[str, Any]:
        """(MEM-OBJ-token-log) What ``nemsy status``, chat ``/status`` and ``GET /api/status`` count
        (``web.py`` 112-143, ``cli.py`` 704-816): every ``*.md`` (``index.md`` and ``log.md`` included),
        ``sources/*.md`` and ``queries/*.md`` (not recursive; no insights count), and the token-log
        summary. Read-only."""
        notes = self.list_wiki_notes()

        def direct(folder: str) -> int:
            return sum(1 for p in notes if p.startswith(folder + "/") and "/" not in p[len(folder) + 1 :])

        return {
            "wiki": {
                "path": self.wiki_path,
                "exists": bool(notes) or self.tree.is_dir(WIKI_DIR),
                "total_notes": len(notes),
                "sources_count": direct(SOURCES),
                "queries_count": direct(QUERIES),
            },
            "token_usage": self.summarize_token_log(),
        }

    def history_files(self) -> list[str]:
        """(MEM-ABS-history-store) Files under the configured history directory (upstream writes none)."""
        return self.tree.list(HISTORY_DIR)
