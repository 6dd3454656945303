"""The closed, named set of faults a scenario or test may inject.

Models declare their crash points as named constants with :func:`declare_point` (``system.op.where``,
e.g. ``mydesign.write_doc.after_document``) and call :meth:`FaultPlan.point` there.
Scenarios, tests and the CLI select faults by name; an unknown kind or point is a :class:`UsageError`.

Fault kinds (the closed set):

``crash@POINT[#N]``
    The process dies at the named point between two writes (the N-th time it is reached, default 1):
    :meth:`FaultPlan.point` raises :class:`Crash`; what was written before the point stays.
``fail@POINT[#N]``
    The write (or remote call) at the named point fails: :meth:`FaultPlan.point` raises
    :class:`WriteFailed`, which the model handles as upstream does.
``skew:AGENT=SECONDS``
    The agent's wall clock is offset by SECONDS (negative runs slow), within ±1e9 s (about 31 years).
``drift:AGENT=RATE``
    The agent's wall clock runs at ``1 + RATE`` times simulation speed, RATE in [-0.9, 10].
``second-reader:AGENT``
    A second concurrent process reads with the same agent identity.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from sim.errors import MemsimError, UsageError

KINDS = ("crash", "fail", "skew", "drift", "second-reader")
#: The largest clock offset a skew may set, in seconds (about 31 years either way from the 2026 epoch:
#: every modeled date stays a calendar date inside the clock's range, :mod:`sim.clock`).
MAX_SKEW_S = 1e9
#: The drift rates a clock may run at: ``1 + RATE`` times simulation speed, RATE in [-0.9, 10].
MIN_DRIFT, MAX_DRIFT = -0.9, 10.0
#: The largest occurrence number ``#N`` a crash or fail fault may name.
MAX_OCCURRENCE = 10**9
#: The most faults one run may arm.
MAX_FAULTS = 100

_POINTS: dict[str, str] = {}


def declare_point(name: str, doc: str) -> str:
    """Declare the named fault point *name* (``system.op.where``) with a one-line *doc*; returns *name*."""
    if not re.fullmatch(r"[a-z0-9_]+(\.[a-z0-9_-]+)+", name):
        raise ValueError(f"fault point names are dotted lower-case identifiers, not {name!r}")
    _POINTS[name] = doc
    return name


def points(system: str | None = None) -> dict[str, str]:
    """Declared fault points (optionally of one system), name to doc, sorted by name."""
    return {k: v for k, v in sorted(_POINTS.items()) if system is None or k.startswith(system + ".")}


class Crash(MemsimError):
    """The modeled process crashed at a named point."""

    def __init__(self, point: str) -> None:
        super().__init__(f"crash at {point}")
        self.point = point


class WriteFailed(MemsimError):
    """A write or remote call failed at a named point."""

    def __init__(self, point: str) -> None:
        super().__init__(f"write failed at {point}")
        self.point = point


@dataclass(frozen=True)
class Fault:
    """One fault: its kind, its target (a point or an agent), a parameter, and which occurrence."""

    kind: str
    target: str
    value: float = 0.0
    occurrence: int = 1

    def __str__(self) -> str:
        if self.kind in ("crash", "fail"):
            return f"{self.kind}@{self.target}" + (f"#{self.occurrence}" if self.occurrence != 1 else "")
        if self.kind == "second-reader":
            return f"second-reader:{self.target}"
        short = f"{self.value:g}"
        return f"{self.kind}:{self.target}={short if float(short) == self.value else repr(self.value)}"


_SPEC = re.compile(
    r"(?P<kind>crash|fail)@(?P<point>[^#\s]+)(?:#(?P<n>\d+))?"
    r"|(?P<ckind>skew|drift):(?P<agent>[^=\s]+)=(?P<value>[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?)"
    r"|second-reader:(?P<reader>\S+)"
)


def parse_fault(spec: str, *, check_points: bool = True) -> Fault:
    """Parse a fault spec such as ``crash@mydesign.memory_set.after_snapshot`` or ``skew:bob=-600``."""
    m = _SPEC.fullmatch(spec.strip())
    if m is None:
        raise UsageError(
            f"unknown fault {spec!r}: expected crash@POINT, fail@POINT, skew:AGENT=SECONDS, "
            "drift:AGENT=RATE or second-reader:AGENT (see `memsim doc faults`)"
        )
    if m["kind"]:
        point = m["point"]
        if check_points and point not in _POINTS:
            raise UsageError(f"unknown fault point {point!r} (see `memsim doc faults`)")
        n = int(m["n"] or 1) if len(m["n"] or "1") <= 10 else MAX_OCCURRENCE + 1
        if not 1 <= n <= MAX_OCCURRENCE:
            raise UsageError(f"fault occurrence must be between 1 and {MAX_OCCURRENCE:,} in {spec!r}")
        return Fault(m["kind"], point, occurrence=n)
    if m["ckind"]:
        value = float(m["value"])
        if not math.isfinite(value):  # 1e999
            from sim.values import NOT_FINITE

            raise UsageError(f"{m['ckind']} value in {spec!r}: {NOT_FINITE}")
        if m["ckind"] == "skew" and not abs(value) <= MAX_SKEW_S:
            raise UsageError(f"skew must be within ±{MAX_SKEW_S:.0e} seconds in {spec!r}")
        if m["ckind"] == "drift" and not MIN_DRIFT <= value <= MAX_DRIFT:
            raise UsageError(f"drift rate must be between {MIN_DRIFT} and {MAX_DRIFT} in {spec!r}")
        return Fault(m["ckind"], m["agent"], value)
    return Fault("second-reader", m["reader"])


@dataclass
class FaultPlan:
    """The faults armed for one run, and the log of those that fired."""

    faults: tuple[Fault, ...] = ()
    fired: list[Fault] = field(default_factory=list)
    _hits: dict[str, int] = field(default_factory=dict)
    #: Agents the run asked about (a clock was made for them, or a second reader was looked up).
    queried: set[str] = field(default_factory=set)

    @classmethod
    def parse(cls, specs: list[str] | tuple[str, ...]) -> FaultPlan:
        """A plan from fault spec strings. An agent's skews and drifts add up, and the totals must stay
        within the bounds of one (:data:`MAX_SKEW_S`, :data:`MIN_DRIFT`..:data:`MAX_DRIFT`)."""
        if len(specs) > MAX_FAULTS:
            raise UsageError(f"at most {MAX_FAULTS} faults per run, not {len(specs)}")
        faults = tuple(parse_fault(s) for s in specs)
        skews: dict[str, float] = {}
        drifts: dict[str, float] = {}
        for f in faults:
            if f.kind == "skew":
                skews[f.target] = skews.get(f.target, 0.0) + f.value
            elif f.kind == "drift":
                drifts[f.target] = drifts.get(f.target, 0.0) + f.value
        for agent, total in skews.items():
            if not abs(total) <= MAX_SKEW_S:
                raise UsageError(
                    f"the skews of {agent} add up to {total:g} s; the limit is ±{MAX_SKEW_S:.0e} s"
                )
        for agent, total in drifts.items():
            if not MIN_DRIFT <= total <= MAX_DRIFT:
                raise UsageError(
                    f"the drifts of {agent} add up to {total:g}; the total must be between {MIN_DRIFT} and "
                    f"{MAX_DRIFT}"
                )
        return cls(faults)

    def point(self, name: str) -> None:
        """Reach the named point: raise :class:`Crash` or :class:`WriteFailed` if a fault is armed here."""
        if not self.faults:
            return
        hit = self._hits[name] = self._hits.get(name, 0) + 1
        for f in self.faults:
            if f.target == name and f.occurrence == hit and f.kind in ("crash", "fail"):
                self.fired.append(f)
                raise Crash(name) if f.kind == "crash" else WriteFailed(name)

    def armed(self, kind: str, target: str | None = None) -> list[Fault]:
        """Faults of *kind* (and *target*, if given)."""
        return [f for f in self.faults if f.kind == kind and (target is None or f.target == target)]

    def skew(self, agent: str) -> float:
        """The total clock offset armed for *agent*, in seconds."""
        self.queried.add(agent)
        return sum(f.value for f in self.armed("skew", agent))

    def drift(self, agent: str) -> float:
        """The clock drift rate armed for *agent*."""
        self.queried.add(agent)
        return sum(f.value for f in self.armed("drift", agent))

    def second_reader(self, agent: str) -> bool:
        """Whether a second concurrent reader with *agent*'s identity is armed."""
        self.queried.add(agent)
        return bool(self.armed("second-reader", agent))

    def hits(self, point: str) -> int:
        """How many times the run reached *point* (counted only when faults are armed)."""
        return self._hits.get(point, 0)

    def check_system(self, system: str) -> None:
        """Refuse a crash or fail point declared by another design than *system*."""
        for f in self.faults:
            if f.kind in ("crash", "fail") and not f.target.startswith(system + "."):
                raise UsageError(f"fault {f} names a point of another design; this run is {system}'s")

    def unknown_agents(self) -> list[Fault]:
        """Agent faults naming an agent the run never created (call after the run)."""
        return [f for f in self.faults if f.kind not in ("crash", "fail") and f.target not in self.queried]

    def unfired(self) -> list[Fault]:
        """Crash and fail faults that never fired (call after the run)."""
        return [f for f in self.faults if f.kind in ("crash", "fail") and f not in self.fired]
