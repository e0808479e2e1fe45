"""One decoding step: a new token's query against the cache, with RoPE and grouped-query (or latent) attention (book/decoding.ipynb).

    t      = tokens already cached (the new token's position)
    q, k   = RoPE(q, t), RoPE(k, t)                       the cache holds keys as attention uses them
    K, V   = [K_cache; k], [V_cache; v]                   appended along the sequence axis: (h_kv, t + 1, d)
    out    = softmax(q K^T / sqrt(d)) V                   query head i reads key/value head i // (h_q / h_kv)

The newest token may see every cached key, so the step needs no mask.
`latent_decode_step` does the same for multi-head latent attention: the cache
holds latents and shared RoPE keys, and the query meets the latents through
the absorbed projection.
"""

from __future__ import annotations

import numpy as np

from ..core._checks import as_float_array, require_ndim
from ..core.attention import scaled_dot_product_attention
from ..core.positions import apply_rope
from .latent import absorbed_attention


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


def latent_decode_step(q_nope, q_rope, latent, k_rope, latent_cache, rope_cache, w_uk, w_uv, scale: float,
                       base: float = 10000.0, interleaved: bool = True):
    """One new token's multi-head latent attention against a latent cache, through the absorbed projections.

        q_rope, k_rope = RoPE(q_rope, t), RoPE(k_rope, t)        t = tokens already cached
        C, K_R = [C_cache; c], [K_R_cache; k_rope]                 (t + 1, r), (1, t + 1, d_rope)
        s_i    = ((q_nope_i W_UK_i^T) C^T + q_rope_i K_R^T) * scale    W_UK absorbed into the query
        out_i  = (softmax(s_i) C) W_UV_i                           W_UV after the mix

    Args:
        q_nope: (h, 1, d_nope); q_rope: (h, 1, d_rope), before RoPE.
        latent: (1, r) the new token's latent; k_rope: (1, 1, d_rope) its RoPE key, before RoPE.
        latent_cache: (t, r) the earlier tokens' latents; rope_cache: (1, t, d_rope) their RoPE keys, rotated.
        w_uk: (h, r, d_nope) and w_uv: (h, r, d_v), each head's key and value projections from the latent.
        scale: multiplies the scores (DeepSeek: 1/sqrt(d_nope + d_rope), times YaRN's mscale squared).
        base: the RoPE base; interleaved: DeepSeek pairs coordinates (2i, 2i + 1).

    Returns:
        (out (h, 1, d_v), latent_cache (t + 1, r), rope_cache (1, t + 1, d_rope)). No per-head key or
        value is built; the inputs are not modified.
    """
    arrays = {}
    for name, x, ndim in (("q_nope", q_nope, 3), ("q_rope", q_rope, 3), ("latent", latent, 2), ("k_rope", k_rope, 3),
                          ("latent_cache", latent_cache, 2), ("rope_cache", rope_cache, 3), ("w_uk", w_uk, 3),
                          ("w_uv", w_uv, 3)):
        arrays[name] = as_float_array(x, name)
        if arrays[name].ndim != ndim:
            raise ValueError(f"{name} must have {ndim} axes (see the docstring); got shape {arrays[name].shape}")
    a = arrays
    position = np.array([a["latent_cache"].shape[0]])  # the new token comes after the t cached ones
    q_rope = apply_rope(a["q_rope"], position, base=base, interleaved=interleaved)  # (h, 1, d_rope)
    k_rope = apply_rope(a["k_rope"], position, base=base, interleaved=interleaved)  # (1, 1, d_rope)
    latents = np.concatenate([a["latent_cache"], a["latent"]], axis=0)  # (t, r) + (1, r) -> (t + 1, r)
    rope_keys = np.concatenate([a["rope_cache"], k_rope], axis=-2)  # (1, t + 1, d_rope)
    sees_all = np.ones((1, latents.shape[0]), dtype=bool)  # the newest token sees every cached one
    out, _ = absorbed_attention(a["q_nope"], q_rope, latents, rope_keys, a["w_uk"], a["w_uv"], scale, sees_all)
    return out, latents, rope_keys  # (h, 1, d_v)
