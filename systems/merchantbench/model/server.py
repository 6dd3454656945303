"""The environment server (``env/``): the run's tick and hook, ``/act`` admission and dispatch, and
idempotency of mutating calls (RT-RTE-act-gate, RT-CLM-http-controls); the memory tools and step traces
are mixed in from :mod:`.memory` and :mod:`.traces`.

Upstream: ``env/web/routes_agent.py`` and ``env/tools/dispatch.py`` @ 47eafeae. Wall times come from the
env server's modeled clock (``sim.clock("server")``); the step number is the env tick.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from typing import Any

from sim.engine import Simulation
from sim.faults import Crash, WriteFailed
from sim.files import FileTree
from sim.variant import FAITHFUL, Variant
from systems.merchantbench.model.constants import MAX_TURNS_PER_STEP, SYSTEM
from systems.merchantbench.model.memory import MemoryTools
from systems.merchantbench.model.tools import MUTATING_TOOLS, TOOL_SCHEMAS
from systems.merchantbench.model.traces import StepTraces
from systems.merchantbench.state import UNIQUE_CALL_KEYS, FaultSchedule, HttpError


class MerchantEnv(MemoryTools, StepTraces):
    """One run's environment server (``env``): tick ``t``, the hook, the agents, the idempotency cache and
    the run directory ``<runs_root>/<run_id>/`` on a :mod:`sim.files` tree.

    *casefold_paths* models a case-insensitive filesystem (``Agent_0`` and ``agent_0`` are one file).
    Not modeled: simulator domain state (products, orders, cash), observation assembly, leases.
    """

    def __init__(
        self,
        sim: Simulation,
        tree: FileTree,
        *,
        run_id: str = "run-0001",
        runs_root: str = "runs",
        variant: Variant = FAITHFUL,
        agents: Iterable[str] = ("agent_0",),
        tool_denylist: Iterable[str] = ("market_brief", "hot_search_terms"),
        schedule: FaultSchedule | None = None,
        casefold_paths: bool = False,
        max_turns_per_step: int = MAX_TURNS_PER_STEP,
    ) -> None:
        self.sim = sim
        self.tree = tree
        self.run_id = run_id
        self.runs_root = runs_root
        self.variant = variant
        self.agents: list[str] = list(agents)
        self.dead: set[str] = set()
        self.tool_denylist = frozenset(tool_denylist)
        self.schedule = schedule or FaultSchedule()
        self.casefold_paths = casefold_paths
        self.max_turns_per_step = max_turns_per_step
        self.t = 0
        self.hook_open = True
        self.unloaded = False
        self.turns: Counter[str] = Counter()
        self.done: set[str] = set()
        self.idempotency: dict[str, tuple[tuple[str, str], dict[str, Any]]] = {}
        self.act_seq = 0
        self.results_log: list[tuple[int, str, str]] = []
        self._step_messages: list[dict[str, Any]] = []
        self._step_json: dict[str, list[str]] = {}
        self._step_agents: list[str | None] = []
        self._step_turns: list[dict[str, Any]] = []
        self._hook_open_wall_ms = self._server_ms()

    # -- observation and /act admission (routes_agent.py + tools/dispatch.py) -------------------------
    def deliver_observation(self, agent_id: str, text: str) -> None:
        """The step's observation for *agent_id*, recorded in the step trace as a user message
        (RT-RTE-react-loop, MEM-OBJ-step-traces); raises :class:`HttpError` 410 when dead or unloaded.
        Not modeled: observation assembly from simulator state (the workload supplies the text)."""
        if self.unloaded or agent_id in self.dead:
            raise HttpError(410, "agent_dead")
        self._step_messages.append({"role": "user", "content": text})
        self._step_agents.append(agent_id)

    def offered_tools(self) -> frozenset[str]:
        """The tool names offered to the agent (schemas minus the denylist) (RT-OBJ-tool-registry).
        Not modeled: the simulator's domain tools beyond ``query_balance`` (TOOL_SCHEMAS is a four-tool
        stand-in; upstream's schema texts are not in the note, so the descriptions are paraphrases)."""
        return frozenset(s["function"]["name"] for s in TOOL_SCHEMAS) - self.tool_denylist

    def act(
        self,
        agent_id: str,
        messages: list[dict[str, Any]],
        *,
        step: int,
        context: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """``POST /act`` (RT-RTE-act-gate): admission, then every tool call of the last (assistant) message
        under ``env.lock``, the step trace written live; an ``end_of_step`` closes the hook.

        Raises :class:`HttpError`: 410 dead or unloaded, 425 ``stale_step``/``hook_closed`` (pure
        end-of-step exempt from ``hook_closed``), 429 over ``max_turns_per_step``, 400
        ``end_of_step_must_be_last``, 409 idempotency key reused with another fingerprint (before any call
        runs), 500 when a tool raised. Injected statuses come from the fault schedule.
        Not modeled: the lease/lock wait (SimPy runs one process at a time); multi-agent hooks beyond
        "all agents ended".
        """
        if self.unloaded or agent_id in self.dead:
            raise HttpError(410, "agent_dead")
        assistant = messages[-1] if messages else {}
        calls = list(assistant.get("tool_calls") or [])
        names = [c.get("function", {}).get("name", "") for c in calls]
        pure_eos = names == ["end_of_step"]
        if step != self.t:
            raise HttpError(425, "stale_step")
        if not self.hook_open and not pure_eos:
            raise HttpError(425, "hook_closed")
        n = self.turns[agent_id]
        if n >= self.max_turns_per_step and not pure_eos:
            raise HttpError(429, "max_turns_per_step")
        if "end_of_step" in names and names[-1] != "end_of_step":
            raise HttpError(400, "end_of_step_must_be_last")
        injected = self.schedule.act_fault(self.t, n)
        if injected is not None:
            self.turns[agent_id] = n + 1
            if injected == 425:
                self.close_hook()
                raise HttpError(425, "hook_closed")
            raise HttpError(injected, "injected")
        self.act_seq += 1
        keys: list[str | None] = []
        for c, name in zip(calls, names):
            if name in MUTATING_TOOLS:
                mkey = f"{agent_id}:{self.t}:{c.get('id')}"
                if self.variant.has(UNIQUE_CALL_KEYS):
                    mkey = f"{agent_id}:{self.t}:{self.act_seq}:{c.get('id')}"
                cached = self.idempotency.get(mkey)
                if cached is not None and cached[0] != _fingerprint(name, c):
                    self.sim.trace.op(SYSTEM, "act", agent=agent_id, phase="fail", status=409, key=mkey)
                    raise HttpError(409, "idempotency_key_reused")
                keys.append(mkey)
            else:
                keys.append(None)
        results = []
        try:
            for c, name, key in zip(calls, names, keys):
                results.append(self._dispatch(agent_id, c, name, key))
        except (Crash, WriteFailed, UnicodeEncodeError) as exc:
            self.sim.trace.op(
                SYSTEM,
                "act",
                agent=agent_id,
                phase="crash" if isinstance(exc, Crash) else "fail",
                status=500,
                error=str(exc),
            )
            raise HttpError(500, "internal_error") from exc
        self.turns[agent_id] = n + 1
        self._step_messages.extend(messages)
        self._step_agents.extend([agent_id] * len(messages))
        for c, name, r in zip(calls, names, results):
            text = json.dumps(r, ensure_ascii=False)
            self._step_messages.append(
                {"role": "tool", "tool_call_id": c.get("id"), "name": name, "content": text}
            )
            self._step_agents.append(agent_id)
            self.results_log.append((self.t, str(c.get("id")), text))
        self._step_turns.append(
            {"agent": agent_id, "turn": n, "tools": names, "context": _accepted_context(context)}
        )
        self.write_step_live()
        step_done = "end_of_step" in names
        self.sim.trace.op(SYSTEM, "act", agent=agent_id, t=self.t, tools=names, step_done=step_done)
        if step_done:
            self.done.add(agent_id)
            if all(a in self.done or a in self.dead for a in self.agents):
                self.close_hook()
        return {"results": results, "step_done": step_done}

    def _dispatch(self, agent_id: str, call: dict[str, Any], name: str, key: str | None) -> dict[str, Any]:
        raw = call.get("function", {}).get("arguments")
        try:
            args = json.loads(raw) if isinstance(raw, str) and raw.strip() else (raw or {})
        except ValueError:
            return {"ok": False, "error": "invalid_arguments", "detail": "arguments are not valid JSON"}
        if not isinstance(args, dict):
            return {"ok": False, "error": "invalid_arguments", "detail": "arguments must be an object"}
        if name in self.tool_denylist:
            return {"ok": False, "error": "tool_denied", "tool": name}
        if key is not None:
            cached = self.idempotency.get(key)
            if cached is not None:
                return {**cached[1], "_idempotent_replay": True}
        if name == "read_memory_doc":
            return self.read_memory_doc(agent_id)
        if name == "write_memory_doc":
            content = args.get("content")
            if not isinstance(content, str) or set(args) - {"content"}:
                return {"ok": False, "error": "invalid_arguments", "detail": "content (string) is required"}
            result = self.write_memory_doc(agent_id, content)
            if result.get("ok") and key is not None:
                self.idempotency[key] = (_fingerprint(name, call), result)
            return result
        if name == "end_of_step":
            return {"ok": True, "step_done": True}
        if name == "query_balance":
            return {"ok": True, "cash": 1000 + self.t}
        return {"ok": False, "error": "unknown_tool", "tool": name}

    # -- the hook --------------------------------------------------------------------------------------
    def close_hook(self) -> None:
        """Close the step's hook: write the final step index, advance ``t``, open the next hook
        (RT-RTE-act-gate, MEM-OBJ-step-traces)."""
        self.write_step_index()
        self.t += 1
        self.hook_open = True
        self.turns.clear()
        self.done.clear()
        self._step_messages, self._step_agents, self._step_turns = [], [], []
        self._step_json = {}
        self._hook_open_wall_ms = self._server_ms()


def _fingerprint(name: str, call: dict[str, Any]) -> tuple[str, str]:
    raw = call.get("function", {}).get("arguments")
    try:
        canon = json.dumps(
            json.loads(raw) if isinstance(raw, str) else raw,
            sort_keys=True,
            separators=(",", ":"),
            ensure_ascii=False,
        )
    except ValueError:
        canon = str(raw)
    return name, canon


def _accepted_context(context: dict[str, Any] | None) -> dict[str, Any]:
    ctx = dict(context or {})
    if "compacted" in ctx and not isinstance(ctx["compacted"], bool):
        del ctx["compacted"]
    return ctx


def write_memory_doc(env: MerchantEnv, agent_id: Any, content: Any) -> dict[str, Any]:
    """Upstream's ``write_memory_doc(env, aid, content)`` (see :meth:`MerchantEnv.write_memory_doc`)."""
    return env.write_memory_doc(agent_id, content)


def read_memory_doc(env: MerchantEnv, agent_id: Any) -> dict[str, Any]:
    """Upstream's ``read_memory_doc(env, aid)`` (see :meth:`MerchantEnv.read_memory_doc`)."""
    return env.read_memory_doc(agent_id)
