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
    ``key``, ``value``: the seed, scenario, faults and parameters of the run, ``memsim_version``,
    ``schema_version`` (:data:`SCHEMA_VERSION`) and, written last when the run ended normally,
    ``complete`` = ``"1"``. :func:`read_trace` refuses a trace without it (a killed or failed run) or of
    another schema version.

A request's ``detail`` carries ``tokens_by_kind`` when its parts were labelled (``system``, ``tools``,
``message``, ``memory``...): the exact tokens of each kind, which a report stacks.
"""

from __future__ import annotations

import bisect
import json
import operator
import os
import re
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sim.errors import UsageError

BATCH = 1000
PROGRESS_EVERY = 4096
#: The trace schema version: bump when a table or column changes meaning.
SCHEMA_VERSION = "2"

_INSERT_OPS = "INSERT INTO ops (seq, time, agent, system, op, phase, detail) VALUES (?, ?, ?, ?, ?, ?, ?)"
_INSERT_REQUESTS = (
    "INSERT INTO requests (seq, time, agent, system, route, exact_tokens, estimate, messages, facts, needed,"
    " detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


def astuple(record: Any) -> tuple[Any, ...]:
    """The field values of a flat record, in field order (``dataclasses.astuple`` without its deep copy)."""
    return tuple(record.__dict__.values())


#: Fact id to its number (-1 when the id is not the canonical ``FACT-{n:04d}`` form of a number); a
#: memo of :func:`_fact_number`, emptied when it reaches :data:`_FACT_MEMO_MAX` ids (at most about 8 MB).
_FACT_NUMBERS: dict[str, int] = {}
_FACT_MEMO_MAX = 1 << 16


class TraceError(UsageError):
    """A file that is not a complete memsim trace of this schema (exit code 2 at the command line)."""


def _fact_number(f: str) -> int:
    """The number of a canonical fact id (``FACT-0017`` -> 17, ``FACT-12345`` -> 12345), else -1.

    Canonical means ``f == f"FACT-{n:04d}"``: ASCII digits, exactly four of them below 10,000 and no
    leading zero above (``FACT-00017`` and ``FACT-017`` are not canonical).
    """
    digits = f[5:]
    if (
        f.startswith("FACT-")
        and digits.isascii()
        and digits.isdigit()
        and (len(digits) == 4 or (len(digits) > 4 and digits[0] != "0"))
    ):
        return int(digits)
    return -1


def _sorted_by_number(ids: frozenset[str] | set[str]) -> tuple[list[str], list[int]]:
    """*ids* sorted by number (non-canonical ids first, numbered -1) and their numbers, through the memo."""
    memo = _FACT_NUMBERS
    try:
        names = sorted(ids, key=memo.__getitem__)
    except KeyError:
        if len(memo) + len(ids) > _FACT_MEMO_MAX:
            memo.clear()
        for f in ids:
            if f not in memo:
                memo[f] = _fact_number(f)
        names = sorted(ids, key=memo.__getitem__)
    return names, list(map(memo.__getitem__, names))


def encode_facts(ids: frozenset[str] | set[str]) -> str:
    """Fact ids as a JSON list, consecutive ``FACT-NNNN`` ids folded into ``"FACT-0001..FACT-0040"``.

    A request that carries a whole folded log holds thousands of facts; ranges keep long traces small.
    Ids of any width fold (``FACT-9999..FACT-10002``); an id that is not the canonical form of its number
    (``FACT-00017``) is kept as it is, after the canonical ones. Ids are numbered through a memo and runs
    are found by byte search, so a request with thousands of facts costs little more than its sort.
    """
    if not ids:
        return "[]"
    names, nums = _sorted_by_number(ids)
    other: list[str] = []
    if nums[0] < 0:  # non-canonical ids sort first (number -1)
        k = bisect.bisect_right(nums, -1)
        other = sorted(names[:k])
        names, nums = names[k:], nums[k:]
    return _json(_fold(names, nums)[0] + other)


def _fold(names: list[str], nums: list[int]) -> tuple[list[str], int]:
    """The items of canonical ids sorted by number, and the index where their last run of consecutive
    numbers starts (appending larger numbers can change only that run's items)."""
    if not nums:
        return [], 0
    # follows[k] is 1 when nums[k + 1] == nums[k] + 1: two 1s in a row start a range of three or more ids,
    # which runs to the next 0. The searches are bytes.find, so the cost is the sort, not the id count.
    follows = bytes(map((1).__eq__, map(operator.sub, nums[1:], nums)))
    items: list[str] = []
    pos = 0
    while True:
        k = follows.find(b"\x01\x01", pos)
        if k < 0:
            items.extend(names[pos:])
            break
        end = follows.find(b"\x00", k + 2)
        if end < 0:
            end = len(follows)
        items.extend(names[pos:k])
        items.append(f"{names[k]}..{names[end]}")
        pos = end + 1
    return items, follows.rfind(b"\x00") + 1


@dataclass(frozen=True)
class _Column:
    """One request's encoded facts, kept to encode the next request of the same route incrementally."""

    ids: frozenset[str]
    names: list[str]
    nums: list[int]
    items: list[str]
    run_start: int
    text: str


class FactColumns:
    """Encodes the ``facts`` column of successive requests (:func:`encode_facts`' bytes, exactly).

    A route's request usually carries the previous request's facts plus newer ones (a growing history
    or log): then only the new ids are sorted and only the last run is folded again. Anything else (an
    id dropped, an older id added, a non-canonical id) is encoded afresh. One previous column is kept per
    (system, agent, route), for at most :data:`ROUTES` routes: memory is one request's facts per route.
    """

    ROUTES = 16

    def __init__(self) -> None:
        self._last: dict[tuple[str, str, str], _Column] = {}

    def encode(self, ids: frozenset[str] | set[str], route: tuple[str, str, str]) -> str:
        """The encoded column of *ids*, for a request of *route*."""
        prev = self._last.pop(route, None)
        col = self._grow(prev, ids) if prev is not None else None
        if col is None:
            col = self._fresh(ids)
            if col is None:
                return encode_facts(ids)
        self._last[route] = col
        if len(self._last) > self.ROUTES:
            del self._last[next(iter(self._last))]
        return col.text

    @staticmethod
    def _fresh(ids: frozenset[str] | set[str]) -> _Column | None:
        if not ids:
            return None
        names, nums = _sorted_by_number(ids)
        if nums[0] < 0:  # a non-canonical id: not kept
            return None
        items, run = _fold(names, nums)
        return _Column(frozenset(ids), names, nums, items, run, _json(items))

    @staticmethod
    def _grow(prev: _Column, ids: frozenset[str] | set[str]) -> _Column | None:
        if len(ids) == len(prev.ids) and prev.ids == ids:
            return prev
        if len(ids) <= len(prev.ids) or not prev.ids <= ids:
            return None
        new_names, new_nums = _sorted_by_number(ids - prev.ids)
        if new_nums[0] <= prev.nums[-1]:  # an older (or non-canonical) id came back: not a growth
            return None
        names, nums, run = prev.names + new_names, prev.nums + new_nums, prev.run_start
        tail, tail_run = _fold(names[run:], nums[run:])
        old_tail = len(prev.names) - run  # the last run's ids: one range item, or one or two ids
        items = prev.items[: len(prev.items) - (1 if old_tail >= 3 else old_tail)] + tail
        return _Column(frozenset(ids), names, nums, items, run + tail_run, _json(items))


def decode_facts(text: str) -> frozenset[str]:
    """The fact ids of an encoded ``facts`` column (ranges expanded)."""
    out: set[str] = set()
    for item in json.loads(text):
        lo, sep, hi = item.partition("..")
        if sep:
            a, b = int(lo[5:]), int(hi[5:])  # FACT-NNNN..FACT-MMMM, any width
            out.update(f"FACT-{n:04d}" for n in range(a, b + 1))
        else:
            out.add(item)
    return frozenset(out)


_RANGE = re.compile(r'"FACT-(\d+)\.\.FACT-(\d+)"')


def facts_include(encoded: str, fact: str) -> bool:
    """Whether an encoded ``facts`` column holds *fact*: ``fact in decode_facts(encoded)`` without
    expanding the ranges (a probe check on a request carrying thousands of facts)."""
    n = _fact_number(fact)
    if n < 0 or '\\"' in encoded:  # a non-canonical id, or an id with a quote in it: decode
        return fact in decode_facts(encoded)
    if f'"{fact}"' in encoded:  # quotes only delimit items here, so this is exactly the item
        return True
    return any(int(lo) <= n <= int(hi) for lo, hi in _RANGE.findall(encoded))


#: The one encoder of every detail, meta value and id list (what ``json.dumps(value, ensure_ascii=False,
#: sort_keys=True, default=str)`` builds on each call; made once, the same bytes).
_ENCODER = json.JSONEncoder(ensure_ascii=False, sort_keys=True, default=str)


def _json(value: Any) -> str:
    return _ENCODER.encode(value)


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

    def has_fact(self, fact: str) -> bool:
        """Whether *fact* was present in the request (:func:`facts_include`: no decoding of ranges)."""
        return facts_include(self.facts, fact)

    @property
    def needed_ids(self) -> frozenset[str]:
        """The fact ids the request needed."""
        return frozenset(json.loads(self.needed))


_new = object.__new__
_REQUEST_FIELDS = tuple(RequestRecord.__dataclass_fields__)


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
        self._facts = FactColumns()
        self._db: Any = None
        #: Called as ``progress(records, sim_seconds)`` every :data:`PROGRESS_EVERY` records, if set.
        self.progress: Any = None
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
        from sim import __version__

        self.set_meta(memsim_version=__version__, schema_version=SCHEMA_VERSION)

    def set_meta(self, **values: Any) -> None:
        """Record run metadata (seed, scenario, faults, parameters)."""
        for k, v in values.items():
            text = v if isinstance(v, str) else _json(v)
            self.data.meta[k] = text
            if self._db is not None:
                self._db["meta"].upsert({"key": k, "value": text}, pk="key")

    def op(self, system: str, op: str, *, agent: str = "", phase: str = "ok", **detail: Any) -> OpRecord:
        """Record one modeled operation."""
        self._seq = seq = self._seq + 1
        now = float(self._now())
        if self.progress is not None and seq % PROGRESS_EVERY == 0:
            self.progress(seq, now)
        text = _json(detail) if detail else "{}"
        rec = _new(OpRecord)  # the frozen record, filled as its __init__ would (without a setattr a field)
        rec.__dict__.update(seq=seq, time=now, agent=agent, system=system, op=op, phase=phase, detail=text)
        if self.keep:
            self.data.ops.append(rec)
        if self._db is not None:
            self._pending_ops.append((seq, now, agent, system, op, phase, text))
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
        row = (
            self._seq,
            float(self._now()),
            agent,
            system,
            route,
            int(exact_tokens),
            None if estimate is None else int(estimate),
            int(messages),
            self._facts.encode(facts, (system, agent, route)),
            _json(sorted(needed)),
            _json(detail),
        )
        rec = _new(RequestRecord)
        rec.__dict__.update(zip(_REQUEST_FIELDS, row))
        if self.keep:
            self.data.requests.append(rec)
        if self._db is not None:
            self._pending_requests.append(row)
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

    def close(self, complete: bool = False) -> None:
        """Flush and close the database; *complete* writes the completeness marker first."""
        if self._db is not None:
            self.flush()
            if complete:
                self.set_meta(complete="1")
            self._db.conn.close()
            self._db = None

    @property
    def records(self) -> int:
        """How many records were written."""
        return self._seq


_COLUMNS = {
    "meta": ("key", "value"),
    "ops": tuple(OpRecord.__dataclass_fields__),
    "requests": tuple(RequestRecord.__dataclass_fields__),
}


#: Bounds on a trace's meta table (it holds a seed, a scenario name, parameters and faults).
MAX_META_KEYS, MAX_META_BYTES = 1000, 1 << 20


def read_meta(path: str | os.PathLike[str], *, require_complete: bool = True) -> dict[str, str]:
    """The meta table of a trace, after checking it is a complete memsim trace of this schema.

    ``meta``, ``ops`` and ``requests`` must be tables (a view of the same name could compute rows
    forever) with exactly this schema's columns; meta holds at most :data:`MAX_META_KEYS` values of at
    most :data:`MAX_META_BYTES` each."""
    p = Path(path)
    try:
        with open(p, "rb") as fh:
            if fh.read(16) != b"SQLite format 3\x00":
                raise TraceError(f"not a memsim trace database: {path}")
    except OSError as exc:
        raise TraceError(f"cannot read {path}: {exc.strerror or exc}") from exc
    try:
        conn = connect_readonly(p)
        try:
            for table, cols in _COLUMNS.items():
                kind = conn.execute("SELECT type FROM sqlite_master WHERE name = ?", (table,)).fetchone()
                if kind is None or kind[0] != "table":
                    what = "missing" if kind is None else f"a {kind[0]}, not a table"
                    raise TraceError(f"not a memsim trace database: {path}: {table} is {what}")
                have = tuple(r[1] for r in conn.execute(f"PRAGMA table_info({table})"))
                if have != cols:
                    raise TraceError(f"not a memsim trace database: {path}: table {table} has columns {have}")
            rows = conn.execute(
                "SELECT key, value, length(CAST(value AS BLOB)) FROM meta LIMIT ?", (MAX_META_KEYS + 1,)
            ).fetchall()
        finally:
            conn.close()
    except sqlite3.DatabaseError as exc:
        raise TraceError(f"not a memsim trace database: {path}: {exc}") from exc
    if len(rows) > MAX_META_KEYS:
        raise TraceError(f"not a memsim trace database: {path}: its meta table has over {MAX_META_KEYS} rows")
    for key, _value, size in rows:
        if size is not None and size > MAX_META_BYTES:
            raise TraceError(
                f"{path}: meta {str(key)[:40]!r} is {size:,} bytes; the limit is {MAX_META_BYTES:,}"
            )
    meta = {str(k): str(v) for k, v, _ in rows}
    if meta.get("schema_version") != SCHEMA_VERSION:
        raise TraceError(
            f"{path} has trace schema {meta.get('schema_version', '(none)')!r}; this memsim reads schema "
            f"{SCHEMA_VERSION!r}"
        )
    if require_complete and meta.get("complete") != "1":
        raise TraceError(f"{path} is an incomplete trace (the run that wrote it did not finish)")
    return meta


def connect_readonly(path: Path) -> sqlite3.Connection:
    """A read-only connection that runs nothing the file's schema asks for (no trusted schema)."""
    conn = sqlite3.connect(f"file:{path.resolve()}?mode=ro", uri=True)
    conn.execute("PRAGMA trusted_schema = OFF")
    return conn


def read_trace(path: str | os.PathLike[str], *, require_complete: bool = True) -> TraceData:
    """Read a complete trace database back into frozen records (:class:`TraceError` otherwise)."""
    meta = read_meta(path, require_complete=require_complete)
    conn = connect_readonly(Path(path))
    try:
        data = TraceData(meta=meta)
        data.ops = [
            OpRecord(*r) for r in conn.execute(f"SELECT {', '.join(_COLUMNS['ops'])} FROM ops ORDER BY seq")
        ]
        data.requests = [
            RequestRecord(*r)
            for r in conn.execute(f"SELECT {', '.join(_COLUMNS['requests'])} FROM requests ORDER BY seq")
        ]
    except (sqlite3.DatabaseError, TypeError) as exc:
        raise TraceError(f"not a memsim trace database: {path}: {exc}") from exc
    finally:
        conn.close()
    return data
