"""The provider cache model (``sim.cache``): each provider's rules on small hand-built streams, the
three-way split on every request of real benchmark cells, ``--provider none`` leaving rows and traces as
they were, and the options' bad input (one line, exit 2, nothing written)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_cli import assert_usage_error, cli

from sim.bench.tasks import build_adapter, run_task, tasks_for, workload_of
from sim.cache import ProviderConfig, parse_provider
from sim.cache import anthropic as anth
from sim.cache import openai as oai
from sim.engine import Simulation
from sim.tokens import count_tokens
from sim.trace import read_trace
from sim.workload import drive

#: A part of exactly 600 cl100k tokens (" a" is one token), and distinct 100-token messages.
BIG = " a" * 600


def msg(i: int, n: int = 100) -> str:
    return f" m{i}" + " b" * (n - count_tokens(f" m{i}"))


def charges(provider: str, requests: list[tuple[float, list[str], list[int]]], **kw: int) -> list[dict]:
    """Record *requests* (time, parts, breakpoints) on one stream; their ``cache`` details."""
    sim = Simulation(0, provider=parse_provider(provider, **{k: str(v) for k, v in kw.items()}))
    out = []
    for t, parts, bps in requests:
        if t > sim.now:
            sim.run(until=t)
        rec = sim.request("toy", "r", parts, breakpoints=bps)
        out.append(json.loads(rec.detail)["cache"])
    return out


def test_anthropic_reads_the_marked_prefix_and_writes_the_new_tail() -> None:
    """A breakpoint on the last part: the first request writes all of it (1.25x), the next reads it (0.1x)
    and writes only what was appended."""
    p1 = [BIG, BIG, msg(1)]
    p2 = [*p1, msg(2)]
    a, b = charges("anthropic", [(0, p1, [2]), (10, p2, [3])])
    assert a == {"cache_read_tokens": 0, "cache_write_tokens": 1300, "uncached_tokens": 0,
                 "cost_tokens": 1625.0, "cost_usd": 0.008125}  # fmt: skip
    assert (b["cache_read_tokens"], b["cache_write_tokens"], b["uncached_tokens"]) == (1300, 100, 0)
    assert b["cost_tokens"] == 1300 * 0.1 + 100 * 1.25


def test_anthropic_minimum_ttl_refresh_and_no_breakpoint() -> None:
    """Below the 1,024-token minimum nothing is cached; an entry dies 300 s after its last use, and a hit
    refreshes it; a request without breakpoints is all uncached."""
    small = [msg(1), msg(2)]
    assert charges("anthropic", [(0, small, [1]), (1, small, [1])])[1]["cache_read_tokens"] == 0
    p = [BIG, BIG]
    c = charges("anthropic", [(0, p, [1]), (299, p, [1]), (598, p, [1]), (899, p, [1])])
    assert [x["cache_read_tokens"] for x in c] == [0, 1200, 1200, 0]  # 598 refreshed to 898; 899 missed
    assert charges("anthropic", [(0, p, []), (1, p, [])])[1]["uncached_tokens"] == 1200
    assert charges("anthropic", [(0, p, [1]), (1000, p, [1])], ttl=3600)[1]["cache_read_tokens"] == 1200


def test_anthropic_lookback_is_twenty_blocks() -> None:
    """A breakpoint finds an entry up to 20 parts before it, not 21."""
    head = [BIG, BIG]
    for gap, hit in ((20, 1200), (21, 0)):
        grown = head + [msg(i, 10) for i in range(gap)]
        c = charges("anthropic", [(0, head, [1]), (1, grown, [len(grown) - 1])])
        assert c[1]["cache_read_tokens"] == hit, gap


def test_anthropic_refuses_a_fifth_breakpoint() -> None:
    with pytest.raises(ValueError, match="allows 4"):
        anth.check_breakpoints([0, 1, 2, 3, 4], 5)


def test_openai_minimum_increments_and_retention() -> None:
    """Automatic: nothing under 1,024 tokens; hits rounded down to 1,024 + 128k; an idle prefix is gone
    after 300 s, and any prefix an hour after it was first cached."""
    p1 = [BIG, BIG, msg(1)]  # 1,300 tokens
    c = charges("openai", [(0, p1, []), (1, [*p1, msg(2)], [])])
    assert c[1]["cache_read_tokens"] == 1280 and c[1]["cache_write_tokens"] == 0
    assert charges("openai", [(0, [BIG], []), (1, [BIG], [])])[1]["cache_read_tokens"] == 0
    assert charges("openai", [(0, p1, []), (301, p1, [])])[1]["cache_read_tokens"] == 0
    steady: list[tuple[float, list[str], list[int]]] = [(float(t), p1, []) for t in range(0, 3700, 200)]
    reads = [x["cache_read_tokens"] for x in charges("openai", steady)]
    assert reads[1:18] == [1280] * 17 and reads[18] == 0  # t=3600: the hour since t=0 is up


def test_openai_matches_a_part_that_grew() -> None:
    """A part whose text starts with what the same position held before (a document appended to, with or
    without the blank line that closed it) matches up to the old text's end; a part changed in the middle
    does not."""
    head = [BIG]
    doc = " e" * 500 + "\n"
    grown = [*head, doc + " f" * 200 + "\n", msg(9)]
    closed = [*head, doc + "\n\n", msg(8)]
    base = count_tokens(BIG) + count_tokens(doc)  # 1,101
    assert charges("openai", [(0, [*head, doc, msg(8)], []), (1, grown, [])])[1]["cache_read_tokens"] == 1024
    assert base == 1101
    c = charges("openai", [(0, closed, []), (1, grown, [])])
    assert c[1]["cache_read_tokens"] == 1024  # 1,100 matched (the closing blank line is one token) -> 1,024
    changed = [*head, " g" + doc[2:], msg(9)]
    assert charges("openai", [(0, [*head, doc, msg(8)], []), (1, changed, [])])[1]["cache_read_tokens"] == 0


parts_st = st.lists(st.integers(0, 5), min_size=1, max_size=12)
request_st = st.tuples(st.integers(0, 400), parts_st, st.lists(st.integers(0, 11), max_size=4))


@given(st.lists(request_st, max_size=8), st.sampled_from(["anthropic", "openai"]))
def test_three_columns_sum_to_the_exact_tokens(reqs: list, provider: str) -> None:
    """Whatever the stream, every request's read + write + uncached is its exact token count, and the
    cost in token equivalents is their priced sum."""
    texts = [BIG, msg(1), msg(2, 300), msg(3, 700), " c" * 50, BIG + " d"]
    sim = Simulation(0, provider=parse_provider(provider))
    cfg = sim.cache.config if sim.cache else None
    assert cfg is not None
    t = 0
    for dt, idx, bps in reqs:
        if dt:
            t += dt
            sim.run(until=t)
        parts = [texts[i] for i in idx]
        rec = sim.request("toy", "r", parts, breakpoints=[b for b in bps if b < len(parts)])
        c = json.loads(rec.detail)["cache"]
        assert c["cache_read_tokens"] + c["cache_write_tokens"] + c["uncached_tokens"] == rec.exact_tokens
        priced = (
            c["uncached_tokens"]
            + c["cache_read_tokens"] * 0.1
            + c["cache_write_tokens"] * cfg.write_multiplier
        )
        assert c["cost_tokens"] == pytest.approx(priced)


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_every_bench_request_splits_exactly(provider: str, tmp_path: Path) -> None:
    """On real cells of every design the three columns sum to the exact tokens of every request, the
    row's sums match its series, and the hit ratio is read / prompt."""
    cfg = parse_provider(provider)
    tasks = tasks_for(["merchantbench", "nemsy", "rsiagent", "tracecraft"], [6000], 1, 30, provider=cfg)
    for task in tasks:
        row = run_task(task)
        assert all(s[3] + s[4] + s[5] == s[1] for s in row["series"]), task.design
        prompt = sum(s[1] for s in row["series"])
        assert row["cache_read_tokens"] == sum(s[3] for s in row["series"])
        assert row["cache_hit_ratio"] == round(row["cache_read_tokens"] / prompt, 4)
        assert row["provider"].startswith(provider)


def test_provider_none_leaves_rows_and_traces_as_they_were(tmp_path: Path) -> None:
    """``--provider none``: no cache key in a row, no ``cache`` in any request detail, no ``provider``
    meta; the series keeps its three columns."""
    task = tasks_for(["merchantbench"], [6000], 1, 20)[0]
    row = run_task(task, trace_path=str(tmp_path / "t.db"))
    assert not {"provider", "cache_hit_ratio", "cost_usd_run"} & set(row)
    assert all(len(s) == 3 for s in row["series"])
    data = read_trace(tmp_path / "t.db")
    assert "provider" not in data.meta
    assert all("cache" not in json.loads(r.detail) for r in data.requests)


def test_breakpoints_are_ignored_without_a_provider() -> None:
    """The same request with and without breakpoints records the same bytes when no provider is set."""
    a, b = Simulation(0), Simulation(0)
    ra = a.request("toy", "r", [BIG, msg(1)])
    rb = b.request("toy", "r", [BIG, msg(1)], breakpoints=[0, 1])
    assert ra == rb


def test_cells_in_a_sweep_keep_their_provider() -> None:
    """A task carries its provider (plain values) and the adapter's sim charges with it."""
    cfg = ProviderConfig.of("openai", ttl_s=600, price=2.0)
    task = tasks_for(["oracle"], [3000], 1, 12, provider=cfg)[0]
    assert task.provider == cfg and cfg.ttl_s == 600 and cfg.input_usd_per_mtok == 2.0
    sim = Simulation(0, provider=task.provider)
    assert task.spec is not None
    n = drive(build_adapter(task.spec, sim, 3000, workload_of(task)), sim, workload_of(task))
    assert sim.cache is not None and sim.cache.requests == n > 0


def test_constants_are_the_documented_ones() -> None:
    """The cited constants: 4 breakpoints, 20-block lookback, 5-minute TTL (1 h tier at 2x), 1,024 for
    Claude Opus 4.8; OpenAI 1,024 minimum, 128-token increments, 1-hour cap."""
    assert (anth.MAX_BREAKPOINTS, anth.LOOKBACK_BLOCKS, anth.DEFAULT_TTL_S) == (4, 20, 300)
    assert anth.MIN_CACHEABLE["claude-opus-4-8"] == 1024
    assert (oai.MIN_TOKENS, oai.INCREMENT, oai.MAX_AGE_S) == (1024, 128, 3600)
    a5, a1 = ProviderConfig.of("anthropic"), ProviderConfig.of("anthropic", ttl_s=3600)
    assert (a5.write_multiplier, a1.write_multiplier, a5.read_multiplier) == (1.25, 2.0, 0.1)
    assert ProviderConfig.of("openai").write_multiplier == 0.0


BAD = {
    "unknown provider": (["--provider", "gemini"], "unknown provider 'gemini'"),
    "negative price": (["--provider", "openai", "--price", "-1"], "--price"),
    "NaN price": (["--provider", "openai", "--price", "nan"], "--price"),
    "infinite price": (["--provider", "openai", "--price", "inf"], "--price"),
    "TTL of zero": (["--provider", "anthropic", "--cache-ttl", "0"], "--cache-ttl"),
    "fractional TTL": (["--provider", "anthropic", "--cache-ttl", "1.5"], "--cache-ttl"),
    "boolean TTL": (["--provider", "anthropic", "--cache-ttl", "true"], "--cache-ttl"),
    "price without provider": (["--price", "3"], "need --provider"),
}


@pytest.mark.parametrize("case", list(BAD), ids=list(BAD))
def test_bad_provider_options(capsys: pytest.CaptureFixture[str], tmp_path: Path, case: str) -> None:
    """One ``memsim: error:`` line, exit 2, nothing on stdout, nothing written."""
    args, fragment = BAD[case]
    base = ["bench", "--seeds", "1", "--steps", "10", "--budgets", "3000", "--designs", "oracle"]
    assert_usage_error(cli(capsys, *base, "--no-plots", "--out", str(tmp_path / "o"), *args), fragment)
    assert list(tmp_path.iterdir()) == []
