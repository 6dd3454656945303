"""Tool-call results of ``/act`` (``env/tools/dispatch.py``, ``env/web/routes_agent.py``,
``env/tools/tools.py`` ``end_of_step_result``; RT-RTE-act-gate, RT-CLM-http-controls): argument
validation against a tool's parameter schema, the error shapes, the end-of-step result, idempotency
fingerprints. Pure functions; the shapes are upstream's (Corrections 7).
"""

from __future__ import annotations

import json
import math
from datetime import datetime, timedelta
from functools import lru_cache
from typing import Any

from systems.merchantbench.model.jsontext import result_json

ENV_TOOL_ORIGIN = "merchantbench_env"
"""``compat.ENV_TOOL_ORIGIN``: the origin of calls the env executes, stamped on recorded messages."""


def invalid_arguments(path: str, message: str) -> dict[str, Any]:
    """``{"ok": false, "error": {"code": "invalid_arguments", "path", "message", <field>: message}}``:
    *field* is the first path component after ``$.`` and is present only for such paths."""
    error: dict[str, Any] = {"code": "invalid_arguments", "path": path, "message": message}
    if path.startswith("$."):
        error[path[2:].split("[", 1)[0].split(".", 1)[0]] = message
    return {"ok": False, "error": error}


def json_type(value: Any) -> str:
    """The JSON type name of a decoded value (``boolean`` before ``integer``; ``null`` for None)."""
    if isinstance(value, bool):
        return "boolean"
    for kind, name in (
        (dict, "object"),
        (list, "array"),
        (str, "string"),
        (int, "integer"),
        (float, "number"),
    ):
        if isinstance(value, kind):
            return name
    return "null" if value is None else type(value).__name__


def validate(value: Any, schema: dict[str, Any], path: str = "$") -> dict[str, Any] | None:
    """The first violation of *schema* by *value* as an :func:`invalid_arguments` result, else None.

    Checked in upstream's order: an object's type, then its required keys (in schema order), then the
    alphabetically first unknown key (``additionalProperties: false``), then each known value; an array's
    type, ``minItems``, ``maxItems`` and items; a scalar's type (finite numbers only), ``enum``,
    ``minimum``, ``maximum``.
    """
    kind = schema.get("type")
    if kind == "object":
        if not isinstance(value, dict):
            return invalid_arguments(path, f"expected object, got {json_type(value)}")
        props = schema.get("properties") or {}
        missing = [k for k in schema.get("required") or [] if k not in value]
        if missing:
            return invalid_arguments(f"{path}.{missing[0]}", "required argument is missing")
        unknown = sorted(set(value) - set(props)) if schema.get("additionalProperties") is False else []
        if unknown:
            return invalid_arguments(f"{path}.{unknown[0]}", f"unknown argument: {unknown[0]}")
        for key, item in value.items():
            if key in props:
                err = validate(item, props[key], f"{path}.{key}")
                if err is not None:
                    return err
        return None
    if kind == "array":
        if not isinstance(value, list):
            return invalid_arguments(path, f"expected array, got {json_type(value)}")
        if "minItems" in schema and len(value) < int(schema["minItems"]):
            return invalid_arguments(path, f"expected at least {schema['minItems']} items")
        if "maxItems" in schema and len(value) > int(schema["maxItems"]):
            return invalid_arguments(path, f"expected at most {schema['maxItems']} items")
        for i, item in enumerate(value):
            err = validate(item, schema.get("items") or {}, f"{path}[{i}]")
            if err is not None:
                return err
        return None
    types: dict[str, tuple[type, ...]] = {"string": (str,), "integer": (int,), "number": (int, float)}
    expected = types.get(kind or "", (bool,) if kind == "boolean" else None)
    if expected is not None:
        is_bool = isinstance(value, bool)
        if not isinstance(value, expected) or (is_bool and kind != "boolean"):
            return invalid_arguments(path, f"expected {kind}, got {json_type(value)}")
        if kind == "number" and isinstance(value, (int, float)) and not math.isfinite(value):
            return invalid_arguments(path, "expected a finite number")
    if "enum" in schema and value not in schema["enum"]:
        return invalid_arguments(path, f"expected one of {schema['enum']}")
    if "minimum" in schema and value < schema["minimum"]:
        return invalid_arguments(path, f"expected >= {schema['minimum']}")
    if "maximum" in schema and value > schema["maximum"]:
        return invalid_arguments(path, f"expected <= {schema['maximum']}")
    return None


def parse_arguments(raw: Any) -> Any:
    """``json.loads(arguments)``, or None when that raises (a decode or type error: not a string, blank,
    not JSON). A decoded non-object is returned as is (the schema check then rejects it)."""
    if raw == "{}":  # the usual empty arguments (json.loads would build the same new dict)
        return {}
    try:
        return json.loads(raw)
    except (TypeError, ValueError):
        return None


def invalid_json_result(raw: Any) -> dict[str, Any]:
    """The result of a call whose arguments do not decode (checked first, even for ``end_of_step``)."""
    return {
        "ok": False,
        "error": {"code": "invalid_arguments", "path": "$", "message": f"invalid JSON in arguments: {raw}"},
    }


def not_available(name: str) -> dict[str, Any]:
    """The result of a call to a tool on the scenario's denylist."""
    return {"ok": False, "error": f"tool '{name}' is not available in this scenario"}


def unknown_tool(name: str) -> dict[str, Any]:
    """The result of a call to a tool the registry does not have."""
    return {"ok": False, "error": f"unknown tool: {name}"}


def fingerprint(name: str, args: Any) -> tuple[str, str] | None:
    """The idempotency fingerprint (tool name, canonical JSON of the decoded arguments: sorted keys,
    ``(",", ":")`` separators, non-ASCII literal); None when the arguments did not decode."""
    if args is None:
        return None
    return name, json.dumps(args, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def agent_time(t: int, start_date: str | None) -> dict[str, Any]:
    """``sim_time.time_view`` with one-hour steps: ``{day, hour}`` (day from 1), plus the ISO
    ``datetime`` when virtual time is on (``run.virtual_time.start_date``)."""
    out: dict[str, Any] = {"day": t // 24 + 1, "hour": t % 24}
    if start_date:
        out["datetime"] = (_start(start_date) + timedelta(hours=t)).isoformat(timespec="seconds")
    return out


@lru_cache(maxsize=16)
def _start(start_date: str) -> datetime:
    return datetime.fromisoformat(start_date)


def end_of_step_result(t: int, start_date: str | None) -> dict[str, Any]:
    """``end_of_step_result(env)``: ``{"ok": true, "time": <agent time of t>}``."""
    return {"ok": True, "time": agent_time(t, start_date)}


def result_text(result: Any) -> str:
    """A tool message's content: ``json.dumps(result, ensure_ascii=False, default=str)``."""
    return result_json(result)


def normalize_context(value: Any) -> dict[str, Any] | None:
    """``_normalize_context`` (routes 66-93): ``tokens`` only if a positive int, ``compacted`` only if a
    bool, the health counters only if non-negative ints; None when nothing is left."""
    if not isinstance(value, dict):
        return None
    out: dict[str, Any] = {}
    if "tokens" in value:
        try:
            tokens = int(value.get("tokens") or 0)
        except (TypeError, ValueError):
            tokens = 0
        if tokens > 0:
            out["tokens"] = tokens
    if isinstance(value.get("compacted"), bool):
        out["compacted"] = value["compacted"]
    for key in ("provider_api_failed_attempts", "retry_exhausted", "skills_evolutions"):
        if key not in value:
            continue
        try:
            count = int(value.get(key) or 0)
        except (TypeError, ValueError):
            continue
        if count >= 0:
            out[key] = count
    return out or None
