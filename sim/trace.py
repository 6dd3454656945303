"""The run's history: one record per modeled operation and one per model request, in SQLite.

Records are frozen values. :class:`Trace` streams them to a SQLite file with sqlite-utils in batches
(one transaction per :data:`BATCH` records) and can also keep them in memory for checkers. The same seed
gives the same records in the same order, so the same bytes on disk.

Schema (documented in README "Traces"):

``ops``
    ``seq`` (INTEGER, primary key, run order), ``time`` (REAL, simulation seconds), ``agent`` (TEXT),
    ``system`` (TEXT), ``op`` (TEXT, the operation's upstream name), ``phase`` (TEXT: ``ok``, ``fail``,
    ``info``, ``crash``), ``detail`` (TEXT, canonical JSON of the operation's arguments and result).
``requests``
    ``seq``, ``time``, ``agent``, ``system``, ``route`` (what assembled it: ``react.hop``,
    ``wiki.query``...), ``exact_tokens`` (INTEGER, cl100k count of the whole request), ``estimate``
    (INTEGER, the design's own estimate, NULL when it has none), ``messages`` (INTEGER),
    ``facts`` (TEXT, JSON list of the fact ids present, runs of consecutive ids written as one
    inclusive range ``"FACT-0001..FACT-0040"``; :func:`decode_facts`), ``needed`` (TEXT, JSON list of
    fact ids the request needed, for probes), ``detail`` (TEXT, JSON).
``meta``
    ``key``, ``value``: the seed, scenario, faults and parameters of the run.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

BATCH = 1000

_INSERT_OPS = "INSERT INTO ops (seq, time, agent, system, op, phase, detail) VALUES (?, ?, ?, ?, ?, ?, ?)"
_INSERT_REQUESTS = (
    "INSERT INTO requests (seq, time, agent, system, route, exact_tokens, estimate, messages, facts, needed,"
    " detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


def astuple(record: Any) -> tuple[Any, ...]:
    """The field values of a flat record, in field order (``dataclasses.astuple`` without its deep copy)."""
    return tuple(record.__dict__.values())


_FACT_NUM = re.compile(r"FACT-(\d{4,})")


def encode_facts(ids: frozenset[str] | set[str]) -> str:
    """Fact ids as a JSON list, consecutive ``FACT-NNNN`` ids folded into ``"FACT-0001..FACT-0040"``.

    A request that carries a whole folded log holds thousands of facts; ranges keep long traces small.
    """
    nums: list[int] = []
    other: list[str] = []
    for f in ids:
        m = _FACT_NUM.fullmatch(f)
        if m and len(m.group(1)) == 4:
            nums.append(int(m.group(1)))
        else:
            other.append(f)
    items: list[str] = []
    nums.sort()
    i = 0
    while i < len(nums):
        j = i
        while j + 1 < len(nums) and nums[j + 1] == nums[j] + 1:
            j += 1
        if j - i >= 2:
            items.append(f"FACT-{nums[i]:04d}..FACT-{nums[j]:04d}")
        else:
            items.extend(f"FACT-{n:04d}" for n in nums[i : j + 1])
        i = j + 1
    return _json(items + sorted(other))


def decode_facts(text: str) -> frozenset[str]:
    """The fact ids of an encoded ``facts`` column (ranges expanded)."""
    out: set[str] = set()
    for item in json.loads(text):
        lo, sep, hi = item.partition("..")
        if sep:
            a, b = int(lo[5:]), int(hi[5:])
            out.update(f"FACT-{n:04d}" for n in range(a, b + 1))
        else:
            out.add(item)
    return frozenset(out)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


@dataclass(frozen=True)
class OpRecord:
    """One modeled operation."""

    seq: int
    time: float
    agent: str
    system: str
    op: str
    phase: str
    detail: str = "{}"

    @property
    def data(self) -> dict[str, Any]:
        """The decoded detail."""
        out: dict[str, Any] = json.loads(self.detail)
        return out


@dataclass(frozen=True)
class RequestRecord:
    """One model request: what reached the model, at what cost, with which facts."""

    seq: int
    time: float
    agent: str
    system: str
    route: str
    exact_tokens: int
    estimate: int | None
    messages: int
    facts: str = "[]"
    needed: str = "[]"
    detail: str = "{}"

    @property
    def fact_ids(self) -> frozenset[str]:
        """The fact ids present in the request."""
        return decode_facts(self.facts)

    @property
    def needed_ids(self) -> frozenset[str]:
        """The fact ids the request needed."""
        return frozenset(json.loads(self.needed))


@dataclass
class TraceData:
    """A trace read back from SQLite (or kept in memory)."""

    meta: dict[str, str] = field(default_factory=dict)
    ops: list[OpRecord] = field(default_factory=list)
    requests: list[RequestRecord] = field(default_factory=list)


class Trace:
    """The run's trace: records kept in memory (``keep=True``) and/or streamed to *path*."""

    def __init__(
        self, path: str | os.PathLike[str] | None = None, *, keep: bool = True, now: Any = None
    ) -> None:
        self.path = Path(path) if path is not None else None
        self.keep = keep
        self.data = TraceData()
        self._now = now or (lambda: 0.0)
        self._seq = 0
        self._pending_ops: list[tuple[Any, ...]] = []
        self._pending_requests: list[tuple[Any, ...]] = []
        self._db: Any = None
        if self.path is not None:
            import sqlite_utils

            self.path.parent.mkdir(parents=True, exist_ok=True)
            if self.path.exists():
                self.path.unlink()
            self._db = sqlite_utils.Database(self.path)
            self._db["meta"].create({"key": str, "value": str}, pk="key")
            self._db["ops"].create(
                {
                    "seq": int,
                    "time": float,
                    "agent": str,
                    "system": str,
                    "op": str,
                    "phase": str,
                    "detail": str,
                },
                pk="seq",
            )
            self._db["requests"].create(
                {
                    "seq": int,
                    "time": float,
                    "agent": str,
                    "system": str,
                    "route": str,
                    "exact_tokens": int,
                    "estimate": int,
                    "messages": int,
                    "facts": str,
                    "needed": str,
                    "detail": str,
                },
                pk="seq",
            )

    def set_meta(self, **values: Any) -> None:
        """Record run metadata (seed, scenario, faults, parameters)."""
        for k, v in values.items():
            text = v if isinstance(v, str) else _json(v)
            self.data.meta[k] = text
            if self._db is not None:
                self._db["meta"].upsert({"key": k, "value": text}, pk="key")

    def op(self, system: str, op: str, *, agent: str = "", phase: str = "ok", **detail: Any) -> OpRecord:
        """Record one modeled operation."""
        self._seq += 1
        rec = OpRecord(self._seq, float(self._now()), agent, system, op, phase, _json(detail))
        if self.keep:
            self.data.ops.append(rec)
        if self._db is not None:
            self._pending_ops.append(astuple(rec))
            if len(self._pending_ops) >= BATCH:
                self.flush()
        return rec

    def request(
        self,
        system: str,
        route: str,
        *,
        agent: str = "",
        exact_tokens: int,
        estimate: int | None,
        messages: int,
        facts: frozenset[str] | set[str] = frozenset(),
        needed: frozenset[str] | set[str] = frozenset(),
        **detail: Any,
    ) -> RequestRecord:
        """Record one model request."""
        self._seq += 1
        rec = RequestRecord(
            self._seq,
            float(self._now()),
            agent,
            system,
            route,
            int(exact_tokens),
            None if estimate is None else int(estimate),
            int(messages),
            encode_facts(facts),
            _json(sorted(needed)),
            _json(detail),
        )
        if self.keep:
            self.data.requests.append(rec)
        if self._db is not None:
            self._pending_requests.append(astuple(rec))
            if len(self._pending_requests) >= BATCH:
                self.flush()
        return rec

    def flush(self) -> None:
        """Write pending records in one transaction each table."""
        if self._db is None:
            return
        conn = self._db.conn
        with conn:  # one transaction; the tables were created by sqlite-utils with these columns
            if self._pending_ops:
                conn.executemany(_INSERT_OPS, self._pending_ops)
                self._pending_ops = []
            if self._pending_requests:
                conn.executemany(_INSERT_REQUESTS, self._pending_requests)
                self._pending_requests = []

    def close(self) -> None:
        """Flush and close the database."""
        if self._db is not None:
            self.flush()
            self._db.conn.close()
            self._db = None

    @property
    def records(self) -> int:
        """How many records were written."""
        return self._seq


def read_trace(path: str | os.PathLike[str]) -> TraceData:
    """Read a trace database back into frozen records."""
    import sqlite_utils

    db = sqlite_utils.Database(Path(path))
    data = TraceData()
    data.meta = {r["key"]: r["value"] for r in db["meta"].rows}
    data.ops = [OpRecord(**r) for r in db["ops"].rows_where(order_by="seq")]
    data.requests = [RequestRecord(**r) for r in db["requests"].rows_where(order_by="seq")]
    db.conn.close()
    return data
