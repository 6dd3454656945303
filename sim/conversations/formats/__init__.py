"""The conversation loaders: which format a ``--workload`` names, and its instances as a stream (issue 28).

``parse_workload_spec("longmemeval:F")`` is ``("longmemeval", F)``, ``"locomo:F"`` ``("locomo", F)``, a
plain path ``("native", F)``; :func:`iter_instances` yields a file's
:class:`~sim.conversations.model.Instance`\\ s in file order, each validated fully before it is yielded
(LongMemEval and LoCoMo streamed with ijson, :mod:`.stream`; formats in :mod:`.longmemeval`,
:mod:`.locomo`, :mod:`.native`, and docs/conversations.md, "Formats"). Every bad input is one
:class:`~sim.errors.UsageError` line naming the file, the instance (or line) and the field.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

from sim.conversations.formats.native import has_turn_labels, iter_native
from sim.conversations.formats.stream import iter_json_list
from sim.conversations.model import Instance
from sim.errors import UsageError

__all__ = ["KINDS", "has_turn_labels", "iter_instances", "parse_workload_spec"]

#: The workload kinds: the two prefixed formats, then memsim's own JSONL.
KINDS = ("longmemeval", "locomo", "native")
_PREFIX = re.compile(r"([A-Za-z][A-Za-z0-9_-]+):(.*)", re.S)


def parse_workload_spec(text: str) -> tuple[str, Path]:
    """``KIND:FILE`` (KIND ``longmemeval`` or ``locomo``, any case) or a plain path (``native``).

    A prefix is two or more letters, digits, ``-`` or ``_`` before the first ``:`` (so ``C:\\\\x.json``
    and ``./a:b.jsonl`` are paths); an unknown one is an error unless the whole text names an existing
    file (a file called ``notes:v2.jsonl``)."""
    if not text:
        raise UsageError("--workload is empty (expected longmemeval:FILE, locomo:FILE or FILE.jsonl)")
    if "\x00" in text:
        raise UsageError("--workload contains a NUL character")
    m = _PREFIX.fullmatch(text)
    if m is None:
        return "native", Path(text)
    kind = m[1].lower()
    if kind in KINDS[:2]:
        if not m[2]:
            raise UsageError(f"--workload {text} names no file (expected {kind}:FILE)")
        return kind, Path(m[2])
    if os.path.isfile(text):
        return "native", Path(text)
    raise UsageError(
        f"--workload {text[:80]}: unknown format {m[1][:40]!r} (expected longmemeval:FILE, locomo:FILE "
        "or a JSONL file)"
    )


def iter_instances(kind: str, path: str | os.PathLike[str]) -> Iterator[Instance]:
    """The instances of *path* read as *kind* (one of :data:`KINDS`), in file order, each validated
    before it is yielded; the first bad one raises :class:`UsageError` (the rest is never read). Instance
    ids must be unique in a file."""
    if kind == "native":
        yield iter_native(path)
        return
    if kind == "longmemeval":
        from sim.conversations.formats.longmemeval import build
    elif kind == "locomo":
        from sim.conversations.formats.locomo import build
    else:
        raise UsageError(f"unknown workload kind {kind!r} (expected one of {', '.join(KINDS)})")
    seen: dict[str, int] = {}
    key = "question_id" if kind == "longmemeval" else "sample_id"
    for inst in iter_json_list(kind, path, build):
        if inst.instance_id in seen:
            raise UsageError(
                f"{kind} {path}: instance {inst.index}: {key}: {inst.instance_id[:60]!r} repeats instance "
                f"{seen[inst.instance_id]}'s"
            )
        seen[inst.instance_id] = inst.index
        yield inst
