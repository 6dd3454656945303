"""A hop's request as provider texts (RT-RTE-react-loop): the head upstream sends before the messages
(system prompt, tool schemas) and one text per message, built only when something reads them.

Upstream: ``agent/baselines/react_160k_compact_30k.py`` (the request of ``_drive_step``); the provider text
of a message is :func:`~systems.merchantbench.model.estimate.provider_text`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, overload

from systems.merchantbench.model.estimate import provider_text


class Parts(Sequence[str]):
    """A request's provider texts: the head (system prompt, tool schemas) and one text per message of the
    request *msgs* after its first *skip* (the system message, whose text is the head's prompt), built on
    first use (a hop that nobody reads the texts of builds none). *policy_retry*: the request is the
    Forbidden retry (sent without message cache marks)."""

    __slots__ = ("_items", "_msgs", "_skip", "head", "policy_retry")

    def __init__(self, head: list[str], msgs: list[dict[str, Any]], skip: int = 0) -> None:
        self.head, self._msgs, self._skip = head, msgs, skip
        self._items: list[str] | None = None
        self.policy_retry = False

    @property
    def body(self) -> list[dict[str, Any]]:
        """The request's messages after the system message."""
        return self._msgs[self._skip :]

    def _all(self) -> list[str]:
        if self._items is None:
            self._items = self.head + [provider_text(m) for m in self.body]
        return self._items

    def __len__(self) -> int:
        return len(self.head) + len(self._msgs) - self._skip

    @overload
    def __getitem__(self, i: int) -> str: ...
    @overload
    def __getitem__(self, i: slice) -> list[str]: ...
    def __getitem__(self, i: int | slice) -> str | list[str]:
        return self._all()[i]

    def __iter__(self) -> Iterator[str]:
        return iter(self._all())
