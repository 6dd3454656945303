"""The state every part of one Nemsy installation shares: the simulation, its tree and clock, the switches,
the stand-ins for the model, and the recording of model calls.

Model requests: every model call (ingest, query, chat, lint, save; CLI and web) is recorded with
``sim.request`` as the parts of :class:`~systems.nemsy.model.prompts.ModelCall` (labelled ``system``,
``message``, ``source``, ``index``, ``page``, ``memory``), cut where the sum of the parts' cl100k counts is
the exact count of the assembled prompt; ``estimate`` is None (Nemsy has no estimator).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from sim.engine import Simulation
from sim.files import FileTree
from sim.text import FACT_RE
from sim.variant import FAITHFUL, Variant
from systems.nemsy.model.constants import CONTEXT_CHARS, INGEST_PAGES, SYSTEM, WIKI_DIR
from systems.nemsy.model.mtimeindex import MtimeIndex
from systems.nemsy.model.prompts import WIKI_PATH, ModelCall
from systems.nemsy.state import Message, WikiContext

if TYPE_CHECKING:
    from systems.nemsy.model.ledgerfiles import LedgerFile, TokenLogFile

Responder = Callable[[str, str, WikiContext], str]  # (title, source content, loaded context) -> response
Answerer = Callable[[str, WikiContext, Sequence[Message]], str]  # (question, context, history) -> answer
Rewriter = Callable[[str, str | None], str]  # (transcript, topic) -> insight markdown
Summarizer = Callable[[str, str], str]  # (summary so far, evicted transcript) -> new summary


def _default_responder(title: str, content: str, ctx: WikiContext) -> str:
    facts = " ".join(dict.fromkeys(m.group(0) for m in FACT_RE.finditer(content)))
    return f"---SUMMARY---\n# {title}\n\n{facts}\n---QUESTIONS---\n- {title}？"


def _default_answerer(question: str, ctx: WikiContext, history: Sequence[Message]) -> str:
    return "Wiki 中暂无此内容"


def _default_rewriter(transcript: str, topic: str | None) -> str:
    facts = " ".join(dict.fromkeys(m.group(0) for m in FACT_RE.finditer(transcript)))
    return f"---\ntitle: {topic or '对话'}\ntype: insight\n---\n\n# {topic or '对话'}\n\n{facts}"


class Base:
    """One Nemsy installation's shared state (vault, Wiki, ledger, token log live in *tree*).

    *variant* switches fixes on (the default is the faithful design); *context_chars* is the
    shared-context-budget fix's own knob. *responder*, *answerer* and *rewriter* stand in for the model
    (see :mod:`systems.nemsy.policies`). *record_requests* records every model request in the trace as
    ``sim.request`` does (the benchmark adapter turns it off and returns its own). *wiki_path* is the
    absolute Wiki path upstream writes into every system prompt (``settings.vault.wiki_path``);
    *ingest_pages* the pages an ingest prompt loads (upstream: 10).
    """

    pages: MtimeIndex
    #: Whether the token log's records stay in memory once written (the benchmark adapter sets False:
    #: a long run's log is then read back from its file when someone reads it; issue 33).
    hold_token_log = True
    #: Whether the ingest ledger's document stays in memory once written (the benchmark adapter sets
    #: False: records are then read back from ``ingest_log.json`` by key; issue 33).
    hold_ledger = True
    #: Whether :attr:`page_source_hash` is kept (checkers read it; the benchmark adapter, which runs none,
    #: sets False so a long run does not hold a hash per page; issue 33).
    keep_page_hashes = True
    #: Whether :attr:`derivations` is kept when the invalidate-derived fix (its only reader besides checkers)
    #: is off (a long scenario sets False: each archived query would hold its 30 inputs' hashes; issue 42).
    keep_derivations = True
    _ledger_file: LedgerFile
    _backup_file: LedgerFile
    _token_file: TokenLogFile

    def __init__(
        self,
        sim: Simulation,
        *,
        tree: FileTree | None = None,
        agent: str = "nemsy",
        variant: Variant = FAITHFUL,
        context_chars: int = CONTEXT_CHARS,
        responder: Responder | None = None,
        answerer: Answerer | None = None,
        rewriter: Rewriter | None = None,
        summarizer: Summarizer | None = None,
        max_turns: int = 0,
        record_requests: bool = True,
        wiki_path: str = WIKI_PATH,
        ingest_pages: int = INGEST_PAGES,
    ) -> None:
        self.sim = sim
        self.agent = agent
        self.clock = sim.clock(agent)
        self.tree = tree if tree is not None else sim.tree("memory", agent=agent)
        self.variant = variant
        self.context_chars = context_chars
        self.responder: Responder = responder or _default_responder
        self.answerer: Answerer = answerer or _default_answerer
        self.rewriter: Rewriter = rewriter or _default_rewriter
        from systems.nemsy.policies import EvictionSummarizer

        self.summarizer: Summarizer = summarizer or EvictionSummarizer()
        self.max_turns = max_turns
        self.record_requests = record_requests
        self.wiki_path = wiki_path
        self.ingest_pages = ingest_pages
        self.pages = MtimeIndex()
        self.generation = 0  # bumped by every Wiki write (the reload-after-write fix reads it)
        self.calls: Counter[str] = Counter()  # model calls by command (ground truth for checkers)
        self.bytes_written = 0
        #: derived page -> {input page: content hash} at derivation time (ground truth; the
        #: invalidate-derived fix also uses it).
        self.derivations: dict[str, dict[str, str]] = {}
        #: page -> the source hash it was last written from (ground truth for checkers).
        self.page_source_hash: dict[str, str] = {}
        self._ledger_cache: dict[str, Any] | None = None
        self.last_call: ModelCall | None = None
        self._tokens_cache: list[dict[str, Any]] | None = None
        self.rescan()

    def rescan(self) -> None:
        """Rebuild derived in-memory state from the tree (the vault overrides it)."""

    # -- small helpers ---------------------------------------------------------------------------------
    def fixed(self, fix: str) -> bool:
        """Whether the switch *fix* is on."""
        return self.variant.has(fix)

    def today(self) -> str:
        """``str(date.today())`` on the agent clock."""
        return self.clock.date()

    def now_naive_iso(self) -> str:
        """``datetime.now().isoformat()`` (naive) on the agent clock."""
        return self.clock.datetime().replace(tzinfo=None).isoformat()

    def _op(self, op: str, phase: str = "ok", **detail: Any) -> None:
        self.sim.trace.op(SYSTEM, op, agent=self.agent, phase=phase, **detail)

    @staticmethod
    def wiki(rel: str) -> str:
        """The tree path of Wiki-relative *rel*."""
        return f"{WIKI_DIR}/{rel}"

    @staticmethod
    def resolved(path: str) -> str:
        """``str(path.resolve())`` for a tree path: the ledger key."""
        return "/" + path.lstrip("/")

    # -- model calls -------------------------------------------------------------------------------------
    def _call(self, call: ModelCall, ctx: WikiContext | None) -> int:
        """Record model call *call* as ``sim.request`` would record its parts (:meth:`.ModelCall.counted`:
        the same sums, the index's leading blocks taken from their tally), labelled by kind, with Nemsy's
        own detail (command, pages, index size); return its prompt tokens (0 when requests are not
        recorded)."""
        self.calls[call.command] += 1
        self.last_call = call
        if not self.record_requests:
            return 0
        c = call.counted()
        rec = self.sim.request_counted(
            SYSTEM,
            call.route,
            exact_tokens=c.tokens,
            parts=c.parts,
            facts=c.facts,
            agent=self.agent,
            tokens_by_kind=c.by_kind,
            command=call.command,
            history=len(call.history),
            pages=list(ctx.pages) if ctx else [],
            index_chars=ctx.index_chars if ctx else 0,
        )
        return rec.exact_tokens
