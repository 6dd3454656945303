"""RSIAgent's claims are declared four ways (issue 12): fixes or a counterfactual, an off switch, an
example type; each property rejects its off switch on a pinned minimal example, and the example types
accept every strategy example and refuse out-of-bound ones (``memsim replay`` trusts nothing)."""

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter, ValidationError

from sim.claims import registry
from sim.variant import Variant

CLAIMS = registry("rsiagent")
IDS = sorted(CLAIMS)


def test_every_claim_declares_its_switches_and_example_type() -> None:
    """Fixes (or a counterfactual), an off switch and an example type everywhere; three counterfactual
    claims; the one intended behaviour says so."""
    for c in CLAIMS.values():
        assert (c.fixes or c.counterfactuals) and c.off and c.example_type is not None, c.id
    assert sorted(c.id for c in CLAIMS.values() if c.counterfactual) == [
        "rsiagent.failed-pull-looks-empty",
        "rsiagent.journal-episode-overwrite",
        "rsiagent.wave-lost-update-counterfactual",
    ]
    assert [c.id for c in CLAIMS.values() if c.intent] == ["rsiagent.work-lesson-lost"]


@pytest.mark.parametrize("cid", IDS)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_strategy_examples_fit_the_example_type(cid: str, data: Any) -> None:
    """Every example the strategy draws, saved as JSON, validates against the claim's example type."""
    c = CLAIMS[cid]
    ex = data.draw(c.strategy())
    raw = json.loads(json.dumps(c.encode(ex)))

    TypeAdapter(c.example_type).validate_python(raw, strict=False)


def _inflate(x: Any) -> Any:
    """The example with every int made huge and every list made long (a saved file must not make a
    replay run forever)."""
    if isinstance(x, bool):
        return x
    if isinstance(x, int):
        return 10**9
    if isinstance(x, list):
        return [_inflate(v) for v in x] * 50 if x else [0] * 50
    if isinstance(x, dict):
        return {k: _inflate(v) for k, v in x.items()}
    return x


@pytest.mark.parametrize("name", sorted(IDS))
def test_example_types_refuse_out_of_bound_values(name: str) -> None:
    """The pinned example validates; with every number 10**9 and every list 50 times longer, it is
    refused."""
    c = CLAIMS[name]
    ex = PINNED[name.removeprefix("rsiagent.")]
    adapter = TypeAdapter(c.example_type)

    adapter.validate_python(ex, strict=False)
    with pytest.raises(ValidationError):
        adapter.validate_python(_inflate(ex), strict=False)


#: A minimal example per property family on which the off switch must be rejected and the fix must hold.
PINNED = {
    "work-lesson-lost": {"lessons": [], "recall": False, "add": [["a.md", 10]], "delete": []},
    "journal-episode-overwrite": {"cycles": [[{"a.md": 1}]]},
    "journal-ahead-of-install": {"commits": [{"a.md": 1}], "fail": None},
    "wave-lost-update-counterfactual": {
        "initial": [],
        "branches": [{"a.md": "keep", "b.md": "keep"}, {"a.md": "keep", "b.md": "add"}],
    },
    "wave-stale-rewrite": {
        "initial": ["a.md"],
        "branches": [{"a.md": "keep", "b.md": "keep"}, {"a.md": "keep", "b.md": "add"}],
    },
    "fold-mid-message-loss": {"envs": [[300, [0]], [300, []], [300, []]], "batch": 1},
    "digest-fallback-wipes-log": {"log_facts": 0, "envs": [20, 20, 20], "cap": 200},
    "fold-resets-cache": {"steps": 2, "facts": 1, "chars": 200, "keep": 1, "batch": 1, "state": False},
    "fold-guard-stuck": {"pairs": 30, "pair_chars": 200, "high": 4000, "batch": 2, "keep_chars": 1500},
    "resume-truncates-log": {"facts": 1, "cap": 120, "pivot": False},
    "pivot-review-blind": {"messages": [1], "worklog": False},
    "write-memory-bypass": {"files": [["a.md", "fact"]], "crash": None},
    "write-memory-escapes-bank": {"names": ["a.md"]},
    "stale-curriculum-notes": {"turns": ["write"]},
    "install-window-empty": {"old": [], "new": ["a.md"], "crash": None},
    "partial-wave-commit": {"leaks": [False]},
    "osworld-misreport": {"files": ["a.md"], "fail": None},
    "diagnosis-edits-promoted": {"add": ["a.md"], "edits": []},
    "failed-pull-looks-empty": {"guest": ["a.md"], "failures": 0},
}


@pytest.mark.parametrize("name", sorted(PINNED))
def test_off_switch_is_rejected_and_the_fix_holds_on_a_pinned_example(name: str) -> None:
    """The degenerate design (the claim's off switch) fails the property where the fix holds."""
    c = CLAIMS[f"rsiagent.{name}"]
    ex = c.decode(PINNED[name])

    assert c.run(ex, "fixed").holds
    off = c.run(ex, "off")
    assert not off.holds and not off.raised, off.detail
    assert c.run(ex, Variant(fixes=frozenset(c.fixes))).holds


def test_fold_resets_cache_shrunk_counterexample() -> None:
    """The shrunk counterexample: a current-state value merged into its WORK LOG entry at every fold leaves
    the cache nothing past the system prompt; the append-only log keeps the old entries cached."""
    c = CLAIMS["rsiagent.fold-resets-cache"]
    ex = {"steps": 12, "facts": 16, "chars": 200, "keep": 1, "batch": 1, "state": True}

    faithful = c.run(ex, "faithful")
    assert not faithful.holds and "the cache served 0 tokens" in faithful.detail, faithful.detail
    assert c.run(ex, "fixed").holds
    assert c.run({**ex, "state": False}, "faithful").holds  # an append-only summary already keeps its prefix
