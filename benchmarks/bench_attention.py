"""Time and memory of plain attention, tiled (flash) attention and torch's SDPA, side by side.

Run from the repository root:

    .venv/bin/python benchmarks/bench_attention.py            # the default sizes (~20 min)
    .venv/bin/python benchmarks/bench_attention.py --quick    # a one-minute look
    .venv/bin/python benchmarks/bench_attention.py --help

For every configuration (sequence length n, heads h, dtype; d = 64) each
implementation is called once per round, in turn, for several rounds, so all
of them see the same background load; the report gives medians, the spread of
the per-round ratios to torch, and how busy the rest of the machine was. A
float32 matrix product with the same FLOP count is timed in the same rounds:
it is what this machine's BLAS can do, the yardstick for attention's GFLOP/s.

Before each timed call the script pauses (--settle, 0.3 s). After a parallel
call, OpenBLAS's and OpenMP's worker threads keep spinning for a while (about
0.1-0.2 s here), and on a 2-core machine they take a core from whatever runs
next: measured, flash_attention right after a 2-thread matrix product or the
plain path took 1.55-1.7 times as long as right after itself, torch's kernel
1.7-2.0 times. Without the pause, each row would pay for the row before it.

Memory is the peak allocated during one extra, untimed call, minus the output:
measured with tracemalloc for the NumPy paths, and as the growth of the peak
resident memory of a fresh process for torch (whose allocator tracemalloc does
not see). Nothing here is a test: timing asserts would fail on a busy machine.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
import tracemalloc
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_info, threadpool_limits

try:
    import attention_course
except ImportError:  # run from a checkout without `pip install -e .`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import attention_course

from attention_course import flash_attention, scaled_dot_product_attention
from attention_course.tiled.flash import BACKENDS, DEFAULT_BLOCK_SIZE, available_backends, default_backend

MIB = 2**20
D = 64
# n = 1024, 4096, 16384 with one head; n = 4096, 8192 with 1 and 8 heads.
DEFAULT_CONFIGS = [(1024, 1), (4096, 1), (16384, 1), (8192, 1), (4096, 8), (8192, 8)]
# The targets the accelerator was built to (benchmarks/README.md): at or below torch's time at
# n = 4096 and 8192, at least half a float32 matmul's GFLOP/s, under 32 MiB extra at n = 16384.
TARGET_RATIO = 1.0
TARGET_MATMUL_SHARE = 0.5
TARGET_MEMORY_MIB = 32


@dataclass(frozen=True)
class Config:
    """One benchmark case: h heads of n queries and n keys of width D."""

    n: int
    heads: int
    dtype: str
    causal: bool

    @property
    def flops(self) -> float:
        """4 n^2 d per head (Q K^T and P V, a multiply and an add each); half of it under the causal mask."""
        return 4.0 * self.n * self.n * D * self.heads / (2 if self.causal else 1)

    @property
    def score_bytes(self) -> int:
        """One (h, n, n) score matrix: what the plain path holds several of."""
        return self.heads * self.n * self.n * np.dtype(self.dtype).itemsize

    def label(self) -> str:
        return f"n={self.n} h={self.heads} {self.dtype}" + (" causal" if self.causal else "")


@dataclass
class Result:
    """Timings of one implementation on one config (seconds, one entry per round)."""

    name: str
    times: list[float] = field(default_factory=list)
    ratios: list[float] = field(default_factory=list)  # per-round time / torch's time
    extra_mib: float | None = None
    note: str = ""

    @property
    def median(self) -> float:
        return statistics.median(self.times)


def make_inputs(cfg: Config, seed: int = 0):
    """q, k, v of shape (1, h, n, D), drawn directly in the config's dtype (no float64 temporaries).

    Four axes (B, h, n, d) matter for torch: given three, its CPU SDPA falls back
    to the plain "math" path (measured: 3x slower, and it holds the n x n matrix).
    """
    rng = np.random.default_rng(seed)
    return tuple(rng.standard_normal((1, cfg.heads, cfg.n, D), dtype=np.dtype(cfg.dtype).type) for _ in range(3))


def implementations(cfg: Config, args, q, k, v) -> dict:
    """name -> zero-argument callable, for the implementations this config runs."""
    fns = {}
    if args.fits(cfg, "plain"):
        fns["plain"] = lambda: scaled_dot_product_attention(q, k, v, is_causal=cfg.causal)
    for block in args.blocks:
        fns[flash_name(block)] = lambda block=block: flash_attention(q, k, v, is_causal=cfg.causal, block_size=block,
                                                                     backend=args.backend)
    if args.running_max:
        fns["flash max"] = lambda: with_running_max(flash_attention, q, k, v, is_causal=cfg.causal, backend=args.backend)
    if args.readable and args.backend != "numpy":
        fns["flash numpy"] = lambda: flash_attention(q, k, v, is_causal=cfg.causal, backend="numpy")
    if args.torch is not None:
        sdpa = args.torch.nn.functional.scaled_dot_product_attention
        tq, tk, tv = (args.torch.from_numpy(x) for x in (q, k, v))  # (1, h, n, d): torch's flash kernel
        fns["torch"] = lambda: sdpa(tq, tk, tv, is_causal=cfg.causal)
        if args.torch_3d and args.fits(cfg, "torch 3-D"):
            q3, k3, v3 = (x[0] for x in (tq, tk, tv))  # (h, n, d): torch falls back to its math path
            fns["torch 3-D"] = lambda: sdpa(q3, k3, v3, is_causal=cfg.causal)
    return fns


def with_running_max(fn, *args, **kwargs):
    """fn(*args, **kwargs) with the compiled path's max-free shortcut turned off (every tile keeps a running max)."""
    from attention_course.tiled._compiled import driver

    shortcut = driver._scores_are_small
    driver._scores_are_small = lambda *_: False
    try:
        return fn(*args, **kwargs)
    finally:
        driver._scores_are_small = shortcut


def flash_name(block) -> str:
    return "flash" if block == DEFAULT_BLOCK_SIZE else f"flash {block[0]}x{block[1]}"


def matmul_yardstick(cfg: Config, dtype: str):
    """A square (m, m) x (m, m) product with the FLOPs of the attention call (2 m^3 = flops)."""
    m = max(64, round((cfg.flops / 2) ** (1 / 3)))
    rng = np.random.default_rng(1)
    a, b = (rng.standard_normal((m, m), dtype=np.dtype(dtype).type) for _ in range(2))
    return m, 2.0 * m**3, lambda: a @ b  # (m, m) x (m, m) -> (m, m)


def cpu_name() -> str:
    """The processor's model name (Linux), else what platform knows."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def cpu_seconds_of_others(start: tuple[float, float]) -> float:
    """Busy CPU seconds of other processes since `start` (from /proc/stat; 0 where unavailable)."""
    busy, own = _cpu_counters()
    return max((busy - start[0]) - (own - start[1]), 0.0)


def _cpu_counters() -> tuple[float, float]:
    """(busy CPU seconds of the whole machine, CPU seconds of this process)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    own = usage.ru_utime + usage.ru_stime
    try:
        with open("/proc/stat") as f:
            ticks = [int(x) for x in f.readline().split()[1:]]
    except OSError:
        return own, own
    idle = ticks[3] + ticks[4]  # idle + iowait
    return (sum(ticks[:8]) - idle) / os.sysconf("SC_CLK_TCK"), own


def tracemalloc_extra_mib(fn) -> float:
    """Peak MiB allocated (as NumPy reports to tracemalloc) during fn(), minus the array or arrays it returns."""
    tracemalloc.start()
    try:
        before, _ = tracemalloc.get_traced_memory()
        result = fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    kept = result.nbytes if isinstance(result, np.ndarray) else sum(r.nbytes for r in result)
    return (peak - before - kept) / MIB


def probe_mib(arguments: list[str], script: str, timeout: float) -> float | None:
    """The MiB that `script --rss-probe ARGUMENTS`, run in a fresh process, prints last (None if it printed none)."""
    done = subprocess.run([sys.executable, script, "--rss-probe", *arguments], capture_output=True, text=True,
                          timeout=timeout)
    try:
        return float(done.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return None


def rss_growth(call):
    """(The bytes this process's resident set grew by during call(), at its peak; what call() returned).

    A thread samples the resident set every 0.2 ms during the call; the peak RSS
    the kernel records (ru_maxrss) catches what the sampling misses.
    """
    import threading

    def rss_bytes() -> int:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

    base, peak, done = rss_bytes(), [0], threading.Event()

    def sample() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], rss_bytes())
            time.sleep(0.0002)

    sampler = threading.Thread(target=sample)
    max_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KiB on Linux
    sampler.start()
    try:
        result = call()
    finally:
        done.set()
        sampler.join()
    max_after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return max(peak[0] - base, max_after - max(max_before, base)), result


def load_torch(args, inputs: str) -> str:
    """Import torch into `args.torch` (None when --no-torch or not installed), with --threads threads; the report's
    line about it, `inputs` saying what it is given."""
    args.torch = None
    if args.no_torch:
        return "torch: left out (--no-torch)"
    try:
        import torch
    except ImportError:
        return "torch: not installed (pip install -e '.[torch]' to compare)"
    if args.threads:
        torch.set_num_threads(args.threads)
    args.torch = torch
    return f"torch {torch.__version__} ({torch.get_num_threads()} threads; {inputs})"


def torch_extra_mib(cfg: Config, args) -> float | None:
    """Peak resident-memory growth of torch's SDPA, minus its output, measured in a fresh process."""
    return probe_mib([str(cfg.n), str(cfg.heads), cfg.dtype, str(int(cfg.causal)), str(args.threads or 0)], __file__,
                     timeout=600)


def rss_probe(n: int, heads: int, dtype: str, causal: bool, threads: int) -> None:
    """Child process of torch_extra_mib: print MiB of peak RSS growth during one SDPA call, minus the output."""
    import torch

    if threads:
        torch.set_num_threads(threads)
    cfg = Config(n, heads, dtype, causal)
    tiny = [torch.from_numpy(x) for x in make_inputs(Config(64, 1, dtype, causal))]
    torch.nn.functional.scaled_dot_product_attention(*tiny, is_causal=causal)  # start threads, load kernels
    q, k, v = (torch.from_numpy(x) for x in make_inputs(cfg))
    grown, out = rss_growth(lambda: torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal))
    print((grown - out.numel() * out.element_size()) / MIB)


def run_config(cfg: Config, args) -> dict:
    """Time every implementation of one config in interleaved rounds; measure memory once."""
    q, k, v = make_inputs(cfg)
    fns = implementations(cfg, args, q, k, v)
    yardsticks = {}
    for dtype in dict.fromkeys(["float32", cfg.dtype]):
        m, flops, matmul = matmul_yardstick(cfg, dtype)
        yardsticks[dtype] = (m, flops)
        fns[f"matmul {dtype}"] = matmul
    results = {name: Result(name) for name in fns}
    for fn in fns.values():  # warm-up: caches, thread pools, lazy imports
        fn()
    start = _cpu_counters()
    wall = time.perf_counter()
    for _ in range(args.repeats):
        for name, fn in fns.items():
            time.sleep(args.settle)  # the previous call's thread pools stop spinning (see the module docstring)
            t0 = time.perf_counter()
            fn()
            results[name].times.append(time.perf_counter() - t0)
    wall = time.perf_counter() - wall
    load = cpu_seconds_of_others(start) / wall
    if "torch" in results:
        for r in results.values():
            r.ratios = [t / tt for t, tt in zip(r.times, results["torch"].times)]
    matmul_gflops = {}
    for dtype, (m, flops) in yardsticks.items():
        matmul_gflops[dtype] = (m, flops / results.pop(f"matmul {dtype}").median / 1e9)
    for name, fn in fns.items():
        if name == "torch":
            results[name].extra_mib = torch_extra_mib(cfg, args) if args.torch_memory else None
        elif name in ("plain",) or name.startswith("flash"):
            results[name].extra_mib = tracemalloc_extra_mib(fn)
    return dict(cfg=cfg, results=results, load=load, matmul=matmul_gflops)


def print_config(report: dict, args) -> None:
    cfg, results = report["cfg"], report["results"]
    f32_gflops = report["matmul"]["float32"][1]
    sticks = "; ".join(f"{dtype} matmul {m}^3 {g:.1f} GFLOP/s" for dtype, (m, g) in report["matmul"].items())
    print(
        f"\n== {cfg.label()}: {cfg.flops / 1e9:.2f} GFLOP; same FLOPs as {sticks}; "
        f"other processes used {report['load']:.2f} of {os.cpu_count()} cores =="
    )
    print(f"   {'':14s} {'median s':>9s} {'min-max s':>15s} {'/ torch':>8s} {'per-round spread':>17s} {'GFLOP/s':>8s} {'% f32 matmul':>13s} {'extra MiB':>10s}")
    for r in results.values():
        ratio = f"{statistics.median(r.ratios):8.2f}" if r.ratios else f"{'-':>8s}"
        spread = f"{min(r.ratios):.2f}-{max(r.ratios):.2f}" if r.ratios else "-"
        gflops = cfg.flops / r.median / 1e9
        mem = "-" if r.extra_mib is None else f"{r.extra_mib:.1f}"
        print(
            f"   {r.name:14s} {r.median:9.4f} {min(r.times):7.4f}-{max(r.times):<7.4f} {ratio} {spread:>17s} "
            f"{gflops:8.1f} {100 * gflops / f32_gflops:12.0f}% {mem:>10s}"
        )
    for note in args.skipped.get(cfg, []):
        print(f"   ({note})")


def print_summary(reports: list[dict], args) -> None:
    """The accelerator's targets, checked against the medians of this run (for the first --blocks size)."""
    name = flash_name(args.blocks[0])
    print(f"\n== targets for {name}, backend {args.backend} (medians of this run; the spread above is the machine's noise) ==")
    for rep in reports:
        cfg, res = rep["cfg"], rep["results"]
        flash = res[name]
        checks = []
        if "torch" in res:
            ratio = statistics.median(flash.ratios)
            verdict = f" {'ok' if ratio <= TARGET_RATIO else 'MISSED'} (<= {TARGET_RATIO})" if cfg.n in (4096, 8192) else ""
            checks.append(f"flash/torch {ratio:.2f} [{min(flash.ratios):.2f}-{max(flash.ratios):.2f}]{verdict}")
            if "torch 3-D" in res:
                checks.append(f"flash/torch 3-D {statistics.median(r / r3 for r, r3 in zip(flash.ratios, res['torch 3-D'].ratios)):.2f}")
        gflops = cfg.flops / flash.median / 1e9
        share = gflops / rep["matmul"]["float32"][1]
        checks.append(f"{gflops:.0f} GFLOP/s = {100 * share:.0f}% of f32 matmul {'ok' if share >= TARGET_MATMUL_SHARE else 'MISSED'} (>= 50%)")
        if cfg.dtype != "float32":
            checks.append(f"{100 * gflops / rep['matmul'][cfg.dtype][1]:.0f}% of {cfg.dtype} matmul")
        if cfg.n >= 16384 and flash.extra_mib is not None:
            ok = flash.extra_mib < TARGET_MEMORY_MIB
            checks.append(f"extra memory {flash.extra_mib:.1f} MiB {'ok' if ok else 'MISSED'} (< {TARGET_MEMORY_MIB})")
        print(f"   {cfg.label():28s} " + "; ".join(checks))


def worker_threads(backend: str) -> int:
    """How many threads flash_attention's tiles run on with this backend."""
    if backend != "numba":
        return 1  # the readable loop runs in the calling thread
    from attention_course.tiled._compiled import driver

    return driver.cpu_count()


def parse_block(text: str) -> tuple[int, int]:
    """'128x512' -> (128, 512); '64' -> (64, 64)."""
    parts = text.lower().split("x")
    try:
        sizes = tuple(int(p) for p in parts)
    except ValueError:
        raise argparse.ArgumentTypeError(f"block size must look like 128x512 or 64; got {text!r}") from None
    if len(sizes) == 1:
        sizes = sizes * 2
    if len(sizes) != 2 or min(sizes) <= 0:
        raise argparse.ArgumentTypeError(f"block size must look like 128x512 or 64; got {text!r}")
    return sizes


def parse_config(text: str) -> tuple[int, int]:
    """'4096' -> (4096, 1); '8192x8' -> (8192, 8): sequence length and heads."""
    try:
        n, _, h = text.partition("x")
        return int(n), int(h or 1)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a size looks like 4096 or 4096x8 (n x heads); got {text!r}") from None


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sizes", nargs="+", type=parse_config, metavar="N[xH]",
                   help="sequence lengths, each with an optional head count (default: 1024 4096 16384 8192 4096x8 8192x8)")
    p.add_argument("--dtypes", nargs="+", default=["float32", "float64"], choices=["float32", "float64"])
    p.add_argument("--repeats", type=int, default=5, help="timed rounds per configuration (default 5); medians are reported")
    p.add_argument("--causal", action="store_true", help="use is_causal=True (half the FLOPs are needed)")
    p.add_argument("--blocks", nargs="+", type=parse_block, metavar="BQxBK",
                   help=f"flash_attention block sizes to compare (default: {DEFAULT_BLOCK_SIZE[0]}x{DEFAULT_BLOCK_SIZE[1]}, the package default)")
    p.add_argument("--settle", type=float, default=0.3, metavar="SECONDS",
                   help="pause before each timed call, so that no call pays for the threads the previous one "
                        "left spinning (default 0.3; 0 to see that cost)")
    p.add_argument("--backend", choices=BACKENDS, default=None,
                   help=f"flash_attention's backend (default: {default_backend()}, the one it uses here by default)")
    p.add_argument("--readable", action="store_true",
                   help="also time the readable NumPy loop (row 'flash numpy') beside the compiled one")
    p.add_argument("--running-max", action="store_true",
                   help="also time the compiled flash_attention with its max-free shortcut turned off (row 'flash max')")
    p.add_argument("--threads", type=int, metavar="N",
                   help="limit torch, flash_attention and BLAS to N threads (1: per-core speed, steadier on a busy machine)")
    p.add_argument("--max-gib", type=float, default=3.0,
                   help="skip the paths that hold score matrices (plain, torch 3-D) when 3 of them would exceed this many GiB (default 3)")
    p.add_argument("--no-torch", action="store_true", help="leave torch out even if it is installed")
    p.add_argument("--no-torch-3d", dest="torch_3d", action="store_false",
                   help="leave out torch called with 3-D (h, n, d) inputs, which runs its math path")
    p.add_argument("--no-torch-memory", dest="torch_memory", action="store_false",
                   help="skip torch's memory probe (a fresh process per configuration)")
    p.add_argument("--quick", action="store_true", help="n = 1024 and 4096, one head, 3 rounds")
    p.add_argument("--rss-probe", nargs=5, help=argparse.SUPPRESS)
    return p


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    if args.rss_probe:
        n, h, dtype, causal, threads = args.rss_probe
        rss_probe(int(n), int(h), dtype, bool(int(causal)), int(threads))
        return 0
    if args.repeats < 1:
        raise SystemExit("--repeats must be at least 1")
    if args.settle < 0:
        raise SystemExit("--settle must be at least 0")
    if args.threads is not None and args.threads < 1:
        raise SystemExit("--threads must be at least 1")
    sizes = args.sizes or ([(1024, 1), (4096, 1)] if args.quick else DEFAULT_CONFIGS)
    if args.quick and args.repeats == 5:
        args.repeats = 3
    args.blocks = args.blocks or [DEFAULT_BLOCK_SIZE]
    args.backend = args.backend or default_backend()
    if args.backend not in available_backends():
        raise SystemExit(f"--backend {args.backend} is not installed here: pip install -e '.[fast]'")
    if args.running_max and args.backend != "numba":
        raise SystemExit("--running-max turns off a shortcut of the compiled backend: use it with --backend numba")
    torch_note = load_torch(args, "inputs (1, h, n, d), its flash kernel")
    if args.torch is None:
        args.torch_memory = args.torch_3d = False
    if args.threads and args.backend == "numba":
        from attention_course.tiled._compiled import driver

        driver.cpu_count = lambda: args.threads  # flash_attention's worker threads
    args.skipped = {}

    def fits(cfg: Config, name: str) -> bool:
        need = 3 * cfg.score_bytes / 2**30
        if need <= args.max_gib:
            return True
        args.skipped.setdefault(cfg, []).append(
            f"{name} skipped: its score matrices need ~{need:.1f} GiB > --max-gib {args.max_gib:g}"
        )
        return False

    args.fits = fits
    with threadpool_limits(limits=args.threads, user_api="blas"):  # None: no limit
        blas = ", ".join(f"{b['internal_api']} {b['version']} ({b['num_threads']} threads)" for b in threadpool_info())
        print(f"attention benchmark: d = {D}, {args.repeats} rounds per configuration, medians")
        print(f"machine: {cpu_name()}, {os.cpu_count()} cores; numpy {np.__version__} [{blas}]; {torch_note}")
        print(f"flash_attention: backend {args.backend}, default tiles {DEFAULT_BLOCK_SIZE[0]}x{DEFAULT_BLOCK_SIZE[1]}, "
              f"{worker_threads(args.backend)} worker threads. "
              "extra MiB = peak allocated during a call minus its output (tracemalloc for numpy; for torch, "
              "peak-RSS growth in a fresh process)")
        reports = []
        for n, heads in sizes:
            for dtype in args.dtypes:
                report = run_config(Config(n, heads, dtype, args.causal), args)
                print_config(report, args)
                sys.stdout.flush()
                reports.append(report)
    print_summary(reports, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
