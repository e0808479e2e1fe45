"""config.json of the models with DeepSeek Sparse Attention, DeepSeek-V3.2 and GLM-5, read as transformers reads it.

Both are DeepSeek-V3's multi-head latent attention and mixture of experts with
a lightning indexer beside each attention layer (`core.sparse`). Their
configuration classes (transformers' DeepseekV32Config and GlmMoeDsaConfig)
differ from DeepseekV3Config in defaults and in a few keys:

- `mlp_layer_types` ("dense" / "sparse" per layer) may replace
  first_k_dense_replace; the dense layers must come first here;
- the latent attention's RoPE is always interleaved (there is no
  rope_interleave key) and the queries always low-rank (q_lora_rank is never
  null);
- no multi-token prediction layer is described (num_nextn_predict_layers,
  if a file gives it, says how many extra layers its tensors hold);
- the indexer: index_n_heads, index_head_dim, index_topk; GLM-5 also says per
  layer whether the indexer runs ("full") or the layer reuses the previous
  layer's choice ("shared": indexer_types, or the index_topk_pattern /
  index_topk_freq / index_skip_topk_offset it is derived from).

`dsa_config` returns config.json with each family's defaults written in, so
that `config_json` reads it as DeepSeek-V3; `indexer_config` reads the indexer.
"""

from __future__ import annotations

from .options import IndexerConfig, UnsupportedConfigError

DSA_TYPES = ("deepseek_v32", "glm_moe_dsa")
"""The model types with DeepSeek Sparse Attention."""

_DEFAULTS = {
    "deepseek_v32": dict(kv_lora_rank=512, q_lora_rank=1536, qk_rope_head_dim=64, qk_nope_head_dim=128, v_head_dim=128,
                         n_routed_experts=256, num_experts_per_tok=8, moe_intermediate_size=2048, n_shared_experts=1,
                         routed_scaling_factor=2.5, n_group=8, topk_group=4, norm_topk_prob=True,
                         first_k_dense_replace=3, rms_norm_eps=1e-6, max_position_embeddings=163840,
                         index_topk=2048, index_head_dim=128, index_n_heads=64, attention_bias=False),
    "glm_moe_dsa": dict(kv_lora_rank=512, q_lora_rank=2048, qk_rope_head_dim=64, qk_nope_head_dim=192, v_head_dim=256,
                        n_routed_experts=256, num_experts_per_tok=8, moe_intermediate_size=2048, n_shared_experts=1,
                        routed_scaling_factor=2.5, n_group=1, topk_group=1, norm_topk_prob=True,
                        first_k_dense_replace=3, rms_norm_eps=1e-5, max_position_embeddings=202752,
                        index_topk=2048, index_head_dim=128, index_n_heads=32, attention_bias=False),
}
"""transformers' defaults (DeepseekV32Config, GlmMoeDsaConfig) for the keys their models read."""


def dsa_config(cfg: dict, model_type: str, source: str) -> dict:
    """config.json with the family's defaults filled in and its own keys put the DeepSeek-V3 way; refuses what
    is not implemented with an UnsupportedConfigError naming the key."""
    out = {**_DEFAULTS[model_type], **cfg}
    if out.get("q_lora_rank") is None:
        raise UnsupportedConfigError(f"{source}: q_lora_rank = null is not implemented for {model_type}: its "
                                     "attention always has low-rank queries")
    n_layers = out.get("num_hidden_layers")
    kinds = out.get("mlp_layer_types")
    if kinds is not None and n_layers is not None:
        n_dense = sum(1 for kind in kinds if kind == "dense")
        if len(kinds) != n_layers or list(kinds) != ["dense"] * n_dense + ["sparse"] * (n_layers - n_dense):
            raise UnsupportedConfigError(f"{source}: mlp_layer_types = {kinds!r} is not implemented; only "
                                         f"{n_layers} entries, the 'dense' ones first, then 'sparse'")
        out["first_k_dense_replace"] = n_dense
    layer_types = out.get("layer_types")
    if layer_types is not None and set(layer_types) != {"indexed_attention"}:
        raise UnsupportedConfigError(f"{source}: layer_types = {sorted(set(layer_types))} is not implemented; only "
                                     "'indexed_attention' in every layer")
    out["rope_interleave"] = True  # the latent attention's RoPE: always interleaved in these two families
    out.setdefault("num_nextn_predict_layers", 0)
    if int(out["index_head_dim"]) < int(out["qk_rope_head_dim"]):
        raise UnsupportedConfigError(f"{source}: index_head_dim = {out['index_head_dim']} is smaller than "
                                     f"qk_rope_head_dim = {out['qk_rope_head_dim']}, the part RoPE rotates")
    return out


def indexer_config(cfg: dict, model_type: str, n_layers: int, source: str) -> IndexerConfig:
    """The indexer of a `dsa_config` dict."""
    shared = _shared_layers(cfg, n_layers, source) if model_type == "glm_moe_dsa" else (False,) * n_layers
    for key in ("index_n_heads", "index_head_dim", "index_topk"):
        if int(cfg[key]) < 1:
            raise UnsupportedConfigError(f"{source}: {key} must be a positive integer; got {cfg[key]!r}")
    return IndexerConfig(n_heads=int(cfg["index_n_heads"]), head_dim=int(cfg["index_head_dim"]),
                         top_k=int(cfg["index_topk"]), rope_interleaved=model_type == "glm_moe_dsa", shared=shared)


def _shared_layers(cfg: dict, n_layers: int, source: str) -> tuple[bool, ...]:
    """GLM-5: True for each layer that reuses the previous layer's choice, as GlmMoeDsaConfig derives it."""
    kinds = cfg.get("indexer_types")
    if kinds is None:
        pattern = cfg.get("index_topk_pattern")
        if pattern is not None:
            letters = {"F": "full", "S": "shared"}
            if isinstance(pattern, str) and set(pattern) - set(letters):
                raise UnsupportedConfigError(f"{source}: index_topk_pattern = {pattern!r} must be letters F and S")
            kinds = [letters[ch] for ch in pattern] if isinstance(pattern, str) else list(pattern)
        else:
            freq = max(int(cfg.get("index_topk_freq", 1)), 1)
            offset = int(cfg.get("index_skip_topk_offset", 2))
            kinds = ["full" if max(i - offset + 1, 0) % freq == 0 else "shared" for i in range(n_layers)]
    if len(kinds) != n_layers or set(kinds) - {"full", "shared"}:
        raise UnsupportedConfigError(f"{source}: indexer_types = {kinds!r} must give 'full' or 'shared' for each of "
                                     f"the {n_layers} layers")
    if kinds[0] == "shared":
        raise UnsupportedConfigError(f"{source}: indexer_types[0] = 'shared', but the first layer has no earlier "
                                     "layer's choice to reuse")
    return tuple(kind == "shared" for kind in kinds)
