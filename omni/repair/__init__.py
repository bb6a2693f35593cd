"""Verified repair, its own wing: localizing the fix, sampling and judging candidate rewrites, and the strategy by
which it reaches the loop (omni/repair/strategy.py)."""
