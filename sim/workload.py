"""The cross-design workload and the adapter protocol the context-budget benchmark drives.

A :class:`Workload` is a seeded sequence of :class:`WorkStep`: each carries an observation of a drawn size
with embedded fact tokens; some later steps are *probes* that need one specific earlier fact. Each seed
also draws the budget pressure, message sizes, summarizer lossiness and clock skew (swarm style), and
:class:`Drawn` logs what it drew. An adapter per design (``systems/<name>/adapter.py``) maps the
workload onto that design's own mechanics and returns, per step, the :class:`ModelRequest` the design
would send to the model.
"""

from __future__ import annotations

import itertools
import json
import os
import random
import re
import stat
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from sim.engine import Simulation
from sim.rng import derive_seed
from sim.text import fact_id, fact_token, fact_value, observation
from sim.trace import RequestRecord


@dataclass(frozen=True)
class WorkStep:
    """One workload step: an observation (with fact tokens) and, for probes, the fact it needs.

    A real conversation (:mod:`sim.conversations`) drives the same adapters with two more kinds of step.
    A **turn** step has ``turn_id`` set: ``observation`` is the turn's text, unchanged (no fact tokens),
    with its ``session_id``, ``role`` (``"user"`` or ``"assistant"``), ``speaker``, the dataset's date
    ``time_s`` (seconds since 1970-01-01 UTC, or None) and ``new_session`` (the first turn of a session).
    A **question** step has ``question_id`` set: ``question`` is the question's text, ``probe`` is the
    question id (so an adapter that answers at a probe answers it) and ``observation`` is empty. A step
    never carries a question's evidence labels or gold answer: they exist only for scoring.
    """

    index: int
    observation: str
    facts: tuple[str, ...] = ()
    probe: str | None = None
    question: str = ""
    phase: str = "load"  # "load" (budget pressure) or "calm" (pressure dropped; liveness)
    turn_id: str | None = None
    session_id: str | None = None
    role: str | None = None
    speaker: str | None = None
    time_s: int | None = None
    new_session: bool = False
    question_id: str | None = None


@dataclass(frozen=True)
class Drawn:
    """What one seed drew (logged with every result)."""

    seed: int
    steps: int
    obs_tokens_mean: int
    obs_tokens_max: int
    facts_per_step: float
    probe_every: int
    lossiness: float
    skew_s: float
    calm_steps: int


class Workload:
    """A seeded workload: the drawn parameters and the steps, generated lazily (100,000 steps fit)."""

    def __init__(self, drawn: Drawn) -> None:
        self.drawn = drawn
        self._steps: tuple[WorkStep, ...] | None = None

    def __repr__(self) -> str:
        return f"Workload({self.drawn!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Workload) and self.drawn == other.drawn and self.steps == other.steps

    __hash__ = None  # type: ignore[assignment]

    def __len__(self) -> int:
        return self.drawn.steps + self.drawn.calm_steps

    @property
    def steps(self) -> tuple[WorkStep, ...]:
        """Every step, materialized (use :meth:`iter_steps` for long workloads)."""
        if self._steps is None:
            self._steps = tuple(self.iter_steps())
        return self._steps

    def iter_steps(self) -> Iterator[WorkStep]:
        """The steps, generated one at a time from the seed."""
        if self._steps is not None:
            yield from self._steps
            return
        d = self.drawn
        r = random.Random(derive_seed(d.seed, "workload.steps"))
        next_fact = 1  # the facts seen so far are FACT-0001 .. next_fact - 1, in order (no list kept)
        for i in range(d.steps + d.calm_steps):
            calm = i >= d.steps
            mean = 80 if calm else d.obs_tokens_mean
            size_tokens = min(d.obs_tokens_max, max(20, int(r.expovariate(1.0 / mean))))
            n_facts = 0 if calm else int(d.facts_per_step) + (1 if r.random() < d.facts_per_step % 1 else 0)
            facts = []
            for _ in range(n_facts):
                facts.append(fact_token(next_fact, fact_value(r)))
                next_fact += 1
            probe = None
            question = ""
            if next_fact > 1 and i > 0 and i % d.probe_every == 0:
                probe = fact_id(r.choice(range(1, next_fact)))  # the same draw as from the list of ids
                question = f"Question: what is the value of {probe}?"
            text = observation(r, int(size_tokens * 4.8), facts)
            yield WorkStep(i, text, tuple(facts), probe, question, "calm" if calm else "load")

    @property
    def facts(self) -> dict[str, str]:
        """Every fact id to its token."""
        out: dict[str, str] = {}
        for s in self.iter_steps():
            for f in s.facts:
                out[f.split("=")[0]] = f
        return out


def draw(seed: int, steps: int | None = None) -> Drawn:
    """Swarm-style draw of a workload's parameters from *seed*."""
    r = random.Random(derive_seed(seed, "workload.draw"))
    n = steps if steps is not None else r.choice([120, 160, 200])
    return Drawn(
        seed=seed,
        steps=n,
        obs_tokens_mean=r.choice([300, 600, 1200, 2400]),
        obs_tokens_max=r.choice([4000, 8000, 16000]),
        facts_per_step=r.choice([0.5, 1.0, 2.0]),
        probe_every=r.choice([5, 8, 12]),
        lossiness=r.choice([0.0, 0.25, 0.5]),
        skew_s=r.choice([0.0, 30.0, 400.0]),
        calm_steps=max(10, n // 10),
    )


def make_workload(seed: int, steps: int | None = None, drawn: Drawn | None = None) -> Workload:
    """The workload of *seed* (or of explicitly drawn parameters)."""
    return Workload(drawn or draw(seed, steps))


# -- workloads reused within one process --------------------------------------------------------------
#: The most observation characters of generated workloads one process keeps for reuse.
WORKLOAD_MEMO_CHARS = 64 << 20
_SHARED: OrderedDict[tuple[int, int | None], Workload] = OrderedDict()
_SHARED_FILE: dict[str, tuple[tuple[int, int, int], FileWorkload]] = {}


def _chars_bound(d: Drawn) -> int:
    """An upper estimate of a workload's observation characters (sizes are clipped exponentials)."""
    return int(4.8 * (d.steps * (d.obs_tokens_mean + 20) + d.calm_steps * 100))


def shared_workload(seed: int, steps: int | None = None) -> Workload:
    """:func:`make_workload`, kept for reuse by the next caller in this process (a benchmark worker runs
    every design of a seed on it). Workloads are kept, least recently used first out, while their
    observations total at most :data:`WORKLOAD_MEMO_CHARS` characters; a longer one is generated lazily
    each time and never held (a 100,000-step workload stays one step at a time)."""
    key = (seed, steps)
    hit = _SHARED.get(key)
    if hit is not None:
        _SHARED.move_to_end(key)
        return hit
    w = make_workload(seed, steps)
    if _chars_bound(w.drawn) > WORKLOAD_MEMO_CHARS:
        return w
    _ = w.steps  # materialize once; every later cell iterates the kept steps
    _SHARED[key] = w
    while sum(_chars_bound(x.drawn) for x in _SHARED.values()) > WORKLOAD_MEMO_CHARS:
        _SHARED.popitem(last=False)
    return w


def shared_workload_file(path: str | os.PathLike[str]) -> FileWorkload:
    """:func:`load_workload_file`, read once per process while the file is unchanged (its size, inode
    and modification time); only the last file read is kept."""
    p = Path(path).resolve()
    try:
        st = p.stat()
    except OSError:
        return load_workload_file(path)  # reports the error
    stamp = (st.st_mtime_ns, st.st_size, st.st_ino)
    hit = _SHARED_FILE.get(str(p))
    if hit is not None and hit[0] == stamp:
        return hit[1]
    w = load_workload_file(path)
    _SHARED_FILE.clear()
    _SHARED_FILE[str(p)] = (stamp, w)
    return w


# -- a user's workload file -------------------------------------------------------------------------
#: The most lines a workload file may have, and the largest file.
MAX_WORKLOAD_LINES = 200_000
MAX_WORKLOAD_BYTES = 256 << 20


class WorkloadLine(BaseModel):
    """One line of a workload file: an observation, the fact tokens it carries, and an optional probe."""

    model_config = ConfigDict(extra="forbid", strict=True)

    observation: str = Field(max_length=1 << 20, description="the text the design observes at this step")
    facts: list[str] = Field(
        default_factory=list, max_length=1000, description="fact tokens, FACT-0001=amber"
    )
    probe: str | None = Field(default=None, description="a fact id seen at an earlier step")
    phase: Literal["load", "calm"] = Field(default="load", description="calm: the liveness tail")
    turn_id: str | None = Field(
        default=None, min_length=1, max_length=200, description="this line's turn id (conversation files)"
    )
    evidence: list[str] | None = Field(
        default=None, max_length=1000, description="turn ids of earlier lines a probe needs"
    )
    question: str | None = Field(
        default=None, min_length=1, max_length=1 << 16, description="a probe's question text"
    )
    answer: str | None = Field(default=None, max_length=1 << 16, description="a probe's gold answer")


class FileWorkload(Workload):
    """A workload read from a JSONL file (validated when loaded; the steps are kept)."""

    def __init__(self, drawn: Drawn, steps: tuple[WorkStep, ...], path: str) -> None:
        super().__init__(drawn)
        self._steps = steps
        self.path = path

    def __repr__(self) -> str:
        return f"FileWorkload({self.path!r}, {len(self._steps or ())} steps)"


#: The rule a fact token follows (:data:`sim.text.FACT_RE`), as the error for one that does not says it.
FACT_RULE = "FACT- then at least 4 digits, '=', then a value of lower-case letters a-z only (FACT-0001=amber)"


def parse_workload_line(raw: bytes, where: str) -> WorkloadLine:
    """One non-blank line of a workload file, validated (one-line errors prefixed by *where*): a JSON
    object of :class:`WorkloadLine`'s fields, its fact tokens and probe well formed."""
    from pydantic import ValidationError

    from sim.errors import UsageError
    from sim.limits import MAX_DEPTH, depth
    from sim.text import FACT_RE

    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise UsageError(f"{where}: not a JSON object: {exc}") from exc
    if not isinstance(data, dict) or depth(data) > MAX_DEPTH:
        raise UsageError(f"{where}: expected one JSON object per line")
    try:
        line = WorkloadLine.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ".".join(str(x) for x in err["loc"]) or "line"
        raise UsageError(f"{where}: {loc}: {err['msg']}") from exc
    for f in line.facts:
        if not FACT_RE.fullmatch(f):
            raise UsageError(f"{where}: facts: {f!r} is not a fact token: {FACT_RULE}")
    if line.probe is not None and not re.fullmatch(r"FACT-\d{4,}", line.probe):
        raise UsageError(
            f"{where}: probe: {line.probe!r} is not a fact id: FACT- then at least 4 digits (FACT-0001)"
        )
    return line


def line_observation(line: WorkloadLine) -> str:
    """The text a line's step observes: its observation with each fact token it lacks appended."""
    obs = line.observation
    for f in line.facts:
        if f not in obs:
            obs = f"{obs} {f}" if obs else f
    return obs


def check_workload_file(path: str | os.PathLike[str]) -> Path:
    """*path* as a readable regular workload file within :data:`MAX_WORKLOAD_BYTES` (one-line errors)."""
    from sim.errors import UsageError

    p = Path(path)
    try:
        st = p.stat()
    except OSError as exc:
        raise UsageError(f"cannot read workload {path}: {exc.strerror or exc}") from exc
    if not stat.S_ISREG(st.st_mode):
        raise UsageError(f"workload {path} is not a regular file")
    if st.st_size > MAX_WORKLOAD_BYTES:
        raise UsageError(f"workload {path} is over the {MAX_WORKLOAD_BYTES:,}-byte limit")
    return p


def iter_workload_lines(path: str | os.PathLike[str]) -> Iterator[tuple[str, int, WorkloadLine]]:
    """Each non-blank line of the workload file *path*, validated: ``(where, line number, line)``, where
    *where* (``workload F line 3``) prefixes the caller's own one-line errors about that line."""
    from sim.errors import UsageError
    from sim.limits import BOM

    p = check_workload_file(path)
    try:
        fh = open(p, "rb")  # noqa: SIM115 (closed by the with below)
    except OSError as exc:
        raise UsageError(f"cannot read workload {path}: {exc.strerror or exc}") from exc
    with fh:
        for lineno, raw in enumerate(fh, 1):
            if lineno > MAX_WORKLOAD_LINES:
                raise UsageError(f"workload {path} has more than {MAX_WORKLOAD_LINES:,} lines")
            if raw.strip():
                where = f"workload {path} line {lineno}"
                yield where, lineno, parse_workload_line(raw.removeprefix(BOM) if lineno == 1 else raw, where)


def load_workload_file(path: str | os.PathLike[str]) -> FileWorkload:
    """Read and validate a JSONL workload (line-numbered one-line errors); see README "The benchmark".

    A fact token missing from its observation text is appended to it; a probe must name a fact id
    carried by an earlier line. Lines marked ``"phase": "calm"`` form the liveness tail.
    """
    from sim.errors import UsageError

    steps: list[WorkStep] = []
    seen: set[str] = set()
    sizes: list[int] = []
    n_facts = 0
    probes: list[int] = []
    for where, _lineno, line in iter_workload_lines(path):
        obs = line_observation(line)
        if line.probe is not None:
            if line.probe not in seen:
                raise UsageError(f"{where}: probe: {line.probe} was not carried by an earlier line")
            probes.append(len(steps))
        question = f"Question: what is the value of {line.probe}?" if line.probe else ""
        steps.append(WorkStep(len(steps), obs, tuple(line.facts), line.probe, question, line.phase))
        seen |= {f.split("=")[0] for f in line.facts}
        sizes.append(len(obs) // 4)
        n_facts += len(line.facts)
    if not steps:
        raise UsageError(f"workload {path} has no steps")
    calm = sum(1 for s in steps if s.phase == "calm")
    gaps = [b - a for a, b in itertools.pairwise(probes)]
    drawn = Drawn(
        seed=0,
        steps=len(steps) - calm,
        obs_tokens_mean=int(sum(sizes) / len(sizes)),
        obs_tokens_max=max(sizes),
        facts_per_step=round(n_facts / len(steps), 3),
        probe_every=int(sum(gaps) / len(gaps)) if gaps else 0,
        lossiness=0.0,
        skew_s=0.0,
        calm_steps=calm,
    )
    return FileWorkload(drawn, tuple(steps), str(Path(path)))


@dataclass(frozen=True)
class ModelRequest:
    """What a design sends to the model at one step: the parts (messages), its own estimate, a route, and
    the part indices it marks with ``cache_control`` (*breakpoints*: what a provider's prompt cache keys on
    when ``--provider anthropic`` is selected; empty for a design whose upstream sends none), and *exact*:
    the exact cl100k count of the parts (the sum of their counts) when the design has counted them already
    (its own per-message counts), so the conversation runner does not count the same texts again; None:
    the runner counts them (:func:`sim.conversations.metrics.request_tokens`)."""

    parts: tuple[str, ...]
    estimate: int | None
    route: str
    breakpoints: tuple[int, ...] = ()
    exact: int | None = None
    #: The parts' counts when the design keeps them as running totals (issue 42): :func:`drive` then
    #: records the request from them (:meth:`sim.engine.Simulation.request_counted`, the same record)
    #: without reading the parts, unless a provider's cache must see their texts.
    counted: RequestCount | None = None


@dataclass(frozen=True)
class RequestCount:
    """A request's parts as :meth:`sim.engine.Simulation.request` would count them: the sum of their exact
    cl100k counts, the fact ids present in any of them, and how many parts there are."""

    tokens: int
    facts: frozenset[str]
    parts: int


@dataclass(frozen=True)
class StorageStats:
    """A design's durable footprint after a run."""

    durable_bytes: int
    bytes_written: int
    ops: int


class DesignAdapter(Protocol):
    """The contract of a design's benchmark adapter (the class its ``Design.adapter`` names).

    ``__init__(sim, budget, drawn, *, variant, knobs)`` builds the design in *sim* with a provider
    window of *budget* tokens, as *variant* (a :class:`~sim.variant.Variant` of the design's declared
    switches) with *knobs* (an instance of the design's knob model); ``step(step)`` applies one workload
    step with the design's own mechanics and returns the request the model sees for it;
    ``storage()`` reports the durable footprint. Conventions (checked by
    :func:`sim.testing.check_adapter`):

    * ``name`` is the design's registered name;
    * one :class:`ModelRequest` per step, and the probe question (if any) is inside that request;
    * the adapter does not record requests itself (:func:`drive` records each one in ``sim.trace``);
    * ``estimate`` is the design's own token estimate of the request, or None if it makes none;
    * randomness only from ``sim.rng("<design>.adapter.<purpose>")``, time only from ``sim``;
    * the same seed gives the same requests.

    Optional, for the conversation benchmark: ``lost_reason(turn_id)`` (where a lost evidence turn went)
    and ``ranking()`` (the last question's ranking of every indexed turn or session, best first, for the
    retrieval metrics of :mod:`sim.conversations.retrieval`).
    """

    name: str

    def step(self, step: WorkStep) -> ModelRequest: ...

    def storage(self) -> StorageStats: ...


AdapterFactory = type


def run_adapter(factory: type, sim: Simulation, workload: Workload, budget: int) -> list[ModelRequest]:
    """Drive *factory*'s adapter through *workload*, recording each request; returns the requests."""
    out: list[ModelRequest] = []
    drive(factory(sim, budget, workload.drawn), sim, workload, lambda step, req, rec: out.append(req))
    return out


def workload_fingerprint(workload: Workload) -> str:
    """A short digest of a workload's steps (for logs and results)."""
    import hashlib

    h = hashlib.sha256()
    for s in workload.iter_steps():
        h.update(f"{s.index}\x00{s.observation}\x00{s.probe}\x00{s.phase}\n".encode())
    return h.hexdigest()[:12]


def drive(
    adapter: DesignAdapter,
    sim: Simulation,
    workload: Workload,
    on_request: Callable[[WorkStep, ModelRequest, RequestRecord], None] | None = None,
) -> int:
    """Drive an adapter through *workload*, recording each request in ``sim.trace``; returns the steps.

    Nothing is kept here: *on_request* sees each step, request and record as it happens (metrics are
    accumulated by the caller), so a 100,000-step run holds one step at a time.
    """
    n = 0
    for step in workload.iter_steps():
        req = adapter.step(step)
        needed = frozenset({step.probe}) if step.probe else frozenset()
        c = req.counted
        if c is not None and sim.cache is None:  # the design's running counts: parts built only if read
            rec = sim.request_counted(
                adapter.name, req.route, exact_tokens=c.tokens, parts=c.parts, facts=c.facts,
                estimate=req.estimate, needed=needed, step=step.index, phase=step.phase,
            )  # fmt: skip
        else:
            rec = sim.request(
                adapter.name, req.route, req.parts, estimate=req.estimate, breakpoints=req.breakpoints,
                needed=needed, step=step.index, phase=step.phase,
            )  # fmt: skip
        if on_request is not None:
            on_request(step, req, rec)
        n += 1
    return n
