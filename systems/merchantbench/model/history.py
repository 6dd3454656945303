"""The ReAct baseline's process-local history (MEM-OBJ-history): incremental cost ledger, the suffix trim
over cached costs, the reminder and notice texts, and the fixed variants' group-atomic trim.

Upstream: ``agent/baselines/react_160k_compact_30k.py`` (``self.history``, ``_compaction_reminder``,
``_compaction_notice``, ``_trim_messages_to_token_budget``).
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

from sim.text import extract_facts
from sim.tokens import count_tokens, count_tokens_uncached, share_counts, text_cache
from sim.variant import Variant
from systems.merchantbench.model.constants import MAINTENANCE_PREFIX
from systems.merchantbench.model.estimate import (
    message_token_estimate,
    provider_text,
    sanitize_message_for_llm,
)
from systems.merchantbench.state import (
    EMPTY_REQUEST,
    GROUP_TRIM,
    PROVIDER_BUDGET,
    SAVE_BEFORE_COMPACT,
    ReactConfig,
)


def compaction_reminder(trigger: int, keep: int) -> str:
    """The pending-path reminder (a user message)."""
    return (
        f"{MAINTENANCE_PREFIX}\nConversation reached the {trigger:,}-token limit. After this turn, history "
        f"will be compacted to the latest ~{keep:,} estimated tokens. Call write_memory_doc now if "
        "important details should be kept."
    )


def compaction_notice(trigger: int, keep: int) -> str:
    """The immediate-path notice (a user message; no write tool offered)."""
    return (
        f"{MAINTENANCE_PREFIX}\nConversation reached the {trigger:,}-token limit. History was compacted "
        f"to the latest ~{keep:,} estimated tokens."
    )


def is_maintenance(message: dict[str, Any]) -> bool:
    """Whether *message* is a compaction reminder or notice."""
    c = message.get("content")
    return message.get("role") == "user" and isinstance(c, str) and c.startswith(MAINTENANCE_PREFIX)


def part_kind(message: dict[str, Any]) -> str:
    """A request part's kind for the trace's ``tokens_by_kind``: ``memory`` (a ``read_memory_doc``
    result), ``reminder`` (a compaction reminder or notice), else ``message``."""
    if message.get("role") == "tool" and message.get("name") == "read_memory_doc":
        return "memory"
    return "reminder" if is_maintenance(message) else "message"


_facts_of = extract_facts.__wrapped__  # uncached: the history caches each message's facts itself

MESSAGE_TOKEN_CACHE_BYTES = 8 << 20
"""The byte budget of the histories' own count cache (:func:`_message_tokens`)."""


@text_cache(MESSAGE_TOKEN_CACHE_BYTES)
def _message_tokens(text: str) -> int:
    """A message's cl100k count, cached apart from :func:`sim.tokens.count_tokens`: a history counts each
    message once, but a claim's search runs the same drawn messages again in example after example (the
    silent slide counted 62 MB of text, of which 5.7 MB distinct); a long bench cell's texts, each counted
    once, then fill only this cache, not the one the designs of a seed share. The two caches look into
    each other before encoding (:func:`sim.tokens.share_counts`), so a message that a request counts
    again is encoded once (the silent slide encoded every drawn text twice)."""
    n = count_tokens.peek(text)
    return count_tokens_uncached(text) if n is None else n


share_counts(_message_tokens)


TEXT_KEEPERS = (SAVE_BEFORE_COMPACT, GROUP_TRIM, PROVIDER_BUDGET, EMPTY_REQUEST)
"""Variants with a reader of old history that :meth:`History.release` does not bound: ``save-before-
compact`` saves (and counts) everything a compaction drops; the group trim and the provider budget look
back for the last observation and over whole groups."""


def release_budget(config: ReactConfig, variant: Variant, keep_log: bool) -> int:
    """The budget past which :meth:`History.release` may let the history's text go: the larger of the
    request window and the compaction's keep (the two trims the faithful loop makes), or 0 (keep
    everything) when a claim log or a variant in :data:`TEXT_KEEPERS` reads old history."""
    if keep_log or any(variant.has(v) for v in TEXT_KEEPERS):
        return 0
    return max(config.context_window, config.keep)


class History:
    """``self.history`` (MEM-OBJ-history) with everything a hop needs kept as it changes, so a hop costs
    what it adds, not what it keeps:

    * each message's estimated cost, once, with running prefix sums: the trim at any budget is a bisection
      (:meth:`trim_start`), the untrimmed total a subtraction;
    * the sanitized form sent to the provider (the same object unless its tool-call arguments change);
    * each message's exact cl100k count and fact ids, measured once on first use (its provider text is
      built for that and not kept), with running prefix sums of the counts (:meth:`exact_sum`);
    * the positions of reminders and memory reads (:meth:`has_maintenance`, :meth:`kind_tokens`) and the
      fact ids of the last window asked for (:meth:`facts`), kept as a sliding count.

    Indices are list positions; ``base`` is the absolute position of ``msgs[0]`` (messages dropped from
    the front move it), so positions kept outside the list stay valid across a compaction. Provider texts
    are cached only for the last window asked for (:meth:`parts`), so the history is held once.

    The lists hold only what a later read can reach: :meth:`release` drops the oldest messages no trim
    can reach again, and ``origin`` (the absolute position of upstream's ``history[0]``) stays where the
    last compaction left it. Upstream's ``len(self.history)`` is :attr:`upstream_len` (the trace's
    ``history``, ``before``, ``after`` and ``dropped`` count from ``origin``); ``len()`` is what is held.
    """

    __slots__ = (
        "_cum", "_cum0", "_ecum", "_ecum0", "_evalid", "_ex", "_fx", "_hcum0", "_hcum1", "_parts",
        "_parts_lo", "_special", "_tools", "_wfacts", "_wids", "_win", "base", "costs", "kinds", "msgs",
        "origin", "sent",
    )  # fmt: skip

    def __init__(self, messages: Iterable[dict[str, Any]] = ()) -> None:
        self.msgs: list[dict[str, Any]] = []
        self.sent: list[dict[str, Any]] = []
        self.costs: list[int] = []
        self.kinds: list[str] = []
        self.base = 0
        self.origin = 0
        self._cum: list[int] = []
        self._cum0 = 0  # the prefix sum before upstream's history[0] (at origin)
        self._hcum0 = 0  # the prefix sum before msgs[0] (at base)
        self._hcum1 = 0  # the prefix sum before the last message released (the trims' guard)
        self._ex: list[int | None] = []
        self._fx: list[frozenset[str] | None] = []
        self._ecum: list[int] = []
        self._ecum0 = 0
        self._evalid = 0
        self._special: dict[str, list[int]] = {"memory": [], "reminder": []}
        self._tools: list[int] = []  # the positions (base-relative keys) of the ``tool`` messages held
        self._parts: dict[int, str] = {}
        self._parts_lo = 0  # no key of _parts is below it
        self._wfacts: Counter[str] = Counter()
        self._wids: frozenset[str] | None = None  # the window's ids while no id has entered or left it
        self._win = (0, 0)
        for m in messages:
            self.append(m)

    def __len__(self) -> int:
        return len(self.msgs)

    @property
    def released(self) -> int:
        """How many of upstream's messages :meth:`release` let go (they precede ``msgs[0]``)."""
        return self.base - self.origin

    @property
    def upstream_len(self) -> int:
        """Upstream's ``len(self.history)``: the messages held and the ones released before them."""
        return self.base - self.origin + len(self.msgs)

    @property
    def total(self) -> int:
        """The estimated cost of the whole history (the released messages' included)."""
        return (self._cum[-1] if self._cum else self._hcum0) - self._cum0

    def append(self, message: dict[str, Any]) -> None:
        """Append one message, costing it once."""
        c = message_token_estimate(message)
        kind = part_kind(message)
        self.msgs.append(message)
        self.sent.append(sanitize_message_for_llm(message))
        self.costs.append(c)
        self.kinds.append(kind)
        self._cum.append((self._cum[-1] if self._cum else self._hcum0) + c)
        self._ex.append(None)
        self._fx.append(None)
        if kind != "message":
            self._special[kind].append(self.base + len(self.msgs) - 1)
        if message.get("role") == "tool":
            self._tools.append(self.base + len(self.msgs) - 1)

    # -- per-message measures --------------------------------------------------------------------------
    def part(self, i: int) -> str:
        """The provider text of message *i* (cached while it is in the last window asked for)."""
        key = self.base + i
        p = self._parts.get(key)
        return p if p is not None else provider_text(self.sent[i])

    def _measure(self, i: int) -> None:
        text = self.part(i)
        self._ex[i] = _message_tokens(text)
        self._fx[i] = _facts_of(text)

    def exact(self, i: int) -> int:
        """The cl100k count of message *i*'s provider text (measured once)."""
        e = self._ex[i]
        if e is None:
            self._measure(i)
            e = self._ex[i]
        assert e is not None
        return e

    def facts_of(self, i: int) -> frozenset[str]:
        """The fact ids in message *i*'s provider text (measured once)."""
        f = self._fx[i]
        if f is None:
            self._measure(i)
            f = self._fx[i]
        assert f is not None
        return f

    # -- windows ---------------------------------------------------------------------------------------
    def parts(self, start: int, end: int) -> list[str]:
        """The provider texts of messages ``start..end-1``; they stay cached until a later window starts
        after them."""
        lo = self.base + start
        cache = self._parts
        if lo > self._parts_lo:  # a key below lo may be cached (none is below _parts_lo)
            for key in [k for k in cache if k < lo]:
                del cache[key]
        self._parts_lo = lo
        out: list[str | None] = list(map(cache.get, range(lo, self.base + end)))
        if None in out:
            for k, p in enumerate(out):
                if p is None:
                    out[k] = cache[lo + k] = provider_text(self.sent[start + k])
        return out  # type: ignore[return-value]

    def exact_sum(self, start: int, end: int) -> int:
        """The exact cl100k total of messages ``start..end-1`` (each measured once, prefix sums kept)."""
        if end <= start:
            return 0
        ecum = self._ecum
        for j in range(self._evalid, end):
            prev = ecum[j - 1] if j else self._ecum0
            value = prev + self.exact(j)
            if j < len(ecum):
                ecum[j] = value
            else:
                ecum.append(value)
        self._evalid = max(self._evalid, end)
        return ecum[end - 1] - (ecum[start - 1] if start else self._ecum0)

    def kind_tokens(self, start: int, end: int) -> dict[str, int]:
        """Exact tokens by kind (``message``, ``memory``, ``reminder``) of messages ``start..end-1``: a
        kind present with no tokens is still listed, as the engine's per-part sum lists it."""
        lo, hi = self.base + start, self.base + end
        rest = self.exact_sum(start, end)
        out: dict[str, int] = {}
        specials = 0
        for kind, where in self._special.items():
            a, b = bisect_left(where, lo), bisect_left(where, hi)
            if b > a:
                out[kind] = sum(self.exact(k - self.base) for k in where[a:b])
                rest -= out[kind]
                specials += b - a
        if end - start > specials:
            out["message"] = rest
        return out

    def facts(self, start: int, end: int) -> frozenset[str]:
        """The fact ids in messages ``start..end-1``, kept as a sliding count over the last window asked
        for (a window that moves forward costs what enters and leaves it). While no id enters or leaves the
        window, the set it returned last time is returned again (the same object: the trace then writes an
        empty delta without comparing the sets)."""
        lo, hi = self.base + start, self.base + end
        wlo, whi = self._win
        counts = self._wfacts
        ids = self._wids
        if lo >= whi or hi <= wlo or lo < wlo:  # disjoint or grown backwards: recount
            counts = self._wfacts = Counter()
            wlo = whi = lo
            ids = None
        for k in (*range(wlo, lo), *range(hi, whi)):  # what left the window, at either end
            for f in self.facts_of(k - self.base):
                n = counts[f] - 1
                if n:
                    counts[f] = n
                else:
                    del counts[f]
                    ids = None
        for k in range(max(whi, lo), hi):
            for f in self.facts_of(k - self.base):
                n = counts[f]
                if not n:
                    ids = None
                counts[f] = n + 1
        self._win = (lo, hi)
        if ids is None:
            ids = self._wids = frozenset(counts)
        return ids

    def has_maintenance(self, start: int) -> bool:
        """Whether a reminder or notice is among messages ``start..``."""
        where = self._special["reminder"]
        return bool(where) and where[-1] >= self.base + start

    # -- mutations (the ones upstream makes to ``self.history``) ---------------------------------------
    def _forget_window(self) -> None:
        """The messages changed under the window: the next :meth:`facts` recounts it."""
        self._wfacts, self._wids, self._win = Counter(), None, (0, 0)

    def set_content(self, i: int, content: str) -> None:
        """Overwrite message *i*'s content in place (the dict object is mutated, as upstream)."""
        key = self.base + i
        self._forget_window()
        self.msgs[i]["content"] = content
        delta = message_token_estimate(self.msgs[i]) - self.costs[i]
        self.costs[i] += delta
        for j in range(i, len(self._cum)):
            self._cum[j] += delta
        self.sent[i] = sanitize_message_for_llm(self.msgs[i])
        self._parts.pop(key, None)
        self._ex[i] = self._fx[i] = None
        self._evalid = min(self._evalid, i)
        old, new = self.kinds[i], part_kind(self.msgs[i])
        if old != new:
            if old != "message":
                self._special[old].remove(key)
            if new != "message":
                insort(self._special[new], key)
            self.kinds[i] = new

    def truncate(self, n: int) -> None:
        """``history = history[:n]``."""
        if n >= len(self.msgs):
            return
        cut = self.base + n
        self._forget_window()
        for lst in (self.msgs, self.sent, self.costs, self.kinds, self._cum, self._ex, self._fx):
            del lst[n:]
        del self._ecum[n:]
        self._evalid = min(self._evalid, n)
        for where in (*self._special.values(), self._tools):
            del where[bisect_left(where, cut) :]
        for key in [k for k in self._parts if k >= cut]:
            del self._parts[key]

    def keep_from(self, start: int) -> None:
        """``history = history[start:]`` (*start* a position in :attr:`msgs`: the messages released before
        ``msgs[0]`` go too, so upstream's history then starts at ``msgs[0]`` even when *start* is 0)."""
        if start <= 0 and self.base == self.origin:
            return
        self._forget_window()
        if start > 0:
            self._drop_front(start)
        self._cum0 = self._hcum0
        self.origin = self.base

    def _drop_front(self, start: int) -> None:
        """Drop ``msgs[:start]`` and everything kept per message for them (``base`` moves to the first
        message kept; the prefix sums carry on from there)."""
        cut = self.base + start
        self._hcum1 = self._cum[start - 2] if start > 1 else self._hcum0
        self._hcum0 = self._cum[start - 1]
        if self._evalid >= start:
            self._ecum0 = self._ecum[start - 1]
        else:  # the counts before the cut were never summed: restart the exact prefix sums here
            self._ecum0, self._evalid = 0, 0
            del self._ecum[:]
        for lst in (self.msgs, self.sent, self.costs, self.kinds, self._cum, self._ex, self._fx):
            del lst[:start]
        del self._ecum[:start]
        self._evalid = max(0, self._evalid - start)
        self.base = cut
        for where in (*self._special.values(), self._tools):
            del where[: bisect_left(where, cut)]
        for key in [k for k in self._parts if k < cut]:
            del self._parts[key]

    def reset(self, messages: Iterable[dict[str, Any]]) -> None:
        """Replace the whole history (its positions move past the old ones)."""
        new = list(messages)
        self.keep_from(len(self.msgs))
        for m in new:
            self.append(m)

    # -- memory --------------------------------------------------------------------------------------
    def release(self, budget: int) -> int:
        """Drop the messages no later read can reach (call at a step's start, with :func:`release_budget`):
        everything kept for them goes (dict, sanitized form, cost, kind, count, fact ids, prefix sums);
        ``origin`` stays, so :attr:`upstream_len`, :attr:`total` and the trace's positions are upstream's.
        Returns the number of messages now released. Upstream's history holds every message (the silent
        slide: at a window below T the compaction never fires), but nothing reads a message once both
        trims (window, keep) start after it, so a long run's memory stays flat.

        The horizon is the earliest of: the start of the trim at *budget* plus the last tool block's cost
        (a Forbidden redaction rewrites that block, which can lower its cost and move later trims back by
        at most that much); the last tool block's start (the redaction's backward scan); the last
        window whose fact ids are kept as a sliding count. The step's own messages come after it, so a
        425's truncation back to the step's start cannot move a trim before it. Budget 0 releases nothing.
        A trim that would still reach a released message raises (:meth:`_suffix_start`).
        """
        n = len(self.msgs)
        if budget <= 0 or n == 0:
            return self.released
        msgs, costs = self.msgs, self.costs
        i = self._tools[-1] - self.base if self._tools else -1  # the last tool message (no scan back to it)
        block, tool_start = 0, n
        if i >= 0:  # else no tool message is held: none at all (the last block is never released), so no
            # redaction can rewrite one, and the scan need not stop the horizon
            while i >= 0 and msgs[i].get("role") == "tool":
                block += costs[i]
                i -= 1
            tool_start = i + 1
        horizon = min(self._suffix_start(budget + block, reach=False), tool_start)
        if self._win[1] > self._win[0]:
            horizon = min(horizon, self._win[0] - self.base)
        if horizon > 0:
            self._drop_front(horizon)
        return self.released

    # -- the trim --------------------------------------------------------------------------------------
    def trim_start(self, budget: int) -> tuple[int, int]:
        """Where upstream's trim at *budget* starts, and the kept total: the longest suffix whose cost is
        within *budget* (the newest message even when it alone is over), by bisection over the prefix
        sums, then leading ``tool`` messages dropped."""
        n = len(self.msgs)
        if budget <= 0:
            return n, 0
        if n == 0:
            return 0, 0
        start = self._suffix_start(budget)
        cum = self._cum
        total = cum[-1] - (cum[start - 1] if start else self._hcum0)
        msgs = self.msgs
        while start < n and msgs[start].get("role") == "tool":
            total -= self.costs[start]
            start += 1
        return start, total

    def _suffix_start(self, budget: int, *, reach: bool = True) -> int:
        """The start of the longest suffix whose cost is within *budget* > 0 (the newest message even when
        it alone is over), by bisection over the prefix sums; leading tool messages not yet dropped. With
        *reach* (a trim that reads the suffix), raises when it would start before ``msgs[0]`` with messages
        released there (a wrong horizon); else such a suffix starts at 0."""
        n, cum = len(self.msgs), self._cum
        target = cum[-1] - budget
        if self._hcum0 < target:
            return min(n - 1, bisect_left(cum, target) + 1)
        if reach and self._hcum1 >= target and self.base > self.origin:
            raise AssertionError("a trim reached a released message: History.release's horizon is wrong")
        return 0

    def trim(self, budget: int) -> list[dict[str, Any]]:
        """``_trim_messages_to_token_budget(history, budget)`` over the cached costs."""
        return self.msgs[self.trim_start(budget)[0] :]


TRUNCATED = "…[truncated]"
"""Appended to a tool result that the group trim cut to fit."""


def last_observation(messages: list[dict[str, Any]]) -> int | None:
    """The index of the newest user message that is not a reminder or notice (the step's observation)."""
    for k in range(len(messages) - 1, -1, -1):
        m = messages[k]
        if m.get("role") == "user" and not is_maintenance(m):
            return k
    return None


def group_trim(
    history: History,
    budget: int,
    *,
    cost: Callable[[int], int] | None = None,
    measure: Callable[[dict[str, Any]], int] = message_token_estimate,
) -> list[tuple[int, dict[str, Any]]]:
    """Fixed variant ``group-trim``: the latest observation and the user messages after it (reminders) are
    always kept; then whole groups (a message and the tool results after it), newest first, while they fit
    in the budget left; the newest group is kept even when it does not fit, its tool results cut to fit
    (each ending in :data:`TRUNCATED`), unless even its non-tool part does not fit. Tool results never lead.
    *cost* prices history message *i* (default: the estimate); *measure* prices a truncated copy.
    Returns (index, message or truncated copy) pairs in history order."""
    msgs = history.msgs
    price = cost or history.costs.__getitem__
    obs = last_observation(msgs)
    pinned = {k for k in range(obs, len(msgs)) if msgs[k].get("role") == "user"} if obs is not None else set()
    kept = {k: msgs[k] for k in pinned}
    room = budget - sum(price(k) for k in pinned)
    total, i, first = 0, len(msgs) - 1, True
    while i >= 0 and total < room:
        if i in pinned:
            i -= 1
            continue
        j = i
        while j >= 0 and j not in pinned and msgs[j].get("role") == "tool":
            j -= 1
        if j < 0 or j in pinned:  # results whose call is gone: never sent
            i = j
            continue
        g = sum(price(k) for k in range(j, i + 1))
        if total + g <= room:
            kept.update((k, msgs[k]) for k in range(j, i + 1))
            total += g
        elif first:
            cut = _truncate_group([(k, msgs[k]) for k in range(j, i + 1)], room - total, measure)
            if cut is not None:
                kept.update(cut)
            break
        else:
            break
        first = False
        i = j - 1
    return sorted(kept.items())


def _truncate_group(
    group: list[tuple[int, dict[str, Any]]], room: int, measure: Callable[[dict[str, Any]], int]
) -> list[tuple[int, dict[str, Any]]] | None:
    fixed = sum(measure(m) for _, m in group if m.get("role") != "tool")
    tools = [k for k, m in group if m.get("role") == "tool"]
    if not tools or fixed > room:
        return None
    per = (room - fixed) // len(tools)
    out = []
    for k, m in group:
        if m.get("role") == "tool" and measure(m) > per:
            m = _shrink(m, per, measure)
        out.append((k, m))
    return out


def _shrink(message: dict[str, Any], room: int, measure: Callable[[dict[str, Any]], int]) -> dict[str, Any]:
    """The message with its content cut to the longest prefix (plus the marker) that *measure* fits in
    *room* (the marker alone when nothing fits)."""
    content = str(message.get("content") or "")
    lo, hi = 0, len(content)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if measure({**message, "content": content[:mid] + TRUNCATED}) <= room:
            lo = mid
        else:
            hi = mid - 1
    return {**message, "content": content[:lo] + TRUNCATED}
