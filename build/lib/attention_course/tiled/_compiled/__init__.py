"""The compiled accelerator of `flash_attention`: the optional `[fast]` extra (numba and SciPy).

`pip install "attention-course[fast]"` installs it. `flash_attention` then
runs each tile of queries through one numba-compiled loop instead of the
readable NumPy loop of `tiled.online_softmax`, with the same results:

- `driver`: spreads the query tiles over the cores, one scratch tile per
  thread, and decides per tile whether the running max can be skipped;
- `loop`: the compiled loop over the key tiles of one query tile;
- `exp2`: the exponentials, row max and row sums of one tile, vectorised;
- `gemm`: BLAS matrix products called from compiled code (SciPy's BLAS);
- `threads`: the thread pool, with BLAS held to one thread per worker.

Importing this package loads none of them: numba and SciPy are imported on
the first compiled call.
"""

from __future__ import annotations

import importlib.util

REQUIRES = ("numba", "llvmlite", "scipy")
"""The distributions the accelerator imports (what the `[fast]` extra installs)."""


def missing() -> list[str]:
    """The packages of the `[fast]` extra that are not installed (empty when the accelerator can run)."""
    return [name for name in REQUIRES if importlib.util.find_spec(name) is None]


def available() -> bool:
    """True if numba, llvmlite and SciPy are installed."""
    return not missing()
