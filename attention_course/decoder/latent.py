"""Multi-head latent attention (DeepSeek-V2/V3): every head's key and value rebuilt from one small latent per token.

    c      = RMSNorm(x W_DKV)                 (n, r)        the latent: all the cache keeps per token,
    k_rope = RoPE(x W_KR)                     (n, d_rope)   with one RoPE key shared by every head
    k_i    = [c W_UK_i, k_rope]               (n, d_nope + d_rope)   head i's key
    v_i    = c W_UV_i                         (n, d_v)               head i's value
    q_i    = [q_nope_i, RoPE(q_rope_i)]       queries through q_a, a norm and q_b (or one q_proj)

Two ways compute the same scores. `expanded_attention` rebuilds every head's
keys and values (as transformers' eager model does). `absorbed_attention`
never builds them: q_nope_i . (c_j W_UK_i) = (q_nope_i W_UK_i^T) . c_j, so
W_UK is absorbed into the query and the query meets the latent itself; the
weights mix the latents, and W_UV is applied once to the mix. A decoding
step then reads r + d_rope numbers per cached token instead of
h * (d_nope + d_rope + d_v).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..core.attention import attention_scores
from ..core.masks import mask_to_bias
from ..core.multi_head import merge_heads, split_heads
from ..core.norms import rms_norm
from ..core.softmax import softmax
from .attention import layer_mask, project, rotate

if TYPE_CHECKING:  # annotations only: the absorbed attention of `decode_step` does not load the checkpoint readers
    from .config import DecoderConfig
    from .weights import DecoderLayer, LatentAttention

LATENT_NORM_EPS = 1e-6
"""The epsilon of the q_a and kv_a norms: transformers builds them with RMSNorm's default, not rms_norm_eps."""


def latent_qkv(config: DecoderConfig, a: LatentAttention, layer: int, h: np.ndarray, positions: np.ndarray,
               rotate_qk: bool = True):
    """(q_nope (h, n, d_nope), q_rope (h, n, d_rope), latent (n, r), k_rope (1, n, d_rope)) of the normed input h.

    q_rope and k_rope are rotated (and scaled by YaRN's attention factor), unless rotate_qk is False.
    """
    c, m = config, config.latent
    if a.w_q is not None:
        q = h @ a.w_q  # (n, d_model) x (d_model, h*d_qk) -> (n, h*d_qk)
    else:
        q_low = rms_norm(project(h, a.w_q_a, a.b_q_a), a.q_a_norm, LATENT_NORM_EPS)  # (n, q_lora_rank)
        q = q_low @ a.w_q_b  # (n, q_lora_rank) x (q_lora_rank, h*d_qk) -> (n, h*d_qk)
    q = split_heads(q, c.n_heads)  # (n, h*d_qk) -> (h, n, d_qk)
    q_nope, q_rope = q[..., :m.qk_nope_head_dim], q[..., m.qk_nope_head_dim:]  # (h, n, d_nope), (h, n, d_rope)
    kv = project(h, a.w_kv_a, a.b_kv_a)  # (n, d_model) x (d_model, r + d_rope) -> (n, r + d_rope)
    latent = rms_norm(kv[:, :m.kv_lora_rank], a.kv_a_norm, LATENT_NORM_EPS)  # (n, r)
    k_rope = kv[None, :, m.kv_lora_rank:]  # (n, d_rope) -> (1, n, d_rope): one key for every head
    if rotate_qk:
        rope = c.ropes[layer]
        q_rope = rotate(q_rope, positions, rope, c.rope_interleaved)  # (h, n, d_rope)
        k_rope = rotate(k_rope, positions, rope, c.rope_interleaved)  # (1, n, d_rope)
    return q_nope, q_rope, latent, k_rope


def expanded_attention(q_nope, q_rope, latent, k_rope, w_uk, w_uv, scale: float, mask) -> tuple[np.ndarray, np.ndarray]:
    """Latent attention with every head's keys and values rebuilt: (heads (h, n, d_v), weights (h, n, n_k)).

    Args:
        q_nope: (h, n, d_nope); q_rope: (h, n, d_rope), rotated.
        latent: (n_k, r) the keys' latents; k_rope: (1, n_k, d_rope), rotated.
        w_uk: (h, r, d_nope); w_uv: (h, r, d_v) (`LatentAttention.absorbed`).
        scale: multiplies the scores; mask: (n, n_k) boolean, True = may attend.
    """
    k_nope = latent[None] @ w_uk  # (1, n_k, r) x (h, r, d_nope) -> (h, n_k, d_nope)
    values = latent[None] @ w_uv  # (1, n_k, r) x (h, r, d_v) -> (h, n_k, d_v)
    keys = np.concatenate([k_nope, np.broadcast_to(k_rope, k_nope.shape[:-1] + k_rope.shape[-1:])], axis=-1)
    queries = np.concatenate([q_nope, q_rope], axis=-1)  # (h, n, d_nope + d_rope), as keys: (h, n_k, d_nope + d_rope)
    scores = attention_scores(queries, keys, scale=scale)  # (h, n, d_qk) x (h, n_k, d_qk) -> (h, n, n_k)
    weights = softmax(scores + mask_to_bias(mask, scores.dtype))  # (h, n, n_k)
    return weights @ values, weights  # (h, n, n_k) x (h, n_k, d_v) -> (h, n, d_v)


def absorbed_attention(q_nope, q_rope, latent, k_rope, w_uk, w_uv, scale: float, mask) -> tuple[np.ndarray, np.ndarray]:
    """The same attention through the latent itself: W_UK absorbed into the query, W_UV applied after the mix.

    Same arguments and result as `expanded_attention`; no per-head key or
    value is ever built, so the cache need only hold the latents and the
    shared RoPE keys.
    """
    q_latent = q_nope @ np.swapaxes(w_uk, -1, -2)  # (h, n, d_nope) x (h, d_nope, r) -> (h, n, r)
    scores = (q_latent @ latent.T  # (h, n, r) x (r, n_k) -> (h, n, n_k): the nope part, against the latent
              + q_rope @ np.swapaxes(k_rope, -1, -2)) * scale  # (h, n, d_rope) x (1, d_rope, n_k) -> (h, n, n_k)
    weights = softmax(scores + mask_to_bias(mask, scores.dtype))  # (h, n, n_k)
    mixed = weights @ latent  # (h, n, n_k) x (n_k, r) -> (h, n, r): a mix of latents
    return mixed @ w_uv, weights  # (h, n, r) x (h, r, d_v) -> (h, n, d_v)


def latent_attention(config: DecoderConfig, p: DecoderLayer, layer: int, h: np.ndarray, positions: np.ndarray,
                     cache=None, absorb: bool | None = None, keep: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """One layer's latent attention on its normed input h (n, d_model): (output (n, d_model), weights (h, n, n_k)).

    With a cache (a `LatentCache`), the new latents and RoPE keys are appended
    to it. absorb=None absorbs W_UK and W_UV exactly when a cache is given
    (decoding through the latent), and rebuilds the keys and values otherwise.
    keep (n, n_k), if given, narrows each query to the keys True in it: DeepSeek Sparse Attention's choice
    (`indexer.select_keys`); the others get weight 0.
    """
    c, a = config, p.latent
    q_nope, q_rope, latent, k_rope = latent_qkv(c, a, layer, h, positions)
    if cache is not None:
        latents, k_rope = cache.update(layer, latent[None], k_rope)  # (1, n_k, r), (1, n_k, d_rope)
        latent = latents[0]  # (n_k, r)
    w_uk, w_uv = a.absorbed(c.n_heads, c.latent.qk_nope_head_dim)  # (h, r, d_nope), (h, r, d_v)
    mask = layer_mask(q_nope.shape[-2], latent.shape[0], c.windows[layer])  # (n, n_k)
    if keep is not None:
        mask = mask & keep  # (n, n_k): the keys the indexer chose, among the visible ones
    compute = absorbed_attention if (cache is not None if absorb is None else absorb) else expanded_attention
    heads, weights = compute(q_nope, q_rope, latent, k_rope, w_uk, w_uv, c.scale, mask)  # (h, n, d_v), (h, n, n_k)
    return project(merge_heads(heads), p.w_o, p.b_o), weights  # (n, h*d_v) x (h*d_v, d_model) -> (n, d_model)
