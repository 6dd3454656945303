"""The ReAct 160k/compact-30k baseline (``agent/baselines/react_160k_compact_30k.py``, RT-RTE-react-loop):
the trigger check, request assembly at window B, the LLM call with retries, the act loop, compaction and
the forced end-of-step paths.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Generator, Iterable, Sequence
from typing import Any

from sim.engine import Simulation
from sim.text import extract_facts
from sim.tokens import count_tokens
from sim.variant import FAITHFUL, Variant
from systems.merchantbench.model.caching import request_breakpoints
from systems.merchantbench.model.constants import (
    ALLOCATION_QUOTA_DELAYS_S,
    DEFAULT_CONFIG,
    FALLBACK_HOPS_EXHAUSTED,
    FALLBACK_NO_TOOL_CALL,
    OBSERVATION_CONNECTION_RETRIES,
    POLICY_REDACTED_TOOL_CONTENT,
    RETRY_DELAYS_S,
    RETRYABLE_CODES,
    SYSTEM,
)
from systems.merchantbench.model.estimate import (
    estimate_tokens,
    history_token_estimate,
    message_token_estimate,
)
from systems.merchantbench.model.fixtable import FIXES as fixes
from systems.merchantbench.model.history import (
    History,
    compaction_notice,
    compaction_reminder,
    group_trim,
    is_maintenance,
    part_kind,
    release_budget,
)
from systems.merchantbench.model.llm import LLM_ERRORS, LLMFailure, classify_llm_error
from systems.merchantbench.model.parts import Parts
from systems.merchantbench.model.server import MerchantEnv
from systems.merchantbench.model.tools import EOS_CALL
from systems.merchantbench.state import (
    ALIGNED_TRIM,
    CACHE_BREAKPOINTS_OFF,
    COMPACTION_OFF,
    EMPTY_REQUEST,
    GROUP_TRIM,
    PROVIDER_BUDGET,
    REDACT_RETRY_COPY,
    REMINDER_OFF,
    RESET_PENDING_ON_425,
    SAVE_BEFORE_COMPACT,
    TRACE_RECALL,
    TRIGGER_UNTRIMMED,
    UNIQUE_CALL_IDS,
    Compaction,
    FaultSchedule,
    HttpError,
    LLMError,
    ReactConfig,
    Reply,
    SentRequest,
    ServerUnavailable,
    StepResult,
)

MAX_RESPAWNS = 8
"""How many times :func:`run_step` respawns an agent within one tick before giving up (a guard)."""


_facts_uncached = extract_facts.__wrapped__


class ReactAgent:
    """The ReAct 160k/compact-30k baseline for one agent: process-local ``history`` (system prompt kept
    outside it), the per-hop trigger, request assembly at window B, the act loop and compaction.

    One instance is one agent *process*: everything here is lost when the process exits (the server stops
    answering, Corrections 11); :meth:`respawn` is the run's start route starting a new one.

    *model* is a stand-in with ``respond(agent, messages, t, hop) -> Reply`` (see ``policies.py``).
    *provider_tokenizer* is what the provider's ``usage.prompt_tokens`` counts: ``"cl100k"`` (the exact
    count of the whole request: system prompt, tool schemas, messages) or ``"estimate"`` (the design's
    own estimate plus the tool schemas' estimate; the fast path); a stand-in may report its own
    ``prompt_tokens`` instead. *record_every* records every n-th hop
    with ``sim.request`` (0: none). Claude cache breakpoints: :meth:`cache_breakpoints`. Not modeled:
    streaming, ``max_steps`` and CLI overrides.
    """

    def __init__(
        self,
        sim: Simulation,
        env: MerchantEnv,
        agent_id: str,
        model: Any,
        *,
        config: ReactConfig = DEFAULT_CONFIG,
        variant: Variant = FAITHFUL,
        schedule: FaultSchedule | None = None,
        provider_tokenizer: str = "cl100k",
        record_every: int = 1,
        route: str = "react.hop",
    ) -> None:
        if provider_tokenizer not in ("cl100k", "estimate"):
            raise ValueError(f"provider_tokenizer must be cl100k or estimate, not {provider_tokenizer!r}")
        self.sim, self.env, self.agent_id, self.model = sim, env, agent_id, model
        self.config, self.variant = config, variant
        self.schedule = schedule or env.schedule
        self.provider_tokenizer, self.record_every, self.route = provider_tokenizer, record_every, route
        self.history = History()
        self.system_prompt: str | None = None
        self._sys_key: tuple[str | None, str] | None = None
        self._sys: tuple[dict[str, Any] | None, int] = (None, 0)
        self.last_prompt_tokens = 0
        self.compaction_pending = False
        self.pre_assistant: list[dict[str, Any]] = []
        self.health: Counter[str] = Counter()
        self.generation = 0
        self.tools_json = env.tools_json()
        self.tool_names = env.offered_tools()
        self.compactions = 0
        self.hops = 0
        self.last_request: list[dict[str, Any]] = []
        self.last_parts: Sequence[str] = []
        self._span: tuple[int, int] | None = None
        self._last_span: tuple[int, int] | None = None
        self._obs_at: int | None = None
        self.last_request_estimate = 0
        self.last_request_had_reminder = False
        self.last_provider_tokens = 0
        self.last_exact = 0
        self.reminders = 0
        self.seen_parts: Sequence[str] = []
        self.seen_estimate = 0
        self._saved_in_cycle = False
        self._write_failed_in_cycle = False
        self._redact_copy: set[int] = set()
        self._calls_this_step = 0
        self._aligned_floor = 0
        self._needed: frozenset[str] = frozenset()
        self._observation: dict[str, Any] | None = None
        self._t = 0  # the env tick of the step being driven (env.t moves on when the hook closes)
        self._tools_est = estimate_tokens(self.tools_json)
        self._hop_messages: list[dict[str, Any]] = []
        self._tools_exact: int | None = None
        self.dropped = 0
        self.keep_log = False
        self.request_log: list[SentRequest] = []
        self.compaction_log: list[Compaction] = []
        self._ids_sent: set[str] = set()
        self.act_log: list[tuple[int, int, list[dict[str, Any]], str, list[dict[str, Any]]]] = []

    # -- brief and process lifecycle ---------------------------------------------------------------------
    def brief(self, text: str | None) -> None:
        """``_update_brief_from_obs`` (react 392-398; RT-OBJ-system-brief, RT-BAP-brief-guidance): the
        system prompt comes from the first brief, even an empty one, and no later brief replaces it; it is
        kept outside ``history``. None (no brief in the observation) changes nothing."""
        if text is not None and self.system_prompt is None:
            self.system_prompt = text

    def respawn(self) -> ReactAgent:
        """A new agent process for the same run and agent id (``_respawn_bootstrap`` → ``_spawn_baseline``
        from the run's start route; Corrections 11): empty ``history``, nothing pending, no pre-assistant
        messages, no reported tokens, and no system prompt until an observation brings a brief (a live
        ``Environment`` has already served it). The claim logs (``request_log``, ``act_log``) carry on."""
        new = ReactAgent(
            self.sim,
            self.env,
            self.agent_id,
            self.model,
            config=self.config,
            variant=self.variant,
            schedule=self.schedule,
            provider_tokenizer=self.provider_tokenizer,
            record_every=self.record_every,
            route=self.route,
        )
        new.generation = self.generation + 1
        new.keep_log, new.request_log, new.act_log = self.keep_log, self.request_log, self.act_log
        new.compaction_log = self.compaction_log
        self.sim.trace.op(SYSTEM, "respawn", agent=self.agent_id, t=self.env.t, generation=new.generation)
        return new

    # -- trigger and compaction ----------------------------------------------------------------------
    def maybe_add_compaction_reminder(self) -> None:
        """``_maybe_add_compaction_reminder`` (RT-RTE-context-trim): unless pending or ``T <= 0``, fire when
        the reported prompt tokens (else the untrimmed history estimate) reach T: immediate path (trim to
        K, notice) without ``write_memory_doc``, else the pending path (reminder)."""
        c = self.config
        if self.compaction_pending or c.trigger <= 0:
            return
        trig = self.last_prompt_tokens if self.last_prompt_tokens > 0 else self.history.total
        if self.variant.has(TRIGGER_UNTRIMMED):
            trig = max(self.last_prompt_tokens, self.history.total)
        if trig < c.trigger:
            return
        if "write_memory_doc" not in self.tool_names:
            self._apply_plan(*self._compaction_plan(c.keep))
            msg = {"role": "user", "content": compaction_notice(c.trigger, c.keep)}
            path = "immediate"
        else:
            msg = {"role": "user", "content": compaction_reminder(c.trigger, c.keep)}
            path = "pending"
        self.compaction_pending = True
        self.reminders += 1
        self._saved_in_cycle = False
        self._write_failed_in_cycle = False
        if self.variant.has(REMINDER_OFF):  # off switch: the trigger shows nothing
            self.pre_assistant = []
        else:
            self.history.append(msg)
            self.pre_assistant = [dict(msg)]
        self.sim.trace.op(
            SYSTEM,
            "compaction_trigger",
            agent=self.agent_id,
            t=self._t,
            path=path,
            trig=trig,
            history=self.history.upstream_len,
        )

    def _compaction_plan(self, budget: int) -> tuple[list[tuple[int, dict[str, Any]]] | None, int]:
        """What ``trim(history, budget)`` keeps: the kept (index, message) pairs under ``group-trim``, else
        None and the start of the kept suffix."""
        if self.variant.has(GROUP_TRIM):
            return group_trim(self.history, budget), 0
        return None, self.history.trim_start(budget)[0]

    def _apply_plan(self, kept: list[tuple[int, dict[str, Any]]] | None, start: int) -> None:
        if kept is not None:
            self.history.reset([m for _, m in kept])
        else:
            self.history.keep_from(start)

    def compact_history_if_pending(self) -> bool:
        """``_compact_history_if_pending`` (react 519-530; RT-RTE-context-trim, MEM-OBJ-history): after any
        successful act, if pending, ``history = trim(history, K)``, reset ``last_prompt_tokens``, clear
        pending and the pre-assistant list. ``save-before-compact``: only once a write succeeded in the
        cycle (:func:`.fixes.save_before_compact` makes one when the step ends without); off switch
        ``compaction-off``: never."""
        if not self.compaction_pending or self.variant.has(COMPACTION_OFF):
            return False
        if self.variant.has(SAVE_BEFORE_COMPACT) and not self._saved_in_cycle:
            return False
        before = self.history.upstream_len
        log_before = [self.history.part(i) for i in range(before)] if self.keep_log else []
        self._apply_plan(*self._compaction_plan(self.config.keep))
        self.last_prompt_tokens = 0
        self.compaction_pending = False
        self.pre_assistant = []
        self.compactions += 1
        if self.keep_log:
            self.compaction_log.append(
                Compaction(
                    self._t,
                    tuple(log_before),
                    tuple(self.history.msgs),
                    self.history.total,
                    self.env.document_text(self.agent_id),
                    self.last_request_had_reminder,
                )
            )
        self.sim.trace.op(
            SYSTEM,
            "compact",
            agent=self.agent_id,
            t=self._t,
            before=before,
            after=self.history.upstream_len,
            reminder_seen=self.last_request_had_reminder,
            saved=self._saved_in_cycle,
            write_failed=self._write_failed_in_cycle,
            obs_kept=any(m is self._observation for m in self.history.msgs),
        )
        return True

    # -- request assembly ----------------------------------------------------------------------------
    def _system_message(self) -> tuple[dict[str, Any] | None, int]:
        """The request's system message (none for a Claude model, which gets the prompt another way) and
        its estimate, made once per prompt (the message is never mutated)."""
        key = (self.system_prompt, self.config.model_name)
        if self._sys_key != key:
            self._sys_key = key
            if self.system_prompt and "claude" not in self.config.model_name.lower():
                msg = {"role": "system", "content": self.system_prompt}
                self._sys = (msg, message_token_estimate(msg))
            else:
                self._sys = (None, 0)
        return self._sys

    def build_request(self) -> tuple[list[dict[str, Any]], Parts, int]:
        """The hop's request: system message plus ``trim(history, B)``, sanitized (RT-RTE-react-loop).
        Nothing is subtracted from B for the system prompt or tool schemas. Returns the messages, the
        provider parts (system prompt, tool schemas, one text per message; built on first use) and the
        design's estimate. The faithful trim is a bisection and a slice of the sanitized history; the span
        it keeps is left in ``_span`` for the counted request record (None for the fixed variants' trims)."""
        h = self.history
        sysmsg, est = self._system_message()
        head = [self.system_prompt, self.tools_json] if self.system_prompt else [self.tools_json]
        self._span = None
        if self.variant.has(EMPTY_REQUEST):  # off switch: nothing of the history is shown
            body: list[dict[str, Any]] = []
            self.dropped = h.upstream_len
        elif self.variant.has(PROVIDER_BUDGET) or self.variant.has(GROUP_TRIM):
            if self.variant.has(PROVIDER_BUDGET):
                body, _texts, idx = fixes.provider_budget_request(self)
            else:
                body, _texts, idx = fixes.group_request(self)
            costs = [h.costs[i] if i >= 0 else message_token_estimate(m) for i, m in zip(idx, body)]
            if self.variant.has(ALIGNED_TRIM):
                body, idx, costs = fixes.aligned_trim(self, body, idx, costs)
            est += sum(costs)
            self.dropped = h.upstream_len - len(body)
        else:
            start, kept = h.trim_start(self.config.context_window)
            est += kept
            self.dropped = h.released + start
            body = h.sent[start:]
            if self._redact_copy:
                redacted = POLICY_REDACTED_TOOL_CONTENT
                body = [
                    {**m, "content": redacted} if start + k in self._redact_copy else m
                    for k, m in enumerate(body)
                ]
            else:
                self._span = (start, len(h))
            if self.variant.has(ALIGNED_TRIM):
                n = len(h)
                body, idx, costs = fixes.aligned_trim(self, body, list(range(start, n)), h.costs[start:])
                moved = (idx[0] if idx else n) - start
                if moved:
                    est -= kept - sum(costs)
                    self.dropped = h.released + start + moved
                    if self._span is not None:
                        self._span = (start + moved, n)
        if sysmsg is None:
            return body, Parts(head, body), est
        body.insert(0, sysmsg)  # body is this request's own list (a slice or a new list)
        return body, Parts(head, body, 1), est

    def cache_breakpoints(self, parts: Sequence[str]) -> tuple[int, ...]:
        """The part indices of *parts* upstream marks with Claude's ``cache_control`` (:mod:`.caching`:
        the system prompt, the last two messages and the last assistant message); none with the
        ``cache-breakpoints-off`` switch. Only a provider that reads breakpoints (``anthropic``) uses them."""
        if self.variant.has(CACHE_BREAKPOINTS_OFF) or not isinstance(parts, Parts):
            return ()
        return request_breakpoints(
            self.system_prompt, len(parts.head), parts.body, policy_retry=parts.policy_retry
        )

    def act_context(self, messages: list[dict[str, Any]] | None = None) -> dict[str, Any] | None:
        """``_act_context`` (react 537-558; MEM-CLM-telemetry-limits; Corrections 4, 6): ``tokens`` is the
        reported prompt tokens, else the estimate of *messages* (a hop's own sanitized request) or, for a
        forced end-of-step, of a request rebuilt from the history now; the key is left out when that is 0.
        ``compacted: True`` while pending; the non-zero health counters since the last successful act.
        None when nothing is left (the client then sends no context)."""
        tokens = self.last_prompt_tokens
        if tokens <= 0:
            if messages is None:
                messages = self.build_request()[0]
            tokens = history_token_estimate(messages)
        ctx: dict[str, Any] = {}
        if tokens > 0:
            ctx["tokens"] = tokens
        if self.compaction_pending:
            ctx["compacted"] = True
        for key in ("provider_api_failed_attempts", "retry_exhausted"):
            if self.health[key]:
                ctx[key] = self.health[key]
        return ctx or None

    def _ack_health(self) -> None:
        """``_ack_runtime_health``: the counters restart at 0 after every successful act (react 386-390)."""
        self.health.clear()

    # -- the LLM call with retries ---------------------------------------------------------------------
    def _call_llm(self, hop: int) -> Generator[Any, Any, Reply]:
        """``_chat_completion_with_retries`` (react 434-481; Corrections 5): one request per hop, resent
        unchanged on a retryable error after its delay; the first Forbidden redacts the last tool group and
        resends a rebuilt request without using a retry; a non-retryable code raises, counting
        ``retry_exhausted`` if a retry or the Forbidden retry already happened; a retryable code whose
        delays are used up counts it and raises. Every failed call counts ``provider_api_failed_attempts``.
        The hop's original request stays in ``_hop_messages`` (the act's context estimates it)."""
        retries, forbidden_retried = 0, False
        self._redact_copy = set()
        msgs, parts, est = self.build_request()
        self._hop_messages = msgs
        retry = False
        while True:
            self.hops += 1
            self.last_request, self.last_request_estimate = msgs, est
            self.last_parts = parts
            base = self.history.base
            self._last_span = None if self._span is None else (base + self._span[0], base + self._span[1])
            span = self._span
            if span is not None:
                self.last_request_had_reminder = self.history.has_maintenance(span[0])
                shows = self._obs_at is not None and self._obs_at >= self.history.base + span[0]
            else:
                self.last_request_had_reminder = any(is_maintenance(m) for m in msgs)
                shows = any(m is self._observation for m in msgs)
            if shows:
                self.seen_parts, self.seen_estimate = parts, est
            if self.keep_log:
                self.request_log.append(
                    SentRequest(self.env.t, hop, msgs, self.dropped, self.compaction_pending, retry)
                )
            provider = self._provider_tokens(parts, est, msgs, span)
            self.last_provider_tokens = provider
            call = self._calls_this_step
            self._calls_this_step += 1
            yield self.sim.timeout(self.config.llm_latency_s)
            kind = self.schedule.llm_fault(self.env.t, call)
            if kind is None:
                self._redact_copy = set()
                reply: Reply = self.model.respond(self, msgs, self.env.t, hop)
                usage: int | None = provider if reply.prompt_tokens is None else reply.prompt_tokens
                if (self.env.t, call) in self.schedule.no_usage:
                    usage = None
                if usage == reply.prompt_tokens:
                    return reply
                return Reply(reply.content, reply.tool_calls, usage, reply.reasoning_content)
            err = LLM_ERRORS[kind]
            code = classify_llm_error(f"{err.type_name}: {err}", err.status)
            self.health["provider_api_failed_attempts"] += 1
            self.sim.trace.op(SYSTEM, "llm_error", agent=self.agent_id, phase="fail", t=self._t, code=code)
            if code == "Forbidden" and not forbidden_retried:
                forbidden_retried = retry = True
                self._redact_last_tool_group()
                msgs, parts, est = self.build_request()
                parts.policy_retry = True  # resent without message cache marks (react 451-459)
                continue
            if code not in RETRYABLE_CODES:
                if retries > 0 or forbidden_retried:
                    self.health["retry_exhausted"] += 1
                self._redact_copy = set()
                raise LLMFailure(err, code, retries)
            delays = ALLOCATION_QUOTA_DELAYS_S if code == "Throttling.AllocationQuota" else RETRY_DELAYS_S
            if retries >= len(delays):
                self.health["retry_exhausted"] += 1
                self._redact_copy = set()
                raise LLMFailure(err, code, retries)
            yield self.sim.timeout(delays[retries])
            retries += 1

    def _provider_tokens(
        self, parts: Parts, est: int, msgs: list[dict[str, Any]], span: tuple[int, int] | None
    ) -> int:
        """Record the hop's request (every ``record_every``-th hop) and return what the provider reports:
        the exact cl100k count of the whole request, or the design's estimate plus the tool schemas'. Over
        a contiguous span the record is made from the history's per-message counts and sliding facts."""
        record = self.record_every > 0 and self.hops % self.record_every == 0
        if not record and self.provider_tokenizer == "estimate":
            return est + self._tools_est
        exact: int
        if span is not None and self.sim.cache is None:  # a provider's cache needs the parts' texts
            h, (start, end) = self.history, span
            head = count_tokens(self.system_prompt or "") + self._tools_count()
            exact = head + h.exact_sum(start, end)
            if record:
                by_kind = {"tools": self._tools_count(), **h.kind_tokens(start, end)}
                if self.system_prompt:
                    by_kind["system"] = count_tokens(self.system_prompt)
                facts = self._with_head(h.facts(start, end))
                rec = self.sim.request_counted(
                    SYSTEM,
                    self.route,
                    exact_tokens=exact,
                    parts=len(parts),
                    facts=facts,
                    agent=self.agent_id,
                    estimate=est,
                    needed=self._needed,
                    tokens_by_kind=by_kind,
                    t=self.env.t,
                    pending=self.compaction_pending,
                    dropped=self.dropped,
                )
                self.last_exact = rec.exact_tokens
        elif record:
            kinds = (
                ["system"] * (len(parts) - len(parts.body) - 1)
                + ["tools"]
                + [part_kind(m) for m in parts.body]
            )
            rec = self.sim.request(
                SYSTEM,
                self.route,
                list(parts),
                agent=self.agent_id,
                estimate=est,
                needed=self._needed,
                kinds=kinds,
                breakpoints=self.cache_breakpoints(parts) if self.sim.cache is not None else None,
                t=self.env.t,
                pending=self.compaction_pending,
                dropped=self.dropped,
            )
            exact = self.last_exact = rec.exact_tokens
        else:
            exact = sum(count_tokens(p) for p in parts)
        if self.provider_tokenizer == "estimate":
            return est + self._tools_est
        return exact

    def request_facts(self) -> frozenset[str]:
        """The fact ids in the last request (system prompt, tool schemas, messages), from the history's
        per-message facts when the request was a contiguous span of it."""
        h, span = self.history, self._last_span
        if span is not None and h.base <= span[0] and span[1] <= h.base + len(h):
            return self._with_head(h.facts(span[0] - h.base, span[1] - h.base))
        return self._head_facts().union(*(_facts_uncached(p) for p in self.last_parts))

    def _with_head(self, window: frozenset[str]) -> frozenset[str]:
        """The ids of a request over a span of the history whose ids are *window*: those and the system
        prompt's and tool schemas'. *window* itself when it holds them all (usually they hold none), so the
        trace sees the set the history returned last time again while it is unchanged, and no hop copies
        thousands of ids."""
        head = self._head_facts()
        return window if head <= window else window | head

    def _head_facts(self) -> frozenset[str]:
        """The ids in the request's head: the system prompt's and the tool schemas' (cached texts)."""
        return extract_facts(self.system_prompt or "") | self._tools_facts()

    def _tools_count(self) -> int:
        if self._tools_exact is None:
            self._tools_exact = count_tokens(self.tools_json)
        return self._tools_exact

    def _tools_facts(self) -> frozenset[str]:
        return extract_facts(self.tools_json)

    def _redact_last_tool_group(self) -> list[int]:
        """The one-shot Forbidden redaction: the last contiguous block of tool messages (past trailing
        non-tool messages) gets the redaction content, in place in ``history`` (fixed
        ``redact-retry-copy``: only in the retry's request)."""
        msgs = self.history.msgs
        i = len(msgs) - 1
        while i >= 0 and msgs[i].get("role") != "tool":
            i -= 1
        block = []
        while i >= 0 and msgs[i].get("role") == "tool":
            block.append(i)
            i -= 1
        if self.variant.has(REDACT_RETRY_COPY):
            self._redact_copy = set(block)
        else:
            for k in block:
                self.history.set_content(k, POLICY_REDACTED_TOOL_CONTENT)
        self.sim.trace.op(
            SYSTEM,
            "forbidden_redaction",
            agent=self.agent_id,
            t=self._t,
            messages=len(block),
            in_place=not self.variant.has(REDACT_RETRY_COPY),
        )
        return block

    # -- acting --------------------------------------------------------------------------------------
    def _act(self, message: dict[str, Any], t: int, context: dict[str, Any] | None) -> dict[str, Any]:
        """``client.act(messages=[*pre_assistant, message], context=...)``; on success the health counters
        are acknowledged. Raises :class:`HttpError` or :class:`ServerUnavailable`."""
        calls = message.get("tool_calls") or []
        payload = [*self.pre_assistant, message]
        turn = self.env.turns.get(self.agent_id, 0)
        try:
            res = self.env.act(self.agent_id, payload, step=t, context=context)
            if (t, turn) in self.schedule.resend:  # the response was lost: the same request again
                res = self.env.act(self.agent_id, payload, step=t, context=context)
        except (HttpError, ServerUnavailable) as exc:
            if self.keep_log:
                status = str(exc.status) if isinstance(exc, HttpError) else "unavailable"
                self.act_log.append((t, len(self.request_log), calls, status, []))
            raise
        self._ack_health()
        writes = any(c["function"]["name"] == "write_memory_doc" for c in calls)
        if self.keep_log or writes:  # the results are read only to log them and to see a save succeed
            results = [json.loads(r["content"]) for r in res["tool_results"]]
            if self.keep_log:
                self.act_log.append((t, len(self.request_log), calls, "ok", results))
            for c, r in zip(calls, results):
                if c["function"]["name"] == "write_memory_doc" and isinstance(r, dict) and r.get("ok"):
                    self._saved_in_cycle = True
        return res

    def _note_failed_write(self, message: dict[str, Any]) -> None:
        if any(c["function"]["name"] == "write_memory_doc" for c in message.get("tool_calls") or []):
            self._write_failed_in_cycle = True

    def remember_act(self, message: dict[str, Any], tool_results: list[dict[str, Any]]) -> None:
        """``_remember_act`` (react 411-424; MEM-OBJ-history): an end-of-step-only act keeps just ``{role:
        assistant, content}`` (when the content is non-empty and not ``[llm-error]``); any other act keeps
        the assistant message and one tool message per returned tool result (its content as sent)."""
        calls = message.get("tool_calls") or []
        if len(calls) == 1 and calls[0]["function"]["name"] == "end_of_step":
            c = message.get("content") or ""
            if c and not c.startswith("[llm-error]"):
                kept = {"role": "assistant", "content": c}
                if message.get("reasoning_content"):
                    kept["reasoning_content"] = message["reasoning_content"]
                self.history.append(kept)
            return
        self.history.append(message)
        for r in tool_results:
            self.history.append(
                {
                    "role": "tool",
                    "tool_call_id": r["tool_call_id"],
                    "name": r["name"],
                    "content": r["content"],
                }
            )

    def force_end_of_step(self, content: str, t: int) -> bool:
        """``_force_end_of_step`` (react 725-748; RT-RTE-react-loop; Corrections 1): send the pre-assistant
        messages and an EOS carrying *content*, with the context of a request rebuilt now; on success
        remember it and compact if pending. On an HTTP error, only while a compaction is pending, clear
        pending, the pre-assistant list and the reported tokens (the reminder stays in history).
        Any other error (:class:`ServerUnavailable`) is not caught."""
        msg = {"role": "assistant", "content": content, "tool_calls": [dict(EOS_CALL)]}
        try:
            res = self._act(msg, t, self.act_context())
        except HttpError as exc:
            if self.compaction_pending:
                self.compaction_pending = False
                self.pre_assistant = []
                self.last_prompt_tokens = 0
                self.sim.trace.op(
                    SYSTEM, "compaction_cleared", agent=self.agent_id, t=t, why="forced EOS failed"
                )
            self.sim.trace.op(
                SYSTEM, "force_end_of_step", agent=self.agent_id, phase="fail", t=t, status=exc.status
            )
            return False
        self.remember_act(msg, res["tool_results"])
        self.compact_history_if_pending()
        self.sim.trace.op(SYSTEM, "force_end_of_step", agent=self.agent_id, t=t, reason=content[:40])
        return True

    def drive_step(self, observation: str, *, needed: Iterable[str] = ()) -> Generator[Any, Any, StepResult]:
        """One turn of ``run()`` as a SimPy process (react 750-785; RT-RTE-react-loop, RT-RTE-act-gate): the
        observation (a ``ConnectionError`` retried :data:`OBSERVATION_CONNECTION_RETRIES` times, then the
        process exits; 410 ends the run), then ``_drive_step``. An exception out of the step forces a
        ``[step-crash] {Type}: {e}`` end-of-step; if that act does not get an answer either, the process
        exits (outcome ``exited``: call :meth:`respawn`)."""
        t = self.env.t
        try:
            prompt = self._observe(observation)
        except ServerUnavailable as exc:
            self.sim.trace.op(SYSTEM, "agent_exit", agent=self.agent_id, phase="crash", t=t, error=str(exc))
            return StepResult(t, "exited", 0, str(exc))
        except HttpError as exc:
            return StepResult(t, "finished" if exc.status == 410 else "failed", 0, str(exc))
        self.brief(prompt)
        try:
            return (yield from self._drive_step(observation, needed=needed))
        except (ServerUnavailable, HttpError, LLMError, KeyError, ValueError, TypeError) as exc:
            text = f"[step-crash] {getattr(exc, 'type_name', type(exc).__name__)}: {exc}"
            try:
                self.force_end_of_step(text, t)
            except ServerUnavailable as again:
                self.sim.trace.op(
                    SYSTEM, "agent_exit", agent=self.agent_id, phase="crash", t=t, error=str(again)
                )
                return StepResult(t, "exited", 0, text)
            return StepResult(t, "forced", 0, text)

    def _observe(self, observation: str) -> str | None:
        """``client.observation()``: the env's observation route; returns the brief's system prompt if this
        observation carried one."""
        for attempt in range(OBSERVATION_CONNECTION_RETRIES + 1):
            try:
                return self.env.deliver_observation(self.agent_id, observation)
            except ServerUnavailable:
                if attempt == OBSERVATION_CONNECTION_RETRIES:
                    raise
        raise AssertionError("unreachable")

    def _drive_step(self, observation: str, *, needed: Iterable[str] = ()) -> Generator[Any, Any, StepResult]:
        t = self._t = self.env.t
        self._calls_this_step = 0
        self._needed = frozenset(needed)
        self.history.release(release_budget(self.config, self.variant, self.keep_log))
        len0 = len(self.history)
        self.seen_parts, self.seen_estimate = [], 0
        self._ids_sent = set()
        self._observation = {"role": "user", "content": observation}
        self.history.append(self._observation)
        self._obs_at = self.history.base + len(self.history) - 1
        if self.variant.has(SAVE_BEFORE_COMPACT) and self.compaction_pending and not self._saved_in_cycle:
            fixes.save_before_compact(self, t)
        if self.variant.has(TRACE_RECALL):
            fixes.recall_from_traces(self, t, observation)
        compactions0 = self.compactions
        for hop in range(self.config.max_hops):
            self.maybe_add_compaction_reminder()
            try:
                reply = yield from self._call_llm(hop)
            except LLMFailure as f:
                text = f"[llm-error] {f.error.type_name}: {f.error} detail_code={f.code} retries={f.retries}"
                self.force_end_of_step(text, t)
                return StepResult(t, "forced", hop + 1, text, self.compactions > compactions0)
            self.last_prompt_tokens = (
                reply.prompt_tokens if reply.prompt_tokens and reply.prompt_tokens > 0 else 0
            )
            context = self.act_context(self._hop_messages)
            msg = self._assistant_message(reply, hop)
            if self.variant.has(UNIQUE_CALL_IDS):
                for call in msg["tool_calls"]:
                    call["id"] = fixes.unique_id(self, call["id"])
            try:
                res = self._act(msg, t, context)
            except HttpError as exc:
                self._note_failed_write(msg)
                if exc.status == 425:
                    self.history.truncate(len0)
                    if self.variant.has(RESET_PENDING_ON_425) and self.compaction_pending:
                        self.compaction_pending = False
                        self.pre_assistant = []
                        self.sim.trace.op(SYSTEM, "compaction_cleared", agent=self.agent_id, t=t, why="425")
                    self.sim.trace.op(
                        SYSTEM, "stale_step", agent=self.agent_id, t=t, pending=self.compaction_pending
                    )
                    return StepResult(t, "stale", hop + 1, str(exc), self.compactions > compactions0)
                self.force_end_of_step(f"[act-error] HTTPError: {exc}", t)
                return StepResult(t, "forced", hop + 1, str(exc), self.compactions > compactions0)
            self.remember_act(msg, res["tool_results"])
            self.compact_history_if_pending()
            if res["step_done"] or not reply.tool_calls:
                return StepResult(t, "done", hop + 1, "", self.compactions > compactions0)
        self.force_end_of_step(FALLBACK_HOPS_EXHAUSTED, t)
        return StepResult(t, "forced", self.config.max_hops, "hops", self.compactions > compactions0)

    @staticmethod
    def _assistant_message(reply: Reply, hop: int) -> dict[str, Any]:
        """The act's assistant message (react 632-690; Corrections 2, 8). Without tool calls: the text, or
        the ``[fallback] no tool call`` text, with the single ``call_eos`` end-of-step. With tool calls:
        content ``thought or ""`` (never None); each id is the provider's, else ``call_{hop}_{k}`` with *k*
        the position of the first *equal* call (``tool_calls_raw.index``: identical id-less calls share an
        id); empty arguments become ``"{}"``."""
        if not reply.tool_calls:
            msg: dict[str, Any] = {
                "role": "assistant",
                "content": reply.content or FALLBACK_NO_TOOL_CALL,
                "tool_calls": [dict(EOS_CALL)],
            }
        else:
            raw = list(reply.tool_calls)
            calls = [
                {
                    "id": c.id or f"call_{hop}_{raw.index(c)}",
                    "type": "function",
                    "function": {"name": c.name, "arguments": c.arguments or "{}"},
                }
                for c in raw
            ]
            msg = {"role": "assistant", "content": reply.content or "", "tool_calls": calls}
        if reply.reasoning_content:
            msg["reasoning_content"] = reply.reasoning_content
        return msg

    def run_step(self, observation: str, *, needed: Iterable[str] = ()) -> StepResult:
        """Run one step of this process to completion in the simulation (a SimPy process) and return how
        it ended (see :func:`run_step` for a step that survives the process dying)."""
        proc = self.sim.process(self.drive_step(observation, needed=needed))
        self.sim.run(proc)
        result = proc.value
        assert isinstance(result, StepResult)
        return result


def run_step(
    agent: ReactAgent, observation: str, *, needed: Iterable[str] = ()
) -> tuple[ReactAgent, StepResult]:
    """Drive one env tick to its end across agent processes: when the process exits (the server stopped
    answering), the run's start route restarts a dead server (a rehydrated ``Environment``) and respawns
    the agent, which observes the same tick again (Corrections 11). Returns the agent process now running
    and how the tick ended for it."""
    result = agent.run_step(observation, needed=needed)
    for _ in range(MAX_RESPAWNS):
        if result.outcome != "exited":
            break
        if agent.env.down:
            agent.env.restart()
        agent = agent.respawn()
        result = agent.run_step(observation, needed=needed)
    return agent, result
