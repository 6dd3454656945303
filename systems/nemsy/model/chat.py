"""The CLI chat session (``nemsy chat``, ``cli.py`` 97-230): a Wiki snapshot loaded once at start, an
in-memory history trimmed after each ordinary turn, and the slash commands."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from systems.nemsy.model.constants import ARCHIVABLE, CHAT_PAGES
from systems.nemsy.model.loader import load_wiki_context
from systems.nemsy.state import FIX_RELOAD_SNAPSHOT, FIX_SAVE_EVICTED, OFF_NO_TRIM, Message, WikiContext

if TYPE_CHECKING:
    from systems.nemsy.model.cli import Cli

#: What ``/help`` lists (upstream prints them with descriptions, ``cli.py`` 60-76).
HELP_COMMANDS = (
    "/ingest", "/save", "/query", "/sources", "/lint", "/status", "/help", "/quit", "/exit",
)  # fmt: skip
#: The label of the summarize-evicted fix's summary inside the chat system prompt (memsim's own words).
SUMMARY_LABEL = "早前对话摘要（已移出历史的轮次）："
#: What ``/query`` with no question prints (``cli.py`` 186).
QUERY_USAGE = "用法：/query <问题> [-a]  （-a 归档答案）"


class ChatSession:
    """(RT-RTE-conversation-chat) A CLI ``nemsy chat`` session: a Wiki snapshot loaded once at start, an
    in-memory history trimmed to the last ``2*max_turns`` messages after each ordinary turn (0 = unbounded).
    :meth:`input` is one typed line; :meth:`say` an ordinary turn, :meth:`command` a slash command.

    The ARCHIVABLE y/N prompt is the *accept_archive* argument of :meth:`say`.

    Not modeled: The browser UI (FileLibrary and Chat views, mode switches, local 'done' marks).
    """

    def __init__(self, nemsy: Cli, max_turns: int = 0, max_files: int = CHAT_PAGES) -> None:
        self.nemsy = nemsy
        self.max_turns = max_turns
        self.max_files = max_files
        self.history: list[Message] = []
        self.closed = False
        self.summary = ""  # the summarize-evicted fix's running summary of evicted turns
        self.snapshot = load_wiki_context(nemsy, max_files, route="wiki.chat")
        self.generation = nemsy.generation
        nemsy._op("chat_start", pages=list(self.snapshot.pages), max_turns=max_turns)

    def context(self) -> WikiContext:
        """The Wiki context the next turn uses (the start-of-session snapshot; reloaded after a write under
        the reload-after-write fix)."""
        if self.nemsy.fixed(FIX_RELOAD_SNAPSHOT) and self.generation != self.nemsy.generation:
            self.snapshot = load_wiki_context(self.nemsy, self.max_files, route="wiki.chat")
            self.generation = self.nemsy.generation
        return self.snapshot

    def say(self, user_input: str, *, accept_archive: bool = False) -> str:
        """(RT-RTE-conversation-chat) One ordinary turn: call with the history plus *user_input*, append both
        messages, run the optional ARCHIVABLE save, then trim."""
        extra = f"{SUMMARY_LABEL}\n{self.summary}\n\n" if self.summary else ""
        reply = self.nemsy.chat_request(self.context(), self.history, user_input, extra_system=extra)
        self.history.append(Message("user", user_input))
        self.history.append(Message("assistant", reply))
        if ARCHIVABLE in reply and accept_archive:
            self.nemsy.save_insight(self.history, ctx=self.snapshot)
        trims = self.max_turns > 0 and not self.nemsy.fixed(OFF_NO_TRIM)
        if trims and len(self.history) > 2 * self.max_turns:
            evicted = self.history[: -2 * self.max_turns]
            self.history = self.history[-2 * self.max_turns :]
            if self.nemsy.fixed(FIX_SAVE_EVICTED):
                self.summary = self.nemsy.summarize_evicted(self.summary, evicted)
            self.nemsy._op("chat_trim", evicted=len(evicted), kept=len(self.history))
        return reply

    def input(self, line: str, *, accept_archive: bool = False) -> Any:
        """(RT-RTE-conversation-chat) One line typed at the REPL (``cli.py`` 126-230): stripped; an empty line
        is skipped (None); a line starting with ``/`` is a command (:meth:`command`); anything else is an
        ordinary turn (:meth:`say`, with the stripped text). Raises RuntimeError after ``/quit``."""
        if self.closed:
            raise RuntimeError("the chat session has ended")
        text = line.strip()
        if not text:
            return None
        if text.startswith("/"):
            return self.command(text)
        return self.say(text, accept_archive=accept_archive)

    def command(self, line: str) -> Any:
        """(RT-RTE-conversation-chat) A slash command (``cli.py`` 137-207), parsed as
        ``line[1:].split(maxsplit=1)`` (a bare ``/`` raises IndexError, as upstream's loop does); the command
        is lower-cased. Slash commands neither append to nor trim the history:

        - ``/quit``, ``/exit``, ``/q``: end the session; ``/help``: the command list (nothing else happens);
        - ``/status``: the status counts, read-only; ``/sources``: every raw source with its display status;
        - ``/lint``: the full lint (50 pages, a model call, a token-log entry and a log line);
        - ``/ingest PATH [-r|--recursive] [-f|--force] [--dry-run] [--wide]``: only those exact tokens are
          flags, every other token (``-dash.md`` too) is a path token, joined by single spaces; no path is a
          full scan;
        - ``/query q [-a|--archive]``: on the session's snapshot; no question prints the usage line only;
          with the flag, every `` -a`` then every `` --archive`` is removed from the question, then it is
          stripped;
        - ``/save [topic]``: the current history;
        - anything else: ``未知命令：/{cmd}，输入 /help 查看可用命令``.

        Not modeled: /status's balance request to the provider and its printed tables (counts returned).
        """
        parts = line[1:].split(maxsplit=1)
        cmd = parts[0].lower()
        arg = parts[1] if len(parts) > 1 else ""
        n = self.nemsy
        if cmd in ("quit", "exit", "q"):
            self.closed = True
            n._op("chat_end", messages=len(self.history))
            return None
        if cmd == "help":
            return HELP_COMMANDS
        if cmd == "status":
            return n.status()
        if cmd == "lint":
            return n.lint()
        if cmd == "ingest":
            flags = {"-r", "--recursive", "-f", "--force", "--dry-run", "--wide"}
            toks = arg.split()
            given = {t for t in toks if t in flags}
            path = " ".join(t for t in toks if t not in flags)
            return n.cli_ingest(
                path or None,
                recursive=bool(given & {"-r", "--recursive"}),
                force=bool(given & {"-f", "--force"}),
                dry_run="--dry-run" in given,
                wide="--wide" in given,
            )
        if cmd == "query":
            if not arg:
                return QUERY_USAGE
            archive = arg.endswith((" -a", " --archive"))
            if archive:
                arg = arg.replace(" -a", "").replace(" --archive", "").strip()
            return n.query(arg, archive=archive, wiki_context=self.context())
        if cmd == "sources":
            return n.sources()
        if cmd == "save":
            return n.save_insight(self.history, topic=arg or None, ctx=self.snapshot)
        return f"未知命令：/{cmd}，输入 /help 查看可用命令"
