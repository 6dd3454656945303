"""The state every part of one Nemsy installation shares: the simulation, its tree and clock, the switches,
the stand-ins for the model, and the recording of model calls.

Model requests: every model call (ingest, query, chat, lint, save; CLI and web) is recorded with
``sim.trace.request`` rather than ``sim.request``, for speed only. The record is field for field what
``sim.request`` would record for the same parts: ``exact_tokens`` = the sum of each part's exact cl100k
count, ``facts`` = the fact ids present in any part, ``messages`` = the number of parts, ``estimate`` None
(Nemsy has no estimator) and nothing ``needed``, plus Nemsy's own detail (command, pages, index size). The
one difference is how the count is computed: the index inside a prompt is counted entry by entry (see
:meth:`Base.exact_tokens`), which is exact because each entry starts and ends on a cl100k pre-tokenizer
chunk boundary, and avoids re-encoding an index that grows with every write.
``tests/test_nemsy_requests.py`` checks every route's records against ``sim.request`` itself.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from sim.engine import Simulation
from sim.files import FileTree
from sim.text import FACT_RE
from sim.tokens import count_tokens
from sim.variant import FAITHFUL, Variant
from systems.nemsy.model.constants import CONTEXT_CHARS, INDEX_FILE, INDEX_HEAD, SYSTEM, WIKI_DIR
from systems.nemsy.state import Message, WikiContext

if TYPE_CHECKING:
    from systems.nemsy.model.ledger import JsonPieces
    from systems.nemsy.model.vault import MtimeIndex

Responder = Callable[[str, str, str], str]  # (title, source content, wiki context text) -> response
Answerer = Callable[[str, WikiContext, Sequence[Message]], str]  # (question, context, history) -> answer
Rewriter = Callable[[str, str | None], str]  # (transcript, topic) -> insight markdown


def _default_responder(title: str, content: str, context: str) -> str:
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
    ``sim.request`` does (the benchmark adapter turns it off and returns its own).
    """

    pages: MtimeIndex
    _ledger_json: JsonPieces
    _token_json: JsonPieces

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
        max_turns: int = 0,
        record_requests: bool = True,
    ) -> None:
        from systems.nemsy.model.ledger import JsonPieces
        from systems.nemsy.model.vault import MtimeIndex

        self.sim = sim
        self.agent = agent
        self.clock = sim.clock(agent)
        self.tree = tree if tree is not None else sim.tree("memory", agent=agent)
        self.variant = variant
        self.context_chars = context_chars
        self.responder: Responder = responder or _default_responder
        self.answerer: Answerer = answerer or _default_answerer
        self.rewriter: Rewriter = rewriter or _default_rewriter
        self.max_turns = max_turns
        self.record_requests = record_requests
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
        self._ledger_json = JsonPieces()
        self._entries: list[str] = []  # index entries appended since the index was created (for counting)
        self._entries_joined = ""
        self._token_json = JsonPieces()
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
    def _request(self, command: str, route: str, parts: Sequence[str], ctx: WikiContext | None) -> int:
        """Record one model request through ``sim.trace.request`` with the fields ``sim.request`` would
        record for *parts* (exact cl100k tokens via :meth:`exact_tokens`, the fact ids present, the part
        count, no estimate) and return its prompt tokens. Not ``sim.request`` itself only because its
        whole-part counting re-encodes the growing index on every call."""
        self.calls[command] += 1
        if not self.record_requests:
            return 0
        facts: set[str] = set()
        for p in parts:  # not the cached extract_facts: prompts are large and mostly seen once
            facts.update(f"FACT-{num}" for num, _ in FACT_RE.findall(p))
        index_text = dict(ctx.sections).get(INDEX_FILE) if ctx else None
        rec = self.sim.trace.request(
            SYSTEM,
            route,
            agent=self.agent,
            exact_tokens=self.exact_tokens(parts, index_text),
            estimate=None,
            messages=len(parts),
            facts=frozenset(facts),
            command=command,
            pages=list(ctx.pages) if ctx else [],
            index_chars=ctx.index_chars if ctx else 0,
        )
        return rec.exact_tokens

    def exact_tokens(self, parts: Sequence[str], index_text: str | None = None) -> int:
        """The exact cl100k count of *parts* (as ``sim.request`` counts them: the sum over parts).

        The index is counted entry by entry. Every entry starts with ``- [[`` after a newline and ends with
        ``）\n``; cl100k's pre-tokenizer ends a chunk at ``）\n`` (a punctuation run takes its trailing
        newlines but not the ``-`` that follows) and at the ``\n\n`` closing ``INDEX_HEAD``, and BPE never
        merges across chunks. So a part's count equals the count of the part with the entries before the
        last one removed, plus each removed entry's (cached) count; the last entry stays in place because
        what follows the index can join its trailing newline. A request then costs O(entries) cache hits
        instead of re-encoding the whole index. Falls back to a plain count whenever the index is not
        exactly ``INDEX_HEAD`` + the entries this model appended (an upsert, a rescan, a clipped index).
        """
        entries = self._entries
        if index_text is None or len(entries) < 3 or index_text != INDEX_HEAD + self._entries_joined:
            return sum(count_tokens(p) for p in parts)
        reduced_index = INDEX_HEAD + entries[-1]
        total = 0
        for p in parts:
            if index_text in p:
                total += count_tokens(p.replace(index_text, reduced_index, 1))
                total += sum(count_tokens(e) for e in entries[:-1])
            else:
                total += count_tokens(p)
        return total
