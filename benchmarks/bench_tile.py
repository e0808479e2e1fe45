"""Where the time of flash_attention's compiled backend goes, per score, on one core.

Run from the repository root:

    .venv/bin/python benchmarks/bench_tile.py              # n = 4096, float32 and float64, 7 rounds
    .venv/bin/python benchmarks/bench_tile.py --help

Everything runs on one thread (BLAS, flash_attention's workers, torch), so the
numbers are per-core costs, steadier than two-core times on a shared machine.
Each round times, in turn:

- the whole `flash_attention` call;
- PyTorch's fused CPU kernel on (1, 1, n, d) inputs, where torch is installed;
- flash_attention's compiled loop (`loop.attend_query_tile`) over
  every query tile, for scores that skip the running max;
- the same tiles' two matrix products alone (the same BLAS calls), then the
  products with the compiled pass of `exp2` (exp and row sums)
  between them;
- `np.exp` on the same tiles: what the compiled pass replaced (as NumPy calls
  it also needed row sums, and a max and a subtraction with the running max).

From these, per round: the compiled pass (products and pass, minus the
products), the rest of the loop (the loop, minus products and pass: rescaling,
the final division), and what lies outside the loop (the whole call, minus
the loop: checks, scaling Q, handing out the tiles).

Times are reported in nanoseconds per score (n^2 of them), medians of the
rounds with their range. Nothing here is a test.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np
from numba import njit
from threadpoolctl import threadpool_limits

try:
    import attention_course
except ImportError:  # run from a checkout without `pip install -e .`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import attention_course

from attention_course import flash_attention
from attention_course.tiled._compiled import driver
from attention_course.tiled._compiled import exp2, loop
from attention_course.tiled._compiled.gemm import matmul_into
from attention_course.tiled.flash import DEFAULT_BLOCK_SIZE

D = 64


@njit(nogil=True)
def products(q, k, v, block_q, block_k, scratch, out, with_pass, l):
    """The two products of every tile, as flash_attention's loop makes them; with_pass: the compiled pass between them.

    Args:
        q, k, v: (n, d) each, one dtype; out: (n, d_v) receives the (unnormalised) sums.
        scratch: (block_q, block_k); l: (block_q,) row sums, used when with_pass.
    """
    n = k.shape[0]
    out[:, :] = 0
    for r0 in range(0, q.shape[0], block_q):
        q_tile = q[r0:r0 + block_q]  # (bq, d_k)
        bq = q_tile.shape[0]
        for c0 in range(0, n, block_k):
            bk = min(block_k, n - c0)
            s = scratch[:bq, :bk]
            matmul_into(q_tile, k[c0:c0 + bk].T, s, False)  # (bq, d_k) x (d_k, bk) -> (bq, bk)
            if with_pass:
                exp2.exp_rows(scratch, bq, bk, l)
            matmul_into(s, v[c0:c0 + bk], out[r0:r0 + bq], True)  # (bq, bk) x (bk, d_v) -> (bq, d_v)


def base_2_scale(q):
    """flash_attention's factor on the queries: 1 / sqrt(d_k) times log2(e), so the scores come out in base 2."""
    return q.dtype.type(loop.LOG2_E / np.sqrt(q.shape[1]))


def compiled_loop(q, k, v, block_q: int, block_k: int) -> np.ndarray:
    """flash_attention's compiled loop over every query tile, max-free, on one thread: the (n, d_v) output."""
    n, d_v = q.shape[0], v.shape[1]
    dtype = q.dtype
    scratch = np.empty((block_q, block_k), dtype=dtype)  # (block_q, block_k) one tile of scores
    m, l, alpha = (np.empty(block_q, dtype=dtype) for _ in range(3))  # (block_q,) each
    out = np.empty((n, d_v), dtype=dtype)  # (n, d_v)
    q = q * base_2_scale(q)  # (n, d_k) scaled, as flash_attention scales each tile
    for r0 in range(0, n, block_q):
        rows = slice(r0, min(r0 + block_q, n))
        loop.attend_query_tile(q[rows], k, v, None, r0, n, False, False, block_k, scratch, m, l, alpha, out[rows])
    return out


def numpy_exp_seconds(q, k, block_q: int, block_k: int) -> float:
    """np.exp over the same (block_q, block_k) score tiles, in place."""
    n = q.shape[0]
    scratch = np.empty((block_q, block_k), dtype=q.dtype)
    seconds = 0.0
    for r0 in range(0, n, block_q):
        for c0 in range(0, n, block_k):
            s = scratch[: min(block_q, n - r0), : min(block_k, n - c0)]
            np.matmul(q[r0:r0 + block_q], k[c0:c0 + block_k].T, out=s)
            s *= q.dtype.type(1 / np.sqrt(q.shape[1]))  # the scaled scores, as flash_attention exponentiates them
            t0 = time.perf_counter()
            np.exp(s, out=s)
            seconds += time.perf_counter() - t0
    return seconds


def _seconds(fn, *args) -> float:
    t0 = time.perf_counter()
    fn(*args)
    return time.perf_counter() - t0


def one_round(q, k, v, block_q: int, block_k: int, torch) -> dict[str, float]:
    """One timing of each row, in seconds; the derived rows are differences within the round."""
    dtype = q.dtype
    scratch = np.empty((block_q, block_k), dtype=dtype)
    l = np.zeros(block_q, dtype=dtype)
    out = np.empty_like(v)
    times = {"flash_attention, whole call": _seconds(flash_attention, q, k, v, None, False, None, (block_q, block_k), "numba")}
    if torch is not None:
        tq, tk, tv = (torch.from_numpy(x[None, None]) for x in (q, k, v))
        times["torch's fused kernel, whole call"] = _seconds(torch.nn.functional.scaled_dot_product_attention, tq, tk, tv)
    times["compiled loop"] = _seconds(compiled_loop, q, k, v, block_q, block_k)
    times["the two products alone"] = _seconds(products, q, k, v, block_q, block_k, scratch, out, False, l)
    with_pass = _seconds(products, q * base_2_scale(q), k, v, block_q, block_k, scratch, out, True, l)
    times["compiled pass (exp, row sums)"] = with_pass - times["the two products alone"]
    times["rest of the loop"] = times["compiled loop"] - with_pass
    times["outside the loop"] = times["flash_attention, whole call"] - times["compiled loop"]
    times["np.exp on the same tiles"] = numpy_exp_seconds(q, k, block_q, block_k)
    return times


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=4096, help="sequence length (default 4096)")
    parser.add_argument("--dtypes", nargs="+", default=["float32", "float64"], choices=["float32", "float64"])
    parser.add_argument("--repeats", type=int, default=7, help="rounds (default 7); medians are reported")
    parser.add_argument("--no-torch", action="store_true", help="leave torch out even if it is installed")
    args = parser.parse_args(argv)
    if args.n < 1 or args.repeats < 1:
        parser.error("--n and --repeats must be positive")
    torch = None
    if not args.no_torch:
        try:
            import torch
        except ImportError:
            print("torch is not installed: its row is left out (pip install -e '.[torch]')")
    if torch is not None:
        torch.set_num_threads(1)
    driver.cpu_count = lambda: 1  # flash_attention's workers: one thread
    block_q, block_k = DEFAULT_BLOCK_SIZE
    print(f"per score, one thread: n = {args.n}, d = {D}, tiles {block_q} x {block_k}, "
          f"{args.repeats} rounds, ns per score: median [min-max]")
    with threadpool_limits(1):
        for name in args.dtypes:
            dtype = np.dtype(name)
            rng = np.random.default_rng(0)
            q, k, v = (rng.standard_normal((args.n, D)).astype(dtype) for _ in range(3))  # (n, d) each
            one_round(q[:block_k], k[:block_k], v[:block_k], block_q, block_k, torch)  # compile, warm up (n = block_k)
            rounds = [one_round(q, k, v, block_q, block_k, torch) for _ in range(args.repeats)]
            print(f"\n{name}")
            per_score = 1e9 / args.n**2
            for label in rounds[0]:
                values = [r[label] * per_score for r in rounds]
                print(f"   {label:34s} {statistics.median(values):6.2f} [{min(values):.2f}-{max(values):.2f}]")
    return 0


if __name__ == "__main__":
    sys.exit(main())
