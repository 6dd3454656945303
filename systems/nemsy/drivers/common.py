"""What every Nemsy claim driver shares: the tiny Wiki it builds, its sources and facts, time, and the
JSON-shape helpers of example types."""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import ConfigDict, Field, create_model

from sim.engine import Simulation
from sim.text import fact_token
from sim.variant import Variant
from systems.nemsy.model import CONTEXT_CHARS, INDEX_FILE, LOG_FILE, Nemsy
from systems.nemsy.policies import FactAnswerer, IngestResponder, InsightRewriter

VALUES = ("amber", "teal", "ruby", "jade", "navy", "plum")
NAMES = ("alpha", "beta", "gamma", "delta", "omega", "sigma", "kappa", "theta")


def Int(lo: int, hi: int) -> Any:
    """An integer bounded as the strategy draws it."""
    return Annotated[int, Field(ge=lo, le=hi)]


def OneOf(*values: Any) -> Any:
    """One of *values* (``Literal``)."""
    return Literal[values]


def ListOf(item: Any, max_length: int, min_length: int = 0) -> Any:
    """A list of *item* of bounded length."""
    return Annotated[list[item], Field(min_length=min_length, max_length=max_length)]  # type: ignore[valid-type]


def TupleOf(*items: Any) -> Any:
    """A fixed-length array of *items* (``tuple[...]``)."""
    return tuple.__class_getitem__(items)


def Ops(*shapes: tuple[Any, ...], max_length: int) -> Any:
    """A bounded list of operations, each one of *shapes*: ``(name, arg types...)``, a list whose first item
    is the literal *name*."""
    items = tuple(tuple.__class_getitem__((Literal[name], *args)) for name, *args in shapes)
    return ListOf(Union[items], max_length)  # noqa: UP007 (built at run time)


def ops_strategy(ops: Any) -> Any:
    """The Hypothesis strategy that draws exactly the lists an :func:`Ops` type admits: each operation
    one of its shapes in declaration order (``one_of`` of ``[name, args...]``), integers within their
    bounds, literals in their order, booleans, at most ``max_length`` of them."""
    s = st()
    listed, bound = get_args(ops)
    (union,) = get_args(listed)

    def arg(t: Any) -> Any:
        if t is bool:
            return s.booleans()
        if get_origin(t) is Literal:
            return s.sampled_from(get_args(t))
        _int, field = get_args(t)
        lo, hi = (next(m for m in field.metadata if hasattr(m, k)) for k in ("ge", "le"))
        return s.integers(lo.ge, hi.le)

    shapes = [get_args(shape) for shape in get_args(union)]
    op = s.one_of(*(s.tuples(s.just(get_args(name)[0]), *map(arg, args)) for name, *args in shapes))
    (most,) = (m.max_length for m in bound.metadata if hasattr(m, "max_length"))
    return s.lists(op.map(list), max_size=most)


def Example(name: str, **fields: Any) -> Any:
    """A JSON object with exactly *fields* (pydantic validates it; extra keys are refused)."""
    spec: dict[str, Any] = {k: (v, ...) for k, v in fields.items()}
    return create_model(name, __config__=ConfigDict(extra="forbid"), **spec)


def st() -> Any:
    """``hypothesis.strategies``, imported when a strategy is built."""
    from hypothesis import strategies

    return strategies


def system(
    sim: Simulation,
    variant: Variant,
    *,
    responder: Any = None,
    context_chars: int = CONTEXT_CHARS,
) -> Nemsy:
    """A Nemsy installation as *variant*, with the fact-token policies."""
    return Nemsy(
        sim,
        variant=variant,
        context_chars=context_chars,
        responder=responder or IngestResponder(),
        answerer=FactAnswerer(),
        rewriter=InsightRewriter(),
    )


def tick(sim: Simulation, seconds: float = 1.0) -> None:
    """Advance simulated time (so later writes have later mtimes)."""
    sim.env.run(until=sim.now + seconds)


def fact(i: int, v: int = 0) -> str:
    """Fact token *i* (0-based) with value *v*."""
    return fact_token(i + 1, VALUES[v % len(VALUES)])


def fact_id(i: int) -> str:
    """The id of fact *i* (0-based)."""
    return f"FACT-{i + 1:04d}"


def source_text(i: int, v: int = 0) -> str:
    """The text of source *i* holding fact *i* with value *v*."""
    return f"Notes about {NAMES[i]}: {fact(i, v)} and nothing else."


def wiki_pages(n: Nemsy, prefix: str = "") -> dict[str, str]:
    """Every page (not index.md or log.md) under *prefix*, with its text."""
    return {
        p: n.read_wiki_note(p) or ""
        for p in n.list_wiki_notes()
        if p not in (INDEX_FILE, LOG_FILE) and p.startswith(prefix)
    }
