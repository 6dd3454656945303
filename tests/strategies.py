"""Shared Hypothesis strategies for the core (``sim/``): object keys, file paths, adversarial paths, texts
with mixed newlines, fault specs and operation sequences.

System-specific strategies live in ``tests/strategies_<system>.py``. The pools below are deliberately
small so that generated operations collide (the same key put twice, a prefix that matches, a rename onto
an existing file): agreement tests only find bugs when operations interact.
"""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import strategies as st

# -- object keys -------------------------------------------------------------------------------------
#: Key segments chosen so that UTF-8 byte order, code point order and naive orders would disagree if a
#: backend sorted wrongly: ASCII, Latin-1, a private-use char, U+FFFF, an astral emoji, a space, "/" runs.
KEY_SEGMENTS = (
    "a", "b", "ab", "z", "A", "é", "e\u0301", "ß", "Ā", "\ue000", "\uffff", "😀", " ", ".", "..", "-",
    "_", "0", "9", "%20", "+", "~", "日本",
)  # fmt: skip

#: Any character S3 can hold in a key (no lone surrogates: they have no UTF-8 encoding).
KEY_CHARS = st.characters(codec="utf-8")


@st.composite
def object_keys(draw: st.DrawFn) -> str:
    """A non-empty S3 object key: segments joined by ``/`` (sometimes ``//``, a leading or trailing
    ``/``), with unicode, occasionally an arbitrary character."""
    n = draw(st.integers(1, 4))
    parts = [
        draw(st.sampled_from(KEY_SEGMENTS) | st.text(KEY_CHARS, min_size=1, max_size=3)) for _ in range(n)
    ]
    sep = draw(st.sampled_from(("/", "/", "/", "", "//")))
    key = sep.join(parts)
    if draw(st.booleans()) and draw(st.booleans()):
        key = "/" + key
    if draw(st.booleans()) and draw(st.booleans()):
        key += "/"
    return key


def key_prefixes() -> st.SearchStrategy[str]:
    """List prefixes: empty, a segment, a segment and ``/``, or arbitrary short unicode."""
    seg = st.sampled_from(KEY_SEGMENTS)
    return st.one_of(
        st.just(""),
        seg,
        seg.map(lambda s: s + "/"),
        st.text(KEY_CHARS, max_size=2),
    )


def xml_safe(text: str) -> bool:
    """Whether *text* holds only characters XML 1.0 can carry (no C0 controls but tab/LF/CR, no
    U+FFFE/U+FFFF)."""
    return all(c in "\t\n\r" or (c >= " " and c not in "\ufffe\uffff") for c in text)


def start_afters() -> st.SearchStrategy[str | None]:
    """``start_after`` values: None, empty, or any XML-safe key (not necessarily present).

    moto echoes ``StartAfter`` into its XML response unencoded even under ``encoding-type=url`` (moto
    5.2.5 ``s3/responses.py`` ``_list_objects_v2``), so a control character there is a moto 500, not a
    memsim disagreement; real S3 URL-encodes it. Keys themselves may hold any character.
    """
    return st.one_of(st.none(), st.just(""), object_keys().filter(xml_safe))


bodies = st.binary(max_size=24)

# -- object store operation sequences ------------------------------------------------------------------


@dataclass(frozen=True)
class StoreOp:
    """One object-store operation: ``put``, ``put_if_none_match``, ``get``, ``exists``, ``delete`` or
    ``list`` (``key`` is the prefix for ``list``)."""

    name: str
    key: str
    body: bytes = b""
    start_after: str | None = None


@st.composite
def store_ops(draw: st.DrawFn, max_size: int = 40) -> list[StoreOp]:
    """A sequence of object-store operations over a small key pool (so they collide)."""
    pool = draw(st.lists(object_keys(), min_size=1, max_size=6, unique=True))
    pick = st.sampled_from(pool)
    op = st.one_of(
        st.builds(StoreOp, st.just("put"), pick, bodies),
        st.builds(StoreOp, st.just("put_if_none_match"), pick, bodies),
        st.builds(StoreOp, st.just("get"), pick),
        st.builds(StoreOp, st.just("exists"), pick),
        st.builds(StoreOp, st.just("delete"), pick),
        st.builds(
            StoreOp,
            st.just("list"),
            key_prefixes() | pick.map(lambda k: k[: len(k) // 2]),
            start_after=st.none() | pick | start_afters(),
        ),
    )
    return draw(st.lists(op, max_size=max_size))


# -- file paths --------------------------------------------------------------------------------------
#: Directory names and file names are disjoint, so no generated path is both a file and a directory
#: (the two backends disagree there; see test_core_files.py::test_memory_tree_refuses_file_dir_conflict).
DIR_NAMES = ("d0", "d1", "notes", "é", "sub dir", "日記")
FILE_NAMES = ("a.md", "b.txt", "ü.json", "agent_0.md", "x", "😀.md", ".hidden", "a.md.bak")


@st.composite
def file_paths(draw: st.DrawFn) -> str:
    """A canonical relative file path: up to two directories then a file name."""
    dirs = draw(st.lists(st.sampled_from(DIR_NAMES), max_size=2))
    return "/".join([*dirs, draw(st.sampled_from(FILE_NAMES))])


def dir_paths() -> st.SearchStrategy[str]:
    """A canonical relative directory path (one or two levels)."""
    return st.lists(st.sampled_from(DIR_NAMES), min_size=1, max_size=2).map("/".join)


@st.composite
def spellings(draw: st.DrawFn, canonical: str) -> str:
    """Another spelling of the relative path *canonical* that normalizes to it: ``./`` prefixes,
    doubled or backslash separators, ``x/../`` detours, a trailing slash on directories."""
    parts = canonical.split("/")
    out = "./" if draw(st.booleans()) and draw(st.booleans()) else ""
    for i, part in enumerate(parts):
        if i:
            out += draw(st.sampled_from(("/", "/", "//", "\\", "/./")))
        if draw(st.integers(0, 5)) == 0:
            out += "zz/../"
        out += part
    return out


texts = st.lists(
    st.sampled_from(("\n", "\r", "\r\n", "\n\r", " ", "é", "😀", "line")) | st.characters(codec="utf-8"),
    max_size=20,
).map("".join)
"""Texts mixing ``\\n``, ``\\r\\n``, lone ``\\r`` and unicode (what newline translation must handle)."""

# -- adversarial paths ------------------------------------------------------------------------------
#: Placeholders the escape test replaces: ``@SENTINEL`` becomes the absolute path of a directory
#: outside the run root that must stay empty; ``@VICTIM`` the absolute path of a directory outside the
#: root holding a file that must stay unchanged.
ADVERSARIAL_SEGMENTS = (
    "..", ".", "", "a", "d0", "x.md", "up", "out", "victim", "loopish", "dangling", "in", "secret.txt",
    "...", "..\\..", "\\", "%2e%2e", "\u2024\u2024", "．．", "a\x00b", "\x00", "~", "C:", "sentinel",
)  # fmt: skip
ADVERSARIAL_PREFIXES = (
    "",
    "",
    "",
    "/",
    "//",
    "\\",
    "\\\\server\\share\\",
    "C:\\",
    "c:/",
    "@SENTINEL/",
    "@VICTIM/",
    "../",
    "../../",
    "./..",
    "a/../../",
)


@st.composite
def adversarial_paths(draw: st.DrawFn) -> str:
    """A path meant to escape a run root: ``..`` runs, absolute and drive paths, backslashes, NUL
    bytes, unicode look-alikes of dots, and names of symlinks the test plants in the root (``up``,
    ``out``, ``victim``, ``dangling``, ``in``)."""
    prefix = draw(st.sampled_from(ADVERSARIAL_PREFIXES))
    segs = draw(st.lists(st.sampled_from(ADVERSARIAL_SEGMENTS), min_size=0, max_size=5))
    sep = draw(st.sampled_from(("/", "/", "\\")))
    return prefix + sep.join(segs)


# -- faults ------------------------------------------------------------------------------------------
AGENTS = st.sampled_from(("alice", "bob", "agent-1", "w.0"))


def skew_values() -> st.SearchStrategy[float]:
    """Clock offsets in seconds (finite, up to a year either way)."""
    return st.floats(-3.2e7, 3.2e7, allow_nan=False, allow_infinity=False)
