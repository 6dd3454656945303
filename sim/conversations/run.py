"""Each real conversation through each design, as the conversation it is (issue 28).

For every instance (:class:`~sim.conversations.model.Instance`) and design variant, at each window, a
fresh :class:`~sim.engine.Simulation` builds the design's benchmark adapter (the same contract and
constructor as the fact-token benchmark: :class:`sim.workload.DesignAdapter`) and drives it with one
:class:`~sim.workload.WorkStep` per turn, in dataset order, and one per question at its ``after_turn``
position (:func:`conversation_steps`). Before a step the simulation clock advances to the step's date
(``max(now, date - first date)``: the instance's first dated step is time 0), so designs that order
by time (page mtimes, time-stamped keys) see the dataset's gaps. A step carries the turn's text
unchanged, its id, session, role, speaker and date; a question step carries the question's text and id
and nothing else: **evidence labels and gold answers never reach an adapter** (the runner keeps the
:class:`~sim.conversations.model.Question` objects and scores the returned request with
:class:`~sim.conversations.metrics.Scorer`).

Questions are independent: a built-in adapter answers a question step from its memory as the turns
left it, without keeping the question (LoCoMo asks about 200 questions after one conversation). A
plugin adapter answers through its ``step`` as it would a probe, and what it keeps of the question is
its own (documented in DESIGN.md).

A work unit is one instance and one design variant, at every window (:class:`ConvTask`); units run in
this process, local workers or Dask (:func:`sim.bench.executors.run_sweep`), and the rows come back in
task order, so ``--workers N`` and ``--executor dask`` give the same rows. Each process reads the
workload file forward once (:func:`instance_at`), whatever units it runs.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sim.bench.tasks import ORACLE, DesignSpec, Task
from sim.cache import ProviderConfig
from sim.conversations.baselines import BASELINES, FullPrefix, baseline_request
from sim.conversations.cost import Meter
from sim.conversations.metrics import Scorer
from sim.conversations.model import Instance
from sim.conversations.retrieval import metrics as retrieval_metrics
from sim.conversations.retrieval import ranking_of
from sim.conversations.roles import Roles
from sim.conversations.window import enforce_window, evidence_ids
from sim.engine import Simulation
from sim.workload import Drawn, WorkStep


def conversation_steps(instance: Instance) -> Iterator[WorkStep]:
    """The instance as workload steps: each turn, and each question at its ``after_turn`` position (in
    file order among questions at the same position). No step carries a label or an answer."""
    at: dict[int, list[int]] = {}
    for k, q in enumerate(instance.questions):
        at.setdefault(q.after_turn, []).append(k)
    index = 0
    session: str | None = None
    n = len(instance.turns)
    for pos in range(n + 1):
        for k in at.get(pos, ()):
            q = instance.questions[k]
            yield WorkStep(index, "", probe=q.question_id, question=q.question, time_s=q.time_s,
                           question_id=q.question_id)  # fmt: skip
            index += 1
        if pos == n:
            break
        t = instance.turns[pos]
        new = t.session_id != session or pos == 0
        session = t.session_id
        yield WorkStep(index, t.text, turn_id=t.turn_id, session_id=t.session_id, role=t.role,
                       speaker=t.speaker, time_s=t.time_s, new_session=new)  # fmt: skip
        index += 1


def drawn_for(instance: Instance) -> Drawn:
    """The :class:`~sim.workload.Drawn` an adapter is built with: nothing drawn (no lossiness, no skew),
    the instance's turn count and mean size (characters / 4)."""
    n = len(instance.turns)
    sizes = [len(t.text) // 4 for t in instance.turns] or [0]
    return Drawn(seed=instance.index, steps=n, obs_tokens_mean=sum(sizes) // len(sizes),
                 obs_tokens_max=max(sizes), facts_per_step=0.0, probe_every=0, lossiness=0.0,
                 skew_s=0.0, calm_steps=0)  # fmt: skip


def _first_time(instance: Instance) -> int | None:
    for t in instance.turns:
        if t.time_s is not None:
            return t.time_s
    times = [q.time_s for q in instance.questions if q.time_s is not None]
    return min(times) if times else None


def build_adapter(spec: DesignSpec, sim: Simulation, budget: int, drawn: Drawn) -> Any:
    """*spec*'s adapter (its variant and knobs) in *sim* at window *budget*."""
    from sim.registry import design

    d = design(spec.design)
    knobs = d.parse_knobs(spec.knob_dict)
    return d.adapter_class()(sim, budget, drawn, variant=spec.variant, knobs=knobs)


def run_design(
    instance: Instance,
    spec: DesignSpec,
    budget: int,
    scorer: Scorer | None = None,
    provider: ProviderConfig | None = None,
    costs: list[dict[str, Any]] | None = None,
) -> list[dict[str, Any]]:
    """Drive *spec*'s design through *instance* at window *budget*; one row per question. With a
    *provider* each question's request is priced (:mod:`sim.conversations.cost`): its row gains the
    charge, and the instance's totals are appended to *costs*."""
    scorer = scorer or Scorer(instance)
    sim = Simulation(instance.index, keep_trace=False)
    meter = Meter(provider, budget, spec.label) if provider is not None else None
    try:
        adapter = build_adapter(spec, sim, budget, drawn_for(instance))
        explain = getattr(adapter, "lost_reason", None)
        session_of = {t.turn_id: t.session_id for t in instance.turns}
        t0 = _first_time(instance)
        rows: list[dict[str, Any]] = []
        for step in conversation_steps(instance):
            if step.time_s is not None and t0 is not None and step.time_s - t0 > sim.now:
                sim.run(until=step.time_s - t0)
            req = adapter.step(step)
            if step.question_id is None:
                continue
            q = scorer.questions[step.question_id]
            parts = tuple(req.parts)
            tokens = req.exact if getattr(req, "exact", None) is not None else scorer.tokens(parts)
            row = scorer.score(q, spec.label, budget, parts, tokens, explain)
            row.update(retrieval_metrics(ranking_of(adapter), q.evidence, session_of))
            if meter is not None:
                row.update(
                    meter.charge(req.route, parts, scorer.counts(parts), tokens, req.breakpoints, sim.now)
                )
            rows.append(row)
        if meter is not None and costs is not None:
            costs.append(meter.row(instance.workload, instance.instance_id, spec.label))
        return rows
    finally:
        sim.close()


def _question_times(instance: Instance) -> list[float]:
    """Per question, the simulation time a design's clock shows when it is asked (the latest dated step
    before it, relative to the instance's first date; 0 without dates)."""
    t0 = _first_time(instance)
    if t0 is None:
        return [0.0] * len(instance.questions)
    latest = [0.0]
    for t in instance.turns:
        latest.append(max(latest[-1], float(t.time_s - t0) if t.time_s is not None else 0.0))
    out = []
    n = len(instance.turns)
    for q in instance.questions:
        now = latest[len(range(n)[: q.after_turn])]
        if q.time_s is not None:
            now = max(now, float(q.time_s - t0))
        out.append(now)
    return out


def run_baseline(
    instance: Instance,
    name: str,
    budgets: tuple[int, ...],
    scorer: Scorer | None = None,
    provider: ProviderConfig | None = None,
    costs: list[dict[str, Any]] | None = None,
) -> list[dict[str, Any]]:
    """Baseline *name*'s rows for every question of *instance* at every window (one request each). A
    baseline's request does not depend on the window: each question is built and scored once, and its row
    repeated per window with the window's own ``budget`` and ``over_window`` (and, with a *provider*, the
    window's own charge: what is refused, and so what the cache holds, depends on the window)."""
    scorer = scorer or Scorer(instance)
    first = budgets[0] if budgets else 0
    full = FullPrefix(instance) if name == "full" else None
    base = []
    requests = []
    for q in instance.questions:
        if full is not None:
            parts, tokens = full.request(q)
        else:
            parts = baseline_request(name, instance, q)
            tokens = scorer.tokens(parts)
        row = scorer.score(q, name, first, parts, tokens)
        row.update(retrieval_metrics(None, q.evidence, {}))
        base.append(row)
        if provider is not None:
            requests.append(parts)
    times = _question_times(instance) if provider is not None else []
    rows = []
    for b in budgets:
        meter = Meter(provider, b, name) if provider is not None else None
        for k, r in enumerate(base):
            row = dict(r)
            row["budget"], row["over_window"] = b, int(row["request_tokens"] > b)
            if meter is not None:
                parts = requests[k]
                row.update(
                    meter.charge("baseline", parts, scorer.counts(parts), row["request_tokens"], (), times[k])
                )
            rows.append(row)
        if meter is not None and costs is not None:
            costs.append(meter.row(instance.workload, instance.instance_id, name))
    return rows


def run_instance(
    instance: Instance,
    spec: DesignSpec,
    budgets: tuple[int, ...],
    provider: ProviderConfig | None = None,
    costs: list[dict[str, Any]] | None = None,
) -> list[dict[str, Any]]:
    """Every row of one work unit: *instance* through *spec* (a design or a baseline) at each window,
    the window enforced (:func:`sim.conversations.window.enforce_window`: a request over it delivers
    nothing), priced by *provider* (the per-instance totals appended to *costs*) when one is given."""
    scorer = Scorer(instance)
    if spec.design in BASELINES:
        rows = run_baseline(instance, spec.design, budgets, scorer, provider, costs)
    else:
        rows = [r for b in budgets for r in run_design(instance, spec, b, scorer, provider, costs)]
    evidence = evidence_ids(instance)
    return [enforce_window(r, evidence[r["question_id"]]) for r in rows]


# -- the instances of a file, read forward once per process --------------------------------------------
_CURSOR: dict[str, Any] = {}


def _iter_instances(kind: str, path: str) -> Iterator[Instance]:
    """The loader's stream (:func:`sim.conversations.formats.iter_instances`)."""
    from sim.conversations.formats import iter_instances

    return iter_instances(kind, Path(path))


def _stamp(path: str) -> tuple[int, int, int]:
    st = os.stat(path)
    return (st.st_mtime_ns, st.st_size, st.st_ino)


def instance_at(kind: str, path: str, index: int) -> Instance:
    """Instance *index* of the file, from a stream this process keeps open: units asked for in file
    order (the sweep's order) read the file once; an earlier index restarts the stream."""
    key = (kind, path, _stamp(path))
    cur = _CURSOR.get("key")
    if cur != key or _CURSOR["last"] is None or index < _CURSOR["last"].index:
        _CURSOR.update(key=key, it=_iter_instances(kind, path), last=None)
    last: Instance | None = _CURSOR["last"]
    while last is None or last.index < index:
        last = next(_CURSOR["it"], None)
        if last is None:
            break
        _CURSOR["last"] = last
    if last is None or last.index != index:
        from sim.errors import UsageError

        raise UsageError(f"workload {path} has no instance {index} (it changed during the run?)")
    return last


def count_instances(
    kind: str,
    path: str,
    *,
    progress: bool = False,
    errata: list[dict[str, str]] | None = None,
    lengths: list[int] | None = None,
) -> int:
    """Read (and so validate) every instance once; how many there are. A bad instance raises the
    loader's :class:`~sim.errors.UsageError` before any unit runs. With *progress* (and a terminal) a
    status line counts the instances read (a 1.5 GB file takes a while). The evidence ids a loader
    dropped as errata (:attr:`Instance.dropped`) are appended to *errata* and named in one
    ``memsim: warning:`` line on stderr. Each instance's length (:func:`sim.conversations.windows.
    instance_tokens`) is appended to *lengths* when given, so fitting windows needs no second read."""
    import sys

    found: list[dict[str, str]] = []

    def note(inst: Instance) -> None:
        found.extend({"instance": inst.instance_id, "question": q, "evidence": e} for q, e in inst.dropped)
        if lengths is not None:
            from sim.conversations.windows import instance_tokens

            lengths.append(instance_tokens(inst))

    n = 0
    if not (progress and sys.stderr.isatty()):
        for inst in _iter_instances(kind, path):
            n += 1
            note(inst)
        if progress:  # after the file is read whole: a bad file stays one error line
            from sim.progress import phase

            phase(f"read {Path(path).name}: {n:,} instances")
    else:
        from rich.console import Console

        with Console(stderr=True).status(f"reading {Path(path).name}") as status:
            for inst in _iter_instances(kind, path):
                n += 1
                note(inst)
                status.update(
                    f"reading {Path(path).name}: {n:,} instances, {len(inst.turns):,} turns in the last"
                )
    if found:
        from sim.provenance import errata_warning

        print(errata_warning(found, path), file=sys.stderr)
    if errata is not None:
        errata.extend(found)
    return n


@dataclass(frozen=True)
class ConvTask(Task):
    """One work unit: instance ``seed`` of the file *path* (format *kind*) through ``spec`` at every
    window of *budgets* (``budget`` is the first, for the queue)."""

    kind: str = ""
    path: str = ""
    budgets: tuple[int, ...] = ()
    #: The speaker roles of a two-person corpus (``--roles``, :mod:`sim.conversations.roles`), or "".
    roles: str = ""

    def affinity(self) -> Any:
        """One instance of the file: its units run together, and a worker moves on instance after
        instance, reading the file forward (:func:`instance_at`) as one worker does."""
        return (self.path, self.seed)

    def run_cell(self) -> dict[str, Any]:
        """The unit's rows under ``questions`` (and the fields the sweep's bookkeeping reads)."""
        import importlib

        importlib.import_module("sim.registry")
        t0 = time.perf_counter()
        inst = instance_at(self.kind, self.path, self.seed)
        if self.roles:
            from sim.conversations.roles import apply_roles, parse_roles

            inst = apply_roles(inst, parse_roles(self.roles))
        assert self.spec is not None
        costs: list[dict[str, Any]] = []
        rows = run_instance(inst, self.spec, self.budgets, self.provider, costs)
        return {"design": self.design, "budget": self.budget, "seed": self.seed, "recall": None,
                "seconds": round(time.perf_counter() - t0, 3), "questions": rows, "costs": costs}  # fmt: skip


def baseline_specs() -> list[DesignSpec]:
    return [DesignSpec(b, b) for b in BASELINES]


def conversation_tasks(
    specs: list[DesignSpec],
    budgets: list[int],
    kind: str,
    path: str,
    instances: int,
    provider: ProviderConfig | None = None,
    roles: Roles | None = None,
) -> list[ConvTask]:
    """The units, instance-major: every design variant (the fact benchmark's oracle replaced by the three
    baselines) for each instance of the file, its turns in *roles* (a two-person corpus), each priced by
    *provider* when one is given."""
    designs = [s for s in specs if s.design != ORACLE] + baseline_specs()
    bl = tuple(budgets)
    rt = roles.text() if roles is not None else ""
    return [
        ConvTask(
            s.label, bl[0], i, None, s, path, provider=provider, kind=kind, path=path, budgets=bl, roles=rt
        )
        for i in range(instances)
        for s in designs
    ]


def run_conversations(
    specs: list[DesignSpec],
    budgets: list[int],
    kind: str,
    path: str,
    *,
    workers: int = 1,
    executor: str = "local",
    scheduler: str | None = None,
    progress: bool = False,
    aside: Any = None,
    provider: ProviderConfig | None = None,
    costs: list[dict[str, Any]] | None = None,
    errata: list[dict[str, str]] | None = None,
    roles: Roles | None = None,
    instances: int | None = None,
) -> list[dict[str, Any]]:
    """Every question row of the file through every design variant and baseline, in task order; the
    turns of a two-person corpus in *roles* (None: the default of
    :func:`sim.conversations.roles.roles_for`). With a *provider* the per-instance cost rows are appended
    to *costs*; the evidence ids the loader dropped as errata are appended to *errata* (and named in one
    stderr warning line). *instances*: the file's instance count when already read (else, or when
    *errata* are asked for, it is read and validated here)."""
    from sim.bench.executors import run_sweep
    from sim.conversations.roles import roles_for

    roles = roles if roles is not None else roles_for(kind, None)
    if instances is None or errata is not None:
        instances = count_instances(kind, path, progress=progress, errata=errata)
    n = instances
    tasks: list[Task] = list(conversation_tasks(specs, budgets, kind, path, n, provider, roles))
    cells = run_sweep(tasks, workers=workers, executor=executor, scheduler=scheduler, progress=progress,
                      aside=aside)  # fmt: skip
    if costs is not None:
        costs.extend(c for cell in cells for c in cell.get("costs", ()))
    return [r for c in cells for r in c["questions"]]
