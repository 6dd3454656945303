"""The ``memsim`` command line.

Exit codes are a contract (README, "Exit codes"): 0 every verdict as expected; 1 a verdict failed (a claim
direction came out wrong, a replay differs or does not reproduce, a fault never fired); 2 bad input (one
``memsim: error:`` line on stderr, nothing on stdout, nothing written); 130 interrupted (one line, partial
outputs removed; SIGTERM is handled the same way and exits 143). An internal error (a bug) is one line and
exit code 1. Set ``MEMSIM_DEBUG=1`` to see tracebacks of internal errors.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer

from sim.console import plain_metavars
from sim.errors import MemsimError, UsageError

EXIT_OK, EXIT_VERDICT, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130
#: SIGTERM (``timeout``, a cancelled CI job, ``kill``): cleaned up as Ctrl-C is, exit 128 + 15.
EXIT_TERMINATED = 143
#: The reader of stdout went away (``memsim claims | head``): quiet, as a SIGPIPE would end it, 128 + 13.
EXIT_PIPE = 141

HELP = (
    "memsim: an executable reference simulator of agent-memory designs (the installed designs: "
    "`memsim doc systems`).\n\n"
    "Exit codes: 0 every verdict as expected; 1 a verdict failed (a claim direction, a replay, a fault "
    "that never fired) or an internal error; 2 bad input (one line on stderr, nothing written); 130 "
    "interrupted (Ctrl-C; 143 for SIGTERM), partial outputs removed."
)


plain_metavars()
app = typer.Typer(
    name="memsim",
    help=HELP,
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)
new_app = typer.Typer(
    help="Create a new design package (see DESIGN.md, 'Adding a design').", no_args_is_help=True
)
app.add_typer(new_app, name="new")
workload_app = typer.Typer(
    help="Conversation workload files (docs/conversations.md, 'Synthetic files').", no_args_is_help=True
)
app.add_typer(workload_app, name="workload")


class Interrupted(MemsimError):
    """Ctrl-C (or SIGTERM) inside a command (outputs are already removed when this reaches main)."""

    def __init__(self, message: str = "interrupted", code: int = EXIT_INTERRUPTED) -> None:
        super().__init__(message)
        self.code = code


class PipeClosed(MemsimError):
    """The reader of stdout went away (click would turn this into exit code 1, a failed verdict)."""


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the process is, like Ctrl-C: every cleanup that Ctrl-C runs runs for it."""


def _on_sigterm(signum: int, frame: object) -> None:
    raise Terminated()


class VerdictFailed(Exception):
    """A verdict came out wrong: exit code 1, after the command printed its report."""


F = TypeVar("F", bound=Callable[..., Any])


def _command(fn: F) -> F:
    """Turn Ctrl-C inside a command into :class:`Interrupted` (click would print a blank line first), and
    a closed stdout pipe into :class:`PipeClosed` (click would exit 1)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except Terminated:
            raise Interrupted("terminated", EXIT_TERMINATED) from None
        except KeyboardInterrupt:
            raise Interrupted("interrupted") from None
        except BrokenPipeError:
            raise PipeClosed() from None

    return wrapper  # type: ignore[return-value]


def _version(value: bool) -> None:
    if value:
        from sim import __version__

        typer.echo(f"memsim {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """memsim's commands."""


def _err(msg: str) -> None:
    """The one error line: whitespace folded, control characters (a terminal escape in a file name or an
    option) shown escaped rather than sent to the terminal."""
    sys.stderr.write(f"memsim: error: {_one_line(msg)}\n")


def _one_line(msg: str) -> str:
    text = " ".join(msg.split())
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def _warn_broken_plugins() -> None:
    """One line per installed plugin this command skipped because it failed to load (a command that named
    one was refused with its error instead, as the exit-2 line)."""
    from sim.registry import broken

    for dist, error in broken().items():
        _warn(f"plugin {dist} was skipped: {error}")


def _warn(msg: str) -> None:
    sys.stderr.write(f"memsim: warning: {_one_line(msg)}\n")


def _parse_param(values: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for v in values:
        if "=" not in v:
            raise UsageError(f"--param takes KEY=VALUE, not {v!r}")
        k, raw = v.split("=", 1)
        if not k:
            raise UsageError(f"--param {v!r} has no key")
        from sim.values import parse_cli_value

        out[k] = parse_cli_value(raw, f"--param {k}")
    return out


# -- run --------------------------------------------------------------------------------------------
@app.command()
@_command
def run(
    scenario: Annotated[
        str,
        typer.Argument(
            metavar="SCENARIO",
            help="A scenario name (`memsim doc scenarios`), a .py script or a .toml scenario file.",
        ),
    ],
    seed: Annotated[
        int | None,
        typer.Option(metavar="N", min=0, max=2**63 - 1, help="Run seed (default: the scenario's SEED)."),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(metavar="DIR", help="Directory for the trace DIR/NAME.db (default: no trace file)."),
    ] = None,
    fault: Annotated[
        list[str] | None,
        typer.Option(
            "--fault",
            metavar="SPEC",
            help="Inject a fault, e.g. crash@POINT or skew:bob=-600 (repeatable; `memsim doc faults`).",
        ),
    ] = None,
    store: Annotated[
        str | None,
        typer.Option(
            metavar="KIND",
            help="Object store: memory, moto, moto-server or an http(s):// endpoint URL (scenarios with a store only).",
        ),
    ] = None,
    param: Annotated[
        list[str] | None,
        typer.Option(
            "--param",
            metavar="KEY=VALUE",
            help="Override a scenario parameter (repeatable; `memsim doc params SCENARIO`).",
        ),
    ] = None,
    html: Annotated[
        bool, typer.Option("--html", help="Also write DIR/NAME.html, the run's report page (needs --out).")
    ] = False,
) -> None:
    """Run a scenario and print its deterministic summary (the trace goes to --out)."""
    from sim import scenario_core as sc
    from sim.outputs import Outputs

    outputs = Outputs()
    out_dir = outputs.dir(out) if out is not None else None
    if html and out_dir is None:
        raise UsageError("--html needs --out DIR")
    overrides = _parse_param(param or [])
    if scenario.endswith(".toml"):
        spec, scen = sc.load_file(scenario)
        params = {**spec.params, **overrides}
        seed = spec.seed if seed is None else seed
        faults = [*spec.faults, *(fault or [])]
        store = store or spec.store
    else:
        scen, params, faults = sc.resolve(scenario), overrides, list(fault or [])
    plan = sc.plan(scen, seed=seed, faults=faults, store=store, params=params)
    trace_path = out_dir / f"{scen.name}.db" if out_dir is not None else None
    if trace_path is not None:
        outputs.file(trace_path, "trace")
    if html and out_dir is not None:
        outputs.file(out_dir / f"{scen.name}.html", "--html")
    with outputs.transaction():
        from sim.progress import run_progress

        with run_progress(scen.name, enabled=True) as hook:
            plan_root = (out_dir / f"{scen.name}-root") if out_dir is not None else None
            result = sc.run_plan(plan, trace_path=trace_path, root=plan_root, outputs=outputs, progress=hook)
        if html and trace_path is not None:
            from sim.report import render_run

            outputs.write_text(out_dir / f"{scen.name}.html", render_run(outputs.staged_path(trace_path)))  # type: ignore[operator]
    for line in result.lines:
        typer.echo(line)
    if trace_path is not None:
        sys.stderr.write(f"trace: {trace_path}\n")
    for problem in result.unfired:
        _err(problem)
    if result.unfired:
        raise VerdictFailed()


# -- claims -----------------------------------------------------------------------------------------
@app.command()
@_command
def claims(
    system: Annotated[str | None, typer.Option(metavar="DESIGN", help="Only this design's claims.")] = None,
    profile: Annotated[
        str, typer.Option(metavar="NAME", help="Hypothesis profile: quick, ci or thorough.")
    ] = "ci",
    claim: Annotated[
        list[str] | None, typer.Option("--claim", metavar="ID", help="Only these claim ids (repeatable).")
    ] = None,
    json_out: Annotated[
        Path | None, typer.Option("--json", metavar="FILE", help="Write the ledger as JSON here.")
    ] = None,
    markdown: Annotated[
        Path | None, typer.Option(metavar="FILE", help="Write the ledger as Markdown here.")
    ] = None,
    save: Annotated[
        Path | None,
        typer.Option(metavar="DIR", help="Save each shrunk counterexample here, for `memsim replay`."),
    ] = None,
    html: Annotated[
        Path | None, typer.Option(metavar="FILE", help="Write the ledger's report page here.")
    ] = None,
    seed: Annotated[int, typer.Option(metavar="N", min=0, max=2**32 - 1, help="Search seed.")] = 0,
    workers: Annotated[
        int, typer.Option(metavar="N", min=1, max=64, help="Worker processes (results do not depend on it).")
    ] = 1,
    exhaustive: Annotated[
        bool,
        typer.Option(
            "--exhaustive",
            help="Run every case of each claim's declared scope (size first): minimal counterexamples, "
            "and fixes that hold for all of it.",
        ),
    ] = False,
    scope: Annotated[
        str | None,
        typer.Option(
            metavar="N|deep",
            help="With --exhaustive: bound every sequence to N (1-12), or deep: each claim's bounds doubled.",
        ),
    ] = None,
    resume: Annotated[
        Path | None,
        typer.Option(metavar="DIR", help="With --exhaustive: save progress here, and continue from it."),
    ] = None,
    executor: Annotated[
        str, typer.Option(metavar="NAME", help="With --exhaustive: local (processes) or dask.")
    ] = "local",
) -> None:
    """Run every claim four ways: faithful and off must fail (shrunk), fixed and all fixes combined must hold."""
    from sim.ledger_cli import run_claims

    ok = run_claims(
        system=system, profile=profile, claim=claim, json_out=json_out, markdown=markdown, save=save,
        html=html, seed=seed, workers=workers, exhaustive=exhaustive, scope=scope, resume=resume,
        executor=executor, progress=True,
    )  # fmt: skip
    if not ok:
        raise VerdictFailed()


# -- replay -----------------------------------------------------------------------------------------
@app.command()
@_command
def replay(
    path: Annotated[
        Path, typer.Argument(metavar="FILE", help="A saved claim example (.json) or a scenario trace (.db).")
    ],
    out: Annotated[
        Path | None,
        typer.Option(metavar="DIR", help="Directory for the replayed trace (default: beside FILE)."),
    ] = None,
    variant: Annotated[
        str | None,
        typer.Option(
            metavar="DIRECTION",
            help="Claim examples only: faithful, fixed, off or combined (default: as saved).",
        ),
    ] = None,
    store: Annotated[
        str | None,
        typer.Option(
            metavar="KIND",
            help="Traces only: the store to rerun on (default memory; the trace's own is never used).",
        ),
    ] = None,
    scenario: Annotated[
        str | None, typer.Option(metavar="PATH", help="Traces of script scenarios: the script to rerun.")
    ] = None,
    real: Annotated[
        bool,
        typer.Option(
            "--real", help="Claim examples only: replay on the design's real system, if it declares one."
        ),
    ] = False,
) -> None:
    """Rerun a saved counterexample or a scenario trace deterministically; exit 1 if it does not reproduce."""
    from sim import replay as rp
    from sim.limits import require_file
    from sim.outputs import Outputs

    outputs = Outputs()
    if out is not None:
        out = outputs.dir(out)
    require_file(path, "replay input")
    if rp.is_trace(path):
        if variant is not None or real:
            raise UsageError("--variant and --real apply to saved claim examples, not to traces")
        ok = rp.replay_trace(path, out=out, store=store, script=scenario, outputs=outputs)
    else:
        if store is not None or scenario is not None:
            raise UsageError("--store and --scenario apply to traces, not to saved claim examples")
        if real:
            from sim.transfer import transfer_cli

            ok = transfer_cli(path, variant=variant)
        else:
            ok = rp.replay_example(path, out=out, variant=variant, outputs=outputs)
    if not ok:
        raise VerdictFailed()


# -- doc --------------------------------------------------------------------------------------------
@app.command()
@_command
def doc(
    topic: Annotated[
        str,
        typer.Argument(
            metavar="TOPIC",
            help="systems, operations, faults, claims, scenarios, coverage, fidelity, knobs, or params SCENARIO.",
        ),
    ] = "systems",
    name: Annotated[
        str | None, typer.Argument(metavar="[SCENARIO]", help="For `params`: a scenario name or .py script.")
    ] = None,
    system: Annotated[str | None, typer.Option(metavar="DESIGN", help="Only this design.")] = None,
) -> None:
    """Print documentation generated from the registries."""
    from sim import docgen

    typer.echo(docgen.render(topic, system=system, name=name))


# -- bench ------------------------------------------------------------------------------------------
@app.command()
@_command
def bench(
    designs: Annotated[
        str | None,
        typer.Option(
            metavar="LIST",
            help="Comma-separated designs, each NAME, NAME:fixed or NAME:fix=A+B (default: every installed design); the oracle always runs.",
        ),
    ] = None,
    budgets: Annotated[
        str | None,
        typer.Option(
            metavar="LIST",
            help="Comma-separated provider windows in tokens (up to 32, each 500 to 2,000,000; default "
            "8000,32000,128000, or on a conversation workload windows fitted to the corpus).",
        ),
    ] = None,
    seeds: Annotated[
        int | None,
        typer.Option(
            metavar="N",
            min=1,
            max=1000,
            help="Number of workload seeds (default 3). With --workload the file runs once per window (default "
            "1); N > 1 reruns it with the designs' own randomness seeded per run.",
        ),
    ] = None,
    steps: Annotated[
        int | None,
        typer.Option(
            metavar="N", min=10, max=200_000, help="Load steps per workload (default: drawn per seed)."
        ),
    ] = None,
    knob: Annotated[
        list[str] | None,
        typer.Option(
            "--knob", metavar="DESIGN.KEY=VALUE", help="Set a design's knob (repeatable; `memsim doc knobs`)."
        ),
    ] = None,
    workload: Annotated[
        Path | None,
        typer.Option(
            metavar="FILE.jsonl",
            help="Drive the designs with this workload instead of the seeded one (one JSON object per line); "
            "longmemeval:FILE or locomo:FILE (or a JSONL file with turn ids) runs real conversations "
            "(README, 'Real conversations').",
        ),
    ] = None,
    workers: Annotated[int, typer.Option(metavar="N", min=1, max=64, help="Worker processes.")] = 1,
    executor: Annotated[str, typer.Option(metavar="KIND", help="local or dask.")] = "local",
    scheduler: Annotated[
        str | None, typer.Option(metavar="ADDRESS", help="Dask scheduler address (default: a local cluster).")
    ] = None,
    out: Annotated[Path, typer.Option(metavar="DIR", help="Output directory (SQLite, CSV, PNG).")] = Path(
        "memsim-out/bench"
    ),
    plots: Annotated[bool, typer.Option(help="Write PNG plots (needs matplotlib).")] = True,
    html: Annotated[
        bool, typer.Option("--html", help="Also write DIR/index.html, the benchmark's report page.")
    ] = False,
    provider: Annotated[
        str,
        typer.Option(
            metavar="NAME",
            help="Price every request with this provider's prompt cache: none, anthropic or openai.",
        ),
    ] = "none",
    cache_ttl: Annotated[
        str | None,
        typer.Option(
            metavar="SECONDS",
            help="The cache TTL (default: the provider's, 300; anthropic bills writes at 2x above 300).",
        ),
    ] = None,
    price: Annotated[
        str | None,
        typer.Option(metavar="USD", help="Input list price per million tokens (default: the price table's)."),
    ] = None,
    model: Annotated[
        str | None,
        typer.Option(metavar="NAME", help="The priced model, one of the provider's in the price table."),
    ] = None,
    roles: Annotated[
        str | None,
        typer.Option(
            metavar="MAP",
            help="LoCoMo's speaker roles: both=user (default), a=user,b=assistant, or swap "
            "(docs/conversations.md, 'Speaker roles').",
        ),
    ] = None,
) -> None:
    """Run the cross-design context-budget benchmark sweep."""
    from sim.bench_cli import run_cli

    run_cli(
        designs=designs, budgets=budgets, seeds=seeds, steps=steps, knobs=knob or [], workload=workload,
        workers=workers, executor=executor, scheduler=scheduler, out=out, plots=plots, html=html,
        progress=True, provider=provider, cache_ttl=cache_ttl, price=price, model=model, roles=roles,
    )  # fmt: skip


# -- demo, report, new ------------------------------------------------------------------------------
@app.command()
@_command
def demo(
    out: Annotated[
        Path | None,
        typer.Option(metavar="DIR", help="Output directory (default: a new temporary directory)."),
    ] = None,
    verbose: Annotated[
        bool,
        typer.Option(
            "--verbose",
            "-v",
            help="Also print every scenario's summary, the full claims table, the benchmark tables and "
            "each file written (default: a short summary and the page to open).",
        ),
    ] = False,
) -> None:
    """Run every installed design on the embedded defaults: scenarios, claims, a small benchmark, reports."""
    from sim import demo as d

    if not d.run(out, verbose=verbose):
        raise VerdictFailed()


@app.command()
@_command
def report(
    source: Annotated[
        Path,
        typer.Argument(
            metavar="INPUT", help="A trace (.db), a claims ledger (.json) or a bench output directory."
        ),
    ],
    output: Annotated[
        Path | None,
        typer.Option(
            "-o",
            "--output",
            metavar="FILE.html",
            help="Where to write the page (default: INPUT with .html; for a directory, DIR/index.html).",
        ),
    ] = None,
) -> None:
    """Write one self-contained HTML page for a run, a claims ledger or a benchmark."""
    from sim.outputs import Outputs
    from sim.report import render_any
    from sim.report.inputs import check_source, input_files

    outputs = Outputs()
    check_source(source)
    for f in input_files(source):
        outputs.reads(f, "report input")
    target = output or (source / "index.html" if source.is_dir() else source.with_suffix(".html"))
    outputs.file(target, "--output")
    page = render_any(source)
    with outputs.transaction():
        outputs.write_text(target, page)
    from sim.provenance import cite_source

    cite = cite_source(source)
    if cite is not None:
        typer.echo(cite)
    typer.echo(f"wrote {target}")


@new_app.command("design")
@_command
def new_design(
    name: Annotated[
        str, typer.Argument(metavar="NAME", help="The design's name (a Python identifier, lower case).")
    ],
    path: Annotated[
        Path | None, typer.Option(metavar="DIR", help="Where to create the package (default: ./memsim-NAME).")
    ] = None,
) -> None:
    """Write an installable design package: a last-K-tokens buffer with one claim, its adapter and tests."""
    from sim.newdesign import create

    target = create(name, path)
    typer.echo(
        f'created {target}; install it (with pytest, for its tests) with: pip install -e "{target}[test]"'
    )


@workload_app.command("synth")
@_command
def workload_synth(
    kind: Annotated[str, typer.Argument(metavar="longmemeval|locomo", help="The format to write.")],
    out: Annotated[Path, typer.Option(metavar="FILE", help="The file to write (atomically).")],
    instances: Annotated[
        int,
        typer.Option(
            metavar="N",
            min=1,
            max=100_000,
            help="Instances (LoCoMo: conversations); the default is about a minute of `memsim bench` work.",
        ),
    ] = 120,
    sessions: Annotated[
        int,
        typer.Option(
            metavar="S", min=1, max=10_000, help="Sessions per instance (48: _s-sized, 500: _m-sized)."
        ),
    ] = 48,
    turns: Annotated[int, typer.Option(metavar="T", min=1, max=1_000, help="Turns per session.")] = 10,
    seed: Annotated[
        int,
        typer.Option(metavar="K", min=0, max=2**63 - 1, help="Seed: the same seed writes the same bytes."),
    ] = 0,
) -> None:
    """Write a synthetic LongMemEval or LoCoMo file of the real shape and size, streamed."""
    from sim.conversations.synth import run_cli as synth

    target, size = synth(
        kind=kind, instances=instances, sessions=sessions, turns=turns, seed=seed, out=out, progress=True
    )
    typer.echo(f"wrote {target} ({instances:,} {kind} instances, {size:,} bytes)")


# -- entry point ------------------------------------------------------------------------------------
def _click_exceptions() -> list[object]:
    """Click's exception module(s): typer >= 0.22 vendors click as ``typer._click``."""
    mods: list[object] = []
    try:
        from typer._click import exceptions as vendored  # type: ignore[import-not-found]

        mods.append(vendored)
    except ImportError:
        pass
    try:
        from click import exceptions as plain

        mods.append(plain)
    except ImportError:
        pass
    return mods


def _kinds(name: str) -> tuple[type[BaseException], ...]:
    return tuple(getattr(m, name) for m in _click_exceptions() if hasattr(m, name))


_running = 0


def running() -> bool:
    """Whether a memsim command is running in this process (a script's ``main(__name__)`` then does
    nothing: it was called while memsim imported the script, not by ``python script.py``)."""
    return _running > 0


def _last_word(msg: str, code: int) -> SystemExit:
    """Write the one error line, then point stdout and stderr at ``/dev/null``: nothing that runs after
    it (an interpreter-exit hook of a library, a worker thread) can add a second line."""
    _err(msg)
    _to_devnull(1)
    _to_devnull(2)
    return SystemExit(code)


def _to_devnull(fd: int) -> None:
    """Flush the stream on *fd* (if it can be) and point *fd* at ``/dev/null``."""
    stream = sys.stdout if fd == 1 else sys.stderr
    with contextlib.suppress(Exception):
        stream.flush()
    with contextlib.suppress(OSError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, fd)
        os.close(devnull)


def main(argv: list[str] | None = None, *, own_process: bool | None = None) -> None:
    """Console-script entry point: maps every outcome to the exit-code contract.

    *own_process* (default: when *argv* is None, as for the console script) says memsim owns the process,
    so after an error line it may close the streams; tests calling ``main(ARGS)`` keep theirs."""
    global _running
    # tiktoken copies even a bundled local encoding file into $TMPDIR/data-gym-cache; memsim's is local,
    # so that cache only leaves a file behind (an empty TIKTOKEN_CACHE_DIR turns it off).
    os.environ.setdefault("TIKTOKEN_CACHE_DIR", "")
    own = argv is None if own_process is None else own_process
    if own and _running == 0:
        import signal

        with contextlib.suppress(ValueError):  # not the main thread: leave signals alone
            signal.signal(signal.SIGTERM, _on_sigterm)
    _running += 1
    from sim.provenance import set_argv

    set_argv(["memsim", *(sys.argv[1:] if argv is None else argv)])  # the command a run's provenance records
    try:
        rc, msg = _dispatch(argv)
    finally:
        _running -= 1
    if rc == EXIT_PIPE and own:
        _to_devnull(1)  # what is still buffered for the closed pipe goes nowhere, without a second error
    if msg is None and rc in (EXIT_OK, EXIT_VERDICT):
        _warn_broken_plugins()
    if msg is None:
        if own and rc in (EXIT_OK, EXIT_VERDICT):
            _leave(rc)
        raise SystemExit(rc)
    if own:
        raise _last_word(msg, rc)
    _err(msg)
    raise SystemExit(rc)


def _leave(rc: int) -> None:
    """End a command that finished (*rc* 0 or 1) without the interpreter's teardown, which frees every
    object one at a time: 0.2 s after a default ``memsim bench`` (its token caches, the plotting library),
    as long as the whole output phase of ``--workers 2``. The exit hooks still run (``atexit``: temporary
    directories, logging) and the streams are flushed; a reader of stdout that has gone makes it 141, as
    during the command. Only with this one thread left (no pool's thread to join); otherwise it returns
    and the caller exits the usual way."""
    import atexit
    import threading

    if threading.active_count() != 1:
        return
    atexit._run_exitfuncs()
    try:
        if sys.stdout is not None:  # None: started with stdout closed (``memsim --help >&-``)
            sys.stdout.flush()
    except (BrokenPipeError, ValueError):
        _to_devnull(1)
        rc = EXIT_PIPE
    with contextlib.suppress(Exception):
        sys.stderr.flush()
    os._exit(rc)


def _closed_pipe(exc: SystemExit) -> bool:
    """Whether *exc* is click's ``sys.exit(1)`` after its help or ``--version`` met a closed stdout pipe."""
    cause = exc.__context__
    return isinstance(cause, OSError) and cause.errno == 32  # EPIPE


def _dispatch(argv: list[str] | None) -> tuple[int, str | None]:
    """Run the command: its exit code, and the error line to print (None for none)."""
    try:
        rc = app(args=argv, standalone_mode=False)
    except VerdictFailed:
        return EXIT_VERDICT, None
    except _kinds("NoArgsIsHelpError") as exc:
        ctx = getattr(exc, "ctx", None)
        try:
            if ctx is not None:
                typer.echo(ctx.get_help())
        except BrokenPipeError:  # bare ``memsim``, ``memsim new`` into a closed pipe: as for a command
            return EXIT_PIPE, None
        return EXIT_OK, None
    except Interrupted as exc:
        return exc.code, str(exc)
    except (PipeClosed, BrokenPipeError):
        return EXIT_PIPE, None
    except Terminated:
        return EXIT_TERMINATED, "terminated"
    except (KeyboardInterrupt, *_kinds("Abort")):  # type: ignore[misc]
        return EXIT_INTERRUPTED, "interrupted"
    except _kinds("ClickException") as exc:
        return EXIT_USAGE, exc.format_message()  # type: ignore[attr-defined]
    except MemsimError as exc:
        return EXIT_USAGE, str(exc)
    except SystemExit as exc:  # click's own exits are Exit exceptions: this is a script's or a plugin's
        if _closed_pipe(exc):  # but help or --version into a closed pipe is click's sys.exit(1)
            return EXIT_PIPE, None
        return EXIT_USAGE, (
            f"code memsim ran (a scenario script, a design plugin) called sys.exit({exc.code!r}); only memsim "
            "sets its exit code"
        )
    except Exception as exc:
        from sim.outputs import is_write_failure

        if isinstance(exc, OSError) and is_write_failure(exc):  # stdout on a full disk, say
            return EXIT_USAGE, f"cannot write the output: {exc.strerror or exc}"
        if os.environ.get("MEMSIM_DEBUG"):
            raise
        return (
            EXIT_VERDICT,
            f"internal error: {type(exc).__name__}: {exc} (set MEMSIM_DEBUG=1 for a traceback)",
        )
    except BaseException as exc:  # not an Exception, not an interrupt: raised by a script or a plugin
        return EXIT_USAGE, (
            f"code memsim ran (a scenario script, a design plugin) raised {type(exc).__name__}, which is "
            f"not an Exception: {exc}"
        )
    if rc == EXIT_INTERRUPTED:  # typer returns Ctrl-C during argument parsing as 130
        return EXIT_INTERRUPTED, "interrupted"
    return (rc if isinstance(rc, int) else EXIT_OK), None


if __name__ == "__main__":
    main()
