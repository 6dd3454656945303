"""Every claim and scenario keeps the platform's contract: four directions declared, a bounded example
type that every drawn example fits and that refuses oversized values, and scenario parameters that are
all bounded. A claim or scenario that drops one of these fails here, not in a user's replay."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from pydantic import BaseModel, TypeAdapter, ValidationError

from sim import claims as cl
from sim import scenario as sc

CLAIMS = list(cl.registry().values())
SCENARIOS = list(sc.scenarios().values())


@pytest.mark.parametrize("claim", CLAIMS, ids=[c.id for c in CLAIMS])
def test_every_claim_declares_its_four_directions(claim: cl.Claim) -> None:
    """Not legacy: a fix (or a counterfactual design), an off switch and an example type."""
    assert claim.fixes or claim.counterfactuals
    assert claim.off
    assert claim.example_type is not None
    assert claim.directions == cl.DIRECTIONS


@pytest.mark.parametrize("claim", CLAIMS, ids=[c.id for c in CLAIMS])
def test_drawn_examples_fit_the_declared_example_type(claim: cl.Claim) -> None:
    """Whatever the strategy draws (encoded as `--save` writes it) validates against the example type."""
    adapter = TypeAdapter(claim.example_type)

    @settings(max_examples=25, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(claim.strategy())
    def fits(example: Any) -> None:
        encoded = json.loads(json.dumps(claim.encode(example), default=str))
        adapter.validate_python(encoded)

    fits()


def _leaves(value: Any) -> list[Any]:
    out = [value]
    if isinstance(value, list):
        for v in value:
            out += _leaves(v)
    elif isinstance(value, dict):
        for v in value.values():
            out += _leaves(v)
    return out


def _enlargeable(value: Any) -> bool:
    return any(
        (isinstance(v, int) and not isinstance(v, bool)) or isinstance(v, str) or (isinstance(v, list) and v)
        for v in _leaves(value)
    )


def _enlarge(value: Any) -> tuple[Any, bool]:
    """*value* with its first number made 10**15, else its first string 10**6 characters long, else its
    first non-empty list repeated 10**5 times; whether anything was enlarged."""
    for kind in ("int", "str", "list"):
        new, done = _enlarge_kind(value, kind)
        if done:
            return new, True
    return value, False


def _enlarge_kind(value: Any, kind: str) -> tuple[Any, bool]:
    if kind == "int" and isinstance(value, int) and not isinstance(value, bool):
        return 10**15, True
    if kind == "str" and isinstance(value, str):
        return "x" * 10**6, True
    if isinstance(value, list):
        if kind == "list" and value:
            return value * 10**5, True
        for i, v in enumerate(value):
            new, done = _enlarge_kind(v, kind)
            if done:
                return [*value[:i], new, *value[i + 1 :]], True
    if isinstance(value, dict):
        for k, v in value.items():
            new, done = _enlarge_kind(v, kind)
            if done:
                return {**value, k: new}, True
    return value, False


@pytest.mark.parametrize("claim", CLAIMS, ids=[c.id for c in CLAIMS])
def test_an_oversized_example_is_refused(claim: cl.Claim) -> None:
    """A saved example with a number, a string or a list far beyond the strategy's bounds does not fit its
    example type (replay refuses it with exit 2 before running anything)."""
    from hypothesis import find
    from hypothesis.errors import NoSuchExample

    adapter = TypeAdapter(claim.example_type)

    def encoded(x: Any) -> Any:
        return json.loads(json.dumps(claim.encode(x), default=str))

    quiet = settings(database=None, max_examples=200, suppress_health_check=list(HealthCheck))
    try:
        base = encoded(find(claim.strategy(), lambda x: _enlargeable(encoded(x)), settings=quiet))
    except NoSuchExample:  # only booleans and fixed choices: a wrong type must still be refused
        with pytest.raises(ValidationError):
            adapter.validate_python(42)
        return
    huge, enlarged = _enlarge(base)

    assert enlarged
    with pytest.raises(ValidationError):
        adapter.validate_python(huge)


def _unbounded(annotation: Any, metadata: list[Any], where: str) -> list[str]:
    """The parts of a field's type that accept any number or any length."""
    import typing

    flat = [x for m in metadata for x in (m, *getattr(m, "metadata", ()))]  # Field(...) inside Annotated

    def has(*attrs: str) -> bool:
        return any(getattr(m, a, None) is not None for m in flat for a in attrs)

    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Annotated:
        return _unbounded(args[0], [*metadata, *args[1:]], where)
    if origin in (typing.Union, getattr(__import__("types"), "UnionType", None)):
        return [p for a in args if a is not type(None) for p in _unbounded(a, metadata, where)]
    if annotation is bool or origin is typing.Literal:
        return []
    if annotation in (int, float):
        ok = has("ge", "gt") and has("le", "lt")
        return [] if ok else [f"{where}: a number without both bounds"]
    if origin in (list, tuple, dict, set, frozenset):
        problems = (
            [] if has("max_length") or origin is tuple else [f"{where}: a container without max_length"]
        )
        for a in args:
            if a is not Ellipsis:
                problems += _unbounded(a, [], f"{where}[...]")
        return problems
    return []


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.name for s in SCENARIOS])
def test_every_scenario_parameter_is_bounded_and_described(scenario: sc.Scenario) -> None:
    """Params subclass sim.scenario.Params; numbers have both bounds, every field a description."""
    params: type[BaseModel] = scenario.params
    assert issubclass(params, sc.Params)
    problems = []
    for name, f in params.model_fields.items():
        if not f.description:
            problems.append(f"{name}: no description")
        problems += _unbounded(f.annotation, list(f.metadata), name)

    assert problems == [], f"{scenario.name}: {problems}"
