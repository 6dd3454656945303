"""Each Tracecraft claim's strategy and driver, one module per service (claims.py only declares them).

A driver is ``check(sim, example, variant, world=MODEL) -> Verdict`` (:mod:`.common`); the same driver
runs on the model and, through :mod:`systems.tracecraft.transfer`, on the real ``tracecraft`` CLI.
"""
