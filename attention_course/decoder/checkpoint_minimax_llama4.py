"""The feed-forward tensors of MiniMax-M2 and Llama 4 (text) checkpoints: their names and shapes, and reading them.

MiniMax-M2 stores Mixtral's layout under `block_sparse_moe.`: a router
`gate.weight` (E, d_model), the correction bias `e_score_correction_bias`
(E,) and, per expert j, `experts.j.w1` (gate), `w3` (up) and `w2` (down) as
Linear weights (out, in). Llama 4 stores its layer's feed-forward under
`feed_forward.`: a dense gated MLP, or a `router.weight` (E, d_model), the
experts fused in two tensors stored (in, out), `experts.gate_up_proj`
(E, d_model, 2 d_expert: gate columns first, then up) and
`experts.down_proj` (E, d_expert, d_model), and a `shared_expert` MLP.
`layout.checkpoint_shapes` lists them through `mlp_shapes`;
`weights.decoder_weights` reads them through `read_mlp`.
"""

from __future__ import annotations

import numpy as np

from .config import DecoderConfig
from .config_minimax_llama4 import MODEL_TYPES


def _gated(prefix: str, d_model: int, width: int, names=("gate_proj", "up_proj", "down_proj")) -> dict:
    """A gated MLP's three Linear weights (out, in) under `prefix`, named gate, up, down."""
    gate, up, down = names
    return {prefix + gate + ".weight": (width, d_model), prefix + up + ".weight": (width, d_model),
            prefix + down + ".weight": (d_model, width)}


def mlp_shapes(c: DecoderConfig, layer: int, p: str) -> dict[str, tuple[int, ...]]:
    """One layer's feed-forward tensors under the prefix p ("model.layers.i.")."""
    assert c.model_type in MODEL_TYPES
    h = c.d_model
    if c.model_type == "minimax_m2":
        m = p + "block_sparse_moe."
        e, i = c.moe.n_experts, c.moe.d_expert
        out = {m + "gate.weight": (e, h), m + "e_score_correction_bias": (e,)}
        for j in range(e):
            out.update(_gated(f"{m}experts.{j}.", h, i, names=("w1", "w3", "w2")))
        return out
    f = p + "feed_forward."
    if not c.is_moe_layer(layer):
        return _gated(f, h, c.d_ff)
    e, i = c.moe.n_experts, c.moe.d_expert
    return {f + "router.weight": (e, h), f + "experts.gate_up_proj": (e, h, 2 * i),
            f + "experts.down_proj": (e, i, h), **_gated(f + "shared_expert.", h, i)}


def read_mlp(t, c: DecoderConfig, layer: int, p: str) -> dict:
    """The `DecoderLayer` fields of one layer's feed-forward (w_gate, w_up, w_down, or experts: the fields of a
    `weights.Experts`, which weights builds), read by the taker `t` of `weights.decoder_weights`."""
    if c.model_type == "minimax_m2":
        m = p + "block_sparse_moe."
        stacked = [np.stack([t.linear(f"{m}experts.{j}.{name}")[0] for j in range(c.moe.n_experts)])
                   for name in ("w1", "w3", "w2")]  # E x (in, out) -> (E, in, out)
        w_gate, w_up, w_down = (t.frozen(w) for w in stacked)
        return dict(experts=dict(router=t.linear(m + "gate")[0], correction_bias=t.get(m + "e_score_correction_bias"),
                                    w_gate=w_gate, w_up=w_up, w_down=w_down))
    f = p + "feed_forward."
    if not c.is_moe_layer(layer):
        return dict(zip(("w_gate", "w_up", "w_down"), (t.linear(f + n)[0] for n in ("gate_proj", "up_proj", "down_proj"))))
    gate_up = t.get(f + "experts.gate_up_proj")  # (E, d_model, 2 d_expert), stored (in, out)
    i = c.moe.d_expert
    shared = tuple(t.linear(f + "shared_expert." + n)[0] for n in ("gate_proj", "up_proj", "down_proj"))
    return dict(experts=dict(router=t.linear(f + "router")[0], w_gate=t.frozen(gate_up[..., :i]),
                                w_up=t.frozen(gate_up[..., i:]), w_down=t.get(f + "experts.down_proj"),
                                shared=shared))
