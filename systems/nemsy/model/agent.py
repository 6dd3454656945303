"""The agent's operations (``agent.py``): ingest (and its parser and page write), query and archive, lint,
insight save, and one chat call. Every model call is one recorded request (:meth:`Base._call`), assembled
as upstream assembles it (:mod:`systems.nemsy.model.prompts`).

Upstream: ``agent.py`` 178-251 (ingest), 254-318 (parse and write), 321-387 (query, archive), 390-427
(lint), 434-494 (chat turn), 539-617 (save), ``cli.py`` 551-589 (reasoning query); fidelity note §2.7,
§2.9, §2.10.
"""

from __future__ import annotations

from collections.abc import Sequence

from systems.nemsy import faults as fp
from systems.nemsy.model import prompts as pm
from systems.nemsy.model.constants import (
    ARCHIVABLE,
    DEFAULT_MODEL,
    INGEST_WIDE_PAGES,
    INSIGHTS,
    LINT_PAGES,
    QUERIES,
    QUERY_PAGES,
    REASONING_MODEL,
    SOURCES,
)
from systems.nemsy.model.ledger import content_hash
from systems.nemsy.model.loader import load_wiki_context
from systems.nemsy.model.pages import (
    TITLE_LINE,
    parse_ingest_response,
    parse_ingest_response_with,
    sanitize_title,
    short_hash,
    unwrap_fence,
)
from systems.nemsy.model.vault import Vault
from systems.nemsy.state import (
    FIX_INDEX_UPSERT,
    FIX_INJECTIVE_NAMES,
    FIX_INVALIDATE_DERIVED,
    FIX_PARSER_FIXES,
    FIX_PARSER_REJECT_EMPTY,
    FIX_QUESTION_LAST,
    FIX_REASON_ARCHIVE,
    FIX_STRICT_PARSER,
    OFF_ARCHIVE_NOOP,
    OFF_NO_PAGE_WRITE,
    OFF_PARSER_REJECTS_ALL,
    Message,
    WikiContext,
)

#: Lint's stand-in report (its content is not modeled).
LINT_REPORT = "---ISSUES---\n---SUGGESTIONS---\n---NEXT_SOURCES---\n"


class Agent(Vault):
    """Ingest, query, archive, lint, save and chat calls of one installation."""

    def system(self, route: str) -> tuple[pm.Segment, ...]:
        """The system prompt of *route* as one segment (:func:`.prompts.system_prompt`)."""
        return (("system", pm.system_prompt(route, self.wiki_path)),)

    # -- ingest ----------------------------------------------------------------------------------------
    def ingest_call(
        self, content: str, title: str, index_context: str | None, ctx: WikiContext
    ) -> pm.ModelCall:
        """The ingest call: the ingest system prompt; the user prompt ``请处理以下资料：``, ``标题：``, the
        guidance block, ``---资料内容---``, the source, ``---当前 Wiki 状态---``, the context."""
        head, source, mid = pm.ingest_user(content, title, index_context)
        user = (("message", head), ("source", source), ("message", mid), *pm.context_segments(ctx, "\n"))
        return pm.ModelCall("ingest", "wiki.ingest", self.system("ingest"), user)

    def ingest(
        self,
        content: str,
        title: str,
        *,
        source_path: str | None = None,
        index_context: str | None = None,
        wide: bool = False,
    ) -> str | None:
        """(RT-RTE-document-ingest, MEM-OBJ-source-page) ``agent.ingest``: load 10 pages (50 wide), one model
        call, token log, parse and write the page and index, log ``ingest | title`` unconditionally, then the
        ledger record when *source_path* is set. Returns the page or None.

        Raises :class:`sim.faults.WriteFailed` when the model call fails (nothing recorded).
        Not modeled: Upstream's prompt text: stand-ins padded to upstream's cl100k size (0 tokens off).
        """
        ctx = load_wiki_context(self, INGEST_WIDE_PAGES if wide else self.ingest_pages, route="wiki.ingest")
        prompt_tokens = self._call(self.ingest_call(content, title, index_context, ctx), ctx)
        self.sim.faults.point(fp.INGEST_LLM_CALL)
        response = self.responder(title, content, ctx)
        self._record_tokens("ingest", prompt_tokens, response)
        page = self._parse_and_write_ingest(response, title, source_path=source_path, content=content)
        self.sim.faults.point(fp.INGEST_AFTER_INDEX)
        self.append_log("ingest", title)
        self.sim.faults.point(fp.INGEST_AFTER_LOG)
        if source_path is not None:
            rejected = page is None and self._rejects_empty() and parse_ingest_response(response) is not None
            self.record_ingest(source_path, content, ingest_mode="full", wiki_page=page, failed=rejected)
        self._op("ingest", title=title, source=source_path, page=page, wide=wide)
        return page

    def _rejects_empty(self) -> bool:
        return self.fixed(FIX_PARSER_REJECT_EMPTY) or self.fixed(FIX_STRICT_PARSER)

    def parse_reply(self, response: str) -> str | None:
        """The page body this design's parser makes of *response* (:func:`parse_ingest_response_with` with
        the parser fixes switched on), or None: nothing is written."""
        if self.fixed(OFF_PARSER_REJECTS_ALL):
            return None
        return parse_ingest_response_with(response, self.variant.fixes & FIX_PARSER_FIXES)

    def source_page_name(self, title: str, source_path: str | None) -> str:
        """``sources/<san(title)>-<date>.md`` (the injective-names fix adds a hash of the source path)."""
        name = sanitize_title(title)
        if self.fixed(FIX_INJECTIVE_NAMES):
            name = f"{name}-{short_hash(source_path or title)}"
        return f"{SOURCES}/{name}-{self.today()}.md"

    def _parse_and_write_ingest(
        self, response: str, title: str, *, source_path: str | None = None, content: str = ""
    ) -> str | None:
        """(MEM-OBJ-source-page) Parse *response* (:func:`parse_ingest_response`) and write the page raw (no
        trailing newline, overwriting), then the index entry ``来自 <title> 的摘要``. None when the SUMMARY
        marker is missing: nothing is written. (Under the empty-summary-rejected fix an empty summary is
        rejected too, and :meth:`ingest` records that source as ``failed``.)
        """
        body = None if self.fixed(OFF_NO_PAGE_WRITE) else self.parse_reply(response)
        if body is None:
            self._op("_parse_and_write_ingest", phase="fail", title=title, reason="no SUMMARY")
            return None
        filename = self.source_page_name(title, source_path)
        if self.fixed(FIX_INDEX_UPSERT) and source_path is not None:
            old = self.ledger_record(source_path)
            if old is not None and old.wiki_page and old.wiki_page != filename:
                self._remove_page(old.wiki_page)
        self._wiki_write(filename, body)
        if self.keep_page_hashes:
            self.page_source_hash[filename] = content_hash(content)
        self.derivations.pop(filename, None)
        self.sim.faults.point(fp.INGEST_AFTER_PAGE)
        self._update_index(title, filename, f"来自 {title} 的摘要")
        self._op("_parse_and_write_ingest", title=title, page=filename, chars=len(body))
        return filename

    # -- query and archive -------------------------------------------------------------------------------
    def query_call(self, question: str, ctx: WikiContext, *, reasoning: bool = False) -> pm.ModelCall:
        """The query call: the query system prompt; ``问题：q``, ``---Wiki 内容---`` and the context, in the
        CLI template (four-space indents, a trailing newline and four spaces) or the reasoning one."""
        if reasoning:
            head, tail = pm.reason_user(question)
        elif self.fixed(FIX_QUESTION_LAST):
            head, tail = pm.query_user_question_last(question)
        else:
            head, tail = pm.query_user(question)
        user = (("message", head), *pm.context_segments(ctx, tail))
        return pm.ModelCall("query", "wiki.reason" if reasoning else "wiki.query", self.system("query"), user)

    def query(
        self,
        question: str,
        *,
        archive: bool = False,
        wiki_context: WikiContext | None = None,
        reasoning: bool = False,
        max_files: int = QUERY_PAGES,
    ) -> str:
        """(RT-RTE-wiki-answer, RT-RTE-answer-archive, RT-RTE-reasoning-query) ``agent.query``: the supplied
        snapshot or a fresh 30-page load, one model call, token log, archive only when *archive* (the
        ``ARCHIVABLE: true`` marker alone never archives), then ``query | q — 归档：是|否``.

        Reasoning mode returns a tuple upstream: no token log, and ``-r -a`` raises AttributeError before
        writing (the reasoning-tuple-unpacked fix behaves like the ordinary path).

        Not modeled: Reasoning mode's thinking text, temperature and budget (only its tuple defect).
        """
        ctx = wiki_context or load_wiki_context(self, max_files, query=question, route="wiki.query")
        prompt_tokens = self._call(self.query_call(question, ctx, reasoning=reasoning), ctx)
        answer = self.answerer(question, ctx, ())
        unpacked = not reasoning or self.fixed(FIX_REASON_ARCHIVE)
        if unpacked:
            model = REASONING_MODEL if reasoning else DEFAULT_MODEL
            self._record_tokens("query", prompt_tokens, answer, model)
        if archive:
            if not unpacked:
                self._op("query", phase="crash", question=question, error="AttributeError")
                raise AttributeError("'tuple' object has no attribute 'replace'")
            self._archive_query_result(question, answer, ctx)
        elif unpacked and ARCHIVABLE in answer:
            self._op("archive_hint", question=question)
        detail = (
            "使用 reasoner 模式"
            if reasoning and not self.fixed(FIX_REASON_ARCHIVE)
            else (f"归档：{'是' if archive else '否'}")
        )
        self.append_log("query", question, detail=detail)
        self._op("query", question=question, archive=archive, reasoning=reasoning, pages=list(ctx.pages))
        return answer

    def query_page_name(self, question: str) -> str:
        """``queries/<san(q[:40])>-<date>.md`` (the injective-names fix adds a hash of the whole question)."""
        name = sanitize_title(question[:40])
        if self.fixed(FIX_INJECTIVE_NAMES):
            name = f"{name}-{short_hash(question)}"
        return f"{QUERIES}/{name}-{self.today()}.md"

    def _archive_query_result(self, question: str, answer: str, ctx: WikiContext | None = None) -> str:
        """(RT-RTE-answer-archive, MEM-OBJ-query-page) Write ``# q\\n\\n<answer minus ARCHIVABLE: true,
        stripped>`` with frontmatter ``{date, tags: [], title: q, type: query}`` (PyYAML's dump, so long
        titles fold), overwriting; then the index line ``查询结果：q[:30]...``
        """
        filename = self.query_page_name(question)
        if self.fixed(OFF_ARCHIVE_NOOP):
            return filename
        body = f"# {question}\n\n{answer.replace(ARCHIVABLE, '').strip()}"
        self.write_wiki_note(
            filename, body, {"date": self.today(), "tags": [], "title": question, "type": "query"}
        )
        self._note_derivation(filename, ctx)
        self.sim.faults.point(fp.ARCHIVE_AFTER_PAGE)
        self._update_index(question, filename, f"查询结果：{question[:30]}...")
        self._op("_archive_query_result", question=question, page=filename)
        return filename

    def _note_derivation(self, filename: str, ctx: WikiContext | None) -> None:
        """Remember what derived page *filename* was made from: every page of the context it was answered
        from, with its content hash (the invalidate-derived fix stops loading it once one of them changes).
        Every loaded page counts, cited or not: the model may use any of them."""
        if not (self.keep_derivations or self.fixed(FIX_INVALIDATE_DERIVED)):
            return
        inputs = {rel: content_hash(c) for rel, c in ctx.page_sections if rel != filename} if ctx else {}
        self.derivations[filename] = inputs

    def lint_call(self, ctx: WikiContext, *, web: bool = False) -> pm.ModelCall:
        """The lint call: the lint system prompt and the CLI (indented) or web lint template."""
        head, tail = pm.web_lint_user() if web else pm.lint_user()
        user = (("message", head), *pm.context_segments(ctx, tail))
        return pm.ModelCall("lint", "wiki.web_lint" if web else "wiki.lint", self.system("lint"), user)

    def lint(self) -> str:
        """(RT-RTE-wiki-lint) ``agent.lint`` (CLI ``lint`` and chat ``/lint``): load 50 pages, one call, token
        log, ``lint | Wiki 健康检查 — 自动健检完成``; the report is returned, nothing installed.

        Not modeled: Lint's report content: the stand-in returns empty ISSUES/SUGGESTIONS sections.
        """
        ctx = load_wiki_context(self, LINT_PAGES, route="wiki.lint")
        prompt_tokens = self._call(self.lint_call(ctx), ctx)
        self._record_tokens("lint", prompt_tokens, LINT_REPORT)
        self.append_log("lint", "Wiki 健康检查", detail="自动健检完成")
        return LINT_REPORT

    # -- insights --------------------------------------------------------------------------------------
    def save_insight(
        self, history: Sequence[Message], *, topic: str | None = None, ctx: WikiContext | None = None
    ) -> str | None:
        """(RT-RTE-insight-save, MEM-OBJ-insight-page) Rewrite *history* in a fresh call (no Wiki context),
        fence-unwrap, title from the first ``title:`` line (else *topic*, else ``对话洞见``), write
        ``insights/<san(title)>-<date>.md`` raw (overwriting), index ``对话洞见：title[:30]``, log
        ``save | title — chat 归档``. None for an empty history. *ctx* is the Wiki context the conversation
        saw (the chat session's snapshot), recorded as the insight's derivation inputs.
        """
        if not history:
            return None
        transcript = "\n\n".join(f"{'用户' if m.role == 'user' else 'Nemsy'}：{m.content}" for m in history)
        call = pm.ModelCall(
            "save", "wiki.save", self.system("save"), (("message", pm.save_user(transcript, topic)),)
        )
        prompt_tokens = self._call(call, None)
        response = self.rewriter(transcript, topic)
        self._record_tokens("save", prompt_tokens, response)
        content = unwrap_fence(response.strip())
        m = TITLE_LINE.search(content)
        raw_title = m.group(1).strip().strip("\"'") if m else (topic or "对话洞见")
        name = sanitize_title(raw_title)
        if self.fixed(FIX_INJECTIVE_NAMES):
            name = f"{name}-{short_hash(transcript)}"
        filename = f"{INSIGHTS}/{name}-{self.today()}.md"
        self._wiki_write(filename, content)
        self._note_derivation(filename, ctx)
        self.sim.faults.point(fp.SAVE_AFTER_PAGE)
        self._update_index(raw_title, filename, f"对话洞见：{raw_title[:30]}")
        self.sim.faults.point(fp.SAVE_AFTER_INDEX)
        self.append_log("save", raw_title, detail="chat 归档")
        self._op("save_insight", title=raw_title, page=filename, messages=len(history))
        return filename

    def summarize_evicted(self, summary: str, evicted: Sequence[Message]) -> str:
        """The summarize-evicted fix (upstream has none): one model call folds the turns the chat trim just
        evicted into the running summary, which the summarizer keeps within its own bound; the chat system
        prompt then carries it."""
        transcript = "\n\n".join(f"{'用户' if m.role == 'user' else 'Nemsy'}：{m.content}" for m in evicted)
        user = (("memory", f"{summary}\n\n" if summary else ""), ("message", transcript))
        call = pm.ModelCall("summarize", "wiki.summarize", (("system", pm.SUMMARIZE_SYSTEM),), user)
        prompt_tokens = self._call(call, None)
        out = self.summarizer(summary, transcript)
        self._record_tokens("summarize", prompt_tokens, out)
        self._op("summarize_evicted", messages=len(evicted), chars=len(out))
        return out

    # -- chat ------------------------------------------------------------------------------------------
    def chat_call(
        self,
        ctx: WikiContext,
        history: Sequence[Message],
        user_input: str,
        *,
        web: bool = False,
        extra_system: str = "",
    ) -> pm.ModelCall:
        """One chat call (``agent.py`` 469-473, ``web.py`` 298-303): the system prompt
        ``当前 Wiki 摘要：\\n<ctx>\\n\\n`` + the (web) chat stand-in, the history, the input."""
        route = "web_chat" if web else "chat"
        system = (
            ("system", pm.CHAT_PREFIX),
            *pm.context_segments(ctx, pm.CHAT_SEPARATOR),
            *((("memory", extra_system),) if extra_system else ()),
            *self.system(route),
        )
        return pm.ModelCall(
            "chat", f"wiki.{route}", system, (("message", user_input),), tuple(m.content for m in history)
        )

    def chat_request(
        self,
        ctx: WikiContext,
        history: Sequence[Message],
        user_input: str,
        extra_system: str = "",
        route: str = "wiki.chat",
    ) -> str:
        """One chat call and its token-log entry; returns the reply."""
        call = self.chat_call(
            ctx, history, user_input, web=route == "wiki.web_chat", extra_system=extra_system
        )
        prompt_tokens = self._call(call, ctx)
        reply = self.answerer(user_input, ctx, history)
        self._record_tokens("chat", prompt_tokens, reply)
        return reply
