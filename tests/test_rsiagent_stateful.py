"""A rule-based machine holding the RSIAgent bank transport and admission next to a trivial dict model
(Hypothesis stateful.rst style): guest edits, pushes, terminal commits (audited, journaled, staged) and
direct installs must agree with plain dictionaries."""

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule, run_state_machine_as_test
from strategies_rsiagent import LEAK, NAMES, banks, fact_texts

from sim.engine import Simulation
from systems.rsiagent.model import (
    GuestVM,
    Host,
    atomic_install_memory,
    build_corpus,
    commit_learning,
    push_memory,
    read_archive,
)


class BankMachine(RuleBasedStateMachine):
    """The model: ``guest`` and ``canonical`` dicts, the journaled trees by episode, the run state."""

    def __init__(self) -> None:
        super().__init__()
        self.sim = Simulation(5)
        self.host = Host(self.sim, corpus=build_corpus([LEAK]))
        self.vm = GuestVM(self.sim, "vm")
        self.vm.volume.mkdir(self.vm.MEMORY)
        self.guest: dict[str, bytes] = {}
        self.canonical: dict[str, bytes] = {}
        self.journaled: dict[int, dict[str, bytes]] = {}
        self.episode = 0
        self.quarantined = False

    @rule(bank=banks())
    def push_memory(self, bank: dict[str, bytes]) -> None:
        assert push_memory(self.sim, self.vm, bank)
        self.guest = dict(bank)

    @rule(name=st.sampled_from(NAMES), text=fact_texts())
    def guest_write(self, name: str, text: str) -> None:
        self.vm.write_bank_file(name, text.encode())
        self.guest[name] = text.encode()

    @rule(name=st.sampled_from(NAMES))
    def guest_delete(self, name: str) -> None:
        self.vm.delete_bank_file(name)
        self.guest.pop(name, None)

    @rule(name=st.sampled_from(NAMES))
    def guest_leak(self, name: str) -> None:
        self.vm.write_bank_file(name, LEAK.encode())
        self.guest[name] = LEAK.encode()

    @rule()
    def commit_learning(self) -> None:
        self.episode += 1
        rec = commit_learning(self.sim, self.host, self.vm, self.episode, "PASS", authorized="")
        if any(d == LEAK.encode() for d in self.guest.values()):
            assert rec.outcome == "quarantined"
            self.quarantined = True
        else:
            assert rec.outcome == "installed"
            self.canonical = dict(self.guest)
            self.journaled[self.episode] = dict(self.guest)

    @rule(bank=banks())
    def atomic_install_memory(self, bank: dict[str, bytes]) -> None:
        atomic_install_memory(self.sim, self.host, bank)
        self.canonical = dict(bank)

    @invariant()
    def banks_agree(self) -> None:
        assert self.vm.bank() == self.guest
        assert self.host.canonical() == self.canonical

    @invariant()
    def journal_agrees(self) -> None:
        lines = self.host.journal_lines()
        assert [ln.episode for ln in lines] == sorted(self.journaled)
        for ep, tree in self.journaled.items():
            path = f"{self.host.JOURNAL}/ep{ep:03d}.tgz"
            assert read_archive(self.host.volume.tree.read_bytes(path)) == tree
        assert (self.host.state == "quarantined") == self.quarantined

    @invariant()
    def no_stage_or_backup_left(self) -> None:
        assert self.host.volume.siblings("lineage", ".memory.") == []


def test_bank_machine_agrees_with_dict_model() -> None:
    """Every interleaving of pushes, guest edits, commits and installs agrees with the dict model."""
    run_state_machine_as_test(
        BankMachine, settings=settings(max_examples=40, stateful_step_count=15, deadline=None)
    )
