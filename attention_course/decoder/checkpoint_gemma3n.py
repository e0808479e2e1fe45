"""The tensors of a Gemma 3n text checkpoint: their names and shapes, and reading them (row-vector convention).

Beside Gemma 3's layer (attention with q_norm and k_norm, four norms, a gated
MLP, its width per layer) each layer stores AltUp's coefficients
(`altup.*`), LAuReL's low-rank pair (`laurel.*`) and the gate and projection
of its per-layer input; a layer that shares another's keys and values stores
no k_proj, v_proj or k_norm. The model stores the per-layer embeddings
(`embed_tokens_per_layer`, L x P numbers per token), their projection from
the embeddings, and AltUp's projections into and out of its extra copies.
The value norm has no weight. `layout.checkpoint_shapes` lists them through
`shapes`; `weights.decoder_weights` reads them through `read`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .config import DecoderConfig


@dataclass(frozen=True)
class Gemma3nLayer:
    """What one Gemma 3n layer adds to a `DecoderLayer` (row-vector convention: y = x @ w)."""

    router_norm: np.ndarray
    """(d_model,) AltUp's RMSNorm before its router."""
    modality_router: np.ndarray
    """(d_model, A) AltUp's router: A mixing weights (after tanh) per token."""
    prediction_coefs: np.ndarray
    """(A, A * A) the router's weights -> an A x A matrix per token that predicts every copy from all of them."""
    correction_coefs: np.ndarray
    """(A, A) the router's weights -> how much of the active copy's update each copy takes (plus 1)."""
    correct_output_scale: np.ndarray
    """(d_model,) scales the corrected active copy before the per-layer input gate."""
    laurel_left: np.ndarray
    """(d_model, r) LAuReL's down projection."""
    laurel_right: np.ndarray
    """(r, d_model) LAuReL's up projection."""
    laurel_norm: np.ndarray
    """(d_model,) RMSNorm weight after LAuReL's pair."""
    per_layer_gate: np.ndarray
    """(d_model, P) the active copy -> P gates for the layer's per-token input."""
    per_layer_projection: np.ndarray
    """(P, d_model) the gated per-layer input back to the residual width."""
    per_layer_norm: np.ndarray
    """(d_model,) RMSNorm weight after that projection."""


@dataclass(frozen=True)
class Gemma3nExtras:
    """Gemma 3n's model-level tensors and each layer's `Gemma3nLayer`."""

    per_layer_embeddings: np.ndarray
    """(vocab_per_layer, L * P) every token's embedding for every layer."""
    per_layer_model_projection: np.ndarray
    """(d_model, L * P) the embeddings projected to every layer's input."""
    per_layer_projection_norm: np.ndarray
    """(P,) RMSNorm weight of that projection, per layer."""
    altup_projections: np.ndarray
    """(A - 1, d_model, d_model) the embeddings -> AltUp's extra copies."""
    altup_unembed_projections: np.ndarray
    """(A - 1, d_model, d_model) the extra copies -> the residual stream, at the end."""
    layers: tuple[Gemma3nLayer, ...]
    """One per layer."""


def shapes(c: DecoderConfig) -> dict[str, tuple[int, ...]]:
    """Every tensor name of a Gemma 3n text checkpoint of `config`, with its shape (torch's: Linear (out, in))."""
    g, d, h, L = c.gemma3n, c.d_model, c.head_dim, c.n_layers
    a, p_dim = g.altup_num_inputs, g.d_per_layer
    out = {"model.embed_tokens.weight": (c.vocab_size, d),
           "model.embed_tokens_per_layer.weight": (g.vocab_per_layer, L * p_dim),
           "model.per_layer_model_projection.weight": (L * p_dim, d),
           "model.per_layer_projection_norm.weight": (p_dim,)}
    for i in range(1, a):
        out[f"model.altup_projections.{i - 1}.weight"] = (d, d)
        out[f"model.altup_unembed_projections.{i - 1}.weight"] = (d, d)
    for i in range(L):
        p = f"model.layers.{i}."
        for name in ("input_layernorm", "post_attention_layernorm", "pre_feedforward_layernorm",
                     "post_feedforward_layernorm", "post_per_layer_input_norm", "altup.router_norm",
                     "laurel.post_laurel_norm"):
            out[p + name + ".weight"] = (d,)
        out[p + "altup.correct_output_scale"] = (d,)
        out[p + "altup.correction_coefs.weight"] = (a, a)
        out[p + "altup.prediction_coefs.weight"] = (a * a, a)
        out[p + "altup.modality_router.weight"] = (a, d)
        out[p + "laurel.linear_left.weight"] = (g.laurel_rank, d)
        out[p + "laurel.linear_right.weight"] = (d, g.laurel_rank)
        out[p + "per_layer_input_gate.weight"] = (p_dim, d)
        out[p + "per_layer_projection.weight"] = (d, p_dim)
        s = p + "self_attn."
        out[s + "q_proj.weight"] = (c.n_heads * h, d)
        out[s + "q_norm.weight"] = (h,)
        if g.kv_sources[i] == i:  # a layer that shares another's keys and values has none of its own
            out[s + "k_proj.weight"] = (c.n_kv_heads * h, d)
            out[s + "v_proj.weight"] = (c.n_kv_heads * h, d)
            out[s + "k_norm.weight"] = (h,)
        if c.qkv_bias:
            out.update({s + "q_proj.bias": (c.n_heads * h,)})
            if g.kv_sources[i] == i:
                out.update({s + "k_proj.bias": (c.n_kv_heads * h,), s + "v_proj.bias": (c.n_kv_heads * h,)})
        out[s + "o_proj.weight"] = (d, c.n_heads * h)
        if c.o_bias:
            out[s + "o_proj.bias"] = (d,)
        w = g.d_ffs[i]
        out.update({p + "mlp.gate_proj.weight": (w, d), p + "mlp.up_proj.weight": (w, d), p + "mlp.down_proj.weight": (d, w)})
    out["model.norm.weight"] = (d,)
    if not c.tie_word_embeddings:
        out["lm_head.weight"] = (c.vocab_size, d)
    return out


def read(t, c: DecoderConfig) -> Gemma3nExtras:
    """Gemma 3n's extra tensors, read by the taker `t` of `weights.decoder_weights`."""
    a = c.gemma3n.altup_num_inputs

    def stacked(name: str) -> np.ndarray:  # (A - 1, d, d), each (in, out)
        return t.frozen(np.stack([t.linear(f"model.{name}.{i}")[0] for i in range(a - 1)])
                        if a > 1 else np.zeros((0, c.d_model, c.d_model)))

    layers = []
    for i in range(c.n_layers):
        p = f"model.layers.{i}."
        layers.append(Gemma3nLayer(
            router_norm=t.norm(p + "altup.router_norm"), modality_router=t.linear(p + "altup.modality_router")[0],
            prediction_coefs=t.linear(p + "altup.prediction_coefs")[0],
            correction_coefs=t.linear(p + "altup.correction_coefs")[0],
            correct_output_scale=t.get(p + "altup.correct_output_scale"),
            laurel_left=t.linear(p + "laurel.linear_left")[0], laurel_right=t.linear(p + "laurel.linear_right")[0],
            laurel_norm=t.norm(p + "laurel.post_laurel_norm"), per_layer_gate=t.linear(p + "per_layer_input_gate")[0],
            per_layer_projection=t.linear(p + "per_layer_projection")[0],
            per_layer_norm=t.norm(p + "post_per_layer_input_norm")))
    return Gemma3nExtras(
        per_layer_embeddings=t.get("model.embed_tokens_per_layer.weight"),
        per_layer_model_projection=t.linear("model.per_layer_model_projection")[0],
        per_layer_projection_norm=t.norm("model.per_layer_projection_norm"),
        altup_projections=stacked("altup_projections"), altup_unembed_projections=stacked("altup_unembed_projections"),
        layers=tuple(layers))
