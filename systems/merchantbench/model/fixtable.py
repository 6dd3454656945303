"""The fixed variants' functions by name: :mod:`.agent` calls them through :data:`FIXES`, and :mod:`.fixes`,
which depends on the agent it fixes, fills the table when the model package loads (its ``__init__``
imports it). Issue 41: a fix depends on the model it fixes, never the reverse."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class FixTable:
    """Fix functions by name, read as attributes (``FIXES.group_request(agent)``)."""

    def __init__(self) -> None:
        self._fns: dict[str, Callable[..., Any]] = {}

    def register(self, *fns: Callable[..., Any]) -> None:
        """Add each function under its own name."""
        for fn in fns:
            self._fns[fn.__name__] = fn

    def __getattr__(self, name: str) -> Callable[..., Any]:
        try:
            return self.__dict__["_fns"][name]
        except KeyError:
            raise AttributeError(
                f"no fix function {name!r} registered (systems.merchantbench.model.fixes fills this table)"
            ) from None


#: The table :mod:`.fixes` fills and :class:`.agent.ReactAgent` reads.
FIXES = FixTable()
