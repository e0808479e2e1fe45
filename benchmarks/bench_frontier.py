"""One decoding step of a full, a sparse (top-k) and a delta-rule attention layer against the context length.

Run from the repository root:

    .venv/bin/python benchmarks/bench_frontier.py                     # about a minute
    .venv/bin/python benchmarks/bench_frontier.py --contexts 1024 65536 --rounds 9
    .venv/bin/python benchmarks/bench_frontier.py --help

Each layer has h = 8 heads of d = 64, float32, one BLAS thread
(`chapters.without_all_scores.time_decode_steps`, which the chapter
book/without_all_scores.ipynb runs at smaller sizes):

- full: the new token's queries against every cached key and value;
- sparse: a lightning indexer (h_I = 4 heads of d_I = 32) scores every
  cached token, the k = 256 best are gathered (np.argpartition), and the
  queries attend over them alone;
- delta: one gated delta-rule step on an h x d x d state.

For each context length: the fastest of each step's rounds x repeat calls
(other processes only add time), the
measured ratio to the full step beside the ratio of the numbers each step
reads (`DecodeShape.numbers_read`: what a memory-bound step's time follows),
and their quotient predicted / measured. Then, for each kind, the slope
(microseconds per 1,000 more cached tokens, least squares over the lengths
from --slope-from on) and the crossover: the length from which the step is
faster than the full one, measured (interpolated between lengths) and
predicted from the numbers read.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

try:
    import attention_course  # noqa: F401
except ImportError:  # run from a checkout without `pip install -e .`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from attention_course.chapters.without_all_scores import (
    DecodeShape, line_fit, measured_crossover, predicted_crossover, time_decode_steps,
)

KINDS = ("full", "sparse", "delta")


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--contexts", type=int, nargs="+",
                   default=[16, 64, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536],
                   help="tokens cached before each timed step")
    p.add_argument("--rounds", type=int, default=7, help="timed rounds (every step once per round)")
    p.add_argument("--repeat", type=int, default=5, help="calls of each step per round")
    p.add_argument("--heads", type=int, default=DecodeShape.heads, help="h")
    p.add_argument("--head-dim", type=int, default=DecodeShape.head_dim, help="d")
    p.add_argument("--top-k", type=int, default=DecodeShape.top_k, help="keys the sparse step keeps")
    p.add_argument("--slope-from", type=int, default=1024, help="fit the slopes over the lengths from this one on")
    args = p.parse_args(argv)
    if any(n < 1 for n in args.contexts):
        p.error(f"--contexts must be positive integers; got {args.contexts}")
    for name in ("rounds", "repeat", "heads", "head_dim", "top_k"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be at least 1; got {getattr(args, name)}")
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    shape = DecodeShape(heads=args.heads, head_dim=args.head_dim, top_k=args.top_k)
    contexts = sorted(set(args.contexts))
    times = time_decode_steps(contexts, shape, rounds=args.rounds, repeat=args.repeat)
    print(f"one decoding step, h = {shape.heads}, d = {shape.head_dim}, k = {shape.top_k}, "
          f"indexer {shape.index_heads} x {shape.index_dim}, float32, one thread; fastest of "
          f"{args.rounds} x {args.repeat} calls")
    print(f"{'n':>7} {'full us':>9} {'sparse us':>9} {'delta us':>9}  "
          f"{'sparse/full meas pred p/m':>26}  {'delta/full meas pred p/m':>25}")
    for i, n in enumerate(contexts):
        read = shape.numbers_read(n)
        line = f"{n:7} " + " ".join(f"{times[k][i] * 1e6:9.1f}" for k in KINDS) + " "
        for kind in ("sparse", "delta"):
            measured = times[kind][i] / times["full"][i]
            predicted = read[kind] / read["full"]
            line += f" {measured:10.3f} {predicted:7.3f} {predicted / measured:6.2f}"
        print(line)
    tail = [i for i, n in enumerate(contexts) if n >= args.slope_from]
    print()
    print(f"slopes over n >= {args.slope_from}, us per 1,000 tokens (meas / pred: the numbers read per token)")
    slopes = {}
    if len(tail) >= 2:
        for kind in KINDS:
            slopes[kind] = line_fit([contexts[i] for i in tail], times[kind][tail])[1] * 1e9
        read_slope = {k: shape.numbers_read(2)[k] - shape.numbers_read(1)[k] for k in KINDS}  # at n > k
        read_slope["sparse"] = shape.index_dim
        for kind in KINDS:
            print(f"  {kind:7} {slopes[kind]:9.3f}   / full: measured {slopes[kind] / slopes['full']:7.4f}, "
                  f"predicted {read_slope[kind] / read_slope['full']:7.4f}")
    else:
        print("  (fewer than two lengths: no slope)")
    print()
    print("crossover: the context from which a step is faster than the full one")
    for kind in ("sparse", "delta"):
        measured = measured_crossover(contexts, times["full"], times[kind])
        said = "never, at the lengths measured" if measured is None else f"{measured:,.0f} tokens"
        print(f"  {kind:7} measured {said:>30}; predicted {predicted_crossover(shape, kind):,.0f} tokens")
    return 0


if __name__ == "__main__":
    sys.exit(main())
