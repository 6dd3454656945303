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
    (INTEGER, the design's own estimate, NULL when it has none), ``messages`` (INTEGER), ``facts`` (TEXT,
    the fact ids present: a key frame or a delta, below), ``needed`` (TEXT, JSON list of fact ids the
    request needed, for probes), ``detail`` (TEXT, JSON).
``meta``
    ``key``, ``value``: the seed, scenario, faults and parameters of the run, ``memsim_version``,
    ``schema_version`` (:data:`SCHEMA_VERSION`) and, written last when the run ended normally,
    ``complete`` = ``"1"``. :func:`read_trace` refuses a trace without it (a killed or failed run) or of
    a schema version it does not read (:data:`READABLE_SCHEMAS`: 3, and 2, whose facts are all full
    lists).

A request's ``detail`` carries ``tokens_by_kind`` when its parts were labelled (``system``, ``tools``,
``message``, ``memory``...): the exact tokens of each kind, which a report stacks. With a provider's
prompt cache selected (:mod:`sim.cache`), it also carries ``cache``: ``cache_read_tokens``,
``cache_write_tokens`` and ``uncached_tokens`` (summing to ``exact_tokens``), ``cost_tokens`` (input-token
equivalents) and ``cost_usd``, and ``meta`` holds ``provider`` (its rules and price). Both are absent
without a provider, so such a trace is byte for byte what it was; no column changed meaning, so the schema
version stays 3 and older traces read as before.

The ``facts`` column (schema 3). A *stream* is the requests of one ``(system, agent, route)`` in ``seq``
order. Each request's ``facts`` is one of:

*key frame*
    the whole set as a JSON list (:func:`encode_facts`): the canonical ids ``FACT-{n:04d}`` (any width:
    ``FACT-0017``, ``FACT-12345``) by number, each run of three or more consecutive numbers written as
    one inclusive range ``"FACT-0001..FACT-0040"``, then any other id (``FACT-00017``) sorted as a
    string. ``[]`` is the empty set. It starts with ``[``.
*delta*
    a JSON object ``{"add": [...], "base": SEQ, "del": [...]}`` (keys sorted, ``add`` or ``del`` left out
    when empty): ``base`` is the ``seq`` of the stream's previous request, ``add`` the ids that are new
    since it and ``del`` the ids that left, both written as key-frame lists. The set is ``(set of base
    - del) | add``; ``del`` lies inside the base's set, ``add`` outside it. It starts with ``{``.

The writer (:class:`~sim.tracefacts.FactFrames`) writes a key frame for a stream's first request, for
its first request after the writer forgot it (it remembers the 64 most recently used streams), after 255
deltas in a row, and whenever this delta and those since the stream's last key frame would together be
longer (in characters) than that key frame; otherwise a delta. So any row resolves from its key frame at
most 255 rows of its stream back, through deltas no longer in all than that key frame, and a request
whose set changed by a few ids costs a few dozen characters. In SQL, ``json_type(facts)`` is ``'array'``
for a key frame and ``'object'`` for a delta. :func:`read_trace` and :func:`iter_requests` resolve the
deltas in order: the records they return, like those :meth:`Trace.request` returns, hold the full set.
An id that holds ``..`` cannot be written (a ``ValueError``): the column would read it as a range.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Generator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, overload

from sim.errors import UsageError
from sim.jsontext import record_json
from sim.tracefacts import FactFrameReader, FactFrames, fact_set
from sim.tracefacts import FactSet as FactSet
from sim.tracefacts import decode_facts as decode_facts
from sim.tracefacts import encode_facts as encode_facts
from sim.tracefacts import facts_include as facts_include

BATCH = 1000
PROGRESS_EVERY = 4096
#: The trace schema version: bump when a table or column changes meaning (3: the facts column's deltas).
SCHEMA_VERSION = "3"
#: The schema versions :func:`read_meta` accepts: 2 differs from 3 only in writing every ``facts`` as a
#: full list, which is a key frame of schema 3 (a schema-2 trace holding a delta is not read).
READABLE_SCHEMAS = ("2", SCHEMA_VERSION)

_INSERT_OPS = "INSERT INTO ops (seq, time, agent, system, op, phase, detail) VALUES (?, ?, ?, ?, ?, ?, ?)"
_INSERT_REQUESTS = (
    "INSERT INTO requests (seq, time, agent, system, route, exact_tokens, estimate, messages, facts, needed,"
    " detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


class TraceError(UsageError):
    """A file that is not a complete memsim trace of a schema this memsim reads (exit code 2 at the command
    line)."""


def astuple(record: Any) -> tuple[Any, ...]:
    """The field values of a flat record, in field order (``dataclasses.astuple`` without its deep copy)."""
    return tuple(getattr(record, k) for k in record.__dataclass_fields__)


#: The one encoder of every detail, meta value and id list: ``json.dumps(value, ensure_ascii=False,
#: sort_keys=True, default=str)``, its C encoder made once (:mod:`sim.jsontext`).
_json = record_json


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


class _Facts:
    """The ``facts`` field of :class:`RequestRecord`: read, always the full set's encoded list.

    A record holds either that text (as given to the constructor) or a :class:`~sim.tracefacts.FactSet`
    (records made by :class:`Trace` or read back by :func:`read_trace`); the text of a set is built only
    when asked for, so a request with thousands of facts costs its change, not its size.
    """

    @overload
    def __get__(self, obj: None, owner: Any = None) -> str: ...
    @overload
    def __get__(self, obj: object, owner: Any = None) -> str: ...
    def __get__(self, obj: object | None, owner: Any = None) -> str:
        if obj is None:
            return "[]"  # the field's default
        value = obj.__dict__["facts"]
        return value if isinstance(value, str) else value.text()

    def __set__(self, obj: object, value: str | FactSet) -> None:
        obj.__dict__["facts"] = value


@dataclass(frozen=True)
class RequestRecord:
    """One model request: what reached the model, at what cost, with which facts.

    ``facts`` is the full set's encoded list (:func:`encode_facts`), whatever the trace file stores;
    :attr:`fact_ids`, :attr:`fact_set` and :meth:`has_fact` read the set without building that text.
    ``needed`` is the stored JSON text of the ids the request needed; read it as :attr:`needed_ids`, a
    ``frozenset[str]`` like :attr:`fact_ids` (``rec.needed_ids <= rec.fact_ids``: every needed fact present).
    """

    seq: int
    time: float
    agent: str
    system: str
    route: str
    exact_tokens: int
    estimate: int | None
    messages: int
    facts: _Facts = _Facts()
    needed: str = "[]"
    detail: str = "{}"

    @property
    def fact_set(self) -> FactSet:
        """The fact ids present, as intervals (size, membership, overlap without expanding them)."""
        value = self.__dict__["facts"]
        return FactSet.parse(value) if isinstance(value, str) else value

    @property
    def fact_ids(self) -> frozenset[str]:
        """The fact ids present in the request."""
        value = self.__dict__["facts"]
        return decode_facts(value) if isinstance(value, str) else value.ids()

    def has_fact(self, fact: str) -> bool:
        """Whether *fact* was present in the request (no expansion of ranges)."""
        value = self.__dict__["facts"]
        return facts_include(value, fact) if isinstance(value, str) else fact in value

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


#: A request of at most this many fact ids, in a trace that writes no file, gets its set made directly
#: (one sort); a larger one goes through :class:`~sim.tracefacts.FactFrames`, whose deltas cost O(change)
#: for a request that carries nearly its stream's previous set. The record is the same either way.
DIRECT_FACTS = 256


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
        self._facts = FactFrames()
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
        from sim.version import __version__

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
        """Record one model request (its facts written as :class:`~sim.tracefacts.FactFrames` says)."""
        self._seq = seq = self._seq + 1
        ids = facts if type(facts) is frozenset else frozenset(facts)
        if self._db is None and len(ids) <= DIRECT_FACTS:  # no column is written: the set is enough
            column, full = "", fact_set(ids)
        else:
            column, full = self._facts.encode(ids, (system, agent, route), seq)
        row = (
            seq,
            float(self._now()),
            agent,
            system,
            route,
            int(exact_tokens),
            None if estimate is None else int(estimate),
            int(messages),
            column,
            _json(sorted(needed)),
            _json(detail),
        )
        rec = _new(RequestRecord)  # filled as its __init__ would, holding the full set (not the column)
        rec.__dict__.update(zip(_REQUEST_FIELDS, row))
        rec.__dict__["facts"] = full
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
    """The meta table of a trace, after checking it is a complete memsim trace of a schema this memsim
    reads (:data:`READABLE_SCHEMAS`).

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
    if meta.get("schema_version") not in READABLE_SCHEMAS:
        raise TraceError(
            f"{path} has trace schema {meta.get('schema_version', '(none)')!r}; this memsim reads schemas "
            f"{' and '.join(map(repr, READABLE_SCHEMAS))}"
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
    """Read a complete trace database back into frozen records (:class:`TraceError` otherwise).

    Every record is held in memory, each request with its full fact set; :func:`iter_requests` streams
    the requests of a big trace instead."""
    meta = read_meta(path, require_complete=require_complete)
    conn = connect_readonly(Path(path))
    try:
        data = TraceData(meta=meta)
        data.ops = [
            OpRecord(*r) for r in conn.execute(f"SELECT {', '.join(_COLUMNS['ops'])} FROM ops ORDER BY seq")
        ]
        data.requests = list(_requests(conn, path, meta))
    except (sqlite3.DatabaseError, TypeError) as exc:
        raise TraceError(f"not a memsim trace database: {path}: {exc}") from exc
    finally:
        conn.close()
    return data


def iter_requests(
    path: str | os.PathLike[str], *, require_complete: bool = True
) -> Generator[RequestRecord, None, None]:
    """The requests of a trace in ``seq`` order, each with its full fact set, streamed: memory holds one
    row and the last fact set of each stream (:func:`read_meta` checks the file first)."""
    meta = read_meta(path, require_complete=require_complete)
    conn = connect_readonly(Path(path))
    try:
        yield from _requests(conn, path, meta)
    except sqlite3.DatabaseError as exc:
        raise TraceError(f"not a memsim trace database: {path}: {exc}") from exc
    finally:
        conn.close()


def _requests(
    conn: sqlite3.Connection, path: str | os.PathLike[str], meta: dict[str, str]
) -> Iterator[RequestRecord]:
    """The request rows of *conn* as records, the facts column's deltas resolved in order."""
    reader = FactFrameReader(deltas=meta.get("schema_version") != "2")
    at = _REQUEST_FIELDS.index("facts")
    rows = conn.execute(f"SELECT {', '.join(_COLUMNS['requests'])} FROM requests ORDER BY seq")
    for row in rows:
        try:
            full = reader.resolve(row[0], (row[3], row[2], row[4]), row[at])
        except (ValueError, TypeError, RecursionError) as exc:
            raise TraceError(f"not a memsim trace database: {path}: {exc}") from exc
        rec = _new(RequestRecord)
        rec.__dict__.update(zip(_REQUEST_FIELDS, row))
        rec.__dict__["facts"] = full
        yield rec


def is_trace(path: Path) -> bool:
    """Whether *path* starts like a SQLite database."""
    try:
        with open(path, "rb") as fh:
            return fh.read(16) == b"SQLite format 3\x00"
    except OSError:
        return False
