"""A scope derived from a claim's ``example_type`` (:func:`derive`), with the thresholds declared.

Enums, ``Literal`` values and booleans are taken whole, ``None`` first where a field is optional; an
integer range becomes its bounds, the values next to them and its middle (the thresholds a claim turns
on are declared instead); a float range its bounds and middle; a list runs up to the scope's ``max_len``
within the type's own length limits; a ``dict`` with ``Literal`` keys any subset of its keys. A free
string has no finite domain to take: it must be declared.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Union

from typing_extensions import is_typeddict

from sim.exhaustive.scope import Alt, Domain, Mapping, Record, Scope, ScopeError, Seq, Tup, Values, deepen


@dataclass(frozen=True)
class _Bounds:
    ge: Any = None
    le: Any = None
    min_length: int | None = None
    max_length: int | None = None


def _bounds(meta: Any) -> _Bounds:
    found: dict[str, Any] = {}
    stack = list(meta)
    while stack:
        m = stack.pop()
        inner = getattr(m, "metadata", None)
        if isinstance(inner, list):
            stack += inner
        for k in ("ge", "le", "min_length", "max_length"):
            if getattr(m, k, None) is not None:
                found[k] = getattr(m, k)
        if getattr(m, "gt", None) is not None:
            found["ge"] = m.gt + 1
        if getattr(m, "lt", None) is not None:
            found["le"] = m.lt - 1
    return _Bounds(**found)


def _default_ints(lo: int, hi: int) -> Values:
    if hi - lo <= 3:
        return Values(tuple(range(lo, hi + 1)))
    return Values(tuple(dict.fromkeys((lo, lo + 1, (lo + hi) // 2, hi))))


@dataclass(frozen=True)
class _Derive:
    max_len: int
    overrides: dict[str, Domain] = field(default_factory=dict)
    used: set[str] = field(default_factory=set)

    def domain(self, t: Any, path: str, meta: tuple[Any, ...] = ()) -> Domain:
        if path in self.overrides:
            self.used.add(path)
            return self.overrides[path]
        origin = typing.get_origin(t)
        if origin is typing.Annotated:
            base, *more = typing.get_args(t)
            return self.domain(base, path, (*meta, *more))
        b = _bounds(meta)
        if t is bool:
            return Values((False, True))
        if t is type(None) or t is None:
            return Values((None,))
        if origin is Literal:
            return Values(typing.get_args(t))
        if origin is Union or origin is types.UnionType:
            args = typing.get_args(t)
            opts = [self.domain(a, path, meta) for a in args]
            atoms = [o for o in opts if isinstance(o, Values)]
            if len(atoms) == len(opts):  # Optional[...] and unions of enums: one value list, None first
                vals = [v for o in sorted(atoms, key=lambda o: o.values != (None,)) for v in o.values]
                return Values(tuple(dict.fromkeys(vals)))
            nones = [o for o in opts if o == Values((None,))]
            return Alt(tuple(nones + [o for o in opts if o != Values((None,))]))
        if t is int:
            if b.ge is None or b.le is None:
                raise ScopeError(f"{path or 'example'}: an unbounded int needs declared values")
            return _default_ints(int(b.ge), int(b.le))
        if t is float:
            if b.ge is None or b.le is None:
                raise ScopeError(f"{path or 'example'}: an unbounded float needs declared values")
            return Values(tuple(dict.fromkeys((float(b.ge), (b.ge + b.le) / 2, float(b.le)))))
        if t is str:
            raise ScopeError(f"{path or 'example'}: a free string needs declared values")
        if origin is dict:
            key, val = typing.get_args(t)
            if typing.get_origin(key) is not Literal:
                raise ScopeError(f"{path or 'example'}: a dict needs Literal keys, or a declared domain")
            keys = tuple(typing.get_args(key))
            most = len(keys) if b.max_length is None else min(len(keys), b.max_length)
            return Mapping(keys, self.domain(val, f"{path}.*".lstrip("."), ()), b.min_length or 0, most)
        if origin is tuple:
            args = typing.get_args(t)
            return Tup(tuple(self.domain(a, f"{path}.{i}".lstrip("."), ()) for i, a in enumerate(args)))
        if origin is list:
            (item,) = typing.get_args(t)
            lo = b.min_length or 0
            cap = b.max_length
            hi = max(lo, self.max_len if cap is None else min(cap, self.max_len))
            return Seq(self.domain(item, f"{path}.*".lstrip("."), ()), lo, hi, cap)
        if is_typeddict(t):
            hints = typing.get_type_hints(t, include_extras=True)
            return Record(tuple((k, self.domain(v, f"{path}.{k}".lstrip("."))) for k, v in hints.items()))
        fields = getattr(t, "model_fields", None)
        if isinstance(fields, dict):
            return Record(
                tuple(
                    (k, self.domain(f.annotation, f"{path}.{k}".lstrip("."), tuple(f.metadata)))
                    for k, f in fields.items()
                )
            )
        raise ScopeError(f"{path or 'example'}: cannot derive a domain for {t!r}; declare one")


def derive(
    example_type: Any,
    *,
    max_len: int = 2,
    note: str = "",
    symmetry: Callable[[Any], Any] | None = None,
    canonical: Callable[[Any], Any] | None = None,
    paths: dict[str, Domain] | None = None,
    deep: dict[str, Domain] | None = None,
    deep_note: str = "",
    **fields: Domain,
) -> Scope:
    """A scope derived from *example_type*: enums and booleans whole, an integer range as its bounds,
    the values next to them and its middle, lists up to *max_len* long (within the type's limits).

    *fields* (``steps=seq(...)``) and *paths* (``{"steps.*.0": values(0, 400)}``: ``*`` is a list's
    elements, a number a tuple's item, ``*`` alone the elements of a list-typed example) replace the
    derived domain of a field; the thresholds a claim turns on are declared this way.

    The deep profile (``--scope deep``) derives lists up to twice *max_len* and doubles the sequences of
    the declared domains (within the type's limits); *deep* replaces a path's domain there as declared
    (a claim whose doubled scope would not finish thins its values or keeps a nested bound; *deep_note*
    says how).
    """
    overrides = {**fields, **(paths or {})}
    derived = _Derive(max_len, overrides)
    shape = derived.domain(example_type, "")
    name = getattr(example_type, "__name__", example_type)
    unknown = sorted(set(overrides) - derived.used)
    if unknown:
        raise ScopeError(f"no field {unknown[0]!r} in {name}")
    deep_shape = None
    if deep:
        doubled = {k: deepen(v) for k, v in overrides.items()}
        deeper = _Derive(2 * max_len, {**doubled, **deep})
        deep_shape = deeper.domain(example_type, "")
        unknown = sorted(set(deep) - deeper.used)
        if unknown:
            raise ScopeError(f"no field {unknown[0]!r} in {name} (deep)")
    return Scope(
        shape, note=note, symmetry=symmetry, canonical=canonical, deep=deep_shape, deep_note=deep_note
    )
