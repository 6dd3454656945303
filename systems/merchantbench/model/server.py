"""The environment server (``env/``): the run's tick and hook, the observation route and its one-time
brief, ``/act`` admission and execution, idempotency of mutating calls, and the server process itself
(it can stop answering, or die and be restarted) (RT-RTE-act-gate, RT-CLM-http-controls,
RT-OBJ-system-brief). The memory tools and step traces are mixed in from :mod:`.memory` and
:mod:`.traces`; result shapes live in :mod:`.dispatch`.

Upstream: ``env/web/routes_agent.py`` (observation 700-757, act 901-1139), ``env/tools/dispatch.py``,
``env/core/simulator.py`` (``record_act``, ``with_idempotency``) @ 47eafeae. Wall times come from the env
server's modeled clock (``sim.clock("server")``); the step number is the env tick.
"""

from __future__ import annotations

from collections import Counter, OrderedDict
from collections.abc import Iterable
from typing import Any

from sim.engine import Simulation
from sim.faults import Crash, WriteFailed
from sim.files import FileTree
from sim.variant import FAITHFUL, Variant
from systems.merchantbench.model import dispatch as dp
from systems.merchantbench.model.constants import MAX_TURNS_PER_STEP, SYSTEM
from systems.merchantbench.model.memory import MemoryTools
from systems.merchantbench.model.tools import (
    DEFAULT_DENYLIST,
    MUTATING_TOOLS,
    UPSTREAM_SCHEMA_TOKENS,
    UPSTREAM_TOOL_NAMES,
    tool_parameters,
    tool_schemas,
    tools_json,
)
from systems.merchantbench.model.traces import StepTraces
from systems.merchantbench.state import IDEMPOTENCY_OFF, FaultSchedule, HttpError, ServerUnavailable

BASE_URL = "http://localhost:5050"
"""The ReAct baseline's default ``--base-url`` (``MERCHANTBENCH_BASE_URL``)."""
VIRTUAL_START_DATE = "2025-06-01"
"""``run.virtual_time.start_date`` of ``env/scenarios/default.yaml`` (virtual time enabled)."""
IDEM_CACHE_CAP = 256
"""``agent.idem_cache_cap`` default: the idempotency cache is an LRU of this many keys."""

_ABORTED = "('Connection aborted.', RemoteDisconnected('Remote end closed connection without response'))"


def _refused(url: str) -> str:
    host, _, path = url.removeprefix("http://").partition("/")
    name, _, port = host.partition(":")
    return (
        f"HTTPConnectionPool(host='{name}', port={port or 80}): Max retries exceeded with url: /{path} "
        "(Caused by NewConnectionError('<urllib3.connection.HTTPConnection object at 0x7f0000000000>: "
        "Failed to establish a new connection: [Errno 111] Connection refused'))"
    )


class MerchantEnv(MemoryTools, StepTraces):
    """One run's environment server (``env``): tick ``t``, the hook, the agents, the idempotency cache and
    the run directory ``<runs_root>/<run_id>/`` on a :mod:`sim.files` tree.

    *brief* is the system prompt of the brief the observation route serves once per agent and live
    ``Environment`` (None: no brief; a caller then sets the prompt on the agent). *schema_tokens* sizes the
    published tool schemas (:mod:`.tools`). *trace_retention* keeps only the newest that many final step
    files on the tree (a long run's memory bound; None keeps every one, as upstream's disk does); the counts
    and the trace index are kept as running totals. With ``keep_log`` set, every tool result text is kept
    (claims). *casefold_paths* models a case-insensitive filesystem (``Agent_0`` and ``agent_0`` are one
    file). Not modeled: simulator domain state (products, orders,
    cash), observation assembly, leases, the lock wait (SimPy runs one process at a time).
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
        tool_denylist: Iterable[str] = DEFAULT_DENYLIST,
        schedule: FaultSchedule | None = None,
        casefold_paths: bool = False,
        max_turns_per_step: int = MAX_TURNS_PER_STEP,
        brief: str | None = None,
        schema_tokens: int = UPSTREAM_SCHEMA_TOKENS,
        start_date: str | None = VIRTUAL_START_DATE,
        base_url: str = BASE_URL,
        trace_retention: int | None = None,
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
        self.brief = brief
        self.schema_tokens = schema_tokens
        self.start_date = start_date
        self.base_url = base_url
        self.t = 0
        self.hook_open = True
        self.unloaded = False
        self.down = False
        self.restarts = 0
        self._refusing = 0
        self._outages_done: set[tuple[int, int]] = set()
        self.brief_served: set[str] = set()
        self.turns: Counter[str] = Counter()
        self.done: set[str] = set()
        self.idempotency: OrderedDict[str, tuple[tuple[str, str] | None, Any]] = OrderedDict()
        self.act_seq = 0
        self.keep_log = False
        self.results_log: list[tuple[int, str, str]] = []
        self.trace_retention = trace_retention
        self.trace_files = 0
        self.trace_bytes = 0
        self.trace_bytes_dropped = 0
        self._index = {"tokens": 0, "compactions": 0}
        self._observations: dict[str, str] = {}
        self._step_messages: list[dict[str, Any]] = []
        self._step_json: dict[str, list[str]] = {}
        self._step_agents: list[str | None] = []
        self._step_turns: list[dict[str, Any]] = []
        self.server_clock = sim.clock("server")
        self._hook_open_wall_ms = self._server_ms()

    # -- the tool surface -----------------------------------------------------------------------------
    def tools(self) -> tuple[dict[str, Any], ...]:
        """The published schemas (``GET /runs/<rid>/tools/schema``, the ``openai`` of each spec)."""
        return tool_schemas(self.schema_tokens, self.tool_denylist)

    def tools_json(self) -> str:
        """The published schemas as the one text a provider counts."""
        return tools_json(self.schema_tokens, self.tool_denylist)

    def offered_tools(self) -> frozenset[str]:
        """The tool names offered to the agent: the registry minus the denylist (RT-OBJ-tool-registry)."""
        return frozenset(s["function"]["name"] for s in self.tools())

    # -- the server process ---------------------------------------------------------------------------
    def url(self, agent_id: str, route: str) -> str:
        """``<base>/runs/<rid>/agents/<aid>/<route>``."""
        return f"{self.base_url}/runs/{self.run_id}/agents/{agent_id}/{route}"

    def _answer(self, agent_id: str, route: str) -> None:
        """Raise :class:`ServerUnavailable` while the server does not answer (dead, or refusing)."""
        if self.down or self._refusing > 0:
            self._refusing = max(0, self._refusing - 1)
            url = self.url(agent_id, route)
            self.sim.trace.op(
                SYSTEM, route, agent=agent_id, phase="fail", t=self.t, error="connection refused"
            )
            raise ServerUnavailable(_refused(url))

    def _die(self, agent_id: str, exc: Exception) -> ServerUnavailable:
        """The server process dies inside a handler: in-memory state is gone until :meth:`restart`."""
        self.down = True
        self.sim.trace.op(SYSTEM, "server_crash", agent=agent_id, phase="crash", t=self.t, error=str(exc))
        return ServerUnavailable(_ABORTED)

    def restart(self) -> None:
        """The server comes back as a rehydrated ``Environment`` at the same tick (Corrections 11): the files
        remain, and so does the idempotency cache (persisted to ``agent/idem_cache.json`` after every cached
        result); the served-brief set, the turn counts and the step's in-memory message buffers start empty,
        and the hook is open. Not modeled: what else rehydration restores (domain state)."""
        self.down = False
        self._refusing = 0
        self.restarts += 1
        self.brief_served.clear()
        self.turns.clear()
        self.done.clear()
        self.hook_open = True
        self._step_messages, self._step_agents, self._step_turns = [], [], []
        self._step_json = {}
        self.sim.trace.op(SYSTEM, "server_restart", agent="server", t=self.t)

    def _admit(self, agent_id: str, route: str) -> None:
        if agent_id not in self.agents:
            raise HttpError(404, f"unknown agent {agent_id}", self.url(agent_id, route))
        if self.unloaded:
            raise HttpError(410, "run_finished", self.url(agent_id, route))
        if agent_id in self.dead:
            raise HttpError(410, "agent_dead", self.url(agent_id, route))

    # -- observation (routes 700-757) -----------------------------------------------------------------
    def deliver_observation(self, agent_id: str, text: str) -> str | None:
        """``GET /observation`` for the open hook: the step's observation, recorded in the step trace as a
        user message; on an agent's first observation of this live ``Environment`` the brief comes with it
        (recorded as a system message) and its system prompt is returned, else None (RT-OBJ-system-brief,
        MEM-OBJ-step-traces). Raises :class:`ServerUnavailable`, or :class:`HttpError` 404 / 410.
        Not modeled: observation assembly from simulator state (the workload supplies the text)."""
        self._answer(agent_id, "observation")
        self._admit(agent_id, "observation")
        prompt = None
        if self.brief is not None and agent_id not in self.brief_served:
            self.brief_served.add(agent_id)
            prompt = self.brief
            self._step_messages.append({"role": "system", "content": prompt})
            self._step_agents.append(agent_id)
        self._observations[agent_id] = text
        self._step_messages.append({"role": "user", "content": text})
        self._step_agents.append(agent_id)
        return prompt

    # -- /act (routes 901-1139) -----------------------------------------------------------------------
    def _normalize(self, agent_id: str, messages: list[Any]) -> tuple[list[dict[str, Any]], list[int]]:
        """The recorded copies of *messages* (assistant messages and their calls stamped with the env
        origin) and, per env call in order, the index of its message; 400 for a malformed payload."""
        url = self.url(agent_id, "act")
        seen: set[Any] = set()
        out: list[dict[str, Any]] = []
        owners: list[int] = []
        for idx, raw in enumerate(messages):
            if not isinstance(raw, dict):
                raise HttpError(400, "messages entries must be objects", url)
            role = raw.get("role")
            if role not in ("system", "user", "assistant", "tool"):
                raise HttpError(400, "messages must use OpenAI message roles", url)
            msg = dict(raw)
            if role == "assistant":
                calls = msg.get("tool_calls", [])
                if calls is None:
                    calls = []
                if not isinstance(calls, list):
                    raise HttpError(400, "assistant tool_calls must be a list", url)
                stamped = []
                for tc in calls:
                    if not isinstance(tc, dict):
                        raise HttpError(400, "tool_call entries must be objects", url)
                    tc = {**tc, "tool_origin": dp.ENV_TOOL_ORIGIN}
                    if not tc.get("id"):
                        raise HttpError(400, "tool_call id is required", url)
                    if tc["id"] in seen:
                        raise HttpError(400, f"duplicate tool_call id: {tc['id']}", url)
                    seen.add(tc["id"])
                    stamped.append(tc)
                    owners.append(idx)
                msg["tool_calls"] = stamped
                msg["tool_origin"] = dp.ENV_TOOL_ORIGIN
            elif role == "tool":
                raise HttpError(400, "trace tool messages must include tool_origin", url)
            out.append(msg)
        return out, owners

    def act(
        self,
        agent_id: str,
        messages: list[dict[str, Any]],
        *,
        step: int,
        context: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """``POST /act`` (RT-RTE-act-gate): admission, then every env tool call of the payload in order under
        ``env.lock``, the step trace written live; an executed ``end_of_step`` ends the agent's step and
        stops execution. Returns upstream's response ``{ok, turn_idx, tool_results: [{tool_call_id, name,
        tool_origin, content}], step_done, hook_released}``.

        Admission in upstream's order (Corrections 7): 404 unknown agent, 410 finished/dead, 425
        ``stale_step``, 400 (no messages, a malformed message, a call without an id, a repeated id),
        400 ``end_of_step_must_be_last``, 425 ``hook_closed`` and 429 ``max_turns_per_step=N reached``
        (a pure end-of-step is exempt from both), 409 ``idempotency_conflict`` over all calls before any
        runs. Raises :class:`HttpError` for those, for statuses injected by the fault schedule and 500
        when a tool raised in a server that keeps running (``WriteFailed``, the lone-surrogate
        ``UnicodeEncodeError``); raises :class:`ServerUnavailable` when the server does not answer or
        dies inside the handler (a :class:`~sim.faults.Crash`). Not modeled: non-env ``tool_origin``
        calls and client-supplied tool messages (the ReAct baseline sends neither), the runtime event
        logged for a failed act, ``token_usage`` accounting.
        """
        t, n = self.t, self.turns.get(agent_id, 0)
        if self.schedule.outage:
            outage = self.schedule.outage_at(t, n)
            if outage and (t, n) not in self._outages_done:
                self._outages_done.add((t, n))
                self._refusing = outage
        self._answer(agent_id, "act")
        self._admit(agent_id, "act")
        if step != t:
            raise HttpError(425, "stale_step", self.url(agent_id, "act"))
        if not messages:
            raise HttpError(400, "messages is required", self.url(agent_id, "act"))
        recorded, owners = self._normalize(agent_id, messages)
        calls = [c for m in recorded for c in m.get("tool_calls") or ()]
        names = [(c.get("function") or {}).get("name", "") for c in calls]
        if "end_of_step" in names and names[-1] != "end_of_step":
            raise HttpError(400, "end_of_step_must_be_last", self.url(agent_id, "act"))
        only_eos = names == ["end_of_step"]
        if not self.hook_open and not only_eos:
            raise HttpError(425, "hook_closed", self.url(agent_id, "act"))
        if n >= self.max_turns_per_step and not only_eos:
            raise HttpError(
                429, f"max_turns_per_step={self.max_turns_per_step} reached", self.url(agent_id, "act")
            )
        injected = self.schedule.act_fault(t, n) if self.schedule.act else None
        if injected is not None:
            self.turns[agent_id] = n + 1
            if injected == 425:
                self.close_hook()
                raise HttpError(425, "hook_closed", self.url(agent_id, "act"))
            raise HttpError(injected, "injected", self.url(agent_id, "act"))
        self.act_seq += 1
        planned = []
        keyed = not self.variant.has(IDEMPOTENCY_OFF)
        for c, name in zip(calls, names):
            raw = (c.get("function") or {}).get("arguments", "{}")
            args = dp.parse_arguments(raw)
            key = f"{agent_id}:{t}:{c['id']}" if keyed and name in MUTATING_TOOLS else None
            fpr = dp.fingerprint(name, args) if key else None
            if key is not None and key in self.idempotency and self.idempotency[key][0] != fpr:
                self.sim.trace.op(SYSTEM, "act", agent=agent_id, phase="fail", status=409, key=key)
                raise HttpError(409, "idempotency_conflict", self.url(agent_id, "act"))
            planned.append((c, name, raw, args, key, fpr))
        results: list[Any] = []
        step_done = False
        try:
            for _c, name, raw, args, key, fpr in planned:
                if args is None:
                    results.append(dp.invalid_json_result(raw))
                elif name == "end_of_step":
                    if name in self.tool_denylist:
                        results.append(dp.not_available(name))
                    else:
                        results.append(dp.end_of_step_result(t, self.start_date))
                        step_done = True
                        break
                else:
                    results.append(self._dispatch(agent_id, name, args, key, fpr))
        except Crash as exc:
            raise self._die(agent_id, exc) from exc
        except (WriteFailed, UnicodeEncodeError) as exc:
            self.sim.trace.op(SYSTEM, "act", agent=agent_id, phase="fail", status=500, error=str(exc))
            raise HttpError(500, "internal_error", self.url(agent_id, "act")) from exc
        tool_results = []
        by_owner: dict[int, list[dict[str, Any]]] = {}
        env = dp.ENV_TOOL_ORIGIN
        for (c, name, *_), owner, r in zip(planned, owners, results):
            text = dp.result_text(r)
            cid = c["id"]
            tool_results.append({"tool_call_id": cid, "name": name, "tool_origin": env, "content": text})
            by_owner.setdefault(owner, []).append(
                {
                    "role": "tool",
                    "tool_call_id": cid,
                    "name": name,
                    "tool_origin": env,
                    "content": text,
                    "runtime_execution_id": f"{agent_id}:{t}:{n}:{cid}",
                }
            )
            if self.keep_log:
                self.results_log.append((t, str(cid), text))
        self.turns[agent_id] = n + 1
        added: list[dict[str, Any]] = []
        for idx, msg in enumerate(recorded):
            added.append(msg)
            if idx in by_owner:
                added += by_owner[idx]
        self._step_messages += added
        self._step_agents += [agent_id] * len(added)
        self._step_turns.append(self._turn_meta(agent_id, n, added, context))
        self.write_step_live()
        hook_released = False
        if step_done:
            self.done.add(agent_id)
            hook_released = all(a in self.done or a in self.dead for a in self.agents)
        self.sim.trace.op(SYSTEM, "act", agent=agent_id, t=t, tools=names, step_done=step_done)
        if hook_released:
            self.close_hook()
        return {
            "ok": True,
            "turn_idx": n,
            "tool_results": tool_results,
            "step_done": step_done,
            "hook_released": hook_released,
        }

    def _turn_meta(
        self, agent_id: str, n: int, msgs: list[dict[str, Any]], context: dict[str, Any] | None
    ) -> dict[str, Any]:
        """``record_act``'s turn record in the step trace: origin counts of the turn's recorded messages
        (*msgs*: each message followed by its tool results) and their calls, the receive time, and the
        normalized context when there is one (Not modeled: token_usage, always ``{}``)."""
        env = dp.ENV_TOOL_ORIGIN
        n_msgs = n_results = n_calls = 0
        for m in msgs:
            if m.get("tool_origin") == env:
                n_msgs += 1
                if m.get("role") == "tool":
                    n_results += 1
            for c in m.get("tool_calls") or ():
                if c.get("tool_origin") == env:
                    n_calls += 1
        meta: dict[str, Any] = {
            "turn_idx": n,
            "agent_id": agent_id,
            "token_usage": {},
            "tool_origins": {env: n_msgs + n_calls} if n_msgs + n_calls else {},
            "message_origins": {env: n_msgs} if n_msgs else {},
            "tool_call_origins": {env: n_calls} if n_calls else {},
            "tool_result_origins": {env: n_results} if n_results else {},
            "received_at_wall_ms": self._server_ms(),
        }
        ctx = dp.normalize_context(context)
        if ctx:
            meta["context"] = ctx
        return meta

    def _dispatch(self, agent_id: str, name: str, args: Any, key: str | None, fpr: Any) -> Any:
        """``dispatch_tool``: denied, unknown, schema violation, then the handler (a mutating one through the
        idempotency cache: a hit replays the cached result, only successful results are cached)."""
        if name in self.tool_denylist:
            return dp.not_available(name)
        if name not in UPSTREAM_TOOL_NAMES:
            return dp.unknown_tool(name)
        invalid = dp.validate(args, tool_parameters(self.schema_tokens)[name])
        if invalid is not None:
            return invalid
        if key is not None and key in self.idempotency:
            self.idempotency.move_to_end(key)
            return {**self.idempotency[key][1], "_idempotent_replay": True}
        result = self._handle(agent_id, name, args)
        if key is not None and isinstance(result, dict) and result.get("ok", True) is not False:
            self.idempotency[key] = (fpr, result)
            while len(self.idempotency) > IDEM_CACHE_CAP:
                self.idempotency.popitem(last=False)
        return result

    def _handle(self, agent_id: str, name: str, args: dict[str, Any]) -> Any:
        if name == "read_memory_doc":
            return self.read_memory_doc(agent_id)
        if name == "write_memory_doc":
            return self.write_memory_doc(agent_id, args["content"])
        if name == "query_balance":
            return {"ok": True, "cash": 1000 + self.t}
        if name == "list_tools":
            return list(self.tools())
        if name == "get_observation":
            return self._observations.get(agent_id, "")
        return {"ok": True}  # Not modeled: the domain tools' handlers

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


def write_memory_doc(env: MerchantEnv, agent_id: Any, content: Any) -> dict[str, Any]:
    """Upstream's ``write_memory_doc(env, aid, content)`` (see :meth:`MerchantEnv.write_memory_doc`)."""
    return env.write_memory_doc(agent_id, content)


def read_memory_doc(env: MerchantEnv, agent_id: Any) -> dict[str, Any]:
    """Upstream's ``read_memory_doc(env, aid)`` (see :meth:`MerchantEnv.read_memory_doc`)."""
    return env.read_memory_doc(agent_id)
