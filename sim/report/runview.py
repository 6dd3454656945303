"""A run's trace, read once and reduced to what its report page shows, in memory bounded by the caps.

:func:`read_run` checks the file (:func:`sim.trace.read_meta`: a complete trace of a schema it reads), asks
SQLite for the small aggregates (agents, operation names, the time span), then streams the ``ops`` and
``requests`` tables once, in ``seq`` order. Per request it keeps a few numbers (tokens, the parts' kinds,
how many facts, how many left since the agent's previous request); per operation only counts, except the
ones a reader looks for (markers, failures, crashes), of which it keeps the first :data:`MAX_NOTABLE`.
A 100,000-operation trace is therefore reduced, not embedded: the page states every cap it applied.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sim.report.facts import EMPTY, FactSet, numbered
from sim.trace import iter_requests, read_meta

#: Operations listed one by one: all of them up to this many, else only the notable ones.
MAX_LISTED_OPS = 400
#: Notable operations (markers, failures, crashes) kept with their detail.
MAX_NOTABLE = 400
#: Probe requests listed in the facts table (all are counted in the summary).
MAX_PROBES = 300
#: Largest "facts left the window" events kept, with up to :data:`DROPPED_IDS` of their ids.
TOP_DROPS = 8
DROPPED_IDS = 12
#: Notable operations kept as positions (agent, seq, time, op, phase) for the timelines and lanes.
MAX_MARKS = 200_000
#: Facts that probes needed, followed request by request in each timeline's raster (the first this many).
MAX_TRACKED = 16
#: Operation details are cut to this many characters in listings.
DETAIL_CHARS = 240
#: Request detail keys drawn as horizontal lines on the context-window timeline (also read from params).
LINE_KEYS = ("window", "trigger", "budget")
FAULT_PHASES = ("crash", "fail")
#: How the page names records written without an agent.
NO_AGENT = "(no agent)"
_AGENT = f"CASE WHEN agent = '' THEN '{NO_AGENT}' ELSE agent END"


@dataclass
class Request:
    """One model request, reduced to what the timeline draws."""

    seq: int
    time: float
    route: str
    exact: int
    estimate: int | None
    kinds: dict[str, int] | None
    facts: int
    dropped: int
    lines: dict[str, int]  # window/trigger/budget: from the request's detail, else the run's parameters
    probe: tuple[int, int] | None = None  # (needed facts present, needed facts)
    present: int = 0  # bit i: tracked fact i is in this request (RunView.tracked)
    wanted: int = 0  # bit i: this request is a probe that needed tracked fact i
    variant: str = ""  # the variant the request's detail names (a scenario running several side by side)

    @property
    def detail_lines(self) -> dict[str, int]:
        """The lines the request itself carried (empty when they came from the run's parameters)."""
        return self.lines if self.own_lines else {}

    own_lines: bool = True


@dataclass(frozen=True)
class Probe:
    """A request that needed facts: which were present (hits) and which were not (misses)."""

    seq: int
    time: float
    agent: str
    route: str
    hits: tuple[str, ...]
    misses: tuple[str, ...]
    facts: int
    variant: str = ""


@dataclass(frozen=True)
class Drop:
    """Facts present in an agent's request and gone from its next request of the same route."""

    seq: int
    time: float
    agent: str
    route: str
    count: int
    ids: tuple[str, ...]
    before: int
    after: int


@dataclass(frozen=True)
class Op:
    """One listed operation (detail cut to :data:`DETAIL_CHARS`)."""

    seq: int
    time: float
    agent: str
    op: str
    phase: str
    detail: str
    marker: str = ""


@dataclass
class Tally:
    """Probes of one series (a variant, or a route a scenario named as one): needed-fact checks and the
    distinct facts behind them, so two series' denominators compare (a fact still missing at a later probe
    is needed, and counted, again)."""

    probes: int = 0
    probe_hits: int = 0
    needed: int = 0  # needed facts summed over probes (a fact needed at 3 probes counts 3 times)
    hits: int = 0
    distinct: set[tuple[str, str]] = field(default_factory=set)  # distinct (agent, fact) needs
    distinct_hits: set[tuple[str, str]] = field(default_factory=set)  # ... present at some probe of it
    first_seq: int = 0


@dataclass
class RunView:
    """Everything the run page shows, already reduced."""

    path: str  # the file name (no directory: the page is the same wherever the trace lies)
    meta: dict[str, str]
    systems: list[str]
    markers: dict[str, str]
    op_total: int
    request_total: int
    t_min: float
    t_max: float
    agents: list[str]  # every agent, in order of first record
    agent_ops: dict[str, int]
    op_names: list[tuple[str, int]]  # every operation name with its count, most frequent first
    requests: dict[tuple[str, str], list[Request]] = field(default_factory=dict)  # by (agent, route)
    probes: list[Probe] = field(default_factory=list)
    probe_total: int = 0
    probe_hits: int = 0  # probes whose every needed fact was present
    needed_total: int = 0
    needed_hits: int = 0
    drops: list[Drop] = field(default_factory=list)
    drop_events: int = 0
    counts: dict[tuple[str, str, str], list[float]] = field(default_factory=dict)  # (agent, op, phase)
    listed: list[Op] = field(default_factory=list)
    listed_all: bool = True
    notable_total: int = 0
    lane_points: list[tuple[str, int, float, str, str]] = field(default_factory=list)
    # (agent, seq, time, op, phase) for every op and request when the trace is small (see charts.lanes)
    lane_bins: dict[str, list[Counter[str]]] = field(default_factory=dict)  # large traces: counts per bin
    marks: list[tuple[str, int, float, str, str]] = field(default_factory=list)
    # (agent, seq, time, op, phase) of every notable operation (up to MAX_MARKS), for the timelines' rugs
    params_lines: dict[str, int] = field(default_factory=dict)
    tracked: list[str] = field(default_factory=list)  # the needed facts each request is checked for
    #: Route → the variant it ran, from the trace's ``variants`` meta (a scenario that names each run).
    route_labels: dict[str, str] = field(default_factory=dict)
    #: Probe tallies per series (:meth:`series`), in the order the series first made a request.
    tallies: dict[str, Tally] = field(default_factory=dict)

    def series(self, req: Request) -> str:
        """The series a request belongs to on the page: its variant, else its route's label, else ''."""
        return req.variant or self.route_labels.get(req.route, "")

    def agent_requests(self, agent: str) -> int:
        """How many requests *agent* made (over all its routes)."""
        return sum(len(v) for (a, _), v in self.requests.items() if a == agent)

    def meta_json(self, key: str, default: Any) -> Any:
        """A meta value decoded from JSON (the raw text when it is not JSON)."""
        text = self.meta.get(key)
        if text is None:
            return default
        try:
            return json.loads(text)
        except ValueError:
            return text


def _markers(systems: list[str]) -> dict[str, str]:
    """Operation name → marker label, from each installed design's declaration (unknown designs: none)."""
    from sim.errors import UsageError
    from sim.registry import design

    out: dict[str, str] = {}
    for s in systems:
        try:
            out.update(design(s).markers)
        except UsageError:
            continue
    return out


def _decoded(meta: dict[str, str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in meta.items():
        try:
            out[k] = json.loads(v)
        except ValueError:
            out[k] = v
    return out


def _int_lines(values: dict[str, Any]) -> dict[str, int]:
    return {
        k: int(v)
        for k in LINE_KEYS
        if isinstance(v := values.get(k), int | float) and not isinstance(v, bool) and v > 0
    }


#: The swim lanes keep one dot per record when the trace has at most this many records, else counts.
LANE_POINTS = 2500
#: Time bins per swim lane for a large trace.
LANE_BINS = 300


def display_name(path: Path) -> str:
    """The trace's file name as the page shows it: a staged ``.NAME.partial-PID`` reads as ``NAME``."""
    m = re.fullmatch(r"\.(.+)\.partial-\d+", path.name)
    return m.group(1) if m else path.name


def read_run(path: Path) -> RunView:
    """Read and reduce the trace at *path* (:class:`sim.trace.TraceError` if it is not a complete trace)."""
    meta = read_meta(path)
    conn = sqlite3.connect(f"file:{Path(path).resolve()}?mode=ro", uri=True)
    try:
        return _reduce(conn, Path(path), meta)
    finally:
        conn.close()


def _reduce(conn: sqlite3.Connection, source: Path, meta: dict[str, str]) -> RunView:
    first: dict[str, int] = {}
    agent_ops: dict[str, int] = {}
    for agent, n, s in conn.execute(f"SELECT {_AGENT}, count(*), min(seq) FROM ops GROUP BY 1"):
        first[agent], agent_ops[agent] = s, n
    for agent, s in conn.execute(f"SELECT {_AGENT}, min(seq) FROM requests GROUP BY 1"):
        first[agent] = min(s, first.get(agent, s))
    agents = sorted(first, key=lambda a: (first[a], a))
    op_names = [(str(o), int(n)) for o, n in conn.execute("SELECT op, count(*) FROM ops GROUP BY op")]
    op_names.sort(key=lambda x: (-x[1], x[0]))
    systems = sorted({str(r[0]) for r in conn.execute("SELECT DISTINCT system FROM ops")})
    systems += sorted(
        {str(r[0]) for r in conn.execute("SELECT DISTINCT system FROM requests")} - set(systems)
    )
    span = conn.execute(
        "SELECT min(t), max(t) FROM (SELECT time AS t FROM ops UNION ALL SELECT time FROM requests)"
    ).fetchone()
    op_total = int(conn.execute("SELECT count(*) FROM ops").fetchone()[0])
    request_total = int(conn.execute("SELECT count(*) FROM requests").fetchone()[0])
    params = {}
    try:
        loaded = json.loads(meta.get("params", "{}"))
        params = loaded if isinstance(loaded, dict) else {}
    except ValueError:
        pass
    view = RunView(
        path=display_name(source),
        meta=meta,
        systems=systems,
        markers=_markers(systems),
        op_total=op_total,
        request_total=request_total,
        t_min=float(span[0] or 0.0),
        t_max=float(span[1] or 0.0),
        agents=agents,
        agent_ops=agent_ops,
        op_names=op_names,
        params_lines=_int_lines(params) or _int_lines(_decoded(meta)),
        route_labels=_labels(meta),
    )
    for (text,) in conn.execute("SELECT needed FROM requests WHERE needed != '[]' ORDER BY seq"):
        for f in json.loads(text):
            if f not in view.tracked:
                view.tracked.append(f)
        if len(view.tracked) >= MAX_TRACKED:
            del view.tracked[MAX_TRACKED:]
            break
    small = op_total + request_total <= LANE_POINTS
    _read_requests(source, view, small)
    _read_ops(conn, view, small)
    if small:
        view.lane_points.sort(key=lambda p: p[1])
    return view


def _labels(meta: dict[str, str]) -> dict[str, str]:
    """The ``variants`` meta: a JSON object of route → variant label (anything else: none)."""
    try:
        loaded = json.loads(meta.get("variants", "{}"))
    except ValueError:
        return {}
    if not isinstance(loaded, dict):
        return {}
    return {str(k): str(v) for k, v in loaded.items() if isinstance(v, str)}


def lane_bin(view: RunView, t: float, seq: int) -> int:
    """The swim-lane bin of a record: by simulation time, or by seq when every record has the same time."""
    width = view.t_max - view.t_min
    if width > 0:
        return min(LANE_BINS - 1, int((t - view.t_min) / width * LANE_BINS))
    total = max(1, view.op_total + view.request_total)
    return min(LANE_BINS - 1, int((seq - 1) / total * LANE_BINS))


def _lane_count(view: RunView, agent: str, t: float, seq: int, what: str) -> None:
    bins = view.lane_bins.get(agent)
    if bins is None:
        bins = view.lane_bins[agent] = [Counter() for _ in range(LANE_BINS)]
    bins[lane_bin(view, t, seq)][what] += 1


def _read_requests(source: Path, view: RunView, small: bool) -> None:
    """Every request, streamed with its fact set resolved (:func:`sim.trace.iter_requests`)."""
    previous: dict[tuple[str, str], FactSet] = {}
    drops: list[Drop] = []
    bits = {f: 1 << i for i, f in enumerate(view.tracked)}
    nums, named = numbered(bits)
    for rec in iter_requests(source):
        seq, t, route, exact, est = rec.seq, rec.time, rec.route, rec.exact_tokens, rec.estimate
        agent = rec.agent or NO_AGENT
        needed_text, detail_text = rec.needed, rec.detail
        facts = rec.fact_set
        key = (agent, route)
        prev = previous.get(key, EMPTY)
        dropped = prev.minus_size(facts)
        previous[key] = facts
        try:
            detail = json.loads(detail_text)
        except ValueError:
            detail = {}
        if not isinstance(detail, dict):
            detail = {}
        kinds = detail.get("tokens_by_kind")
        if not (isinstance(kinds, dict) and all(isinstance(v, int) for v in kinds.values())):
            kinds = None
        req = Request(int(seq), float(t), str(route), int(exact), est, kinds, len(facts), dropped, {})
        variant = detail.get("variant")
        req.variant = variant if isinstance(variant, str) else ""
        own = _int_lines(detail)
        req.lines = own or view.params_lines
        req.own_lines = bool(own)
        needed = json.loads(needed_text) if needed_text not in ("[]", "") else []
        if bits and facts:
            req.present = facts.mask(nums, named)
        if needed:
            req.wanted = sum(bits.get(f, 0) for f in set(needed))
            # a request over the window delivers nothing (a provider refuses it), as the benchmark scores it
            limit = req.lines.get("budget") or req.lines.get("window")
            refused = limit is not None and limit > 0 and int(exact) > limit
            hits = () if refused else tuple(f for f in needed if f in facts)
            misses = tuple(needed) if refused else tuple(f for f in needed if f not in facts)
            req.probe = (len(hits), len(needed))
            view.probe_total += 1
            view.probe_hits += not misses
            view.needed_total += len(needed)
            view.needed_hits += len(hits)
            series = view.series(req)
            tally = view.tallies.get(series)
            if tally is None:
                tally = view.tallies[series] = Tally(first_seq=req.seq)
            tally.probes += 1
            tally.probe_hits += not misses
            tally.needed += len(needed)
            tally.hits += len(hits)
            tally.distinct.update((agent, f) for f in needed)
            tally.distinct_hits.update((agent, f) for f in hits)
            if len(view.probes) < MAX_PROBES:
                view.probes.append(
                    Probe(req.seq, req.time, agent, req.route, hits, misses, len(facts), series)
                )
        view.requests.setdefault(key, []).append(req)
        if dropped:
            view.drop_events += 1
            if len(drops) < TOP_DROPS or dropped > drops[-1].count:
                ids = tuple(prev.minus(facts, DROPPED_IDS))
                drops.append(Drop(req.seq, req.time, agent, req.route, dropped, ids, len(prev), len(facts)))
                drops.sort(key=lambda d: (-d.count, d.seq))
                del drops[TOP_DROPS:]
        if small:
            view.lane_points.append((agent, req.seq, req.time, "model request", "ok"))
        else:
            _lane_count(view, agent, req.time, req.seq, "model request")
    view.drops = sorted(drops, key=lambda d: d.seq)


def _read_ops(conn: sqlite3.Connection, view: RunView, small: bool) -> None:
    listed_all = view.op_total <= MAX_LISTED_OPS
    view.listed_all = listed_all
    for seq, t, agent, op, phase, detail in conn.execute(
        f"SELECT seq, time, {_AGENT}, op, phase, detail FROM ops ORDER BY seq"
    ):
        key = (agent, op, phase)
        c = view.counts.get(key)
        if c is None:
            view.counts[key] = [1, t, t]
        else:
            c[0] += 1
            c[2] = t
        marker = view.markers.get(op, "")
        notable = bool(marker) or phase in FAULT_PHASES
        view.notable_total += notable
        if listed_all or (notable and len(view.listed) < MAX_NOTABLE):
            text = detail if len(detail) <= DETAIL_CHARS else detail[: DETAIL_CHARS - 1] + "…"
            view.listed.append(Op(int(seq), float(t), agent, op, phase, text, marker))
        if notable and len(view.marks) < MAX_MARKS:
            view.marks.append((agent, int(seq), float(t), op, phase))
        if small:
            view.lane_points.append((agent, int(seq), float(t), op, phase))
        else:
            _lane_count(view, agent, float(t), int(seq), marker or op)
