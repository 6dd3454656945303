"""The trace's ``facts`` column: fact sets as intervals, written as key frames and deltas.

A request that carries a whole folded log holds thousands of fact ids, and the next request of the same
route carries nearly the same ones. So the column stores, per *stream* (the requests of one ``(system,
agent, route)``, in ``seq`` order), a **key frame** (the whole set, :func:`encode_facts`) now and then and
otherwise a **delta** against the stream's previous request (the ids that entered and left). The format
is specified in :mod:`sim.trace` and README "Traces"; :class:`FactFrames` writes it and
:class:`FactFrameReader` reads it back, in order.

In memory a set is a :class:`FactSet`: the numbers of its canonical ids (``FACT-{n:04d}``) as sorted
interval edges, plus the few ids that are not canonical. Size, membership and "what left since the
previous request" cost O(intervals), or less, never O(ids); applying a small delta costs a few bisects
and a copy of the edges (in C).
"""

from __future__ import annotations

import bisect
import json
import operator
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from sim.jsontext import record_json

#: Fact id to its number (-1 when the id is not the canonical ``FACT-{n:04d}`` form of a number); a
#: memo of :func:`fact_number`, emptied when it reaches :data:`_FACT_MEMO_MAX` ids (at most about 8 MB).
_FACT_NUMBERS: dict[str, int] = {}
_FACT_MEMO_MAX = 1 << 16


#: The most digits a canonical fact number has: a longer one is taken as not canonical, so no ``int()``
#: reaches Python's 4,300-digit limit (issue 37); ids that long come only from a hostile file.
MAX_FACT_DIGITS = 4_000


def fact_number(f: str) -> int:
    """The number of a canonical fact id (``FACT-0017`` -> 17, ``FACT-12345`` -> 12345), else -1.

    Canonical means ``f == f"FACT-{n:04d}"``: ASCII digits, exactly four of them below 10,000 and no
    leading zero above (``FACT-00017`` and ``FACT-017`` are not canonical).
    """
    digits = f[5:]
    if (
        f.startswith("FACT-")
        and digits.isascii()
        and digits.isdigit()
        and (len(digits) == 4 or (4 < len(digits) <= MAX_FACT_DIGITS and digits[0] != "0"))
    ):
        return int(digits)
    return -1


def _sorted_by_number(ids: Collection[str]) -> tuple[list[str], list[int]]:
    """*ids* sorted by number (non-canonical ids first, numbered -1) and their numbers, through the memo."""
    memo = _FACT_NUMBERS
    try:
        names = sorted(ids, key=memo.__getitem__)
    except KeyError:
        if len(memo) + len(ids) > _FACT_MEMO_MAX:
            memo.clear()
        for f in ids:
            if f not in memo:
                memo[f] = fact_number(f)
        names = sorted(ids, key=memo.__getitem__)
    return names, list(map(memo.__getitem__, names))


def _fid(n: int) -> str:
    return f"FACT-{n:04d}"


def _runs(nums: list[int]) -> tuple[int, ...]:
    """The edges of sorted distinct *nums*: ``(a0, b0, a1, b1, ...)``, each run of consecutive numbers
    as the half-open ``[a, b)``."""
    if not nums:
        return ()
    # follows[k] is 1 when nums[k + 1] == nums[k] + 1; each 0 ends a run (bytes.find: no loop per id).
    follows = bytes(map((1).__eq__, map(operator.sub, nums[1:], nums)))
    edges = [nums[0]]
    k = follows.find(0)
    while k >= 0:
        edges += (nums[k] + 1, nums[k + 1])
        k = follows.find(0, k + 1)
    edges.append(nums[-1] + 1)
    return tuple(edges)


def _xor(edges: tuple[int, ...], toggles: Sequence[int]) -> tuple[int, ...]:
    """The edges of the symmetric difference of *edges* with the set whose edges are *toggles* (any
    order; a value given twice cancels): an edge present in both cancels, any other is inserted."""
    if not toggles:
        return edges
    if len(toggles) <= 16:
        out = list(edges)
        for e in toggles:
            p = bisect.bisect_left(out, e)
            if p < len(out) and out[p] == e:
                del out[p]
            else:
                out.insert(p, e)
        return tuple(out)
    merged: list[int] = []
    for e in sorted(edges + tuple(toggles)):  # sorted runs: timsort merges them in linear time
        if merged and merged[-1] == e:
            merged.pop()
        else:
            merged.append(e)
    return tuple(merged)


def _common_run(a: tuple[int, ...], i: int, b: tuple[int, ...], j: int) -> int:
    """The largest L with ``a[i:i + L] == b[j:j + L]``, given ``a[i] == b[j]`` (a galloping search of
    slice comparisons: O(L) compared in C, O(log L) steps in Python)."""
    most = min(len(a) - i, len(b) - j)
    good, step = 1, 1
    while good < most:
        n = min(good + step, most)
        if a[i + good : i + n] != b[j + good : j + n]:
            bad = n
            while bad - good > 1:
                mid = (good + bad) // 2
                if a[i + good : i + mid] == b[j + good : j + mid]:
                    good = mid
                else:
                    bad = mid
            return good
        good, step = n, step * 2
    return good


def _minus_size(a: tuple[int, ...], b: tuple[int, ...]) -> int:
    """How many numbers the edges *a* hold that the edges *b* do not (a merge of the two edge lists that
    skips, in C, every stretch where both have the same edges in the same state)."""
    i = j = total = x = 0
    in_a = in_b = False
    na, nb = len(a), len(b)
    while i < na:
        ea = a[i]
        eb = b[j] if j < nb else None
        if eb is None or ea < eb:
            if in_a and not in_b:
                total += ea - x
            in_a, x, i = not in_a, ea, i + 1
        elif eb < ea:
            if in_a and not in_b:
                total += eb - x
            in_b, x, j = not in_b, eb, j + 1
        elif in_a == in_b:  # the same edges from here: both sets agree until they part
            n = _common_run(a, i, b, j)
            if n & 1:
                in_a = in_b = not in_a
            i, j, x = i + n, j + n, a[i + n - 1]
        else:
            if in_a:
                total += ea - x
            in_a, in_b, x, i, j = not in_a, not in_b, ea, i + 1, j + 1
    return total


@dataclass(frozen=True)
class FactSet:
    """An immutable set of fact ids: ``edges`` ``(a0, b0, a1, b1, ...)`` are the numbers of its canonical
    ids as half-open intervals ``[a, b)`` (strictly increasing: disjoint and not adjacent, so one set has
    one form), ``other`` its ids that are not canonical, ``size`` how many ids it holds."""

    edges: tuple[int, ...] = ()
    other: frozenset[str] = frozenset()
    size: int = 0

    @classmethod
    def of(cls, ids: Iterable[str]) -> FactSet:
        """The set of *ids*."""
        names, nums = _sorted_by_number(ids if isinstance(ids, set | frozenset) else set(ids))
        if not names:
            return EMPTY
        k = bisect.bisect_right(nums, -1)  # non-canonical ids sort first (number -1)
        return cls(_runs(nums[k:]), frozenset(names[:k]), len(names))

    @classmethod
    def parse(cls, text: str) -> FactSet:
        """The set of an encoded list (:func:`encode_facts`; ``ValueError`` if it is not one)."""
        if text == "[]":
            return EMPTY
        items = json.loads(text)
        if not isinstance(items, list):
            raise ValueError(f"a facts list is a JSON list, not {type(items).__name__}")
        return cls.from_items(items)

    @classmethod
    def from_items(cls, items: Iterable[Any]) -> FactSet:
        """The set of the items of an encoded list: ids and ``"FACT-0001..FACT-0040"`` inclusive ranges
        of canonical ids (``ValueError`` for anything else)."""
        spans: list[tuple[int, int]] = []
        other: set[str] = set()
        memo = _FACT_NUMBERS  # ids only: an item with ".." is a range, never looked up as an id
        for item in items:
            if not isinstance(item, str):
                raise ValueError(f"a fact id is a string, not {item!r:.40}")
            if ".." in item:
                lo, _, hi = item.partition("..")
                a, b = memo.get(lo), memo.get(hi)
                if a is None or b is None:
                    a, b = fact_number(lo), fact_number(hi)
                if a < 0 or b < a:
                    raise ValueError(f"{item[:60]!r} is not a range of canonical fact ids")
                spans.append((a, b + 1))
                continue
            n = memo.get(item)
            if n is None:
                n = fact_number(item)
                if len(memo) < _FACT_MEMO_MAX:
                    memo[item] = n
            if n >= 0:
                spans.append((n, n + 1))
            else:
                other.add(item)
        spans.sort()
        edges: list[int] = []
        for a, b in spans:
            if edges and a <= edges[-1]:  # overlapping or adjacent: one interval
                edges[-1] = max(edges[-1], b)
            else:
                edges += (a, b)
        size = sum(edges[1::2]) - sum(edges[::2]) + len(other)
        return cls(tuple(edges), frozenset(other), size) if size else EMPTY

    def items(self) -> list[str]:
        """The encoded list's items: canonical ids by number, runs of three or more as one inclusive
        range, then the other ids sorted as strings."""
        items: list[str] = []
        e = self.edges
        for k in range(0, len(e), 2):
            a, b = e[k], e[k + 1] - 1
            if b - a >= 2:
                items.append(f"{_fid(a)}..{_fid(b)}")
            else:
                items.extend(map(_fid, range(a, b + 1)))
        return items + sorted(self.other)

    def text(self) -> str:
        """The encoded list (:func:`encode_facts` of the same ids: the same bytes)."""
        return record_json(self.items()) if self.size else "[]"

    def ids(self) -> frozenset[str]:
        """Every fact id (expanded: O(ids))."""
        e = self.edges
        nums = (n for k in range(0, len(e), 2) for n in range(e[k], e[k + 1]))
        return frozenset(map(_fid, nums)) | self.other

    def __len__(self) -> int:
        return self.size

    def __contains__(self, fact: object) -> bool:
        if not isinstance(fact, str):
            return False
        n = fact_number(fact)
        if n < 0:
            return fact in self.other
        return bool(bisect.bisect_right(self.edges, n) & 1)

    def mask(self, numbered: list[tuple[int, int]], named: dict[str, int]) -> int:
        """The OR of the bits of the facts present: *numbered* ``(number, bit)`` pairs for canonical ids,
        *named* id -> bit for the others."""
        out = 0
        e = self.edges
        for n, bit in numbered:
            if bisect.bisect_right(e, n) & 1:
                out |= bit
        for f, bit in named.items():
            if f in self.other:
                out |= bit
        return out

    def overlap(self, other: FactSet) -> int:
        """How many facts are in both sets."""
        return self.size - self.minus_size(other)

    def minus_size(self, other: FactSet) -> int:
        """How many facts of this set are not in *other* (fast when the two share most of their edges)."""
        return _minus_size(self.edges, other.edges) + len(self.other - other.other)

    def minus(self, other: FactSet, limit: int) -> list[str]:
        """Up to *limit* fact ids of this set that are not in *other*, in id order (canonical first)."""
        out: list[str] = []
        e, o = self.edges, other.edges
        for k in range(0, len(e), 2):
            n, end = e[k], e[k + 1]
            while n < end and len(out) < limit:
                p = bisect.bisect_right(o, n)
                if p & 1:  # n is in the other set: skip the rest of its interval there
                    n = o[p]
                    continue
                stop = min(end, o[p]) if p < len(o) else end
                take = min(stop, n + limit - len(out))
                out.extend(map(_fid, range(n, take)))
                n = stop
        out.extend(sorted(self.other - other.other)[: max(0, limit - len(out))])
        return out

    def apply(self, add: FactSet, drop: FactSet) -> FactSet:
        """``(self - drop) | add``, where *drop* must lie in this set and *add* outside it (a delta's
        ``del`` and ``add``; ``ValueError`` otherwise)."""
        e = self.edges
        d, a = drop.edges, add.edges
        n, find = len(e), bisect.bisect_right
        for k in range(0, len(d), 2):
            p = find(e, d[k])
            if not (p & 1 and e[p] >= d[k + 1]):
                raise ValueError(f"the delta removes {_fid(d[k])}.. which its base does not hold")
        for k in range(0, len(a), 2):
            p = find(e, a[k])
            if p & 1 or (p < n and e[p] < a[k + 1]):
                raise ValueError(f"the delta adds {_fid(a[k])}.. which its base already holds")
        other = self.other
        if drop.other or add.other:
            if not drop.other <= other or not add.other.isdisjoint(other):
                raise ValueError("the delta's other ids do not fit its base")
            other = (other - drop.other) | add.other
        if not add.size and not drop.size:
            return self
        size = self.size - drop.size + add.size
        if not size:
            return EMPTY
        out = _new(FactSet)  # the frozen instance, filled as its __init__ would (without a setattr a field)
        out.__dict__.update(edges=_xor(e, d + a), other=other, size=size)  # drop inside, add outside
        return out


EMPTY = FactSet()
_new = object.__new__


def encode_facts(ids: Iterable[str]) -> str:
    """Fact ids as a JSON list, consecutive ``FACT-NNNN`` ids folded into ``"FACT-0001..FACT-0040"``.

    A request that carries a whole folded log holds thousands of facts; ranges keep long traces small.
    Ids of any width fold (``FACT-9999..FACT-10002``); an id that is not the canonical form of its number
    (``FACT-00017``) is kept as it is, after the canonical ones, sorted as strings. Ids are numbered
    through a memo and runs are found by byte search, so a request with thousands of facts costs little
    more than its sort.
    """
    return _of_with_text(ids, want_set=False)[1]


def _of_with_text(ids: Iterable[str], want_set: bool = True) -> tuple[FactSet, str]:
    """:meth:`FactSet.of` *ids* (if *want_set*, else :data:`EMPTY`) and its :meth:`~FactSet.text`, from one
    sort: the list's items are the ids themselves (runs of three or more folded), not formatted afresh."""
    names, nums = _sorted_by_number(ids if isinstance(ids, set | frozenset) else set(ids))
    if not names:
        return EMPTY, "[]"
    k = bisect.bisect_right(nums, -1)  # non-canonical ids sort first (number -1)
    names, nums, other = names[k:], nums[k:], names[:k]
    full = FactSet(_runs(nums), frozenset(other), len(names) + len(other)) if want_set else EMPTY
    return full, record_json(_fold(names, nums) + sorted(other))


def _fold(names: list[str], nums: list[int]) -> list[str]:
    """The items of canonical ids sorted by number: each run of three or more consecutive numbers as one
    range ``"FACT-0001..FACT-0040"``, the others as they are."""
    if not nums:
        return []
    # follows[k] is 1 when nums[k + 1] == nums[k] + 1: two 1s in a row start a range of three or more ids,
    # which runs to the next 0. The searches are bytes.find, so the cost is the sort, not the id count.
    follows = bytes(map((1).__eq__, map(operator.sub, nums[1:], nums)))
    items: list[str] = []
    pos = 0
    while True:
        k = follows.find(b"\x01\x01", pos)
        if k < 0:
            items.extend(names[pos:])
            return items
        end = follows.find(b"\x00", k + 2)
        if end < 0:
            end = len(follows)
        items.extend(names[pos:k])
        items.append(f"{names[k]}..{names[end]}")
        pos = end + 1


def decode_facts(text: str) -> frozenset[str]:
    """The fact ids of an encoded list (ranges expanded)."""
    out: set[str] = set()
    for item in json.loads(text):
        lo, sep, hi = item.partition("..")
        if sep:
            a, b = int(lo[5:]), int(hi[5:])  # FACT-NNNN..FACT-MMMM, any width
            out.update(f"FACT-{n:04d}" for n in range(a, b + 1))
        else:
            out.add(item)
    return frozenset(out)


def facts_include(encoded: str, fact: str) -> bool:
    """Whether an encoded list holds *fact*: ``fact in decode_facts(encoded)`` without expanding the
    ranges (a probe check on a request carrying thousands of facts)."""
    n = fact_number(fact)
    if n < 0 or '\\"' in encoded:  # a non-canonical id, or an id with a quote in it: decode
        return fact in decode_facts(encoded)
    if f'"{fact}"' in encoded:  # quotes only delimit items here, so this is exactly the item
        return True
    return fact in FactSet.parse(encoded)


def delta_text(add: FactSet, base: int, drop: FactSet) -> str:
    """A delta: ``{"add": [...], "base": SEQ, "del": [...]}`` (canonical JSON; an empty list is left out)."""
    parts = [f'"add": {add.text()}'] if add.size else []
    parts.append(f'"base": {base}')
    if drop.size:
        parts.append(f'"del": {drop.text()}')
    return "{" + ", ".join(parts) + "}"


Stream = tuple[str, str, str]


@dataclass(frozen=True)
class _Head:
    """What the writer remembers of a stream: its last request and the frames since its last key frame."""

    ids: frozenset[str]
    full: FactSet
    seq: int
    key_chars: int  # the length of the stream's last key frame
    spent: int  # the lengths of the deltas written since it
    deltas: int  # how many


class FactFrames:
    """Writes the ``facts`` column, request by request (the rule is :mod:`sim.trace`'s "Schema").

    A request's column is a delta against its stream's previous request unless the stream is new (or
    forgotten: at most :data:`STREAMS` streams are remembered, the least recently used forgotten first),
    :data:`MAX_DELTAS` deltas follow the stream's last key frame, or this delta with those would be longer
    than that key frame; then it is a key frame. The ids that entered and left are set differences (in
    C), so a request costs O(its ids) hashed and O(the change) encoded.
    """

    STREAMS = 64
    MAX_DELTAS = 255

    def __init__(self) -> None:
        self._heads: dict[Stream, _Head] = {}

    def encode(self, ids: frozenset[str], stream: Stream, seq: int) -> tuple[str, FactSet]:
        """The column text of request *seq* of *stream*, holding *ids*, and their :class:`FactSet`."""
        last = self._heads.pop(stream, None)
        if last is not None and last.deltas < self.MAX_DELTAS:
            if ids is last.ids or ids == last.ids:
                add = drop = EMPTY
            else:
                add, drop = FactSet.of(ids - last.ids), FactSet.of(last.ids - ids)
                _writable(add.other)
            text = delta_text(add, last.seq, drop)
            if last.spent + len(text) <= last.key_chars:
                full = last.full.apply(add, drop)
                self._heads[stream] = _Head(
                    ids, full, seq, last.key_chars, last.spent + len(text), last.deltas + 1
                )
                return text, full
        full, text = _of_with_text(ids)
        _writable(full.other)
        self._heads[stream] = _Head(ids, full, seq, len(text), 0, 0)
        if len(self._heads) > self.STREAMS:
            del self._heads[next(iter(self._heads))]
        return text, full


def fact_set(ids: frozenset[str]) -> FactSet:
    """The :class:`FactSet` of *ids* as :meth:`FactFrames.encode` returns it, without a column: what a
    trace that writes no column (records kept in memory only) needs. The ids are checked as a written
    column checks them, so both raise alike."""
    full = FactSet.of(ids)
    _writable(full.other)
    return full


def _writable(other: frozenset[str]) -> None:
    for f in other:
        if ".." in f:
            raise ValueError(f"fact id {f[:60]!r} holds '..', which the facts column reads as a range")


class FactFrameReader:
    """Resolves the ``facts`` column of successive requests (in ``seq`` order) into full sets.

    It keeps the last set of every stream it has seen (what a delta of that stream applies to); a
    column that is neither a key frame nor a delta against its stream's previous request is a
    ``ValueError``. With ``deltas=False`` (a schema-2 trace: full lists only) a delta is one too.
    """

    def __init__(self, *, deltas: bool = True) -> None:
        self._heads: dict[Stream, tuple[int, FactSet]] = {}
        self._deltas = deltas

    def resolve(self, seq: int, stream: Stream, text: object) -> FactSet:
        """The full set of request *seq* of *stream*, whose column is *text*."""
        if not isinstance(text, str):
            raise ValueError(f"request {seq}: its facts column is not text")
        if text.startswith("["):
            full = FactSet.parse(text)
        elif text.startswith("{") and self._deltas:
            delta = json.loads(text)
            base = delta.get("base") if isinstance(delta, dict) else None
            head = self._heads.get(stream)
            if head is None or type(base) is not int or head[0] != base or not _DELTA_KEYS.issuperset(delta):
                raise ValueError(
                    f"request {seq}: its facts delta is not against the previous request of its stream"
                )
            add, drop = (
                EMPTY if (v := delta.get(k)) is None else FactSet.from_items(_items(v)) for k in _LISTS
            )
            full = head[1].apply(add, drop)
        elif text.startswith("{"):
            raise ValueError(f"request {seq}: its facts column is a delta, which schema 2 never wrote")
        else:
            raise ValueError(f"request {seq}: its facts column is neither a JSON list nor a delta")
        self._heads[stream] = (seq, full)
        return full


_DELTA_KEYS = frozenset({"add", "base", "del"})
_LISTS = ("add", "del")


def _items(value: object) -> list[Any]:
    if not isinstance(value, list):
        raise ValueError("a delta's add and del are JSON lists")
    return value
