"""Number, time and colour formatting shared by the report pages (also registered as Jinja filters)."""

from __future__ import annotations

import hashlib
import math
from typing import Any

#: Okabe-Ito and Tableau colours (colour-blind safe first), for categories hashed to a stable colour.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#8C564B", "#BCBD22", "#17BECF",
           "#7F7F7F", "#F0E442", "#9467BD", "#2CA02C")  # fmt: skip
FAIL = "#D55E00"
CRASH = "#000000"


def stable_colour(name: str, palette: tuple[str, ...] = PALETTE) -> str:
    """A colour for *name* that depends only on the name (the same in every page and run)."""
    return palette[int(hashlib.sha256(name.encode()).hexdigest(), 16) % len(palette)]


def num(value: Any, digits: int = 0) -> str:
    """``12,345`` / ``0.84`` / ``—`` for None."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if not math.isfinite(value):
            return str(value)
        if digits == 0 and value == int(value) and abs(value) < 1e15:
            return f"{int(value):,}"
        return f"{value:,.{digits or 1}f}"
    return str(value)


def compact(value: float) -> str:
    """An axis label: ``950``, ``12k``, ``1.5M``."""
    a = abs(value)
    if a >= 1e6:
        s = f"{value / 1e6:.1f}".rstrip("0").rstrip(".")
        return s + "M"
    if a >= 1e4:
        return f"{value / 1e3:.0f}k"
    if a >= 1e3:
        return f"{value / 1e3:.1f}".rstrip("0").rstrip(".") + "k"
    if value == int(value):
        return str(int(value))
    return f"{value:.2g}"


def seconds(t: float) -> str:
    """Simulation seconds: ``0.44 s``, ``391 s``, ``7,200 s (2.0 h)``."""
    if t == 0:
        return "0 s"
    if abs(t) < 10:
        return f"{t:.3g} s"
    if abs(t) < 3600:
        return f"{t:,.0f} s"
    return f"{t:,.0f} s ({t / 3600:.1f} h)"


def _time_unit(span: float) -> tuple[float, str]:
    if span >= 5 * 86400:
        return 86400.0, "d"
    if span >= 3 * 3600:
        return 3600.0, "h"
    if span >= 300:
        return 60.0, "min"
    return 1.0, "s"


def time_ticks(lo: float, hi: float, n: int = 7) -> list[tuple[float, str]]:
    """Round ticks in the unit the span reads best in (s, min, h, d): ``(seconds, label)``."""
    size, unit = _time_unit(hi - lo)
    return [(v * size, f"{v:g} {unit}") for v in nice_ticks(lo / size, hi / size, n)]


def pct(part: float, whole: float) -> str:
    """``84%`` (``—`` when *whole* is 0)."""
    if not whole:
        return "—"
    return f"{100 * part / whole:.0f}%"


def nice_ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    """About *n* round tick values covering [lo, hi]."""
    if hi <= lo:
        return [lo]
    raw = (hi - lo) / max(1, n)
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    first = math.ceil(lo / step) * step
    out = []
    k = 0
    while first + k * step <= hi + step * 1e-9:
        out.append(round(first + k * step, 10))
        k += 1
    return out


def plural(n: int, word: str, many: str = "") -> str:
    """``1 probe`` / ``3 probes`` (with thousands separators)."""
    return f"{n:,} {word if n == 1 else (many or word + 's')}"


def rst_inline(text: str) -> Any:
    """*text* as HTML (escaped) with reST inline literals (````name````) shown as code, not backticks."""
    import re

    from markupsafe import Markup, escape

    return Markup(re.sub(r"``(.+?)``", r"<code>\1</code>", str(escape(text))))


def plain(text: str) -> str:
    """*text* with reST inline literals (````name````) unquoted, for a terminal line."""
    import re

    return re.sub(r"``(.+?)``", r"\1", text)
