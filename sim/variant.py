"""Variants: which of a design's declared switches are on. The faithful design has none.

A design declares its switches once, as :class:`Switches`: its **fixes** (each a minimal repair of one
claimed failure mode), its **counterfactuals** (deliberate weakenings that are not upstream's design, used
by claims that show why upstream chose what it did) and its **off switches** (the mechanism under a
claim switched off or emptied: nothing loaded, nothing written, nothing shown, everything refused). A
:class:`Variant` is a frozen set of switch names of each kind; :meth:`Switches.variant` builds one and
rejects names the design does not declare, so a typo is an error, not a silent faithful run.

Every design, the claims runner and the benchmark use this one type; a model asks ``variant.has(name)``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from sim.errors import UsageError


@dataclass(frozen=True)
class Variant:
    """Which fixes, counterfactuals and off switches are on (all empty: the faithful design)."""

    fixes: frozenset[str] = frozenset()
    counterfactuals: frozenset[str] = frozenset()
    off: frozenset[str] = frozenset()

    def has(self, name: str) -> bool:
        """Whether the switch *name* (of any kind) is on."""
        return name in self.fixes or name in self.counterfactuals or name in self.off

    @property
    def faithful(self) -> bool:
        """Whether this is upstream's design (no switch on)."""
        return not (self.fixes or self.counterfactuals or self.off)

    def plus(self, *fixes: str) -> Variant:
        """This variant with *fixes* also on."""
        return Variant(self.fixes | frozenset(fixes), self.counterfactuals, self.off)

    def label(self) -> str:
        """A short readable form: ``faithful``, ``fix=a+b``, ``off=x``, ``counterfactual=y``."""
        if self.faithful:
            return "faithful"
        parts = []
        for kind, names in (("fix", self.fixes), ("counterfactual", self.counterfactuals), ("off", self.off)):
            if names:
                parts.append(f"{kind}={'+'.join(sorted(names))}")
        return ",".join(parts)


FAITHFUL = Variant()
"""Upstream's design: no switch on."""


@dataclass(frozen=True)
class Switches:
    """A design's declared switch names; builds and validates its :class:`Variant` values."""

    design: str
    fixes: tuple[str, ...] = ()
    counterfactuals: tuple[str, ...] = ()
    off: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        names = [*self.fixes, *self.counterfactuals, *self.off]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise ValueError(f"{self.design}: switch names declared twice: {', '.join(dup)}")

    def variant(
        self,
        fixes: Iterable[str] = (),
        *,
        counterfactuals: Iterable[str] = (),
        off: Iterable[str] = (),
    ) -> Variant:
        """The variant with exactly these switches on; raises :class:`UsageError` on an undeclared name."""
        v = Variant(frozenset(fixes), frozenset(counterfactuals), frozenset(off))
        self.check(v)
        return v

    def fixed(self, *fixes: str) -> Variant:
        """The faithful design plus *fixes*."""
        return self.variant(fixes)

    def all_fixes(self) -> Variant:
        """Every declared fix on at once (the claims ledger's combined direction)."""
        return self.variant(self.fixes)

    def check(self, variant: Variant) -> Variant:
        """*variant*, if every switch it names is declared by this design."""
        for kind, names, declared in (
            ("fix", variant.fixes, self.fixes),
            ("counterfactual", variant.counterfactuals, self.counterfactuals),
            ("off switch", variant.off, self.off),
        ):
            unknown = sorted(set(names) - set(declared))
            if unknown:
                raise UsageError(
                    f"unknown {self.design} {kind} {', '.join(map(repr, unknown))}: expected one of "
                    f"{', '.join(declared) or '(none declared)'}"
                )
        return variant

    def parse(self, spec: str) -> Variant:
        """A variant from its command-line form: ``faithful``, ``fixed`` (every fix), ``fix=a+b``,
        ``off=x``, ``counterfactual=y``, or several joined by ``,``."""
        spec = spec.strip()
        if spec in ("", "faithful"):
            return FAITHFUL
        if spec == "fixed":
            return self.all_fixes()
        kinds: dict[str, list[str]] = {"fix": [], "counterfactual": [], "off": []}
        for part in spec.split(","):
            kind, sep, names = part.partition("=")
            if not sep or kind.strip() not in kinds or not names.strip():
                raise UsageError(
                    f"bad variant {spec!r} for {self.design}: expected faithful, fixed, fix=NAME[+NAME...], "
                    "off=NAME or counterfactual=NAME"
                )
            kinds[kind.strip()] += [n.strip() for n in names.split("+") if n.strip()]
        return self.variant(kinds["fix"], counterfactuals=kinds["counterfactual"], off=kinds["off"])
