"""The CLI chat session (``nemsy chat``, ``cli.py`` 97-230): a Wiki snapshot loaded once at start, an
in-memory history trimmed after each ordinary turn, and the slash commands."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sim.text import FACT_RE
from systems.nemsy.model.constants import ARCHIVABLE, CHAT_PAGES
from systems.nemsy.model.loader import load_wiki_context
from systems.nemsy.state import FIX_RELOAD_SNAPSHOT, FIX_SAVE_EVICTED, Message, WikiContext

if TYPE_CHECKING:
    from systems.nemsy.model.cli import Cli


class ChatSession:
    """(RT-RTE-conversation-chat) A CLI ``nemsy chat`` session: a Wiki snapshot loaded once at start, an
    in-memory history trimmed to the last ``2*max_turns`` messages after each ordinary turn (0 = unbounded).

    The ARCHIVABLE y/N prompt is the *accept_archive* argument of :meth:`say`.

    Not modeled: The browser UI (FileLibrary and Chat views, mode switches, local 'done' marks).
    """

    def __init__(self, nemsy: Cli, max_turns: int = 0, max_files: int = CHAT_PAGES) -> None:
        self.nemsy = nemsy
        self.max_turns = max_turns
        self.max_files = max_files
        self.history: list[Message] = []
        self.evicted_facts: list[str] = []  # the summarize-evicted fix's running summary
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
        extra = ""
        if self.evicted_facts:
            extra = "早前对话摘要：" + " ".join(self.evicted_facts) + "\n\n"
        reply = self.nemsy.chat_request(self.context(), self.history, user_input, extra_system=extra)
        self.history.append(Message("user", user_input))
        self.history.append(Message("assistant", reply))
        if ARCHIVABLE in reply and accept_archive:
            self.nemsy.save_insight(self.history)
        if self.max_turns > 0 and len(self.history) > 2 * self.max_turns:
            evicted = self.history[: -2 * self.max_turns]
            self.history = self.history[-2 * self.max_turns :]
            if self.nemsy.fixed(FIX_SAVE_EVICTED):
                for m in evicted:
                    for f in FACT_RE.finditer(m.content):
                        if f.group(0) not in self.evicted_facts:
                            self.evicted_facts.append(f.group(0))
            self.nemsy._op("chat_trim", evicted=len(evicted), kept=len(self.history))
        return reply

    def command(self, line: str) -> Any:
        """(RT-RTE-conversation-chat) A slash command (``/ingest PATH [-r] [-f] [--wide]``, ``/save [topic]``,
        ``/query q [-a]``); slash commands neither append to nor trim the history. ``/query`` reuses the
        20-page snapshot."""
        cmd, _, arg = line.lstrip("/").partition(" ")
        cmd = cmd.lower()
        if cmd == "ingest":
            toks = arg.split()
            flags = {t for t in toks if t.startswith("-")}
            path = " ".join(t for t in toks if not t.startswith("-")) or None
            return self.nemsy.cli_ingest(
                path,
                recursive=bool(flags & {"-r", "--recursive"}),
                force=bool(flags & {"-f", "--force"}),
                wide="--wide" in flags,
            )
        if cmd == "save":
            return self.nemsy.save_insight(self.history, topic=arg or None)
        if cmd == "query":
            q = arg
            archive = q.endswith((" -a", " --archive"))
            if archive:
                q = q.replace(" --archive", "").replace(" -a", "").strip()
            return self.nemsy.query(q, archive=archive, wiki_context=self.context())
        raise ValueError(f"unknown chat command /{cmd}")
