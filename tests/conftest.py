"""Shared pytest configuration: memsim's Hypothesis profiles (``HYPOTHESIS_PROFILE``, default ``ci``)."""

import os

from hypothesis import settings

from sim.claims import register_profiles

register_profiles()
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
