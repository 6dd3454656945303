"""Per-agent modeled wall clocks: the only source of wall time inside a model.

Simulation time (``env.now``) is in seconds. An agent's wall clock reads
``EPOCH + now * (1 + drift) + offset`` and is kept in integer nanoseconds so that 19-digit timestamps
(Tracecraft keys), milliseconds (MerchantBench ``wall_ms``), ISO strings, dates (Nemsy page names) and
file mtimes are all exact and reproducible. Skew is the constant offset, drift the rate error.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Callable

#: Modeled wall time at simulation time 0: 2026-01-05T00:00:00Z (a Monday), in nanoseconds.
EPOCH_NS = 1_767_571_200 * 1_000_000_000


class AgentClock:
    """A wall clock for one agent, driven by the simulation clock *now* (seconds)."""

    def __init__(
        self, now: Callable[[], float], *, name: str = "", offset_s: float = 0.0, drift: float = 0.0
    ) -> None:
        self._now = now
        self.name = name
        self.offset_ns = round(offset_s * 1e9)
        self.drift = drift

    def skew(self, offset_s: float) -> None:
        """Shift this clock by *offset_s* seconds (negative runs slow) from now on."""
        self.offset_ns += round(offset_s * 1e9)

    def ns(self) -> int:
        """Nanoseconds since the Unix epoch (19 digits for any modeled date)."""
        return EPOCH_NS + round(self._now() * 1e9 * (1.0 + self.drift)) + self.offset_ns

    def ms(self) -> int:
        """Milliseconds since the Unix epoch (``int(time.time() * 1000)``)."""
        return self.ns() // 1_000_000

    def seconds(self) -> float:
        """Seconds since the Unix epoch as a float (``time.time()``, file mtimes)."""
        return self.ns() / 1_000_000_000

    def datetime(self) -> _dt.datetime:
        """An aware UTC datetime, microsecond precision."""
        ns = self.ns()
        return _dt.datetime.fromtimestamp(ns // 1_000_000_000, _dt.UTC).replace(
            microsecond=(ns % 1_000_000_000) // 1000
        )

    def iso(self) -> str:
        """``datetime.now(timezone.utc).isoformat()``: e.g. ``2026-01-05T00:00:01.500000+00:00``."""
        return self.datetime().isoformat()

    def date(self) -> str:
        """The local (UTC) date as ``YYYY-MM-DD``."""
        return self.datetime().strftime("%Y-%m-%d")
