"""The mtime index of the Wiki (:class:`MtimeIndex`): every ``*.md`` and the loadable pages newest first,
so the loader selects the newest N in O(N). Moved out of :mod:`.vault` (issue 41) so that :mod:`.base`,
which holds one, does not import the layer built on it.
"""

from __future__ import annotations

import bisect

from systems.nemsy.model.pages import loadable, path_key


class MtimeIndex:
    """Every ``*.md`` under the Wiki, and the loadable ones ordered by (mtime desc, path order).

    :meth:`newest` returns the first N in O(N): no stat and no body read of the other pages. Each page
    is held as its path in the order and its mtime (issue 33: no sort-key tuple per page, made only for
    the pages a bisection compares, and no second set of the loadable pages' paths).
    """

    def __init__(self) -> None:
        self._other: set[str] = set()  # the *.md files that are not loadable (index.md, log.md)
        self._order: list[str] = []  # loadable pages by _key
        self._mtime: dict[str, float] = {}

    def has_md(self) -> bool:
        """Whether any ``*.md`` is under the Wiki."""
        return bool(self._mtime or self._other)

    def md(self) -> list[str]:
        """Every ``*.md`` under the Wiki (in no particular order)."""
        return [*self._mtime, *self._other]

    def _key(self, rel: str) -> tuple[float, tuple[str, ...], str]:
        return (-self._mtime[rel], path_key(rel), rel)

    def put(self, rel: str, mtime: float) -> None:
        """Record that *rel* exists with *mtime*."""
        if not rel.endswith(".md"):
            return
        if not loadable(rel):
            self._other.add(rel)
            return
        self.drop_key(rel)
        self._mtime[rel] = mtime
        bisect.insort(self._order, rel, key=self._key)

    def drop_key(self, rel: str) -> None:
        if rel in self._mtime:
            i = bisect.bisect_left(self._order, self._key(rel), key=self._key)
            del self._order[i]
            del self._mtime[rel]

    def drop(self, rel: str) -> None:
        """Record that *rel* is gone."""
        self._other.discard(rel)
        self.drop_key(rel)

    def newest(self, n: int) -> list[str]:
        """The *n* newest loadable pages (ties in path order)."""
        return self._order[: max(0, n)]

    def loadable(self) -> list[str]:
        """Every loadable page, newest first."""
        return list(self._order)

    def mtime(self, rel: str) -> float:
        return self._mtime[rel]

    def __len__(self) -> int:
        return len(self._order)
