"""Time per generated token: the package's cached NumPy decoder beside transformers' eager decoding, one model.

Run from the repository root (transformers and torch: the `[torch]` extra):

    .venv/bin/python benchmarks/bench_decode.py                 # lengths 128 .. 8192, about two minutes
    .venv/bin/python benchmarks/bench_decode.py --lengths 256 4096 --repeats 9
    .venv/bin/python benchmarks/bench_decode.py --help

transformers builds a tiny random LlamaForCausalLM (no download), saves it,
and `attention_course.load_decoder` reads the same checkpoint. For each
context length n both read the first n - 1 tokens into their caches (in
chunks, not timed), then the step that produces token n's logits is timed:
ours with a `KVCache`, transformers' with its `DynamicCache` and
`attn_implementation="eager"`, both in float32 on one thread (so the machine's
other core does not decide the comparison). In each round every row runs
once, in turn, from a copy of its filled cache, so background load hits every
row of a round alike; the report gives medians over rounds and the median of
the per-round ratios. Without the cache (`--recompute`), our decoder runs all
n tokens again, as it would without one. The logits of the two cached steps
are compared too: a benchmark of wrong numbers would be worthless.
"""

from __future__ import annotations

import argparse
import copy
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

try:
    import attention_course
except ImportError:  # run from a checkout without `pip install -e .`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import attention_course

from attention_course.decoder import load_decoder

MODEL = dict(vocab_size=512, hidden_size=128, intermediate_size=256, num_hidden_layers=4, num_attention_heads=8,
             num_key_value_heads=2, max_position_embeddings=65536)
"""The benchmarked decoder: 4 layers, 8 query heads of 16 sharing 2 key/value heads, GQA as in Llama 3."""
CHUNK = 512
"""Tokens per forward call while the cache is filled (not timed)."""


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--lengths", type=int, nargs="+", default=[128, 512, 2048, 8192],
                   help="context lengths n: the timed step produces the logits after token n")
    p.add_argument("--repeats", type=int, default=7, help="timed rounds per length (each row once per round)")
    p.add_argument("--recompute", action="store_true",
                   help="also time our decoder without the cache (all n tokens again), up to n = 2048")
    return p.parse_args(argv)


def fill(step, ids, cache) -> None:
    """Read `ids` into `cache` in chunks of CHUNK tokens with step(chunk, cache)."""
    for start in range(0, len(ids), CHUNK):
        step(ids[start:start + CHUNK], cache)


def main(argv=None) -> int:
    args = parse_args(argv)
    try:
        import torch
        import transformers
        from transformers import DynamicCache, LlamaConfig, LlamaForCausalLM
    except ImportError as err:
        print(f"this benchmark compares with transformers, which is not installed ({err}): "
              'pip install -e ".[torch]"')
        return 2
    torch.set_num_threads(1)
    torch.manual_seed(0)
    hf = LlamaForCausalLM(LlamaConfig(**MODEL, attn_implementation="eager")).eval()
    with torch.no_grad():  # weights of a trained model's size, so that attention is far from uniform
        for name, p in hf.named_parameters():
            if p.ndim == 2:
                p.normal_(0, 1 / np.sqrt(p.shape[1]))
    with tempfile.TemporaryDirectory() as folder:
        hf.save_pretrained(folder)
        ours = load_decoder(folder)
    ours.name = "tiny random Llama"
    ids = np.random.default_rng(0).integers(0, MODEL["vocab_size"], max(args.lengths))
    print(f"{ours}")
    print(f"attention_course {attention_course.__version__}, numpy {np.__version__}, torch {torch.__version__}, "
          f"transformers {transformers.__version__}; one thread each, float32, median of {args.repeats} rounds")
    print(f"load average before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores\n")

    def hf_step(chunk, cache):
        with torch.no_grad():
            return hf(torch.from_numpy(np.asarray(chunk))[None], cache=cache, use_cache=True).logits[0, -1].numpy()

    def ours_step(chunk, cache):
        return ours.forward(chunk, cache, need_weights=False).logits[-1]

    print(f"{'n':>6}  {'ours, cached':>12}  {'transformers eager':>18}  {'ours / transformers':>19}  "
          f"{'per-round range':>15}  {'ours, recomputed':>16}  {'max |logit diff|':>16}")
    with threadpool_limits(limits=1, user_api="blas"):
        for n in args.lengths:
            prompt, last = ids[: n - 1], ids[n - 1: n]
            our_cache, hf_cache = ours.new_cache(), DynamicCache(config=hf.config)
            fill(ours_step, prompt, our_cache)
            fill(hf_step, prompt, hf_cache)
            rows = {"ours": [], "hf": [], "recomputed": []}
            diff = 0.0
            recompute = args.recompute and n <= 2048
            for _ in range(args.repeats + 1):  # the first round warms up
                times = {}
                for name in ("ours", "hf") + (("recomputed",) if recompute else ()):
                    if name == "ours":
                        cache = copy.deepcopy(our_cache)
                        start = time.perf_counter()
                        mine = ours_step(last, cache)
                    elif name == "hf":
                        cache = copy.deepcopy(hf_cache)
                        start = time.perf_counter()
                        theirs = hf_step(last, cache)
                    else:
                        start = time.perf_counter()
                        ours.forward(ids[:n], need_weights=False)
                    times[name] = time.perf_counter() - start
                for name, t in times.items():
                    rows[name].append(t)
                diff = max(diff, float(np.abs(mine - theirs).max()))
            rows = {name: values[1:] for name, values in rows.items()}  # drop the warm-up round
            ratios = [a / b for a, b in zip(rows["ours"], rows["hf"])]
            recomputed = f"{statistics.median(rows['recomputed']) * 1e3:13.2f} ms" if recompute else f"{'-':>16}"
            print(f"{n:>6}  {statistics.median(rows['ours']) * 1e3:9.2f} ms  {statistics.median(rows['hf']) * 1e3:15.2f} ms  "
                  f"{statistics.median(ratios):19.2f}  {min(ratios):7.2f}-{max(ratios):<7.2f}  {recomputed}  {diff:16.1e}")
    print(f"\nload average after: {os.getloadavg()[0]:.2f} (above about 1 on this many cores, other work shared them)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
