"""What the generation chapter counts and measures (book/decoding.ipynb).

- `PUBLISHED_CONFIGS`: the attention shapes of a few published decoders, read
  from their config.json fields (`decoder.published.GENERATION_CONFIGS`), for
  cache sizes computed with `kv_cache_bytes`.
- `decode_flops`: the multiply-adds of producing one token, with the cache
  (one token through the model) or without it (the whole sequence again).
- `time_decode_step`: the time of that step, measured.
- `head_groups`: which query heads share which key/value head.
- `receptive_field`: how far back information reaches through layers of
  sliding-window attention.
"""

from __future__ import annotations

import copy
import time

import numpy as np

from ..core._checks import positive_int
from ..core.masks import sliding_window_mask
from ..decoder.config import DecoderConfig
from ..decoder.published import GENERATION_CONFIGS, ModelShape, model_shape

PUBLISHED_CONFIGS: tuple[ModelShape, ...] = tuple(model_shape(entry) for entry in GENERATION_CONFIGS)
"""Attention shapes of published decoders (their config.json on the Hugging Face Hub, kept in
`decoder.published.GENERATION_CONFIGS`)."""


def head_groups(n_heads: int, n_kv_heads: int) -> list[list[int]]:
    """For each key/value head j, the query heads that read it: j*g .. j*g + g - 1, g = n_heads / n_kv_heads.

    >>> head_groups(8, 2)
    [[0, 1, 2, 3], [4, 5, 6, 7]]
    """
    n_heads, n_kv_heads = positive_int(n_heads, "n_heads"), positive_int(n_kv_heads, "n_kv_heads")
    if n_heads % n_kv_heads:
        raise ValueError(f"n_heads = {n_heads} must be a multiple of n_kv_heads = {n_kv_heads}")
    g = n_heads // n_kv_heads
    return [list(range(j * g, (j + 1) * g)) for j in range(n_kv_heads)]


def _weight_flops(config: DecoderConfig) -> int:
    """Multiply-add FLOPs (2 per product) of the projections for one token: every weight used once."""
    c = config
    per_layer = (c.d_model * (c.n_heads + 2 * c.n_kv_heads) * c.head_dim  # W_q, W_k, W_v
                 + c.n_heads * c.head_dim * c.d_model  # W_o
                 + 3 * c.d_model * c.d_ff)  # gate, up, down
    return 2 * (c.n_layers * per_layer + c.d_model * c.vocab_size)


def _attention_flops(config: DecoderConfig, n_keys_per_query) -> int:
    """FLOPs of q . k and weights @ V for queries that see the given numbers of keys, every layer and head."""
    c = config
    keys = np.asarray(n_keys_per_query, dtype=np.int64)
    per_layer = [int(np.minimum(keys, w).sum()) if w is not None else int(keys.sum()) for w in c.windows]
    return 4 * c.n_heads * c.head_dim * sum(per_layer)  # 2 d FLOPs for q . k and 2 d for weight * v, per key


def decode_flops(config: DecoderConfig, n: int, use_cache: bool) -> int:
    """Multiply-add FLOPs of producing the logits after token n (the n-th token, 1-based).

    With the cache, only token n goes through the model; its query meets n
    keys (fewer on sliding-window layers). Without it, all n tokens go
    through again, query i meeting i + 1 keys. Elementwise work (norms,
    softmax, activations) is left out: it grows like the products do.
    """
    n = positive_int(n, "n")
    if use_cache:
        return _weight_flops(config) + _attention_flops(config, [n])
    return n * _weight_flops(config) + _attention_flops(config, np.arange(1, n + 1))


def filled_cache(model, n_tokens: int, rng: np.random.Generator, cache=None):
    """`cache` (a new KVCache for `model` by default) holding `n_tokens` tokens of random keys and values.

    What a step costs depends on how many keys it meets, not on their
    numbers, so a step can be timed after a long context without computing
    that context first.
    """
    c = model.config
    dtype = model.weights.embeddings.dtype
    cache = model.new_cache() if cache is None else cache
    for layer in range(c.n_layers):
        k, v = (rng.standard_normal((c.n_kv_heads, n_tokens, c.head_dim)).astype(dtype) for _ in range(2))
        cache.update(layer, k, v)  # (h_kv, n_tokens, d) each
    return cache


def time_decode_step(model, ids, use_cache: bool, repeat: int = 5, blas_threads: int | None = 1) -> float:
    """Best time in seconds of the forward call that produces the logits after the last of `ids`.

    With the cache, the earlier tokens' places are filled first (`filled_cache`,
    not timed) and one token goes through; without it, the whole sequence goes
    through. `blas_threads` limits NumPy's BLAS during the calls (one thread
    by default: on a shared machine, a BLAS thread waiting for a busy core can
    make small products many times slower).
    """
    from threadpoolctl import threadpool_limits  # imported here: `import attention_course` stays light

    ids = np.asarray(ids)
    repeat = positive_int(repeat, "repeat")
    limits = threadpool_limits(limits=blas_threads, user_api="blas") if blas_threads else None
    try:
        filled = filled_cache(model, len(ids) - 1, np.random.default_rng(0)) if use_cache and len(ids) > 1 else None
        best = np.inf
        for _ in range(repeat + 1):  # the first call warms up
            if use_cache:
                cache = copy.deepcopy(filled) if filled is not None else model.new_cache()
            start = time.perf_counter()
            if use_cache:
                model.forward(ids[-1:], cache, need_weights=False)
            else:
                model.forward(ids, need_weights=False)
            best = min(best, time.perf_counter() - start)
    finally:
        if limits is not None:
            limits.unregister()
    return float(best)


def receptive_field(n: int, window: int, n_layers: int) -> np.ndarray:
    """(n,) bool: the positions whose token can change what the last token's output is after n_layers layers.

    One sliding-window layer lets position p read positions p - window + 1 .. p;
    stacking layers composes those reads, so after L layers the last token
    reaches L * (window - 1) positions back.
    """
    n, window, n_layers = positive_int(n, "n"), positive_int(window, "window"), positive_int(n_layers, "n_layers")
    step = sliding_window_mask(n, n, window).astype(np.int64)  # (n, n): who reads whom in one layer
    reach = np.eye(n, dtype=np.int64)
    for _ in range(n_layers):
        reach = np.minimum(step @ reach, 1)  # (n, n) x (n, n): read through one more layer
    return reach[-1].astype(bool)
