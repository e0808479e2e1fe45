"""One decoding step: a new token's query against the KV cache, with RoPE and grouped-query attention (book/decoding.ipynb).

    t      = tokens already cached (the new token's position)
    q, k   = RoPE(q, t), RoPE(k, t)                       the cache holds keys as attention uses them
    K, V   = [K_cache; k], [V_cache; v]                   appended along the sequence axis: (h_kv, t + 1, d)
    out    = softmax(q K^T / sqrt(d)) V                   query head i reads key/value head i // (h_q / h_kv)

The newest token may see every cached key, so the step needs no mask.
"""

from __future__ import annotations

import numpy as np

from ..core._checks import as_float_array, require_ndim
from ..core.attention import scaled_dot_product_attention
from ..core.positions import apply_rope


def _check_step(q, k, v, k_cache, v_cache):
    arrays = {}
    for name, x, layout in (("q", q, "(h_q, 1, d)"), ("k", k, "(h_kv, 1, d)"), ("v", v, "(h_kv, 1, d_v)"),
                            ("k_cache", k_cache, "(h_kv, t, d)"), ("v_cache", v_cache, "(h_kv, t, d_v)")):
        arr = as_float_array(x, name)
        require_ndim(arr, name, 3, layout)
        arrays[name] = arr
    q, k, v, k_cache, v_cache = arrays.values()
    if q.shape[-2] != 1 or k.shape[-2] != 1 or v.shape[-2] != 1:
        raise ValueError(f"q, k and v must hold one token, shape (heads, 1, d); got {q.shape}, {k.shape}, {v.shape}")
    if k_cache.shape[:-3] != k.shape[:-3] or k_cache.shape[-3] != k.shape[-3] or k_cache.shape[-1] != k.shape[-1]:
        raise ValueError(f"k_cache must have shape (h_kv, t, d) with k's h_kv and d; got k_cache {k_cache.shape} "
                         f"and k {k.shape}")
    if v_cache.shape[-3] != v.shape[-3] or v_cache.shape[-1] != v.shape[-1] or v_cache.shape[-2] != k_cache.shape[-2]:
        raise ValueError(f"v_cache must have shape (h_kv, t, d_v) with k_cache's t and v's h_kv and d_v; got "
                         f"v_cache {v_cache.shape}, k_cache {k_cache.shape} and v {v.shape}")
    return q, k, v, k_cache, v_cache


def decode_step(q, k, v, k_cache, v_cache, base: float = 10000.0):
    """Attention for one new token against the cache of the t tokens before it.

    Args:
        q: (h_q, 1, d) the new token's queries, one per head, before RoPE.
        k: (h_kv, 1, d) its keys, before RoPE; v: (h_kv, 1, d_v) its values.
        k_cache: (h_kv, t, d) the earlier tokens' keys, already rotated at
            their positions 0..t-1; v_cache: (h_kv, t, d_v) their values.
        base: the RoPE base (rope_theta).

    Returns:
        (out (h_q, 1, d_v), k_cache (h_kv, t + 1, d), v_cache (h_kv, t + 1, d_v)):
        the attention output of each query head, and the caches with the new
        token appended (its key rotated at position t). The inputs are not modified.
    """
    q, k, v, k_cache, v_cache = _check_step(q, k, v, k_cache, v_cache)
    position = np.array([k_cache.shape[-2]])  # the new token comes after the t cached ones
    q = apply_rope(q, position, base=base)  # (h_q, 1, d)
    k = apply_rope(k, position, base=base)  # (h_kv, 1, d): rotated once, cached rotated
    k_cache = np.concatenate([k_cache, k], axis=-2)  # (h_kv, t, d) + (h_kv, 1, d) -> (h_kv, t + 1, d)
    v_cache = np.concatenate([v_cache, v], axis=-2)  # (h_kv, t + 1, d_v)
    out = scaled_dot_product_attention(q, k_cache, v_cache, enable_gqa=True)  # (h_q, 1, d_v); no mask: it sees all
    return out, k_cache, v_cache
