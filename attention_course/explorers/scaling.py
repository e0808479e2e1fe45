"""Explorer 2, d_k and scaling: the spread of q·k and the peakedness of its softmax (book/scaling.ipynb).

Python draws the random queries and keys once (`np.random.default_rng(seed)`)
and hands them to the page, so the browser (`js/scaling.js`) and the package
compute on the very same numbers. Entries are stored in steps of 1/32 as int8
and base64, to keep the page small: 32 x 512 entries take 22 kB.
"""

from __future__ import annotations

import base64

import numpy as np
import traitlets as t

from ..core._checks import positive_int
from ..chapters.scaling import max_weight, softmax_entropy
from ..core.softmax import softmax
from .widget import Explorer

STEPS_PER_UNIT = 32
"""Entries are stored as round(x * 32) / 32, clipped to int8: resolution 1/32, range about +-3.97."""


def encode_sample(n_queries: int, n_keys: int, d_max: int, rng: np.random.Generator) -> str:
    """Random unit-variance queries then keys, (n_queries + n_keys, d_max), as base64 int8."""
    z = rng.standard_normal((n_queries + n_keys, d_max))  # mean 0, variance 1
    codes = np.clip(np.rint(z * STEPS_PER_UNIT), -127, 127).astype(np.int8)
    return base64.b64encode(codes.tobytes()).decode("ascii")


def decode_sample(sample: str, n_queries: int, n_keys: int, d_max: int) -> tuple[np.ndarray, np.ndarray]:
    """The stored sample as float64 (queries (n_queries, d_max), keys (n_keys, d_max))."""
    codes = np.frombuffer(base64.b64decode(sample), dtype=np.int8)
    if codes.size != (n_queries + n_keys) * d_max:
        raise ValueError(f"sample holds {codes.size} entries; expected ({n_queries} + {n_keys}) x {d_max}")
    rows = codes.reshape(n_queries + n_keys, d_max) / STEPS_PER_UNIT  # (n_q + n_k, d_max)
    return rows[:n_queries], rows[n_queries:]


def scaling_stats(queries, keys, d_k: int, scaled: bool) -> dict:
    """What the explorer shows for the first d_k entries of each vector.

    Args:
        queries: (n_q, d_max) query vectors.
        keys: (n_k, d_max) key vectors.
        d_k: how many leading entries to use, 1..d_max.
        scaled: divide the scores by sqrt(d_k).

    Returns:
        dict with "scores" (n_q, n_k), "weights" (n_q, n_k), "spread" (std of all
        scores), "max_weight" and "entropy" (means over the rows, entropy in nats).
    """
    q = np.asarray(queries, dtype=np.float64)[:, :d_k]  # (n_q, d_k)
    k = np.asarray(keys, dtype=np.float64)[:, :d_k]  # (n_k, d_k)
    scores = q @ k.T  # (n_q, d_k) x (d_k, n_k) -> (n_q, n_k)
    if scaled:
        scores = scores * (1.0 / np.sqrt(d_k))
    return {
        "scores": scores,
        "weights": softmax(scores, axis=-1),  # (n_q, n_k), each row sums to 1
        "spread": float(scores.std()),
        "max_weight": float(max_weight(scores).mean()),
        "entropy": float(softmax_entropy(scores).mean()),
    }


def compute_scaling(state: dict) -> dict[str, dict]:
    """Both rows of the explorer's table for `state`: {"unscaled": ..., "scaled": ...} `scaling_stats`.

    The Python twin of `computeScaling` in js/scaling.js.
    """
    queries, keys = decode_sample(state["sample"], state["n_queries"], state["n_keys"], state["d_max"])
    return {name: scaling_stats(queries, keys, state["d_k"], scaled) for name, scaled in (("unscaled", False), ("scaled", True))}


class ScalingExplorer(Explorer):
    """A d_k slider (1..d_max) and a scaling switch over fixed random queries and keys.

    State: `d_k`, `scaled`, and the sample: `n_queries` queries and `n_keys`
    keys of `d_max` unit-variance entries (`sample`, see `encode_sample`).
    The page shows, for the first d_k entries, the spread of q·k (about
    sqrt(d_k), or about 1 scaled), the mean largest softmax weight and the mean
    entropy, scaled and unscaled, and query 1's weights as bars.
    """

    _module = "scaling.js"

    d_k = t.Int(128).tag(sync=True)
    scaled = t.Bool(False).tag(sync=True)
    d_max = t.Int(512).tag(sync=True)
    n_queries = t.Int(16).tag(sync=True)
    n_keys = t.Int(16).tag(sync=True)
    sample = t.Unicode().tag(sync=True)

    def __init__(self, d_k: int = 128, scaled: bool = False, *, seed: int = 0,
                 n_queries: int = 16, n_keys: int = 16, d_max: int = 512, **kwargs) -> None:
        n_queries = positive_int(n_queries, "n_queries")
        n_keys = positive_int(n_keys, "n_keys")
        d_max = positive_int(d_max, "d_max")
        rng = np.random.default_rng(seed)
        super().__init__(d_max=d_max, n_queries=n_queries, n_keys=n_keys,
                         sample=encode_sample(n_queries, n_keys, d_max, rng), d_k=d_k, scaled=scaled, **kwargs)

    @t.validate("d_k")
    def _check_d_k(self, proposal):
        d_k = proposal["value"]
        if not 1 <= d_k <= self.d_max:
            raise t.TraitError(f"d_k must be between 1 and d_max={self.d_max}; got {d_k}")
        return d_k

    def vectors(self) -> tuple[np.ndarray, np.ndarray]:
        """(queries (n_queries, d_max), keys (n_keys, d_max)) as float64."""
        return decode_sample(self.sample, self.n_queries, self.n_keys, self.d_max)

    def stats(self, scaled: bool | None = None) -> dict:
        """`scaling_stats` at the current d_k (and the current switch unless `scaled` is given)."""
        return scaling_stats(*self.vectors(), self.d_k, self.scaled if scaled is None else scaled)

    def summary(self) -> str:
        s = self.stats()
        how = "q·k / sqrt(d_k)" if self.scaled else "q·k"
        return (f"d_k and scaling (d_k = {self.d_k}, scores {how}): spread {s['spread']:.2f}, "
                f"largest weight {s['max_weight']:.3f}, entropy {s['entropy']:.3f} nats")
