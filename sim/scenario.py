"""What a scenario script imports: ``from sim.scenario import Context, main`` (and :class:`Params`).

A script ends with ``if __name__ == "__main__": main(__name__)``: :func:`main` runs it through the command
line (:mod:`sim.cli`), so this module sits above the command line; the machinery (registry, loading,
planning, running) is :mod:`sim.scenario_core`, which the command line and the runners import (issue 41).
Every public name of :mod:`sim.scenario_core` reads here too; patch the registry there
(``sim.scenario_core.scenarios``), where the runners look it up.
"""

from __future__ import annotations

import sys

from sim.scenario_core import (
    STORE_KINDS,
    Context,
    Params,
    Plan,
    Result,
    Scenario,
    ScenarioFile,
    ScriptFailed,
    check_store,
    execute,
    from_module,
    get,
    load_file,
    load_script,
    parse_params,
    plan,
    resolve,
    run_plan,
    scenarios,
)

__all__ = [
    "STORE_KINDS",
    "Context",
    "Params",
    "Plan",
    "Result",
    "Scenario",
    "ScenarioFile",
    "ScriptFailed",
    "check_store",
    "execute",
    "from_module",
    "get",
    "load_file",
    "load_script",
    "main",
    "parse_params",
    "plan",
    "resolve",
    "run_plan",
    "scenarios",
]


def main(module_name: str) -> None:
    """Entry point of a scenario script: ``python script.py [OPTIONS]`` (and ``python -m scenarios.NAME``)
    runs it with every ``memsim run`` option."""
    from sim import cli

    if cli.running():  # an unguarded main(__name__) while memsim imports the script: not a new run
        return
    mod = sys.modules.get(module_name)
    target = getattr(mod, "__file__", None) if mod is not None else None
    if not target:
        sys.stderr.write(f"memsim: error: cannot find the file of scenario module {module_name!r}\n")
        raise SystemExit(2)
    cli.main(["run", target, *sys.argv[1:]], own_process=True)
