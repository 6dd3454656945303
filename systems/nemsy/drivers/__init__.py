"""Nemsy's claim drivers: for each claim of :mod:`systems.nemsy.claims`, its Hypothesis strategy (a plain
JSON example space), the JSON shape of an example with the strategy's bounds (``*_TYPE``, for replay) and
its driver ``check(sim, example, variant) -> Verdict``, which runs a tiny Wiki (a handful of sources,
small limits passed as parameters where upstream has a constant) through the real model operations and
checks a property from :mod:`systems.nemsy.properties` that asserts the mechanism's service, so that the
claim's off switch fails it too.

One module per family: :mod:`.wiki` (loader, delete, index, names, derived pages, citations),
:mod:`.ledger` (ledger, statuses, corruption, web flags, reasoning), :mod:`.chat` (snapshot, trimming),
:mod:`.parser` (the ingest parser); :mod:`.common` holds what they share.
"""

from systems.nemsy.drivers.common import NAMES, VALUES, tick

__all__ = ["NAMES", "VALUES", "tick"]
