"""Fuzzing the surfaces of issue 37: output paths of every kind, and the saved results a resumed exhaustive
run reads back.

Output paths: a writer (``report -o``, ``workload synth --out``) is given a target drawn from the kinds a
hostile user can plant (a FIFO, a directory, symlinks to nothing, to a directory or to a file, the
command's own input by name or by hard link, a path below a file, a long name); the contract holds (exit 0
or 2, one error line, nothing written on 2) and a target that is not a regular file memsim may replace, or
is the command's input, is always 2.

Progress files: a real run's saved results are mutated (a field dropped, retyped or extended) and the run
resumed: its verdicts are the fresh run's, or it is one :class:`UsageError`; no other exception.
Helpers: ``tests/fuzzing.py``.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from fuzzing import assert_contract, fuzz_settings, mutated, run_cli, snapshot
from hypothesis import given
from hypothesis import strategies as st

from sim import claims as cl
from sim.errors import UsageError
from sim.exhaustive import run as ex_run

#: Target kinds an output path may be, and whether the command must refuse it.
KINDS = {
    "missing": False,
    "regular": False,
    "nested-missing": False,
    "link-to-file": False,
    "fifo": True,
    "directory": True,
    "link-to-dir": True,
    "dangling-link": True,
    "the-input": True,
    "hard-link-to-input": True,
    "below-a-file": True,
    "name-over-255-bytes": True,
}


def _plant(base: Path, kind: str, source: Path) -> Path:
    """Make the output target of *kind* in *base* (the command's input is *source*)."""
    t = base / "out.html"
    if kind == "regular":
        t.write_text("old")
    elif kind == "nested-missing":
        t = base / "a" / "b" / "out.html"
    elif kind == "link-to-file":
        (base / "real.html").write_text("old")
        t.symlink_to("real.html")
    elif kind == "fifo":
        os.mkfifo(t)
    elif kind == "directory":
        t.mkdir()
    elif kind == "link-to-dir":
        (base / "d").mkdir()
        t.symlink_to("d")
    elif kind == "dangling-link":
        t.symlink_to("nowhere")
    elif kind == "the-input":
        t = source
    elif kind == "hard-link-to-input":
        os.link(source, t)
    elif kind == "below-a-file":
        (base / "f").write_text("x")
        t = base / "f" / "out.html"
    elif kind == "name-over-255-bytes":
        t = base / ("o" * 256)
    return t


@pytest.fixture(scope="module")
def ledger(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """A small claims ledger (the input ``report`` reads)."""
    base = tmp_path_factory.mktemp("ledger")
    r = run_cli(["claims", "--claim", "merchantbench.suffix-eviction", "--json", "l.json"], base)
    assert r.code == 0, r
    return (base / "l.json").read_bytes()


@fuzz_settings(ci=30, thorough=400)
@given(kind=st.sampled_from(sorted(KINDS)), writer=st.sampled_from(["report", "synth"]))
def test_fuzz_output_paths(
    tmp_path_factory: pytest.TempPathFactory, ledger: bytes, kind: str, writer: str
) -> None:
    base = tmp_path_factory.mktemp("out")
    source = base / "l.json"
    source.write_bytes(ledger)
    target = _plant(base, kind, source)
    argv = (
        ["report", str(source), "-o", str(target)]
        if writer == "report"
        else ["workload", "synth", "longmemeval", "--instances", "1", "--out", str(target)]
    )
    if writer == "synth" and kind in ("the-input", "hard-link-to-input"):
        argv = ["report", str(source), "-o", str(target)]  # synth reads nothing: the case is report's
    before = snapshot(base)

    r = run_cli(argv, base)

    assert_contract(r, before, snapshot(base))
    if KINDS[kind]:
        assert r.code == 2, (kind, r)
    else:
        assert r.code == 0, (kind, r)
        assert target.resolve().is_file() and source.read_bytes() == ledger
    shutil.rmtree(base)


# -- progress files -------------------------------------------------------------------------------------
CLAIM = "tracecraft.history-not-immutable"


def _verdicts(rows: list[Any]) -> list[Any]:
    return [
        (r.claim, d, x.ok, x.examples, x.first_counterexample) for r in rows for d, x in r.directions.items()
    ]


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Any]]:
    d = tmp_path_factory.mktemp("progress") / "p"
    rows = ex_run.run_ledger([cl.get(CLAIM)], 2, compare=False, resume=d)
    return d, _verdicts(rows)


@fuzz_settings(ci=25, thorough=300)
@given(data=st.data())
def test_fuzz_progress_files(
    tmp_path_factory: pytest.TempPathFactory, saved: tuple[Path, list[Any]], data: st.DataObject
) -> None:
    src, fresh = saved
    d = tmp_path_factory.mktemp("resume") / "p"
    shutil.copytree(src, d)
    files = sorted(p for p in d.iterdir() if p.suffix == ".json")
    for p in data.draw(st.lists(st.sampled_from(files), min_size=1, max_size=3, unique=True)):
        doc = json.loads(p.read_text())
        p.write_text(json.dumps(data.draw(mutated(doc)), default=str))

    try:
        rows = ex_run.run_ledger([cl.get(CLAIM)], 2, compare=False, resume=d)
    except UsageError:
        return
    assert _verdicts(rows) == fresh
