"""What the caches of serving systems hold, measured: memory for a batch of requests, errors of quantized keys and values
(book/generating_cost.ipynb).

- `memory_held`: the bytes each request's cache holds once its tokens have
  arrived, for any cache (`KVCache`, `ReservedKVCache`, `PagedKVCache`,
  `QuantizedKVCache`): read from the caches' `nbytes`, not computed.
- `logit_errors`: how far a decoder's logits move when its cache is another
  one (a quantized one), against the exact cache, step by step.
"""

from __future__ import annotations

import numpy as np

from ..core._checks import positive_int


def memory_held(make_cache, lengths, *, n_layers: int, n_kv_heads: int, head_dim: int, dtype="float32",
                rng: np.random.Generator | None = None) -> np.ndarray:
    """Bytes each request's cache holds after its tokens: `make_cache()` filled with `lengths[i]` tokens per layer.

    Args:
        make_cache: called once per request, returns an empty cache of n_layers layers.
        lengths: (requests,) tokens each request reaches (its prompt and its answer).
        n_layers, n_kv_heads, head_dim: the shape of each layer's keys and values (h_kv, n, d).
        dtype: what the keys and values are computed in.
        rng: draws the keys and values (their numbers do not change what a
            full-precision cache holds; a quantized one stores them as codes).

    Returns:
        (requests,) int64: each cache's `nbytes`.
    """
    lengths = np.asarray(lengths)
    if lengths.ndim != 1 or lengths.dtype.kind not in "iu" or np.any(lengths < 1):
        raise ValueError(f"lengths must be a 1-D array of positive integers; got {lengths!r}")
    n_layers, n_kv_heads, head_dim = (positive_int(x, name) for x, name in
                                      ((n_layers, "n_layers"), (n_kv_heads, "n_kv_heads"), (head_dim, "head_dim")))
    rng = np.random.default_rng(0) if rng is None else rng
    held = np.empty(lengths.shape[0], dtype=np.int64)
    for i, n in enumerate(lengths):
        cache = make_cache()
        for layer in range(n_layers):
            k, v = (rng.standard_normal((n_kv_heads, int(n), head_dim)).astype(dtype) for _ in range(2))
            cache.update(layer, k, v)  # (h_kv, n, d) each
        held[i] = cache.nbytes
    return held


def logit_errors(model, ids, n_prompt: int, cache) -> np.ndarray:
    """Largest |logit difference| at each step between `cache` and the model's exact `KVCache`, fed the same tokens.

    The prompt ids[:n_prompt] goes in at once, then each later id one at a
    time (teacher forcing: both runs see the same tokens, so the difference
    is the cache's alone). With a float64 model, the exact run is the float64
    reference.

    Returns:
        (len(ids) - n_prompt + 1,): the prompt's last logits, then one per step.
    """
    ids = np.asarray(ids)
    n_prompt = positive_int(n_prompt, "n_prompt")
    if not n_prompt <= ids.shape[0]:
        raise ValueError(f"n_prompt must be at most len(ids) = {ids.shape[0]}; got {n_prompt}")
    exact = model.new_cache(keep_window=True)
    errors = [np.abs(model.forward(ids[:n_prompt], exact, need_weights=False).logits[-1]
                     - model.forward(ids[:n_prompt], cache, need_weights=False).logits[-1]).max()]
    for t in ids[n_prompt:]:
        a = model.forward(np.array([t]), exact, need_weights=False).logits[-1]
        b = model.forward(np.array([t]), cache, need_weights=False).logits[-1]
        errors.append(np.abs(a - b).max())
    return np.array(errors)
