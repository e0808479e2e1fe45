"""config.json of MiniMax-M2 and Llama 4 (text): what they add to the fields `config_json` reads for every family.

MiniMax-M2 (MiniMaxM2Config): partial RoPE, which its released config.json
writes as a legacy `rotary_dim` (transformers turns it into
partial_rotary_factor = rotary_dim / head_dim); QK-norm over each whole
projection (one RMSNorm over all heads' queries, one over all keys); a
mixture of experts in every layer, chosen by sigmoid scores plus a
correction bias, the chosen scores divided by their sum (DeepSeek-V3's router
with a single group and no scaling factor).

Llama 4 (Llama4TextConfig, the text model Llama4ForCausalLM runs):
`no_rope_layers` (1: the layer uses RoPE, 0: NoPE; by default every
`no_rope_layer_interval`-th layer is NoPE); RoPE layers are
`chunked_attention` layers with `attention_chunk_size`, NoPE layers attend
to every earlier token; `use_qk_norm` (a weightless RMSNorm on the queries
and keys of RoPE layers, after RoPE); `attn_temperature_tuning` (NoPE layers'
queries scaled by `core.temperature.nope_temperature`); experts on
`moe_layers` (every `interleave_moe_layer_step`-th layer by default), with a
shared expert, the dense layers of width `intermediate_size_mlp`.

Defaults are those of transformers' configuration classes.
"""

from __future__ import annotations

from .options import MoEConfig, UnsupportedConfigError

MODEL_TYPES = ("minimax_m2", "llama4_text")
"""The model types this module reads."""

LLAMA4_LAYER_TYPES = ("full_attention", "chunked_attention")
"""Llama 4's layer_types."""


def refuse_multimodal(cfg: dict, source: str) -> None:
    """Llama 4's top-level config (model_type 'llama4') holds a vision tower too: refused, naming the text part."""
    if cfg.get("model_type") == "llama4":
        raise UnsupportedConfigError(f"{source}: model_type 'llama4' is Llama 4 with its vision tower; this package "
                                     "runs the text model alone (model_type 'llama4_text', the config under "
                                     "text_config)")


def common_view(cfg: dict, model_type: str) -> dict:
    """config.json as the common reader should see it: MiniMax-M2's partial RoPE taken out (read here instead)."""
    if model_type != "minimax_m2":
        return cfg
    cfg = {key: value for key, value in cfg.items() if key != "partial_rotary_factor"}
    for key in ("rope_parameters", "rope_scaling"):
        if isinstance(cfg.get(key), dict):
            cfg[key] = {k: v for k, v in cfg[key].items() if k != "partial_rotary_factor"}
    return cfg


def family_fields(cfg: dict, model_type: str, fields: dict, source: str) -> dict:
    """The `DecoderConfig` fields MiniMax-M2 or Llama 4 set beyond (or instead of) the common ones."""
    if model_type == "minimax_m2":
        return _minimax_m2(cfg, fields, source)
    return _llama4_text(cfg, fields, source)


def _rope_key(cfg: dict, key: str):
    """A key of rope_parameters (or of the older rope_scaling), or None."""
    for where in ("rope_parameters", "rope_scaling"):
        if isinstance(cfg.get(where), dict) and cfg[where].get(key) is not None:
            return cfg[where][key]
    return None


def _minimax_m2(cfg: dict, fields: dict, source: str) -> dict:
    head_dim = fields["head_dim"]
    factor = _rope_key(cfg, "partial_rotary_factor") or cfg.get("partial_rotary_factor")
    if factor is None and cfg.get("rotary_dim") is not None:
        factor = cfg["rotary_dim"] / head_dim  # the released config's legacy field
    rotary_dim = int(head_dim * float(factor if factor is not None else 1.0))
    if rotary_dim < 2 or rotary_dim > head_dim or rotary_dim % 2:
        raise UnsupportedConfigError(f"{source}: rotary_dim (head_dim x partial_rotary_factor) = {rotary_dim} must "
                                     f"be even and in 2..head_dim = 2..{head_dim}")
    n_experts, top_k = int(cfg.get("num_local_experts", 256)), int(cfg.get("num_experts_per_tok", 8))
    if not 1 <= top_k <= n_experts:
        raise UnsupportedConfigError(f"{source}: num_experts_per_tok = {top_k} must be in 1..num_local_experts = "
                                     f"{n_experts}")
    moe = MoEConfig(router="sigmoid_grouped", n_experts=n_experts, top_k=top_k, d_expert=fields["d_ff"],
                    n_group=1, topk_group=1, routed_scaling_factor=1.0, norm_topk_prob=True)
    return dict(qk_norm=True, qk_norm_scope="projection", rotary_dim=None if rotary_dim == head_dim else rotary_dim,
                moe=moe, qkv_bias=False, o_bias=False)  # MiniMaxM2Attention has no biases, whatever attention_bias says


def _llama4_text(cfg: dict, fields: dict, source: str) -> dict:
    n_layers = fields["n_layers"]
    uses_rope = cfg.get("no_rope_layers") or [int((i + 1) % int(cfg.get("no_rope_layer_interval") or 4) != 0)
                                              for i in range(n_layers)]
    if len(uses_rope) < n_layers:
        raise UnsupportedConfigError(f"{source}: no_rope_layers has {len(uses_rope)} entries for {n_layers} layers")
    chunk = cfg.get("attention_chunk_size", 8192)
    layer_types = cfg.get("layer_types") or ["chunked_attention" if uses_rope[i] and chunk is not None
                                             else "full_attention" for i in range(n_layers)]
    if len(layer_types) != n_layers:
        raise UnsupportedConfigError(f"{source}: layer_types has {len(layer_types)} entries for {n_layers} layers")
    unknown = sorted(set(layer_types) - set(LLAMA4_LAYER_TYPES))
    if unknown:
        raise UnsupportedConfigError(f"{source}: layer_types {unknown} are not implemented; only "
                                     f"{list(LLAMA4_LAYER_TYPES)}")
    if "chunked_attention" in layer_types and (chunk is None or int(chunk) < 1):
        raise UnsupportedConfigError(f"{source}: layer_types has chunked_attention layers but attention_chunk_size "
                                     f"is {chunk!r}: a chunked layer needs a positive chunk size")
    step = int(cfg.get("interleave_moe_layer_step") or 1)
    moe_layers = cfg.get("moe_layers")
    moe_layers = tuple(range(step - 1, n_layers, step)) if moe_layers is None else tuple(int(i) for i in moe_layers)
    n_experts, top_k = int(cfg.get("num_local_experts", 16)), int(cfg.get("num_experts_per_tok", 1))
    if not 1 <= top_k <= n_experts:
        raise UnsupportedConfigError(f"{source}: num_experts_per_tok = {top_k} must be in 1..num_local_experts = "
                                     f"{n_experts}")
    moe = MoEConfig(router="sigmoid_scaled_input", n_experts=n_experts, top_k=top_k, d_expert=fields["d_ff"],
                    n_shared_experts=1, layers=moe_layers)
    temperature = None
    if cfg.get("attn_temperature_tuning", True):
        floor_scale = cfg.get("floor_scale", 8192)
        if not isinstance(floor_scale, (int, float)) or floor_scale <= 0:
            raise UnsupportedConfigError(f"{source}: floor_scale must be a positive number; got {floor_scale!r}")
        temperature = (float(floor_scale), float(cfg.get("attn_scale", 0.1)))
    return dict(
        d_ff=int(cfg.get("intermediate_size_mlp", 16384)),  # the dense layers' width; experts: intermediate_size
        rms_norm_eps=float(cfg.get("rms_norm_eps") or 1e-5),
        ropes=tuple(r if uses_rope[i] else None for i, r in enumerate(fields["ropes"])),
        chunks=tuple(int(chunk) if t == "chunked_attention" else None for t in layer_types),
        rope_interleaved=True,  # Llama 4 rotates pairs (2i, 2i + 1), as complex numbers
        l2_qk_norm=bool(cfg.get("use_qk_norm", True)),
        nope_temperature=temperature,
        moe=moe,
    )
