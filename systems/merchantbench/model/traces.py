"""Step traces (``env/storage/agent_log.py``): ``agent/by_step/t_NNNNN.json``, written live after every
``/act`` and finally at hook close, each by temp file plus ``os.replace`` (MEM-OBJ-step-traces,
MEM-RTE-trace-inspection, MEM-CLM-telemetry-limits).

The file is ``json.dumps(step, indent=2, ensure_ascii=False)`` of upstream's step dict, byte for byte.
The standard library's indented encoder is pure Python; here each message, agent and turn of the step is
encoded once when it is added (:func:`indent_json`: the C encoder for every container of scalars), and
each write joins the encoded items under the step's header.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from sim.jsontext import indent_json as indent_json
from sim.jsontext import json_str as _str
from systems.merchantbench import faults as fp
from systems.merchantbench.model.base import RunState
from systems.merchantbench.model.constants import STEP_INDEX_PID, SYSTEM
from systems.merchantbench.state import TRACES_OFF

_TURN_KEYS = (
    "turn_idx",
    "agent_id",
    "token_usage",
    "tool_origins",
    "message_origins",
    "tool_call_origins",
    "tool_result_origins",
    "received_at_wall_ms",
)
_TURN_PARTS = [",\n      " + _str(k) + ": " for k in _TURN_KEYS]


def _count_map(value: Any) -> str | None:
    """A turn's origin counts (``{}`` or one string key with an int) at level 3, else None."""
    if type(value) is not dict:
        return None
    if not value:
        return "{}"
    if len(value) == 1:
        ((k, v),) = value.items()
        if type(k) is str and type(v) is int:
            return "{\n        " + _str(k) + ": " + int.__repr__(v) + "\n      }"
    return None


def turn_json(turn: Any) -> str:
    """``indent_json(turn, 2)`` for a turn record of the step trace, faster for the shape the env server
    records (:data:`_TURN_KEYS` in order, then an optional flat ``context``): every other shape is
    encoded generically."""
    if type(turn) is not dict or tuple(turn)[:8] != _TURN_KEYS or len(turn) > 9:
        return indent_json(turn, 2)
    idx, agent, usage, received = turn["turn_idx"], turn["agent_id"], turn["token_usage"], turn[_TURN_KEYS[7]]
    maps = [_count_map(turn[k]) for k in _TURN_KEYS[3:7]]
    if type(idx) is not int or type(received) is not int or type(usage) is not dict or usage or None in maps:
        return indent_json(turn, 2)
    p = _TURN_PARTS
    out: list[Any] = [
        '{\n      "turn_idx": ',
        int.__repr__(idx),
        p[1],
        indent_json(agent, 3),
        p[2],
        "{}",
        p[3],
        maps[0],
        p[4],
        maps[1],
        p[5],
        maps[2],
        p[6],
        maps[3],
        p[7],
        int.__repr__(received),
    ]
    if len(turn) == 9:
        key = next(reversed(turn.keys()))
        if type(key) is not str:
            return indent_json(turn, 2)
        out += [",\n      ", _str(key), ": ", indent_json(turn[key], 3)]
    out.append("\n    }")
    return "".join(out)


def _items(cache: list[str], values: list[Any], encode: Callable[[Any], str] | None = None) -> str:
    """The body of a step list at level 1 (``"[]"`` when empty): the items not yet in *cache* are encoded
    (by *encode*, default :func:`indent_json` at level 2) and added to it, so each item is encoded once
    per step however often the step is written."""
    if not values:
        return "[]"
    for v in values[len(cache) :]:
        cache.append("    " + (indent_json(v, 2) if encode is None else encode(v)))
    return "[\n" + ",\n".join(cache) + "\n  ]"


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

    def step_payload(self, close_ms: int) -> dict[str, Any]:
        """Upstream's step dict as the files hold it: ``{t, n_turns, hook_open_wall_ms,
        hook_close_wall_ms, messages, message_agents, turns}`` (MEM-OBJ-step-traces)."""
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
        self._write_step(0, "write_step_live")

    def write_step_index(self) -> None:
        """Atomic write of the final step index at hook close (MEM-OBJ-step-traces); the running totals
        (files, bytes, the index's max tokens and compacted turns) are updated, and with a retention the
        step file that falls out of it is removed."""
        size = self._write_step(self._server_ms(), "write_step_index")
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

    def step_text(self, close_ms: int) -> str:
        """``json.dumps(step_payload(close_ms), indent=2, ensure_ascii=False)``, from the step's items
        encoded once each."""
        cache = self._step_json
        if not cache:
            cache.update(messages=[], message_agents=[], turns=[])
        return (
            f'{{\n  "t": {self.t},\n  "n_turns": {len(self._step_turns)},\n'
            f'  "hook_open_wall_ms": {self._hook_open_wall_ms},\n  "hook_close_wall_ms": {close_ms},\n'
            f'  "messages": {_items(cache["messages"], self._step_messages)},\n'
            f'  "message_agents": {_items(cache["message_agents"], self._step_agents)},\n'
            f'  "turns": {_items(cache["turns"], self._step_turns, turn_json)}\n}}'
        )

    def _write_step(self, close_ms: int, op: str) -> int | None:
        if self.variant.has(TRACES_OFF):  # off switch: no step traces
            return None
        path = self.step_index_path(self.t)
        suffix = f".tmp.{STEP_INDEX_PID}.{self.sim.streams.hex('merchantbench.step_tmp', 6)}"
        data = self.step_text(close_ms).encode("utf-8")
        faults = self.sim.faults
        self.tree.replace_atomic(
            path,
            data,
            tmp_suffix=suffix,
            clock=self.server_clock.seconds,
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
