"""The RSIAgent benchmark adapter: scaled target-role folding, inventory, question, storage."""

from sim.engine import Simulation
from sim.tokens import count_tokens
from sim.workload import WorkStep, make_workload
from systems.rsiagent.adapter import FROZEN_BANK, Adapter, scaled_target
from systems.rsiagent.model import ROLE_DEFAULTS, inventory_listing


def test_thresholds_scale_with_budget_and_pairs_do_not() -> None:
    """Character thresholds scale by budget/262,144; pair counts stay upstream's."""
    cfg = scaled_target(262_144)
    assert cfg == ROLE_DEFAULTS["target"]
    small = scaled_target(26_214)
    assert (small.ctx_high_water, small.ctx_low_water, small.keep_chars, small.worklog_max_chars) == (
        89_999,
        49_999,
        49_999,
        49_999,
    )
    assert (small.history_keep_pairs, small.fold_batch) == (80, 10)


def test_requests_carry_inventory_log_tail_and_question() -> None:
    """Each request: charter with the inventory, task (+ WORK LOG after folds), the tail, the question."""
    wl = make_workload(1, 60)
    sim = Simulation(1)
    ad = Adapter(sim, 8000, wl.drawn)
    reqs = [ad.step(s) for s in wl.steps]

    assert reqs[0].parts[1] == inventory_listing(FROZEN_BANK, "ale")
    assert "Current durable-memory inventory (3 files):" in reqs[0].parts[1]
    assert ad.loop.fold_count, "the scaled target role folds under an 8k budget"
    probe = next(i for i, s in enumerate(wl.steps) if s.probe)
    assert reqs[probe].parts[-1] == wl.steps[probe].question
    assert all(r.estimate is None and r.route == "rsiagent.target.step" for r in reqs)
    st = ad.storage()
    assert st.durable_bytes >= sum(len(s.observation) for s in wl.steps)
    assert st.bytes_written >= st.durable_bytes and st.ops > len(wl.steps)


def test_adapter_is_deterministic() -> None:
    """The same seed gives the same requests."""
    wl = make_workload(2, 40)

    def run() -> list[tuple[str, ...]]:
        ad = Adapter(Simulation(2), 6000, wl.drawn)
        return [ad.step(s).parts for s in wl.steps]

    assert run() == run()


def test_six_pair_floor_overflows_an_8k_window() -> None:
    """At 8,000 tokens the keep floor holds 6 pairs even when 6 observations exceed the window (faithful)."""
    ad = Adapter(Simulation(3), 8000, make_workload(3, 10).drawn)
    obs = "lorem ipsum dolor sit amet " * 290  # ~1,450 tokens, ~7,800 chars
    parts: tuple[str, ...] = ()
    for i in range(6):
        parts = ad.step(WorkStep(i, obs, (), None, "", "load")).parts
    assert ad.loop.keep() == 6 and ad.loop.covered == 0
    assert sum(count_tokens(p) for p in parts) > 8000


def test_knobs_set_the_loop_settings() -> None:
    """The declared knobs reach the loop: unscaled thresholds, another batch, another keep ceiling."""
    from systems.rsiagent.design import Knobs

    knobs = Knobs.model_validate({"scale": False, "fold_batch": 3, "history_keep_pairs": 12})
    ad = Adapter(Simulation(1), 8000, make_workload(1, 10).drawn, knobs=knobs)

    assert (ad.cfg.ctx_high_water, ad.cfg.keep_chars, ad.cfg.worklog_max_chars) == (900_000, 500_000, 500_000)
    assert (ad.cfg.fold_batch, ad.cfg.history_keep_pairs) == (3, 12)
    assert Adapter(Simulation(1), 8000, make_workload(1, 10).drawn).cfg == scaled_target(8000)


def test_bench_runs_the_fixed_variant_with_knobs() -> None:
    """``--designs rsiagent:fixed --knob rsiagent.fold_batch=5``: the adapter gets the variant and knobs,
    and the fixed design keeps a mid-message fact the faithful one folds away."""
    from sim.bench.tasks import build_adapter, parse_designs

    spec = parse_designs("rsiagent:fixed", ["rsiagent.fold_batch=5"])[0]
    wl = make_workload(1, 60)
    ad = build_adapter(spec, Simulation(1), 8000, wl)
    assert ad.cfg.fold_batch == 5 and ad.loop.variant.has("complete-fold-input")

    cfg_knobs = {
        "scale": False,
        "history_keep_pairs": 1,
        "keep_chars": 0,
        "ctx_high_water": 0,
        "fold_batch": 1,
    }
    from systems.rsiagent.design import Knobs
    from systems.rsiagent.state import SWITCHES

    body = "y" * 3000 + " FACT-0007=teal " + "y" * 3000
    kept = {}
    for name, variant in (("faithful", SWITCHES.variant()), ("fixed", SWITCHES.all_fixes())):
        a = Adapter(Simulation(1), 8000, wl.drawn, variant=variant, knobs=Knobs.model_validate(cfg_knobs))
        for i, obs in enumerate([body, "e1", "e2", "e3"]):
            req = a.step(WorkStep(i, obs, (), None, "", "load"))
        kept[name] = "FACT-0007" in " ".join(req.parts)
    assert kept == {"faithful": False, "fixed": True}


def test_folded_texts_are_let_go_and_requests_unchanged() -> None:
    """Issues 33 and 42: a long cell keeps only the unfolded messages (the folded ones, their prefix sums and
    all but the newest pair sizes go once the WORK LOG stands in for them), and its requests are those of a
    loop that keeps every message (``keep_folded=True``, upstream's whole history)."""
    wl = make_workload(1, 240)
    lean, whole = Adapter(Simulation(1), 8000, wl.drawn), Adapter(Simulation(1), 8000, wl.drawn)
    whole.loop.keep_folded = whole.loop.keep_fold_events = True
    for s in wl.steps:
        assert lean.step(s).parts == whole.step(s).parts
    loop = lean.loop
    assert loop.fold_count == whole.loop.fold_count >= 5 and not loop.folds[1:]
    assert loop.pairs == whole.loop.pairs and loop.covered == whole.loop.covered
    assert len(loop.history) == 2 * (loop.pairs - loop.covered) < len(whole.loop.history)
    assert loop.history == whole.loop.history[-len(loop.history) :]
    assert len(loop.pair_sizes) <= 2 * loop.cfg.history_keep_pairs + 64 < len(whole.loop.pair_sizes)
    assert loop.size() == whole.loop.size() and loop.keep() == whole.loop.keep()
    start = 2 * loop.covered
    sizes = [len(m.content) for m in whole.loop.history]
    assert [loop.message_chars(i) for i in range(start, len(sizes))] == sizes[start:]
    assert list(loop.fold_ends) == [ev.first_pair + ev.pairs for ev in whole.loop.folds]
