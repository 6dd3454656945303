"""Per-agent modeled wall clocks: the only source of wall time inside a model.

Simulation time (``env.now``) is in seconds. An agent's wall clock reads
``EPOCH + now * (1 + drift) + offset`` and is kept in integer nanoseconds so that 19-digit timestamps
(object keys compared as strings), milliseconds (``wall_ms`` fields), ISO strings, dates (page names)
and file mtimes are all exact and reproducible. Skew is the constant offset, drift the rate error.

A clock represents what a signed 64-bit count of Unix nanoseconds can: 1970-01-01 to 2262-04-11 UTC
(:data:`MIN_NS`, :data:`MAX_NS`; the range of ``datetime64[ns]``, Go's ``UnixNano`` and the 19-digit keys).
A reading outside it (a run stepped by ``1e12`` s, a skew of ``1e300``), or a drift that would make the
clock stop or run backwards, raises :class:`ClockRange`: one line at the command line (exit code 2).
"""

from __future__ import annotations

import datetime as _dt
import math
from collections.abc import Callable

from sim.errors import UsageError

#: Modeled wall time at simulation time 0: 2026-01-05T00:00:00Z (a Monday), in nanoseconds.
EPOCH_NS = 1_767_571_200 * 1_000_000_000
#: The earliest and latest readings a clock represents, in Unix nanoseconds (1970-01-01 to 2262-04-11).
MIN_NS, MAX_NS = 0, 2**63 - 1
_RANGE = "1970-01-01 to 2262-04-11 UTC"
_DAY_NS = 86_400 * 1_000_000_000


class ClockRange(UsageError):
    """A wall-clock reading, offset or drift that a 64-bit nanosecond clock cannot represent."""


class AgentClock:
    """A wall clock for one agent, driven by the simulation clock *now* (seconds)."""

    def __init__(
        self, now: Callable[[], float], *, name: str = "", offset_s: float = 0.0, drift: float = 0.0
    ) -> None:
        self._now = now
        self.name = name
        if not (math.isfinite(drift) and drift > -1.0):
            raise ClockRange(
                f"the clock drift {drift!r} of agent {name!r} would stop its clock or run it backwards "
                "(it must be a finite rate above -1)"
            )
        self.drift = drift
        self.offset_ns = 0
        self._last_ns, self._last = -1, _dt.datetime.min  # the last datetime() reading
        self._day, self._day_text = -1, ""  # the last date() reading
        self.skew(offset_s)

    def skew(self, offset_s: float) -> None:
        """Shift this clock by *offset_s* seconds (negative runs slow) from now on."""
        total = self.offset_ns + offset_s * 1e9 if math.isfinite(offset_s) else math.inf
        if not abs(total) <= MAX_NS:
            raise ClockRange(
                f"the clock offset {offset_s!r} s of agent {self.name!r} is beyond what a wall clock can "
                f"represent ({_RANGE})"
            )
        self.offset_ns += round(offset_s * 1e9)

    def ns(self) -> int:
        """Nanoseconds since the Unix epoch (19 digits for any modeled date near the epoch)."""
        t = self._now()
        scaled = t * 1e9 * (1.0 + self.drift)
        if abs(scaled) <= MAX_NS:  # False for inf and NaN too
            ns = EPOCH_NS + round(scaled) + self.offset_ns
            if MIN_NS <= ns <= MAX_NS:
                return ns
        raise ClockRange(
            f"the wall clock of agent {self.name!r} cannot represent simulation time {t:g} s "
            f"(offset {self.offset_ns / 1e9:g} s, drift {self.drift:g}): modeled dates must fall within "
            f"{_RANGE}; shorten the run or its steps"
        )

    def ms(self) -> int:
        """Milliseconds since the Unix epoch (``int(time.time() * 1000)``)."""
        return self.ns() // 1_000_000

    def seconds(self) -> float:
        """Seconds since the Unix epoch as a float (``time.time()``, file mtimes)."""
        return self.ns() / 1_000_000_000

    def datetime(self) -> _dt.datetime:
        """An aware UTC datetime, microsecond precision (the last reading's is remembered: a model reads
        its clock several times at one simulation time)."""
        ns = self.ns()
        if ns != self._last_ns:
            self._last = _dt.datetime.fromtimestamp(ns // 1_000_000_000, _dt.UTC).replace(
                microsecond=(ns % 1_000_000_000) // 1000
            )
            self._last_ns = ns
        return self._last

    def iso(self) -> str:
        """``datetime.now(timezone.utc).isoformat()``: e.g. ``2026-01-05T00:00:01.500000+00:00``."""
        return self.datetime().isoformat()

    def date(self) -> str:
        """The local (UTC) date as ``YYYY-MM-DD`` (the last day's text is remembered)."""
        day = self.ns() // _DAY_NS
        if day != self._day:
            self._day_text = self.datetime().strftime("%Y-%m-%d")
            self._day = day
        return self._day_text
