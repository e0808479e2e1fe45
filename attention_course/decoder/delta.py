"""A Gated DeltaNet layer, the mixer of the hybrid decoders' "linear_attention" layers (Qwen3-Next, Qwen3.5, OLMo
hybrid; Kimi Delta Attention, Kimi Linear's, decays each key channel at its own rate).

    q, k, v = x W_q, x W_k, x W_v                       n_k query/key heads of d_k, n_v value heads of d_v
    q, k, v = silu(causal_conv1d([q, k, v]))            a short depthwise convolution over the last w tokens
    q, k    = q / |q|, k / |k|                          L2 norm per head (the delta rule wants unit keys)
    b       = beta_scale * sigmoid(x W_b)               (n_v,) per token: how strongly it writes
    g       = -exp(A_log) * softplus(x W_a + dt_bias)   (n_v,) per token: the log of the state's decay
                                                        (Kimi: (n_v, d_k), one per key channel, x W_a = x W_fa W_fb)
    o       = delta rule (core.delta_rule)              each value head's state S (d_k, d_v), read with q / sqrt(d_k)
    out     = (RMSNorm(o) * w * silu(x W_z)) W_out      a gated norm per head, then the output projection
                                                        (Kimi: sigmoid(x W_ga W_gb))

Value head j reads query and key head j // (n_v / n_k). A prefill runs the
rule chunk by chunk, a decoding step token by token; what a layer carries
from one call to the next is its state and the convolution's last w - 1
inputs (`hybrid_cache.HybridCache`), the same size however many tokens came
before. `delta_layer_shapes` lists the tensors a checkpoint stores for it and
`read_delta_weights` takes them, in each family's layout (`PROJECTIONS`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..core.delta_rule import chunked_gated_delta_rule, gated_delta_rule, l2_normalize
from ..core.gates import gated_rms_norm, sigmoid, silu
from ..core.multi_head import merge_heads, split_heads
from ..core.short_conv import causal_conv1d
from .config_hybrid import DeltaRuleConfig


@dataclass(frozen=True)
class DeltaWeights:
    """A delta-rule layer's parameters, row-vector convention (y = x @ w), whatever layout the file used."""

    w_q: np.ndarray
    """(d_model, n_k * d_k) the queries."""
    w_k: np.ndarray
    """(d_model, n_k * d_k) the keys."""
    w_v: np.ndarray
    """(d_model, n_v * d_v) the values."""
    w_z: np.ndarray
    """(d_model, n_v * d_v) the output gate (silu(x W_z) after the norm; Kimi: (d_model, r), then w_z2)."""
    w_b: np.ndarray
    """(d_model, n_v) the write strength's logits."""
    w_a: np.ndarray
    """(d_model, n_v) the decay's input (Kimi: (d_model, r), the first of a low-rank pair)."""
    conv: np.ndarray
    """(2 n_k d_k + n_v d_v, w) the convolution's taps over the channels of [q, k, v]."""
    a_log: np.ndarray
    """(n_v,) A_log: the decay rate exp(A_log) per value head."""
    dt_bias: np.ndarray
    """(n_v,) added to x W_a before the softplus."""
    norm: np.ndarray
    """(d_v,) the gated RMSNorm's gain, shared by the heads."""
    w_out: np.ndarray
    """(n_v * d_v, d_model) the output projection."""
    w_a2: np.ndarray | None = None
    """Kimi: (r, n_v * d_k) the decay's second low-rank projection: x W_a W_a2, one input per key channel."""
    w_z2: np.ndarray | None = None
    """Kimi: (r, n_v * d_v) the output gate's second low-rank projection."""


def softplus(x: np.ndarray) -> np.ndarray:
    """log(1 + e^x), elementwise, without overflow."""
    return np.logaddexp(0, x)


def delta_rule_mixer(d: DeltaRuleConfig, p: DeltaWeights, h: np.ndarray, past=(None, None)):
    """One delta-rule layer on its normed input h (n, d_model): (output (n, d_model), what to carry on).

    Args:
        d: the layer's sizes. p: its weights.
        h: (n, d_model) the normed residual stream.
        past: (the convolution's last w - 1 inputs (w - 1, 2 n_k d_k + n_v d_v) or None, the state
            (n_v, d_k, d_v) or None) from the tokens before; (None, None) for the first call.

    Returns:
        (out (n, d_model), (conv inputs (w - 1, channels), state (n_v, d_k, d_v))) to carry to the next call.
    """
    conv_past, state = past
    n = h.shape[0]
    qkv = np.concatenate([h @ p.w_q, h @ p.w_k, h @ p.w_v], axis=-1)  # (n, d_model) x (d_model, .) -> (n, channels)
    mixed, conv_past = causal_conv1d(qkv, p.conv, state=conv_past)  # (n, channels), (w - 1, channels)
    mixed = silu(mixed)
    q = split_heads(mixed[:, :d.key_dim], d.n_k_heads)  # (n, n_k*d_k) -> (n_k, n, d_k)
    k = split_heads(mixed[:, d.key_dim:2 * d.key_dim], d.n_k_heads)  # (n_k, n, d_k)
    v = split_heads(mixed[:, 2 * d.key_dim:], d.n_v_heads)  # (n, n_v*d_v) -> (n_v, n, d_v)
    group = d.n_v_heads // d.n_k_heads
    q, k = np.repeat(q, group, axis=0), np.repeat(k, group, axis=0)  # (n_v, n, d_k): value head j reads j // group
    q, k = l2_normalize(q), l2_normalize(k)
    beta = (d.beta_scale * sigmoid(h @ p.w_b)).T  # (n, d_model) x (d_model, n_v) -> (n, n_v) -> (n_v, n)
    decay_in = h @ p.w_a  # (n, d_model) x (d_model, n_v) -> (n, n_v)
    if p.w_a2 is not None:  # Kimi: a low-rank pair, one input per key channel
        decay_in = decay_in @ p.w_a2  # (n, r) x (r, n_v*d_k) -> (n, n_v*d_k)
    if d.per_channel_decay:
        g = -np.exp(p.a_log)[:, None, None] * split_heads(softplus(decay_in + p.dt_bias), d.n_v_heads)  # (n_v, n, d_k)
    else:
        g = (-np.exp(p.a_log) * softplus(decay_in + p.dt_bias)).T  # (n_v, n): the log of each token's decay
    if state is not None and n == 1:  # decoding: one step of the rule
        o, state = gated_delta_rule(q, k, v, g, beta, initial_state=state)  # (n_v, 1, d_v), (n_v, d_k, d_v)
    else:  # a prefill (or several tokens at once): chunk by chunk
        o, state = chunked_gated_delta_rule(q, k, v, g, beta, chunk_size=d.chunk_size, initial_state=state)
    z = h @ p.w_z  # (n, d_model) x (d_model, n_v*d_v) -> (n, n_v*d_v)
    if p.w_z2 is not None:  # Kimi: a low-rank pair
        z = z @ p.w_z2  # (n, r) x (r, n_v*d_v) -> (n, n_v*d_v)
    z = split_heads(z, d.n_v_heads)  # (n, n_v*d_v) -> (n_v, n, d_v)
    o = gated_rms_norm(o, z, p.norm, d.norm_eps, d.gate_activation)  # (n_v, n, d_v)
    return merge_heads(o) @ p.w_out, (conv_past, state)  # (n, n_v*d_v) x (n_v*d_v, d_model) -> (n, d_model)


def delta_layer_shapes(d: DeltaRuleConfig, d_model: int, prefix: str) -> dict[str, tuple[int, ...]]:
    """The tensors of one delta-rule layer under `prefix` ("model.layers.i.linear_attn."), shapes as torch stores them.

    Names are transformers' module names, but for Kimi Linear's, which are
    its files' (self_attn.f_a_proj, not self_attn.forget_gate.f_a_proj);
    OLMo hybrid's and Kimi Linear's files split the convolution in three
    (q_conv1d, k_conv1d, v_conv1d), which `canonical_names` joins.
    """
    a = prefix
    conv_dim = 2 * d.key_dim + d.value_dim
    if d.projections == "grouped":  # Qwen3-Next
        out = {a + "in_proj_qkvz.weight": (2 * d.key_dim + 2 * d.value_dim, d_model),
               a + "in_proj_ba.weight": (2 * d.n_v_heads, d_model)}
    elif d.projections == "split":  # Qwen3.5
        out = {a + "in_proj_qkv.weight": (conv_dim, d_model), a + "in_proj_z.weight": (d.value_dim, d_model),
               a + "in_proj_b.weight": (d.n_v_heads, d_model), a + "in_proj_a.weight": (d.n_v_heads, d_model)}
    elif d.projections == "separate":  # OLMo hybrid
        out = {a + "q_proj.weight": (d.key_dim, d_model), a + "k_proj.weight": (d.key_dim, d_model),
               a + "v_proj.weight": (d.value_dim, d_model), a + "a_proj.weight": (d.n_v_heads, d_model),
               a + "b_proj.weight": (d.n_v_heads, d_model), a + "g_proj.weight": (d.value_dim, d_model)}
    else:  # Kimi Linear: the decay and the output gate through a pair of rank d_k
        out = {a + "q_proj.weight": (d.key_dim, d_model), a + "k_proj.weight": (d.key_dim, d_model),
               a + "v_proj.weight": (d.value_dim, d_model), a + "b_proj.weight": (d.n_v_heads, d_model),
               a + "f_a_proj.weight": (d.d_k, d_model), a + "f_b_proj.weight": (d.key_dim, d.d_k),
               a + "g_a_proj.weight": (d.d_v, d_model), a + "g_b_proj.weight": (d.value_dim, d.d_v)}
    qwen = d.projections in ("grouped", "split")
    out.update({a + "conv1d.weight": (conv_dim, 1, d.conv_width),
                a + "A_log": (1, 1, d.n_v_heads, 1) if d.per_channel_decay else (d.n_v_heads,),
                a + "dt_bias": (d.key_dim,) if d.per_channel_decay else (d.n_v_heads,),
                a + ("norm" if qwen else "o_norm") + ".weight": (d.d_v,),
                a + ("out_proj" if qwen else "o_proj") + ".weight": (d_model, d.value_dim)})
    return out


def read_delta_weights(d: DeltaRuleConfig, prefix: str, raw: Callable[[str], np.ndarray],
                       keep: Callable[[np.ndarray], np.ndarray]) -> DeltaWeights:
    """A delta-rule layer's `DeltaWeights` from its tensors under `prefix`.

    Args:
        raw: name -> the stored tensor (shape checked against `delta_layer_shapes`).
        keep: array -> the array the model keeps (its dtype, read-only).
    """
    a = prefix
    if d.projections == "grouped":
        # Qwen3-Next groups the rows by key head: [q_i (d_k), k_i (d_k), v_i (g d_v), z_i (g d_v)] for each head i,
        # then [b_i (g), a_i (g)]; value head i * g + j is the j-th of key head i's group
        g = d.n_v_heads // d.n_k_heads
        qkvz = raw(a + "in_proj_qkvz.weight").reshape(d.n_k_heads, 2 * d.d_k + 2 * g * d.d_v, -1)  # (n_k, rows, d_model)
        ends = np.cumsum([d.d_k, d.d_k, g * d.d_v])
        w_q, w_k, w_v, w_z = (part.reshape(-1, part.shape[-1]) for part in np.split(qkvz, ends, axis=1))
        ba = raw(a + "in_proj_ba.weight").reshape(d.n_k_heads, 2 * g, -1)  # (n_k, 2g, d_model)
        w_b, w_a = ba[:, :g].reshape(d.n_v_heads, -1), ba[:, g:].reshape(d.n_v_heads, -1)
    elif d.projections == "split":
        w_q, w_k, w_v = np.split(raw(a + "in_proj_qkv.weight"), [d.key_dim, 2 * d.key_dim])
        w_z, w_b, w_a = (raw(a + f"in_proj_{x}.weight") for x in "zba")
    elif d.projections == "separate":
        w_q, w_k, w_v, w_z, w_b, w_a = (raw(a + f"{x}_proj.weight") for x in "qkvgba")
    else:
        w_q, w_k, w_v, w_z, w_b, w_a = (raw(a + f"{x}_proj.weight") for x in ("q", "k", "v", "g_a", "b", "f_a"))
    low_rank = d.projections == "low_rank"
    qwen = d.projections in ("grouped", "split")
    return DeltaWeights(
        w_q=keep(w_q.T), w_k=keep(w_k.T), w_v=keep(w_v.T), w_z=keep(w_z.T), w_b=keep(w_b.T), w_a=keep(w_a.T),
        conv=keep(raw(a + "conv1d.weight")[:, 0, :]),  # (channels, 1, w) -> (channels, w)
        a_log=keep(raw(a + "A_log").reshape(-1)),  # Kimi stores it (1, 1, n_v, 1)
        dt_bias=keep(raw(a + "dt_bias")),
        norm=keep(raw(a + ("norm" if qwen else "o_norm") + ".weight")),
        w_out=keep(raw(a + ("out_proj" if qwen else "o_proj") + ".weight").T),
        w_a2=keep(raw(a + "f_b_proj.weight").T) if low_rank else None,  # (n_v*d_k, r) -> (r, n_v*d_k)
        w_z2=keep(raw(a + "g_b_proj.weight").T) if low_rank else None)


_RENAMES = (("attention_layer_norm", "input_layernorm"), ("feedforward_layer_norm", "post_attention_layernorm"),
            ("block_sparse_moe", "mlp"))
"""File names (OLMo hybrid's norms, Kimi Linear's feed-forward layer) and transformers' module names."""

_KIMI_EXPERTS = {"w1": "gate_proj", "w2": "down_proj", "w3": "up_proj"}
"""Kimi Linear's file names of each expert's projections."""


def canonical_names(tensors: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The tensors under the names `delta_layer_shapes` and the layout use: OLMo hybrid's norms and Kimi Linear's
    experts renamed, three convolutions joined into one (q, k, v channels in that order), Qwen3.5's
    "model.language_model." prefix dropped."""
    out = {}
    for name, t in tensors.items():
        if name.startswith("model.language_model."):
            name = "model." + name[len("model.language_model."):]
        for old, new in _RENAMES:
            name = name.replace(f".{old}.", f".{new}.")
        parts = name.split(".")
        if ".experts." in name and parts[-2] in _KIMI_EXPERTS:
            parts[-2] = _KIMI_EXPERTS[parts[-2]]
            name = ".".join(parts)
        out[name] = t
    for name in [n for n in out if n.endswith(".q_conv1d.weight")]:
        base = name[:-len("q_conv1d.weight")]
        parts = [out.pop(base + f"{x}_conv1d.weight", None) for x in "qkv"]
        if all(p is not None for p in parts):
            out[base + "conv1d.weight"] = np.concatenate(parts, axis=0)  # (key_dim + key_dim + value_dim, 1, w)
        else:  # leave them as found: the layout check names what is missing
            out.update({base + f"{x}_conv1d.weight": p for x, p in zip("qkv", parts) if p is not None})
    return out
