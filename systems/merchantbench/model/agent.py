"""The ReAct 160k/compact-30k baseline (``agent/baselines/react_160k_compact_30k.py``, RT-RTE-react-loop):
the trigger check, request assembly at window B, the LLM call with retries, the act loop, compaction and
the forced end-of-step paths.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Generator, Iterable
from dataclasses import replace
from typing import Any

from sim.engine import Simulation
from sim.text import extract_facts
from sim.tokens import count_tokens
from sim.variant import FAITHFUL, Variant
from systems.merchantbench.model.constants import (
    ALLOCATION_QUOTA_DELAYS_S,
    DEFAULT_CONFIG,
    FALLBACK_HOPS_EXHAUSTED,
    FALLBACK_NO_TOOL_CALL,
    POLICY_REDACTED_TOOL_CONTENT,
    RETRY_DELAYS_S,
    RETRYABLE_CODES,
    SYSTEM,
)
from systems.merchantbench.model.estimate import (
    estimate_tokens,
    history_token_estimate,
    message_token_estimate,
    provider_text,
    sanitize_message_for_llm,
)
from systems.merchantbench.model.history import (
    History,
    compaction_notice,
    compaction_reminder,
    group_trim,
    is_maintenance,
)
from systems.merchantbench.model.llm import LLM_ERRORS, LLMFailure, classify_llm_error
from systems.merchantbench.model.server import MerchantEnv
from systems.merchantbench.model.tools import EOS_CALL, TOOLS_JSON
from systems.merchantbench.state import (
    COMPACT_AFTER_SAVE,
    GROUP_TRIM,
    PIN_OBSERVATION,
    PROVIDER_BUDGET,
    REDACT_RETRY_COPY,
    RESET_PENDING_ON_425,
    TRACE_RECALL,
    TRIGGER_UNTRIMMED,
    FaultSchedule,
    HttpError,
    LLMError,
    ReactConfig,
    Reply,
    StepResult,
)


class ReactAgent:
    """The ReAct 160k/compact-30k baseline for one agent: process-local ``history`` (system prompt kept
    outside it), the per-hop trigger, request assembly at window B, the act loop and compaction.

    *model* is a stand-in with ``respond(agent, messages, t, hop) -> Reply`` (see ``policies.py``).
    *provider_tokenizer* is what the provider's ``usage.prompt_tokens`` counts: ``"cl100k"`` (the exact
    count of the whole request: system prompt, tool schemas, messages) or ``"estimate"`` (the design's
    own estimate plus the tool schemas' estimate; the fast path); a stand-in may report its own
    ``prompt_tokens`` instead. *record_every* records every n-th hop
    with ``sim.request`` (0: none). Not modeled: Claude cache breakpoints (the system prompt is counted
    but sent via ``extra_body``), streaming, ``max_steps`` and CLI overrides.
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
        self.system_prompt = ""
        self.last_prompt_tokens = 0
        self.compaction_pending = False
        self.pre_assistant: list[dict[str, Any]] = []
        self.health: Counter[str] = Counter()
        self.compactions = 0
        self.hops = 0
        self.last_request: list[dict[str, Any]] = []
        self.last_parts: list[str] = []
        self.last_request_estimate = 0
        self.last_request_had_reminder = False
        self.last_provider_tokens = 0
        self._saved_in_cycle = False
        self._write_failed_in_cycle = False
        self._redact_copy: set[int] = set()
        self._calls_this_step = 0
        self._needed: frozenset[str] = frozenset()
        self._observation: dict[str, Any] | None = None
        self._t = 0  # the env tick of the step being driven (env.t moves on when the hook closes)
        self._tools_est = estimate_tokens(TOOLS_JSON)
        self._tools_exact: int | None = None
        self.dropped = 0
        self.keep_log = False
        self.request_log: list[tuple[int, list[dict[str, Any]], int, bool]] = []
        self.act_log: list[tuple[int, int, list[dict[str, Any]], str, list[dict[str, Any]]]] = []

    # -- brief -----------------------------------------------------------------------------------------
    def brief(self, text: str) -> None:
        """Take the system prompt from the first brief only (RT-OBJ-system-brief, RT-BAP-brief-guidance);
        it is kept outside ``history``."""
        if not self.system_prompt:
            self.system_prompt = text

    @property
    def tool_names(self) -> frozenset[str]:
        return self.env.offered_tools()

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
            self._apply_trim(c.keep)
            msg = {"role": "user", "content": compaction_notice(c.trigger, c.keep)}
            path = "immediate"
        else:
            msg = {"role": "user", "content": compaction_reminder(c.trigger, c.keep)}
            path = "pending"
        self.history.append(msg)
        self.compaction_pending = True
        self._saved_in_cycle = False
        self._write_failed_in_cycle = False
        self.pre_assistant = [dict(msg)]
        self.sim.trace.op(
            SYSTEM,
            "compaction_trigger",
            agent=self.agent_id,
            t=self._t,
            path=path,
            trig=trig,
            history=len(self.history),
        )

    def _apply_trim(self, budget: int) -> None:
        if self.variant.has(GROUP_TRIM) or self.variant.has(PIN_OBSERVATION):
            kept = group_trim(self.history, budget, pin_observation=self.variant.has(PIN_OBSERVATION))
            self.history.reset([m for _, m in kept])
        else:
            self.history.keep_from(self.history.trim_start(budget)[0])

    def compact_history_if_pending(self) -> bool:
        """``_compact_history_if_pending`` (RT-RTE-context-trim, MEM-OBJ-history): after any successful act,
        if pending, ``history = trim(history, K)``, reset ``last_prompt_tokens``, clear pending and the
        pre-assistant list (fixed ``compact-after-save``: only once a write succeeded in this cycle)."""
        if not self.compaction_pending:
            return False
        if self.variant.has(COMPACT_AFTER_SAVE) and not self._saved_in_cycle:
            return False
        before = len(self.history)
        self._apply_trim(self.config.keep)
        self.last_prompt_tokens = 0
        self.compaction_pending = False
        self.pre_assistant = []
        self.compactions += 1
        self.sim.trace.op(
            SYSTEM,
            "compact",
            agent=self.agent_id,
            t=self._t,
            before=before,
            after=len(self.history),
            reminder_seen=self.last_request_had_reminder,
            saved=self._saved_in_cycle,
            write_failed=self._write_failed_in_cycle,
            obs_kept=any(m is self._observation for m in self.history.msgs),
        )
        return True

    # -- request assembly ----------------------------------------------------------------------------
    def _system_message(self) -> dict[str, Any] | None:
        if self.system_prompt and "claude" not in self.config.model_name.lower():
            return {"role": "system", "content": self.system_prompt}
        return None

    def build_request(self) -> tuple[list[dict[str, Any]], list[str], int]:
        """The hop's request: system message plus ``trim(history, B)``, sanitized (RT-RTE-react-loop).
        Nothing is subtracted from B for the system prompt or tool schemas. Returns the messages, the
        provider parts (system prompt, tool schemas, one text per message) and the design's estimate."""
        h, sysmsg = self.history, self._system_message()
        parts = [self.system_prompt, TOOLS_JSON] if self.system_prompt else [TOOLS_JSON]
        est = message_token_estimate(sysmsg) if sysmsg else 0
        msgs: list[dict[str, Any]] = [sysmsg] if sysmsg else []
        if self.variant.has(PROVIDER_BUDGET):
            body, body_parts = self._provider_budget_trim()
            msgs.extend(body)
            parts.extend(body_parts)
            est += history_token_estimate(body)
            self.dropped = len(h) - len(body)
        elif self.variant.has(GROUP_TRIM) or self.variant.has(PIN_OBSERVATION):
            for i, m in group_trim(
                h, self.config.context_window, pin_observation=self.variant.has(PIN_OBSERVATION)
            ):
                s = h.sent[i] if m is h.msgs[i] else sanitize_message_for_llm(m)
                msgs.append(s)
                parts.append(h.part(i) if m is h.msgs[i] else provider_text(s))
                est += message_token_estimate(m)
            self.dropped = len(h) - (len(msgs) - (1 if sysmsg else 0))
        else:
            start, kept = h.trim_start(self.config.context_window)
            est += kept
            self.dropped = start
            for i in range(start, len(h)):
                if i in self._redact_copy:
                    s = {**h.sent[i], "content": POLICY_REDACTED_TOOL_CONTENT}
                    msgs.append(s)
                    parts.append(provider_text(s))
                else:
                    msgs.append(h.sent[i])
                    parts.append(h.part(i))
        return msgs, parts, est

    def _provider_budget_trim(self) -> tuple[list[dict[str, Any]], list[str]]:
        h = self.history
        if self._tools_exact is None:
            self._tools_exact = count_tokens(TOOLS_JSON)
        budget = (
            self.config.context_window
            - count_tokens(self.system_prompt)
            - self._tools_exact
            - self.config.output_reserve
        )
        n = len(h)
        if budget <= 0 or n == 0:
            return [], []
        start, total = n, 0
        for i in range(n - 1, -1, -1):
            c = h.exact(i)
            if start < n and total + c > budget:
                break
            start, total = i, total + c
        while start < n and h.msgs[start].get("role") == "tool":
            start += 1
        msgs = [h.sent[i] for i in range(start, n)]
        parts = [h.part(i) for i in range(start, n)]
        if msgs and total > budget and len(msgs) == 1:  # a lone message over budget: clip it
            m = dict(msgs[0])
            content = str(m.get("content") or "")
            while content and count_tokens(provider_text({**m, "content": content})) > budget:
                content = content[: max(0, len(content) * 9 // 10 - 8)]
            m["content"] = content
            msgs, parts = [m], [provider_text(m)]
        return msgs, parts

    def act_context(self) -> dict[str, Any]:
        """``_act_context`` (MEM-CLM-telemetry-limits): ``tokens`` (reported, else the request estimate),
        ``compacted`` while pending, and the non-zero health counters (MEM-CLM-telemetry-limits)."""
        ctx: dict[str, Any] = {
            "tokens": self.last_prompt_tokens if self.last_prompt_tokens > 0 else self.last_request_estimate
        }
        if self.compaction_pending:
            ctx["compacted"] = True
        ctx.update({k: v for k, v in self.health.items() if v})
        return ctx

    # -- the LLM call with retries ---------------------------------------------------------------------
    def _call_llm(self, hop: int) -> Generator[Any, Any, Reply]:
        retries, forbidden_retried = 0, False
        self._redact_copy = set()
        while True:
            msgs, parts, est = self.build_request()
            self.hops += 1
            self.last_request, self.last_request_estimate = msgs, est
            self.last_parts = parts
            self.last_request_had_reminder = any(is_maintenance(m) for m in msgs)
            if self.keep_log:
                self.request_log.append((self.env.t, msgs, self.dropped, self.compaction_pending))
            provider = self._provider_tokens(parts, est, msgs)
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
                return replace(reply, prompt_tokens=usage)
            err = LLM_ERRORS[kind]
            code = classify_llm_error(f"{err.type_name}: {err}")
            self.health["provider_api_failed_attempts"] += 1
            self.sim.trace.op(SYSTEM, "llm_error", agent=self.agent_id, phase="fail", t=self._t, code=code)
            if code == "Forbidden" and not forbidden_retried:
                forbidden_retried = True
                self._redact_last_tool_group()
                continue
            if code in RETRYABLE_CODES:
                delays = ALLOCATION_QUOTA_DELAYS_S if code == "Throttling.AllocationQuota" else RETRY_DELAYS_S
                if retries < len(delays):
                    yield self.sim.timeout(delays[retries])
                    retries += 1
                    continue
                self.health["retry_exhausted"] += 1
            self._redact_copy = set()
            raise LLMFailure(err, code, retries)

    def _provider_tokens(self, parts: list[str], est: int, msgs: list[dict[str, Any]]) -> int:
        record = self.record_every > 0 and self.hops % self.record_every == 0
        exact: int | None = None
        if record:
            rec = self.sim.request(
                SYSTEM,
                self.route,
                parts,
                agent=self.agent_id,
                estimate=est,
                needed=self._needed,
                t=self.env.t,
                pending=self.compaction_pending,
                dropped=self.dropped,
            )
            exact = rec.exact_tokens
        if self.provider_tokenizer == "estimate":
            return est + self._tools_est
        return exact if exact is not None else sum(count_tokens(p) for p in parts)

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
    def _act(self, message: dict[str, Any], t: int) -> dict[str, Any]:
        try:
            res = self.env.act(
                self.agent_id, [*self.pre_assistant, message], step=t, context=self.act_context()
            )
        except HttpError as exc:
            if self.keep_log:
                self.act_log.append((t, self.hops, message.get("tool_calls") or [], str(exc.status), []))
            raise
        if self.keep_log:
            self.act_log.append((t, self.hops, message.get("tool_calls") or [], "ok", res["results"]))
        names = [c["function"]["name"] for c in message.get("tool_calls") or []]
        if any(n == "write_memory_doc" and r.get("ok") for n, r in zip(names, res["results"])):
            self._saved_in_cycle = True
        return res

    def _note_failed_write(self, message: dict[str, Any]) -> None:
        if any(c["function"]["name"] == "write_memory_doc" for c in message.get("tool_calls") or []):
            self._write_failed_in_cycle = True

    def remember_act(self, message: dict[str, Any], results: list[dict[str, Any]]) -> None:
        """``_remember_act`` (MEM-OBJ-history): an end-of-step-only act keeps just ``{role: assistant,
        content}`` (when the content is non-empty and not ``[llm-error]``); any other act keeps the
        assistant message and one tool message per result."""
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
        for call, r in zip(calls, results):
            self.history.append(
                {
                    "role": "tool",
                    "tool_call_id": call["id"],
                    "name": call["function"]["name"],
                    "content": json.dumps(r, ensure_ascii=False),
                }
            )

    def force_end_of_step(self, content: str, t: int) -> bool:
        """``_force_end_of_step`` (RT-RTE-react-loop): send the pre-assistant messages and an EOS; on success
        remember and compact if pending; on an HTTP error clear pending, the pre-assistant list and the
        last prompt tokens (the reminder stays in history)."""
        msg = {"role": "assistant", "content": content, "tool_calls": [dict(EOS_CALL)]}
        try:
            res = self._act(msg, t)
        except HttpError as exc:
            self.compaction_pending = False
            self.pre_assistant = []
            self.last_prompt_tokens = 0
            self.sim.trace.op(
                SYSTEM, "force_end_of_step", agent=self.agent_id, phase="fail", t=t, status=exc.status
            )
            return False
        self.remember_act(msg, res["results"])
        self.compact_history_if_pending()
        self.sim.trace.op(SYSTEM, "force_end_of_step", agent=self.agent_id, t=t, reason=content[:40])
        return True

    def drive_step(self, observation: str, *, needed: Iterable[str] = ()) -> Generator[Any, Any, StepResult]:
        """``_drive_step`` as a SimPy process (RT-RTE-react-loop, RT-RTE-act-gate): append the observation,
        then up to ``max_hops`` hops of trigger check, request, LLM call and ``/act``; 425 truncates to the
        pre-observation length (pending and the pre-assistant copy kept), other HTTP errors and LLM
        failures force an EOS; an exception inside the step (e.g. 410 on the observation) forces a
        ``[step-crash]`` EOS, as ``run()`` does."""
        t = self.env.t
        try:
            return (yield from self._drive_step(observation, needed=needed))
        except (HttpError, LLMError, KeyError, ValueError, TypeError) as exc:
            # run(): an exception inside the step forces an end-of-step with the crash text.
            text = f"[step-crash] {type(exc).__name__}: {exc}"
            self.force_end_of_step(text, t)
            return StepResult(t, "forced", 0, text)

    def _drive_step(self, observation: str, *, needed: Iterable[str] = ()) -> Generator[Any, Any, StepResult]:
        t = self._t = self.env.t
        self._calls_this_step = 0
        self._needed = frozenset(needed)
        len0 = len(self.history)
        self.env.deliver_observation(self.agent_id, observation)
        self._observation = {"role": "user", "content": observation}
        self.history.append(self._observation)
        if self.variant.has(TRACE_RECALL) and self._needed:
            self._recall_from_traces(t)
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
            if not reply.tool_calls:
                msg: dict[str, Any] = {
                    "role": "assistant",
                    "content": reply.content or FALLBACK_NO_TOOL_CALL,
                    "tool_calls": [dict(EOS_CALL)],
                }
            else:
                calls = [
                    {
                        "id": c.id or f"call_{hop}_{i}",
                        "type": "function",
                        "function": {
                            "name": c.name,
                            "arguments": c.arguments if c.arguments not in (None, "") else "{}",
                        },
                    }
                    for i, c in enumerate(reply.tool_calls)
                ]
                msg = {"role": "assistant", "content": reply.content or None, "tool_calls": calls}
            if reply.reasoning_content:
                msg["reasoning_content"] = reply.reasoning_content
            try:
                res = self._act(msg, t)
            except HttpError as exc:
                self._note_failed_write(msg)
                if exc.status == 425:
                    self.history.truncate(len0)
                    if self.variant.has(RESET_PENDING_ON_425):
                        self.compaction_pending = False
                        self.pre_assistant = []
                    self.sim.trace.op(
                        SYSTEM, "stale_step", agent=self.agent_id, t=t, pending=self.compaction_pending
                    )
                    return StepResult(t, "stale", hop + 1, str(exc), self.compactions > compactions0)
                self.force_end_of_step(f"[act-error] HTTPError: {exc}", t)
                return StepResult(t, "forced", hop + 1, str(exc), self.compactions > compactions0)
            self.remember_act(msg, res["results"])
            self.compact_history_if_pending()
            if res["step_done"]:
                return StepResult(t, "done", hop + 1, "", self.compactions > compactions0)
        self.force_end_of_step(FALLBACK_HOPS_EXHAUSTED, t)
        return StepResult(t, "forced", self.config.max_hops, "hops", self.compactions > compactions0)

    def _recall_from_traces(self, t: int) -> None:
        """Fixed variant (``trace-recall``): for each needed fact not in the history, scan the step traces
        and append a ``[trace-recall]`` user message with the matching fact tokens."""
        visible: set[str] = set()
        for i in range(len(self.history)):
            visible |= extract_facts(self.history.part(i))
        missing = self._needed - visible
        if not missing:
            return
        found: list[str] = []
        for past in range(t):
            step = self.env.read_step_index(past)
            for m in (step or {}).get("messages", []):
                text = provider_text(m)
                for f in missing & extract_facts(text):
                    found.extend(tok for tok in re.findall(rf"{f}=[a-z]+", text))
        if found:
            lines = "\n".join(dict.fromkeys(found))
            self.history.append({"role": "user", "content": f"[trace-recall]\n{lines}"})
            self.sim.trace.op(SYSTEM, "trace_recall", agent=self.agent_id, t=t, facts=sorted(missing))

    def run_step(self, observation: str, *, needed: Iterable[str] = ()) -> StepResult:
        """Run one step to completion in the simulation (a SimPy process) and return how it ended."""
        proc = self.sim.process(self.drive_step(observation, needed=needed))
        self.sim.run(proc)
        result = proc.value
        assert isinstance(result, StepResult)
        return result
