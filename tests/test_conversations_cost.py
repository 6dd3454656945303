"""``memsim bench --workload locomo:F --provider ...`` prices real conversations (issue 38, item 6) with the
fact-token benchmark's cache and price model (:mod:`sim.cache`): a request over the window is refused ($0,
counted apart), the price basis is printed beside the figures, ``--model`` picks a priced model."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

pytest.importorskip("sim.conversations.formats")

from test_cli import cli
from test_conversations_cli import locomo_file

from sim.cache import ProviderCache, ProviderConfig
from sim.conversations.baselines import FullPrefix
from sim.conversations.formats import iter_instances
from sim.tokens import count_tokens


def _read(path: Path) -> list[dict[str, str]]:
    with open(path) as fh:
        return list(csv.DictReader(fh))


def _synth(path: Path) -> Path:
    """A LoCoMo-shaped file long enough for a provider to cache (3 sessions x 20 turns, 20 questions)."""
    from sim.conversations.synth import write

    with open(path, "wb") as fh:
        write("locomo", fh, instances=1, sessions=3, turns=20, seed=0)
    return path


def _priced(
    capsys, tmp_path: Path, budgets: str, *extra: str, wl: Path | None = None
) -> tuple[str, Path, Path]:
    wl = wl or locomo_file(tmp_path / "locomo.json")
    out = tmp_path / "out"
    args = ["--designs", "rsiagent,tracecraft", "--budgets", budgets, "--no-plots", "--html", *extra]
    code, stdout, err = cli(capsys, "bench", "--workload", f"locomo:{wl}", "--out", str(out), *args)
    assert code == 0, err
    return stdout, out, wl


def test_every_question_is_priced_with_the_basis_beside_it(capsys, tmp_path):
    stdout, out, _wl = _priced(capsys, tmp_path, "500,16000", "--provider", "anthropic")
    rows = _read(out / "questions.csv")
    assert {"refused", "cache_read_tokens", "cache_write_tokens", "uncached_tokens", "cost_usd"} <= set(
        rows[0]
    )
    for r in rows:  # a request over the window is refused by the provider: $0, nothing cached or read
        assert r["refused"] == r["over_window"]
        if r["refused"] == "1":
            assert float(r["cost_usd"]) == 0 and r["cache_read_tokens"] == r["uncached_tokens"] == "0"
        else:
            split = int(r["cache_read_tokens"]) + int(r["cache_write_tokens"]) + int(r["uncached_tokens"])
            assert split == int(r["request_tokens"])
            want = (
                int(r["uncached_tokens"])
                + 0.1 * int(r["cache_read_tokens"])
                + 1.25 * int(r["cache_write_tokens"])
            )
            assert float(r["cost_usd"]) == pytest.approx(want * 5.0 / 1e6, abs=1e-8)
    assert any(r["refused"] == "1" for r in rows) and any(r["refused"] == "0" for r in rows)
    summary = _read(out / "cost_summary.csv")
    assert {s["design"] for s in summary} == {"rsiagent", "tracecraft", "oracle", "oracle-sessions", "full"}
    per_instance = _read(out / "cost.csv")
    for s in summary:
        qs = [r for r in rows if (r["design"], r["budget"]) == (s["design"], s["budget"])]
        assert float(s["cost_usd_per_question"]) == pytest.approx(
            sum(float(r["cost_usd"]) for r in qs) / len(qs), abs=1e-6
        )
        assert int(s["refused_questions"]) == sum(int(r["refused"]) for r in qs)
        inst = [c for c in per_instance if (c["design"], c["budget"]) == (s["design"], s["budget"])]
        # One priced request per question; an instance's figures are the sums over its questions.
        assert int(s["requests"]) == sum(int(c["requests"]) for c in inst) == len(qs)
        assert sum(float(c["cost_usd"]) for c in inst) == pytest.approx(sum(float(r["cost_usd"]) for r in qs))
    flat = " ".join(stdout.split())
    for fragment in ("claude-opus-4-8", "$5/M input tokens", "cache reads x0.1", "cache writes x1.25",
                     "TTL 300 s", "output tokens not priced", "refused by the provider: $0"):  # fmt: skip
        assert fragment in flat, fragment
    page = (out / "index.html").read_text()
    assert "What each design costs" in page and "cache writes x1.25" in page


def test_the_full_baseline_costs_what_the_fact_token_cache_model_charges(capsys, tmp_path):
    """Recomputed here with the fact-token benchmark's :class:`ProviderCache` on the ``full`` baseline's
    requests in question order: the same split and dollars, row by row."""
    wl = _synth(tmp_path / "synth.json")
    _stdout, out, wl = _priced(capsys, tmp_path, "16000", "--provider", "openai", "--price", "2", wl=wl)
    rows = [r for r in _read(out / "questions.csv") if r["design"] == "full"]
    assert sum(int(r["cache_read_tokens"]) for r in rows) > 0  # the prefix is long enough to be cached
    cache = ProviderCache(ProviderConfig.of("openai", price=2.0))
    inst = next(iter(iter_instances("locomo", wl)))
    full = FullPrefix(inst)
    for q, r in zip(inst.questions, rows, strict=True):
        parts, tokens = full.request(q)
        c = cache.charge(("full", "", "baseline"), parts, [count_tokens(p) for p in parts], None, 0.0)
        assert (c.read, c.write, c.uncached) == (int(r["cache_read_tokens"]), 0, int(r["uncached_tokens"]))
        assert float(r["cost_usd"]) == pytest.approx(c.cost_usd, abs=1e-12) and tokens == int(
            r["request_tokens"]
        )


def test_model_choice_changes_the_basis(capsys, tmp_path):
    stdout, out, _wl = _priced(
        capsys, tmp_path, "16000", "--provider", "anthropic", "--model", "claude-haiku-4-5"
    )
    assert "claude-haiku-4-5 at $1/M input tokens" in " ".join(stdout.split())
    assert {s["provider"] for s in _read(out / "cost_summary.csv")} == {"anthropic:claude-haiku-4-5"}
    meta = json.loads((out / "cost.csv.meta.json").read_text())
    assert meta["settings"]["provider"]["model"] == "claude-haiku-4-5"


def test_without_a_provider_nothing_changes(capsys, tmp_path):
    _stdout, out, _wl = _priced(capsys, tmp_path, "16000")
    assert "cost_usd" not in _read(out / "questions.csv")[0]
    assert not (out / "cost.csv").exists() and not (out / "cost_summary.csv").exists()
