"""What ``memsim report`` reads, validated at the edge against the schema its writer produces.

A claims ledger (:func:`sim.ledger.to_json`), a bench database (:mod:`sim.bench_outputs`: tables
``results`` and ``aggregate``) and a trace (:mod:`sim.trace`) are files a user may have edited, truncated
or written by hand; the page code reads them as their writer wrote them. Anything else is a
:class:`~sim.errors.UsageError` naming the offending field (``claims.0.records: Input should be a valid
list``), never an exception inside the page code. Values are not converted between types (``"5"`` is not
a count, ``1`` is not ``true``, a budget ``"8k"`` is not an integer); NaN and the infinities are refused.
Keys a newer writer may add are ignored; the fields the pages read are required where the writer
always writes them.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from sim.errors import UsageError
from sim.values import check_finite, given

_STRICT = ConfigDict(extra="ignore", strict=True, allow_inf_nan=False)
#: The largest ledger ``memsim report`` reads.
MAX_LEDGER_BYTES = 64 << 20
Number = int | float


class DirectionDoc(BaseModel):
    """One direction of a ledger row (:class:`sim.ledger.Direction`)."""

    model_config = _STRICT

    ok: bool
    examples: int = Field(ge=0)
    seconds: Number | None = None
    example: Any = None
    summary: str = ""
    detail: str = ""
    declared: bool = True


class ClaimRow(BaseModel):
    """One claim of a ledger (:meth:`sim.ledger.Row.to_json`)."""

    model_config = _STRICT

    claim: str = Field(min_length=1)
    system: str
    records: list[str]
    statement: str = ""
    fix: str = ""
    fixes: list[str] | None = None
    off_switches: list[str] | None = None
    counterfactual: bool = False
    intent: str | None = ""
    seed: int | None = None
    seconds: Number | None = None
    real: str = ""
    faithful: DirectionDoc | None = None
    fixed: DirectionDoc | None = None
    off: DirectionDoc | list[str] | None = None  # an older ledger kept the off switch names here
    combined: DirectionDoc | None = None
    as_expected: bool | None = None


class Ledger(BaseModel):
    """A claims ledger (``memsim claims --json FILE``)."""

    model_config = _STRICT

    profile: str = ""
    seed: int | str = ""
    memsim_version: str = ""
    claims: list[ClaimRow]


def _where(exc: ValidationError) -> str:
    err = exc.errors()[0]
    loc = ".".join(str(x) for x in err["loc"])
    return f"{loc or 'document'}: {err['msg']}{given(err)}"


def check_ledger(doc: Any, source: object = "claims ledger") -> None:
    """Refuse a ledger document that is not what :func:`sim.ledger.to_json` writes."""
    if not isinstance(doc, dict) or not isinstance(doc.get("claims"), list):
        raise UsageError(f"{source} is not a claims ledger (`memsim claims --json FILE` writes one)")
    try:
        Ledger.model_validate(doc)
    except ValidationError as exc:
        raise UsageError(f"{source} is not a valid claims ledger: {_where(exc)}") from exc


class ResultRow(BaseModel):
    """A row of a bench database's ``results`` table (:data:`sim.bench_outputs.COLUMNS`)."""

    model_config = _STRICT

    design: str = Field(min_length=1)
    budget: int
    seed: int
    requests: int | None = None
    tokens_mean: Number | None = None
    tokens_p95: Number | None = None
    tokens_max: Number | None = None
    estimate_mean: Number | None = None
    over_window: int | None = None
    probes: int | None = None
    recall: Number | None = None
    recall_vs_oracle: Number | None = None
    write_amplification: Number | None = None
    storage_ops: Number | None = None
    live: int | bool | None = None


class AggregateRow(BaseModel):
    """A row of a bench database's ``aggregate`` table (:func:`sim.bench.metrics.aggregate`)."""

    model_config = _STRICT

    design: str = Field(min_length=1)
    budget: int
    seeds: int | None = None
    tokens_max: Number | None = None
    over_window_sum: Number | None = None
    requests_sum: Number | None = None
    live: int | bool | None = None


def _numbers_of(row: dict[str, Any], where: str) -> None:
    """The aggregate's metric columns (``recall``, ``recall_min``, ...): numbers or empty."""
    from sim.bench.metrics import MEANS

    for m in MEANS:
        for key in (m, f"{m}_min", f"{m}_max"):
            v = row.get(key)
            if v is not None and (isinstance(v, bool) or not isinstance(v, int | float)):
                raise UsageError(f"{where}: {key}: should be a number, not {v!r}")
    check_finite(row, where)


def check_bench(rows: list[dict[str, Any]], agg: list[dict[str, Any]], db: Path) -> None:
    """Refuse bench tables that are not what ``memsim bench`` writes."""
    for table, model, items in (("results", ResultRow, rows), ("aggregate", AggregateRow, agg)):
        for i, row in enumerate(items):
            where = f"{db}: table {table} row {i + 1}"
            try:
                model.model_validate(row)
            except ValidationError as exc:
                raise UsageError(f"{where}: {_where(exc)}") from exc
            if table == "aggregate":
                _numbers_of(row, where)


Flag = Literal[0, 1]


class QuestionRow(BaseModel):
    """A row of a conversation sweep's ``questions`` table (:meth:`sim.conversations.metrics.Scorer.row`)."""

    model_config = _STRICT

    workload: str
    instance: str
    question_id: str
    question_type: str
    design: str = Field(min_length=1)
    budget: int = Field(ge=0)
    request_tokens: int = Field(ge=0)
    over_window: Flag
    evidence_turns: int = Field(ge=0)
    evidence_in_context: int = Field(ge=0)
    evidence_sessions: int = Field(ge=0)
    sessions_in_context: int = Field(ge=0)
    answer_in_context: Flag | None
    lost: str
    abstention: Flag
    # Later columns (a file from an older memsim lacks them): the question's text (issue 40), the as-built
    # counts before the window gate (issue 38), the retrieval metrics of a design that ranks and the charge
    # of a priced sweep (issue 39, 38; ``sim.conversations.retrieval``, ``sim.conversations.cost``).
    question: str | None = None
    evidence_in_context_unenforced: int | None = Field(default=None, ge=0)
    sessions_in_context_unenforced: int | None = Field(default=None, ge=0)
    recall_any_at_5_turn: Number | None = Field(default=None, ge=0, le=1)
    recall_all_at_5_turn: Number | None = Field(default=None, ge=0, le=1)
    ndcg_at_5_turn: Number | None = Field(default=None, ge=0, le=1)
    recall_any_at_10_turn: Number | None = Field(default=None, ge=0, le=1)
    recall_all_at_10_turn: Number | None = Field(default=None, ge=0, le=1)
    ndcg_at_10_turn: Number | None = Field(default=None, ge=0, le=1)
    recall_any_at_5_session: Number | None = Field(default=None, ge=0, le=1)
    recall_all_at_5_session: Number | None = Field(default=None, ge=0, le=1)
    ndcg_at_5_session: Number | None = Field(default=None, ge=0, le=1)
    recall_any_at_10_session: Number | None = Field(default=None, ge=0, le=1)
    recall_all_at_10_session: Number | None = Field(default=None, ge=0, le=1)
    ndcg_at_10_session: Number | None = Field(default=None, ge=0, le=1)
    refused: Flag | None = None
    cache_read_tokens: int | None = Field(default=None, ge=0)
    cache_write_tokens: int | None = Field(default=None, ge=0)
    uncached_tokens: int | None = Field(default=None, ge=0)
    cost_usd: Number | None = Field(default=None, ge=0)

    @model_validator(mode="after")
    def _consistent(self) -> QuestionRow:
        for kept, total in (
            (self.evidence_in_context_unenforced, self.evidence_turns),
            (self.sessions_in_context_unenforced, self.evidence_sessions),
        ):
            if kept is not None and kept > total:
                raise ValueError("an as-built count (*_unenforced) is over its evidence count")
        if self.evidence_in_context > self.evidence_turns:
            raise ValueError("evidence_in_context is over evidence_turns")
        if self.sessions_in_context > self.evidence_sessions:
            raise ValueError("sessions_in_context is over evidence_sessions")
        try:
            lost = json.loads(self.lost)
        except (ValueError, RecursionError):
            raise ValueError("lost: not a JSON list of [turn id, reason] pairs") from None
        if not (
            isinstance(lost, list)
            and all(isinstance(p, list) and len(p) == 2 and all(isinstance(x, str) for x in p) for p in lost)
        ):
            raise ValueError("lost: not a JSON list of [turn id, reason] pairs")
        if len(lost) > self.evidence_turns:
            raise ValueError("lost: more turns than evidence_turns")
        return self


def check_questions(rows: list[dict[str, Any]], db: Path) -> None:
    """Refuse a ``questions`` table that is not what a conversation sweep writes (the first bad row)."""
    for i, row in enumerate(rows):
        try:
            QuestionRow.model_validate(row)
        except ValidationError as exc:
            raise UsageError(f"{db}: table questions row {i + 1}: {_where(exc)}") from exc


#: Per column of a trace table: the SQL condition its values meet (what :mod:`sim.trace` writes).
_TRACE_RULES = {
    "ops": {
        "seq": "typeof(seq) = 'integer'",
        "time": "typeof(time) IN ('integer', 'real') AND abs(time) < 1e300",
        "agent": "typeof(agent) = 'text'",
        "system": "typeof(system) = 'text'",
        "op": "typeof(op) = 'text'",
        "phase": "typeof(phase) = 'text'",
        "detail": "typeof(detail) = 'text' AND json_valid(detail)",
    },
    "requests": {
        "seq": "typeof(seq) = 'integer'",
        "time": "typeof(time) IN ('integer', 'real') AND abs(time) < 1e300",
        "agent": "typeof(agent) = 'text'",
        "system": "typeof(system) = 'text'",
        "route": "typeof(route) = 'text'",
        "exact_tokens": "typeof(exact_tokens) = 'integer'",
        "estimate": "typeof(estimate) IN ('integer', 'null')",
        "messages": "typeof(messages) = 'integer'",
        "needed": (
            "typeof(needed) = 'text' AND json_valid(needed) AND json_type(needed) = 'array' AND NOT EXISTS "
            "(SELECT 1 FROM json_each(needed) WHERE type != 'text')"
        ),
        "detail": "typeof(detail) = 'text' AND json_valid(detail)",
    },
}


def check_trace(path: Path) -> None:
    """Refuse a file that is not a complete trace (:func:`sim.trace.read_meta`: its tables, columns and
    meta) or whose rows are not what :mod:`sim.trace` writes: the first offending row and column."""
    from sim.trace import TraceError, connect_readonly, read_meta

    read_meta(path)
    try:
        conn = connect_readonly(Path(path))
        try:
            for table, rules in _TRACE_RULES.items():
                for column, rule in rules.items():
                    bad = conn.execute(
                        f"SELECT seq, typeof({column}) FROM {table} WHERE NOT ({rule}) LIMIT 1"
                    ).fetchone()
                    if bad is not None:
                        what = "not a finite number" if bad[1] == "real" else f"a {bad[1]} value is not"
                        raise TraceError(
                            f"{path}: table {table} seq {bad[0]!r}: {column}: {what} what memsim writes"
                        )
        finally:
            conn.close()
    except sqlite3.DatabaseError as exc:
        raise TraceError(f"not a memsim trace database: {path}: {exc}") from exc


def _bench_database(path: Path) -> bool:
    """Whether *path* is a ``memsim bench`` results database (a ``results`` or ``questions`` table and no
    trace ``ops``; both kinds carry a ``meta`` table)."""
    try:
        conn = sqlite3.connect(f"file:{path.resolve()}?mode=ro", uri=True)
        try:
            names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        finally:
            conn.close()
    except sqlite3.DatabaseError:
        return False
    return "ops" not in names and bool(names & {"results", "questions"})


def input_files(source: Path) -> list[Path]:
    """The files ``memsim report SOURCE`` reads: *source* itself, or a directory's ``results.db`` and the
    PNG plots beside it (an output naming one of them is refused: :meth:`sim.outputs.Outputs.reads`)."""
    if not source.is_dir():
        return [source]
    return [source / "results.db", *sorted(source.glob("*.png"))]


def check_source(source: Path) -> None:
    """Refuse a report input that is missing, a device, an incomplete trace or a JSON file that is not a
    claims ledger, with one line (the renderers then only see well-formed input)."""
    from sim.limits import decode_text, load_json, read_bounded, require_file
    from sim.trace import is_trace

    if source.is_dir():
        return
    require_file(source, "report input")
    if is_trace(source):
        if _bench_database(source):
            raise UsageError(
                f"{source} is a benchmark's results database: pass the directory that holds it "
                f"(memsim report {source.parent})"
            )
        check_trace(source)
    elif source.suffix == ".json":
        text = decode_text(read_bounded(source, "claims ledger", MAX_LEDGER_BYTES), "claims ledger", source)
        check_ledger(load_json(text, "claims ledger", source), source)
