"""The Jinja2 environment of the report pages: package templates, autoescaping on, strict undefineds.

Every page extends ``base.html.j2``, which inlines the stylesheet and a few lines of script (a table
filter). A Content-Security-Policy meta tag forbids every fetch except ``data:`` images, so a page that
tried to load anything would show it as a console error (the browser test checks there is none).
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from sim.report import fmt


def _pretty(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, indent=1, default=str)


@cache
def environment() -> Any:
    """The shared environment (templates from the ``sim.report`` package's ``templates`` folder)."""
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("sim.report", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters.update(
        num=fmt.num,
        compact=fmt.compact,
        seconds=fmt.seconds,
        pretty=_pretty,
        rst=fmt.rst_inline,
    )
    env.globals.update(pct=fmt.pct, plural=fmt.plural)
    return env


def render(template: str, **context: Any) -> str:
    """Render *template* with *context*; from the memsim version in *context* only, never the clock."""
    return str(environment().get_template(template).render(**context))
