"""``Nemsy``: one installation (vault, Wiki, ledger, token log) with every route, CLI and web."""

from __future__ import annotations

from systems.nemsy.model.chat import ChatSession
from systems.nemsy.model.constants import CHAT_PAGES
from systems.nemsy.model.web import Web


class Nemsy(Web):
    """One Nemsy installation (vault, Wiki, ledger, token log) in a file tree of *sim*.

    Built from one layer per concept: :class:`~systems.nemsy.model.ledger.Ledger` (ingest ledger, token
    log), :class:`~systems.nemsy.model.vault.Vault` (Wiki files, index, log, delete, resolve),
    :class:`~systems.nemsy.model.agent.Agent` (ingest, query, archive, lint, save, chat call),
    :class:`~systems.nemsy.model.cli.Cli` (raw sources, collect, guidance, ``nemsy ingest``, chat) and
    :class:`~systems.nemsy.model.web.Web` (the web endpoints); the Wiki loader is
    :func:`~systems.nemsy.model.loader.load_wiki_context`. Constructor arguments: see
    :class:`~systems.nemsy.model.base.Base`.

    Not modeled: The model itself (DeepSeek): replies come from seeded policies.
    Not modeled: Settings loading (TOML, .env, environment variables): the TOML defaults are used.
    Not modeled: Local time: the agent clock is UTC and stands for date.today()/datetime.now().
    Not modeled: Provider caching, overflow and truncation (RT-CMP-deepseek): requests are recorded only.
    Not modeled: search_notes, a helper without a wired caller (iter_notes does not exist at this commit).
    """

    # Here, on the assembled class, so that the CLI layer (:mod:`.cli`) does not import the chat session
    # (:mod:`.chat`) that drives it (issue 41).
    def chat_session(self, *, max_turns: int | None = None, max_files: int = CHAT_PAGES) -> ChatSession:
        """Start ``nemsy chat``: the 20-page Wiki snapshot is loaded now, once."""
        return ChatSession(self, self.max_turns if max_turns is None else max_turns, max_files)
