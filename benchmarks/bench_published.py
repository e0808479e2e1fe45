"""Time per token and memory of published small models run by the package's NumPy decoder: Gemma 3 270M, Qwen3 0.6B.

Run from the repository root (NumPy alone; no download):

    .venv/bin/python benchmarks/bench_published.py                          # both models, contexts 128 and 1024
    .venv/bin/python benchmarks/bench_published.py --models google/gemma-3-270m --contexts 64 512 --repeats 9
    .venv/bin/python benchmarks/bench_published.py --help

The weights cannot be downloaded here, so each model is one of the same shape
(`published.PUBLISHED_CONFIGS`: every matrix the published checkpoint has,
with random values) and what is measured is what the shape costs, which the
values do not change. For each model the script

- writes the checkpoint as the Hub stores it, bfloat16 safetensors, and loads
  it with `load_decoder` in a fresh process, reporting that process's peak
  resident memory (the load, widened to float32) beside the weights' size
  computed from the config (`size.weight_bytes`);
- fills a cache with n - 1 tokens (not timed), then times the step that
  produces token n's logits, median of --repeats rounds on one BLAS thread
  (--threads to change), and reports milliseconds per token and the memory
  bandwidth that step implies (float32 weights it reads / its time);
- checks that cached step against one pass over all n tokens without the
  cache (a benchmark of wrong numbers would be worthless).
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import ml_dtypes
import numpy as np
from threadpoolctl import threadpool_limits

try:
    import attention_course
except ImportError:  # run from a checkout without `pip install -e .`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import attention_course

from attention_course.decoder import DecoderConfig, random_decoder
from attention_course.decoder.load import random_tensors
from attention_course.decoder.published import PUBLISHED_CONFIGS, published_config
from attention_course.decoder.size import active_parameter_count, parameter_count, weight_bytes

MODELS = ("google/gemma-3-270m", "Qwen/Qwen3-0.6B")
"""The published models timed by default: the two small ones a reader can run on a laptop."""

LOAD = """
import sys, time
from attention_course.decoder import load_decoder
start = time.perf_counter()
model = load_decoder(sys.argv[1])
seconds = time.perf_counter() - start
status = dict(line.split(":", 1) for line in open("/proc/self/status"))
print(seconds, int(status["VmHWM"].split()[0]) * 1024)
"""
"""Loads a checkpoint in a fresh process: its time, and its peak resident memory in bytes (Linux's VmHWM: unlike
ru_maxrss, which keeps the parent's figure across fork and exec, it counts this program alone)."""


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--models", nargs="+", default=list(MODELS), help="names in published.PUBLISHED_CONFIGS")
    p.add_argument("--contexts", type=int, nargs="+", default=[128, 1024],
                   help="context lengths n: the timed step produces the logits after token n")
    p.add_argument("--repeats", type=int, default=5, help="timed rounds per context")
    p.add_argument("--threads", type=int, default=1, help="BLAS threads")
    p.add_argument("--shrink", action="store_true", help="a tiny model of each layout (the tests' smoke run)")
    p.add_argument("--no-load", action="store_true", help="skip writing the bfloat16 checkpoint and loading it")
    return p.parse_args(argv)


def published_fields(name: str) -> dict:
    """The published config.json fields of `name`."""
    published_config(name)  # a clear error for an unknown name
    return dict(next(e for e in PUBLISHED_CONFIGS if e.name == name).fields)


def shrunk(name: str) -> dict:
    """The published config.json fields, sizes cut down: the same architecture in a few kilobytes."""
    fields = published_fields(name)
    fields.update(vocab_size=64, hidden_size=16, intermediate_size=32, head_dim=8, num_hidden_layers=6,
                  num_attention_heads=2, num_key_value_heads=1, sliding_window=4)
    fields.pop("layer_types", None)
    return fields


def write_bf16_checkpoint(folder: Path, config_fields: dict, config) -> None:
    """config.json and a bfloat16 model.safetensors of random weights, written one tensor at a time."""
    tensors = random_tensors(np.random.default_rng(0), config, np.float32)
    header, offset = {}, 0
    for name, arr in tensors.items():
        size = arr.size * 2
        header[name] = {"dtype": "BF16", "shape": list(arr.shape), "data_offsets": [offset, offset + size]}
        offset += size
    text = json.dumps(header).encode()
    with open(folder / "model.safetensors", "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        for name in header:
            f.write(tensors[name].astype(ml_dtypes.bfloat16).tobytes())
    (folder / "config.json").write_text(json.dumps({**config_fields, "torch_dtype": "bfloat16"}))


def measure_load(config_fields: dict, config) -> tuple[float, int, int]:
    """(seconds, peak resident bytes of the loading process, bytes of the file) for a bfloat16 checkpoint."""
    with tempfile.TemporaryDirectory() as folder:
        write_bf16_checkpoint(Path(folder), config_fields, config)
        size = (Path(folder) / "model.safetensors").stat().st_size
        out = subprocess.run([sys.executable, "-c", LOAD, folder], capture_output=True, text=True, check=True)
        seconds, peak = out.stdout.split()
        return float(seconds), int(peak), size


def time_steps(model, context: int, repeats: int) -> tuple[list[float], float]:
    """(times of the step producing token `context`'s logits, largest |logit difference| against no cache / largest |logit|)."""
    ids = np.random.default_rng(1).integers(0, model.config.vocab_size, context)
    cache = model.new_cache(keep_window=True)
    for start in range(0, context - 1, 256):  # the first n - 1 tokens, in chunks: not timed
        model.forward(ids[start:min(start + 256, context - 1)], cache, need_weights=False)
    times = []
    for _ in range(repeats + 1):  # the first round warms up
        step_cache = copy.deepcopy(cache)
        start = time.perf_counter()
        logits = model.forward(ids[context - 1:], step_cache, need_weights=False).logits[-1]
        times.append(time.perf_counter() - start)
    full = model.forward(ids, need_weights=False).logits[-1]
    return times[1:], float(np.abs(logits - full).max() / np.abs(full).max())


def main(argv=None) -> int:
    args = parse_args(argv)
    print(f"attention_course {attention_course.__version__}, numpy {np.__version__}; float32, {args.threads} BLAS "
          f"thread(s), median of {args.repeats} rounds; load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    for name in args.models:
        fields = shrunk(name) if args.shrink else published_fields(name)
        config = DecoderConfig.from_dict(fields, name)
        print(f"\n{name}{' (shrunk)' if args.shrink else ''}: {parameter_count(config):,} parameters, "
              f"{active_parameter_count(config):,} multiplied per token; weights "
              f"{weight_bytes(config) / 1e9:.2f} GB in bfloat16, {weight_bytes(config, 'float32') / 1e9:.2f} GB in float32 "
              "(computed)")
        if not args.no_load:
            seconds, peak, size = measure_load(fields, config)
            print(f"  load_decoder of a {size / 1e9:.2f} GB bfloat16 file: {seconds:.1f} s, peak resident memory "
                  f"{peak / 1e9:.2f} GB (measured; float32 weights {weight_bytes(config, 'float32') / 1e9:.2f} GB)")
        model = random_decoder(np.random.default_rng(0), config=config, dtype=np.float32)
        read = 4 * active_parameter_count(config)  # float32 bytes of the matrices one token multiplies by
        with threadpool_limits(limits=args.threads, user_api="blas"):
            for context in args.contexts:
                times, diff = time_steps(model, context, args.repeats)
                median = statistics.median(times)
                print(f"  n = {context:>5}: {median * 1e3:8.1f} ms per token ({min(times) * 1e3:.1f}-"
                      f"{max(times) * 1e3:.1f}), {1 / median:6.1f} tokens/s, {read / median / 1e9:5.1f} GB/s of "
                      f"weights read; cached vs recomputed logits differ by {diff:.1e} of the largest")
        del model
    print(f"\nload average after: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
