"""The Hypothesis search behind every claim direction, and memsim's profiles.

:func:`find_counterexample` runs ``hypothesis.find`` on a direction that must fail (faithful, off) and
returns the shrunk example; :func:`check_holds` runs an ordinary ``@given`` property on a direction that
must hold (fixed, combined). Both use the claim's one strategy. Profiles: ``quick`` (40 examples),
``ci`` (100, derandomized: the test suite's) and ``thorough`` (1,500, randomized by the search seed).

Hypothesis keeps no example database here (``database=None``) and its home directory is never the
user's working directory: :func:`use_private_home` points it at a per-user cache directory.
"""

from __future__ import annotations

import os
import random
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sim.claims import EXPECT_HOLDS, FAITHFUL, FIXED, Claim, Verdict
from sim.errors import UsageError

PROFILES: dict[str, dict[str, Any]] = {
    "quick": {"max_examples": 40, "derandomize": True},
    "ci": {"max_examples": 100, "derandomize": True},
    "thorough": {"max_examples": 1500, "derandomize": False},
}


def use_private_home() -> Path:
    """Point Hypothesis' home at ``$XDG_CACHE_HOME/memsim/hypothesis`` (never the working directory)."""
    from hypothesis import configuration

    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    home = Path(base) / "memsim" / "hypothesis"
    try:
        home.mkdir(parents=True, exist_ok=True)
    except OSError:
        home = (
            Path(tempfile.gettempdir()) / f"memsim-hypothesis-{os.getuid() if hasattr(os, 'getuid') else 0}"
        )
        home.mkdir(parents=True, exist_ok=True)
    configuration.set_hypothesis_home_dir(str(home))
    pin_generation()
    return home


def pin_generation() -> None:
    """Make generation depend only on the strategy and the seed, not on which modules are loaded.

    Hypothesis seeds generation with literal constants it scans from every local module in
    ``sys.modules``, so the same claim could shrink to another example after another claim (or a test)
    imported more modules, or in a worker process. memsim pins that pool to empty: a claim's
    counterexample is the same in every process and in every order.
    """
    try:
        from hypothesis.internal.conjecture import providers
    except ImportError:  # pragma: no cover - a Hypothesis without local constants
        return
    if hasattr(providers, "_get_local_constants") and hasattr(providers, "Constants"):
        empty = providers.Constants()
        providers._get_local_constants = lambda: empty
        providers.CONSTANTS_CACHE.cache.clear()


def _common() -> dict[str, Any]:
    from hypothesis import HealthCheck

    return {
        "deadline": None,
        "database": None,
        "print_blob": False,
        "suppress_health_check": [
            HealthCheck.too_slow,
            HealthCheck.data_too_large,
            HealthCheck.filter_too_much,
        ],
    }


def register_profiles() -> None:
    """Register memsim's Hypothesis profiles (``quick``, ``ci``, ``thorough``) with Hypothesis."""
    from hypothesis import settings

    for name, kw in PROFILES.items():
        settings.register_profile(name, **_common(), **kw)


def check_profile(profile: str) -> str:
    """*profile*, if it is one of :data:`PROFILES`; raises :class:`UsageError`."""
    if profile not in PROFILES:
        raise UsageError(f"unknown profile {profile!r}: expected one of {', '.join(PROFILES)}")
    return profile


def _settings(profile: str) -> Any:
    from hypothesis import Phase, settings

    check_profile(profile)
    return settings(
        **_common(),
        phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink],
        **PROFILES[profile],
    )


@dataclass
class Outcome:
    """The result of running one claim in one direction: ``passed`` when the direction is as expected."""

    claim: str
    variant: str
    passed: bool
    examples: int
    seconds: float
    seed: int
    example: Any = None
    summary: str = ""
    detail: str = ""


def find_counterexample(
    claim: Claim, profile: str = "ci", seed: int = 0, direction: str = FAITHFUL
) -> Outcome:
    """Search *direction* (faithful or off) for a counterexample and shrink it; ``passed`` when found."""
    from hypothesis import find
    from hypothesis.errors import NoSuchExample, Unsatisfiable

    if EXPECT_HOLDS[direction]:
        raise ValueError(f"direction {direction} must hold; use check_holds")
    count = 0

    def violated(example: Any) -> bool:
        nonlocal count
        count += 1
        return not claim.run(example, direction).holds

    use_private_home()
    t0 = time.perf_counter()
    try:
        example = find(claim.strategy(), violated, settings=_settings(profile), random=random.Random(seed))
    except (NoSuchExample, Unsatisfiable):
        return Outcome(
            claim.id, direction, False, count, time.perf_counter() - t0, seed,
            detail=f"no counterexample found on the {direction} variant",
        )  # fmt: skip
    verdict = claim.run(example, direction)
    return Outcome(
        claim.id, direction, True, count, time.perf_counter() - t0, seed, example,
        claim.summarize(example), verdict.detail,
    )  # fmt: skip


def _search_holds(
    claim: Claim, directions: tuple[str, ...], profile: str, seed: int
) -> tuple[int, dict[str, float], float, tuple[Any, Verdict] | None]:
    """One ``@given`` search checking each example in every direction of *directions* (each must hold):
    the examples run, each direction's seconds in its own runs, the search's seconds, and the first
    ``(example, verdict)`` that failed (shrunk), or None."""
    from hypothesis import given
    from hypothesis import seed as hseed

    for direction in directions:
        if not EXPECT_HOLDS[direction]:
            raise ValueError(f"direction {direction} must fail; use find_counterexample")
    count = 0
    spent = dict.fromkeys(directions, 0.0)
    failure: list[tuple[Any, Verdict]] = []

    @_settings(profile)
    @hseed(seed)
    @given(claim.strategy())
    def prop(example: Any) -> None:
        nonlocal count
        count += 1
        for direction in directions:
            t = time.perf_counter()
            verdict = claim.run(example, direction)
            spent[direction] += time.perf_counter() - t
            if not verdict.holds:
                failure[:] = [(example, verdict)]
                raise AssertionError(verdict.detail)

    use_private_home()
    t0 = time.perf_counter()
    try:
        prop()
    except AssertionError:
        return count, spent, time.perf_counter() - t0, failure[0]
    return count, spent, time.perf_counter() - t0, None


def check_holds(claim: Claim, profile: str = "ci", seed: int = 0, direction: str = FIXED) -> Outcome:
    """Run the same search against *direction* (fixed or combined); ``passed`` when every example holds."""
    count, _, seconds, failure = _search_holds(claim, (direction,), profile, seed)
    if failure is not None:
        example, verdict = failure
        summary = claim.summarize(example)
        return Outcome(claim.id, direction, False, count, seconds, seed, example, summary, verdict.detail)
    return Outcome(claim.id, direction, True, count, seconds, seed)


def check_holds_together(
    claim: Claim, directions: tuple[str, ...], profile: str = "ci", seed: int = 0
) -> dict[str, Outcome]:
    """Run the directions that must hold (fixed, combined) over **one** search; outcomes by direction.

    The directions share the strategy and the seed, so a separate search of each would draw the same
    examples in the same order as long as every example holds (a search that passes is never steered by
    its test's result). One search that checks each example against every direction is therefore the
    same check with half of Hypothesis' own work (drawing, the choice tree, the PRNG resets: 35-40% of
    a holding direction's time). Each direction's seconds are its own runs plus an equal share of the
    search. If any example fails any direction, the directions are run again one by one
    (:func:`check_holds`), so a failure is shrunk and reported exactly as a separate run reports it.
    """
    count, spent, seconds, failure = _search_holds(claim, directions, profile, seed)
    if failure is not None:
        return {d: check_holds(claim, profile, seed, d) for d in directions}
    share = max(0.0, seconds - sum(spent.values())) / len(directions)
    return {d: Outcome(claim.id, d, True, count, spent[d] + share, seed) for d in directions}


def run_direction(claim: Claim, direction: str, profile: str = "ci", seed: int = 0) -> Outcome:
    """Run *claim* in *direction* with the search that direction needs."""
    if EXPECT_HOLDS[direction]:
        return check_holds(claim, profile, seed, direction)
    return find_counterexample(claim, profile, seed, direction)
