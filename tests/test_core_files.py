"""The file tree: the in-memory backend agrees with the real-disk backend, and the disk backend never
writes outside its run root.

The differential machine drives :class:`~sim.files.MemoryTree`, :class:`~sim.files.DiskTree` (under
pytest's ``tmp_path``) and a trivial reference model (a dict of canonical path to bytes and mtime) with
the same operations, each path spelled differently per call (``./``, ``//``, backslashes, ``x/../``
detours), with texts mixing ``\\r\\n``, lone ``\\r`` and unicode, and mtimes from a fake agent clock.
Reads with newline translation are checked against Python's own text-mode reader (``io.TextIOWrapper``).
"""

from __future__ import annotations

import errno
import io
import itertools
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    initialize,
    invariant,
    multiple,
    precondition,
    rule,
    run_state_machine_as_test,
)
from strategies import adversarial_paths, dir_paths, file_paths, spellings, texts

from sim.clock import AgentClock
from sim.errors import MemsimError
from sim.faults import Crash
from sim.files import (
    DiskTree,
    FileMissing,
    FileTree,
    HardLinked,
    InvalidName,
    MemoryTree,
    NameTooLong,
    PathConflict,
    PathEscape,
    escape_target,
    normalize,
    universal_newlines,
)


def python_text_read(data: bytes, newline: str | None) -> str:
    """What ``open(path, encoding="utf-8", newline=newline).read()`` returns for *data*."""
    return io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", newline=newline).read()


def outcome(call: object) -> object:
    """The result of *call*, or the name of the memsim error it raised."""
    try:
        return call()  # type: ignore[operator]
    except (MemsimError, UnicodeDecodeError) as exc:
        return type(exc).__name__


class FakeClock:
    """A settable simulation time driving an :class:`AgentClock` (the writer's mtime source)."""

    def __init__(self) -> None:
        self.now = 0.0
        self.clock = AgentClock(lambda: self.now, name="writer")


def ns_grid(mtime: float) -> float:
    """An mtime on the nanosecond grid both backends store."""
    return round(mtime * 1e9) / 1e9


# -- the differential machine ------------------------------------------------------------------------
class TreeAgreement(RuleBasedStateMachine):
    """MemoryTree, DiskTree and a dict, driven with the same operations, must agree on every result,
    listing, byte and mtime."""

    paths = Bundle("paths")

    def __init__(self, root: Path) -> None:
        super().__init__()
        self.time = FakeClock()
        self.memory = MemoryTree()
        self.disk = DiskTree(root)
        self.model: dict[str, tuple[bytes, float]] = {}
        self.fsyncs: list[str] = []

    def both(self, call: object) -> object:
        """Run *call(tree)* on both backends, assert they agree, return the common result."""
        mem = outcome(lambda: call(self.memory))  # type: ignore[operator]
        disk = outcome(lambda: call(self.disk))  # type: ignore[operator]
        assert mem == disk
        return mem

    def stamp(self) -> float:
        return ns_grid(self.time.clock.seconds())

    # -- rules -----------------------------------------------------------------------------------------
    @initialize(
        target=paths,
        seeded=st.lists(st.tuples(file_paths(), texts), min_size=1, max_size=5, unique_by=lambda pt: pt[0]),
    )
    def seed(self, seeded: list[tuple[str, str]]) -> object:
        """Start from a few files, so reads, renames and listings meet existing files."""
        for path, text in seeded:
            self.both(lambda t, path=path, text=text: t.write_text(path, text, clock=self.time.clock.seconds))
            self.model[path] = (text.encode("utf-8"), self.stamp())
        return multiple(*(p for p, _ in seeded))

    @rule(target=paths, path=file_paths())
    def new_path(self, path: str) -> str:
        return path

    @rule(dt=st.floats(0, 5e6, allow_nan=False), skew=st.sampled_from((0.0, 0.0, -600.0, 0.5, 1e-9)))
    def tick(self, dt: float, skew: float) -> None:
        """Simulation time passes; sometimes the writer's clock is skewed."""
        self.time.now += dt
        self.time.clock.skew(skew)

    @rule(path=paths, text=texts, data=st.data())
    def write_text(self, path: str, text: str, data: st.DataObject) -> None:
        spelled = data.draw(spellings(path))
        n = self.both(lambda t: t.write_text(spelled, text, clock=self.time.clock.seconds))
        assert n == len(text.encode("utf-8"))
        self.model[path] = (text.encode("utf-8"), self.stamp())

    @rule(path=paths, body=st.binary(max_size=16), data=st.data())
    def write_bytes(self, path: str, body: bytes, data: st.DataObject) -> None:
        spelled = data.draw(spellings(path))
        self.both(lambda t: t.write_bytes(spelled, body, clock=self.time.clock.seconds))
        self.model[path] = (body, self.stamp())

    @rule(path=paths, text=texts, data=st.data())
    def append_text(self, path: str, text: str, data: st.DataObject) -> None:
        spelled = data.draw(spellings(path))
        self.both(lambda t: t.append_text(spelled, text, clock=self.time.clock.seconds))
        old = self.model.get(path, (b"", 0.0))[0]
        self.model[path] = (old + text.encode("utf-8"), self.stamp())

    @rule(path=paths, translate=st.booleans(), data=st.data())
    def read_text(self, path: str, translate: bool, data: st.DataObject) -> None:
        spelled = data.draw(spellings(path))
        got = self.both(lambda t: t.read_text(spelled, translate_newlines=translate))
        if path not in self.model:
            assert got == "FileMissing"
        else:
            assert got == outcome(lambda: python_text_read(self.model[path][0], None if translate else ""))

    @rule(path=paths)
    def read_bytes(self, path: str) -> None:
        got = self.both(lambda t: t.read_bytes(path))
        assert got == (self.model[path][0] if path in self.model else "FileMissing")

    @rule(
        path=paths,
        body=st.binary(max_size=16),
        suffix=st.sampled_from((".tmp", ".new", "~")),
        crash=st.booleans(),
    )
    def replace_atomic(self, path: str, body: bytes, suffix: str, crash: bool) -> None:
        """Temp file + rename; a crash between the two leaves the temp file and the old content."""

        def between() -> None:
            if crash:
                raise Crash("test.replace_atomic.between")

        got = self.both(
            lambda t: t.replace_atomic(
                path, body, tmp_suffix=suffix, clock=self.time.clock.seconds, between=between
            )
        )
        self.model[path + suffix] = (body, self.stamp())
        if crash:
            assert got == "Crash"
        else:
            self.model[path] = self.model.pop(path + suffix)

    @rule(src=paths, dst=paths)
    def rename(self, src: str, dst: str) -> None:
        got = self.both(lambda t: t.rename(src, dst))
        if src not in self.model:
            assert got == "FileMissing"
        else:
            self.model[dst] = self.model.pop(src)

    @rule(src=dir_paths(), dst=dir_paths())
    def rename_dir(self, src: str, dst: str) -> None:
        """Moves every file under *src* to *dst*. Where ``os.rename`` would refuse (dst inside src, or
        a non-empty dst; see test_rename_dir_refuses_like_os_rename) the backends only have to agree
        with each other, and the model is re-read from the in-memory tree."""
        self.both(lambda t: t.rename_dir(src, dst))
        inside = dst.startswith(src + "/") or src.startswith(dst + "/")
        if src == dst or inside or any(p.startswith(dst + "/") for p in self.model):
            self.model = {p: (self.memory.read_bytes(p), self.memory.mtime(p)) for p in self.memory.list()}
            assert self.model == {p: (self.disk.read_bytes(p), self.disk.mtime(p)) for p in self.disk.list()}
            return
        moved = {p: v for p, v in self.model.items() if p.startswith(src + "/")}
        for p in moved:
            del self.model[p]
        for p, v in moved.items():
            self.model[dst + p[len(src) :]] = v

    @rule(path=paths)
    def delete(self, path: str) -> None:
        got = self.both(lambda t: t.delete(path))
        if path in self.model:
            del self.model[path]
        else:
            assert got == "FileMissing"

    @rule(directory=dir_paths())
    def rmtree(self, directory: str) -> None:
        gone = [p for p in self.model if p.startswith(directory + "/")]
        assert self.both(lambda t: t.rmtree(directory)) == len(gone)
        for p in gone:
            del self.model[p]

    @rule(path=paths | dir_paths())
    def fsync(self, path: str) -> None:
        self.both(lambda t: t.fsync(path))
        self.fsyncs.append(path)

    @rule(path=paths)
    def exists_and_mtime(self, path: str) -> None:
        assert self.both(lambda t: t.exists(path)) == (path in self.model)
        got = self.both(lambda t: t.mtime(path))
        assert got == (self.model[path][1] if path in self.model else "FileMissing")

    @precondition(lambda self: self.model)
    @rule(directory=st.sampled_from(("", ".")) | dir_paths())
    def list(self, directory: str) -> None:
        prefix = "" if directory in ("", ".") else directory + "/"
        expected = sorted(p for p in self.model if p.startswith(prefix))
        assert self.both(lambda t: t.list(directory)) == expected
        assert self.both(lambda t: t.is_dir(directory)) == bool(expected)
        assert self.both(lambda t: t.total_bytes(directory)) == sum(len(self.model[p][0]) for p in expected)

    # -- invariants ------------------------------------------------------------------------------------
    @invariant()
    def same_files_bytes_and_mtimes(self) -> None:
        assert self.memory.list() == self.disk.list() == sorted(self.model)
        for p, (body, mtime) in self.model.items():
            assert self.memory.read_bytes(p) == self.disk.read_bytes(p) == body
            assert self.memory.mtime(p) == self.disk.mtime(p) == mtime

    @invariant()
    def same_fsync_log_and_op_count(self) -> None:
        assert self.memory.fsyncs == self.disk.fsyncs == self.fsyncs
        assert self.memory.ops == self.disk.ops


def test_memory_tree_agrees_with_disk_tree(tmp_path: Path) -> None:
    """Generated write / append / read (raw and translated) / replace_atomic (with crashes) / rename /
    rename_dir / delete / rmtree / fsync / list programs give the same results, bytes and mtimes on
    MemoryTree, DiskTree and the dict model."""
    runs = itertools.count()

    run_state_machine_as_test(
        lambda: TreeAgreement(tmp_path / f"run{next(runs)}"),  # type: ignore[arg-type]
        settings=settings(
            max_examples=40,
            stateful_step_count=25,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow],
        ),
    )


# -- escape: the disk backend never writes outside the run root ----------------------------------------
SECRET = b"SECRET outside the run root"


def plant(base: Path) -> tuple[Path, Path, Path]:
    """A run root with symlinks pointing out of it, a sentinel directory that must stay empty and a
    victim directory whose file must stay unchanged (both siblings of the root)."""
    root, sentinel, victim = base / "root", base / "sentinel", base / "victim"
    for d in (root / "d0", sentinel, victim):
        d.mkdir(parents=True)
    (victim / "secret.txt").write_bytes(SECRET)
    (root / "d0" / "x.md").write_bytes(b"inside")
    links = {
        "up": "..",  # the base directory
        "out": str(sentinel),  # absolute, outside
        "victim": str(victim / "secret.txt"),  # a file outside
        "dangling": str(sentinel / "not-yet" / "deeper"),  # outside and missing
        "in": "d0",  # inside: allowed
        "d0/up2": "../..",  # nested, pointing above the root
    }
    for name, target in links.items():
        os.symlink(target, root / name)
    return root, sentinel, victim


def snapshot(base: Path) -> dict[str, bytes | None]:
    """Every entry under *base* outside ``root/``: path to bytes (None for directories and symlinks)."""
    out: dict[str, bytes | None] = {}
    for dirpath, dirs, files in os.walk(base):
        rel = Path(dirpath).relative_to(base)
        if rel.parts[:1] == ("root",):
            continue
        for name in dirs + files:
            p = Path(dirpath) / name
            key = (rel / name).as_posix()
            if key == "root":
                continue
            out[key] = p.read_bytes() if p.is_file() and not p.is_symlink() else None
    return out


OPS = (
    "write_text",
    "append_text",
    "write_bytes",
    "write_outside",
    "replace_atomic",
    "rename_to",
    "rename_from",
    "rename_dir",
    "delete",
    "read_bytes",
    "exists",
    "mtime",
    "rmtree",
    "list",
    "total_bytes",
)


def attempt(tree: FileTree, op: str, path: str) -> object:
    """Apply *op* with the adversarial *path* to *tree*; returns what came back (None for writes)."""
    clock = lambda: 1_767_571_200.0  # noqa: E731
    writes = {
        "append_text": lambda: tree.append_text(path, "pwned", clock=clock),
        "write_bytes": lambda: tree.write_bytes(path, b"pwned", clock=clock),
        "write_outside": lambda: tree.write_outside(path, b"pwned"),
        "replace_atomic": lambda: tree.replace_atomic(path, b"pwned", clock=clock),
        "rename_to": lambda: tree.rename("d0/x.md", path),
        "rename_from": lambda: tree.rename(path, "d0/moved.md"),
        "rename_dir": lambda: tree.rename_dir("d0", path),
        "delete": lambda: tree.delete(path),
    }
    if op in writes:
        writes[op]()
        return None
    if op == "write_text":
        return tree.write_text(path, "pwned\r\n", clock=clock)
    if op == "read_bytes":
        return tree.read_bytes(path)
    if op == "exists":
        return tree.exists(path)
    if op == "mtime":
        return tree.mtime(path)
    if op == "rmtree":
        return tree.rmtree(path)
    if op == "list":
        return [tree.read_bytes(p) for p in tree.list(path)]
    return tree.total_bytes(path)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=st.lists(st.tuples(st.sampled_from(OPS), adversarial_paths()), min_size=1, max_size=6))
@example(steps=[("write_text", "../sentinel/x")])
@example(steps=[("write_outside", "../sentinel/x"), ("write_outside", "@SENTINEL/x")])
@example(steps=[("write_text", "@SENTINEL/x")])
@example(steps=[("write_text", "out/x")])
@example(steps=[("write_text", "dangling")])
@example(steps=[("append_text", "up/sentinel/x")])
@example(steps=[("write_bytes", "d0/up2/sentinel/x")])
@example(steps=[("rename_to", "out/stolen.md")])
@example(steps=[("rename_from", "victim")])
@example(steps=[("delete", "victim")])
@example(steps=[("read_bytes", "up/victim/secret.txt")])
@example(steps=[("rename_dir", "../sentinel")])
@example(steps=[("replace_atomic", "..\\sentinel\\x")])
@example(steps=[("write_text", "a\x00b")])
def test_disk_tree_never_writes_outside_root(
    tmp_path_factory: pytest.TempPathFactory, steps: list[tuple[str, str]]
) -> None:
    """For generated adversarial paths (``..``, absolute and drive paths, backslashes, NUL, symlinks in
    the tree pointing out), every operation either raises PathEscape / FileMissing or stays inside the
    root; afterwards the sentinel directory is empty, the outside file is unchanged and nothing new
    exists outside the root. No read ever returns the outside file's bytes."""
    base = tmp_path_factory.mktemp("escape")
    root, sentinel, victim = plant(base)
    before = snapshot(base)
    tree = DiskTree(root)

    for op, raw in steps:
        path = raw.replace("@SENTINEL", str(sentinel)).replace("@VICTIM", str(victim))
        try:
            result = attempt(tree, op, path)
        except (PathEscape, FileMissing):
            continue
        except OSError:
            continue  # e.g. a name too long, or a file where a directory is needed: refused, inside
        assert SECRET not in repr(result).encode()

    assert list(sentinel.iterdir()) == []
    assert (victim / "secret.txt").read_bytes() == SECRET
    assert snapshot(base) == before


ESCAPING = [
    "..",
    "../x",
    "a/../../x",
    "a/b/../../..",
    "/etc/passwd",
    "//x",
    "\\x",
    "..\\x",
    "a\\..\\..\\x",
    "C:\\x",
    "c:/x",
    "\\\\server\\share\\x",
    "a\x00b",
    "",
    ".",
    "a/..",
]


@pytest.mark.parametrize("path", ESCAPING, ids=[repr(p) for p in ESCAPING])
def test_normalize_refuses_escaping_paths(path: str) -> None:
    """Absolute, drive, UNC, NUL, empty, root-itself and ``..``-escaping paths raise PathEscape."""
    with pytest.raises(PathEscape):
        normalize(path)


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("a/b", "a/b"),
        ("./a//b/", "a/b"),
        ("a\\b", "a/b"),
        ("a/./b/../c", "a/c"),
        ("...", "..."),
        ("\u2024\u2024/x", "\u2024\u2024/x"),
        ("a/..b", "a/..b"),
        ("%2e%2e/x", "%2e%2e/x"),
    ],
)
def test_normalize_canonical_forms(path: str, expected: str) -> None:
    """Equivalent spellings normalize to one relative POSIX path; dot look-alikes are ordinary names."""
    assert normalize(path) == expected


@pytest.mark.parametrize("link", ["up/sentinel/x", "out/x", "dangling", "d0/up2/sentinel/x", "victim"])
def test_symlinks_pointing_out_raise_path_escape(tmp_path: Path, link: str) -> None:
    """A write through a symlink that resolves outside the root is refused with PathEscape."""
    root, sentinel, _victim = plant(tmp_path)
    tree = DiskTree(root)

    with pytest.raises(PathEscape):
        tree.write_text(link, "pwned")
    assert list(sentinel.iterdir()) == []


def test_symlink_inside_root_is_followed(tmp_path: Path) -> None:
    """A symlink that stays inside the root works; listing shows real files only, not the link."""
    root, _s, _v = plant(tmp_path)
    tree = DiskTree(root)

    tree.write_text("in/new.md", "ok")
    assert (root / "d0" / "new.md").read_text() == "ok"
    assert tree.list() == ["d0/new.md", "d0/x.md"]


def test_symlink_loop_raises_path_escape(tmp_path: Path) -> None:
    """A path through a symlink loop is refused with PathEscape, not an internal RuntimeError."""
    root = tmp_path / "root"
    root.mkdir()
    os.symlink("loop", root / "loop")
    tree = DiskTree(root)

    with pytest.raises(PathEscape):
        tree.write_text("loop/x", "pwned")


# -- unit tests --------------------------------------------------------------------------------------
@pytest.fixture(params=["memory", "disk"])
def tree(request: pytest.FixtureRequest, tmp_path: Path) -> FileTree:
    """Each backend in turn."""
    return MemoryTree() if request.param == "memory" else DiskTree(tmp_path / "root")


def test_write_outside_records_the_target_and_touches_nothing(tree: FileTree, tmp_path: Path) -> None:
    """A write the modeled system makes outside the root is recorded under its resolved target (relative to
    the root, or absolute) and never made: no file appears inside or outside the root. A path that stays
    inside is refused (it is an ordinary write)."""
    before = snapshot(tmp_path)

    assert tree.write_outside("lineage/memory/../../../z.md", b"1") == "../z.md"
    assert tree.write_outside("a/../../x/./y.md", b"2") == "../x/y.md"
    assert tree.write_outside("/tmp/abs.md", b"3") == "/tmp/abs.md"
    with pytest.raises(PathEscape):
        tree.write_outside("a/../b.md", b"4")

    assert tree.outside == {"../z.md": b"1", "../x/y.md": b"2", "/tmp/abs.md": b"3"}
    assert tree.list() == [] and snapshot(tmp_path) == before
    assert [escape_target(p) for p in ("", "a\x00b", "a/..", "..", "a\\..\\..\\x")] == [
        None,
        None,
        None,
        "..",
        "../x",
    ]


def test_read_text_translates_crlf_and_lone_cr(tree: FileTree) -> None:
    """Bytes are stored as written; read_text gives universal newlines unless asked for the raw text."""
    tree.write_text("n.md", "a\r\nb\rc\n\rd")

    assert tree.read_bytes("n.md") == b"a\r\nb\rc\n\rd"
    assert tree.read_text("n.md") == "a\nb\nc\n\nd"
    assert tree.read_text("n.md", translate_newlines=False) == "a\r\nb\rc\n\rd"


@given(texts)
def test_universal_newlines_matches_python_text_mode(text: str) -> None:
    """``universal_newlines`` is what Python's text-mode reader returns for the same bytes."""
    assert universal_newlines(text) == python_text_read(text.encode("utf-8"), None)


def test_mtime_comes_from_the_writer_clock(tree: FileTree) -> None:
    """Each write stamps the writer's clock; append restamps; rename keeps the file's mtime."""
    t = FakeClock()
    t.now = 1.5
    tree.write_text("a.md", "x", clock=t.clock.seconds)
    t.now = 10.5
    tree.append_text("b.md", "y", clock=t.clock.seconds)
    tree.rename("a.md", "c.md")

    assert tree.mtime("c.md") == 1_767_571_201.5
    assert tree.mtime("b.md") == 1_767_571_210.5


def test_default_mtime_source_is_used_without_clock(tmp_path: Path) -> None:
    """A tree made with ``mtime=`` stamps writes that pass no clock."""
    for t in (MemoryTree(mtime=lambda: 1_000.0), DiskTree(tmp_path, mtime=lambda: 1_000.0)):
        t.write_text("a", "x")
        assert t.mtime("a") == 1_000.0


def test_replace_atomic_crash_leaves_temp_file(tree: FileTree) -> None:
    """A crash between the temp write and the rename leaves the temp file and the old content."""
    tree.write_text("m.md", "old")

    def crash() -> None:
        raise Crash("test.point")

    with pytest.raises(Crash):
        tree.replace_atomic("m.md", b"new", between=crash)
    assert tree.read_text("m.md") == "old"
    assert tree.read_text("m.md.tmp") == "new"
    tree.replace_atomic("m.md", b"new")
    assert tree.list() == ["m.md"]
    assert tree.read_text("m.md") == "new"


def test_missing_files_raise_file_missing(tree: FileTree) -> None:
    """read, delete, rename and mtime of a missing file raise FileMissing (a FileNotFoundError)."""
    for call in (
        lambda: tree.read_bytes("no"),
        lambda: tree.delete("no"),
        lambda: tree.rename("no", "x"),
        lambda: tree.mtime("no"),
    ):
        with pytest.raises(FileMissing):
            call()
    assert issubclass(FileMissing, FileNotFoundError)
    assert not tree.exists("no")


def test_rename_dir_and_rmtree(tree: FileTree) -> None:
    """rename_dir moves every file under a directory; rmtree deletes them and returns the count."""
    for p in ("w/a.md", "w/s/b.md", "wx/c.md"):
        tree.write_text(p, p)
    tree.rename_dir("w", "v/w")

    assert tree.list() == ["v/w/a.md", "v/w/s/b.md", "wx/c.md"]
    assert tree.read_text("v/w/s/b.md") == "w/s/b.md"
    assert tree.rmtree("v") == 2
    assert tree.list() == ["wx/c.md"]
    assert tree.total_bytes() == len("wx/c.md")


def test_fsync_records_normalized_points(tree: FileTree) -> None:
    """fsync records each durability point, normalized."""
    tree.write_text("a/b.md", "x")
    tree.fsync("./a//b.md")
    tree.fsync("a")

    assert tree.fsyncs == ["a/b.md", "a"]


def test_disk_delete_prunes_empty_directories(tmp_path: Path) -> None:
    """Deleting the last file of a directory removes the now-empty directories (not the root)."""
    tree = DiskTree(tmp_path / "root")
    tree.write_text("a/b/c.md", "x")
    tree.delete("a/b/c.md")

    assert list((tmp_path / "root").iterdir()) == []


def test_memory_tree_refuses_file_dir_conflict(tmp_path: Path) -> None:
    """Writing ``a/b`` when ``a`` is a file fails on disk; the in-memory tree must fail the same way
    (with a memsim error on both), or a model that does it passes in memory and breaks on disk."""
    for t in (DiskTree(tmp_path / "root"), MemoryTree()):
        t.write_text("a", "file")
        with pytest.raises(MemsimError):
            t.write_text("a/b", "under a file")


@pytest.mark.parametrize(("src", "dst"), [("a/x.md", "a"), ("a/x.md", "f/y.md"), ("f", "a/x.md/z")])
def test_rename_refuses_like_os_replace(tree: FileTree, src: str, dst: str) -> None:
    """``rename`` is ``os.replace``, which refuses a file onto a directory or under a file; the in-memory
    tree did neither (``a`` became a file still counted as a directory, and its counts went negative)."""
    tree.write_text("a/x.md", "x")
    tree.write_text("f", "f")

    with pytest.raises(MemsimError):
        tree.rename(src, dst)
    assert tree.read_text("a/x.md") == "x" and tree.read_text("f") == "f" and tree.is_dir("a")


def test_rename_onto_itself_changes_nothing(tree: FileTree) -> None:
    """``os.replace(p, p)`` is a no-op: the file, its directory and the count of files under it stay."""
    tree.write_text("a/x.md", "x")
    tree.rename("a/x.md", "a/x.md")
    tree.delete("a/x.md")
    tree.write_text("a", "a file where the directory was")

    assert tree.read_text("a") == "a file where the directory was" and not tree.is_dir("a")


@pytest.mark.parametrize(("src", "dst"), [("w", "v"), ("w", "w/sub")])
def test_rename_dir_refuses_like_os_rename(tree: FileTree, src: str, dst: str) -> None:
    """``rename_dir`` is documented as ``os.rename`` of a directory, which refuses a non-empty target
    directory and a target inside the source; the tree must not silently merge or overwrite."""
    tree.write_text("w/a.md", "from w")
    tree.write_text("w/sub/a.md", "from w/sub")
    tree.write_text("v/a.md", "from v")

    with pytest.raises((MemsimError, OSError)):
        tree.rename_dir(src, dst)


@pytest.mark.parametrize("kind", ["memory", "disk"])
@given(data=st.binary(max_size=40), offset=st.integers(0, 50))
@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_read_from_is_a_seek_then_read_to_eof(kind, data, offset, tmp_path_factory) -> None:
    """``read_from(path, offset)`` equals ``(content[offset:], len(content))`` on both backends."""
    tree = MemoryTree() if kind == "memory" else DiskTree(tmp_path_factory.mktemp("rf"))
    tree.write_bytes("s/log.jsonl", data)

    assert tree.read_from("s/log.jsonl", offset) == (data[offset:], len(data))
    assert tree.size("s/log.jsonl") == len(data)


# -- hard links, subdirs, names as the OS has them -----------------------------------------------------
@pytest.mark.parametrize(
    "op",
    ["write_text", "append_text", "read_bytes", "read_from", "size", "mtime", "replace_atomic_over"],
)
def test_hard_linked_file_is_refused(tmp_path: Path, op: str) -> None:
    """A file in the root hard-linked to one outside (``st_nlink > 1``) is refused for every read, write
    and stamp: the outside file keeps its bytes and mtime, and nothing of it is returned. (Replacing it
    with a rename is allowed: that only swaps the directory entry, the outside file is untouched.)"""
    outside = tmp_path / "outside.txt"
    outside.write_bytes(SECRET)
    os.utime(outside, ns=(1_000_000_000, 1_000_000_000))
    root = tmp_path / "root"
    root.mkdir()
    os.link(outside, root / "linked.md")
    tree = DiskTree(root)
    calls = {
        "write_text": lambda: tree.write_text("linked.md", "pwned"),
        "append_text": lambda: tree.append_text("linked.md", "pwned"),
        "read_bytes": lambda: tree.read_bytes("linked.md"),
        "read_from": lambda: tree.read_from("linked.md", 0),
        "size": lambda: tree.size("linked.md"),
        "mtime": lambda: tree.mtime("linked.md"),
        "replace_atomic_over": lambda: tree.replace_atomic("linked.md", b"new"),
    }

    if op == "replace_atomic_over":
        calls[op]()
        assert tree.read_bytes("linked.md") == b"new"
    else:
        with pytest.raises(HardLinked):
            calls[op]()
    assert outside.read_bytes() == SECRET
    assert outside.stat().st_mtime_ns == 1_000_000_000


def test_ordinary_files_have_one_link(tmp_path: Path) -> None:
    """The control: files the tree writes itself are read, appended and stamped normally."""
    tree = DiskTree(tmp_path / "root")
    tree.write_text("a.md", "x", clock=lambda: 5.0)
    tree.append_text("a.md", "y", clock=lambda: 6.0)

    assert (tree.read_text("a.md"), tree.size("a.md"), tree.mtime("a.md")) == ("xy", 2, 6.0)


@pytest.mark.parametrize("subdir", ["../x", "a/../../x", "/etc", "//x", "a\x00b", ".."])
def test_simulation_tree_refuses_a_subdir_outside_the_root(tmp_path: Path, subdir: str) -> None:
    """``Simulation.tree("disk", subdir=...)`` with ``..``, an absolute path or a NUL is refused, and
    nothing is created outside the run root."""
    from sim.engine import Simulation

    root = tmp_path / "run"
    sim = Simulation(0, root=root)
    with pytest.raises(PathEscape):
        sim.tree("disk", subdir=subdir)
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_simulation_tree_refuses_a_subdir_symlinked_out(tmp_path: Path) -> None:
    """A subdir that is a symlink leading out of the run root is refused (the tree would root there)."""
    from sim.engine import Simulation

    root = tmp_path / "run"
    root.mkdir()
    (tmp_path / "elsewhere").mkdir()
    os.symlink(tmp_path / "elsewhere", root / "link")

    with pytest.raises(PathEscape):
        Simulation(0, root=root).tree("disk", subdir="link/x")
    assert list((tmp_path / "elsewhere").iterdir()) == []


def test_simulation_tree_subdir_inside_the_root(tmp_path: Path) -> None:
    """A relative subdir roots the tree inside the run root, with any spelling normalized."""
    from sim.engine import Simulation

    tree = Simulation(0, root=tmp_path / "run").tree("disk", subdir="./a//b/../c")
    tree.write_text("x.md", "ok")

    assert (tmp_path / "run" / "a" / "c" / "x.md").read_text() == "ok"


@pytest.mark.parametrize("name", ["a:b", "C:foo", "x:", "::", "agent:0/memory.md"])
def test_colon_is_an_ordinary_posix_name(tmp_path: Path, name: str) -> None:
    """``a:b`` is a valid POSIX file name: both backends store it under that name, as the OS does
    (only a drive prefix with a separator, ``C:/`` or ``C:\\``, reads as an absolute path)."""
    disk = DiskTree(tmp_path / "root")
    for t in (MemoryTree(), disk):
        t.write_text(name, "ok")
        assert t.read_text(name) == "ok"
        assert t.list() == [name]
    assert (tmp_path / "root" / name).read_text() == "ok"


@pytest.mark.parametrize(
    ("name", "ok"),
    [("x" * 255, True), ("x" * 256, False), ("é" * 127, True), ("é" * 128, False), ("d/" + "x" * 256, False)],
    ids=["255 bytes", "256 bytes", "254 bytes of é", "256 bytes of é", "256 in a subdirectory"],
)
def test_name_length_limit_is_the_os_limit(tmp_path: Path, name: str, ok: bool) -> None:
    """A name of up to 255 bytes works on both backends; one byte more raises NameTooLong (an OSError
    with ENAMETOOLONG, as the OS raises it) on both, instead of a raw OSError from the disk only."""
    for t in (MemoryTree(), DiskTree(tmp_path / "root")):
        if ok:
            t.write_text(name, "ok")
            assert t.read_text(name) == "ok"
        else:
            with pytest.raises(NameTooLong) as exc:
                t.write_text(name, "ok")
            assert exc.value.errno == errno.ENAMETOOLONG
            assert "\n" not in str(exc.value)


def test_whole_path_over_path_max_is_name_too_long(tmp_path: Path) -> None:
    """A path of many short names that together exceed PATH_MAX is refused with NameTooLong."""
    deep = "/".join(["d" * 200] * 25)

    with pytest.raises(NameTooLong):
        DiskTree(tmp_path / "root").write_text(deep, "x")


def test_unencodable_name_is_one_error(tmp_path: Path) -> None:
    """A lone surrogate (no file system can store it) is an InvalidName error on both backends."""
    for t in (MemoryTree(), DiskTree(tmp_path / "root")):
        with pytest.raises(InvalidName):
            t.write_text("bad\ud800name", "x")


def test_fifo_in_the_root_is_refused_without_blocking(tmp_path: Path) -> None:
    """A FIFO planted under the root: writing to its name raises PathConflict at once (an ordinary open
    would wait forever for a reader), and it is not a file to read."""
    root = tmp_path / "root"
    root.mkdir()
    os.mkfifo(root / "pipe.md")
    tree = DiskTree(root)

    with pytest.raises(PathConflict):
        tree.write_text("pipe.md", "x")
    with pytest.raises(FileMissing):
        tree.read_bytes("pipe.md")
