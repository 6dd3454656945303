"""The Nemsy benchmark adapter: the real ingest path per observation, the query route per step."""

from sim.engine import Simulation
from sim.text import extract_facts
from sim.workload import make_workload
from systems.nemsy.adapter import Adapter
from systems.nemsy.model import QUERY_PAGES


def test_adapter_ingests_each_observation_and_returns_query_requests() -> None:
    """Each step writes a source, ingests it (ledger done, page written) and returns a wiki.query request."""
    wl = make_workload(5, 30)
    sim = Simulation(5)
    adapter = Adapter(sim, 8000, wl.drawn)

    reqs = [adapter.step(s) for s in wl.steps]

    n = adapter.nemsy
    assert n.calls["ingest"] == len(wl.steps)
    assert all(r.route == "wiki.query" and r.estimate is None for r in reqs)
    assert len([p for p in n.list_wiki_notes() if p.startswith("sources/")]) == len(wl.steps)
    user = "".join(reqs[-1].parts[1:])
    assert "=== index.md ===" in user
    assert user.count("\n=== sources/") == QUERY_PAGES
    assert sim.trace.data.requests == []  # the harness records the returned request


def test_adapter_probe_question_in_request_and_storage() -> None:
    """A probe's question is the request's question; storage reports bytes and operations."""
    wl = make_workload(2, 40)
    adapter = Adapter(Simulation(2), 8000, wl.drawn)
    probe_reqs = [(s, adapter.step(s)) for s in wl.steps]

    for step, req in probe_reqs:
        if step.probe:
            assert step.question in "".join(req.parts)
    stats = adapter.storage()
    assert 0 < stats.durable_bytes <= stats.bytes_written and stats.ops > 0


def test_lossless_summarizer_keeps_facts_in_pages() -> None:
    """With lossiness 0 every observation's facts reach its source page."""
    wl = make_workload(3, 20)
    drawn = wl.drawn.__class__(**{**wl.drawn.__dict__, "lossiness": 0.0})
    adapter = Adapter(Simulation(3), 8000, drawn)
    for s in wl.steps:
        adapter.step(s)

    pages = "".join(adapter.nemsy.read_wiki_note(p) or "" for p in adapter.nemsy.list_wiki_notes())
    assert {f.split("=")[0] for s in wl.steps for f in s.facts} <= extract_facts(pages)


def test_not_modeled_lines_appear_in_docstrings() -> None:
    """Every NOT_MODELED line of fidelity.py is a "Not modeled:" line of some model docstring."""
    import importlib
    import inspect
    import pkgutil

    from systems.nemsy import fidelity, model

    source = "".join(
        inspect.getsource(importlib.import_module(f"{model.__name__}.{m.name}"))
        for m in pkgutil.iter_modules(model.__path__)
    )

    assert [line for line in fidelity.NOT_MODELED if f"Not modeled: {line}" not in source] == []


def test_every_operation_docstring_cites_its_records() -> None:
    """Each operation listed in fidelity.OPERATIONS has a docstring citing every record ID it lists."""
    from systems.nemsy import fidelity, model

    def doc(name: str) -> str:
        owner, _, attr = name.rpartition(".")
        obj = getattr(getattr(model, owner), attr) if owner else getattr(model.Nemsy, name, None)
        return (obj or getattr(model, name)).__doc__ or ""

    missing = [
        (name, record)
        for op in fidelity.OPERATIONS
        for name in (part.strip() for part in op.name.split("/"))
        for record in op.records
        if record not in doc(name)
    ]

    assert missing == []


def test_adapter_honours_variant_and_knobs() -> None:
    """The variant reaches the model (relevance-selection finds the probed page), and the knobs choose the
    route, its page window and the Wiki path the system prompt names."""
    from sim.tokens import count_tokens
    from systems.nemsy.design import DESIGN
    from systems.nemsy.state import FIX_RELEVANCE

    wl = make_workload(4, 40)
    plain = Adapter(Simulation(4), 8000, wl.drawn)
    fixed = Adapter(Simulation(4), 8000, wl.drawn, variant=DESIGN.switches.fixed(FIX_RELEVANCE))
    assert fixed.nemsy.variant.has(FIX_RELEVANCE) and not plain.nemsy.variant.has(FIX_RELEVANCE)

    knobs = DESIGN.parse_knobs(
        {"route": "web_chat", "pages": 3, "wiki_path": "/Users/me/Documents/Obsidian/x"}
    )
    chat = Adapter(Simulation(4), 8000, wl.drawn, knobs=knobs)
    reqs = [chat.step(s) for s in wl.steps[:8]]
    assert {r.route for r in reqs} == {"wiki.web_chat"}
    assert "".join(reqs[-1].parts).count("\n=== sources/") <= 3
    assert any("Wiki 目录：/Users/me/Documents/Obsidian/x" in p for p in reqs[-1].parts)
    default = Adapter(Simulation(4), 8000, wl.drawn)
    first = default.step(wl.steps[0])
    assert first.route == "wiki.query" and count_tokens(first.parts[0]) == 680


def test_long_cell_holds_only_the_hot_files_bytes(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Issue 33: the bench vault holds in memory only the bodies of its newest HOT_FILES sources and pages
    (the rest, and the ledger, token log, index and log, live in temp files) and neither the token log's
    records nor the ledger's document, and its requests, storage, token log and ledger are those of the
    all-in-memory tree."""
    import systems.nemsy.adapter as mod
    from sim.files import MemoryTree

    wl = make_workload(3, 160)
    lean = Adapter(Simulation(3), 8000, wl.drawn)
    reqs = [lean.step(s).parts for s in wl.steps]
    held = [p for p, body in lean.tree._files.items() if body]  # the bodies still in memory
    assert len(held) <= mod.HOT_FILES < 2 * len(wl.steps)
    assert not set(held) & mod.TAIL_FILES
    monkeypatch.setattr(mod, "SpillTree", lambda clock, **_: MemoryTree(clock))
    whole = Adapter(Simulation(3), 8000, wl.drawn)
    assert type(whole.nemsy.tree) is MemoryTree
    assert [whole.step(s).parts for s in wl.steps] == reqs
    assert lean.storage() == whole.storage()
    assert lean.nemsy._tokens_cache is None  # the token log's records are read back from its file
    assert lean.nemsy._ledger_cache is None  # and so are the ledger's, by key
    assert lean.nemsy.load_ingest_log() == whole.nemsy.load_ingest_log()
    assert not lean.nemsy.page_source_hash  # ground truth only checkers read
    assert lean.nemsy.load_token_log() == whole.nemsy.load_token_log()
    assert lean.nemsy.summarize_token_log()["total_calls"] == len(wl.steps)  # one ingest a step
