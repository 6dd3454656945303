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
from fuzzing import LEAVES, Workspace, encoded, fuzz_settings, json_text, mutated, toml_text
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


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    return Workspace(tmp_path_factory.mktemp("fuzz-cli"), {"fuzz_toy.py": TOY})


#: Valid overrides of every toy parameter: the fuzzer mutates these (and sometimes types its own text).
PARAMS = {"steps": 3, "step_s": 0.5, "ratio": 2, "mode": "b", "flag": True, "tags": [1, 2, 3], "name": "z"}


def _option_value(data: st.DataObject, value: object) -> str:
    """How a user types *value* after ``KEY=``: its JSON, a bare string, or text of their own."""
    if isinstance(value, str) and data.draw(st.booleans()):
        return value
    return data.draw(VALUE_TEXT) if data.draw(st.integers(0, 9)) == 5 else json.dumps(value)


@fuzz_settings(ci=30, thorough=500)
@given(data=st.data())
def test_fuzz_param(ws: Workspace, data: st.DataObject) -> None:
    params = data.draw(mutated(PARAMS))
    items = params.items() if isinstance(params, dict) else [("steps", params)]
    args = [a for k, v in items for a in ("--param", f"{k}={_option_value(data, v)}")]
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
    text = data.draw(st.text(max_size=60)) if data.draw(st.integers(0, 99)) == 50 else toml_text(doc)
    raw = data.draw(encoded(text))
    r = ws.check(["run", "s.toml", "--out", "o"], {"s.toml": raw})
    if json_text(doc) == json_text(SCENARIO_FILE) and raw == toml_text(doc).encode():  # True == 1 in Python
        assert r.code == 0, r


#: Valid bench options: the fuzzer mutates these (designs and budgets are comma lists, knobs KEY=VALUE).
BENCH_OPTIONS = {
    "designs": ["tracecraft", "merchantbench:fixed"],
    "budgets": [8000, 16000],
    "knobs": {"merchantbench.keep": 4000, "merchantbench.read_on_probe": False, "tracecraft.memory_keys": 3,
              "merchantbench.provider": "cl100k"},
}  # fmt: skip


def _listed(value: object) -> str:
    items = value if isinstance(value, list) else [value]
    return ",".join(x if isinstance(x, str) else json.dumps(x) for x in items)


@fuzz_settings(ci=12, thorough=300)
@given(data=st.data())
def test_fuzz_bench_options(ws: Workspace, data: st.DataObject) -> None:
    opts = data.draw(mutated(BENCH_OPTIONS))
    opts = opts if isinstance(opts, dict) else {}
    args = []
    if "designs" in opts:
        args += ["--designs", _listed(opts["designs"])]
    if "budgets" in opts:
        args += ["--budgets", _listed(opts["budgets"])]
    knobs = opts.get("knobs")
    for k, v in knobs.items() if isinstance(knobs, dict) else []:
        args += ["--knob", f"{k}={_option_value(data, v)}"]
    ws.check(["bench", *args, "--seeds", "1", "--steps", "10", "--no-plots", "--out", "o"])


def test_the_generators_reach_the_valid_forms() -> None:
    """The valid scenario file is what the mutators start from, and it runs (a fuzzer whose seed input is
    refused would test only the first parse)."""
    text = toml_text(SCENARIO_FILE)
    import tomllib

    assert tomllib.loads(text) == SCENARIO_FILE
    assert math.isnan(tomllib.loads(toml_text({"x": math.nan}))["x"])
