"""What attention costs: counted FLOPs and bytes, measured time and memory (book/cost.ipynb).

Counting: for n_q queries, n_k keys and key/value sizes d_k, d_v,

    Q K^T           n_q * n_k dot products of length d_k   2 n_q n_k d_k FLOPs
    softmax         a few passes over the n_q x n_k scores  ~5 n_q n_k
    weights @ V     n_q * n_k multiply-adds per value dim  2 n_q n_k d_v

so the work is O(n^2 d) for n = n_q = n_k, and the plain computation also
stores the n_q x n_k matrix, O(n^2) memory. The backward pass
(`backward_flops`, book/backward.ipynb) has five products of that size where
the forward has two: 2.5 times the work for d_k = d_v, when the scores are
recomputed as FlashAttention does. Measuring: `measure` times a call
(best and median of several runs) and records the peak memory it allocates
(NumPy reports its allocations to `tracemalloc`); `loglog_slope` fits the
exponent p in cost ~ n^p.
"""

from __future__ import annotations

import time
import tracemalloc
from contextlib import nullcontext
from dataclasses import dataclass

import numpy as np

from ..core._checks import positive_int

SOFTMAX_FLOPS_PER_SCORE = 5
"""Operations per score in the softmax: scale, subtract the max, exp, add to the sum, divide.

(Finding the max is a comparison per score; like most FLOP counts, we do not count it.)"""


@dataclass(frozen=True)
class AttentionFlops:
    """Floating-point operations of one plain attention computation."""

    scores: int
    """Q K^T: 2 n_q n_k d_k (one multiply and one add per term of each dot product)."""
    softmax: int
    """The softmax over the scores: SOFTMAX_FLOPS_PER_SCORE * n_q * n_k."""
    mix: int
    """weights @ V: 2 n_q n_k d_v."""

    @property
    def total(self) -> int:
        """All three together."""
        return self.scores + self.softmax + self.mix


def attention_flops(n_q: int, n_k: int | None = None, d_k: int = 64, d_v: int | None = None, *,
                    batch: int = 1) -> AttentionFlops:
    """Count the FLOPs of softmax(Q K^T * scale) V.

    Args:
        n_q: number of queries.
        n_k: number of keys; defaults to n_q (self-attention).
        d_k: size of queries and keys.
        d_v: size of values; defaults to d_k.
        batch: independent attention computations (batch size times heads).

    Returns:
        AttentionFlops with the three parts as Python ints (no overflow).
    """
    n_q = positive_int(n_q, "n_q")
    n_k = n_q if n_k is None else positive_int(n_k, "n_k")
    d_k = positive_int(d_k, "d_k")
    d_v = d_k if d_v is None else positive_int(d_v, "d_v")
    batch = positive_int(batch, "batch")
    pairs = batch * n_q * n_k  # one score per (query, key) pair
    return AttentionFlops(scores=2 * pairs * d_k, softmax=SOFTMAX_FLOPS_PER_SCORE * pairs, mix=2 * pairs * d_v)


BACKWARD_SOFTMAX_FLOPS_PER_SCORE = 2
"""dS = P * (dP - D): a subtraction and a multiplication per score."""

RECOMPUTE_FLOPS_PER_SCORE = 3
"""Rebuilding a weight from its score: scale, subtract the log-sum-exp, exp."""


@dataclass(frozen=True)
class BackwardFlops:
    """Floating-point operations of one attention backward pass."""

    scores: int
    """Q K^T again, 2 n_q n_k d_k, when the scores are recomputed (0 when the weights were kept)."""
    weights: int
    """The weights again from the scores, RECOMPUTE_FLOPS_PER_SCORE n_q n_k (0 when they were kept)."""
    dv: int
    """dV = P^T dO: 2 n_q n_k d_v."""
    dp: int
    """dP = dO V^T: 2 n_q n_k d_v."""
    softmax: int
    """dS = P * (dP - D): BACKWARD_SOFTMAX_FLOPS_PER_SCORE n_q n_k, and D = rowsum(O * dO), 2 n_q d_v."""
    dq: int
    """dQ = scale dS K: 2 n_q n_k d_k."""
    dk: int
    """dK = scale dS^T Q: 2 n_q n_k d_k."""

    @property
    def products(self) -> int:
        """The matrix products alone: four, and a fifth (Q K^T again) when the scores are recomputed."""
        return self.scores + self.dv + self.dp + self.dq + self.dk

    @property
    def total(self) -> int:
        """Everything together."""
        return self.products + self.weights + self.softmax


def backward_flops(n_q: int, n_k: int | None = None, d_k: int = 64, d_v: int | None = None, *, batch: int = 1,
                   recompute: bool = True) -> BackwardFlops:
    """Count the FLOPs of the gradients of softmax(Q K^T * scale) V for Q, K and V.

    Args:
        n_q, n_k, d_k, d_v, batch: as in `attention_flops`.
        recompute: True for the tiled backward (FlashAttention's), which
            recomputes the scores and weights from Q, K and the log-sum-exp;
            False for a backward that kept the weights of the forward pass.

    Returns:
        BackwardFlops with its parts as Python ints.
    """
    n_q = positive_int(n_q, "n_q")
    n_k = n_q if n_k is None else positive_int(n_k, "n_k")
    d_k = positive_int(d_k, "d_k")
    d_v = d_k if d_v is None else positive_int(d_v, "d_v")
    batch = positive_int(batch, "batch")
    pairs = batch * n_q * n_k  # one score per (query, key) pair
    return BackwardFlops(
        scores=2 * pairs * d_k if recompute else 0,
        weights=RECOMPUTE_FLOPS_PER_SCORE * pairs if recompute else 0,
        dv=2 * pairs * d_v, dp=2 * pairs * d_v,
        softmax=BACKWARD_SOFTMAX_FLOPS_PER_SCORE * pairs + 2 * batch * n_q * d_v,
        dq=2 * pairs * d_k, dk=2 * pairs * d_k,
    )


def score_matrix_bytes(n_q: int, n_k: int | None = None, dtype="float32", *, batch: int = 1) -> int:
    """Bytes of the (batch, n_q, n_k) score (or weight) matrix the plain computation stores.

    Args:
        n_q, n_k: queries and keys (n_k defaults to n_q).
        dtype: anything `np.dtype` accepts: "float16", "float32", np.float64...
        batch: batch size times heads.
    """
    n_q = positive_int(n_q, "n_q")
    n_k = n_q if n_k is None else positive_int(n_k, "n_k")
    batch = positive_int(batch, "batch")
    try:
        itemsize = np.dtype(dtype).itemsize
    except TypeError:
        raise TypeError(f"dtype must be a NumPy dtype such as 'float32'; got {dtype!r}") from None
    return batch * n_q * n_k * itemsize


@dataclass(frozen=True)
class Measurement:
    """Time and memory of one function call, measured."""

    times: np.ndarray
    """(repeat,) seconds of each timed call, in the order they ran."""
    peak_bytes: int
    """Peak memory allocated during one (separate, untimed) call, above what was allocated before it."""
    result_bytes: int
    """Size of the returned array, or of the arrays of a returned tuple (0 for anything else)."""

    @property
    def best(self) -> float:
        """The fastest call: the least disturbed by everything else on the machine."""
        return float(self.times.min())

    @property
    def median(self) -> float:
        """The median call."""
        return float(np.median(self.times))

    @property
    def extra_bytes(self) -> int:
        """Working memory: the peak minus the result the call must return anyway."""
        return max(self.peak_bytes - self.result_bytes, 0)


def measure(fn, *args, repeat: int = 5, warmup: int = 1, blas_threads: int | None = None, **kwargs) -> Measurement:
    """Time `fn(*args, **kwargs)` and measure the peak memory it allocates.

    Timing uses `time.perf_counter` around each of `repeat` calls, after
    `warmup` untimed calls. Memory is measured in one more call under
    `tracemalloc` (which NumPy reports its array buffers to), kept apart from
    the timed calls because tracing slows allocation down.

    Args:
        fn: the function to call.
        *args, **kwargs: its arguments (`fn` cannot take keyword arguments
            named repeat, warmup or blas_threads through here).
        repeat: timed calls (at least 1).
        warmup: untimed calls first (caches, lazy imports).
        blas_threads: limit the BLAS behind NumPy's matrix products to this
            many threads during all the calls (via threadpoolctl); None leaves
            it as it is. On a busy machine, a multi-threaded BLAS that waits
            for a core someone else is using can make small calls many times
            slower; one thread gives timings that depend on the work.

    Returns:
        A Measurement: times, peak_bytes, result_bytes.
    """
    if not callable(fn):
        raise TypeError(f"fn must be callable; got {type(fn).__name__}")
    repeat = positive_int(repeat, "repeat")
    if not isinstance(warmup, int) or warmup < 0:
        raise ValueError(f"warmup must be a non-negative integer; got {warmup!r}")
    with _blas_limit(blas_threads):
        for _ in range(warmup):
            fn(*args, **kwargs)
        times = np.empty(repeat)
        for i in range(repeat):
            start = time.perf_counter()
            fn(*args, **kwargs)
            times[i] = time.perf_counter() - start
        peak, result = _peak_memory(fn, args, kwargs)
    parts = result if isinstance(result, tuple) else (result,)  # (dq, dk, dv) from a backward pass
    result_bytes = sum(int(r.nbytes) for r in parts if isinstance(r, np.ndarray))
    return Measurement(times=times, peak_bytes=peak, result_bytes=result_bytes)


def _blas_limit(blas_threads):
    """A context that limits BLAS to `blas_threads` threads, or does nothing for None."""
    if blas_threads is None:
        return nullcontext()
    blas_threads = positive_int(blas_threads, "blas_threads")
    from threadpoolctl import threadpool_limits  # imported here: `import attention_course` stays light

    return threadpool_limits(limits=blas_threads, user_api="blas")


def _peak_memory(fn, args, kwargs) -> tuple[int, object]:
    """Peak bytes allocated during one call above the level before it, and the call's result."""
    already_tracing = tracemalloc.is_tracing()
    if not already_tracing:
        tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        before, _ = tracemalloc.get_traced_memory()
        result = fn(*args, **kwargs)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        if not already_tracing:
            tracemalloc.stop()
    return max(peak - before, 0), result


@dataclass(frozen=True)
class SlopeFit:
    """A straight line on log-log axes: y = exp(intercept) * x**slope."""

    slope: float
    """The exponent p in y ~ x**p: 2 for quadratic growth, 0 for flat."""
    intercept: float
    """log(y) at x = 1."""

    def __call__(self, x) -> np.ndarray:
        """The fitted y at `x`."""
        return np.exp(self.intercept) * np.asarray(x, dtype=np.float64) ** self.slope


def loglog_slope(x, y) -> SlopeFit:
    """Least-squares fit of log(y) = slope * log(x) + intercept.

    Args:
        x: (m,) positive sizes, at least two distinct.
        y: (m,) positive measurements (times, bytes, FLOPs).

    Returns:
        A SlopeFit; call it on sizes to draw the fitted line.
    """
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if x.ndim != 1 or x.shape != y.shape:
        raise ValueError(f"x and y must be 1-D of the same length; got shapes {x.shape} and {y.shape}")
    if np.unique(x).size < 2:
        raise ValueError(f"x needs at least two distinct sizes to fit a slope; got {x.tolist()}")
    if not (np.all(x > 0) and np.all(y > 0) and np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
        raise ValueError("x and y must be finite and positive to be drawn on log-log axes")
    slope, intercept = np.polyfit(np.log(x), np.log(y), 1)  # degree 1: a line in log-log space
    return SlopeFit(slope=float(slope), intercept=float(intercept))


def tile_count(n_q: int, n_k: int | None = None, block_size: int = 128, *, is_causal: bool = False) -> int:
    """Number of (query tile, key tile) pairs a tiled computation visits.

    Without a mask every pair is visited: ceil(n_q / b) * ceil(n_k / b).
    Under a causal mask, key tiles that lie entirely after a query tile's last
    query are skipped (every score in them would be -inf), as `flash_attention`
    does: about half the pairs for n_q = n_k.
    """
    n_q = positive_int(n_q, "n_q")
    n_k = n_q if n_k is None else positive_int(n_k, "n_k")
    b = positive_int(block_size, "block_size")
    count = 0
    for i0 in range(0, n_q, b):
        last_key = min(n_k, i0 + b, n_q) if is_causal else n_k  # keys 0..last_key-1 are visible to the tile
        count += -(-last_key // b)  # ceil(last_key / b)
    return count
