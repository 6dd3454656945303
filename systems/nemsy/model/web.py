"""The web routes (``web.py``): ``/api/ingest``, ``/api/sources``, ``/api/query`` and ``/api/chat``.

Upstream: ``web.py`` 150-197 (sources), 272-313 (chat), 316-358 (query), 389-412 (ingest); fidelity note
§2.7, §2.9, §2.11.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import PurePosixPath

from systems.nemsy.model.cli import Cli
from systems.nemsy.model.constants import CHAT_PAGES, QUERY_PAGES, QUERY_SYSTEM, RAW_DIR
from systems.nemsy.model.loader import load_wiki_context
from systems.nemsy.state import FIX_WEB_FLAGS, IngestOutcome, Message


class Web(Cli):
    """The web endpoints of one installation."""

    def web_ingest(self, paths: Sequence[str], *, force: bool = False) -> list[IngestOutcome]:
        """(RT-RTE-document-ingest) ``POST /api/ingest``: ignores *force* and the ledger (re-ingests
        everything), no empty check, title = stem. The web-honors-flags fix skips ``done`` files unless
        *force*."""
        out = []
        for f in paths:
            content = self.tree.read_text(f)
            status = self.get_file_status(f, content)
            if self.fixed(FIX_WEB_FLAGS) and status == "done" and not force:
                out.append(IngestOutcome(f, status, "skipped"))
                continue
            page = self.ingest(
                content, PurePosixPath(f).stem, source_path=f, index_context=self.find_index_context(f)
            )
            out.append(IngestOutcome(f, status, "ingested", page))
        return out

    def sources(self) -> dict[str, str]:
        """``GET /api/sources``: every raw source (``.md``/``.txt``) with its display status."""
        return {f: self.display_status(f) for f in self.collect_files(RAW_DIR, recursive=True)}

    def web_query(self, question: str, *, archive: bool = False) -> str:
        """(RT-RTE-wiki-answer, RT-RTE-answer-archive) ``POST /api/query``: a fresh 30-page load and one call;
        *archive* is ignored and nothing is logged (the web-honors-flags fix archives and logs like the
        CLI)."""
        if self.fixed(FIX_WEB_FLAGS):
            return self.query(question, archive=archive)
        ctx = load_wiki_context(self, QUERY_PAGES, query=question, route="wiki.query")
        prompt_tokens = self._request(
            "query", "wiki.query", (QUERY_SYSTEM, self.query_prompt(question, ctx)), ctx
        )
        answer = self.answerer(question, ctx, ())
        self._record_tokens("query", prompt_tokens, answer)
        self._op("web_query", question=question, archive_requested=archive)
        return answer

    def web_chat(self, history: Sequence[Message], message: str) -> str:
        """(RT-RTE-conversation-chat) ``POST /api/chat``: 20 pages loaded fresh per request, the client's
        history verbatim, no log."""
        ctx = load_wiki_context(self, CHAT_PAGES, query=message, route="wiki.chat")
        return self.chat_request(ctx, history, message, route="wiki.web_chat")
