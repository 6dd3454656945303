"""Claims: the failure modes the reports claim, each checked in four directions over one strategy.

A :class:`Claim` is an id, a design, the report record IDs it covers, a one-line statement, the minimal
fix (its switch names and a sentence), the *off switch* (the mechanism under test switched off), a
Hypothesis strategy of examples and a pure ``check(sim, example, variant) -> Verdict``. The claims runner
(:mod:`sim.search`, :mod:`sim.ledger`) maps each direction to a :class:`~sim.variant.Variant` of the
design and runs the same check:

=============  =========================================  ===============================================
direction      variant                                    expected
=============  =========================================  ===============================================
``faithful``   upstream's design (or the claim's           a counterexample, shrunk
               counterfactual weakening)
``fixed``      the claim's fixes on                       holds for every example
``off``        the claim's fixes on, the feature off      a counterexample, shrunk: the property asserts
                                                          the feature's *service*, not only the absence
                                                          of the failure, so "delete the feature" fails
``combined``   every fix the design declares on at once   holds for every example
=============  =========================================  ===============================================

*example_type* is the JSON shape of an example with the strategy's bounds (a type pydantic validates, e.g.
a ``TypedDict`` with ``Annotated[int, Field(ge=0, le=1500)]`` fields): ``memsim replay`` refuses a saved
example outside it, so a file cannot make a replay run forever. *intent* says so where upstream chose the
claimed behaviour on purpose.

A check never raises: :meth:`Claim.run` turns an exception into a violated verdict marked ``raised``, once,
for every design. Designs declare claims in their ``claims`` module as ``CLAIMS``; :func:`registry`
collects them from the installed designs (:mod:`sim.registry`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sim.engine import Simulation
from sim.errors import UsageError
from sim.variant import Variant

FAITHFUL = "faithful"
FIXED = "fixed"
OFF = "off"
COMBINED = "combined"
DIRECTIONS = (FAITHFUL, FIXED, OFF, COMBINED)
#: Whether each direction's property must hold (True) or must yield a counterexample (False).
EXPECT_HOLDS = {FAITHFUL: False, FIXED: True, OFF: False, COMBINED: True}
#: The directions a saved example may be replayed in (kept for older saved files).
VARIANTS = DIRECTIONS


@dataclass(frozen=True)
class Verdict:
    """The outcome of one example: whether the property held, and why not."""

    holds: bool
    detail: str = ""
    raised: bool = False

    @classmethod
    def ok(cls, detail: str = "") -> Verdict:
        return cls(True, detail)

    @classmethod
    def violated(cls, detail: str) -> Verdict:
        return cls(False, detail)


def _identity(x: Any) -> Any:
    return x


def summarize_json(x: Any, limit: int = 240) -> str:
    """A one-line JSON summary of an example, cut at *limit* characters."""
    try:
        text = json.dumps(x, ensure_ascii=False, sort_keys=True, default=str)
    except (TypeError, ValueError):
        text = repr(x)
    return text if len(text) <= limit else text[: limit - 3] + "..."


@dataclass(frozen=True)
class Claim:
    """One claimed failure mode with its minimal fix and its off switch."""

    id: str
    system: str
    records: tuple[str, ...]
    statement: str
    fix: str
    strategy: Callable[[], Any]
    check: Callable[[Simulation, Any, Any], Verdict]
    fixes: tuple[str, ...] = ()
    off: tuple[str, ...] = ()
    counterfactuals: tuple[str, ...] = ()
    intent: str = ""
    example_type: Any = None
    encode: Callable[[Any], Any] = _identity
    decode: Callable[[Any], Any] = _identity
    summarize: Callable[[Any], str] = summarize_json
    slow: bool = False

    def __post_init__(self) -> None:
        if not (self.fixes or self.counterfactuals) or not self.off:
            raise ValueError(f"claim {self.id} must declare fixes= (or counterfactuals=) and off=")

    @property
    def counterfactual(self) -> bool:
        """Whether the faithful direction runs on a counterfactual design rather than upstream's."""
        return bool(self.counterfactuals)

    @property
    def directions(self) -> tuple[str, ...]:
        """The directions this claim runs in (all four)."""
        return DIRECTIONS

    def variant(self, direction: str) -> Variant:
        """The design variant of *direction*."""
        if direction == FAITHFUL:
            return Variant(counterfactuals=frozenset(self.counterfactuals))
        if direction == FIXED:
            return Variant(fixes=frozenset(self.fixes))
        if direction == OFF:
            return Variant(fixes=frozenset(self.fixes), off=frozenset(self.off))
        if direction == COMBINED:
            from sim.registry import design

            return design(self.system).switches.all_fixes()
        raise UsageError(f"unknown direction {direction!r}: expected one of {', '.join(DIRECTIONS)}")

    def run(self, example: Any, direction: str | Variant, sim: Simulation | None = None) -> Verdict:
        """Check *example* in *direction* (or against an explicit variant) in *sim* (fresh by default).

        An exception inside the check is a violated verdict marked ``raised``; it never propagates.
        """
        arg = direction if isinstance(direction, Variant) else self.variant(direction)
        own = sim is None
        sim = sim or Simulation(0)
        try:
            return self.check(sim, example, arg)
        except Exception as exc:  # a check never raises: the error is the verdict
            return Verdict(False, f"raised {type(exc).__name__}: {exc}", raised=True)
        finally:
            if own:
                sim.close()


def claim_factory(system: str, **defaults: Any) -> Callable[..., Claim]:
    """A constructor of *system*'s claims: ``make(cid, records, statement, fix, strategy, check, **kw)``.

    The claim id becomes ``"<system>.<cid>"``; *defaults* (e.g. ``summarize=``) apply to every claim.
    """

    def make(
        cid: str,
        records: tuple[str, ...],
        statement: str,
        fix: str,
        strategy: Callable[[], Any],
        check: Callable[[Simulation, Any, Any], Verdict],
        **kw: Any,
    ) -> Claim:
        return Claim(
            f"{system}.{cid}", system, tuple(records), statement, fix, strategy, check, **{**defaults, **kw}
        )

    return make


# -- the registry -----------------------------------------------------------------------------------
def registry(system: str | None = None) -> dict[str, Claim]:
    """Every registered claim (optionally of one design), by id, in design then declaration order."""
    from sim.registry import design, designs

    names = [design(system).name] if system is not None else list(designs())
    out: dict[str, Claim] = {}
    for name in names:
        for c in designs()[name].claims():
            if c.id in out:
                raise ValueError(f"duplicate claim id {c.id}")
            if c.system != name:
                raise ValueError(f"claim {c.id} is declared by {name} but names design {c.system}")
            switches = designs()[name].switches
            for direction in (FAITHFUL, FIXED, OFF):
                switches.check(c.variant(direction))
            out[c.id] = c
    return out


def get(claim_id: str) -> Claim:
    """The claim *claim_id*; raises :class:`UsageError`."""
    system = claim_id.split(".", 1)[0]
    from sim.registry import designs

    claims = registry(system) if system in designs() else {}
    if claim_id not in claims:
        raise UsageError(f"unknown claim {claim_id!r} (see `memsim doc claims`)")
    return claims[claim_id]


# -- saved examples ---------------------------------------------------------------------------------
@dataclass
class SavedExample:
    """A shrunk counterexample saved for ``memsim replay``."""

    claim: str
    variant: str
    seed: int
    example: Any
    extra: dict[str, Any] = field(default_factory=dict)

    def dumps(self) -> str:
        return json.dumps(
            {
                "claim": self.claim,
                "variant": self.variant,
                "seed": self.seed,
                "example": self.example,
                **self.extra,
            },
            ensure_ascii=False,
            sort_keys=True,
            indent=2,
            default=str,
        )


def save_example(claim: Claim, outcome: Any, direction: str = FAITHFUL) -> SavedExample:
    """The saved form of a found outcome's shrunk example (*direction*: faithful or off)."""
    return SavedExample(
        claim.id,
        direction,
        outcome.seed,
        claim.encode(outcome.example),
        {"summary": outcome.summary, "detail": outcome.detail},
    )
