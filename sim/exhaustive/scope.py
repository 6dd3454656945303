"""A claim's small scope: the finite domain of each example field and a bound on sequence lengths.

A scope is a tree of domains in the JSON shape of the claim's examples (the shape ``example_type`` declares
and ``memsim replay`` reads):

==============  ============================================================================================
``values(...)``  a field's values, simplest first (``0, K - 1, K, K + 1`` around a threshold; an enum's
                 members; ``False, True``)
``tup(...)``     a fixed-length JSON array (a Python tuple in ``example_type``)
``record(...)``  a JSON object with exactly these keys (a ``TypedDict`` or pydantic model)
``seq(item)``    arrays of *item* from ``min_len`` to the scope's bound (``--scope N``), never over the
                 type's own ``max_length`` (``cap``)
``alt(...)``     one of several shapes (an operation kind and its arguments)
==============  ============================================================================================

:func:`~sim.exhaustive.derive.derive` builds the tree from ``example_type`` itself (enums and booleans
whole; integer ranges as a few values at and next to their bounds; lists with the type's length limits)
and takes explicit domains for the fields whose thresholds matter, so a scope reads as the thresholds it
probes.

**The deep profile** (``--scope deep``): every claim's own bounds doubled, each sequence's ``max_len``
twice the declared one within the type's ``cap`` (:func:`deepen`), or the claim's declared deep shape
(``Scope.deep``, :func:`~sim.exhaustive.derive.derive`'s ``deep=``), which must double the claim's
bound, its longest sequence's (:func:`bound_of`), where the type allows and may keep other sequences or
thin the values to stay affordable.

**Canonical order.** Every example has a size (the number of sequence elements in it, the sum of its
values' ranks in their domains), and the scope is enumerated by size, then lexicographically by the
ranks in field order. The first counterexample in that order is therefore a minimal one within the
scope: no example with fewer operations, or as many but simpler values, fails.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

#: The most cases a scope may have (a larger one is refused up front: it would not finish).
MAX_CASES = 2_000_000

#: The bound of the deep profile (``--scope deep``): each claim's declared bounds doubled.
DEEP = "deep"

#: A scope's bound: None (as declared), N (every sequence bounded by N) or :data:`DEEP`.
Bound = int | str | None


class ScopeError(ValueError):
    """A scope that does not fit its claim's example type, or is too large."""


# -- domains --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Values:
    """Atomic values, simplest first."""

    values: tuple[Any, ...]


@dataclass(frozen=True)
class Tup:
    """A fixed-length JSON array."""

    items: tuple[Domain, ...]


@dataclass(frozen=True)
class Record:
    """A JSON object with exactly these keys, in this order."""

    fields: tuple[tuple[str, Domain], ...]


@dataclass(frozen=True)
class Seq:
    """Arrays of *item*, ``min_len`` to ``max_len`` long (``--scope N`` sets ``max_len`` to N, within
    ``min_len`` and ``cap``, the type's own limit); with ``unique``, no element repeats."""

    item: Domain
    min_len: int
    max_len: int
    cap: int | None = None
    unique: bool = False  # no element twice (the strategy's ``unique=True``, which the type cannot state)
    prefix: tuple[Any, ...] = ()  # fixed first elements (a strategy's set-up steps), outside the length bound


@dataclass(frozen=True)
class Alt:
    """One of several shapes; the first option's examples rank first."""

    options: tuple[Domain, ...]


@dataclass(frozen=True)
class Mapping:
    """JSON objects whose keys are a subset of *keys* (``min_keys`` to ``max_keys`` of them, in the keys'
    order), each mapped to a value of *value* (a ``dict[Literal[...], V]`` type)."""

    keys: tuple[str, ...]
    value: Domain
    min_keys: int
    max_keys: int


Domain = Values | Tup | Record | Seq | Alt | Mapping


def values(*vals: Any) -> Values:
    """A field's values, simplest first (duplicates are refused)."""
    if not vals:
        raise ScopeError("a domain needs at least one value")
    if len({json.dumps(v, sort_keys=True) for v in vals}) != len(vals):
        raise ScopeError(f"duplicate values in {vals!r}")
    return Values(tuple(vals))


def tup(*items: Domain) -> Tup:
    return Tup(tuple(items))


def record(**fields: Domain) -> Record:
    return Record(tuple(fields.items()))


def seq(
    item: Domain,
    max_len: int,
    *,
    min_len: int = 0,
    cap: int | None = None,
    unique: bool = False,
    prefix: tuple[Any, ...] = (),
) -> Seq:
    """Sequences of *item*, *min_len* to *max_len* long (*cap*: the most ``--scope N`` may ask), with no
    element twice if *unique*, after the fixed *prefix* elements (which the bounds do not count)."""
    if not 0 <= min_len <= max_len or (cap is not None and max_len > cap):
        raise ScopeError(f"bad sequence bounds: min {min_len}, max {max_len}, cap {cap}")
    return Seq(item, min_len, max_len, cap, unique, tuple(prefix))


def alt(*options: Domain) -> Alt:
    return Alt(tuple(options))


def mapping(keys: tuple[str, ...], value: Domain, max_keys: int, *, min_keys: int = 0) -> Mapping:
    if not 0 <= min_keys <= max_keys <= len(keys):
        raise ScopeError(f"bad mapping bounds: {min_keys}..{max_keys} of {len(keys)} keys")
    return Mapping(tuple(keys), value, min_keys, max_keys)


# -- the scope ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Scope:
    """A claim's declared small scope.

    *shape* is the domain tree; *note* says which thresholds the values probe. *symmetry* maps an example
    to its representative under a relabelling the claim cannot tell apart (agents are interchangeable
    unless the claim names them); *canonical* is a form the check cannot tell apart either (a driver's
    declaration: two examples with one canonical form get one verdict). Examples whose symmetry class, or
    canonical form, was already run earlier in the canonical order are skipped and counted.
    """

    shape: Domain
    note: str = ""
    symmetry: Callable[[Any], Any] | None = None
    canonical: Callable[[Any], Any] | None = None
    deep: Domain | None = None  # the deep profile's shape (None: every sequence bound doubled)
    deep_note: str = ""  # what the deep shape thins or keeps, beside the note

    def at(self, bound: Bound) -> Domain:
        """The shape with every sequence bounded by *bound* (None: as declared; :data:`DEEP`: the deep
        profile's shape)."""
        if bound == DEEP:
            return deepen(self.shape) if self.deep is None else self.deep
        if isinstance(bound, str):
            raise ScopeError(f"unknown scope {bound!r}: a number or {DEEP!r}")
        return self.shape if bound is None else _rebound(self.shape, bound)

    def count(self, bound: Bound = None) -> int:
        """How many examples the scope holds (without enumerating them)."""
        return _count(self.at(bound))

    def describe(self, bound: Bound = None) -> dict[str, Any]:
        """The bound as the ledger states it: the sequence bound, the number of cases, each field's domain
        (``[item]0..3``: sequences of 0 to 3 items) and the note."""
        shape = self.at(bound)
        note = self.note
        if bound == DEEP and self.deep_note:
            note = f"{note}; deep: {self.deep_note}" if note else f"deep: {self.deep_note}"
        return {"bound": bound, "cases": _count(shape), "domain": _show(shape), "note": note}

    def text(self, bound: Bound = None) -> str:
        """:meth:`describe` in one line."""
        d = self.describe(bound)
        return f"{d['cases']} cases: {d['domain']}" + (f" ({d['note']})" if d["note"] else "")

    def fingerprint(self, bound: Bound = None) -> str:
        """A hash of the enumerated domain and the reductions' names (resumed progress is used only if they
        are unchanged)."""
        names = [f"{getattr(f, '__module__', '')}.{getattr(f, '__qualname__', '')}" if f else "" for f in
                 (self.symmetry, self.canonical)]  # fmt: skip
        return hashlib.sha256(repr((self.at(bound), names)).encode()).hexdigest()[:16]


def _rebound(d: Domain, n: int) -> Domain:
    if isinstance(d, Seq):
        hi = n if d.cap is None else min(n, d.cap)
        return Seq(_rebound(d.item, n), d.min_len, max(d.min_len, hi), d.cap, d.unique, d.prefix)
    if isinstance(d, Tup):
        return Tup(tuple(_rebound(x, n) for x in d.items))
    if isinstance(d, Record):
        return Record(tuple((k, _rebound(x, n)) for k, x in d.fields))
    if isinstance(d, Alt):
        return Alt(tuple(_rebound(x, n) for x in d.options))
    if isinstance(d, Mapping):
        return Mapping(d.keys, _rebound(d.value, n), d.min_keys, d.max_keys)
    return d


def deepen(d: Domain) -> Domain:
    """*d* with every sequence's ``max_len`` doubled, within its type's ``cap``."""
    if isinstance(d, Seq):
        hi = 2 * d.max_len if d.cap is None else min(2 * d.max_len, d.cap)
        return Seq(deepen(d.item), d.min_len, max(d.min_len, hi), d.cap, d.unique, d.prefix)
    if isinstance(d, Tup):
        return Tup(tuple(deepen(x) for x in d.items))
    if isinstance(d, Record):
        return Record(tuple((k, deepen(x)) for k, x in d.fields))
    if isinstance(d, Alt):
        return Alt(tuple(deepen(x) for x in d.options))
    if isinstance(d, Mapping):
        return Mapping(d.keys, deepen(d.value), d.min_keys, d.max_keys)
    return d


def bound_of(d: Domain) -> tuple[int, int | None] | None:
    """A shape's bound: its longest sequence's (``max_len``, the type's ``cap``), None without one."""
    found = [(s.max_len, s.cap) for s in _seqs(d)]
    return max(found, key=lambda b: b[0]) if found else None


def _show(d: Domain, limit: int = 6) -> str:
    """A compact rendering of a domain (values as JSON; long value lists cut to their ends)."""
    if isinstance(d, Values):
        vals = [json.dumps(v, ensure_ascii=False) for v in d.values]
        if len(vals) > limit:
            vals = [*vals[:2], "…", vals[-1]]
        return "{" + ", ".join(vals) + "}"
    if isinstance(d, Tup):
        return "(" + ", ".join(_show(x) for x in d.items) + ")"
    if isinstance(d, Record):
        return "{" + ", ".join(f"{k}: {_show(x)}" for k, x in d.fields) + "}"
    if isinstance(d, Alt):
        return " | ".join(_show(x) for x in d.options)
    if isinstance(d, Mapping):
        return f"{{{d.min_keys}..{d.max_keys} of {', '.join(d.keys)}: {_show(d.value)}}}"
    pre = "".join(json.dumps(p, ensure_ascii=False) + ", " for p in d.prefix)
    return f"[{pre}{_show(d.item)}]{d.min_len}..{d.max_len}" + (" distinct" if d.unique else "")


def _seqs(d: Domain) -> Iterator[Seq]:
    if isinstance(d, Seq):
        yield d
        yield from _seqs(d.item)
    elif isinstance(d, Tup):
        for x in d.items:
            yield from _seqs(x)
    elif isinstance(d, Record):
        for _k, x in d.fields:
            yield from _seqs(x)
    elif isinstance(d, Alt):
        for x in d.options:
            yield from _seqs(x)
    elif isinstance(d, Mapping):
        yield from _seqs(d.value)


def _count(d: Domain) -> int:
    if isinstance(d, Values):
        return len(d.values)
    if isinstance(d, Tup):
        return _prod(_count(x) for x in d.items)
    if isinstance(d, Record):
        return _prod(_count(x) for _k, x in d.fields)
    if isinstance(d, Alt):
        return sum(_count(x) for x in d.options)
    if isinstance(d, Mapping):
        v = _count(d.value)
        return sum(math.comb(len(d.keys), k) * v**k for k in range(d.min_keys, d.max_keys + 1))
    n = _count(d.item)
    if d.unique:
        return sum(math.perm(n, k) for k in range(d.min_len, d.max_len + 1))
    return sum(n**k for k in range(d.min_len, d.max_len + 1))


def _prod(xs: Any) -> int:
    out = 1
    for x in xs:
        out *= x
    return out


# -- enumeration ----------------------------------------------------------------------------------------
#: One enumerated value: (JSON value, sequence elements, rank sum, ranks in field order).
_Item = tuple[Any, int, int, tuple[int, ...]]


def _items(d: Domain) -> list[_Item]:
    if isinstance(d, Values):
        return [(v, 0, i, (i,)) for i, v in enumerate(d.values)]
    if isinstance(d, Alt):
        return [(v, n, i + r, (i, *ranks)) for i, o in enumerate(d.options) for v, n, r, ranks in _items(o)]
    if isinstance(d, (Tup, Record)):
        parts = [_items(x) for x in (d.items if isinstance(d, Tup) else [x for _k, x in d.fields])]
        out: list[_Item] = []
        for combo in itertools.product(*parts):
            value: Any = (
                [c[0] for c in combo]
                if isinstance(d, Tup)
                else {k: c[0] for (k, _x), c in zip(d.fields, combo)}
            )
            out.append((value, sum(c[1] for c in combo), sum(c[2] for c in combo),
                        tuple(r for c in combo for r in c[3])))  # fmt: skip
        return out
    if isinstance(d, Mapping):
        vals = _items(d.value)
        maps: list[_Item] = []
        for k in range(d.min_keys, d.max_keys + 1):
            for keys in itertools.combinations(range(len(d.keys)), k):
                for combo in itertools.product(vals, repeat=k):
                    maps.append(({d.keys[i]: c[0] for i, c in zip(keys, combo)},
                                 k + sum(c[1] for c in combo), sum(keys) + sum(c[2] for c in combo),
                                 (k, *keys, *(r for c in combo for r in c[3]))))  # fmt: skip
        return maps
    item = _items(d.item)
    seqs: list[_Item] = []
    for k in range(d.min_len, d.max_len + 1):
        combos = itertools.permutations(item, k) if d.unique else itertools.product(item, repeat=k)
        for combo in combos:
            value = [*d.prefix, *(c[0] for c in combo)]
            ranks = (k, *(r for c in combo for r in c[3]))
            seqs.append((value, k + sum(c[1] for c in combo), sum(c[2] for c in combo), ranks))
    return seqs


def enumerate_cases(scope: Scope, bound: Bound = None, *, limit: int = MAX_CASES) -> list[Any]:
    """Every example of *scope* in canonical order (size, then ranks lexicographically)."""
    shape = scope.at(bound)
    n = _count(shape)
    if n > limit:
        raise ScopeError(f"the scope has {n:,} cases, over the limit of {limit:,}")
    items = _items(shape)
    items.sort(key=lambda it: (it[1], it[2], it[3]))
    return [it[0] for it in items]


def size(scope: Scope, example: Any, bound: Bound = None) -> tuple[int, int] | None:
    """(sequence elements, rank sum) of *example* in *scope*, or None when it is outside the scope."""
    found = _locate(scope.at(bound), _jsonable(example))
    return None if found is None else (found[0], found[1])


def _locate(d: Domain, v: Any) -> tuple[int, int] | None:
    if isinstance(d, Values):
        for i, x in enumerate(d.values):
            if _same(x, v):
                return 0, i
        return None
    if isinstance(d, Alt):
        for i, o in enumerate(d.options):
            got = _locate(o, v)
            if got is not None:
                return got[0], got[1] + i
        return None
    if isinstance(d, Tup):
        if not isinstance(v, list) or len(v) != len(d.items):
            return None
        return _sum_all(_locate(x, y) for x, y in zip(d.items, v))
    if isinstance(d, Record):
        if not isinstance(v, dict) or set(v) != {k for k, _x in d.fields}:
            return None
        return _sum_all(_locate(x, v[k]) for k, x in d.fields)
    if isinstance(d, Mapping):
        if not isinstance(v, dict) or not set(v) <= set(d.keys) or not d.min_keys <= len(v) <= d.max_keys:
            return None
        got = _sum_all(_locate(d.value, y) for y in v.values())
        return None if got is None else (got[0] + len(v), got[1] + sum(d.keys.index(k) for k in v))
    if not isinstance(v, list) or not _same(v[: len(d.prefix)], list(d.prefix)):
        return None
    v = v[len(d.prefix) :]
    if not d.min_len <= len(v) <= d.max_len:
        return None
    if d.unique and len({json.dumps(y, sort_keys=True) for y in v}) != len(v):
        return None
    got = _sum_all(_locate(d.item, y) for y in v)
    return None if got is None else (got[0] + len(v), got[1])


def _sum_all(parts: Any) -> tuple[int, int] | None:
    n = r = 0
    for p in parts:
        if p is None:
            return None
        n, r = n + p[0], r + p[1]
    return n, r


def _same(a: Any, b: Any) -> bool:
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def _jsonable(x: Any) -> Any:
    """*x* as JSON would carry it (tuples as lists)."""
    return json.loads(json.dumps(x, default=str))


# -- validation -----------------------------------------------------------------------------------------
def validate(scope: Scope, example_type: Any, bound: Bound = None, cases: list[Any] | None = None) -> int:
    """Check that every example of *scope* is a valid *example_type* (raises :class:`ScopeError`
    naming the first that is not); returns the number of cases."""
    from pydantic import TypeAdapter, ValidationError

    if example_type is None:
        raise ScopeError("the claim declares no example_type to validate its scope against")
    adapter = TypeAdapter(example_type)
    todo = enumerate_cases(scope, bound) if cases is None else cases
    if not todo:
        raise ScopeError("the scope is empty")
    for case in todo:
        try:
            adapter.validate_python(case, strict=False)
        except ValidationError as exc:
            err = exc.errors()[0]
            where = ".".join(str(x) for x in err["loc"]) or "example"
            raise ScopeError(
                f"example {json.dumps(case, sort_keys=True)[:200]} is outside the example type: "
                f"{where}: {err['msg']}"
            ) from exc
    return len(todo)


# -- reductions -----------------------------------------------------------------------------------------
def interchangeable(*names: str) -> Callable[[Any], Any]:
    """A symmetry for ``Scope(symmetry=...)``: the agents *names* relabelled in order of first appearance
    (the first agent an example mentions becomes ``names[0]``, and so on), so ``[["claim", "b"]]`` and
    ``[["claim", "a"]]`` are one class.

    Sound only when the check treats the agents alike: it names none of them (no fixed sender, owner or
    recipient), and no other field holds one of these strings with another meaning.
    """
    if len(set(names)) != len(names) or len(names) < 2:
        raise ScopeError(f"interchangeable() needs two or more distinct names, not {names!r}")
    known = set(names)

    def canonical(example: Any) -> Any:
        order: dict[str, str] = {}

        def walk(x: Any) -> Any:
            if isinstance(x, str) and x in known:
                if x not in order:
                    order[x] = names[len(order)]
                return order[x]
            if isinstance(x, (list, tuple)):
                return [walk(y) for y in x]
            if isinstance(x, dict):
                return {k: walk(v) for k, v in x.items()}
            return x

        return walk(example)

    return canonical
