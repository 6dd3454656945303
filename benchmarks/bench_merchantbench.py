"""Benchmark (not a test): MerchantBench's ReAct trim and request assembly, against langchain-core, and the
2,200-step run with the estimator and with exact cl100k counting.

    /work/venv/bin/python benchmarks/bench_merchantbench.py

Prints three tables:

1. per-hop cost of the trigger check, the trim at B and request assembly at histories of 100, 1,000 and
   10,000 messages: the incremental ledger (costs cached once per message, a running total, a backward
   walk over what is kept) against a naive hop that re-estimates the whole history for the trigger, as a
   non-incremental reimplementation would;
2. the same trim against langchain-core's ``trim_messages(strategy="last", token_counter=<the same
   estimator>)`` on one 2,000-message history and budget, with the ratio (goal >= 100x);
3. steps per second of the 2,200-step long run (``scenarios/merchantbench_long_run.py`` settings) with the
   estimator-counting provider and with the exact cl100k provider recording every hop (cold token cache).
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable
from typing import Any

from sim.engine import Simulation
from sim.text import fact_token, filler, observation
from sim.tokens import count_tokens
from systems.merchantbench.model import (
    History,
    MerchantEnv,
    ReactAgent,
    history_token_estimate,
    message_token_estimate,
    sanitize_message_for_llm,
    trim_messages_to_token_budget,
)
from systems.merchantbench.policies import SavePolicy, ScriptedModel
from systems.merchantbench.state import ReactConfig


def _history(n: int, seed: int = 0) -> list[dict[str, Any]]:
    """n messages: observations, assistant tool calls and tool results, in ReAct order."""
    rng = random.Random(seed)
    out: list[dict[str, Any]] = []
    i = 0
    while len(out) < n:
        out.append({"role": "user", "content": f"Day 1, Hour {i}\n" + filler(rng, rng.randint(200, 3000))})
        out.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": f"call_0_{i}",
                        "type": "function",
                        "function": {"name": "query_balance", "arguments": "{}"},
                    }
                ],
            }
        )
        out.append(
            {
                "role": "tool",
                "tool_call_id": f"call_0_{i}",
                "name": "query_balance",
                "content": json.dumps({"ok": True, "cash": 1000 + i}),
            }
        )
        out.append({"role": "assistant", "content": f"noted step {i}"})
        i += 1
    return out[:n]


def _best(fn: Callable[[], Any], repeat: int) -> float:
    """Best-of-7 mean seconds per call over *repeat* calls."""
    best = float("inf")
    for _ in range(7):
        t0 = time.perf_counter()
        for _ in range(repeat):
            fn()
        best = min(best, (time.perf_counter() - t0) / repeat)
    return best


def per_hop_table() -> None:
    window = 8_000
    print(f"1. per-hop trigger check + trim at B + request assembly (B={window:,} est. tokens)")
    print(f"   {'messages':>9} {'kept':>6} {'incremental us':>15} {'naive us':>10} {'naive/incr':>11}")
    for n in (100, 1_000, 10_000):
        msgs = _history(n)
        sim = Simulation(0)
        env = MerchantEnv(sim, sim.tree("memory"))
        agent = ReactAgent(
            sim,
            env,
            "agent_0",
            ScriptedModel(),
            config=ReactConfig(context_window=window),
            provider_tokenizer="estimate",
            record_every=0,
        )
        agent.brief("You run a shop.")
        agent.history = History(msgs)

        def incremental(agent: ReactAgent = agent) -> int:
            agent.maybe_add_compaction_reminder()
            return len(agent.build_request()[0])

        def naive(msgs: list[dict[str, Any]] = msgs) -> int:
            trig = history_token_estimate(msgs)  # the untrimmed estimate, recomputed every hop
            kept = trim_messages_to_token_budget(msgs, window)
            req = [{"role": "system", "content": "You run a shop."}] + [
                sanitize_message_for_llm(m) for m in kept
            ]
            return len(req) + (trig > 0)

        agent.config = ReactConfig(context_window=window, trigger=10**12)
        kept = incremental() - 1
        inc = _best(incremental, 500)
        nai = _best(naive, 5 if n >= 10_000 else 20)
        print(f"   {n:>9,} {kept:>6} {inc * 1e6:>15.1f} {nai * 1e6:>10.0f} {nai / inc:>10.0f}x")


def langchain_table() -> None:
    from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage, trim_messages

    n, budget = 2_000, 30_000
    msgs = _history(n, seed=1)

    def to_lc(m: dict[str, Any]) -> BaseMessage:
        if m["role"] == "user":
            return HumanMessage(m["content"])
        if m["role"] == "tool":
            return ToolMessage(m["content"], tool_call_id=m["tool_call_id"], name=m["name"])
        calls = [
            {"id": c["id"], "name": c["function"]["name"], "args": json.loads(c["function"]["arguments"])}
            for c in m.get("tool_calls") or []
        ]
        return AIMessage(m["content"] or "", tool_calls=calls)

    def to_dict(m: BaseMessage) -> dict[str, Any]:
        if isinstance(m, HumanMessage):
            return {"role": "user", "content": m.content}
        if isinstance(m, ToolMessage):
            return {"role": "tool", "tool_call_id": m.tool_call_id, "name": m.name, "content": m.content}
        out: dict[str, Any] = {"role": "assistant", "content": m.content or None}
        if getattr(m, "tool_calls", None):
            out["tool_calls"] = [
                {
                    "id": c["id"],
                    "type": "function",
                    "function": {"name": c["name"], "arguments": json.dumps(c["args"])},
                }
                for c in m.tool_calls
            ]  # type: ignore[attr-defined]
        return out

    def estimator(messages: list[BaseMessage]) -> int:
        return sum(message_token_estimate(to_dict(m)) for m in messages)

    lc_msgs = [to_lc(m) for m in msgs]
    ledger = History(msgs)

    def ours_incremental() -> int:
        return len(ledger.trim(budget))

    def ours_cold() -> int:
        return len(trim_messages_to_token_budget(msgs, budget))

    def theirs() -> int:
        return len(trim_messages(lc_msgs, max_tokens=budget, token_counter=estimator, strategy="last"))

    inc, cold, lc = _best(ours_incremental, 200), _best(ours_cold, 50), _best(theirs, 2)
    print(f"2. trim of one {n:,}-message history to {budget:,} est. tokens, same estimator")
    print(f"   {'implementation':<50} {'kept':>5} {'us/call':>10} {'ratio':>8}")
    print(f"   {'langchain-core trim_messages(strategy=last)':<50} {theirs():>5} {lc * 1e6:>10.0f} {1:>7}x")
    print(
        f"   {'merchantbench trim (cold: estimates as it walks)':<50} {ours_cold():>5} {cold * 1e6:>10.1f} "
        f"{lc / cold:>7.0f}x"
    )
    print(
        f"   {'merchantbench History.trim (cached costs)':<50} {ours_incremental():>5} {inc * 1e6:>10.1f} "
        f"{lc / inc:>7.0f}x"
    )


def long_run_table() -> None:
    steps = 2_200
    print(f"3. the {steps:,}-step long run (observations ~300 tokens, B=T=160,000, K=30,000)")
    print(
        f"   {'provider counting':<40} {'seconds':>8} {'steps/s':>8} {'requests recorded':>18} "
        f"{'compactions':>12}"
    )
    for label, tokenizer, every in (
        ("estimator (no tokenizer in the loop)", "estimate", 0),
        ("exact cl100k, every hop recorded", "cl100k", 1),
    ):
        count_tokens.cache_clear()
        sim = Simulation(2200)
        rng, text_rng = sim.rng("scenario.sizes"), sim.rng("scenario.text")
        env = MerchantEnv(sim, sim.tree("memory"))
        agent = ReactAgent(
            sim,
            env,
            "agent_0",
            SavePolicy(save="reminder", read_on_probe=True),
            provider_tokenizer=tokenizer,
            record_every=every,
        )
        agent.brief("You run an online shop in MerchantBench.")
        texts = []
        for t in range(steps):
            size = min(8_000, max(20, int(rng.expovariate(1 / 300))))
            facts = [fact_token(t + 1, "amber")] if rng.random() < 0.5 else []
            texts.append(
                f"Day {t // 24 + 1}, Hour {t % 24}\n" + observation(text_rng, int(size * 4.8), facts)
            )
        t0 = time.perf_counter()
        for text in texts:
            agent.run_step(text)
        dt = time.perf_counter() - t0
        print(
            f"   {label:<40} {dt:>8.2f} {steps / dt:>8.0f} {len(sim.trace.data.requests):>18,} "
            f"{agent.compactions:>12}"
        )
        sim.close()


if __name__ == "__main__":
    per_hop_table()
    langchain_table()
    long_run_table()
