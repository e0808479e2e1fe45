"""How many cores this process may use (the tiled loop's threads, the batch grader's workers)."""

from __future__ import annotations

import os


def available_cores() -> int:
    """The cores this process may run on (its CPU affinity), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # sched_getaffinity is Linux-only
        return max(1, os.cpu_count() or 1)
