"""The roofline of this machine and where the book's NumPy decoder lands on it: prefill and decoding steps, timed.

Run from the repository root:

    .venv/bin/python benchmarks/bench_roofline.py                    # about half a minute
    .venv/bin/python benchmarks/bench_roofline.py --contexts 512 8192 --rounds 15
    .venv/bin/python benchmarks/bench_roofline.py --help

The decoder is the chapter's `random_decoder` (4 layers, d_model = 512, 8 query
heads of 64 with 8, 2 or 1 key/value heads, a feed-forward width of 1,536,
1,024 words, float32, 49 to 57 MB of weights), on one BLAS thread. Each round
measures, one after the other: the two ceilings as the chapter measures them
(`chapters.roofline.measure_bandwidth`, a matrix-vector product streaming a
large float32 matrix; `measure_matmul_rate`, a square float32 matrix
product), one decoding step after each context length with a
`ReservedKVCache` (written in place) and one with the decoding chapter's
`KVCache` (which copies itself at every step), and one prefill of each
prompt length. Background load that hits one round hits all of its rows.

For each point: FLOPs and bytes counted by `step_cost`, the achieved GFLOP/s
and GB/s (counted over the median measured time), the time the roofline
predicts from the same round's ceilings (max(FLOPs / peak, bytes /
bandwidth)), and the median and range over rounds of predicted / measured;
for decoding steps also the median per-round ratio of the KVCache step's time
to the ReservedKVCache step's. Each step adds one token to its cache, so the
last round's context is longer by the number of rounds: too little to see.
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

from attention_course.chapters import decoding, roofline
from attention_course.decoder import ReservedKVCache

MODEL = dict(vocab_size=1024, d_model=512, n_layers=4, n_heads=8, head_dim=64, d_ff=1536)
"""The timed decoder (the chapter's): its weights do not fit in the processor's caches."""
LAYOUTS = {"MHA": 8, "GQA": 2, "MQA": 1}
"""Key/value heads of each head layout."""


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--contexts", type=int, nargs="+", default=[256, 1024, 4096],
                   help="tokens cached before each timed decoding step")
    p.add_argument("--prompts", type=int, nargs="+", default=[32, 128, 256], help="prompt lengths of the timed prefills")
    p.add_argument("--layouts", nargs="+", default=list(LAYOUTS), choices=list(LAYOUTS), help="head layouts to time")
    p.add_argument("--rounds", type=int, default=9, help="timed rounds (every row once per round)")
    p.add_argument("--stream-mib", type=int, default=256, help="size of the array streamed for the bandwidth")
    p.add_argument("--matmul", type=int, default=1024, help="n of the n x n matrix product for the arithmetic rate")
    p.add_argument("--model", type=str, default="", help=argparse.SUPPRESS)  # "small": a tiny model, for the tests
    args = p.parse_args(argv)
    for name in ("contexts", "prompts"):
        if any(x < 1 for x in getattr(args, name)):
            p.error(f"--{name} must be positive integers; got {getattr(args, name)}")
    for name in ("rounds", "stream_mib", "matmul"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be at least 1; got {getattr(args, name)}")
    return args


def seconds_of(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main(argv=None) -> int:
    args = parse_args(argv)
    sizes = dict(MODEL, d_model=32, head_dim=4, d_ff=64, vocab_size=64) if args.model == "small" else MODEL
    models = {name: attention_course.random_decoder(np.random.default_rng(0), n_kv_heads=LAYOUTS[name],
                                                    dtype=np.float32, **sizes)
              for name in args.layouts}
    token = np.array([1])
    rows = []  # dicts: label, cost, run (one timed call), copying (the KVCache call, for decoding steps)
    for name, model in models.items():
        shape = roofline.DecoderShape.of(model)
        for n in args.contexts:  # caches filled once, not timed
            rng = np.random.default_rng(0)
            reserved = decoding.filled_cache(model, n, rng, ReservedKVCache(sizes["n_layers"], n + args.rounds + 2))
            copying = decoding.filled_cache(model, n, np.random.default_rng(0))
            rows.append({"label": f"decode {name}, {n} tokens", "cost": roofline.step_cost(shape, 1, n, dtype="float32").total,
                         "run": lambda m=model, c=reserved: m.forward(token, c, need_weights=False),
                         "copying": lambda m=model, c=copying: m.forward(token, c, need_weights=False)})
    prefill_model = models.get("GQA", next(iter(models.values())))
    for n in args.prompts:
        ids = np.random.default_rng(0).integers(0, sizes["vocab_size"], n)
        rows.append({"label": f"prefill, {n} tokens",
                     "cost": roofline.step_cost(roofline.DecoderShape.of(prefill_model), n, dtype="float32").total,
                     "run": lambda i=ids: prefill_model.forward(i, need_weights=False), "copying": None})

    ceilings, times = [], {row["label"]: [] for row in rows}
    copy_ratios = {row["label"]: [] for row in rows if row["copying"]}
    with threadpool_limits(limits=1, user_api="blas"):
        for row in rows:  # warm up
            row["run"]()
        for _ in range(args.rounds):
            ceilings.append(roofline.measure_ceilings(repeat=1, n_bytes=args.stream_mib * 2**20, n=args.matmul))
            for row in rows:
                times[row["label"]].append(seconds_of(row["run"]))
                if row["copying"]:
                    copy_ratios[row["label"]].append(seconds_of(row["copying"]) / times[row["label"]][-1])

    bandwidths, rates = [c.bandwidth / 1e9 for c in ceilings], [c.flops / 1e9 for c in ceilings]
    print(f"ceilings (one thread; {args.rounds} rounds): median [range]")
    print(f"  memory bandwidth ({args.stream_mib} MiB streamed):   {statistics.median(bandwidths):7.2f} GB/s "
          f"[{min(bandwidths):.2f}-{max(bandwidths):.2f}]")
    print(f"  matrix products ({args.matmul} x {args.matmul} float32): {statistics.median(rates):7.2f} GFLOP/s "
          f"[{min(rates):.2f}-{max(rates):.2f}]")
    print(f"  ridge point:                          {statistics.median(r / b for r, b in zip(rates, bandwidths)):7.2f} "
          f"FLOPs per byte")
    print()
    print(f"{'':26} {'FLOPs/byte':>10} {'GFLOP/s':>8} {'GB/s':>6} {'measured':>9} "
          f"{'predicted / measured':>21} {'KVCache / reserved':>18}")
    for row in rows:
        cost, measured = row["cost"], times[row["label"]]
        ratios = [c.time(cost) / t for c, t in zip(ceilings, measured)]  # each round against its own ceilings
        median = statistics.median(measured)
        line = (f"{row['label']:26} {cost.intensity:>10.2f} {cost.flops / median / 1e9:>8.2f} "
                f"{cost.bytes / median / 1e9:>6.2f} {median * 1e3:>6.2f} ms "
                f"{statistics.median(ratios):>8.2f} [{min(ratios):.2f}-{max(ratios):.2f}]")
        if row["copying"]:
            copies = copy_ratios[row["label"]]
            line += f" {statistics.median(copies):>7.2f} [{min(copies):.2f}-{max(copies):.2f}]"
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
