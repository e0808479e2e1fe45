"""What generating costs: FLOPs and bytes counted, the machine's two ceilings measured, the roofline (book/generating_cost.ipynb).

A computation that does F FLOPs and moves B bytes between memory and the
processor takes at least

    time >= max(F / peak FLOP/s, B / bandwidth)

and its arithmetic intensity I = F / B (FLOPs per byte) says which bound
wins: below the ridge point peak / bandwidth it waits for memory, above it
for arithmetic. The roofline draws both ceilings on log-log axes.

- Counting: `AttentionLayout` (the plain fields that set what a layer caches:
  MHA, GQA, MQA and MLA), `DecoderShape` (a decoder's sizes), `attention_cost`
  and `step_cost` (FLOPs and bytes of prefill and of one decoding step).
- Measuring: `measure_bandwidth` (a large array streamed through a
  matrix-vector product), `measure_matmul_rate` (a square matrix product),
  `measure_ceilings` (both), `time_prefill` and `time_decode_step` (the
  book's NumPy decoder, timed).
- Drawing: `roofline_plot` (needs matplotlib, the `book` extra).

MLA (multi-head latent attention, DeepSeek-V2 and V3) is counted as it runs
when generating: each token caches one latent vector of kv_lora_rank numbers
and a rotary key of qk_rope_head_dim numbers, shared by every head, and the
up-projections of keys and values are absorbed into the queries and the
output, so that every query head scores and mixes the latent itself.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass

import numpy as np

from ..core._checks import positive_int
from ..decoder.cache import itemsize
from ..decoder.published import model_shape, published_entry
from .cost import _blas_limit
from .decoding import filled_cache


# --- counting --------------------------------------------------------------------------------

@dataclass(frozen=True)
class AttentionLayout:
    """How a decoder's attention keeps keys and values: the plain fields the counts need."""

    name: str
    """A label: "GQA (Llama 3 8B)", ..."""
    n_layers: int
    """L, the decoder layers."""
    n_heads: int
    """h_q, query heads per layer."""
    n_kv_heads: int
    """h_kv, key/value heads per layer: h_q (MHA), fewer (GQA), 1 (MQA). For MLA, 1: one latent for every head."""
    head_dim: int
    """d, the size of one head's query, key and value (for MLA, the part of a query head without rotation)."""
    kv_lora_rank: int = 0
    """MLA only: r, the size of the latent vector each token caches (0: not MLA)."""
    qk_rope_head_dim: int = 0
    """MLA only: the rotary part of the keys, cached beside the latent and shared by every head."""

    def __post_init__(self):
        for name in ("n_layers", "n_heads", "n_kv_heads", "head_dim"):
            positive_int(getattr(self, name), name)
        for name in ("kv_lora_rank", "qk_rope_head_dim"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
                raise ValueError(f"{name} must be a non-negative integer; got {value!r}")
        if self.n_heads % self.n_kv_heads:
            raise ValueError(f"n_heads = {self.n_heads} must be a multiple of n_kv_heads = {self.n_kv_heads}")
        if self.is_mla and self.n_kv_heads != 1:
            raise ValueError(f"an MLA layout caches one latent for every head: n_kv_heads must be 1; got {self.n_kv_heads}")

    @property
    def is_mla(self) -> bool:
        """True for multi-head latent attention."""
        return self.kv_lora_rank > 0

    @property
    def kind(self) -> str:
        """"MHA", "GQA", "MQA" or "MLA"."""
        if self.is_mla:
            return "MLA"
        if self.n_kv_heads == self.n_heads:
            return "MHA"
        return "MQA" if self.n_kv_heads == 1 else "GQA"

    @property
    def cached_per_token(self) -> int:
        """Numbers one token caches in one layer: 2 h_kv d (a key and a value per head), or r + rope for MLA."""
        if self.is_mla:
            return self.kv_lora_rank + self.qk_rope_head_dim
        return 2 * self.n_kv_heads * self.head_dim

    @property
    def score_size(self) -> int:
        """Length of each query-key dot product: d, or r + rope for MLA (a query absorbed into the latent)."""
        return self.kv_lora_rank + self.qk_rope_head_dim if self.is_mla else self.head_dim

    @property
    def mix_size(self) -> int:
        """Length of each mixed value: d, or r for MLA (the latent, up-projected afterwards by the output weights)."""
        return self.kv_lora_rank if self.is_mla else self.head_dim

    @property
    def readers(self) -> int:
        """Query heads that read each cached number: h_q / h_kv, or every head (h_q) for MLA."""
        return self.n_heads if self.is_mla else self.n_heads // self.n_kv_heads

    def attention_weights(self, d_model: int) -> int:
        """Numbers in one layer's attention projections (no biases).

        MHA/GQA/MQA: W_q (d_model x h_q d), W_k and W_v (d_model x h_kv d each), W_o (h_q d x d_model).
        MLA: W_q (d_model x h_q (d + rope)), the down-projection W_dkv (d_model x (r + rope)), the
        up-projections W_uk and W_uv (r x h_q d each), the latent's norm (r) and W_o (h_q d x d_model).
        """
        d_model = positive_int(d_model, "d_model")
        h, d = self.n_heads, self.head_dim
        if self.is_mla:
            r, rope = self.kv_lora_rank, self.qk_rope_head_dim
            return d_model * h * (d + rope) + d_model * (r + rope) + 2 * r * h * d + r + h * d * d_model
        return d_model * h * d + 2 * d_model * self.n_kv_heads * d + h * d * d_model


@dataclass(frozen=True)
class Cost:
    """FLOPs and bytes moved by one computation."""

    flops: int
    """Floating-point operations (a multiply-add is 2)."""
    bytes: int
    """Bytes read from and written to memory."""

    @property
    def intensity(self) -> float:
        """Arithmetic intensity: FLOPs per byte."""
        return self.flops / self.bytes

    def __add__(self, other: Cost) -> Cost:
        return Cost(self.flops + other.flops, self.bytes + other.bytes)


def _counts(n_new, n_past, batch) -> tuple[int, int, int]:
    n_new = positive_int(n_new, "n_new")
    if isinstance(n_past, bool) or not isinstance(n_past, (int, np.integer)) or n_past < 0:
        raise ValueError(f"n_past must be a non-negative integer; got {n_past!r}")
    return n_new, int(n_past), positive_int(batch, "batch")


def attention_cost(layout: AttentionLayout, n_new: int, n_past: int = 0, *, batch: int = 1,
                   dtype="bfloat16") -> Cost:
    """FLOPs and bytes of causal attention for `n_new` tokens after `n_past` cached ones, all layers.

    Prefill is n_past = 0 and n_new = the prompt; a decoding step is n_new = 1.
    Query i (0-based) meets n_past + i + 1 keys. FLOPs count the two products,
    2 score_size + 2 mix_size per query head and key (the softmax's few
    operations per score are left out, as `decoding.decode_flops` leaves them).
    Bytes count what a fused kernel (one that keeps the scores in fast memory,
    as FlashAttention does) must move: every cached number read once, the new
    tokens' keys and values written, the queries read and the outputs written.
    For a decoding step (one query) that is what a kernel moves. For prefill
    it is the least: a kernel whose fast memory cannot hold every key and
    value reads them again for each tile of queries (`io_traffic` counts it),
    so the bytes are a lower bound and the intensity an upper bound.

    Args:
        layout: the attention shape.
        n_new: tokens whose queries attend (1 for a decoding step).
        n_past: tokens already cached.
        batch: requests, each with its own cache.
        dtype: what every number is stored in ("bfloat16", "float32", ...).

    Returns:
        Cost, exact integers.
    """
    n_new, n_past, batch = _counts(n_new, n_past, batch)
    size = itemsize(dtype)
    c = layout
    pairs = n_new * n_past + n_new * (n_new + 1) // 2  # (query, key) pairs under the causal mask
    flops = c.n_layers * batch * c.n_heads * pairs * 2 * (c.score_size + c.mix_size)
    numbers = ((n_past + n_new) * c.cached_per_token  # the cache, read once
               + n_new * c.cached_per_token  # the new tokens' keys and values, written
               + n_new * c.n_heads * (c.score_size + c.mix_size))  # queries read, outputs written
    return Cost(flops=flops, bytes=c.n_layers * batch * numbers * size)


@dataclass(frozen=True)
class DecoderShape:
    """A Llama-architecture decoder's sizes, with any attention layout: what `step_cost` counts."""

    layout: AttentionLayout
    """Layers, heads and what each token caches."""
    d_model: int
    """Width of the residual stream."""
    d_ff: int
    """Width of the SwiGLU feed-forward layer."""
    vocab_size: int
    """Tokens in the vocabulary: the output projection is d_model x vocab_size."""

    @classmethod
    def of(cls, model) -> DecoderShape:
        """The shape of a `DecoderModel` (its config's n_layers, n_heads, n_kv_heads, head_dim, d_model, d_ff, vocab_size)."""
        c = model.config
        layout = AttentionLayout(getattr(model, "name", "decoder"), c.n_layers, c.n_heads, c.n_kv_heads, c.head_dim)
        return cls(layout, c.d_model, c.d_ff, c.vocab_size)

    @property
    def weights(self) -> int:
        """Numbers a step reads from the weights: every layer (attention, feed-forward, two norms), the final norm
        and the output projection. The embedding table is not read whole: one row per token (`step_cost`)."""
        per_layer = self.layout.attention_weights(self.d_model) + 3 * self.d_model * self.d_ff + 2 * self.d_model
        return self.layout.n_layers * per_layer + self.d_model + self.d_model * self.vocab_size

    @property
    def products(self) -> int:
        """Numbers in the weight matrices each token multiplies (the weights without the norms'): 2 FLOPs each."""
        norms = self.layout.n_layers * 2 * self.d_model + self.d_model + (self.layout.kv_lora_rank * self.layout.n_layers)
        return self.weights - norms


@dataclass(frozen=True)
class StepCost:
    """FLOPs and bytes of one forward call of a decoder, in parts."""

    weights: Cost
    """The weights: read once per call, whatever the batch; 2 FLOPs per number per token."""
    attention: Cost
    """Attention: the cache read, new keys and values written, queries and outputs (`attention_cost`)."""

    @property
    def total(self) -> Cost:
        """Both."""
        return self.weights + self.attention


def step_cost(shape: DecoderShape, n_new: int, n_past: int = 0, *, batch: int = 1, dtype="bfloat16") -> StepCost:
    """FLOPs and bytes of one forward call: `n_new` tokens of each of `batch` requests, after `n_past` cached ones.

    Prefill is n_past = 0 and n_new = the prompt; a decoding step is n_new = 1.
    Every weight matrix multiplies every new token (the output projection too:
    the book's forward pass computes logits for each token it is given); the
    weights are read once for the whole batch, the embedding table one row per
    token. Norms, activations and the softmax are left out of the FLOPs; the
    activations (a few vectors per token) are left out of the bytes.

    Returns:
        StepCost with exact integers.
    """
    n_new, n_past, batch = _counts(n_new, n_past, batch)
    size = itemsize(dtype)
    tokens = n_new * batch
    weights = Cost(flops=2 * shape.products * tokens,
                   bytes=(shape.weights + tokens * shape.d_model) * size)  # every weight, and one embedding row a token
    return StepCost(weights=weights, attention=attention_cost(shape.layout, n_new, n_past, batch=batch, dtype=dtype))


def _layout(label: str, name: str) -> AttentionLayout:
    """The attention layout of the published model `name`, from its config.json (`decoder.published`)."""
    entry = published_entry(name)
    if entry.fields.get("kv_lora_rank"):  # MLA: one latent of kv_lora_rank and a rotary key for every head
        c = entry.config
        return AttentionLayout(label, c.n_layers, c.n_heads, 1, c.latent.qk_nope_head_dim,
                               kv_lora_rank=c.latent.kv_lora_rank, qk_rope_head_dim=c.latent.qk_rope_head_dim)
    m = model_shape(entry)
    return AttentionLayout(label, m.n_layers, m.n_heads, m.n_kv_heads, m.head_dim)


_LLAMA_3_8B = published_entry("meta-llama/Meta-Llama-3-8B").config
LLAMA_3_8B_BODY = dict(n_layers=_LLAMA_3_8B.n_layers, n_heads=_LLAMA_3_8B.n_heads, head_dim=_LLAMA_3_8B.head_dim)
"""Llama 3 8B's layers, query heads and head size (its config.json), the body the four layouts of `LAYOUTS` share."""

_DEEPSEEK_V3 = _layout("DeepSeek-V3", "deepseek-ai/DeepSeek-V3")

LAYOUTS: tuple[AttentionLayout, ...] = (
    AttentionLayout("MHA", **LLAMA_3_8B_BODY, n_kv_heads=_LLAMA_3_8B.n_heads),
    AttentionLayout("GQA", **LLAMA_3_8B_BODY, n_kv_heads=_LLAMA_3_8B.n_kv_heads),
    AttentionLayout("MQA", **LLAMA_3_8B_BODY, n_kv_heads=1),
    AttentionLayout("MLA", **LLAMA_3_8B_BODY, n_kv_heads=1, kv_lora_rank=_DEEPSEEK_V3.kv_lora_rank,
                    qk_rope_head_dim=_DEEPSEEK_V3.qk_rope_head_dim),
)
"""One decoder, four ways to keep keys and values: Llama 3 8B's 32 layers of 32 query heads of 128 with a
key/value head per query head (MHA), its own 8 shared ones (GQA), one for all (MQA), or DeepSeek's
latent of 512 numbers and rotary key of 64 (MLA)."""

LLAMA_3_8B = DecoderShape(LAYOUTS[1], d_model=_LLAMA_3_8B.d_model, d_ff=_LLAMA_3_8B.d_ff,
                          vocab_size=_LLAMA_3_8B.vocab_size)
"""Llama 3 8B's sizes (meta-llama/Meta-Llama-3-8B's config.json)."""

PUBLISHED_LAYOUTS: tuple[AttentionLayout, ...] = (
    _layout("MHA (Llama 2 7B)", "meta-llama/Llama-2-7b-hf"),
    _layout("GQA (Llama 3 8B)", "meta-llama/Meta-Llama-3-8B"),
    _layout("MQA (Falcon 7B)", "tiiuae/falcon-7b"),
    dataclasses.replace(_DEEPSEEK_V3, name="MLA (DeepSeek-V3)"),
)
"""The attention of published decoders, from their config.json files (`decoder.published`): num_hidden_layers,
num_attention_heads, num_key_value_heads, head_dim; for DeepSeek-V3, kv_lora_rank, qk_rope_head_dim and
qk_nope_head_dim (= v_head_dim = 128)."""


# --- measuring -------------------------------------------------------------------------------

@dataclass(frozen=True)
class Rate:
    """A measured rate: the best of `repeat` timed runs."""

    per_second: float
    """Bytes per second (bandwidth) or FLOPs per second (matrix products), from the best run."""
    times: np.ndarray
    """(repeat,) seconds of each run."""
    work: int
    """Bytes (or FLOPs) each run moves (or does)."""


def _best_of(fn, repeat: int) -> np.ndarray:
    fn()  # warm up: pages touched, BLAS threads started
    times = np.empty(repeat)
    for i in range(repeat):
        start = time.perf_counter()
        fn()
        times[i] = time.perf_counter() - start
    return times


def measure_bandwidth(n_bytes: int = 2**28, repeat: int = 5, blas_threads: int | None = 1) -> Rate:
    """Memory bandwidth: bytes per second of a matrix-vector product over an array of `n_bytes` (float32).

    The product reads every number of the array once and does one multiply-add
    with it, far below what the processor could compute: its time is the time
    to stream the array from memory, as a decoding step streams every weight.
    The array must be much larger than the processor's caches (256 MiB by default).
    """
    n_bytes, repeat = positive_int(n_bytes, "n_bytes"), positive_int(repeat, "repeat")
    cols = 4096
    rows = max(1, n_bytes // (4 * cols))
    matrix = np.full((rows, cols), 0.5, dtype=np.float32)  # (rows, cols), every page written: really in memory
    vector = np.ones(rows, dtype=np.float32)
    with _blas_limit(blas_threads):
        times = _best_of(lambda: vector @ matrix, repeat)  # (rows,) x (rows, cols) -> (cols,): each number read once
    return Rate(per_second=matrix.nbytes / times.min(), times=times, work=matrix.nbytes)


def measure_matmul_rate(n: int = 1024, repeat: int = 5, dtype=np.float32, blas_threads: int | None = 1) -> Rate:
    """The matrix-product rate: FLOPs per second of an n x n by n x n product (2 n^3 FLOPs), the compute ceiling."""
    n, repeat = positive_int(n, "n"), positive_int(repeat, "repeat")
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((n, n)).astype(dtype) for _ in range(2))
    with _blas_limit(blas_threads):
        times = _best_of(lambda: a @ b, repeat)  # (n, n) x (n, n) -> (n, n)
    return Rate(per_second=2 * n**3 / times.min(), times=times, work=2 * n**3)


@dataclass(frozen=True)
class Ceilings:
    """A machine's two ceilings, measured."""

    bandwidth: float
    """Bytes per second from memory (`measure_bandwidth`)."""
    flops: float
    """FLOPs per second of a large matrix product (`measure_matmul_rate`)."""
    threads: int | None = 1
    """BLAS threads they were measured with (None: the library's default)."""

    def __post_init__(self):
        for name in ("bandwidth", "flops"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float, np.floating)) and np.isfinite(value) and value > 0):
                raise ValueError(f"{name} must be a positive finite number; got {value!r}")

    @property
    def ridge(self) -> float:
        """FLOPs per byte at which the two ceilings meet: less is memory-bound, more is compute-bound."""
        return self.flops / self.bandwidth

    def attainable(self, intensity) -> np.ndarray:
        """FLOPs per second a computation of this intensity can reach: min(peak, bandwidth x intensity)."""
        return np.minimum(self.flops, self.bandwidth * np.asarray(intensity, dtype=np.float64))

    def time(self, cost: Cost) -> float:
        """The least time `cost` can take: max(FLOPs / peak, bytes / bandwidth)."""
        return max(cost.flops / self.flops, cost.bytes / self.bandwidth)


def measure_ceilings(repeat: int = 5, n_bytes: int = 2**28, n: int = 1024, blas_threads: int | None = 1) -> Ceilings:
    """Both ceilings of this machine, measured in a second or two: `measure_bandwidth` and `measure_matmul_rate`."""
    bandwidth = measure_bandwidth(n_bytes, repeat, blas_threads)
    rate = measure_matmul_rate(n, repeat, np.float32, blas_threads)
    return Ceilings(bandwidth=bandwidth.per_second, flops=rate.per_second, threads=blas_threads)


@dataclass(frozen=True)
class CitedCeilings:
    """A processor's two ceilings as its maker publishes them: cited, not measured here."""

    name: str
    """The processor: "NVIDIA H100 SXM"."""
    ceilings: Ceilings
    """Its memory bandwidth and its peak FLOP/s (dense, no sparsity), in the dtype `what` names."""
    what: str
    """Which numbers: "bfloat16 tensor cores, dense; HBM3"."""
    source: str
    """Where they are published."""


H100_SXM = CitedCeilings(
    "NVIDIA H100 SXM", Ceilings(bandwidth=3.35e12, flops=989e12, threads=None),
    "bfloat16 on its tensor cores, dense (half the 1,979 TFLOP/s quoted with sparsity); 3.35 TB/s of HBM3",
    "NVIDIA H100 Tensor Core GPU datasheet (H100 SXM column)")
"""A data-centre GPU's ceilings, for comparison with the ones measured here: a ridge near 295 FLOPs per byte."""


def time_decode_step(model, context: int, repeat: int = 5, blas_threads: int | None = 1, cache=None) -> np.ndarray:
    """Seconds of `repeat` decoding steps after `context` cached tokens (one token each; each step adds one).

    The steps run one after another on one cache, so the last meets context +
    repeat - 1 keys: a difference too small to see next to `context`. The
    cache is `cache` (empty; a `ReservedKVCache` writes in place, where a
    `KVCache` copies itself at every step) or a new KVCache, filled with
    random keys and values first (not timed).
    """
    context, repeat = positive_int(context, "context"), positive_int(repeat, "repeat")
    cache = filled_cache(model, context, np.random.default_rng(0), cache)  # (h_kv, context, d) random keys and values
    token = np.array([1])
    with _blas_limit(blas_threads):
        model.forward(token, cache, need_weights=False)  # warm up
        times = np.empty(repeat)
        for i in range(repeat):
            start = time.perf_counter()
            model.forward(token, cache, need_weights=False)
            times[i] = time.perf_counter() - start
    return times


def time_prefill(model, n: int, repeat: int = 3, blas_threads: int | None = 1) -> np.ndarray:
    """Seconds of `repeat` forward calls over a prompt of `n` tokens (no cache: the whole prompt at once)."""
    n, repeat = positive_int(n, "n"), positive_int(repeat, "repeat")
    ids = np.random.default_rng(0).integers(0, model.config.vocab_size, n)
    with _blas_limit(blas_threads):
        return _best_of(lambda: model.forward(ids, need_weights=False), repeat)


# --- drawing ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class RooflinePoint:
    """One measured computation on the roofline."""

    label: str
    """What it is: "decode, GQA, 4,096 tokens"."""
    cost: Cost
    """Its counted FLOPs and bytes."""
    seconds: float
    """Its measured time."""

    @property
    def intensity(self) -> float:
        """FLOPs per byte, counted."""
        return self.cost.intensity

    @property
    def achieved(self) -> float:
        """FLOPs per second: counted FLOPs over measured time."""
        return self.cost.flops / self.seconds

    @property
    def bandwidth(self) -> float:
        """Bytes per second: counted bytes over measured time."""
        return self.cost.bytes / self.seconds


def roofline_plot(ceilings: Ceilings, points=(), *, ax=None, styles=None, intensity_range=None):
    """Draw the roofline: min(peak, bandwidth x I) on log-log axes, and `points` (RooflinePoint) at (I, achieved).

    Args:
        ceilings: the measured Ceilings.
        points: RooflinePoints; `styles` maps a point's label to matplotlib
            keyword arguments (marker, colour, label for the legend).
        ax: draw here; a new figure `plots.PHONE_WIDTH` wide if None.
        intensity_range: (low, high) FLOPs per byte of the x axis; around the points and the ridge by default.

    Returns:
        The Axes.
    """
    import matplotlib.pyplot as plt  # imported here: counting and measuring need no matplotlib

    from .plots import PHONE_WIDTH

    points = list(points)
    if ax is None:
        _, ax = plt.subplots(figsize=(PHONE_WIDTH, 3.6), layout="constrained")
    xs = [p.intensity for p in points] + [ceilings.ridge]
    low, high = intensity_range or (min(xs) / 4, max(xs) * 4)
    grid = np.geomspace(low, high, 200)
    ax.plot(grid, ceilings.attainable(grid) / 1e9, color="black", linewidth=1.5)
    ax.axvline(ceilings.ridge, color="0.6", linestyle=":", linewidth=1)
    # label the slope above the line, ending left of the ridge: no measured point lies above the roof
    end = max(low * 12, ceilings.ridge / 1.5)
    ax.annotate(f"memory: {ceilings.bandwidth / 1e9:.1f} GB/s", (end, ceilings.attainable(end) / 1e9),
                xytext=(-2, 6), textcoords="offset points", ha="right", va="bottom", fontsize=8)
    ax.annotate(f"compute: {ceilings.flops / 1e9:.1f} GFLOP/s", (high, ceilings.flops / 1e9),
                xytext=(-4, 4), textcoords="offset points", ha="right", fontsize=8)
    lowest = min([ceilings.bandwidth * low] + [p.achieved for p in points])
    ax.set_ylim(lowest / 1e9 / 2, ceilings.flops / 1e9 * 2.5)  # room above the roof for its label
    for p in points:
        style = dict(marker="o", linestyle="none")
        style.update((styles or {}).get(p.label, {}))
        ax.plot([p.intensity], [p.achieved / 1e9], **style)
    ax.set(xscale="log", yscale="log", xlabel="arithmetic intensity (FLOPs per byte)", ylabel="GFLOP/s")
    ax.spines[["top", "right"]].set_visible(False)
    return ax
