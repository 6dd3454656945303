"""Tail helpers of ``session show --tail``: the last lines of a body without splitting all of it."""

from __future__ import annotations

from collections.abc import Sequence

from systems.tracecraft.model.retention import Body, DroppedBytes, HeadlessBody, held, join


def tail_lines(body: bytes, n: int) -> list[bytes]:
    """``body.splitlines()[-n:]`` without splitting the whole body (windows from the end, doubling)."""
    window = 65_536
    while window < len(body):
        lines = body[-window:].splitlines()
        if len(lines) > n:  # the window's first line may be cut; it is never among the last n
            return lines[-n:]
        window *= 2
    return body.splitlines()[-n:]


def tail_lines_of_parts(chunks: Sequence[Body], n: int, *, window: int = 16_384) -> list[bytes]:
    """``b"".join(chunks).splitlines()[-n:]`` without joining or splitting the whole transcript.

    Takes growing byte windows off the end of the virtual concatenation. A window's first line may be
    cut (mid-line, or a lone ``\n`` whose ``\r`` lies before the cut); every later line break in the
    window is the same break as in the whole body, so once the window holds more than *n* lines its last
    *n* are the body's. ``n <= 0`` keeps the ``[-n:]`` slice semantics (all lines for 0). A window never
    reaches past the tail a :class:`~systems.tracecraft.model.retention.HeadlessBody` holds; when the
    lines are not all in it, :class:`~systems.tracecraft.model.retention.DroppedBytes` is raised.
    """
    fast = _last_lines_lf(chunks, n)
    if fast is not None:
        return fast
    total = sum(len(c) for c in chunks)
    window = max(1, window)
    readable = held(chunks)  # < total only with a headless body: then every window stays within it
    if readable < total:
        window = min(window, readable)
    while n > 0 and window < total:
        taken: list[bytes] = []
        need = window
        for c in reversed(chunks):
            if len(c) >= need:
                taken.append(c[len(c) - need :])
                break
            taken.append(c)  # type: ignore[arg-type]  # a headless body is never whole in a window
            need -= len(c)
        joined = b"".join(reversed(taken))
        if b"\r" not in joined:  # breaks are b"\n" only (JSONL): find the n-th from the end, split only that
            end = len(joined) - 1 if joined.endswith(b"\n") else len(joined)  # a final break starts no line
            cut = end
            for _ in range(n):
                cut = joined.rfind(b"\n", 0, cut)
                if cut < 0:
                    break
            if (
                cut >= 0
            ):  # the line after the n-th break from the end is whole, even if the window's first is not
                return joined[cut + 1 : end].split(b"\n")
            lines_seen = joined.count(b"\n") + 1
        else:
            lines = joined.splitlines()
            if len(lines) > n:
                return lines[-n:]
            lines_seen = len(lines)
        if window == readable:
            raise DroppedBytes(f"the last {n} lines reach past the {readable} bytes held")
        # Grow at least twofold, or to the size the window's mean line length says n + 1 lines need.
        window = max(2 * window, window * (n + 2) // max(lines_seen - 1, 1))
        if readable < total:
            window = min(window, readable)
    return join(chunks).splitlines()[-n:]


def _last_lines_lf(chunks: Sequence[Body], n: int) -> list[bytes] | None:
    """The last *n* lines found by searching ``\n`` backwards chunk by chunk, each line sliced out once, or
    None where :func:`tail_lines_of_parts`' windows must decide (``n <= 0``, fewer than *n* breaks, a
    ``\r`` in one of the lines, or a headless body's dropped head reached).

    The *n*-th ``\n`` before the body's end (a final ``\n`` starts no line) ends a line whatever precedes
    it (a lone ``\n`` or the end of ``\r\n``), so when no ``\r`` follows it the *n* lines after it,
    split on ``\n``, are ``splitlines()[-n:]``.
    """
    if n <= 0:
        return None
    lines: list[bytes] = []  # newest first
    partial: list[bytes] = []  # pieces of a line that spans chunks, newest first
    last = True
    for c in reversed(chunks):
        data: bytes = c.tail if type(c) is HeadlessBody else c  # type: ignore[union-attr,assignment]
        pos = len(data)
        if last and pos:
            last = False
            if data[-1] == 10:  # b"\n": the final break starts no line
                pos -= 1
        while True:
            i = data.rfind(b"\n", 0, pos)
            if i < 0:
                break
            line = data[i + 1 : pos]
            if partial:
                line = b"".join([line, *reversed(partial)])
                partial = []
            if b"\r" in line:
                return None
            lines.append(line)
            if len(lines) == n:
                lines.reverse()
                return lines
            pos = i
        partial.append(data[:pos])
        if len(data) < len(c):  # a headless body: the bytes before its tail are not held
            return None
    return None
