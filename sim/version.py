"""memsim's version: the installed distribution's, or ``0+unknown`` in a source tree never installed.

Its own module so that the core (:mod:`sim.trace` stamps it on every trace) reads it without importing
the :mod:`sim` package, which re-exports the core (issue 41: imports run one way)."""

from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as _version

try:
    __version__ = _version("memsim")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0+unknown"
