"""Step traces (``env/storage/agent_log.py``): ``agent/by_step/t_NNNNN.json``, written live after every
``/act`` and finally at hook close, each by temp file plus ``os.replace`` (MEM-OBJ-step-traces,
MEM-RTE-trace-inspection, MEM-CLM-telemetry-limits).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from systems.merchantbench import faults as fp
from systems.merchantbench.model.base import RunState
from systems.merchantbench.model.constants import STEP_INDEX_PID, SYSTEM
from systems.merchantbench.state import TRACES_OFF

_SCALAR = json.JSONEncoder(ensure_ascii=False).encode
_STR: Callable[[str], str] = json.encoder.encode_basestring  # type: ignore[attr-defined]


_OPEN = ["\n" + "  " * (n + 1) for n in range(64)]  # the newline and indent before an item at level n
_CLOSE = ["\n" + "  " * n for n in range(64)]  # the newline and indent before a closing bracket


def _scalar(value: Any) -> str | None:
    t = type(value)
    if t is str:
        return _STR(value)
    if t is int:
        return int.__repr__(value)
    if value is None:
        return "null"
    if t is bool:
        return "true" if value else "false"
    if t is float:
        return _SCALAR(value)
    return None


def indent_json(value: Any, level: int = 0) -> str:
    """``json.dumps(value, indent=2, ensure_ascii=False)`` for plain JSON values, nested at *level* (the
    standard library's indented encoder is pure Python; this one hands strings to the C encoder and
    recurses only into containers)."""
    s = _scalar(value)
    if s is not None:
        return s
    if isinstance(value, dict):
        if not value:
            return "{}"
        sep = "," + _OPEN[level]
        items = []
        for k, v in value.items():
            s = _scalar(v)
            items.append(
                _STR(k if type(k) is str else str(k))
                + ": "
                + (s if s is not None else indent_json(v, level + 1))
            )
        return "{" + _OPEN[level] + sep.join(items) + _CLOSE[level] + "}"
    if isinstance(value, (list, tuple)):
        if not value:
            return "[]"
        sep = "," + _OPEN[level]
        items = []
        for v in value:
            s = _scalar(v)
            items.append(s if s is not None else indent_json(v, level + 1))
        return "[" + _OPEN[level] + sep.join(items) + _CLOSE[level] + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return int.__repr__(value)
    return _SCALAR(value)


class StepTraces(RunState):
    """The env server's step-trace writer and reader, mixed into
    :class:`~systems.merchantbench.model.MerchantEnv` (it supplies ``sim``, ``tree``, ``t``, ``run_dir``
    and the step buffers)."""

    _step_messages: list[dict[str, Any]]
    _step_json: dict[str, list[str]]
    _step_agents: list[str | None]
    _step_turns: list[dict[str, Any]]
    _hook_open_wall_ms: int
    trace_retention: int | None
    trace_files: int
    trace_bytes: int
    trace_bytes_dropped: int
    _index: dict[str, int]

    def step_index_path(self, t: int) -> str:
        return f"{self.run_dir}/agent/by_step/t_{t:05d}.json"

    def _step_payload(self, close_ms: int) -> dict[str, Any]:
        return {
            "t": self.t,
            "n_turns": len(self._step_turns),
            "hook_open_wall_ms": self._hook_open_wall_ms,
            "hook_close_wall_ms": close_ms,
            "messages": list(self._step_messages),
            "message_agents": list(self._step_agents),
            "turns": list(self._step_turns),
        }

    def write_step_live(self) -> None:
        """Atomic write of the in-progress step (after each ``/act``), ``hook_close_wall_ms`` 0
        (MEM-OBJ-step-traces)."""
        self._write_step(self._step_payload(0), "write_step_live")

    def write_step_index(self) -> None:
        """Atomic write of the final step index at hook close (MEM-OBJ-step-traces); the running totals
        (files, bytes, the index's max tokens and compacted turns) are updated, and with a retention the
        step file that falls out of it is removed."""
        size = self._write_step(self._step_payload(self._server_ms()), "write_step_index")
        if size is None:
            return
        self.trace_files += 1
        self.trace_bytes += size
        for turn in self._step_turns:
            ctx = turn.get("context") or {}
            self._index["tokens"] = max(self._index["tokens"], int(ctx.get("tokens", 0) or 0))
            self._index["compactions"] += 1 if ctx.get("compacted") is True else 0
        if self.trace_retention is not None and self.t >= self.trace_retention:
            old = self.step_index_path(self.t - self.trace_retention)
            if self.tree.exists(old):
                self.trace_bytes_dropped += self.tree.size(old)
                self.tree.delete(old)

    def _dump_step(self, payload: dict[str, Any]) -> str:
        """``json.dumps(payload, indent=2, ensure_ascii=False)``, with each list item (message, agent,
        turn) encoded once per step, so writing the step after every act does not re-encode it."""
        fields = []
        for k, v in payload.items():
            if isinstance(v, list) and v:
                cache = self._step_json.setdefault(k, [])
                while len(cache) < len(v):
                    cache.append("    " + indent_json(v[len(cache)], 2))
                body = "[\n" + ",\n".join(cache[: len(v)]) + "\n  ]"
            else:
                body = indent_json(v, 1)
            fields.append(f'  "{k}": {body}')
        return "{\n" + ",\n".join(fields) + "\n}"

    def _write_step(self, payload: dict[str, Any], op: str) -> int | None:
        if self.variant.has(TRACES_OFF):  # off switch: no step traces
            return None
        path = self.step_index_path(self.t)
        suffix = f".tmp.{STEP_INDEX_PID}.{self.sim.streams.hex('merchantbench.step_tmp', 6)}"
        data = self._dump_step(payload).encode("utf-8")
        faults = self.sim.faults
        self.tree.replace_atomic(
            path,
            data,
            tmp_suffix=suffix,
            clock=self.sim.clock("server").seconds,
            between=lambda: faults.point(fp.STEP_TRACE_BEFORE_REPLACE),
        )
        self.sim.trace.op(SYSTEM, op, agent="server", t=self.t, bytes=len(data))
        return len(data)

    def read_step_index(self, t: int) -> dict[str, Any] | None:
        """``read_step_index``: the step's JSON; None if missing or corrupt (MEM-RTE-trace-inspection)."""
        path = self.step_index_path(t)
        if not self.tree.exists(path):
            return None
        try:
            data = json.loads(self.tree.read_bytes(path).decode("utf-8"))
        except (ValueError, UnicodeDecodeError):
            return None
        return data if isinstance(data, dict) else None

    def trace_index(self) -> dict[str, int]:
        """The trace index summary (MEM-CLM-telemetry-limits, MEM-RTE-trace-inspection): ``{tokens: max
        reported, compactions: turns with compacted True}`` over every step file (with a retention, the
        running totals kept as the files were written)."""
        if self.trace_retention is not None:
            return dict(self._index)
        tokens, compactions = 0, 0
        t = 0
        while (step := self.read_step_index(t)) is not None or t < self.t:
            for turn in (step or {}).get("turns", []):
                ctx = turn.get("context") or {}
                tokens = max(tokens, int(ctx.get("tokens", 0) or 0))
                compactions += 1 if ctx.get("compacted") is True else 0
            t += 1
        return {"tokens": tokens, "compactions": compactions}
