"""A rule-based state machine: the Tracecraft model next to a deliberately trivial reference model.

The reference keeps live values in a dict, snapshots in a list per key, each mailbox as a list, the
set of messages each reader has been shown, and claim owners in a dict. Rules are named after the
CLI commands; agent ids and keys are valid, clocks are correct, and nothing crashes, so the model must
agree with the reference exactly (history newest = live, --new shows each message once, one owner).
"""

from __future__ import annotations

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from sim.engine import Simulation
from sim.objects import MemoryStore
from systems.tracecraft.model import Tracecraft
from systems.tracecraft.protocol import TracecraftError

AGENTS = st.sampled_from(["alice", "bob", "carol"])
KEYS = st.sampled_from(["plan", "plan.v2", "notes"])


class TracecraftMachine(RuleBasedStateMachine):
    """Model vs reference."""

    @initialize()
    def setup(self) -> None:
        self.sim = Simulation(5)
        self.tc = Tracecraft(self.sim, MemoryStore())
        self.clients = {a: self.tc.agent(a) for a in ("alice", "bob", "carol")}
        self.live: dict[str, str] = {}
        self.history: dict[str, list[str]] = {}
        self.mail: dict[str, list[str]] = {a: [] for a in self.clients}
        self.shown: dict[str, list[str]] = {a: [] for a in self.clients}
        self.owners: dict[str, str] = {}
        self.n = 0

    def _tick(self) -> None:
        self.sim.run(until=self.sim.now + 1)

    @rule(agent=AGENTS, key=KEYS)
    def memory_set(self, agent: str, key: str) -> None:
        self.n += 1
        value = f"v{self.n}"
        c = self.clients[agent]
        c.call(c.memory_set(key, value))
        self.live[key] = value
        self.history.setdefault(key, []).append(value)
        self._tick()

    @rule(key=KEYS)
    def memory_get(self, key: str) -> None:
        c = self.clients["alice"]
        try:
            got = c.call(c.memory_get(key))
        except TracecraftError:
            got = None
        assert got == self.live.get(key)

    @precondition(lambda self: bool(self.history))
    @rule(data=st.data())
    def memory_history(self, data: st.DataObject) -> None:
        key = data.draw(st.sampled_from(sorted(self.history)))
        c = self.clients["bob"]
        values = [ln.rsplit(": ", 1)[1] for ln in c.call(c.memory_history(key, limit=0))]
        assert values == self.history[key]

    @rule(sender=AGENTS, to=AGENTS)
    def send(self, sender: str, to: str) -> None:
        self.n += 1
        c = self.clients[sender]
        c.call(c.send(to, f"m{self.n}"))
        self.mail[to].append(f"m{self.n}")
        self._tick()

    @rule(agent=AGENTS)
    def inbox_new(self, agent: str) -> None:
        c = self.clients[agent]
        got = [m.message for m in c.call(c.inbox(new=True))]
        expected = [m for m in self.mail[agent] if m not in self.shown[agent]]
        assert got == expected
        self.shown[agent] += got

    @rule(agent=AGENTS, step=st.sampled_from(["s1", "S.1", "s2"]))
    def claim(self, agent: str, step: str) -> None:
        sid = step.lower().replace(".", "-")
        c = self.clients[agent]
        try:
            c.call(c.claim(step))
            won = True
        except TracecraftError:
            won = False
        assert won == (sid not in self.owners)
        self.owners.setdefault(sid, agent)

    @invariant()
    def owners_agree(self) -> None:
        if not hasattr(self, "tc"):
            return
        for sid, owner in self.owners.items():
            assert (self.tc.bucket.get_json(f"steps/{sid}/claim.json") or {}).get("agent") == owner

    def teardown(self) -> None:
        if hasattr(self, "sim"):
            self.sim.close()


TestTracecraftMachine = TracecraftMachine.TestCase
