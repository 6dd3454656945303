"""Claims: the failure modes the reports claim, each with a faithful and a fixed direction.

A :class:`Claim` is an id, a system, the report record IDs it covers, a one-line statement, the name of
the minimal fix, a Hypothesis strategy of examples and a pure ``check(sim, example, variant)`` that runs
the example against the ``faithful`` or ``fixed`` variant of the design and returns a :class:`Verdict`
(it never raises). Both directions run under the same search:

* **faithful** must produce a counterexample: :func:`find_counterexample` uses ``hypothesis.find`` and
  returns the shrunk example;
* **fixed** must hold: :func:`check_fixed` runs ``@given`` over the same strategy.

A property that cannot fail, or cannot pass, proves nothing; the claims suite checks both.
Systems register claims in ``systems/<name>/claims.py`` as a ``CLAIMS`` list; :func:`registry` collects
them. Profiles: ``quick``, ``ci`` (derandomized, bounded) and ``thorough``.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sim.engine import Simulation
from sim.errors import UsageError

FAITHFUL = "faithful"
FIXED = "fixed"
VARIANTS = (FAITHFUL, FIXED)


@dataclass(frozen=True)
class Verdict:
    """The outcome of one example: whether the property held, and why not."""

    holds: bool
    detail: str = ""

    @classmethod
    def ok(cls, detail: str = "") -> Verdict:
        return cls(True, detail)

    @classmethod
    def violated(cls, detail: str) -> Verdict:
        return cls(False, detail)


def _identity(x: Any) -> Any:
    return x


def _summary(x: Any) -> str:
    text = repr(x)
    return text if len(text) <= 240 else text[:237] + "..."


@dataclass(frozen=True)
class Claim:
    """One claimed failure mode with its minimal fix."""

    id: str
    system: str
    records: tuple[str, ...]
    statement: str
    fix: str
    strategy: Callable[[], Any]
    check: Callable[[Simulation, Any, str], Verdict]
    encode: Callable[[Any], Any] = _identity
    decode: Callable[[Any], Any] = _identity
    summarize: Callable[[Any], str] = _summary
    slow: bool = False

    def run(self, example: Any, variant: str, sim: Simulation | None = None) -> Verdict:
        """Check *example* against *variant* in *sim* (a fresh in-memory simulation by default)."""
        own = sim is None
        sim = sim or Simulation(0)
        try:
            return self.check(sim, example, variant)
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
        check: Callable[[Simulation, Any, str], Verdict],
        **kw: Any,
    ) -> Claim:
        return Claim(
            f"{system}.{cid}", system, tuple(records), statement, fix, strategy, check, **{**defaults, **kw}
        )

    return make


# -- profiles ---------------------------------------------------------------------------------------
PROFILES: dict[str, dict[str, Any]] = {
    "quick": {"max_examples": 40, "derandomize": True},
    "ci": {"max_examples": 100, "derandomize": True},
    "thorough": {"max_examples": 1500, "derandomize": False},
}


def register_profiles() -> None:
    """Register memsim's Hypothesis profiles (``quick``, ``ci``, ``thorough``) with Hypothesis."""
    from hypothesis import HealthCheck, settings

    for name, kw in PROFILES.items():
        settings.register_profile(
            name,
            deadline=None,
            database=None,
            print_blob=False,
            suppress_health_check=[
                HealthCheck.too_slow,
                HealthCheck.data_too_large,
                HealthCheck.filter_too_much,
            ],
            **kw,
        )


def _settings(profile: str) -> Any:
    from hypothesis import HealthCheck, Phase, settings

    if profile not in PROFILES:
        raise UsageError(f"unknown profile {profile!r}: expected one of {', '.join(PROFILES)}")
    kw = dict(PROFILES[profile])
    return settings(
        deadline=None,
        database=None,
        print_blob=False,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
        phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink],
        **kw,
    )


@dataclass
class Outcome:
    """The result of running one claim in one direction."""

    claim: str
    variant: str
    passed: bool
    examples: int
    seconds: float
    seed: int
    example: Any = None
    summary: str = ""
    detail: str = ""


def find_counterexample(claim: Claim, profile: str = "ci", seed: int = 0) -> Outcome:
    """Search the faithful design for a counterexample and shrink it. ``passed`` when one is found."""
    from hypothesis import find
    from hypothesis.errors import NoSuchExample, Unsatisfiable

    count = 0

    def violated(example: Any) -> bool:
        nonlocal count
        count += 1
        return not claim.run(example, FAITHFUL).holds

    t0 = time.perf_counter()
    try:
        example = find(claim.strategy(), violated, settings=_settings(profile), random=random.Random(seed))
    except (NoSuchExample, Unsatisfiable):
        return Outcome(
            claim.id,
            FAITHFUL,
            False,
            count,
            time.perf_counter() - t0,
            seed,
            detail="no counterexample found on the faithful design",
        )
    verdict = claim.run(example, FAITHFUL)
    return Outcome(
        claim.id,
        FAITHFUL,
        True,
        count,
        time.perf_counter() - t0,
        seed,
        example,
        claim.summarize(example),
        verdict.detail,
    )


def check_fixed(claim: Claim, profile: str = "ci", seed: int = 0) -> Outcome:
    """Run the same search against the fixed variant. ``passed`` when every example holds."""
    from hypothesis import given
    from hypothesis import seed as hseed

    count = 0
    failure: list[tuple[Any, Verdict]] = []

    @_settings(profile)
    @hseed(seed)
    @given(claim.strategy())
    def prop(example: Any) -> None:
        nonlocal count
        count += 1
        verdict = claim.run(example, FIXED)
        if not verdict.holds:
            failure[:] = [(example, verdict)]
            raise AssertionError(verdict.detail)

    t0 = time.perf_counter()
    try:
        prop()
    except AssertionError:
        example, verdict = failure[0]
        return Outcome(
            claim.id,
            FIXED,
            False,
            count,
            time.perf_counter() - t0,
            seed,
            example,
            claim.summarize(example),
            verdict.detail,
        )
    return Outcome(claim.id, FIXED, True, count, time.perf_counter() - t0, seed)


# -- registry ---------------------------------------------------------------------------------------
def registry(system: str | None = None) -> dict[str, Claim]:
    """Every registered claim (optionally of one system), by id, in system then declaration order."""
    from systems import SYSTEMS

    if system is not None and system not in SYSTEMS:
        raise UsageError(f"unknown system {system!r}: expected one of {', '.join(SYSTEMS)}")
    out: dict[str, Claim] = {}
    for name in SYSTEMS:
        if system is not None and name != system:
            continue
        modname = f"systems.{name}.claims"
        if importlib.util.find_spec(f"systems.{name}") is None or importlib.util.find_spec(modname) is None:
            continue
        for c in importlib.import_module(modname).CLAIMS:
            if c.id in out:
                raise ValueError(f"duplicate claim id {c.id}")
            out[c.id] = c
    return out


def get(claim_id: str) -> Claim:
    """The claim *claim_id*; raises :class:`UsageError`."""
    claims = registry()
    if claim_id not in claims:
        raise UsageError(f"unknown claim {claim_id!r} (see `memsim doc claims`)")
    return claims[claim_id]


@dataclass
class SavedExample:
    """A shrunk counterexample saved for :func:`replay`."""

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


def save_example(claim: Claim, outcome: Outcome) -> SavedExample:
    """The saved form of a faithful outcome's shrunk example."""
    return SavedExample(
        claim.id,
        FAITHFUL,
        outcome.seed,
        claim.encode(outcome.example),
        {"summary": outcome.summary, "detail": outcome.detail},
    )


def load_example(text: str) -> tuple[Claim, str, Any]:
    """Parse a saved example: the claim, the variant and the decoded example."""
    try:
        data = json.loads(text)
        claim = get(data["claim"])
        variant = data.get("variant", FAITHFUL)
        if variant not in VARIANTS:
            raise UsageError(f"unknown variant {variant!r}")
        return claim, variant, claim.decode(data["example"])
    except (ValueError, KeyError, TypeError) as exc:
        if isinstance(exc, UsageError):
            raise
        raise UsageError(f"not a saved claim example: {exc}") from exc
