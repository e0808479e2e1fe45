"""The roofline of this machine and where the book's NumPy decoder lands on it: prefill and decoding steps, timed.

Run from the repository root:

    .venv/bin/python benchmarks/bench_roofline.py                    # about half a minute
    .venv/bin/python benchmarks/bench_roofline.py --contexts 512 8192 --repeats 9
    .venv/bin/python benchmarks/bench_roofline.py --help

First the two ceilings, measured as the chapter measures them
(`chapters.roofline.measure_bandwidth`: a matrix-vector product streaming a
large float32 matrix; `measure_matmul_rate`: a square float32 matrix
product), before and after the points, each the best of --repeats runs. Then,
for a `random_decoder` (4 layers, d_model = 512, 8 query heads of 64 with 8, 2
or 1 key/value heads, a feed-forward width of 1,536, 1,024 words, float32),
decoding steps after each context length and prefills of each prompt length,
one BLAS thread. For each: FLOPs and bytes counted by `step_cost`, the achieved
GFLOP/s and GB/s (counted over measured), the time the roofline predicts
(max(FLOPs / peak, bytes / bandwidth), with the better of the two measurements
of each ceiling) and the predicted / measured ratio. Decoding steps are timed
with a `ReservedKVCache` (written in place) and, in the last column, with the
`KVCache` of the decoding chapter (which copies itself at every step), as a
ratio of the two times.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

try:
    import attention_course
except ImportError:  # run from a checkout without `pip install -e .`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import attention_course

from attention_course.chapters import roofline
from attention_course.decoder import ReservedKVCache

MODEL = dict(vocab_size=1024, d_model=512, n_layers=4, n_heads=8, head_dim=64, d_ff=1536)
"""The timed decoder (the chapter's): its weights (49 to 57 MB) do not fit in the processor's caches."""
LAYOUTS = {"MHA": 8, "GQA": 2, "MQA": 1}
"""Key/value heads of each head layout."""


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--contexts", type=int, nargs="+", default=[256, 1024, 4096],
                   help="tokens cached before each timed decoding step")
    p.add_argument("--prompts", type=int, nargs="+", default=[32, 128, 256], help="prompt lengths of the timed prefills")
    p.add_argument("--layouts", nargs="+", default=list(LAYOUTS), choices=list(LAYOUTS), help="head layouts to time")
    p.add_argument("--repeats", type=int, default=5, help="timed runs of each measurement (the best is kept)")
    p.add_argument("--stream-mib", type=int, default=256, help="size of the array streamed for the bandwidth")
    p.add_argument("--matmul", type=int, default=1024, help="n of the n x n matrix product for the arithmetic rate")
    p.add_argument("--model", type=str, default="", help=argparse.SUPPRESS)  # "small": a tiny model, for the tests
    args = p.parse_args(argv)
    for name in ("contexts", "prompts"):
        if any(x < 1 for x in getattr(args, name)):
            p.error(f"--{name} must be positive integers; got {getattr(args, name)}")
    for name in ("repeats", "stream_mib", "matmul"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be at least 1; got {getattr(args, name)}")
    return args


def ceilings_now(args) -> roofline.Ceilings:
    return roofline.measure_ceilings(repeat=args.repeats, n_bytes=args.stream_mib * 2**20, n=args.matmul)


def main(argv=None) -> int:
    args = parse_args(argv)
    sizes = dict(MODEL, d_model=32, head_dim=4, d_ff=64, vocab_size=64) if args.model == "small" else MODEL
    before = ceilings_now(args)
    models = {name: attention_course.random_decoder(np.random.default_rng(0), n_kv_heads=LAYOUTS[name],
                                                    dtype=np.float32, **sizes)
              for name in args.layouts}
    rows = []  # (label, cost, seconds, KVCache seconds or None)
    for name, model in models.items():
        shape = roofline.DecoderShape.of(model)
        for n in args.contexts:
            reserved = roofline.time_decode_step(model, n, args.repeats, cache=ReservedKVCache(sizes["n_layers"],
                                                                                                n + args.repeats + 1))
            copying = roofline.time_decode_step(model, n, args.repeats)  # KVCache
            rows.append((f"decode {name}, {n} tokens", roofline.step_cost(shape, 1, n, dtype="float32").total,
                         reserved.min(), copying.min()))
    model = models.get("GQA", next(iter(models.values())))
    for n in args.prompts:
        seconds = roofline.time_prefill(model, n, args.repeats).min()
        rows.append((f"prefill, {n} tokens", roofline.step_cost(roofline.DecoderShape.of(model), n, dtype="float32").total,
                     seconds, None))
    after = ceilings_now(args)
    best = roofline.Ceilings(bandwidth=max(before.bandwidth, after.bandwidth), flops=max(before.flops, after.flops))

    print(f"ceilings (one thread; best of {args.repeats}):  before the points / after them")
    print(f"  memory bandwidth ({args.stream_mib} MiB streamed):   {before.bandwidth / 1e9:7.2f} / "
          f"{after.bandwidth / 1e9:7.2f} GB/s")
    print(f"  matrix products ({args.matmul} x {args.matmul} float32): {before.flops / 1e9:7.2f} / "
          f"{after.flops / 1e9:7.2f} GFLOP/s")
    print(f"  ridge point (the better of each):      {best.ridge:7.2f} FLOPs per byte")
    print()
    print(f"{'':26} {'FLOPs/byte':>10} {'GFLOP/s':>8} {'GB/s':>7} {'predicted':>10} {'measured':>10} "
          f"{'pred/meas':>9} {'KVCache/reserved':>16}")
    for label, cost, seconds, copying in rows:
        predicted = best.time(cost)
        line = (f"{label:26} {cost.intensity:>10.2f} {cost.flops / seconds / 1e9:>8.2f} "
                f"{cost.bytes / seconds / 1e9:>7.2f} {predicted * 1e3:>7.2f} ms {seconds * 1e3:>7.2f} ms "
                f"{predicted / seconds:>9.2f}")
        if copying is not None:
            line += f" {copying / seconds:>16.2f}"
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
