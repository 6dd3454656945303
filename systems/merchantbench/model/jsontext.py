"""The compact JSON texts the model writes on every hop (the estimator's sorted dump, tool results), each
exactly ``json.dumps(...)`` with the arguments named, through :mod:`sim.jsontext`'s encoders made once."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sim.jsontext import literal as _literal

sorted_json: Callable[[Any], str] = _literal(True)
"""``json.dumps(value, ensure_ascii=False, sort_keys=True)`` (the estimator's text)."""

result_json: Callable[[Any], str] = _literal(False, str)
"""``json.dumps(value, ensure_ascii=False, default=str)`` (a tool message's content)."""
