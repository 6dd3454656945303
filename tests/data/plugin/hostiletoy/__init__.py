"""A toy design registered only for tests/test_hostile.py: a claim whose faithful search finds nothing.

``PYTHONPATH=tests/data/plugin`` makes its ``hostiletoy-0.1.dist-info`` visible to
``importlib.metadata``, so the real console script finds it as it finds any installed design.
"""
