"""The tensors a DeepSeek-V4 checkpoint stores: DeepSeek's names, as published and as transformers saves them.

transformers renames them when it loads (wq_a -> q_a_proj, ffn -> mlp, ...)
and back when it saves; this list is the file's side. Published files drop
the "model." prefix (and call the embeddings "embed.weight"): the reader
(`deepseek_v4.read_v4_weights`) takes either. Shapes are torch's, (out, in).
"""

from __future__ import annotations

from .config import DecoderConfig


def shapes(c: DecoderConfig) -> dict[str, tuple[int, ...]]:
    """Every tensor of a DeepSeek-V4 checkpoint of `c` (c.v4 set), with its shape."""
    o, d, h, hd = c.v4, c.d_model, c.n_heads, c.head_dim
    n_hc = o.hc_mult
    out = {"model.embed_tokens.weight": (c.vocab_size, d)}
    for i in range(c.n_layers):
        p, a, f = f"model.layers.{i}.", f"model.layers.{i}.attn.", f"model.layers.{i}.ffn."
        out.update({
            a + "attn_sink": (h,), a + "wq_a.weight": (o.q_lora_rank, d), a + "q_norm.weight": (o.q_lora_rank,),
            a + "wq_b.weight": (h * hd, o.q_lora_rank), a + "wkv.weight": (hd, d), a + "norm.weight": (hd,),
            a + "wo_a.weight": (o.o_groups * o.o_lora_rank, h * hd // o.o_groups),
            a + "wo_b.weight": (d, o.o_groups * o.o_lora_rank)})
        ratio = o.ratios[i]
        if ratio:
            csa = o.layer_types[i] == "compressed_sparse_attention"
            width = (2 if csa else 1) * hd  # CSA: two halves per token, one for each of the two windows it is in
            out.update({a + "compressor.ape": (ratio, width), a + "compressor.wkv.weight": (width, d),
                        a + "compressor.wgate.weight": (width, d), a + "compressor.norm.weight": (hd,)})
            if csa:
                di = o.index_head_dim
                out.update({a + "indexer.compressor.ape": (ratio, 2 * di),
                            a + "indexer.compressor.wkv.weight": (2 * di, d),
                            a + "indexer.compressor.wgate.weight": (2 * di, d),
                            a + "indexer.compressor.norm.weight": (di,),
                            a + "indexer.wq_b.weight": (o.index_n_heads * di, o.q_lora_rank),
                            a + "indexer.weights_proj.weight": (o.index_n_heads, d)})
        out[f + "gate.weight"] = (o.n_experts, d)
        if o.mlp_layer_types[i] == "hash_moe":
            out[f + "gate.tid2eid"] = (c.vocab_size, o.top_k)  # integers: each token id's experts
        else:
            out[f + "gate.bias"] = (o.n_experts,)
        for e in range(o.n_experts):
            out.update({f"{f}experts.{e}.w1.weight": (o.d_expert, d), f"{f}experts.{e}.w2.weight": (d, o.d_expert),
                        f"{f}experts.{e}.w3.weight": (o.d_expert, d)})
        out.update({f + "shared_experts.w1.weight": (o.d_expert, d), f + "shared_experts.w2.weight": (d, o.d_expert),
                    f + "shared_experts.w3.weight": (o.d_expert, d)})
        if c.mlp_bias:  # the shared expert's only (the routed experts have none)
            out.update({f + "shared_experts.w1.bias": (o.d_expert,), f + "shared_experts.w2.bias": (d,),
                        f + "shared_experts.w3.bias": (o.d_expert,)})
        out.update({p + "attn_norm.weight": (d,), p + "ffn_norm.weight": (d,)})
        for block in ("attn", "ffn"):
            out.update({f"{p}hc_{block}_fn": ((2 + n_hc) * n_hc, n_hc * d), f"{p}hc_{block}_base": ((2 + n_hc) * n_hc,),
                        f"{p}hc_{block}_scale": (3,)})
    out.update({"model.norm.weight": (d,), "model.hc_head.hc_fn": (n_hc, n_hc * d), "model.hc_head.hc_base": (n_hc,),
                "model.hc_head.hc_scale": (1,)})
    if not c.tie_word_embeddings:
        out["head.weight"] = (c.vocab_size, d)
    return out
