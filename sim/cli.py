"""The ``memsim`` command line: ``demo``, ``run``, ``claims``, ``bench``, ``replay`` and ``doc``.

Every error a user can cause is one line on stderr and exit code 2 (never a traceback); set
``MEMSIM_DEBUG=1`` to see tracebacks of internal errors.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from sim.errors import MemsimError, UsageError

app = typer.Typer(
    name="memsim",
    help="An executable reference simulator of four agent-memory designs "
    "(MerchantBench, Nemsy, RSIAgent, Tracecraft).",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


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


def _err(msg: str) -> None:
    sys.stderr.write(f"memsim: error: {msg}\n")


def _parse_param(values: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for v in values:
        if "=" not in v:
            raise UsageError(f"--param takes KEY=VALUE, not {v!r}")
        k, raw = v.split("=", 1)
        try:
            out[k] = json.loads(raw)
        except ValueError:
            out[k] = raw
    return out


def _check_out(out: Path | None) -> None:
    if out is not None and out.exists() and not out.is_dir():
        raise UsageError(f"--out {out} exists and is not a directory")


@app.command()
def run(
    scenario: Annotated[
        str, typer.Argument(help="A scenario name (see `memsim doc scenarios`) or a .toml scenario file.")
    ],
    seed: Annotated[int | None, typer.Option(min=0, help="Run seed (default: the scenario's SEED).")] = None,
    out: Annotated[
        Path | None, typer.Option(help="Directory for the trace database (default: no trace file).")
    ] = None,
    fault: Annotated[
        list[str] | None,
        typer.Option("--fault", help="Inject a fault, e.g. crash@POINT or skew:bob=-600 (repeatable)."),
    ] = None,
    store: Annotated[
        str | None,
        typer.Option(help="Object store: memory, moto, moto-server or an http(s):// endpoint URL."),
    ] = None,
    param: Annotated[
        list[str] | None,
        typer.Option("--param", help="Override a scenario parameter, KEY=VALUE (repeatable)."),
    ] = None,
) -> None:
    """Run a scenario and print its deterministic summary (the trace goes to --out)."""
    from sim import scenario as sc

    _check_out(out)
    if scenario.endswith(".toml") or os.sep in scenario or Path(scenario).suffix:
        spec = sc.load_file(scenario)
        name, params = spec.scenario, {**spec.params, **_parse_param(param or [])}
        seed = spec.seed if seed is None else seed
        faults = [*spec.faults, *(fault or [])]
        store = store or spec.store
    else:
        name, params, faults = scenario, _parse_param(param or []), list(fault or [])
    sc.get(name)  # validate before writing anything
    trace_path = None
    if out is not None:
        trace_path = out / f"{name}.db"
    lines = sc.execute(
        name,
        seed=seed,
        faults=faults,
        store=store or "memory",
        params=params,
        trace_path=trace_path,
        root=(out / f"{name}-root") if out else None,
    )
    for line in lines:
        typer.echo(line)
    if trace_path is not None:
        sys.stderr.write(f"trace: {trace_path}\n")


@app.command()
def claims(
    system: Annotated[str | None, typer.Option(help="Only this system's claims.")] = None,
    profile: Annotated[str, typer.Option(help="Hypothesis profile: quick, ci or thorough.")] = "ci",
    claim: Annotated[
        list[str] | None, typer.Option("--claim", help="Only these claim ids (repeatable).")
    ] = None,
    json_out: Annotated[Path | None, typer.Option("--json", help="Write the results as JSON here.")] = None,
    markdown: Annotated[Path | None, typer.Option(help="Write the table as Markdown here.")] = None,
    save: Annotated[
        Path | None, typer.Option(help="Save each shrunk counterexample here, for `memsim replay`.")
    ] = None,
    seed: Annotated[int, typer.Option(min=0, help="Search seed.")] = 0,
) -> None:
    """Run every claim both ways: the faithful design must fail (shrunk), the fixed variant must hold."""
    from sim import ledger

    ok = ledger.run_cli(
        system=system, profile=profile, only=claim, json_out=json_out, markdown=markdown, save=save, seed=seed
    )
    if not ok:
        raise typer.Exit(1)


@app.command()
def replay(
    path: Annotated[
        Path, typer.Argument(help="A saved claim example (.json) or a scenario trace database (.db).")
    ],
    out: Annotated[Path | None, typer.Option(help="Directory for the replayed trace.")] = None,
    variant: Annotated[
        str | None, typer.Option(help="For claim examples: faithful or fixed (default: as saved).")
    ] = None,
) -> None:
    """Rerun a saved counterexample or a scenario trace deterministically, writing its trace."""
    from sim import ledger

    _check_out(out)
    ok = ledger.replay_cli(path, out=out, variant=variant)
    if not ok:
        raise typer.Exit(1)


@app.command()
def doc(
    topic: Annotated[
        str, typer.Argument(help="systems, operations, faults, claims, scenarios or coverage.")
    ] = "systems",
    system: Annotated[str | None, typer.Option(help="Only this system.")] = None,
    coverage: Annotated[
        bool, typer.Option("--coverage", help="Print record-ID coverage (same as `doc coverage`).")
    ] = False,
) -> None:
    """Print documentation generated from the registries."""
    from sim import docgen

    typer.echo(docgen.render("coverage" if coverage else topic, system=system))


@app.command()
def bench(
    designs: Annotated[
        str | None, typer.Option(help="Comma-separated designs (default: all four plus the oracle).")
    ] = None,
    budgets: Annotated[
        str, typer.Option(help="Comma-separated provider windows in tokens.")
    ] = "8000,32000,128000",
    seeds: Annotated[int, typer.Option(min=1, help="Number of workload seeds.")] = 3,
    steps: Annotated[
        int | None, typer.Option(min=10, help="Load steps per workload (default: drawn per seed).")
    ] = None,
    workers: Annotated[int, typer.Option(min=1, help="Worker processes.")] = 1,
    executor: Annotated[str, typer.Option(help="local or dask.")] = "local",
    scheduler: Annotated[
        str | None, typer.Option(help="Dask scheduler address (default: a local cluster).")
    ] = None,
    out: Annotated[Path, typer.Option(help="Output directory (SQLite, CSV, PNG).")] = Path(
        "memsim-out/bench"
    ),
    plots: Annotated[bool, typer.Option(help="Write PNG plots (needs matplotlib).")] = True,
) -> None:
    """Run the cross-design context-budget benchmark sweep."""
    from sim import bench as b

    _check_out(out)
    b.run_cli(
        designs=designs,
        budgets=budgets,
        seeds=seeds,
        steps=steps,
        workers=workers,
        executor=executor,
        scheduler=scheduler,
        out=out,
        plots=plots,
    )


@app.command()
def demo(
    out: Annotated[
        Path | None, typer.Option(help="Output directory (default: a temporary run root).")
    ] = None,
) -> None:
    """Run all four designs on the embedded defaults: claims, a small benchmark, traces and plots."""
    from sim import demo as d

    _check_out(out)
    d.run(out)


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point: one-line errors and exit code 2 for bad input."""
    try:
        app(args=argv, standalone_mode=False)
    except _kinds("NoArgsIsHelpError") as exc:
        ctx = getattr(exc, "ctx", None)
        if ctx is not None:
            typer.echo(ctx.get_help())
        raise SystemExit(0) from None
    except _kinds("Exit") as exc:
        raise SystemExit(getattr(exc, "exit_code", 0)) from None
    except _kinds("Abort"):
        _err("aborted")
        raise SystemExit(130) from None
    except _kinds("ClickException") as exc:
        _err(exc.format_message().replace("\n", " "))  # type: ignore[attr-defined]
        raise SystemExit(2) from None
    except (UsageError, MemsimError) as exc:
        _err(str(exc).replace("\n", " "))
        raise SystemExit(2) from None
    except KeyboardInterrupt:
        _err("interrupted")
        raise SystemExit(130) from None
    except Exception as exc:
        if os.environ.get("MEMSIM_DEBUG"):
            raise
        _err(f"internal error: {type(exc).__name__}: {exc} (set MEMSIM_DEBUG=1 for a traceback)")
        raise SystemExit(1) from None


if __name__ == "__main__":
    main()
