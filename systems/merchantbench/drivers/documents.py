"""Workloads and drivers of the claims about the memory document tools (``env/tools/tools.py``): agent-id
aliasing, the version history's numbering, the write order, newline translation."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from hypothesis import strategies as st
from pydantic import Field
from typing_extensions import TypedDict

from sim.claims import Verdict
from sim.engine import Simulation
from sim.faults import Crash, FaultPlan, WriteFailed
from sim.variant import Variant
from systems.merchantbench import faults as fp
from systems.merchantbench import properties as pr
from systems.merchantbench.model import (
    LEGACY_VERSION_MARKER,
    VERSION_MARKER,
    MerchantEnv,
    parse_history_entries,
)

_ID_SAMPLES = ["agent_0", "agent 0", "agent:0", "_agent_0_", "Agent_0", "José", "Josè", "../x", "x"]
_ID_ALPHABET = "aA0_ .:/-é🙂"


def _env(sim: Simulation, variant: Variant, **kw: Any) -> MerchantEnv:
    return MerchantEnv(sim, sim.tree("memory"), variant=variant, **kw)


def _file(env: MerchantEnv, path: str) -> bytes:
    return env.tree.read_bytes(path) if env.tree.exists(path) else b""


# -- agent ids alias (documents) -----------------------------------------------------------------------
AgentId = Annotated[str, Field(max_length=12)]


class AliasExample(TypedDict):
    a: AgentId
    b: AgentId
    casefold: bool


def alias_strategy() -> Any:
    ids = st.one_of(st.sampled_from(_ID_SAMPLES), st.text(alphabet=_ID_ALPHABET, max_size=5))
    return st.fixed_dictionaries({"a": ids, "b": ids, "casefold": st.booleans()})


def alias_check(sim: Simulation, ex: dict[str, Any], variant: Variant) -> Verdict:
    if ex["a"] == ex["b"]:
        return Verdict.ok("same id")
    env = _env(sim, variant, casefold_paths=ex["casefold"])
    env.write_memory_doc(ex["a"], "note of A")
    env.write_memory_doc(ex["b"], "note of B")
    reads = {aid: env.read_memory_doc(aid)["content"] for aid in (ex["a"], ex["b"])}
    return pr.check_documents_isolated(reads, {ex["a"]: "note of A", ex["b"]: "note of B"})


# -- index aliasing: one agent's document is another's history -----------------------------------------
class IndexExample(TypedDict):
    base: Literal["agent_0", "agent 0", "x"]
    suffix: Literal["", ".md", ".history", " history", ".history.md", "_history", "."]


def index_strategy() -> Any:
    return st.fixed_dictionaries(
        {
            "base": st.sampled_from(["agent_0", "agent 0", "x"]),
            "suffix": st.sampled_from(["", ".md", ".history", " history", ".history.md", "_history", "."]),
        }
    )


def index_check(sim: Simulation, ex: dict[str, Any], variant: Variant) -> Verdict:
    b, a = ex["base"], ex["base"] + ex["suffix"]
    if a == b:
        return Verdict.ok("same id")
    env = _env(sim, variant)
    env.write_memory_doc(b, "note of B")
    before = {aid: _file(env, env.memory_history_path(aid)) for aid in (a, b)}
    env.write_memory_doc(a, "junk")
    after = {aid: _file(env, env.memory_history_path(aid)) for aid in (a, b)}
    histories = {b: (before[b], after[b]), a: (before[a], after[a])}
    return pr.check_own_history(histories, {b: ["note of B"], a: ["junk"]})


# -- version numbers inflate ---------------------------------------------------------------------------
_PIECES = [
    "notes",
    "\n",
    VERSION_MARKER + "9 -->",
    LEGACY_VERSION_MARKER + "1 -->",
    "## Memory version 5",
    "<!-- merchantbench-memory-version",
]


class VersionExample(TypedDict):
    bodies: Annotated[list[Annotated[str, Field(max_length=120)]], Field(min_length=1, max_length=4)]


def version_strategy() -> Any:
    body = st.lists(st.sampled_from(_PIECES), max_size=3).map("".join)
    return st.fixed_dictionaries({"bodies": st.lists(body, min_size=1, max_size=4)})


def version_check(sim: Simulation, ex: dict[str, Any], variant: Variant) -> Verdict:
    env = _env(sim, variant)
    for body in ex["bodies"]:
        env.write_memory_doc("agent_0", body)
    entries = parse_history_entries(_file(env, env.memory_history_path("agent_0")))
    return pr.check_versions_recorded(entries, ex["bodies"])


# -- overwrite then append is not transactional --------------------------------------------------------
POINTS = (
    f"crash@{fp.WRITE_DOC_PARTIAL}",
    f"crash@{fp.WRITE_DOC_AFTER_DOCUMENT}",
    f"fail@{fp.WRITE_DOC_HISTORY_APPEND}",
    f"crash@{fp.WRITE_DOC_BEFORE_REPLACE}",
)


class TxnExample(TypedDict):
    writes: Annotated[list[Literal["alpha", "beta", "gamma delta"]], Field(min_length=1, max_length=3)]
    fault: Literal[
        "crash@merchantbench.write_memory_doc.document_partial",
        "crash@merchantbench.write_memory_doc.after_document",
        "fail@merchantbench.write_memory_doc.history_append",
        "crash@merchantbench.write_memory_doc.before_replace",
    ]
    nth: Annotated[int, Field(ge=1, le=3)]


def txn_strategy() -> Any:
    return st.fixed_dictionaries(
        {
            "writes": st.lists(st.sampled_from(["alpha", "beta", "gamma delta"]), min_size=1, max_size=3),
            "fault": st.sampled_from(POINTS),
            "nth": st.integers(1, 3),
        }
    )


def txn_check(sim: Simulation, ex: dict[str, Any], variant: Variant) -> Verdict:
    sim.faults = FaultPlan.parse([f"{ex['fault']}#{ex['nth']}"])
    env = _env(sim, variant)
    committed: list[str] = []
    interrupted = None
    for body in ex["writes"]:
        try:
            if env.write_memory_doc("agent_0", body).get("ok"):
                committed.append(body)
        except (Crash, WriteFailed):
            interrupted = body
            break
    doc_path = env.memory_doc_path("agent_0")
    doc = env.tree.read_bytes(doc_path) if env.tree.exists(doc_path) else None
    hist = _file(env, env.memory_history_path("agent_0"))
    return pr.check_document_committed(doc, hist, committed, interrupted)


# -- CRLF not preserved --------------------------------------------------------------------------------
class CrlfExample(TypedDict):
    content: Annotated[str, Field(max_length=8)]


def crlf_strategy() -> Any:
    return st.fixed_dictionaries({"content": st.text(alphabet="ab\r\n é", max_size=8)})


def crlf_check(sim: Simulation, ex: dict[str, Any], variant: Variant) -> Verdict:
    env = _env(sim, variant)
    w = env.write_memory_doc("agent_0", ex["content"])
    return pr.check_roundtrip(ex["content"], env.read_memory_doc("agent_0"), w)
