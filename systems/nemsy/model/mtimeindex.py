"""The mtime index of the Wiki (:class:`MtimeIndex`): every ``*.md`` and the loadable pages newest first,
so the loader selects the newest N in O(N). Moved out of :mod:`.vault` (issue 41) so that :mod:`.base`,
which holds one, does not import the layer built on it.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Callable
from typing import Any

from sim.spill import PathTable
from systems.nemsy.model.pages import loadable, path_key

#: How many decoded paths :meth:`MtimeIndex.newest` keeps (a load asks for 10 to 50; ids never change path).
_DECODED = 256


class _Desc:
    """A sort key ordered the other way round (later path order sorts first)."""

    __slots__ = ("key",)

    def __init__(self, key: tuple[str, ...]) -> None:
        self.key = key

    def __lt__(self, other: _Desc) -> bool:
        return other.key < self.key

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Desc) and other.key == self.key

    __hash__ = None  # type: ignore[assignment]


class MtimeIndex:
    """Every ``*.md`` under the Wiki, and the loadable ones ordered by (mtime desc, path order).

    :meth:`newest` returns the first N in O(N): no stat and no body read of the other pages. Each
    loadable page is an id of a :class:`~sim.spill.PathTable` (issue 42: no ``str`` key per page), its
    mtime a machine float beside it, and the order an array of ids held oldest first, so that a page
    written now (the newest, almost always) is appended, not inserted in front of every other.
    """

    def __init__(self) -> None:
        self._other: set[str] = set()  # the *.md files that are not loadable (index.md, log.md)
        self._paths = PathTable()
        self._mtime = array("d")  # by id; NaN: not a page now
        self._order = array("i")  # ids of the loadable pages, oldest first (the reverse of the order)
        self._decoded: dict[int, str] = {}  # the last paths newest() decoded, by id (at most _DECODED)

    def has_md(self) -> bool:
        """Whether any ``*.md`` is under the Wiki."""
        return bool(self._order or self._other)

    def md(self) -> list[str]:
        """Every ``*.md`` under the Wiki (in no particular order)."""
        return [*(self._paths.path(j) for j in self._order), *self._other]

    def _key(self, j: int) -> tuple[float, _Desc]:
        """The stored (ascending) order: oldest first, ties in reverse path order."""
        return (self._mtime[j], _Desc(path_key(self._paths.path(j))))

    def _live(self, rel: str) -> int:
        j = self._paths.find(rel)
        return j if j >= 0 and not math.isnan(self._mtime[j]) else -1

    def put(self, rel: str, mtime: float) -> None:
        """Record that *rel* exists with *mtime*."""
        if not rel.endswith(".md"):
            return
        if not loadable(rel):
            self._other.add(rel)
            return
        self.drop_key(rel)
        j = self._paths.add(rel)
        while len(self._mtime) <= j:
            self._mtime.append(math.nan)
        self._mtime[j] = mtime
        order = self._order
        if not order or self._key(order[-1]) < self._key(j):
            order.append(j)
        else:
            order.insert(_bisect(order, self._key(j), self._key), j)

    def drop_key(self, rel: str) -> None:
        j = self._live(rel)
        if j >= 0:
            i = _bisect(self._order, self._key(j), self._key)
            del self._order[i]
            self._mtime[j] = math.nan

    def drop(self, rel: str) -> None:
        """Record that *rel* is gone."""
        self._other.discard(rel)
        self.drop_key(rel)

    def newest(self, n: int) -> list[str]:
        """The *n* newest loadable pages (ties in path order)."""
        order, decoded = self._order, self._decoded
        ids = [order[i] for i in range(len(order) - 1, max(-1, len(order) - 1 - n), -1)]
        if len(ids) > _DECODED:
            return [self._paths.path(j) for j in ids]
        if len(decoded) + len(ids) > _DECODED:  # each load asks for the same few pages, the newest
            decoded.clear()
        out = []
        for j in ids:
            rel = decoded.get(j)
            if rel is None:
                rel = decoded[j] = self._paths.path(j)
            out.append(rel)
        return out

    def loadable(self) -> list[str]:
        """Every loadable page, newest first."""
        return self.newest(len(self._order))

    def mtime(self, rel: str) -> float:
        j = self._live(rel)
        if j < 0:
            raise KeyError(rel)
        return self._mtime[j]

    def __len__(self) -> int:
        return len(self._order)


def _bisect(order: array[int], key: Any, key_of: Callable[[int], Any]) -> int:
    """The first position in *order* whose key is not below *key*."""
    lo, hi = 0, len(order)
    while lo < hi:
        mid = (lo + hi) // 2
        if key_of(order[mid]) < key:
            lo = mid + 1
        else:
            hi = mid
    return lo
