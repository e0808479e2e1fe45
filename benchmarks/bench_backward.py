"""Time and memory of the tiled backward pass against torch's autograd, side by side.

Run from the repository root:

    .venv/bin/python benchmarks/bench_backward.py              # n = 1024, 4096, 16384; d = 64, float32, one head
    .venv/bin/python benchmarks/bench_backward.py --sizes 2048 --repeats 5
    .venv/bin/python benchmarks/bench_backward.py --help

For each n, every implementation is called once per round, in turn, for
several rounds (after one warm-up call each), with a pause before each call
(--settle, as in bench_attention.py: the thread pools of the call before stop
spinning). Each row times the backward pass alone, from what the forward
pass left:

- `tiled`: `flash_attention_backward` from the output and log-sum-exp of
  `flash_attention_forward` (the readable NumPy loop, 512 x 256 tiles);
- `plain`: `attention_backward`, which recomputes and holds the n x n weights
  (left out where they would not fit in --max-gib);
- `torch`: `out.backward(dO)` after `scaled_dot_product_attention` on
  (1, 1, n, d) inputs that require gradients: torch's fused CPU kernel and its
  own backward; the forward pass runs before each timed call, untimed.

Memory is the peak allocated during one more, untimed call, minus the three
gradients it returns: tracemalloc for NumPy, and for torch the growth of the
resident memory of a fresh process during `backward` (what torch's autograd
saved for it, the output and the log-sum-exp, was allocated by the forward
pass before). Nothing here is a test: timing asserts would fail on a busy
machine.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench_attention's helpers
try:
    import attention_course  # noqa: F401
except ImportError:  # run from a checkout without `pip install -e .`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_attention import (  # noqa: E402
    _cpu_counters,
    cpu_name,
    cpu_seconds_of_others,
    load_torch,
    probe_mib,
    rss_growth,
    tracemalloc_extra_mib,
)

from attention_course import (  # noqa: E402
    attention_backward,
    backward_flops,
    flash_attention_backward,
    flash_attention_forward,
)

MIB = 2**20
D = 64
DEFAULT_SIZES = (1024, 4096, 16384)


def make_inputs(n: int, dtype: str, seed: int = 0):
    """q, k, v and dO of shape (n, D), drawn directly in `dtype`."""
    rng = np.random.default_rng(seed)
    return tuple(rng.standard_normal((n, D), dtype=np.dtype(dtype).type) for _ in range(4))


def torch_backward(torch, q, k, v, g):
    """A zero-argument function: the forward pass (untimed by the caller's split) and the call to time."""
    tensors = [torch.from_numpy(x.reshape(1, 1, *x.shape)) for x in (q, k, v, g)]

    def forward():
        leaves = [t.clone().requires_grad_() for t in tensors[:3]]
        out = torch.nn.functional.scaled_dot_product_attention(*leaves)
        return leaves, out

    def backward(state):
        leaves, out = state
        out.backward(tensors[3])
        return leaves

    return forward, backward


def torch_extra_mib(n: int, dtype: str, threads: int) -> float | None:
    """Resident-memory growth of torch's backward pass, minus its gradients, measured in a fresh process."""
    return probe_mib([str(n), dtype, str(threads)], __file__, timeout=900)


def rss_probe(n: int, dtype: str, threads: int) -> None:
    """Child process of torch_extra_mib: print MiB of peak RSS growth during one backward call, minus the gradients."""
    import torch

    if threads:
        torch.set_num_threads(threads)
    forward, backward = torch_backward(torch, *make_inputs(64, dtype))
    backward(forward())  # load the kernels, start the threads
    forward, backward = torch_backward(torch, *make_inputs(n, dtype))
    state = forward()
    grown, leaves = rss_growth(lambda: backward(state))
    print((grown - sum(x.grad.numel() * x.grad.element_size() for x in leaves)) / MIB)


def run_size(n: int, args) -> dict:
    """Time every implementation at one n in interleaved rounds; measure memory once each."""
    q, k, v, g = make_inputs(n, args.dtype)
    out, lse = flash_attention_forward(q, k, v)
    fns = {"tiled": lambda: flash_attention_backward(q, k, v, out, lse, g)}
    notes = []
    need = 3 * n * n * np.dtype(args.dtype).itemsize / 2**30
    if need <= args.max_gib:
        fns["plain"] = lambda: attention_backward(q, k, v, g)
    else:
        notes.append(f"plain skipped: its n x n matrices need ~{need:.1f} GiB > --max-gib {args.max_gib:g}")
    torch_fns = torch_backward(args.torch, q, k, v, g) if args.torch is not None else None
    times = {name: [] for name in fns}
    if torch_fns:
        times["torch"] = []
        torch_fns[1](torch_fns[0]())  # warm-up
    for fn in fns.values():
        fn()  # warm-up
    start, wall = _cpu_counters(), time.perf_counter()
    for _ in range(args.repeats):
        for name, fn in fns.items():
            time.sleep(args.settle)
            t0 = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)
        if torch_fns:
            state = torch_fns[0]()  # the forward pass, untimed
            time.sleep(args.settle)
            t0 = time.perf_counter()
            torch_fns[1](state)
            times["torch"].append(time.perf_counter() - t0)
    load = cpu_seconds_of_others(start) / (time.perf_counter() - wall)
    memory = {name: tracemalloc_extra_mib(fn) for name, fn in fns.items()}
    if torch_fns and args.torch_memory:
        memory["torch"] = torch_extra_mib(n, args.dtype, args.threads or 0)
    return dict(n=n, times=times, memory=memory, load=load, notes=notes)


def print_size(report: dict) -> None:
    n, times = report["n"], report["times"]
    flops = backward_flops(n, d_k=D).total
    print(f"\n== n={n} d={D}: {flops / 1e9:.1f} GFLOP (recomputing the scores); "
          f"other processes used {report['load']:.2f} of {os.cpu_count()} cores ==")
    print(f"   {'':6s} {'median s':>9s} {'min-max s':>17s} {'/ torch':>8s} {'per-round spread':>17s} "
          f"{'GFLOP/s':>8s} {'extra MiB':>10s}")
    torch_times = times.get("torch")
    for name, ts in times.items():
        ratios = [t / tt for t, tt in zip(ts, torch_times)] if torch_times else []
        ratio = f"{statistics.median(ratios):8.2f}" if ratios else f"{'-':>8s}"
        spread = f"{min(ratios):.2f}-{max(ratios):.2f}" if ratios else "-"
        mem = report["memory"].get(name)
        mem = "-" if mem is None else f"{mem:.1f}"
        median = statistics.median(ts)
        print(f"   {name:6s} {median:9.4f} {min(ts):8.4f}-{max(ts):<8.4f} {ratio} {spread:>17s} "
              f"{flops / median / 1e9:8.1f} {mem:>10s}")
    for note in report["notes"]:
        print(f"   ({note})")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sizes", nargs="+", type=int, default=list(DEFAULT_SIZES), metavar="N",
                   help="sequence lengths (default: 1024 4096 16384)")
    p.add_argument("--dtype", default="float32", choices=["float32", "float64"])
    p.add_argument("--repeats", type=int, default=3, help="timed rounds per size (default 3); medians are reported")
    p.add_argument("--settle", type=float, default=0.3, metavar="SECONDS", help="pause before each timed call (default 0.3)")
    p.add_argument("--threads", type=int, metavar="N", help="limit torch and BLAS to N threads")
    p.add_argument("--max-gib", type=float, default=3.0,
                   help="skip the plain backward where 3 n x n matrices would exceed this many GiB (default 3)")
    p.add_argument("--no-torch", action="store_true", help="leave torch out even if it is installed")
    p.add_argument("--no-torch-memory", dest="torch_memory", action="store_false",
                   help="skip torch's memory probe (a fresh process per size)")
    p.add_argument("--rss-probe", nargs=3, help=argparse.SUPPRESS)
    return p


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    if args.rss_probe:
        n, dtype, threads = args.rss_probe
        rss_probe(int(n), dtype, int(threads))
        return 0
    if args.repeats < 1 or args.settle < 0 or (args.threads is not None and args.threads < 1):
        raise SystemExit("--repeats and --threads must be at least 1, --settle at least 0")
    if min(args.sizes) < 1:
        raise SystemExit("--sizes must be positive")
    torch_note = load_torch(args, "autograd through its SDPA on (1, 1, n, d)")
    if args.torch is None:
        args.torch_memory = False
    print(f"backward benchmark: d = {D}, {args.dtype}, one head, {args.repeats} rounds per size, medians")
    print(f"machine: {cpu_name()}, {os.cpu_count()} cores; numpy {np.__version__}; {torch_note}")
    print("extra MiB = peak allocated during a call minus the three gradients (tracemalloc for numpy; "
          "for torch, resident-memory growth during backward in a fresh process)")
    with threadpool_limits(limits=args.threads, user_api="blas"):  # None: no limit
        for n in args.sizes:
            print_size(run_size(n, args))
            sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
