"""Where the time of flash_attention goes, per score, on one core.

Run from the repository root:

    .venv/bin/python benchmarks/bench_tile.py              # n = 4096, float32 and float64, 7 rounds
    .venv/bin/python benchmarks/bench_tile.py --help

Everything runs on one thread (BLAS, flash_attention's workers, torch), so the
numbers are per-core costs, steadier than two-core times on a shared machine.
Each round times, in turn:

- the whole `flash_attention` call;
- PyTorch's fused CPU kernel on (1, 1, n, d) inputs, where torch is installed;
- flash_attention's loop for scores that skip the running max, taken apart
  with a clock around each step of every tile: the product Q K^T, the compiled
  pass of `tile_softmax` (exp and row sums), the product P V with its sum into
  the numerator, and the rest (Python, slicing, the final division);
- `np.exp` on the same tiles: what the compiled pass replaced (as NumPy calls
  it also needed row sums, and a max and a subtraction with the running max).

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
from threadpoolctl import threadpool_limits

try:
    import attention_course
except ImportError:  # run from a checkout without `pip install -e .`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import attention_course

import attention_course.flash as flash_module
from attention_course import flash_attention, tile_softmax

D = 64


def loop_parts(q, k, v, block_q: int, block_k: int) -> tuple[dict[str, float], np.ndarray]:
    """flash_attention's max-free loop on one thread, timed step by step.

    Args:
        q, k, v: (n, d) each, one dtype, scores small enough to skip the max.
        block_q, block_k: the tile.

    Returns:
        ({step: seconds summed over the tiles}, the (n, d_v) attention output).
    """
    n, d_v = q.shape[0], v.shape[1]
    dtype = q.dtype
    scratch = np.empty((block_q, block_k), dtype=dtype)  # (block_q, block_k) one tile of scores
    pv = np.empty((block_q, d_v), dtype=dtype)  # (block_q, d_v)
    out = np.empty((n, d_v), dtype=dtype)  # (n, d_v)
    scale = dtype.type(1 / np.sqrt(q.shape[1]))
    parts = dict.fromkeys(("Q K^T", "compiled pass", "P V", "rest"), 0.0)
    start = time.perf_counter()
    for r0 in range(0, n, block_q):
        q_tile = q[r0:r0 + block_q] * scale  # (bq, d_k)
        bq = q_tile.shape[0]
        l = np.zeros(bq, dtype=dtype)  # (bq,)
        acc = np.zeros((bq, d_v), dtype=dtype)  # (bq, d_v)
        for c0 in range(0, n, block_k):
            cols = slice(c0, min(c0 + block_k, n))
            bk = cols.stop - cols.start
            s = scratch[:bq, :bk]
            t0 = time.perf_counter()
            np.matmul(q_tile, k[cols].T, out=s)  # (bq, d_k) x (d_k, bk) -> (bq, bk)
            t1 = time.perf_counter()
            tile_softmax.exp_rows(scratch, bq, bk, l)
            t2 = time.perf_counter()
            acc += np.matmul(s, v[cols], out=pv[:bq])  # (bq, bk) x (bk, d_v) -> (bq, d_v)
            t3 = time.perf_counter()
            parts["Q K^T"] += t1 - t0
            parts["compiled pass"] += t2 - t1
            parts["P V"] += t3 - t2
        out[r0:r0 + bq] = acc / l[:, None]
    total = time.perf_counter() - start
    parts["rest"] = total - sum(parts.values())
    parts["loop, all of it"] = total
    return parts, out


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


def one_round(q, k, v, block_q: int, block_k: int, torch) -> dict[str, float]:
    times = {}
    t0 = time.perf_counter()
    flash_attention(q, k, v, block_size=(block_q, block_k))
    times["flash_attention, whole call"] = time.perf_counter() - t0
    if torch is not None:
        tq, tk, tv = (torch.from_numpy(x[None, None]) for x in (q, k, v))
        t0 = time.perf_counter()
        torch.nn.functional.scaled_dot_product_attention(tq, tk, tv)
        times["torch's fused kernel, whole call"] = time.perf_counter() - t0
    times.update(loop_parts(q, k, v, block_q, block_k)[0])
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
    flash_module.cpu_count = lambda: 1  # flash_attention's workers: one thread
    block_q, block_k = flash_module.DEFAULT_BLOCK_SIZE
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
