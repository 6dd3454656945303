"""One strict rule for every value a user supplies: ``--param``, ``--knob``, a scenario file's values.

A value is JSON when it parses as JSON (``7``, ``1.5``, ``true``, ``"text"``, ``[1, 2]``), otherwise the
text itself (``--knob DESIGN.mode=fast``). It is then validated against its model in pydantic's strict
JSON mode: no bool for a number or a number for a bool (``true`` is not ``1``), no string for a number or
a bool (``"yes"`` is not ``true``, ``"7"`` is not ``7``), no fraction for an integer; integers still fill
floats and arrays fill tuples. ``NaN`` and the infinities are refused with a message that says so, before
any bound is checked (``NaN <= 10`` is false, so a bound alone would report the wrong rule).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from sim.errors import UsageError

M = TypeVar("M", bound=BaseModel)

#: What the refusal of NaN or an infinity says (every surface says it the same way).
NOT_FINITE = "NaN and infinities are refused (numbers must be finite)"
#: Spellings of NaN and the infinities that JSON does not parse but a user may type.
_NON_FINITE_WORDS = frozenset(
    {"nan", "+nan", "-nan", "inf", "+inf", "-inf", "infinity", "+infinity", "-infinity"}
)


class _NonFinite(ValueError):
    pass


def _constant(name: str) -> Any:
    raise _NonFinite(name)


def parse_cli_value(raw: str, where: str) -> Any:
    """The value of ``KEY=VALUE`` text *raw*: JSON if it parses, else the text; NaN and the infinities in
    any spelling (``NaN``, ``inf``, ``-Infinity``, ``1e999``) are a :class:`UsageError` naming *where*."""
    if raw.strip().lower() in _NON_FINITE_WORDS:
        raise UsageError(f"{where}: {raw.strip()!r}: {NOT_FINITE}")
    try:
        value = json.loads(raw, parse_constant=_constant)
    except _NonFinite:
        raise UsageError(f"{where}: {raw.strip()!r}: {NOT_FINITE}") from None
    except (ValueError, RecursionError):
        return raw
    check_finite(value, where)
    return value


def _first_non_finite(value: Any, path: str) -> str | None:
    stack: list[tuple[Any, str]] = [(value, path)]
    while stack:
        v, p = stack.pop()
        if isinstance(v, float) and not math.isfinite(v):
            return p
        if isinstance(v, Mapping):
            stack.extend((c, f"{p}.{k}" if p else str(k)) for k, c in v.items())
        elif isinstance(v, list | tuple):
            stack.extend((c, f"{p}.{i}" if p else str(i)) for i, c in enumerate(v))
    return None


def check_finite(value: Any, where: str) -> None:
    """Refuse a NaN or an infinity anywhere inside *value* (a parsed JSON or TOML value)."""
    bad = _first_non_finite(value, "")
    if bad is not None:
        raise UsageError(f"{where}{'.' + bad if bad else ''}: {NOT_FINITE}")


def validate_strict(model: type[M], values: Mapping[str, Any], prefix: str) -> M:
    """*values* validated against *model* by the strict rule above; otherwise a :class:`UsageError`
    ``{prefix}{field}: {reason}`` (*prefix* such as ``"invalid knob DESIGN."``)."""
    for key, value in values.items():
        bad = _first_non_finite(value, str(key))
        if bad is not None:
            raise UsageError(f"{prefix}{bad}: {NOT_FINITE}")
        try:
            json.dumps(value, allow_nan=False)
        except (TypeError, ValueError):
            raise UsageError(f"{prefix}{key}: a {type(value).__name__} is not a JSON value") from None
    try:
        return model.model_validate_json(json.dumps(dict(values)), strict=True)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ".".join(str(x) for x in err["loc"])
        raise UsageError(f"{prefix}{loc or 'value'}: {err['msg']}{given(err)}") from exc


def given(err: Any) -> str:
    """``, not true`` for a value of the wrong type (the strict rule is what refused it)."""
    if not str(err.get("type", "")).endswith("_type") or "input" not in err:
        return ""
    shown = json.dumps(err["input"], ensure_ascii=False, default=repr)
    shown = shown if len(shown) <= 40 else shown[:37] + "..."
    return f", not {shown} (values are not converted between types)"
