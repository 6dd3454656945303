"""The web routes (``web.py``): ``/api/ingest``, ``/api/query``, ``/api/chat``, ``/api/lint``, ``/api/wiki``
(and ``/api/sources``, ``/api/status``, ``/api/wiki/resolve``, ``/api/file``, ``/api/save``, which share
the CLI's and the vault's operations).

Upstream: ``web.py`` 112-143 (status), 150-197 (sources), 200-234 (wiki listing), 237-265 (resolve, file),
272-313 (chat), 316-358 (query), 361-382 (lint), 389-412 (ingest), 415-420 (save); fidelity note §2.7,
§2.9, §2.11 and Corrections 10.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import PurePosixPath
from typing import Any

from systems.nemsy.model import prompts as pm
from systems.nemsy.model.agent import LINT_REPORT
from systems.nemsy.model.cli import Cli, tree_path
from systems.nemsy.model.constants import CHAT_PAGES, LINT_PAGES, QUERY_PAGES
from systems.nemsy.model.loader import load_wiki_context
from systems.nemsy.model.pages import frontmatter_metadata
from systems.nemsy.state import FIX_WEB_FLAGS, OFF_WEB_INGEST_NOOP, Message, WikiContext


class HTTPError(Exception):
    """An endpoint's HTTP error (FastAPI's ``HTTPException``): *status* and *detail*."""

    def __init__(self, status: int, detail: str) -> None:
        super().__init__(f"{status}: {detail}")
        self.status = status
        self.detail = detail


class Web(Cli):
    """The web endpoints of one installation."""

    def web_ingest(self, path: str, *, recursive: bool = False, force: bool = False) -> dict[str, Any]:
        """(RT-RTE-document-ingest) ``POST /api/ingest``: *path* is taken as given (a tree path; not resolved
        against the raw root): missing → 404 ``Path not found: <path>``; a directory is collected with
        ``collect_files(path, recursive=recursive)`` (extension and ``_index.md`` filters apply), a file is
        used alone with no filter. Each file is read as strict UTF-8 (UnicodeDecodeError: a 500) and ingested
        with no empty check and no ledger check (*force* is ignored), title = stem, ``source_path`` set.
        Returns ``{ingested, results: [{file, wiki_page}]}``. The web-honors-flags fix skips ``done`` files
        unless *force*.
        """
        where = tree_path(path)
        if not (self.is_file(where) or self.is_dir(where)):
            raise HTTPError(404, f"Path not found: {path}")
        if self.fixed(OFF_WEB_INGEST_NOOP):
            return {"ingested": 0, "results": []}
        files = self.collect_files(where, recursive=recursive) if self.is_dir(where) else [where]
        results = []
        for f in files:
            content = self.tree.read_text(f)
            if self.fixed(FIX_WEB_FLAGS) and not force and self.get_file_status(f, content) == "done":
                continue
            page = self.ingest(
                content, PurePosixPath(f).stem, source_path=f, index_context=self.find_index_context(f)
            )
            results.append({"file": f, "wiki_page": page})
        return {"ingested": len(results), "results": results}

    def web_query_call(self, question: str, ctx: WikiContext) -> pm.ModelCall:
        """The ``/api/query`` call: the web-query system prompt, ``问题：q``, ``---知识库内容---``, the
        context."""
        head, tail = pm.web_query_user(question)
        user = (("message", head), *pm.context_segments(ctx, tail))
        return pm.ModelCall("query", "wiki.web_query", self.system("web_query"), user)

    def web_query(self, question: str, *, archive: bool = False) -> str:
        """(RT-RTE-wiki-answer, RT-RTE-answer-archive) ``POST /api/query``: a fresh 30-page load, one call
        with its own prompts, a ``query`` token-log entry; *archive* is ignored and nothing is logged (the
        web-honors-flags fix archives when asked and logs like the CLI)."""
        ctx = load_wiki_context(self, QUERY_PAGES, query=question, route="wiki.web_query")
        prompt_tokens = self._call(self.web_query_call(question, ctx), ctx)
        answer = self.answerer(question, ctx, ())
        self._record_tokens("query", prompt_tokens, answer)
        if self.fixed(FIX_WEB_FLAGS):
            if archive:
                self._archive_query_result(question, answer, ctx)
            self.append_log("query", question, detail=f"归档：{'是' if archive else '否'}")
        self._op("web_query", question=question, archive_requested=archive)
        return answer

    def web_chat(self, history: Sequence[Message], message: str) -> str:
        """(RT-RTE-conversation-chat) ``POST /api/chat``: 20 pages loaded fresh per request, the web-chat
        system prompt after the Wiki, the client's history verbatim, a ``chat`` token-log entry, no log."""
        ctx = load_wiki_context(self, CHAT_PAGES, query=message, route="wiki.web_chat")
        return self.chat_request(ctx, history, message, route="wiki.web_chat")

    def web_lint(self) -> str:
        """(RT-RTE-wiki-lint) ``POST /api/lint``: a 50-page load, one call (the lint system prompt, the
        unindented lint template), a ``lint`` token-log entry and no log line."""
        ctx = load_wiki_context(self, LINT_PAGES, route="wiki.web_lint")
        prompt_tokens = self._call(self.lint_call(ctx, web=True), ctx)
        self._record_tokens("lint", prompt_tokens, LINT_REPORT)
        return LINT_REPORT

    def web_wiki(self) -> list[dict[str, Any]]:
        """(MEM-RTE-browser-read) ``GET /api/wiki``: every note with ``rel_path``, ``abs_path``, ``type``,
        ``title`` (the frontmatter title, else the stem), ``date`` and ``tags`` (a list, else ``[]``); a note
        whose frontmatter does not parse gets empty fields and the stem."""
        out = []
        for rel in self.list_wiki_notes():
            stem = PurePosixPath(rel).stem
            try:
                meta = frontmatter_metadata(self.tree.read_text(self.wiki(rel), translate_newlines=False))
                t, title, date, tags = meta.get("type"), meta.get("title"), meta.get("date"), meta.get("tags")
                row = (
                    str(t) if t is not None else "",
                    str(title) if title is not None else stem,
                    str(date) if date is not None else "",
                    list(tags) if isinstance(tags, list | tuple) else [],
                )
            except Exception:
                row = ("", stem, "", [])
            out.append(
                {
                    "rel_path": rel,
                    "abs_path": f"{self.wiki_path}/{rel}",
                    "type": row[0],
                    "title": row[1],
                    "date": row[2],
                    "tags": row[3],
                }
            )
        return out
