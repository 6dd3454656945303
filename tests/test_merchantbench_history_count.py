"""The history file's version markers counted as it grows, and its entries counted header by header
(issue 42: a long run neither holds the file nor reads it whole at every save), against upstream's
whole-file reading (``next_memory_version``, ``parse_history_entries``)."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from sim.engine import Simulation
from sim.spill import SpillTree
from systems.merchantbench import MerchantEnv
from systems.merchantbench.model import (
    count_history_entries,
    next_memory_version,
    parse_history_entries,
    write_memory_doc,
)

MARK = "<!-- merchantbench-memory-version "
LEGACY = "<!-- realshop-memory-version "
BODIES = st.sampled_from(["", "notes", "a\n", MARK + "9 -->", LEGACY + "2 -->\n", "x" * 300 + MARK])
OPS = st.one_of(
    st.tuples(st.just("write"), st.sampled_from(["agent_0", "agent_1", "agent_0.history"]), BODIES),
    st.tuples(st.just("append"), BODIES),  # another writer appends to agent_0's history file
    st.tuples(st.just("rewrite"), BODIES),  # or replaces it
)


def _env(spill: bool) -> MerchantEnv:
    sim = Simulation(0)
    tree = SpillTree(sim.clock("").seconds, tail=lambda p: p.endswith(".history.md")) if spill else None
    return MerchantEnv(sim, tree or sim.tree("memory"))


@given(ops=st.lists(OPS, max_size=8), spill=st.booleans())
def test_each_version_is_upstreams_count_over_the_whole_file(ops: list[Any], spill: bool) -> None:
    """Every write's label is 1 + both markers' counts over the whole history file as it was, whoever
    wrote the file in between (the env, an aliasing id's document, an outside append or rewrite)."""
    env = _env(spill)
    path = env.memory_history_path("agent_0")
    for op in ops:
        if op[0] == "write":
            aid = op[1]
            hist = env.memory_history_path(aid)
            before = env.tree.read_text(hist, translate_newlines=False) if env.tree.exists(hist) else ""
            assert write_memory_doc(env, aid, op[2])["ok"]
            after = env.tree.read_bytes(hist)[len(before.encode()) :].decode()
            assert after.lstrip("\n").startswith(f"{MARK}{next_memory_version(before)} -->")
        elif op[0] == "append":
            env.tree.append_text(path, op[1])
        else:
            env.tree.write_text(path, op[1])


@given(bodies=st.lists(BODIES, min_size=1, max_size=5), cut=st.integers(0, 2000), junk=BODIES)
def test_entries_counted_header_by_header_as_the_whole_file_parses(
    bodies: list[str], cut: int, junk: str
) -> None:
    """The streamed count equals the parser's on a history, on every prefix of it and with junk after."""
    env = _env(False)
    for b in bodies:
        write_memory_doc(env, "agent_0", b)
    whole = env.tree.read_bytes(env.memory_history_path("agent_0"))
    for data in (whole, whole[:cut], whole + junk.encode(), junk.encode() + whole):
        got = count_history_entries(lambda at, n, d=data: d[at : at + n], len(data))
        assert got == len(parse_history_entries(data))
    assert count_history_entries(lambda at, n: whole[at : at + n], len(whole)) == len(bodies)
