"""``session show --tail N`` over parts equals joining every part and ``splitlines()[-N:]``."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from systems.tracecraft.model import tail_lines_of_parts

# Small alphabets so \r, \n and \r\n land at, inside and across part boundaries and window cuts.
_part = st.lists(st.sampled_from([b"a", b"b", b"\r", b"\n", b"\r\n", b"\n\r", b"\xff"]), max_size=12).map(
    b"".join
)
_parts = st.lists(st.one_of(st.just(b""), _part), max_size=12)


@given(_parts, st.integers(min_value=0, max_value=40), st.integers(min_value=1, max_value=40))
def test_tail_of_parts_equals_join_splitlines(parts: list[bytes], n: int, window: int) -> None:
    """Exact equality for every N from 0 (all lines) to beyond the line count, any window size."""
    expected = b"".join(parts).splitlines()[-n:]
    assert tail_lines_of_parts(parts, n, window=window) == expected
    assert tail_lines_of_parts(parts, n) == expected


def test_tail_of_parts_boundary_cases() -> None:
    """A \\r\\n split across parts is one break; a lone trailing \\r is a break; empty parts are no-ops."""
    cases = [
        [b"x\r", b"\ny\r", b"", b"\n"],
        [b"\r", b"\n", b"\r", b"\n"],
        [b"a\r\r", b"\n\n", b"b"],
        [b"", b"", b""],
        [b"abc"],
        [b"\n" * 5, b"z"],
    ]
    for parts in cases:
        body = b"".join(parts)
        for n in range(0, len(body.splitlines()) + 3):
            for window in (1, 2, 3, 5, 16_384):
                got = tail_lines_of_parts(parts, n, window=window)
                assert got == body.splitlines()[-n:], (parts, n, window)


def test_tail_of_parts_large_compacted_part() -> None:
    """A merged (compacted) part far larger than the window, followed by one-line parts."""
    merged = b"".join(b"line %d\r\n" % i if i % 3 else b"row %d\n" % i for i in range(20_000))
    parts = [merged, *(b"tail %d\r" % i for i in range(30)), b"\n"]
    body = b"".join(parts)
    for n in (1, 5, 60, 1000, 30_000):
        assert tail_lines_of_parts(parts, n) == body.splitlines()[-n:]


@given(
    st.lists(st.lists(st.sampled_from([b"x", b"yy", b"\n", b"\n\n"]), max_size=30).map(b"".join), max_size=8),
    st.integers(min_value=0, max_value=25),
    st.integers(min_value=1, max_value=64),
)
def test_tail_of_parts_without_carriage_returns(parts: list[bytes], n: int, window: int) -> None:
    """Bodies with ``\\n`` breaks only (JSONL transcripts) take the rfind path: still exactly
    ``splitlines()[-N:]``, trailing break, empty lines and window cuts included."""
    assert tail_lines_of_parts(parts, n, window=window) == b"".join(parts).splitlines()[-n:]
