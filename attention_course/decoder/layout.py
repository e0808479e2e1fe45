"""The tensors a checkpoint of a given configuration stores: names and shapes, as transformers saves them.

One list serves three readers: `weights.decoder_weights` (DeepSeek-V4: `deepseek_v4.read_v4_weights`) takes exactly these
tensors from a file (and refuses any other), `size.parameter_count` adds up
their sizes, and `model.random_decoder` draws them. Shapes are torch's:
a Linear weight is (out, in).
"""

from __future__ import annotations

from . import checkpoint_gemma3n, checkpoint_v4
from . import checkpoint_minimax_llama4 as minimax_llama4
from .config import DecoderConfig
from .delta import delta_layer_shapes


def _attention(c: DecoderConfig, p: str) -> dict[str, tuple[int, ...]]:
    """One layer's attention tensors under the prefix p ("model.layers.i.")."""
    out: dict[str, tuple[int, ...]] = {}
    a = p + "self_attn."
    if c.latent is not None:
        m = c.latent
        if m.q_lora_rank is None:
            out[a + "q_proj.weight"] = (c.n_heads * m.qk_head_dim, c.d_model)
        else:
            out[a + "q_a_proj.weight"] = (m.q_lora_rank, c.d_model)
            if c.qkv_bias:
                out[a + "q_a_proj.bias"] = (m.q_lora_rank,)
            out[a + "q_a_layernorm.weight"] = (m.q_lora_rank,)
            out[a + "q_b_proj.weight"] = (c.n_heads * m.qk_head_dim, m.q_lora_rank)
        out[a + "kv_a_proj_with_mqa.weight"] = (m.kv_lora_rank + m.qk_rope_head_dim, c.d_model)
        if c.qkv_bias:
            out[a + "kv_a_proj_with_mqa.bias"] = (m.kv_lora_rank + m.qk_rope_head_dim,)
        out[a + "kv_a_layernorm.weight"] = (m.kv_lora_rank,)
        out[a + "kv_b_proj.weight"] = (c.n_heads * (m.qk_nope_head_dim + m.v_head_dim), m.kv_lora_rank)
        layer = int(p.split(".")[2])
        if c.indexer is not None and not c.indexer.shared[layer]:  # DeepSeek Sparse Attention's lightning indexer
            ix = c.indexer
            out[a + "indexer.wq_b.weight"] = (ix.n_heads * ix.head_dim, m.q_lora_rank)
            out[a + "indexer.wk.weight"] = (ix.head_dim, c.d_model)
            out[a + "indexer.k_norm.weight"] = (ix.head_dim,)  # a LayerNorm: a gain and a bias
            out[a + "indexer.k_norm.bias"] = (ix.head_dim,)
            out[a + "indexer.weights_proj.weight"] = (ix.n_heads, c.d_model)
    else:
        q_width, kv_width = c.n_heads * c.head_dim, c.n_kv_heads * c.head_dim
        gate = 2 if c.attn_output_gate else 1  # gated attention: each head's query, then its gate
        for name, width in (("q_proj", gate * q_width), ("k_proj", kv_width), ("v_proj", kv_width)):
            out[a + name + ".weight"] = (width, c.d_model)
            if c.qkv_bias:
                out[a + name + ".bias"] = (width,)
        if c.qk_norm and c.qk_norm_scope == "projection":  # MiniMax-M2, OLMo hybrid: one gain over all heads
            out[a + "q_norm.weight"] = (q_width,)
            out[a + "k_norm.weight"] = (kv_width,)
        elif c.qk_norm:
            out[a + "q_norm.weight"] = (c.head_dim,)
            out[a + "k_norm.weight"] = (c.head_dim,)
        if c.sinks:
            out[a + "sinks"] = (c.n_heads,)
    out[a + "o_proj.weight"] = (c.d_model, c.n_heads * c.v_head_dim)
    if c.o_bias:
        out[a + "o_proj.bias"] = (c.d_model,)
    return out


def _dense(prefix: str, d_model: int, d_ff: int, bias: bool) -> dict[str, tuple[int, ...]]:
    """A gated MLP's gate, up and down projections under `prefix`."""
    out: dict[str, tuple[int, ...]] = {}
    for name, shape in (("gate_proj", (d_ff, d_model)), ("up_proj", (d_ff, d_model)), ("down_proj", (d_model, d_ff))):
        out[prefix + name + ".weight"] = shape
        if bias:
            out[prefix + name + ".bias"] = (shape[0],)
    return out


def _mlp(c: DecoderConfig, layer: int, p: str) -> dict[str, tuple[int, ...]]:
    """One layer's feed-forward tensors: dense, gpt-oss's experts, or DeepSeek's experts (MiniMax-M2's, Llama 4's:
    checkpoint_minimax_llama4)."""
    if c.model_type in minimax_llama4.MODEL_TYPES:
        return minimax_llama4.mlp_shapes(c, layer, p)
    if not c.is_moe_layer(layer):
        return _dense(p + "mlp.", c.d_model, c.d_ff, c.mlp_bias)
    e, h, i = c.moe.n_experts, c.d_model, c.moe.d_expert
    if c.moe.router == "softmax":  # Qwen3-Next: one MLP per expert, a shared expert and its gate
        out = {p + "mlp.gate.weight": (e, h), p + "mlp.shared_expert_gate.weight": (1, h)}
        for j in range(e):
            out.update(_dense(f"{p}mlp.experts.{j}.", h, i, False))
        out.update(_dense(p + "mlp.shared_expert.", h, c.moe.shared_width, False))
        return out
    if c.moe.router == "softmax_top_k":  # gpt-oss: fused expert tensors, stored (in, out)
        return {p + "mlp.router.weight": (e, h), p + "mlp.router.bias": (e,),
                p + "mlp.experts.gate_up_proj": (e, h, 2 * i), p + "mlp.experts.gate_up_proj_bias": (e, 2 * i),
                p + "mlp.experts.down_proj": (e, i, h), p + "mlp.experts.down_proj_bias": (e, h)}
    out = {p + "mlp.gate.weight": (e, h), p + "mlp.gate.e_score_correction_bias": (e,)}
    for j in range(e):  # DeepSeek: one small MLP per expert, as the published files store them
        out.update(_dense(f"{p}mlp.experts.{j}.", h, i, False))
    # the shared experts as one MLP, stored (with zero width) even when there are none, as transformers saves them
    out.update(_dense(p + "mlp.shared_experts.", h, i * c.moe.n_shared_experts, False))
    return out


def _norms(c: DecoderConfig, p: str, layer: int) -> dict[str, tuple[int, ...]]:
    names = ["input_layernorm", "post_attention_layernorm"]
    if c.delta is not None and c.delta.attention_post_norms and not c.delta.is_delta_layer(layer):
        names = ["post_attention_layernorm", "post_feedforward_layernorm"]  # OLMo: on the outputs alone
    if c.sandwich_norms:
        names += ["pre_feedforward_layernorm", "post_feedforward_layernorm"]
    return {p + name + ".weight": (c.d_model,) for name in names}


def checkpoint_shapes(config: DecoderConfig) -> dict[str, tuple[int, ...]]:
    """Every tensor name a checkpoint of `config` stores, with its shape: embeddings, layers, final norm, lm_head.

    The tied output projection (tie_word_embeddings) is not listed: it is the
    embedding matrix itself.
    """
    c = config
    if c.gemma3n is not None:
        return checkpoint_gemma3n.shapes(c)  # AltUp, LAuReL, per-layer inputs, KV sharing
    if c.v4 is not None:
        return checkpoint_v4.shapes(c)  # DeepSeek's own names: compressors, indexers, hyper-connections
    shapes = {"model.embed_tokens.weight": (c.vocab_size, c.d_model)}
    for layer in range(c.n_layers):
        p = f"model.layers.{layer}."
        shapes.update(_norms(c, p, layer))
        if c.delta is not None and c.delta.is_delta_layer(layer):  # a layer that keeps a state instead of scores
            shapes.update(delta_layer_shapes(c.delta, c.d_model, p + c.delta.module))
        else:
            shapes.update(_attention(c, p))
        shapes.update(_mlp(c, layer, p))
    shapes["model.norm.weight"] = (c.d_model,)
    if not c.tie_word_embeddings:
        shapes["lm_head.weight"] = (c.vocab_size, c.d_model)
    return shapes
