"""Nemsy under the cross-design context-budget benchmark.

Host policy (what this adapter assumes a user of Nemsy does with the workload):

* every workload observation is saved as a raw source document ``origin-sources/obs-NNNN.md`` and
  ingested through the real CLI path (``nemsy ingest obs-NNNN.md``: hash status, ingest prompt with the
  newest ``ingest_pages`` pages plus the full index, parser, page, index line, log line, ledger record).
  The ingest responder copies the observation's fact tokens into ``---SUMMARY---`` and drops the drawn
  ``lossiness`` fraction of them (stream ``nemsy.adapter.summarizer``);
* each step then asks the model through the knob ``route`` (default the CLI query: the full
  ``index.md`` plus the 30 newest pages plus the step's text, the probe question when there is one,
  otherwise the observation as the user's message). That request, with upstream-sized prompts, is what
  :meth:`Adapter.step` returns; the ingest call of the same step is made (and costs a model call) but is
  not returned, since the benchmark counts one request per step;
* ``step_seconds`` of simulated time pass per step (page mtimes order the recency window); nothing is
  archived.

The installation's tree is a :class:`~sim.spill.SpillTree` (issue 33): sizes, mtimes, operations and
every request are those of the in-memory tree, but a long cell holds a few dozen bytes per file instead of
the file. Raw sources and Wiki pages are spilled: their bytes move to an unlinked temp file once
:data:`HOT_FILES` newer ones were written (an ingest reads its source in the same step; a request loads
at most the 30 newest pages, and the ingest the 10 newest). The files that only grow or are spliced at
their end (``ingest_log.json`` and its backup, ``token_log.json``, ``index.md``, ``log.md``) each live in
their own temp file: the model keeps what it reads of them in memory (the index blocks) but not the
token log's records (``hold_token_log``: each is appended to the file) nor the ledger's document
(``hold_ledger``: a record is read back from the file by key, where an index of keys and record lengths
points, and a new one is spliced in before the closing braces), and an append reads one byte of
``log.md``. The page-hash ground truth that only checkers read is not kept (``keep_page_hashes``).

The *variant* (``memsim bench --designs nemsy:fixed``) and the knobs
(:class:`~systems.nemsy.design.NemsyKnobs`) apply to both calls. Nemsy has no token budget: it counts
pages, not tokens, and the index is loaded in full outside the page count. ``budget`` (the provider
window) therefore changes nothing here; requests grow past the window when the index and the pages do,
and the benchmark reports those requests as over the window. The estimate is None: Nemsy makes no token
estimate of its own.

**Real conversations** (:mod:`sim.conversations`; turn steps carry ``turn_id``): a user of Nemsy saves
each chat session as a raw source document ``origin-sources/conv-NNNN.md`` (a line with the session id
and date, then one ``speaker: text`` block per turn, blank lines between) and ingests it through the
CLI when the session ends (at the next session's first turn, or before a question), with the
simulation clock at the session's date, so page mtimes order sessions as the dataset dates them. The
ingest stand-in :class:`~systems.nemsy.policies.VerbatimResponder` writes the page as the session's
turns verbatim, whole turns up to ``page_tokens`` (default 1,500) tokens. A turn step makes no query; a
question step makes the chosen route's request (the whole index, the 30 newest pages, the question)
and changes nothing. A lost evidence turn's reason (:meth:`Adapter.lost_reason`):
``clipped-from-page`` (its session's page ended before it), ``page-outside-recency-window`` (the page
holds it but is not among the pages loaded), ``never-ingested`` (no page was written).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, cast, overload

from sim.conversations.baselines import date_text
from sim.engine import Simulation
from sim.spill import SpillTree
from sim.variant import FAITHFUL, Variant
from sim.workload import Drawn, ModelRequest, RequestCount, StorageStats, WorkStep
from systems.nemsy.design import NemsyKnobs
from systems.nemsy.model import CHAT_PAGES, QUERY_PAGES, Nemsy, load_wiki_context
from systems.nemsy.model.constants import (
    INDEX_FILE,
    LEDGER_PATH,
    LOG_FILE,
    RAW_DIR,
    TOKEN_LOG_PATH,
    WIKI_DIR,
)
from systems.nemsy.model.prompts import ModelCall
from systems.nemsy.policies import TURN_SEPARATOR, IngestResponder, VerbatimResponder

#: Spilled files (raw sources and pages) kept in memory: the newest 64 steps' (one source, one page each).
HOT_FILES = 128
#: Files of the installation that only grow or are rewritten from a point to their end.
TAIL_FILES = frozenset(
    {LEDGER_PATH, LEDGER_PATH + ".bak", TOKEN_LOG_PATH, f"{WIKI_DIR}/{INDEX_FILE}", f"{WIKI_DIR}/{LOG_FILE}"}
)


def spilled(path: str) -> bool:
    """A raw source or a Wiki page (not ``index.md`` or ``log.md``, which are tail files)."""
    return path.startswith((RAW_DIR + "/", WIKI_DIR + "/")) and path not in TAIL_FILES


class _LazyParts(Sequence[str]):
    """A request's parts (:meth:`.prompts.ModelCall.parts`), spelt out when first read: a bench cell's
    :func:`sim.workload.drive` records the request from its counts and never reads them."""

    def __init__(self, call: ModelCall) -> None:
        self._call: ModelCall | None = call
        self._parts: tuple[str, ...] = ()

    def _spelt(self) -> tuple[str, ...]:
        if self._call is not None:
            self._parts, _ = self._call.parts()
            self._call = None
        return self._parts

    def __len__(self) -> int:
        return len(self._spelt())

    @overload
    def __getitem__(self, i: int) -> str: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[str]: ...
    def __getitem__(self, i: int | slice) -> str | Sequence[str]:
        return self._spelt()[i]

    def __iter__(self) -> Iterator[str]:
        return iter(self._spelt())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (_LazyParts, tuple)):
            return self._spelt() == tuple(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._spelt())

    def __repr__(self) -> str:
        return repr(self._spelt())


class Adapter:
    """Nemsy's ingest-then-ask mechanics applied to each workload step."""

    name = "nemsy"

    def __init__(
        self, sim: Simulation, budget: int, drawn: Drawn, *, variant: Variant = FAITHFUL, knobs: Any = None
    ) -> None:
        self.sim = sim
        self.variant = variant
        self.knobs: NemsyKnobs = knobs if knobs is not None else NemsyKnobs()
        self.budget = budget
        self.drawn = drawn
        self.responder = IngestResponder(rng=sim.rng("nemsy.adapter.summarizer"), lossiness=drawn.lossiness)
        k = self.knobs
        self.tree = SpillTree(
            sim.clock("nemsy").seconds, spill=spilled, tail=TAIL_FILES.__contains__, hot=HOT_FILES
        )
        self.nemsy = Nemsy(
            sim,
            tree=self.tree,
            agent="nemsy",
            variant=variant,
            context_chars=k.context_chars,
            responder=self.responder,
            record_requests=False,
            wiki_path=k.wiki_path,
            ingest_pages=k.ingest_pages,
        )
        self.nemsy.hold_token_log = False  # nothing here reads the token log back
        self.nemsy.hold_ledger = False  # the ledger's records are read back from its file by key
        self.nemsy.keep_page_hashes = False  # ground truth for checkers, and none runs here
        default = CHAT_PAGES if k.route == "web_chat" else QUERY_PAGES
        self.pages = k.pages if k.pages is not None else default
        self.source_bytes = 0
        # real conversations: the session being written, each turn's page (and whether the page holds
        # it whole), the pages the last question loaded
        self._session: list[tuple[str, str]] = []
        self._session_head = ""
        self._sources = 0
        self._page_of: dict[str, tuple[str | None, bool]] = {}
        self._loaded: set[str] = set()

    def step(self, step: WorkStep) -> ModelRequest:
        """Ingest the observation as a source document, then assemble the chosen route's request (a
        conversation's turn and question steps: see the module docstring)."""
        n = self.nemsy
        if step.turn_id is not None:
            if step.new_session:
                self._ingest_session()
                when = "" if step.time_s is None else f" ({date_text(step.time_s)})"
                self._session_head = f"# Chat session {step.session_id}{when}"
            self._session.append((step.turn_id, f"{step.speaker}: {step.observation}"))
            self.sim.env.run(until=self.sim.now + self.knobs.step_seconds)
            return ModelRequest((self._session_head or "(chat)",), None, "nemsy.write")
        if step.question_id is not None:
            self._ingest_session()
            return self._ask(step.question)
        rel = f"obs-{step.index:04d}.md"
        n.write_source(rel, step.observation)
        self.source_bytes += len(step.observation.encode("utf-8"))
        n.cli_ingest(rel)
        req = self._ask(step.question if step.probe else step.observation, counted=True)
        self.sim.env.run(until=self.sim.now + self.knobs.step_seconds)
        return req

    def _ask(self, text: str, *, counted: bool = False) -> ModelRequest:
        """The chosen route's request for *text* (the whole index, the newest pages, the text). *counted*:
        with its counts (:meth:`.prompts.ModelCall.counted`: the index's leading blocks from their tally),
        its parts spelt out only when read (issue 42: a long cell's every step re-read every index block)."""
        n = self.nemsy
        route = self.knobs.route
        ctx = load_wiki_context(n, self.pages, query=text, route=f"wiki.{route}")
        self._loaded = {rel for rel, _ in ctx.page_sections}
        if route == "web_query":
            call = n.web_query_call(text, ctx)
        elif route == "web_chat":
            call = n.chat_call(ctx, (), text, web=True)
        else:
            call = n.query_call(text, ctx, reasoning=route == "reasoning")
        if counted:
            c = call.counted()
            parts = cast("tuple[str, ...]", _LazyParts(call))
            count = RequestCount(c.tokens, c.facts, c.parts)
            return ModelRequest(parts=parts, estimate=None, route=call.route, counted=count)
        parts, _ = call.parts()
        return ModelRequest(parts=parts, estimate=None, route=call.route)

    def _ingest_session(self) -> None:
        """Save the session written so far as a source document and ingest it (nothing when empty)."""
        if not self._session:
            return
        blocks = [self._session_head] if self._session_head else []
        offsets = []  # where each turn's block ends in the source text
        end = len(self._session_head) if self._session_head else -len(TURN_SEPARATOR)
        for tid, block in self._session:
            blocks.append(block)
            end += len(TURN_SEPARATOR) + len(block)
            offsets.append((tid, end))
        text = TURN_SEPARATOR.join(blocks)
        rel = f"conv-{self._sources:04d}.md"
        self._sources += 1
        self.nemsy.write_source(rel, text)
        self.source_bytes += len(text.encode("utf-8"))
        verbatim = self.nemsy.responder if isinstance(self.nemsy.responder, VerbatimResponder) else None
        if verbatim is None:
            verbatim = VerbatimResponder(self.knobs.page_tokens)
            self.nemsy.responder = verbatim
        verbatim.kept_chars = 0
        outcomes = self.nemsy.cli_ingest(rel)
        page = next((o.page for o in outcomes if o.page), None)
        for tid, end in offsets:
            self._page_of[tid] = (page, end <= verbatim.kept_chars)
        self._session, self._session_head = [], ""

    def lost_reason(self, turn_id: str) -> str:
        """Why conversation turn *turn_id* is not in the last question's request (its page's fate)."""
        page, whole = self._page_of.get(turn_id, (None, False))
        if page is None:
            return "never-ingested"
        if not whole:
            return "clipped-from-page"
        if page not in self._loaded:
            return "page-outside-recency-window"
        return "not-in-request"

    def storage(self) -> StorageStats:
        """The vault, Wiki, ledger and token log: bytes stored, bytes written, file operations."""
        tree = self.tree
        return StorageStats(
            durable_bytes=tree.total_bytes(),
            bytes_written=self.nemsy.bytes_written + self.source_bytes,
            ops=tree.ops,
        )
