"""Explorer 4, cost: FLOPs and memory of the plain and the tiled computation (book/cost.ipynb).

The counts are those of `attention_course.cost`; the page (`js/cost.js`)
receives the package's constants in its state (the softmax's FLOPs per score,
each dtype's item size) so that it counts the same way.
"""

from __future__ import annotations

import numpy as np
import traitlets as t

from ..chapters.cost import SOFTMAX_FLOPS_PER_SCORE, attention_flops, score_matrix_bytes, tile_count
from .widget import Explorer

DTYPES = ("float16", "float32", "float64")
"""The dtypes offered; their sizes come from NumPy."""

N_MAX = 2**20
"""Largest n offered. With D_MAX it keeps every count below 2**53, exact in JavaScript's doubles."""
D_MAX = 2**10
"""Largest head size offered."""


def attention_costs(n: int, d: int, dtype: str, block_size: int) -> dict[str, int]:
    """What the explorer shows for n queries and n keys of size d (= d_k = d_v), by the package.

    Returns:
        dict of ints: "flops" (plain and tiled alike: tiling moves the scores,
        it does not remove any), "plain_score_bytes" (the n x n matrix),
        "tiled_score_bytes" (one b x b tile, b = min(block_size, n)),
        "tile_pairs" (tiles visited) and "io_bytes" (Q, K, V and the output).
    """
    b = min(block_size, n)
    return {
        "flops": attention_flops(n, n, d, d).total,
        "plain_score_bytes": score_matrix_bytes(n, n, dtype),
        "tiled_score_bytes": score_matrix_bytes(b, b, dtype),
        "tile_pairs": tile_count(n, n, block_size),
        "io_bytes": 4 * n * d * np.dtype(dtype).itemsize,  # four (n, d) arrays
    }


def compute_cost(state: dict) -> dict[str, int]:
    """`attention_costs` for `state`; the Python twin of `computeCost` in js/cost.js."""
    return attention_costs(state["n"], state["d"], state["dtype"], state["block_size"])


class CostExplorer(Explorer):
    """n, d, dtype and tile size in; FLOPs and memory of plain vs tiled attention out.

    State: `n`, `d`, `dtype`, `block_size`, plus the package's constants the
    page counts with: `itemsizes` and `softmax_flops_per_score`, and the
    input limits `n_max`, `d_max`.
    """

    _module = "cost.js"

    n = t.Int(1024).tag(sync=True)
    d = t.Int(64).tag(sync=True)
    dtype = t.Enum(DTYPES, default_value="float32").tag(sync=True)
    block_size = t.Int(128).tag(sync=True)
    itemsizes = t.Dict().tag(sync=True)
    softmax_flops_per_score = t.Int().tag(sync=True)
    n_max = t.Int(N_MAX).tag(sync=True)
    d_max = t.Int(D_MAX).tag(sync=True)

    def __init__(self, n: int = 1024, d: int = 64, dtype: str = "float32", block_size: int = 128, **kwargs) -> None:
        super().__init__(
            itemsizes={name: np.dtype(name).itemsize for name in DTYPES},
            softmax_flops_per_score=SOFTMAX_FLOPS_PER_SCORE,
            n=n, d=d, dtype=dtype, block_size=block_size, **kwargs,
        )

    @t.validate("n", "block_size")
    def _check_sizes(self, proposal):
        value = proposal["value"]
        if not 1 <= value <= self.n_max:
            raise t.TraitError(f"{proposal['trait'].name} must be between 1 and {self.n_max}; got {value}")
        return value

    @t.validate("d")
    def _check_d(self, proposal):
        if not 1 <= proposal["value"] <= self.d_max:
            raise t.TraitError(f"d must be between 1 and {self.d_max}; got {proposal['value']}")
        return proposal["value"]

    def costs(self) -> dict[str, int]:
        """`attention_costs` for the current state."""
        return compute_cost(self.state())

    def summary(self) -> str:
        c = self.costs()
        return (f"Cost (n = {self.n}, d = {self.d}, {self.dtype}, tiles of {self.block_size}): "
                f"{c['flops']:,} FLOPs both ways; scores take {c['plain_score_bytes']:,} bytes plain, "
                f"{c['tiled_score_bytes']:,} bytes tiled")
