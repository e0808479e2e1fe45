"""config.json of DeepSeek-V4, read as transformers' DeepseekV4Config reads it (`deepseek_v4.DeepseekV4Model` runs it).

What DeepSeek-V4 adds to a decoder's sizes, each a key of config.json (the
default, DeepseekV4Config's, in brackets):

- one key/value head shared by every query head (num_key_value_heads is not
  read), low-rank queries (q_lora_rank [1024]), RoPE on the last
  rope_dim = head_dim * partial_rotary_factor coordinates of each head
  [64 of 512] (legacy: qk_rope_head_dim), interleaved pairs;
- every layer attends to a sliding window of its tokens (sliding_window [128]);
  `layer_types` says what else: "sliding_attention" nothing,
  "compressed_sparse_attention" (CSA) entries pooled from overlapping windows
  of 2m tokens every m, of which a lightning indexer picks index_topk [512]
  per query (index_n_heads [64] heads of index_head_dim [128]),
  "heavily_compressed_attention" (HCA) entries pooled from windows of m' tokens,
  all attended to; m and m' from compress_rates [4 and 128] (legacy:
  compress_ratios per layer, compress_rate_csa / compress_rate_hca). The default
  layer_types: two HCA layers, then CSA and HCA in turn;
- two RoPEs, `rope_parameters.main` (rope_theta [10000], the sliding-only
  layers) and `.compress` (compress_rope_theta [160000], the compressed layers,
  their compressed entries and their indexer; a top-level yarn dict is this one's);
- a sink logit per head; the output projection in o_groups [8] groups of heads
  each projected to o_lora_rank [1024] before one projection to d_model;
- hyper-connections: hc_mult [4] copies of the residual stream, mixed by
  weights computed from them (hc_sinkhorn_iters [20], hc_eps [1e-6]);
- a mixture of experts in every layer: n_routed_experts [256], top
  num_experts_per_tok [6], scores sqrt(softplus(logit)) (scoring_func), the
  chosen ones renormalised and times routed_scaling_factor [1.5], one shared
  expert of width moe_intermediate_size [2048]; `mlp_layer_types` "hash_moe"
  layers [the first 3; legacy num_hash_layers] choose the experts by a table
  from the token id, "moe" layers by the top scores plus a bias; the gate and
  up projections are clipped to swiglu_limit [10]; mlp_bias [false] gives the
  shared expert's projections biases. (intermediate_size and
  num_local_experts, when given, stand for moe_intermediate_size and
  n_routed_experts, as DeepseekV4Config's attribute_map makes them.)

`v4_fields` returns the fields of a `DecoderConfig` with `v4` set to these options.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.rope_scaling import ROPE_TYPES, RopeScaling
from .options import UnsupportedConfigError

MODEL_TYPE = "deepseek_v4"
"""config.json's model_type."""

ATTENTION_TYPES = ("sliding_attention", "compressed_sparse_attention", "heavily_compressed_attention")
"""The layer_types DeepSeek-V4 has."""

_RATIO_TO_TYPE = {0: "sliding_attention", 4: "compressed_sparse_attention", 128: "heavily_compressed_attention"}


@dataclass(frozen=True)
class V4Options:
    """What DeepSeek-V4 adds to `DecoderConfig` (see the module docstring for the keys)."""

    layer_types: tuple[str, ...]
    """Per layer: "sliding_attention", "compressed_sparse_attention" or "heavily_compressed_attention"."""
    ratios: tuple[int, ...]
    """Per layer: m, the tokens pooled into one compressed entry (0: none)."""
    q_lora_rank: int
    rope_dim: int
    """The coordinates of each head RoPE rotates: the last rope_dim."""
    rope_main: RopeScaling
    """RoPE of the sliding-only layers."""
    rope_compress: RopeScaling
    """RoPE of the compressed layers (queries, keys, compressed entries, indexer)."""
    window: int
    o_groups: int
    o_lora_rank: int
    index_n_heads: int
    index_head_dim: int
    index_topk: int
    hc_mult: int
    hc_sinkhorn_iters: int
    hc_eps: float
    mlp_layer_types: tuple[str, ...]
    """Per layer: "hash_moe" (experts from a table of token ids) or "moe" (top scores plus a bias)."""
    n_experts: int
    top_k: int
    d_expert: int
    scoring_func: str
    """"sqrtsoftplus" or "sigmoid"."""
    routed_scaling_factor: float
    swiglu_limit: float

    def rope(self, layer: int) -> RopeScaling:
        """The RoPE of `layer`'s queries and keys."""
        return self.rope_main if self.layer_types[layer] == "sliding_attention" else self.rope_compress


def _rope(params: dict, theta, cfg: dict, key: str, source: str) -> RopeScaling:
    rope_type = params.get("rope_type", params.get("type", "default"))
    if rope_type not in ROPE_TYPES or rope_type == "dynamic":
        raise UnsupportedConfigError(f"{source}: {key}.rope_type = {rope_type!r} is not implemented for deepseek_v4")
    base = float(params.get("rope_theta", theta))
    max_positions = int(cfg.get("max_position_embeddings") or 1048576)
    original = params.get("original_max_position_embeddings") or cfg.get("original_max_position_embeddings")
    factor = float(params.get("factor") or 1.0)
    if rope_type == "yarn":
        original = int(original or max_positions)
        factor = float(params.get("factor") or max_positions / original)
        attention_factor = params.get("attention_factor")  # None: from the factor (1.0 in the flat form's compress)
        return RopeScaling("yarn", base, factor, original, max_positions,
                           beta_fast=float(params.get("beta_fast") or 32.0),
                           beta_slow=float(params.get("beta_slow") or 1.0),
                           truncate=bool(params.get("truncate", True)), mscale=params.get("mscale"),
                           mscale_all_dim=params.get("mscale_all_dim"),
                           attention_factor=None if attention_factor is None else float(attention_factor))
    if rope_type == "llama3":
        return RopeScaling("llama3", base, factor, int(original), max_positions,
                           float(params.get("low_freq_factor", 1.0)), float(params.get("high_freq_factor", 4.0)))
    return RopeScaling(rope_type, base, factor, max_positions=max_positions)


def _int(cfg: dict, key: str, default) -> int:
    value = cfg.get(key)
    return int(default if value is None else value)


def _float(cfg: dict, key: str, default) -> float:
    value = cfg.get(key)
    return float(default if value is None else value)


def v4_options(cfg: dict, source: str = "config.json") -> V4Options:
    """DeepSeek-V4's own options from config.json, DeepseekV4Config's defaults for the keys left out."""
    n = _int(cfg, "num_hidden_layers", 43)
    rates = dict(cfg.get("compress_rates") or {"compressed_sparse_attention": 4, "heavily_compressed_attention": 128})
    if cfg.get("compress_rate_csa") is not None:
        rates["compressed_sparse_attention"] = int(cfg["compress_rate_csa"])
    if cfg.get("compress_rate_hca") is not None:
        rates["heavily_compressed_attention"] = int(cfg["compress_rate_hca"])
    layer_types = cfg.get("layer_types")
    if layer_types is None and cfg.get("compress_ratios") is not None:
        try:
            layer_types = [_RATIO_TO_TYPE[int(r)] for r in cfg["compress_ratios"]]
        except KeyError as err:
            raise UnsupportedConfigError(f"{source}: compress_ratios may hold 0, 4 or 128; got {err.args[0]}") from None
    if layer_types is None:
        layer_types = ["heavily_compressed_attention"] * min(n, 2) + [
            "compressed_sparse_attention" if i % 2 else "heavily_compressed_attention" for i in range(max(n - 2, 0))]
    layer_types = tuple(layer_types[:n])
    mlp_types = cfg.get("mlp_layer_types")
    if mlp_types is None:
        n_hash = _int(cfg, "num_hash_layers", 3)
        mlp_types = ["hash_moe"] * min(n, n_hash) + ["moe"] * max(0, n - n_hash)
    mlp_types = tuple(mlp_types[:n])
    for key, types, allowed in (("layer_types", layer_types, ATTENTION_TYPES),
                                ("mlp_layer_types", mlp_types, ("hash_moe", "moe"))):
        if len(types) != n or any(t not in allowed for t in types):
            raise UnsupportedConfigError(f"{source}: {key} must give one of {allowed} for each of the {n} layers; "
                                         f"got {list(types)}")
    head_dim = _int(cfg, "head_dim", 512)
    factor = cfg.get("partial_rotary_factor")
    if factor is None:
        factor = cfg["qk_rope_head_dim"] / head_dim if cfg.get("qk_rope_head_dim") else 64 / 512
    rope_dim = int(head_dim * factor)
    if rope_dim % 2 or not 2 <= rope_dim <= head_dim:
        raise UnsupportedConfigError(f"{source}: head_dim * partial_rotary_factor = {rope_dim} must be even, "
                                     f"2..head_dim")
    theta = cfg.get("rope_theta") or 10000.0
    compress_theta = cfg.get("compress_rope_theta") or 160000.0
    rp = cfg.get("rope_parameters") or cfg.get("rope_scaling") or {}
    if isinstance(rp.get("main"), dict) and isinstance(rp.get("compress"), dict):
        main, compress = rp["main"], rp["compress"]
    else:
        main = {"rope_type": "default", "rope_theta": theta}
        compress = {k: v for k, v in rp.items() if k not in ("main", "compress")}
        compress["rope_theta"] = compress_theta
        if compress.get("rope_type", compress.get("type", "default")) == "yarn":
            compress.setdefault("attention_factor", 1.0)
    scoring = cfg.get("scoring_func") or "sqrtsoftplus"
    if scoring not in ("sqrtsoftplus", "sigmoid"):
        raise UnsupportedConfigError(f"{source}: scoring_func = {scoring!r} is not implemented; only 'sqrtsoftplus' "
                                     "or 'sigmoid'")
    ratios = tuple(0 if t == "sliding_attention" else int(rates[t]) for t in layer_types)
    return V4Options(
        layer_types=layer_types, ratios=ratios, q_lora_rank=_int(cfg, "q_lora_rank", 1024), rope_dim=rope_dim,
        rope_main=_rope(dict(main), theta, cfg, "rope_parameters.main", source),
        rope_compress=_rope(dict(compress), compress_theta, cfg, "rope_parameters.compress", source),
        window=_int(cfg, "sliding_window", 128), o_groups=_int(cfg, "o_groups", 8),
        o_lora_rank=_int(cfg, "o_lora_rank", 1024), index_n_heads=_int(cfg, "index_n_heads", 64),
        index_head_dim=_int(cfg, "index_head_dim", 128), index_topk=_int(cfg, "index_topk", 512),
        hc_mult=_int(cfg, "hc_mult", 4), hc_sinkhorn_iters=_int(cfg, "hc_sinkhorn_iters", 20),
        hc_eps=_float(cfg, "hc_eps", 1e-6), mlp_layer_types=mlp_types,
        n_experts=_int(cfg, "num_local_experts", _int(cfg, "n_routed_experts", 256)),
        top_k=_int(cfg, "num_experts_per_tok", 6),
        d_expert=_int(cfg, "intermediate_size", _int(cfg, "moe_intermediate_size", 2048)), scoring_func=scoring,
        routed_scaling_factor=_float(cfg, "routed_scaling_factor", 1.5),
        swiglu_limit=_float(cfg, "swiglu_limit", 10.0))


def v4_fields(cfg: dict, source: str = "config.json") -> dict:
    """The fields of a `DecoderConfig` for a DeepSeek-V4 config.json (`v4` holds what the family adds)."""
    for key in ("quantization_config",):
        if cfg.get(key):
            raise UnsupportedConfigError(f"{source}: {key} is not implemented for deepseek_v4 (float weights only)")
    if cfg.get("hidden_act", "silu") != "silu":
        raise UnsupportedConfigError(f"{source}: hidden_act {cfg['hidden_act']!r} is not implemented; only 'silu'")
    v4 = v4_options(cfg, source)
    n = _int(cfg, "num_hidden_layers", 43)
    eos = cfg.get("eos_token_id", 1)
    return dict(
        model_type=MODEL_TYPE, vocab_size=_int(cfg, "vocab_size", 129280), d_model=_int(cfg, "hidden_size", 4096),
        n_layers=n, n_heads=_int(cfg, "num_attention_heads", 64), n_kv_heads=1, head_dim=_int(cfg, "head_dim", 512),
        d_ff=v4.d_expert, rms_norm_eps=_float(cfg, "rms_norm_eps", 1e-6), rope_theta=v4.rope_main.base,
        tie_word_embeddings=bool(cfg.get("tie_word_embeddings", False)), qkv_bias=False, o_bias=False,
        mlp_bias=bool(cfg.get("mlp_bias", False)), windows=(v4.window,) * n, max_positions=_int(cfg, "max_position_embeddings", 1048576),
        eos_token_ids=() if eos is None else tuple(int(e) for e in (eos if isinstance(eos, list) else [eos])),
        ropes=tuple(v4.rope(i) for i in range(n)), rope_interleaved=True, sinks=True, rotary_dim=v4.rope_dim,
        dtype=str(cfg.get("dtype") or cfg.get("torch_dtype") or "float32"), v4=v4)
