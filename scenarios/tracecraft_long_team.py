"""A long team run through the bucket: mail, shared values with history, mirrored transcripts (Tracecraft).

Covers: RT-RTE-mail-exchange, MEM-OBJ-message-content, MEM-OBJ-inbox-cursor, MEM-OBJ-memory-live,
MEM-OBJ-memory-history, RT-RTE-session-mirror, MEM-OBJ-session-parts, MEM-OBJ-session-meta,
RT-RTE-session-compact.

Scenario: AGENTS agents run as SimPy processes, each making one operation a simulated second, STEPS
operations in all (sends and reads of mail, sets and reads of shared values), drawn from a seeded
stream: ``send`` a fact token to a random teammate; ``inbox --new``, whose shown lines and the team's
current shared value go to the model as one request (the facts of mail delivered to the reader and not
shown yet are *needed*); ``memory set`` of the team's current topic key to a fact token (the team moves
to a new key every VERSIONS sets, so a key's history stays short); ``memory history`` of the current key
(its newest HISTORY_LIMIT snapshots, one request, those facts needed). Every operation appends one JSONL
line to the agent's claude-code transcript; every MIRROR_EVERY operations the agent mirrors it (``session
mirror``), every COMPACT_EVERY mirrors it runs ``session compact``. CHECKPOINTS evenly spaced summaries
print the running counters (and the bucket's durable bytes).

It streams (``KEEP_TRACE = False``): the trace goes to ``--out``'s SQLite file as it is written; the
summary keeps counters, the mail not shown yet and the current key's newest snapshots only; every
object stays in the bucket (a later read can list it: a mailbox, a key's history), the newest 4,096 in
memory and the older ones in a temporary SQLite file (:class:`~systems.tracecraft.model.retention.TailStore`,
as the bench host's bucket); each agent's home lets go of the transcript bytes its mirror has uploaded
and a merged part keeps its last lines (:class:`~systems.tracecraft.model.retention.HostTree`), and the
clients' printed output is dropped after each operation. So a million operations run in flat memory::

    memsim run tracecraft_long_team --param steps=1000000 --out DIR

(issue 42, on a loaded 2-core machine: 184 MB peak RSS at 1,000,000 operations, 169 MB at 250,000, so 0.02
KB an operation between them, the rest being byte-bounded caches filling; 0.15 ms of CPU an operation at
10,000, 40,000 and 160,000 alike).

Not modeled: clock skew (``tracecraft_skewed_team`` covers it): here every clock agrees, so ``--new``
shows every message once.
"""

from __future__ import annotations

import json
from collections import deque
from typing import Any

from pydantic import Field

from sim.scenario import Context, main
from sim.scenario import Params as BaseParams
from sim.text import extract_facts, fact_token, fact_value
from systems.tracecraft.adapter import SYSTEM_PROMPT
from systems.tracecraft.model import FileTailHarness, Tracecraft
from systems.tracecraft.model.retention import HostTree, TailStore

SYSTEM = "tracecraft"
SEED = 42
STORES = ("memory",)
KEEP_TRACE = False
AGENTS = ("alice", "bob", "carol", "dave")
KEEP_LINES = 16
"""Lines a merged transcript part keeps in memory (nothing here reads a part again)."""


class Params(BaseParams):
    """The team's length and rhythm."""

    steps: int = Field(2_000, ge=10, le=2_000_000, description="agent operations in all (sends and reads)")
    versions: int = Field(25, ge=1, le=10_000, description="sets of one shared key before the team moves on")
    history_limit: int = Field(5, ge=1, le=100, description="snapshots a memory history read shows")
    mirror_every: int = Field(8, ge=1, le=10_000, description="an agent's operations between its mirrors")
    compact_every: int = Field(20, ge=2, le=10_000, description="an agent's mirrors between its compactions")
    checkpoints: int = Field(4, ge=1, le=100, description="summaries printed, evenly spaced")


OPS = ("send", "inbox", "set", "history")
WEIGHTS = (35, 35, 15, 15)


def run(ctx: Context) -> list[str]:
    store = TailStore(keep_lines=KEEP_LINES) if ctx.store_kind == "memory" else ctx.open_store()
    try:
        return _team(ctx, store)
    finally:
        store.close()


def _team(ctx: Context, store: Any) -> list[str]:
    p = ctx.params
    sim = ctx.sim
    tc = Tracecraft(sim, store, project="team")
    homes = {a: HostTree(mtime=sim.clock(a).seconds) for a in AGENTS}
    harness = {a: FileTailHarness("claude-code", homes[a]) for a in AGENTS}
    clients = {a: tc.agent(a, home=homes[a]) for a in AGENTS}
    session = {a: f"{a}-work" for a in AGENTS}
    rng = sim.rng("scenario.long_team")
    values = sim.rng("scenario.long_team.facts")
    pending: dict[str, dict[str, str]] = {a: {} for a in AGENTS}  # mail delivered, not shown: key -> fact
    snapshots: deque[str] = deque(maxlen=p.history_limit)  # the current key's newest facts
    c = dict.fromkeys(
        ("ops", "facts", "sent", "shown", "reads", "sets", "history", "requests", "needed", "present",
         "parts", "uploaded", "compactions"), 0,
    )  # fmt: skip
    own_ops = dict.fromkeys(AGENTS, 0)
    marks = {round((i + 1) * p.steps / p.checkpoints) for i in range(p.checkpoints)}
    out: list[str] = [
        f"Tracecraft long team: {len(AGENTS)} agents, {p.steps:,} operations (send/inbox/set/history "
        f"{'/'.join(map(str, WEIGHTS))}%), a new shared key every {p.versions} sets, mirror every "
        f"{p.mirror_every} operations, compact every {p.compact_every} mirrors"
    ]

    def key_name(sets: int) -> str:  # the key of the team's set number *sets* (0-based)
        return f"team.topic{sets // p.versions:06d}"

    def ask(who: str, route: str, parts: list[str], needed: set[str]) -> None:
        rec = sim.request(SYSTEM, route, parts, agent=who, needed=needed)
        c["requests"] += 1
        c["needed"] += len(needed)
        c["present"] += len(needed & rec.fact_ids)

    def operate(name: str) -> Any:
        cl = clients[name]
        op = rng.choices(OPS, WEIGHTS)[0]
        text = ""
        if op == "send":
            to = rng.choice([a for a in AGENTS if a != name])
            c["facts"] += 1
            token = fact_token(c["facts"], fact_value(values))
            text = f"from {name}: {token}"
            key = yield from cl.send(to, text)
            pending[to][key] = next(iter(extract_facts(token)))
            c["sent"] += 1
        elif op == "inbox":
            needed = set(pending[name].values())
            lines = yield from cl.inbox(new=True)
            for m in lines:
                if pending[name].pop(m.key, None) is not None:
                    c["shown"] += 1
            parts = (
                [SYSTEM_PROMPT, *(m.render() for m in lines)]
                if lines
                else [SYSTEM_PROMPT, "No new messages."]
            )
            if c["sets"]:
                current = key_name(c["sets"] - 1)
                value = yield from cl.memory_get(current)
                parts.append(f"{current}: {value}")
            ask(name, "tracecraft.inbox", parts, needed)
            c["reads"] += 1
            text = f"read {len(lines)} message(s)"
        elif op == "set":
            c["facts"] += 1
            token = fact_token(c["facts"], fact_value(values))
            if c["sets"] % p.versions == 0:
                snapshots.clear()  # a new key: its history starts empty
            yield from cl.memory_set(key_name(c["sets"]), token)
            c["sets"] += 1
            snapshots.append(next(iter(extract_facts(token))))
            text = f"set {token}"
        elif c["sets"]:
            lines = yield from cl.memory_history(key_name(c["sets"] - 1), limit=p.history_limit)
            ask(name, "tracecraft.history", [SYSTEM_PROMPT, *lines], set(snapshots))
            c["history"] += 1
            text = f"history {len(lines)} snapshot(s)"
        line = json.dumps({"role": "tool", "agent": name, "op": c["ops"], "content": text or "idle"})
        path = harness[name].session_path(session[name])
        homes[name].append_bytes(path, (line + "\n").encode("utf-8"), clock=cl.clock.seconds)
        own_ops[name] += 1
        if own_ops[name] % p.mirror_every == 0:
            flush = yield from cl.mirror(harness[name], session[name])
            if flush.cursor_range is not None:
                homes[name].release(path, flush.cursor_range[1])
                c["parts"] += 1
                c["uploaded"] += flush.uploaded_bytes
            if (own_ops[name] // p.mirror_every) % p.compact_every == 0:
                merged = yield from cl.session_compact(session[name])
                c["compactions"] += merged is not None
        cl.stdout.clear()
        cl.stderr.clear()

    def worker(name: str) -> Any:
        while c["ops"] < p.steps:
            c["ops"] += 1
            yield from operate(name)
            if c["ops"] in marks:
                out.append(
                    f"[{c['ops']:,} ops, t={sim.now:,.0f} s] mail: {c['sent']:,} sent, "
                    f"{c['shown']:,} shown by --new, {sum(map(len, pending.values()))} not yet; "
                    f"memory: {c['sets']:,} sets over "
                    f"{(c['sets'] + p.versions - 1) // p.versions:,} keys, {c['history']:,} history reads; "
                    f"requests {c['requests']:,}: {c['present']:,} of {c['needed']:,} needed facts present; "
                    f"mirrored {c['parts']:,} parts ({c['uploaded']:,} B), {c['compactions']:,} compactions; "
                    f"bucket {store.total_bytes():,} B"
                )
            yield sim.timeout(1)

    procs = [sim.process(worker(a)) for a in AGENTS]
    sim.run(until=sim.env.all_of(procs))
    return out


if __name__ == "__main__":
    main(__name__)
