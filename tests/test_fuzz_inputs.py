"""Fuzzing the data files memsim reads besides scenario files: native workload JSONL (``memsim bench
--workload``) and saved claim examples (``memsim replay``) (issue 26).

A workload starts as valid lines (facts, a probe of an earlier fact, a calm tail); a saved example starts
as what ``memsim claims --save`` writes, its example drawn from the claim's own strategy. Both are mutated
(fields dropped, retyped, added; lines duplicated; the file truncated or re-encoded). Property: exit 0 or 2
(``replay`` may also exit 1: a valid example that does not reproduce its verdict), never an internal error
or a traceback, on 2 exactly one ``memsim: error:`` line and nothing written. The real-conversation
workload formats get their own fuzzers with these helpers (``tests/fuzzing.py``).
"""

from __future__ import annotations

import json

import pytest
from fuzzing import Workspace, encoded, fuzz_settings, json_text, mutated
from hypothesis import given
from hypothesis import strategies as st

WORKLOAD = [
    {"observation": "alpha FACT-0001=amber", "facts": ["FACT-0001=amber"]},
    {"observation": "beta", "facts": ["FACT-0002=coral", "FACT-123456=teal"], "phase": "load"},
    {"observation": "question", "probe": "FACT-0001"},
    {"observation": "calm", "phase": "calm"},
]


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    return Workspace(tmp_path_factory.mktemp("fuzz-inputs"))


@fuzz_settings(ci=20, thorough=500)
@given(data=st.data())
def test_fuzz_workload_file(ws: Workspace, data: st.DataObject) -> None:
    lines = data.draw(mutated(WORKLOAD))
    if isinstance(lines, list):
        keep = [data.draw(st.integers(0, 9)) != 5 for _ in lines]  # sometimes a blank line instead
        text = "".join((json_text(x) if k else "") + "\n" for x, k in zip(lines, keep, strict=True))
    else:
        keep, text = [False], json_text(lines)
    raw = data.draw(encoded(text))
    r = ws.check(
        [
            "bench",
            "--designs",
            "tracecraft",
            "--budgets",
            "8000",
            "--workload",
            "w.jsonl",
            "--no-plots",
            "--out",
            "o",
        ],
        {"w.jsonl": raw},
    )
    if json_text(lines) == json_text(WORKLOAD) and all(keep) and raw == text.encode():
        assert r.code == 0, r


#: A built-in claim with a small example.
CLAIM = "merchantbench.suffix-eviction"


@fuzz_settings(ci=15, thorough=300)
@given(data=st.data())
def test_fuzz_saved_example(ws: Workspace, data: st.DataObject) -> None:
    from sim import claims as cl

    claim = cl.get(CLAIM)
    example = claim.encode(data.draw(claim.strategy()))
    doc = {"claim": CLAIM, "variant": "faithful", "seed": 0, "example": json.loads(json.dumps(example)),
           "summary": "", "detail": ""}  # fmt: skip
    doc = data.draw(mutated(doc))
    ws.check(["replay", "e.json", "--out", "r"], {"e.json": data.draw(encoded(json_text(doc)))}, ok=(0, 1, 2))
