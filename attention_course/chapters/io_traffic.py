"""FlashAttention's argument in counted bytes: what the plain and the tiled computation move between slow and fast memory (book/generating_cost.ipynb).

A GPU keeps its arrays in a large, slow memory (HBM) and computes on a small,
fast one (on-chip SRAM, M numbers). The plain computation writes the n x n
scores to slow memory and reads them back, twice:

    read Q, K -> write S = Q K^T -> read S -> write P = softmax(S) -> read P, V -> write O      4 n d + 4 n^2 numbers

The tiled loop (`tiled.online_softmax.tiled_attention`) keeps a tile of
scores in fast memory and never writes one: it reads each tile of queries
once, every key and value once per tile of queries, and writes the output
once. With tiles of b_q = Theta(M / d) queries that is Theta(n^2 d^2 / M)
numbers (Dao et al. 2022, Theorem 2), far fewer when d^2 is much less than M.

Here the counts are not derived but counted: `SlowMemory` wraps an array so
that reading a slice of it (x[rows]) or writing one (x[rows] = y) adds the
slice's bytes to a `Traffic` tally, and the course's own tiled loop runs on
such arrays unchanged. Its pluggable `update` records each tile's size, so
the fast memory the loop needed is counted too.

`PUBLISHED_FLASH_FIGURES` holds what the FlashAttention papers report on
GPUs: cited, not measured here.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..core._checks import check_scale, positive_int
from ..core.attention import check_qkv
from ..core.softmax import softmax
from ..tiled.online_softmax import OnlineSoftmaxState, online_softmax_update, tiled_attention


@dataclass
class Traffic:
    """Bytes moved between slow and fast memory, per array."""

    reads: dict[str, int] = field(default_factory=dict)
    """Bytes read from slow memory, by array name ("Q", "K", "S", ...)."""
    writes: dict[str, int] = field(default_factory=dict)
    """Bytes written to slow memory, by array name."""
    fast_numbers: int = 0
    """The most numbers held in fast memory at once (counted by the tiled loop; 0 when not counted)."""

    @property
    def read(self) -> int:
        """All bytes read."""
        return sum(self.reads.values())

    @property
    def written(self) -> int:
        """All bytes written."""
        return sum(self.writes.values())

    @property
    def total(self) -> int:
        """Bytes read and written."""
        return self.read + self.written

    def of(self, name: str) -> int:
        """Bytes of one array, read and written."""
        return self.reads.get(name, 0) + self.writes.get(name, 0)


class SlowMemory:
    """An array in slow memory: reading a slice copies it into fast memory, writing one copies it back; both are counted.

    It offers what the tiled loop uses of an array: `shape`, `dtype`,
    x[index] and x[index] = value. The slice read last stays in fast memory:
    reading it again at once costs nothing (the loop writes q[rows] inside
    its loop over key tiles; a kernel loads that tile of queries once).
    """

    def __init__(self, array: np.ndarray, name: str, traffic: Traffic):
        self.array, self.name, self.traffic = array, name, traffic
        self._held: tuple[slice, np.ndarray] | None = None  # the last slice read, still in fast memory

    @property
    def shape(self) -> tuple:
        return self.array.shape

    @property
    def dtype(self) -> np.dtype:
        return self.array.dtype

    def __getitem__(self, index) -> np.ndarray:
        if isinstance(index, slice) and self._held is not None and self._held[0] == index:
            return self._held[1]  # still in fast memory
        part = np.array(self.array[index])  # a copy: the slice now sits in fast memory
        self.traffic.reads[self.name] = self.traffic.reads.get(self.name, 0) + part.nbytes
        self._held = (index, part) if isinstance(index, slice) else None
        return part

    def __setitem__(self, index, value) -> None:
        self._held = None  # what fast memory held of this array is stale now
        self.array[index] = value
        nbytes = np.asarray(self.array[index]).nbytes
        self.traffic.writes[self.name] = self.traffic.writes.get(self.name, 0) + nbytes


def _one_head(q, k, v):
    q, k, v = check_qkv(q, k, v)
    if q.ndim != 2 or k.ndim != 2 or v.ndim != 2:
        raise ValueError(f"the traffic is counted for one head: query (n_q, d_k), key (n_k, d_k), value (n_k, d_v); "
                         f"got shapes {q.shape}, {k.shape}, {v.shape}")
    return q, k, v


def tiled_traffic(query, key, value, block_q: int, block_k: int, *, is_causal: bool = False,
                  scale=None) -> tuple[np.ndarray, Traffic]:
    """Run `tiled_attention` on arrays in slow memory and count what it moves.

    Args:
        query: (n_q, d_k), key: (n_k, d_k), value: (n_k, d_v): one head.
        block_q, block_k: queries and keys per tile.
        is_causal: skip the key tiles after each query tile's last query, as the loop does.
        scale: multiplies the scores; defaults to 1/sqrt(d_k).

    Returns:
        (output (n_q, d_v), Traffic): reads of Q, K and V, writes of O, and
        fast_numbers, the largest tile footprint: a tile of queries, of keys
        and of values, its scores and the running state (m, l and acc).
    """
    q, k, v = _one_head(query, key, value)
    block_q, block_k = positive_int(block_q, "block_q"), positive_int(block_k, "block_k")
    scale = check_scale(scale, q.shape[-1])
    traffic = Traffic()
    d_k, d_v = q.shape[-1], v.shape[-1]

    def counting_update(state: OnlineSoftmaxState, scores: np.ndarray, values: np.ndarray) -> OnlineSoftmaxState:
        bq, bk = scores.shape  # this tile's queries and keys
        held = bq * d_k + bk * d_k + bk * d_v + bq * bk + bq * (d_v + 2)  # Q, K, V tiles, scores, acc, m and l
        traffic.fast_numbers = max(traffic.fast_numbers, held)
        return online_softmax_update(state, scores, values)

    out = SlowMemory(np.empty((q.shape[0], d_v), dtype=q.dtype), "O", traffic)
    tiled_attention(SlowMemory(q, "Q", traffic), SlowMemory(k, "K", traffic), SlowMemory(v, "V", traffic),
                    block_q, block_k, scale=scale, is_causal=is_causal, update=counting_update, out=out)
    return out.array, traffic


def plain_traffic(query, key, value, *, scale=None) -> tuple[np.ndarray, Traffic]:
    """The plain computation in its three passes, with the scores and the weights stored in slow memory.

    S = Q K^T * scale is written, read back for the softmax, P = softmax(S) is
    written, read back with V for P V. (FlashAttention's Algorithm 0.)

    Returns:
        (output (n_q, d_v), Traffic): reads of Q, K, S, P and V, writes of S, P and O.
    """
    q, k, v = _one_head(query, key, value)
    scale = check_scale(scale, q.shape[-1])
    traffic = Traffic()
    n_q, n_k, d_v = q.shape[0], k.shape[0], v.shape[-1]
    Q, K, V = (SlowMemory(a, name, traffic) for a, name in ((q, "Q"), (k, "K"), (v, "V")))
    S = SlowMemory(np.empty((n_q, n_k), dtype=q.dtype), "S", traffic)
    P = SlowMemory(np.empty((n_q, n_k), dtype=q.dtype), "P", traffic)
    O = SlowMemory(np.empty((n_q, d_v), dtype=q.dtype), "O", traffic)
    S[:] = (Q[:] @ K[:].T) * scale  # (n_q, d_k) x (d_k, n_k) -> (n_q, n_k), written out
    P[:] = softmax(S[:], axis=-1)  # read back, normalised, written out
    O[:] = P[:] @ V[:]  # (n_q, n_k) x (n_k, d_v) -> (n_q, d_v)
    return O.array, traffic


def plain_numbers(n: int, d: int) -> int:
    """Numbers the plain computation moves for n queries and n keys of size d: 4 n d + 4 n^2."""
    n, d = positive_int(n, "n"), positive_int(d, "d")
    return 4 * n * d + 4 * n * n


def flash_block_sizes(fast_memory: int, d: int) -> tuple[int, int]:
    """Tile sizes for a fast memory of `fast_memory` numbers and heads of size d: (b_q, b_k).

    b_q = M // (6 d) queries, as many as the memory allows, because every
    tile of queries reads all the keys and values again; b_k = min(b_q, d)
    keys, so that a tile of scores (b_q x b_k) takes no more room than the
    queries. Then a tile of queries, of keys and of values, the scores and
    the running state (acc, m, l) fit in M numbers. (FlashAttention's
    Algorithm 1 chooses B_c = M / 4d and B_r = min(M / 4d, d) for a loop
    that visits the keys in the outer loop; the course's loop visits the
    queries there.)
    """
    fast_memory, d = positive_int(fast_memory, "fast_memory"), positive_int(d, "d")
    if fast_memory < 6 * d:
        raise ValueError(f"fast_memory must hold at least 6 d = {6 * d} numbers for one query and one key; "
                         f"got {fast_memory}")
    block_q = fast_memory // (6 * d)
    return block_q, min(block_q, d)


def flash_io_formula(n: int, d: int, fast_memory: int) -> float:
    """n^2 d^2 / M: the order of the numbers the tiled loop moves (FlashAttention's Theorem 2, without its constant)."""
    n, d, fast_memory = positive_int(n, "n"), positive_int(d, "d"), positive_int(fast_memory, "fast_memory")
    return n * n * d * d / fast_memory


@dataclass(frozen=True)
class PublishedFigure:
    """What a FlashAttention paper reports for its kernel on one GPU: a cited fact, not a measurement."""

    method: str
    """"FlashAttention-2", ..."""
    gpu: str
    """The GPU and the dtype."""
    reported: str
    """The figure as the paper's abstract states it."""
    fraction_of_peak: tuple[float, float]
    """(low, high) fraction of the GPU's peak FLOP/s (equal when the paper gives one number)."""
    source: str
    """The paper: authors, title, arXiv identifier."""


PUBLISHED_FLASH_FIGURES: tuple[PublishedFigure, ...] = (
    PublishedFigure("FlashAttention", "A100, FP16/BF16", "25-40% of the theoretical maximum FLOPs/s",
                    (0.25, 0.40), "as stated by Dao 2023, FlashAttention-2, arXiv:2307.08691 (abstract)"),
    PublishedFigure("FlashAttention-2", "A100, FP16/BF16", "50-73% of the theoretical maximum FLOPs/s",
                    (0.50, 0.73), "Dao 2023, FlashAttention-2: Faster Attention with Better Parallelism and Work "
                                  "Partitioning, arXiv:2307.08691 (abstract)"),
    PublishedFigure("FlashAttention-3", "H100, FP16", "up to 740 TFLOPs/s (75% utilization)",
                    (0.75, 0.75), "Shah et al. 2024, FlashAttention-3: Fast and Accurate Attention with Asynchrony "
                                  "and Low-precision, arXiv:2407.08608 (abstract)"),
    PublishedFigure("FlashAttention-4", "B200, BF16", "up to 1613 TFLOPs/s (71% utilization)",
                    (0.71, 0.71), "Zadouri et al. 2026, FlashAttention-4: Algorithm and Kernel Pipelining Co-Design "
                                  "for Asymmetric Hardware Scaling, arXiv:2603.05451 (abstract)"),
)
"""Fractions of peak the FlashAttention papers report for their forward kernels on GPUs (cited, not measured
here). The first row is FlashAttention-1 as the FlashAttention-2 paper describes it."""
