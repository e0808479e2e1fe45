"""One decoder layer's grouped-query attention, with every option today's models add to the score (book/decoding.ipynb).

    q, k, v = x W_q, x W_k, x W_v                      split into h_q and h_kv heads
    q, k    = RMSNorm(q), RMSNorm(k)                    QK-norm (Qwen3, Gemma 3), per head; MiniMax-M2, OLMo hybrid: over all heads
    q, k    = RoPE(q), RoPE(k)                          per layer: its own base and scaling, or none (NoPE)
    q, k    = q / rms(q), k / rms(k)                    Llama 4's weightless norm, RoPE layers only
    q       = q * temperature(position)                 Llama 4's NoPE layers (core.temperature)
    s       = q k^T * scale                             scale = 1/sqrt(d), or Gemma's query_pre_attn_scalar^-1/2
    s       = c * tanh(s / c)                           soft-capping (Gemma 2), before the mask
    s       = s + mask                                  causal, or a sliding window or a chunk on this layer
    w       = softmax(s)  or  softmax([s, sink_h])      a learned sink logit per head (gpt-oss), dropped after
    out     = (w V) W_o                                 gated attention (Qwen3-Next): (w V) * sigmoid(x W_g), then W_o

Query head i reads key/value head i // (h_q / h_kv). The cache holds keys as
attention uses them: normed, rotated and scaled.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..core.attention import _mix, attention_scores
from ..core.gates import output_gate
from ..core.masks import causal_mask, chunked_causal_mask, mask_to_bias, sliding_window_mask
from ..core.multi_head import merge_heads, split_heads
from ..core.norms import rms_norm
from ..core.positions import apply_rope
from ..core.rope_scaling import RopeScaling
from ..core.sinks import sink_softmax
from ..core.softcap import softcap
from ..core.softmax import softmax
from ..core.temperature import nope_temperature

if TYPE_CHECKING:  # annotations only: running a layer's attention does not load the checkpoint readers
    from .config import DecoderConfig
    from .weights import DecoderLayer


def project(x: np.ndarray, w: np.ndarray, b: np.ndarray | None) -> np.ndarray:
    """x @ w + b: (n, d_in) x (d_in, d_out) -> (n, d_out)."""
    y = x @ w  # (n, d_in) x (d_in, d_out) -> (n, d_out)
    return y if b is None else y + b


def rotate(x: np.ndarray, positions: np.ndarray, rope: RopeScaling | None, interleaved: bool = False,
           rotary_dim: int | None = None) -> np.ndarray:
    """(..., n, d) -> (..., n, d): RoPE with the layer's frequencies, times its attention factor; x itself for NoPE.

    A dynamic rule takes its frequencies from the longest position of the
    call, as transformers does on each forward call. With rotary_dim (partial
    RoPE), only the first rotary_dim coordinates are rotated and scaled.
    """
    if rope is None:
        return x  # a layer without positions (NoPE): order comes from the causal mask alone
    r = x.shape[-1] if rotary_dim is None else rotary_dim
    theta, factor = rope.frequencies(r, seq_len=int(np.max(positions)) + 1)
    out = apply_rope(x, positions, interleaved=interleaved, frequencies=theta, rotary_dim=r)  # same shape
    if factor == 1.0:
        return out
    if r == x.shape[-1]:
        return out * factor  # YaRN: a Python float keeps float32 float32
    return np.concatenate([out[..., :r] * factor, out[..., r:]], axis=-1)  # the factor scales the rotary part


def layer_mask(n: int, n_k: int, window: int | None, chunk: int | None = None, first_position: int = 0) -> np.ndarray:
    """(n, n_k) True where query i (the last n of n_k positions) may see key j: causal, its sliding window, or
    its chunk (chunks counted from the sequence's start; key 0 sits at first_position)."""
    if chunk is not None:
        return chunked_causal_mask(n, n_k, chunk, lower_right=True, first_position=first_position)
    if window is None:
        return causal_mask(n, n_k, lower_right=True)  # the n queries are the last n of the n_k positions
    return sliding_window_mask(n, n_k, window, lower_right=True)


def qkv(config: DecoderConfig, p: DecoderLayer, layer: int, h: np.ndarray, positions: np.ndarray,
        rotate_qk: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """q (h_q, n, d), k (h_kv, n, d), v (h_kv, n, d) of the normed input h (n, d_model), QK-normed and rotated."""
    c = config
    q, k = project(h, p.w_q, p.b_q), project(h, p.w_k, p.b_k)  # (n, h_q*d), (n, h_kv*d)
    if p.q_norm is not None and c.qk_norm_scope == "projection":  # MiniMax-M2, OLMo hybrid: all heads' queries as one
        q = rms_norm(q, p.q_norm, c.rms_norm_eps)  # (n, h_q*d)
        k = rms_norm(k, p.k_norm, c.rms_norm_eps)  # (n, h_kv*d)
    q = split_heads(q, c.n_heads)  # (n, h_q*d) -> (h_q, n, d)
    k = split_heads(k, c.n_kv_heads)  # (n, h_kv*d) -> (h_kv, n, d)
    v = split_heads(project(h, p.w_v, p.b_v), c.n_kv_heads)  # (h_kv, n, d)
    if p.q_norm is not None and c.qk_norm_scope == "head":  # QK-norm: each head's query and key to rms 1, times a gain
        q = rms_norm(q, p.q_norm, c.rms_norm_eps)  # (h_q, n, d)
        k = rms_norm(k, p.k_norm, c.rms_norm_eps)  # (h_kv, n, d)
    rope = c.ropes[layer]
    if rotate_qk:
        q = rotate(q, positions, rope, c.rope_interleaved, c.rope_dim)  # (h_q, n, d)
        k = rotate(k, positions, rope, c.rope_interleaved, c.rope_dim)  # (h_kv, n, d)
    if c.l2_qk_norm and rope is not None:  # Llama 4: rms 1 after RoPE, no gain (a rotation keeps the rms)
        q = rms_norm(q, np.ones((), q.dtype), c.rms_norm_eps)  # (h_q, n, d)
        k = rms_norm(k, np.ones((), k.dtype), c.rms_norm_eps)  # (h_kv, n, d)
    if c.nope_temperature is not None and rope is None:  # Llama 4: NoPE queries sharpened with their position
        scale = nope_temperature(np.asarray(positions), *c.nope_temperature).astype(q.dtype)  # (n,)
        q = q * scale[:, None]  # (h_q, n, d) x (n, 1): each query row by its position's factor
    return q, k, v


def attend(config: DecoderConfig, p: DecoderLayer, layer: int, q: np.ndarray, k: np.ndarray,
           v: np.ndarray, first_position: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(heads (h_q, n, d_v), weights (h_q, n, n_k)) for queries that are the last n of the n_k keys' positions;
    first_position (the position of key 0) places a chunked layer's chunks."""
    c = config
    scores = attention_scores(q, k, scale=c.scale, enable_gqa=True)  # (h_q, n, d) x (h_kv, n_k, d) -> (h_q, n, n_k)
    if c.attn_softcap is not None:
        scores = softcap(scores, c.attn_softcap)  # before the mask: -inf must stay -inf
    mask = layer_mask(q.shape[-2], k.shape[-2], c.windows[layer], c.chunks[layer], first_position)  # (n, n_k)
    scores = scores + mask_to_bias(mask, scores.dtype)
    weights = softmax(scores) if p.sinks is None else sink_softmax(scores, p.sinks)  # (h_q, n, n_k)
    heads = _mix(weights, v, enable_gqa=True)  # (h_q, n, n_k) x (h_kv, n_k, d_v) -> (h_q, n, d_v), shared heads
    return heads, weights


def grouped_query_attention(config: DecoderConfig, p: DecoderLayer, layer: int, h: np.ndarray,
                            positions: np.ndarray, cache=None) -> tuple[np.ndarray, np.ndarray]:
    """One layer's attention on its normed input h (n, d_model): (output (n, d_model), weights (h_q, n, n_k)).

    With a cache, the new keys and values are appended to it and the queries
    attend over everything it keeps.
    """
    q, k, v = qkv(config, p, layer, h, positions)  # (h_q, n, d), (h_kv, n, d), (h_kv, n, d)
    if cache is not None:
        k, v = cache.update(layer, k, v)  # (h_kv, n_k, d): what was cached, then the new tokens
    first_position = int(positions[-1]) + 1 - k.shape[-2]  # the keys are the last n_k positions up to the queries'
    heads, weights = attend(config, p, layer, q, k, v, first_position)  # (h_q, n, d_v), (h_q, n, n_k)
    out = merge_heads(heads)  # (h_q, n, d_v) -> (n, h_q*d_v)
    if p.w_attn_gate is not None:  # gated attention: each head's channels scaled by a sigmoid of the input
        out = output_gate(out, project(h, p.w_attn_gate, p.b_attn_gate))  # (n, h_q*d_v)
    return project(out, p.w_o, p.b_o), weights  # (n, h_q*d_v) x (h_q*d_v, d_model) -> (n, d_model)
