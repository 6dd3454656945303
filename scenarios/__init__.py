"""Runnable scenarios. Each module here is one scenario (see README "Writing a scenario").

Run one with ``memsim run NAME`` or ``python -m scenarios.NAME``; each has a committed ``NAME.out`` that
``tests/test_scenarios.py`` compares with its default output.
"""
