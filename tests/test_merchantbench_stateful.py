"""Stateful tests: the MerchantBench memory document tools and the history ledger, each held next to a
deliberately trivial reference model (Hypothesis stateful.rst style)."""

from __future__ import annotations

from typing import Any

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import Bundle, RuleBasedStateMachine, invariant, precondition, rule
from strategies_merchantbench import message

from sim.engine import Simulation
from sim.text import extract_facts
from systems.merchantbench import (
    History,
    MerchantEnv,
    sanitize_message_for_llm,
    trim_messages_to_token_budget,
)
from systems.merchantbench import properties as pr
from systems.merchantbench.design import DESIGN
from systems.merchantbench.model import (
    injective_agent_id,
    parse_history_entries,
    provider_text,
    safe_agent_id,
)
from systems.merchantbench.state import INJECTIVE_IDS

BODIES = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\r"), max_size=30)


class MemoryDocMachine(RuleBasedStateMachine):
    """write_memory_doc / read_memory_doc against a dict keyed by the sanitized id (the reference)."""

    agents = Bundle("agents")

    def __init__(self) -> None:
        super().__init__()
        self.sim = Simulation(0)
        self.env = MerchantEnv(self.sim, self.sim.tree("memory"))
        self.docs: dict[str, str] = {}
        self.versions: dict[str, int] = {}

    @rule(target=agents, aid=st.sampled_from(["agent_0", "agent 0", "agent_1", "José", "x", "../x"]))
    def add_agent(self, aid: str) -> str:
        return aid

    @rule(aid=agents, body=BODIES)
    def write_memory_doc(self, aid: str, body: str) -> None:
        result = self.env.write_memory_doc(aid, body)
        key = safe_agent_id(aid)
        self.docs[key] = body
        self.versions[key] = self.versions.get(key, 0) + 1

        assert result == {"ok": True, "bytes": len(body.encode())}

    @rule(aid=agents)
    def read_memory_doc(self, aid: str) -> None:
        expected = self.docs.get(safe_agent_id(aid), "")

        assert self.env.read_memory_doc(aid) == {
            "ok": True,
            "content": expected,
            "bytes": len(expected.encode()),
        }

    @rule()
    def tick(self) -> None:
        self.env.t += 1
        self.sim.run(until=self.sim.now + 1)

    @invariant()
    def history_holds_every_write(self) -> None:
        for key, n in self.versions.items():
            data = self.env.tree.read_bytes(self.env.memory_history_path(key))
            entries = parse_history_entries(data)
            assert len(entries) == n
            assert entries[-1][1] == self.docs[key].encode()

    @invariant()
    def document_is_committed(self) -> None:
        for key in self.docs:
            hist = self.env.tree.read_bytes(self.env.memory_history_path(key))
            doc = self.env.tree.read_bytes(self.env.memory_doc_path(key))
            assert pr.check_document_committed(doc, hist, [self.docs[key]], None).holds


class InjectiveIdsMachine(MemoryDocMachine):
    """The injective-ids fix against a dict keyed by the raw id (no aliasing at all)."""

    def __init__(self) -> None:
        super().__init__()
        self.env = MerchantEnv(
            self.sim,
            self.sim.tree("memory"),
            variant=DESIGN.switches.fixed(INJECTIVE_IDS),
            casefold_paths=True,
        )

    @rule(aid=MemoryDocMachine.agents, body=BODIES)
    def write_memory_doc(self, aid: str, body: str) -> None:
        self.env.write_memory_doc(aid, body)
        self.docs[aid] = body
        self.versions[aid] = self.versions.get(aid, 0) + 1

    @rule(aid=MemoryDocMachine.agents)
    def read_memory_doc(self, aid: str) -> None:
        assert self.env.read_memory_doc(aid)["content"] == self.docs.get(aid, "")

    @invariant()
    def history_holds_every_write(self) -> None:
        for aid, n in self.versions.items():
            assert (
                len(parse_history_entries(self.env.tree.read_bytes(self.env.memory_history_path(aid)))) == n
            )
            assert injective_agent_id(aid).startswith("id-")

    @invariant()
    def document_is_committed(self) -> None:
        return None


class HistoryLedgerMachine(RuleBasedStateMachine):
    """The incremental history ledger against a plain list recounted from scratch (the reference)."""

    def __init__(self) -> None:
        super().__init__()
        self.history = History()
        self.reference: list[dict[str, Any]] = []
        self.start = 0  # where the last window of append_facts started

    @rule(m=message())
    def append(self, m: dict[str, Any]) -> None:
        self.history.append(m)
        self.reference.append(m)

    @precondition(lambda self: self.reference)
    @rule(data=st.data())
    def truncate(self, data: st.DataObject) -> None:
        n = data.draw(st.integers(0, len(self.reference)))
        self.history.truncate(n)
        self.reference = self.reference[:n]

    @rule(budget=st.integers(-2, 300))
    def compact(self, budget: int) -> None:
        kept = trim_messages_to_token_budget(self.reference, budget)
        self.history.keep_from(self.history.trim_start(budget)[0])
        self.reference = kept

    @precondition(lambda self: any(m["role"] == "tool" for m in self.reference))
    @rule()
    def redact(self) -> None:
        i = max(k for k, m in enumerate(self.reference) if m["role"] == "tool")
        self.history.set_content(i, "redacted")

    @rule(budget=st.integers(-2, 300))
    def trim(self, budget: int) -> None:
        assert self.history.trim(budget) == trim_messages_to_token_budget(self.reference, budget)

    @rule(ids=st.lists(st.integers(1, 6), max_size=3), data=st.data())
    def append_facts(self, ids: list[int], data: st.DataObject) -> None:
        """A message carrying a few of six fact ids (so windows gain, keep and lose the same ids), then the
        ids of a window ending with it that starts where the last one did or later (the loop's window)."""
        m = {"role": "user", "content": " ".join(f"FACT-{n:04d}=red" for n in ids) or "no facts"}
        self.history.append(m)
        self.reference.append(m)
        n = len(self.reference)
        self.start = data.draw(st.integers(min(self.start, n), n))
        self.check_facts(self.start, n)

    @precondition(lambda self: self.reference)
    @rule(data=st.data())
    def window_facts(self, data: st.DataObject) -> None:
        """The ids of any window, then of the window with its start moved on (ids can only leave), then of
        one that ends later too."""
        n = len(self.reference)
        start = data.draw(st.integers(0, n))
        end = data.draw(st.integers(start, n))
        self.check_facts(start, end)
        start = data.draw(st.integers(start, end))
        self.check_facts(start, end)
        self.check_facts(start, data.draw(st.integers(end, n)))

    def check_facts(self, start: int, end: int) -> None:
        """The window's ids equal a recount of it (a set handed back from an earlier call included)."""
        texts = (provider_text(sanitize_message_for_llm(m)) for m in self.reference[start:end])
        assert self.history.facts(start, end) == frozenset().union(*map(extract_facts, texts))

    @invariant()
    def totals_agree(self) -> None:
        assert self.history.msgs == self.reference
        assert self.history.total == sum(self.history.costs)
        from systems.merchantbench import history_token_estimate

        assert self.history.total == history_token_estimate(self.reference)


TestMemoryDoc = MemoryDocMachine.TestCase
TestMemoryDoc.settings = settings(max_examples=40, stateful_step_count=20, deadline=None)
TestInjectiveIds = InjectiveIdsMachine.TestCase
TestInjectiveIds.settings = settings(max_examples=30, stateful_step_count=20, deadline=None)
TestHistoryLedger = HistoryLedgerMachine.TestCase
TestHistoryLedger.settings = settings(max_examples=40, stateful_step_count=25, deadline=None)
