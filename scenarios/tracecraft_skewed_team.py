"""A clock-skewed team of five agents exchanging mail with ``inbox --new`` (Tracecraft).

Covers: RT-RTE-mail-exchange, MEM-OBJ-message-content, MEM-OBJ-inbox-cursor;
claims tracecraft.skew-hides-mail and tracecraft.future-key-blinds.

Scenario: five agents run as SimPy processes for DURATION_S. Every SEND_EVERY_S (jittered from a
seeded stream) each agent mails a random teammate a fact token, and every READ_EVERY_S it reads
``inbox --new``; what the read shows is what its harness hands the model (one request per read: the
agent prompt and each shown line; the facts of mail delivered to it but not yet shown are *needed*). The
wall clocks are skewed (SKEWS, seconds; a ``skew:AGENT=S`` fault adds to them): one runs ten minutes
slow, one two minutes slow, one 30 s fast. Keys carry the writer's clock, and the cursor's watermark is
``max(ts) - 300 s``, so mail from the slow clock lands below every reader's watermark and ``--new`` never
shows it, while a plain ``inbox`` still lists it. The same team then runs with the ``mailbox-stamp`` fix
(each sender stamps above the newest key it lists in the mailbox). A ``second-reader:AGENT`` fault runs a
second process reading with that agent's id (one shared cursor). Same output on memory and moto.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, field_validator

from sim import scenario as sc
from sim.scenario import Context, main
from sim.text import extract_facts, fact_token, fact_value
from sim.variant import FAITHFUL, Variant
from systems.tracecraft.adapter import SYSTEM_PROMPT
from systems.tracecraft.design import DESIGN
from systems.tracecraft.model import Tracecraft

SYSTEM = "tracecraft"
SEED = 7
STORES = ("memory", "moto")
AGENTS = ("alice", "bob", "carol", "dave", "erin")
MAX_SKEW_S = 86_400.0


class Params(sc.Params):
    """The team's timing and clocks."""

    duration_s: float = Field(120.0, gt=0, le=3600, description="how long the team works (simulated s)")
    send_every_s: float = Field(20.0, ge=0.5, le=3600, description="mean seconds between one agent's sends")
    read_every_s: float = Field(15.0, ge=0.5, le=3600, description="seconds between one agent's inbox --new")
    skews: dict[str, Annotated[float, Field(ge=-MAX_SKEW_S, le=MAX_SKEW_S)]] = Field(
        default_factory=lambda: {"alice": 0.0, "bob": -600.0, "carol": 30.0, "dave": -120.0, "erin": 0.0},
        max_length=len(AGENTS),
        description=f"wall-clock offset per agent ({', '.join(AGENTS)}; seconds, within ±{MAX_SKEW_S:,.0f}; "
        "negative runs slow)",
    )

    @field_validator("skews")
    @classmethod
    def _known_agents(cls, skews: dict[str, float]) -> dict[str, float]:
        unknown = sorted(set(skews) - set(AGENTS))
        if unknown:
            raise ValueError(f"unknown agent(s) {unknown}: the team is {', '.join(AGENTS)}")
        return skews


def _team(ctx: Context, variant: Variant, label: str) -> list[str]:
    p = ctx.params
    sim = ctx.sim
    store = ctx.open_store()
    try:
        tc = Tracecraft(sim, store, project="team", variant=variant, latency=0.05)
        agents = {a: tc.agent(f"{a}") for a in AGENTS}
        sent: dict[str, list[str]] = {a: [] for a in AGENTS}
        facts: dict[str, str] = {}  # message key -> the fact it carries
        shown: dict[str, set[str]] = {a: set() for a in AGENTS}
        rng = sim.rng(f"scenario.skewed_team.{label}")
        values = sim.rng(f"scenario.skewed_team.{label}.facts")
        start = sim.now
        end = start + p.duration_s
        stats = {"requests": 0, "needed": 0, "present": 0}

        def read(name: str, reader: Any, who: str) -> Any:
            needed = {facts[k] for k in sent[name] if k not in shown[name]}  # delivered before the read
            lines = yield from reader.inbox(new=True)
            shown[name] |= {m.key for m in lines}
            parts = (
                [SYSTEM_PROMPT, *(m.render() for m in lines)]
                if lines
                else [SYSTEM_PROMPT, "No new messages."]
            )
            rec = sim.request(
                SYSTEM, "tracecraft.inbox", parts, agent=who, needed=needed,
                kinds=["system", *(["message"] * (len(parts) - 1))], variant=label,
            )  # fmt: skip
            stats["requests"] += 1
            stats["needed"] += len(needed)
            stats["present"] += len(needed & rec.fact_ids)

        def worker(name: str) -> Any:
            c = agents[name]
            next_send = start + rng.uniform(0, p.send_every_s)
            next_read = start + p.read_every_s
            while sim.now < end:
                if sim.now >= next_send:
                    to = rng.choice([a for a in AGENTS if a != name])
                    token = fact_token(len(facts) + 1, fact_value(values))
                    key = yield from c.send(to, f"from {name} at {sim.now:.0f}s: {token}")
                    facts[key] = next(iter(extract_facts(token)))
                    sent[to].append(key)
                    next_send = sim.now + rng.uniform(0.5, 1.5) * p.send_every_s
                if sim.now >= next_read:
                    yield from read(name, c, name)
                    next_read = sim.now + p.read_every_s
                yield sim.timeout(max(0.0, min(next_send, next_read) - sim.now))
            yield from read(name, c, name)

        def second_reader(name: str) -> Any:  # fault second-reader:AGENT: another process, same agent id
            c = tc.agent(name, reader="second")
            while sim.now < end:
                yield sim.timeout(p.read_every_s * 0.7)
                yield from read(name, c, f"{name} (second reader)")

        procs = [sim.process(worker(a)) for a in AGENTS]
        procs += [sim.process(second_reader(a)) for a in AGENTS if sim.faults.second_reader(a)]
        sim.run(until=sim.env.all_of(procs))
        out = []
        hidden_total = 0
        for a in AGENTS:
            plain = agents[a].call(agents[a].inbox())
            hidden = [k for k in sent[a] if k not in shown[a]]
            hidden_total += len(hidden)
            senders = sorted({k.split("_")[1] for k in hidden})
            out.append(
                f"[{label}] {a:5s} clock {sim.clock(a).offset_ns / 1e9:+6.0f}s: received {len(sent[a]):2d}, "
                f"plain inbox {len(plain):2d}, --new showed {len(shown[a] & set(sent[a])):2d}, "
                f"hidden {len(hidden):2d}" + (f" (from {', '.join(senders)})" if senders else "")
            )
        total = sum(len(v) for v in sent.values())
        out.append(f"[{label}] team: {total} messages, {hidden_total} never shown by --new")
        out.append(
            f"[{label}] context: {stats['requests']} requests after --new; {stats['present']} of "
            f"{stats['needed']} needed facts (mail delivered before a read, not shown yet) reached the model"
        )
        return out
    finally:
        store.close()


def run(ctx: Context) -> list[str]:
    """Run the faithful team, then the team with mailbox-stamp keys."""
    for a in AGENTS:
        if not ctx.sim.faults.armed("skew", a):
            ctx.sim.clock(a).skew(ctx.params.skews.get(a, 0.0))
    out = _team(ctx, FAITHFUL, "faithful")
    out += _team(ctx, DESIGN.switches.fixed("mailbox-stamp"), "fixed")
    return out


if __name__ == "__main__":
    main(__name__)
