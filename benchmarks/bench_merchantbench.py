"""Benchmark (not a test): MerchantBench's ReAct loop beside its floors, its trim beside langchain-core, and
the 100,000-step run's peak memory. Every configuration runs in a fresh process (``harness.fresh``).

    .venv/bin/python benchmarks/bench_merchantbench.py [--quick] [--json FILE]

Goals (ratio = floor or peer time / ours, so higher is better; issue 17's table):

* ``mb.loop.estimate`` — the 2,200-step long run with the estimator-counting provider against a bare SimPy
  loop doing the same work: one timeout per LLM call and one estimate per message the loop appended
  (target >= 1/3);
* ``mb.loop.exact`` — the same run with the exact cl100k provider, every hop recorded, against the pure
  tokenization floor: each distinct text the loop counted (system prompt, tool schemas, every message's
  provider text) encoded once (target >= 2/3);
* ``mb.trim.langchain`` — request assembly and trim of a 2,000-message history at a 30,000-token budget
  against langchain-core's ``trim_messages(strategy="last")`` given a per-message cached counter (the
  fair peer: memsim caches too), target >= 100x; the cold row (both estimating as they go) is printed too;
* ``mb.hop.<B>`` — the per-hop trigger check, trim at B and assembly on histories of 100, 1,000 and 10,000
  messages, against a naive hop that re-estimates the whole history, at B = 8,000 and at the default
  160,000 (reported, no target);
* ``mb.rss.100k`` — peak RSS of ``memsim run merchantbench_long_run --param steps=100000`` with its trace
  streamed to a file (target < 500 MB; ``--quick``: 10,000 steps).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import Goal, fresh, parser, report

_LOOP = """
import json, sys, time
from sim.engine import Simulation
from sim.text import fact_token, observation
from systems.merchantbench.model import MerchantEnv, ReactAgent, History
from systems.merchantbench.policies import SavePolicy

tokenizer, steps = sys.argv[1], int(sys.argv[2])
sim = Simulation(2200)
rng, text_rng = sim.rng("scenario.sizes"), sim.rng("scenario.text")
texts = []
for t in range(steps):
    size = min(8_000, max(20, int(rng.expovariate(1 / 300))))
    facts = [fact_token(t + 1, "amber")] if rng.random() < 0.5 else []
    texts.append(f"Day {t // 24 + 1}, Hour {t % 24}\\n" + observation(text_rng, int(size * 4.8), facts))
env = MerchantEnv(sim, sim.tree("memory"), brief="You run an online shop in MerchantBench.")
agent = ReactAgent(sim, env, "agent_0", SavePolicy(save="reminder", read_on_probe=True),
                   provider_tokenizer=tokenizer, record_every=1 if tokenizer == "cl100k" else 0)
appended = []
payloads = []
write = MerchantEnv._write_step
def spy_write(self, payload, op, _orig=write):
    payloads.append(payload)
    return _orig(self, payload, op)
MerchantEnv._write_step = spy_write
original = History.append
def spy(self, message, _orig=original):
    appended.append(message)
    return _orig(self, message)
History.append = spy
t0 = time.perf_counter()
for text in texts:
    agent.run_step(text)
dt = time.perf_counter() - t0
History.append = original
out = {"seconds": dt, "hops": agent.hops, "appended": len(appended), "compactions": agent.compactions,
       "requests": len(sim.trace.data.requests)}
if sys.argv[3] == "save":
    import pickle
    Path = __import__("pathlib").Path
    saved = {"messages": appended, "hops": agent.hops, "payloads": payloads,
             "system": agent.system_prompt, "tools": agent.tools_json}
    Path(sys.argv[4]).write_bytes(pickle.dumps(saved))
print(json.dumps(out))
"""

_EST_FLOOR = """
import json, pickle, sys, time
from pathlib import Path
import simpy
from systems.merchantbench.model import message_token_estimate
data = pickle.loads(Path(sys.argv[1]).read_bytes())
messages, hops, payloads = data["messages"], data["hops"], data["payloads"]
def proc(env):
    for _ in range(hops):
        yield env.timeout(1.0)
    for m in messages:
        message_token_estimate(m)
t0 = time.perf_counter()
env = simpy.Environment()
env.process(proc(env))
env.run()
bare = time.perf_counter() - t0
t0 = time.perf_counter()
files = {}
for i, p in enumerate(payloads):  # upstream's writer: json.dump(indent=2) of the step after every act
    files[i % 256] = json.dumps(p, indent=2, ensure_ascii=False).encode()
print(json.dumps({"seconds": bare, "io": time.perf_counter() - t0, "writes": len(payloads)}))
"""

_TOKEN_FLOOR = """
import json, pickle, sys, time
from pathlib import Path
from sim.tokens import encoding
from systems.merchantbench.model import provider_text, sanitize_message_for_llm
data = pickle.loads(Path(sys.argv[1]).read_bytes())
texts = list(dict.fromkeys([data["system"], data["tools"]] + [provider_text(sanitize_message_for_llm(m))
                                                               for m in data["messages"]]))
enc = encoding()
enc.encode("warm up", disallowed_special=())
t0 = time.perf_counter()
for text in texts:
    enc.encode(text, disallowed_special=())
print(json.dumps({"seconds": time.perf_counter() - t0, "texts": len(texts)}))
"""

_TRIM = """
import json, random, time, statistics
from sim.engine import Simulation
from sim.text import filler
from systems.merchantbench.model import (History, MerchantEnv, ReactAgent, message_token_estimate,
                                         trim_messages_to_token_budget)
from systems.merchantbench.policies import ScriptedModel
from systems.merchantbench.state import ReactConfig
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage, trim_messages

n, budget = 2_000, 30_000
rng = random.Random(1)
msgs = []
i = 0
while len(msgs) < n:
    msgs.append({"role": "user", "content": f"Day 1, Hour {i}\\n" + filler(rng, rng.randint(200, 3000))})
    msgs.append({"role": "assistant", "content": "", "tool_calls": [{"id": f"call_0_{i}", "type": "function",
                 "function": {"name": "query_balance", "arguments": "{}"}}]})
    msgs.append({"role": "tool", "tool_call_id": f"call_0_{i}", "name": "query_balance",
                 "content": json.dumps({"ok": True, "cash": 1000 + i})})
    msgs.append({"role": "assistant", "content": f"noted step {i}"})
    i += 1
msgs = msgs[:n]
def to_lc(m):
    if m["role"] == "user":
        return HumanMessage(m["content"])
    if m["role"] == "tool":
        return ToolMessage(m["content"], tool_call_id=m["tool_call_id"], name=m["name"])
    calls = [{"id": c["id"], "name": c["function"]["name"], "args": {}} for c in m.get("tool_calls") or []]
    return AIMessage(m["content"] or "", tool_calls=calls)
lc = [to_lc(m) for m in msgs]
cost = {id(x): message_token_estimate(m) for x, m in zip(lc, msgs)}
by_id = {id(x): m for x, m in zip(lc, msgs)}
def cached(batch):
    return sum(cost[id(x)] for x in batch)
def cold(batch):
    return sum(message_token_estimate(by_id[id(x)]) for x in batch)
sim = Simulation(0)
env = MerchantEnv(sim, sim.tree("memory"), brief="You run a shop.")
agent = ReactAgent(sim, env, "agent_0", ScriptedModel(), provider_tokenizer="estimate", record_every=0,
                   config=ReactConfig(context_window=budget, trigger=10**12))
agent.brief("You run a shop.")
agent.history = History(msgs)
def ours():
    agent.maybe_add_compaction_reminder()
    return len(agent.build_request()[0])
def ours_cold():
    return len(trim_messages_to_token_budget(msgs, budget))
def theirs():
    return len(trim_messages(lc, max_tokens=budget, token_counter=cached, strategy="last"))
def theirs_cold():
    return len(trim_messages(lc, max_tokens=budget, token_counter=cold, strategy="last"))
def per_call(fn, repeat):
    best = []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(repeat):
            fn()
        best.append((time.perf_counter() - t0) / repeat)
    return statistics.median(best)
kept = {"ours": ours() - 1, "theirs": theirs()}
out = {"ours": per_call(ours, 2000), "theirs": per_call(theirs, 20), "ours_cold": per_call(ours_cold, 50)}
out.update(theirs_cold=per_call(theirs_cold, 3), kept=kept)
print(json.dumps(out))
"""

_HOP = """
import json, random, sys, time, statistics
from sim.engine import Simulation
from sim.text import filler
from systems.merchantbench.model import (History, MerchantEnv, ReactAgent, history_token_estimate,
                                         sanitize_message_for_llm, trim_messages_to_token_budget)
from systems.merchantbench.policies import ScriptedModel
from systems.merchantbench.state import ReactConfig

window = int(sys.argv[1])
rows = []
for n in (100, 1_000, 10_000):
    rng = random.Random(0)
    msgs = []
    while len(msgs) < n:
        msgs.append({"role": "user", "content": filler(rng, rng.randint(200, 3000))})
        msgs.append({"role": "assistant", "content": f"noted {len(msgs)}"})
    msgs = msgs[:n]
    sim = Simulation(0)
    env = MerchantEnv(sim, sim.tree("memory"))
    agent = ReactAgent(sim, env, "agent_0", ScriptedModel(), provider_tokenizer="estimate", record_every=0,
                       config=ReactConfig(context_window=window, trigger=10**12))
    agent.brief("You run a shop.")
    agent.history = History(msgs)
    def incremental():
        agent.maybe_add_compaction_reminder()
        return len(agent.build_request()[0])
    def naive():
        trig = history_token_estimate(msgs)
        kept = trim_messages_to_token_budget(msgs, window)
        return len([sanitize_message_for_llm(m) for m in kept]) + (trig > 0)
    def per_call(fn, repeat):
        out = []
        for _ in range(5):
            t0 = time.perf_counter()
            for _ in range(repeat):
                fn()
            out.append((time.perf_counter() - t0) / repeat)
        return statistics.median(out)
    rows.append({"messages": n, "kept": incremental() - 1, "incremental": per_call(incremental, 500),
                 "naive": per_call(naive, 3 if n >= 10_000 else 20)})
print(json.dumps(rows))
"""

_RSS = """
import json, sys, tempfile, time
from pathlib import Path
from sim import scenario as sc
steps = int(sys.argv[1])
with tempfile.TemporaryDirectory() as tmp:
    t0 = time.perf_counter()
    lines = sc.execute("merchantbench_long_run", params={"steps": steps}, trace_path=Path(tmp) / "run.db")
    print(json.dumps({"seconds": time.perf_counter() - t0, "summary": lines[:3]}))
"""


def main() -> None:
    args = parser(__doc__.splitlines()[0]).parse_args()
    steps = 400 if args.quick else 2_200
    goals: list[Goal] = []
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        for tokenizer, floor_code, key, target, need in (
            ("estimate", _EST_FLOOR, "mb.loop.estimate", ">= 1/3", 1 / 3),
            ("cl100k", _TOKEN_FLOOR, "mb.loop.exact", ">= 2/3", 2 / 3),
        ):
            saved = str(Path(tmp) / f"{tokenizer}.pickle")
            loop = fresh(_LOOP, tokenizer, str(steps), "save", saved)
            floor = fresh(floor_code, saved)
            ratio = floor["seconds"] / loop["seconds"]
            what = (
                "bare SimPy + one estimate per message"
                if tokenizer == "estimate"
                else "each text encoded once"
            )
            if tokenizer == "estimate":
                io = (floor["seconds"] + floor["io"]) / loop["seconds"]
                goals.append(
                    Goal(
                        key + ".io",
                        "loop (estimate provider) vs bare SimPy + estimates + its step files, written "
                        "once per act as upstream writes them",
                        io,
                        "(reported)",
                        True,
                        f"{loop['seconds']:.3f} s vs {floor['seconds'] + floor['io']:.3f} s "
                        f"({floor['writes']:,} step-file writes)",
                    )
                )
            goals.append(
                Goal(
                    key,
                    f"loop ({tokenizer} provider, {steps:,} steps) vs {what}",
                    ratio,
                    target,
                    ratio >= need,
                    f"{loop['seconds']:.3f} s vs {floor['seconds']:.3f} s; {loop['hops']:,} hops, "
                    f"{loop['appended']:,} messages, {loop['compactions']} compactions, "
                    f"{loop['requests']:,} requests recorded",
                )
            )
    trim = fresh(_TRIM)
    goals.append(
        Goal(
            "mb.trim.langchain",
            "assembly + trim (2,000 msgs, 30k) vs langchain trim_messages, cached counter",
            trim["theirs"] / trim["ours"],
            ">= 100x",
            trim["theirs"] / trim["ours"] >= 100,
            f"{trim['ours'] * 1e6:.1f} us vs {trim['theirs'] * 1e6:,.0f} us; kept {trim['kept']}",
        )
    )
    goals.append(
        Goal(
            "mb.trim.langchain.cold",
            "cold trim (both estimate as they go) vs langchain, cold counter",
            trim["theirs_cold"] / trim["ours_cold"],
            "(reported)",
            True,
            f"{trim['ours_cold'] * 1e6:,.0f} us vs {trim['theirs_cold'] * 1e6:,.0f} us",
        )
    )
    for window in (8_000, 160_000):
        for row in fresh(_HOP, str(window)):
            goals.append(
                Goal(
                    f"mb.hop.{window}.{row['messages']}",
                    f"hop at B={window:,}, {row['messages']:,} messages ({row['kept']} kept) vs naive",
                    row["naive"] / row["incremental"],
                    "(reported)",
                    True,
                    f"{row['incremental'] * 1e6:,.1f} us vs {row['naive'] * 1e6:,.0f} us",
                )
            )
    long_steps = 10_000 if args.quick else 100_000
    rss = fresh(_RSS, str(long_steps), timeout=7200)
    goals.append(
        Goal(
            "mb.rss.100k",
            f"memsim run merchantbench_long_run, {long_steps:,} steps, trace streamed: peak RSS",
            rss["_rss_mb"],
            "< 500 MB",
            rss["_rss_mb"] < 500,
            f"{rss['seconds']:,.0f} s",
            unit="MB",
        )
    )
    report("MerchantBench", goals, args.json)


if __name__ == "__main__":
    main()
