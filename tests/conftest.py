"""Shared pytest configuration: memsim's Hypothesis profiles (``HYPOTHESIS_PROFILE``, default ``ci``), and
the ``box`` fixture of the hostile-condition tests.

Hypothesis' home is memsim's private cache directory, never the working directory.
"""

import os
from pathlib import Path

import pytest
from hostile_box import Sandbox
from hypothesis import settings

from sim.search import register_profiles, use_private_home

use_private_home()
register_profiles()
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture
def box(tmp_path: Path) -> Sandbox:
    """A sandboxed working directory and home for running the console script (``hostile_box.Sandbox``)."""
    return Sandbox(tmp_path)
