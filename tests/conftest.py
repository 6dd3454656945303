"""Shared pytest configuration: memsim's Hypothesis profiles (``HYPOTHESIS_PROFILE``, default ``ci``).

Hypothesis' home is memsim's private cache directory, never the working directory.
"""

import os

from hypothesis import settings

from sim.search import register_profiles, use_private_home

use_private_home()
register_profiles()
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
