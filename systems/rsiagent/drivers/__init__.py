"""Each RSIAgent claim's example strategy and driver, one module per family; ``claims.py`` only declares."""
