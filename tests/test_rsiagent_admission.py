"""Bank transport, journal, staged install, write_memory and admission (MEM-OBJ-memory,
MEM-OBJ-memory-journal, RT-RTE-learning-admission)."""

import gzip
import io
import json
import tarfile

import pytest

from sim.engine import Simulation
from sim.faults import Crash, FaultPlan, WriteFailed
from systems.rsiagent import faults as fp
from systems.rsiagent import model
from systems.rsiagent.model import (
    GuestVM,
    Host,
    PracticeInfrastructureError,
    UnsafeMemoryName,
    admit,
    atomic_install_memory,
    build_corpus,
    journal,
    journal_archive,
    pull_memory,
    pull_terminal_memory,
    push_memory,
    read_archive,
    recover_install,
    require_corpus,
    shingles,
    tree_sha256,
    validate_instruction_corpus,
    write_memory,
)
from systems.rsiagent.state import SWITCHES

LEAK = "open the quarterly budget spreadsheet and sort the second column"
CORPUS = build_corpus([LEAK])


def _sim(*faults: str) -> Simulation:
    sim = Simulation(3)
    sim.faults = FaultPlan.parse(list(faults))
    return sim


def test_push_replaces_the_guest_bank() -> None:
    """A push deletes the old guest bank and writes the new tree."""
    sim = _sim()
    vm = GuestVM(sim, "vm")
    vm.write_bank_file("old.md", b"old")

    assert push_memory(sim, vm, {"a.md": b"1", "d/b.md": b"2"})
    assert vm.bank() == {"a.md": b"1", "d/b.md": b"2"}


def test_failed_upload_leaves_an_empty_guest_bank() -> None:
    """The bank was deleted before the upload: a failed upload leaves it empty, and push returns False."""
    sim = _sim(f"fail@{fp.PUSH_UPLOAD}")
    vm = GuestVM(sim, "vm")
    vm.write_bank_file("old.md", b"old")

    assert not push_memory(sim, vm, {"a.md": b"1"})
    assert vm.bank() == {}


def test_failed_extract_leaves_a_partial_guest_bank() -> None:
    """A failure on the second file leaves the first one: not atomic."""
    sim = _sim(f"fail@{fp.PUSH_EXTRACT}#2")
    vm = GuestVM(sim, "vm")

    assert not push_memory(sim, vm, {"a.md": b"1", "b.md": b"2"})
    assert vm.bank() == {"a.md": b"1"}


def test_pull_skips_bytecode() -> None:
    """The pull drops __pycache__ paths and .pyc/.pyo files."""
    sim = _sim()
    vm = GuestVM(sim, "vm")
    for n in ["a.py", "__pycache__/a.cpython.pyc", "b.pyo", "c.md"]:
        vm.write_bank_file(n, b"x")

    assert pull_memory(sim, vm) == {"a.py": b"x", "c.md": b"x"}


def test_pull_retries_then_returns_empty() -> None:
    """Two failures then success returns the bank; three failures return {}."""
    sim = _sim(f"fail@{fp.PULL_ATTEMPT}#1", f"fail@{fp.PULL_ATTEMPT}#2")
    vm = GuestVM(sim, "vm")
    vm.write_bank_file("a.md", b"1")
    assert pull_memory(sim, vm) == {"a.md": b"1"}

    sim = _sim(*(f"fail@{fp.PULL_ATTEMPT}#{i}" for i in (1, 2, 3)))
    vm = GuestVM(sim, "vm")
    vm.write_bank_file("a.md", b"1")
    assert pull_memory(sim, vm) == {}
    assert [op.data.get("backoff_s") for op in sim.trace.data.ops if op.op == "pull_memory"][:3] == [
        15.0,
        15.0,
        15.0,
    ]


def test_terminal_pull_tells_empty_from_failed() -> None:
    """An existing empty bank pulls as {}; a failed pull of a non-empty bank is infra."""
    sim = _sim()
    vm = GuestVM(sim, "vm")
    vm.volume.mkdir(vm.MEMORY)
    assert pull_terminal_memory(sim, vm) == {}

    sim = _sim(*(f"fail@{fp.PULL_ATTEMPT}#{i}" for i in (1, 2, 3)))
    vm = GuestVM(sim, "vm")
    vm.write_bank_file("a.md", b"1")
    with pytest.raises(PracticeInfrastructureError):
        pull_terminal_memory(sim, vm)


def test_terminal_pull_missing_directory_and_pycache_name() -> None:
    """A missing guest bank is infra; a name containing __pycache__ is dropped but counted: infra."""
    sim = _sim()
    with pytest.raises(PracticeInfrastructureError):
        pull_terminal_memory(sim, GuestVM(sim, "vm"))
    vm = GuestVM(sim, "vm2")
    vm.write_bank_file("a__pycache__b", b"x")
    with pytest.raises(PracticeInfrastructureError, match="1 files, pull returned 0"):
        pull_terminal_memory(sim, vm)


def test_journal_archive_is_sorted_gzip_tar_with_fixed_mtime() -> None:
    """ep{NNN}.tgz: a real gzip tar, files sorted, every mtime the given clock; same input, same bytes."""
    data = journal_archive({"b.md": b"2", "a/x.md": b"1"}, 1_767_571_200)

    assert data == journal_archive({"a/x.md": b"1", "b.md": b"2"}, 1_767_571_200)
    assert gzip.decompress(data)[:5] != b""
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        assert [m.name for m in tar.getmembers()] == ["a/x.md", "b.md"]
        assert {m.mtime for m in tar.getmembers()} == {1_767_571_200}
    assert int.from_bytes(data[4:8], "little") == 1_767_571_200
    assert read_archive(data) == {"a/x.md": b"1", "b.md": b"2"}


def test_journal_archive_bytes_equal_tarfile_w_gz_on_the_named_file(tmp_path: object) -> None:
    """``journal`` opens ``tarfile.open(path, "w:gz")``, so the gzip header carries the file name
    (``ep001.tgz``); with the clock pinned, upstream's construction gives exactly the model's bytes."""
    from pathlib import Path
    from unittest import mock

    files = {"b.md": b"2", "a/x.md": b"1" * 300}
    path = Path(str(tmp_path)) / "ep001.tgz"
    with mock.patch("time.time", return_value=1_767_571_200.0), tarfile.open(path, "w:gz") as tf:
        for rel, data in sorted(files.items()):
            info = tarfile.TarInfo(rel)
            info.size = len(data)
            info.mtime = 1_767_571_200
            tf.addfile(info, io.BytesIO(data))

    ours = journal_archive(files, 1_767_571_200, "ep001.tgz")
    assert ours == path.read_bytes()
    assert ours[3] & 0x08 and ours[10:20] == b"ep001.tgz\x00"
    sim = _sim()
    host = Host(sim, corpus=CORPUS)
    journal(sim, host, 1, files, {"kind": "practice-terminal-memory", "terminal_outcome": "PASS"})
    assert host.volume.tree.read_bytes("lineage/memory_journal/ep001.tgz")[10:20] == b"ep001.tgz\x00"


def test_memos_match_fresh_computation_for_small_and_large_trees() -> None:
    """The content memos of tree_sha256 and the archive return what a fresh computation returns."""
    small = {"a.md": b"1", "b.md": b"2"}
    large = {f"f{i}.md": bytes([65 + i % 26]) * 2_000 for i in range(40)}  # 80 KB: above the memo limit
    for tree in (small, large):
        items = tuple(sorted(tree.items()))
        assert tree_sha256(tree) == model._tree_sha256.__wrapped__(items)
        assert journal_archive(tree, 7) == model._journal_archive.__wrapped__(items, 7)
        assert read_archive(journal_archive(tree, 7)) == tree


def test_read_memory_tree_missing_root_is_empty_file_root_raises() -> None:
    """_read_memory_tree: a missing root gives {}; a root that is not a directory raises."""
    sim = _sim()
    vm = GuestVM(sim, "vm")
    assert vm.bank() == {}
    vm.volume.write(vm.MEMORY, b"not a directory")
    with pytest.raises(NotADirectoryError):
        vm.bank()


def test_journal_line_format_and_meta_wins() -> None:
    """One jsonl line {episode, files, bytes, ts, **meta}, meta merged last."""
    sim = _sim()
    host = Host(sim, corpus=CORPUS)
    journal(sim, host, 7, {"a.md": b"123"}, {"kind": "practice", "terminal_outcome": "PASS", "files": "meta"})

    line = json.loads(host.volume.tree.read_text("lineage/memory_journal/journal.jsonl"))
    assert line == {
        "episode": 7,
        "files": "meta",
        "bytes": 3,
        "ts": "2026-01-05 00:00:00",
        "kind": "practice",
        "terminal_outcome": "PASS",
    }
    assert host.volume.tree.exists("lineage/memory_journal/ep007.tgz")


def test_repeated_episode_overwrites_archive_keeps_both_lines() -> None:
    """journal(d,3,A) then journal(d,3,B): the tgz holds B, the jsonl has two lines (reproduced upstream)."""
    sim = _sim()
    host = Host(sim, corpus=CORPUS)
    journal(sim, host, 3, {"a.md": b"A"}, {})
    journal(sim, host, 3, {"b.md": b"B"}, {})

    assert read_archive(host.volume.tree.read_bytes("lineage/memory_journal/ep003.tgz")) == {"b.md": b"B"}
    assert len(host.journal_lines()) == 2
    other = journal(sim, host, 3, {"c.md": b"C"}, {}, root="unified/cycle_002/memory_journal")
    assert other.episode == 3 and len(host.journal_lines()) == 2  # another lineage root: its own journal


def test_staged_install_order_and_cleanup() -> None:
    """Files fsynced, then directories deepest first, then the stage root, then the parent; no leftovers."""
    sim = _sim()
    host = Host(sim, corpus=CORPUS)
    host.volume.write("lineage/memory/old.md", b"old")

    rec = atomic_install_memory(sim, host, {"d/e/x.md": b"1", "a.md": b"2"})

    s = rec.stage
    assert rec.fsyncs == (f"{s}/a.md", f"{s}/d/e/x.md", f"{s}/d/e", f"{s}/d", s, "lineage")
    assert host.canonical() == {"d/e/x.md": b"1", "a.md": b"2"}
    assert host.volume.siblings("lineage", ".memory.") == []
    assert rec.backup is not None and rec.backup.startswith("lineage/.memory.backup-4242-")


def test_install_window_reads_empty_and_crash_orphans_backup() -> None:
    """Between the renames the bank reads {}; a crash there leaves no bank and an orphaned backup."""
    sim = _sim(f"crash@{fp.INSTALL_BETWEEN_RENAMES}")
    host = Host(sim, corpus=CORPUS)
    host.volume.write("lineage/memory/old.md", b"old")
    seen = []
    host.volume.observe = lambda p: seen.append((p, host.canonical()))

    with pytest.raises(Crash):
        atomic_install_memory(sim, host, {"new.md": b"1"})

    assert (fp.INSTALL_BETWEEN_RENAMES, {}) in seen
    assert host.canonical() == {}
    assert len(host.volume.siblings("lineage", ".memory.backup-")) == 1


def test_failed_stage_rename_restores_the_backup() -> None:
    """A failed rename of the stage renames the backup back and re-raises."""
    sim = _sim(f"fail@{fp.INSTALL_RENAME}")
    host = Host(sim, corpus=CORPUS)
    host.volume.write("lineage/memory/old.md", b"old")

    with pytest.raises(WriteFailed):
        atomic_install_memory(sim, host, {"new.md": b"1"})

    assert host.canonical() == {"old.md": b"old"}
    assert host.volume.siblings("lineage", ".memory.") == []


def test_exchange_install_with_recovery() -> None:
    """Fixed variant: no read sees {}, and startup recovery leaves old or new with no orphan."""
    for point in fp.INSTALL_POINTS:
        sim = _sim(f"crash@{point}")
        host = Host(sim, corpus=CORPUS, variant=SWITCHES.fixed("exchange-install"))
        host.volume.write("lineage/memory/old.md", b"old")
        try:
            atomic_install_memory(sim, host, {"new.md": b"1"})
        except Crash:
            recover_install(sim, host)
        assert host.canonical() in ({"old.md": b"old"}, {"new.md": b"1"})
        assert host.volume.siblings("lineage", ".memory.") == []


def test_install_refuses_unsafe_names() -> None:
    """Unsafe names are refused before anything is staged."""
    sim = _sim()
    with pytest.raises(UnsafeMemoryName):
        atomic_install_memory(sim, Host(sim, corpus=CORPUS), {"../x": b"1"})


def test_write_memory_deletes_first_and_escapes_the_bank() -> None:
    """write_memory wipes the bank, writes in order, lets ../x land beside it, and a name that climbs out of
    the root (or an absolute one) lands there too: the tree records it under its resolved target
    (``explore/commit.py:121-135`` joins names unchecked)."""
    sim = _sim()
    host = Host(sim, corpus=CORPUS)
    host.volume.write("lineage/memory/old.md", b"old")

    res = write_memory(sim, host, {"a.md": b"1", "../x.md": b"2", "../../../y": b"3", "/tmp/z": b"4"})

    assert host.canonical() == {"a.md": b"1"}
    assert host.volume.tree.read_bytes("lineage/x.md") == b"2"
    assert res.written == ("a.md", "../x.md", "../../../y", "/tmp/z")
    assert res.escaped == ("../x.md", "../../../y", "/tmp/z") and res.outside == ("../y", "/tmp/z")
    assert host.volume.tree.outside == {"../y": b"3", "/tmp/z": b"4"}
    assert host.journal_lines() == []


def test_confined_names_refuse_the_whole_write() -> None:
    """Fix ``confine-memory-names``: one name that fails ``_safe_memory_name`` refuses the write before
    anything is deleted; safe names (``./c.md`` included) are written."""
    sim = _sim()
    host = Host(sim, corpus=CORPUS, variant=SWITCHES.fixed("confine-memory-names"))
    host.volume.write("lineage/memory/old.md", b"old")

    with pytest.raises(UnsafeMemoryName):
        write_memory(sim, host, {"a.md": b"1", "../x.md": b"2"})
    assert host.canonical() == {"old.md": b"old"} and host.volume.tree.outside == {}
    write_memory(sim, host, {"a.md": b"1", "./c.md": b"3"})
    assert host.canonical() == {"a.md": b"1", "c.md": b"3"}


def test_write_memory_crash_leaves_partial_bank() -> None:
    """A crash before the second file leaves only the first."""
    sim = _sim(f"crash@{fp.WRITE_MEMORY_EACH}#2")
    host = Host(sim, corpus=CORPUS)
    host.volume.write("lineage/memory/old.md", b"old")
    with pytest.raises(Crash):
        write_memory(sim, host, {"a.md": b"1", "b.md": b"2"})

    assert host.canonical() == {"a.md": b"1"}


def test_admit_rejects_whole_candidate_and_quarantines() -> None:
    """A single leaking file rejects the candidate: no journal, bank unchanged, run quarantined."""
    sim = _sim()
    host = Host(sim, corpus=CORPUS)
    host.volume.write("lineage/memory/old.md", b"old")

    out = admit(sim, host, {"ok.md": b"fine", "leak.md": LEAK.encode()}, episode=1, authorized="", meta={})

    assert out == "quarantined" and host.state == "quarantined"
    assert host.canonical() == {"old.md": b"old"}
    assert host.journal_lines() == []
    lines = host.volume.tree.read_text("lineage/audit_rejects.jsonl").splitlines()
    entry = json.loads(lines[0])
    assert len(lines) == 1 and entry["file"] == "leak.md" and 0 < len(entry["hits"]) <= 3
    assert len(entry["ts"]) == 8 and entry["ts"].count(":") == 2  # "%H:%M:%S"
    assert not host.volume.tree.exists("lineage/boundary_audit.json")
    state = json.loads(host.volume.tree.read_text("lineage/state.json"))
    assert state["status"] == "quarantined" and state["memory_manifest"] == model.manifest({"old.md": b"old"})


def test_corpus_normalization_removes_only_the_labelled_credentials_block() -> None:
    """``build_corpus`` shingles instructions as given; ``normalize_instruction_for_corpus`` removes only
    the labelled ``Overleaf login credentials`` block, label included (``explore/commit.py:172``), and an
    empty corpus entry is rejected (``commit.py:212``)."""
    from systems.rsiagent.model import normalize_instruction_for_corpus

    text = (
        "Log in to Overleaf and compile the paper.\n\nOverleaf login credentials — Email: a@b.c\n"
        "Password: hunter2 xyz\n"
    )
    assert normalize_instruction_for_corpus(text) == "Log in to Overleaf and compile the paper."
    unlabelled = "Use Email: a@b.c and Password: hunter2 to log in to the site now please."
    assert normalize_instruction_for_corpus(unlabelled) == unlabelled
    assert any("password hunter2" in g for g in build_corpus([unlabelled]))
    raw = json.dumps(["", "a b c d e f g h"]).encode()
    sidecar = {
        "schema_version": 2,
        "benchmark": "OSWorld-V2",
        "evaluation_version": "v2",
        "normalization": "strip-dynamic-overleaf-credentials-v1",
        "instruction_count": 108,
        "absent_task_ids": [],
        "shingle_count": 2,
        "corpus_sha256": __import__("hashlib").sha256(raw).hexdigest(),
    }
    with pytest.raises(ValueError, match="non-empty strings"):
        validate_instruction_corpus(raw, sidecar)


def test_pathlib_names_install_at_their_normalized_path() -> None:
    """Safe-by-pathlib names (``a//b``, ``./c``) are staged where ``stage / name`` lands."""
    sim = _sim()
    host = Host(sim, corpus=CORPUS)

    atomic_install_memory(sim, host, {"a//b.md": b"1", "./c.md": b"2"})

    assert host.canonical() == {"a/b.md": b"1", "c.md": b"2"}


def test_journal_is_written_before_the_install() -> None:
    """An install that fails leaves a journal line for a tree that was never installed (upstream)."""
    sim = _sim(f"fail@{fp.INSTALL_STAGE}")
    host = Host(sim, corpus=CORPUS)
    with pytest.raises(WriteFailed):
        admit(sim, host, {"a.md": b"1"}, episode=1, authorized="", meta={})

    assert len(host.journal_lines()) == 1 and host.canonical() == {}


def test_corpus_is_required_and_validated() -> None:
    """A missing or empty corpus raises; the sidecar manifest must match exactly."""
    with pytest.raises(PracticeInfrastructureError):
        require_corpus(frozenset())
    data = sorted(shingles(LEAK))
    raw = json.dumps(data).encode()
    import hashlib

    side = {
        "schema_version": 2,
        "benchmark": "OSWorld-V2",
        "evaluation_version": "v2",
        "normalization": "strip-dynamic-overleaf-credentials-v1",
        "instruction_count": 108,
        "absent_task_ids": [],
        "shingle_count": len(data),
        "corpus_sha256": hashlib.sha256(raw).hexdigest(),
    }
    assert validate_instruction_corpus(raw, side) == frozenset(data)
    with pytest.raises(ValueError):
        validate_instruction_corpus(raw, {**side, "instruction_count": 107})
    with pytest.raises(ValueError):
        bad = json.dumps(list(reversed(data))).encode()
        validate_instruction_corpus(bad, {**side, "corpus_sha256": hashlib.sha256(bad).hexdigest()})


def test_disk_tree_gives_the_same_install() -> None:
    """The staged install behaves the same on the sandboxed disk tree."""
    with Simulation(1) as sim:
        host = Host(sim, kind="disk", corpus=CORPUS)
        host.volume.write("lineage/memory/old.md", b"old")
        atomic_install_memory(sim, host, {"n/a.md": b"1"})
        assert host.canonical() == {"n/a.md": b"1"}
        res = write_memory(sim, host, {"../../../../etc/x": b"1"})
        assert res.outside == ("../../etc/x",) and host.volume.tree.outside == {"../../etc/x": b"1"}
        assert not (host.volume.tree.root.parent.parent / "etc").exists()  # recorded, never written
