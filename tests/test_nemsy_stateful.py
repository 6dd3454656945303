"""A rule-based state machine holding the Nemsy model next to a deliberately trivial reference: a dict of
pages with their write times, an append-only list of index stems, and a dict of ledger hashes.

Rules are named after Nemsy's operations (``ingest``, ``query_archive``, ``delete_wiki_note``, a new
day), so a shrunk failure reads like a session. Invariants compare the Wiki, the index, the ledger and the
loader's window with the reference after every step.
"""

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from sim.engine import Simulation
from systems.nemsy import Nemsy, content_hash, parse_ingest_response, sanitize_title
from systems.nemsy.model import INDEX_FILE, LOG_FILE, RAW_DIR, index_stems, load_wiki_context, path_key
from systems.nemsy.policies import FactAnswerer, IngestResponder

SOURCES = ("alpha.md", "beta.md", "d1/notes.md", "d2/notes.md")
WINDOW = 3


class NemsyWiki(RuleBasedStateMachine):
    """Nemsy's Wiki against a dict-and-list reference."""

    pages_bundle = Bundle("pages")

    def __init__(self) -> None:
        super().__init__()
        self.sim = Simulation(0)
        self.responder = IngestResponder()
        self.n = Nemsy(self.sim, responder=self.responder, answerer=FactAnswerer())
        self.ref_pages: dict[str, float] = {}
        self.ref_bodies: dict[str, str] = {}
        self.ref_index: list[str] = []
        self.ref_ledger: dict[str, str] = {}

    def _tick(self, seconds: float = 1.0) -> None:
        self.sim.env.run(until=self.sim.now + seconds)

    @rule(
        target=pages_bundle,
        source=st.sampled_from(SOURCES),
        version=st.integers(0, 2),
        fault=st.sampled_from(["none", "none", "missing-marker", "embedded-questions"]),
    )
    def ingest(self, source: str, version: int, fault: str) -> str:
        text = f"Source {source} version {version}: FACT-{version + 1:04d}=amber"
        self.n.write_source(source, text)
        self.responder.fault = fault
        self.n.cli_ingest(source)
        path = f"{RAW_DIR}/{source}"
        stem = source.rsplit("/", 1)[-1].rsplit(".", 1)[0]
        page = f"sources/{sanitize_title(stem)}-{self.n.today()}.md"
        if self.ref_ledger.get(path) != content_hash(text):
            body = parse_ingest_response(self.responder(stem, text, ""))
            if body is not None:
                self.ref_pages[page] = self.n.clock.seconds()
                self.ref_bodies[page] = body
                self.ref_index.append(page.rsplit("/", 1)[-1][:-3])
            self.ref_ledger[path] = content_hash(text)
        self._tick()
        return page

    @rule(target=pages_bundle, k=st.integers(0, 2))
    def query_archive(self, k: int) -> str:
        q = f"What is FACT-{k + 1:04d}?"
        self.n.query(q, archive=True, max_files=WINDOW)
        page = f"queries/{sanitize_title(q[:40])}-{self.n.today()}.md"
        self.ref_pages[page] = self.n.clock.seconds()
        self.ref_bodies.pop(page, None)
        self.ref_index.append(page.rsplit("/", 1)[-1][:-3])
        self._tick()
        return page

    @precondition(lambda self: bool(self.ref_pages))
    @rule(page=pages_bundle)
    def delete_wiki_note(self, page: str) -> None:
        existed = page in self.ref_pages
        assert self.n.delete_wiki_note(page, confirmed=True) is existed
        self.ref_pages.pop(page, None)
        self.ref_bodies.pop(page, None)
        self._tick()

    @rule()
    def next_day(self) -> None:
        self._tick(86_400)

    @invariant()
    def wiki_pages_match(self) -> None:
        notes = {p for p in self.n.list_wiki_notes() if p not in (INDEX_FILE, LOG_FILE)}
        assert notes == set(self.ref_pages)
        for page, body in self.ref_bodies.items():
            assert self.n.read_wiki_note(page) == body

    @invariant()
    def index_is_append_only(self) -> None:
        assert index_stems(self.n.read_wiki_note(INDEX_FILE) or "") == self.ref_index

    @invariant()
    def ledger_hashes_match(self) -> None:
        files = self.n.load_ingest_log()["files"]
        assert {k.lstrip("/"): v["hash"] for k, v in files.items()} == self.ref_ledger

    @invariant()
    def loader_window_is_newest_first(self) -> None:
        expected = sorted(self.ref_pages, key=lambda p: (-self.ref_pages[p], path_key(p)))[:WINDOW]
        assert list(load_wiki_context(self.n, WINDOW).pages) == expected


def test_nemsy_wiki_machine() -> None:
    """Random sessions of ingest / archive / delete / new day agree with the reference at every step."""
    run_state_machine_as_test(
        NemsyWiki, settings=settings(max_examples=40, stateful_step_count=12, deadline=None)
    )
