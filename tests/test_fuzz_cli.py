"""Fuzzing ``memsim run`` and ``memsim bench`` options and scenario files (issue 26).

Every property: the command exits 0 or 2 (never 1, never a traceback; a fault that never fired is the
one verdict these inputs can fail, exit 1 with its own line), on 2 prints exactly one ``memsim: error:``
line and writes nothing. Inputs are generated from the valid forms (the toy scenario's parameters, the
fault grammar, the designs' knob models, a valid scenario file) and mutated, so the fuzzers reach the
deep fields and not only the first parse. Helpers: ``tests/fuzzing.py``.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from fuzzing import LEAVES, Workspace, encoded, fuzz_settings, mutated, toml_text
from hypothesis import given
from hypothesis import strategies as st

TOY = (Path(__file__).parent / "data" / "fuzz_toy.py").read_bytes()

#: Value texts a user might type for KEY=VALUE: JSON of any leaf, the non-finite spellings, loose text.
VALUE_TEXT = st.one_of(
    LEAVES.map(lambda v: json.dumps(v)),
    st.sampled_from(["NaN", "-Infinity", "inf", "1e999", "-0", "1_000", "0x10", "true", '"7"', "[1, 2]",
                     "[1, 2, 3, 4, 5]", "{}", '"a"', "b", "", " 3", "[[[]]]", "1.0", "20", "21", "1e6"]),
    st.text(max_size=20),
)  # fmt: skip
PARAM_KEYS = st.sampled_from(["steps", "step_s", "ratio", "mode", "flag", "tags", "name", "nope", ""])


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    return Workspace(tmp_path_factory.mktemp("fuzz-cli"), {"fuzz_toy.py": TOY})


@fuzz_settings(ci=30, thorough=500)
@given(params=st.lists(st.tuples(PARAM_KEYS | st.text(max_size=8), VALUE_TEXT), min_size=1, max_size=3))
def test_fuzz_param(ws: Workspace, params: list[tuple[str, str]]) -> None:
    args = [a for k, v in params for a in ("--param", f"{k}={v}")]
    ws.check(["run", "fuzz_toy.py", *args, "--out", "o"])


def _points() -> list[str]:
    from sim.faults import points
    from sim.registry import design

    design("tracecraft")
    return list(points("tracecraft"))[:6] or ["tracecraft.x.y"]


NUMBER_TEXT = st.one_of(
    st.floats(allow_nan=False).map(repr),
    st.integers(-(10**12), 10**12).map(str),
    st.sampled_from(
        ["1e400", "-1e400", "nan", "inf", "1e9", "1.000000001e9", "10", "10.0000001", "-0.9", "-0.91"]
    ),
)
AGENTS = st.sampled_from(["alice", "bob", "", "al ice", "alice=1"])


@st.composite
def fault_specs(draw: st.DrawFn) -> str:
    kind = draw(st.sampled_from(["crash", "fail", "skew", "drift", "second-reader", "raw"]))
    if kind in ("crash", "fail"):
        point = draw(st.sampled_from(_points()) | st.text(max_size=12))
        n = draw(st.none() | st.integers(-1, 10**12).map(str) | st.text(max_size=4))
        spec = f"{kind}@{point}" + (f"#{n}" if n is not None else "")
    elif kind in ("skew", "drift"):
        spec = f"{kind}:{draw(AGENTS)}={draw(NUMBER_TEXT)}"
    elif kind == "second-reader":
        spec = f"second-reader:{draw(AGENTS)}"
    else:
        spec = draw(st.text(max_size=30))
    cut = draw(st.none() | st.integers(0, len(spec)))
    return spec if cut is None else spec[:cut]


@fuzz_settings(ci=30, thorough=500)
@given(faults=st.lists(fault_specs(), min_size=1, max_size=3))
def test_fuzz_fault(ws: Workspace, faults: list[str]) -> None:
    args = [a for f in faults for a in ("--fault", f)]
    r = ws.check(["run", "fuzz_toy.py", *args, "--out", "o"], ok=(0, 1, 2))
    if r.code == 1:  # the one verdict: an armed crash or fail point the toy never reaches
        errors = [x for x in r.err.splitlines() if x.startswith("memsim: error: ")]
        assert errors and all(" never fired: " in x for x in errors), r


#: A valid scenario file of the toy, every field set.
SCENARIO_FILE = {
    "scenario": "fuzz_toy.py",
    "seed": 3,
    "faults": ["skew:alice=5", "drift:alice=0.5"],
    "store": "memory",
    "params": {
        "steps": 2,
        "step_s": 1.5,
        "ratio": 0.5,
        "mode": "b",
        "flag": True,
        "tags": [1, 2],
        "name": "y",
    },
}


@fuzz_settings(ci=40, thorough=800)
@given(data=st.data())
def test_fuzz_scenario_file(ws: Workspace, data: st.DataObject) -> None:
    doc = data.draw(mutated(SCENARIO_FILE))
    raw = data.draw(encoded(toml_text(doc)) | encoded(data.draw(st.text(max_size=60))))
    r = ws.check(["run", "s.toml", "--out", "o"], {"s.toml": raw})
    if doc == SCENARIO_FILE and raw.startswith(toml_text(doc).encode()):
        assert r.code == 0, r


def _knob_fields() -> list[str]:
    from sim.registry import designs

    return [f"{d.name}.{k}" for d in designs().values() for k in d.knobs.model_fields]


DESIGN_SPECS = st.one_of(
    st.sampled_from(["tracecraft", "tracecraft:fixed", "merchantbench", "oracle", "tracecraft:fix=nope",
                     "nope", "tracecraft:", ":fixed", "tracecraft,tracecraft", ""]),
    st.text(max_size=15),
)  # fmt: skip
BUDGETS = st.lists(
    st.integers(0, 3_000_000).map(str) | st.sampled_from(["8_000", "1e4", "8000.0", "-1", "", " 9000 ", "x"]),
    min_size=0,
    max_size=5,
).map(",".join)


@fuzz_settings(ci=20, thorough=300)
@given(
    designs=st.lists(DESIGN_SPECS, min_size=1, max_size=2).map(",".join),
    budgets=BUDGETS,
    knobs=st.lists(st.tuples(st.sampled_from(_knob_fields()) | st.text(max_size=10), VALUE_TEXT), max_size=2),
)
def test_fuzz_bench_options(ws: Workspace, designs: str, budgets: str, knobs: list[tuple[str, str]]) -> None:
    args = [a for k, v in knobs for a in ("--knob", f"{k}={v}")]
    ws.check(
        ["bench", "--designs", designs, "--budgets", budgets, *args, "--seeds", "1", "--steps", "10",
         "--no-plots", "--out", "o"]
    )  # fmt: skip


def test_the_generators_reach_the_valid_forms() -> None:
    """The valid scenario file is what the mutators start from, and it runs (a fuzzer whose seed input is
    refused would test only the first parse)."""
    text = toml_text(SCENARIO_FILE)
    import tomllib

    assert tomllib.loads(text) == SCENARIO_FILE
    assert math.isnan(tomllib.loads(toml_text({"x": math.nan}))["x"])
