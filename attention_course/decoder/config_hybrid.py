"""Decoders whose layers mostly keep a state instead of scores: config.json of Qwen3-Next, Qwen3.5, OLMo hybrid, Kimi Linear.

These models interleave two kinds of layer (`layer_types`): "linear_attention"
layers, a Gated DeltaNet (`core.delta_rule`: each head keeps a d_k x d_v state,
so a token costs the same however long the context; Kimi Delta Attention decays
each key channel at its own rate), and every few layers a "full_attention"
layer, softmax attention as elsewhere in this package (Kimi Linear: multi-head
latent attention without positions).
`DeltaRuleConfig` holds the delta-rule layers' sizes; `hybrid_fields` reads a
config.json of one of these families into the fields of a `DecoderConfig`,
with transformers' defaults for the keys it leaves out, and refuses what is
not implemented with an `UnsupportedConfigError` naming the key.

What each family adds to its softmax layers: Qwen3-Next and Qwen3.5 gate the
attention output (q_proj also makes a gate: out * sigmoid(gate) per head and
channel), rotate a quarter of each head (partial RoPE), and centre their norms
on zero (the gain is 1 + weight); OLMo hybrid norms each projection across all
its heads (QK-norm over h x d), and norms the attention's and the MLP's outputs
instead of their inputs. Kimi Linear's delta-rule layers make their decay and
their output gate through low-rank pairs of projections and gate their norm
with a sigmoid.
"""

from __future__ import annotations

from dataclasses import dataclass

from .config_rope import rope_setting
from .options import LatentAttentionConfig, MoEConfig, UnsupportedConfigError

HYBRID_LAYER_TYPES = ("linear_attention", "full_attention")
"""The layer_types of the hybrid families: a delta-rule layer, or softmax attention."""

PROJECTIONS = ("grouped", "split", "separate", "low_rank")
"""How a delta-rule layer's projections are stored: Qwen3-Next's in_proj_qkvz and in_proj_ba, grouped by key
head ("grouped"); Qwen3.5's in_proj_qkv, in_proj_z, in_proj_b, in_proj_a ("split"); OLMo hybrid's q, k, v, a, b
and g projections with a convolution each ("separate"); Kimi Linear's q, k, v and b projections with the
decay and the output gate each through a low-rank pair (f_a, f_b; g_a, g_b) ("low_rank")."""


@dataclass(frozen=True)
class DeltaRuleConfig:
    """The delta-rule ("linear_attention") layers of a hybrid decoder, and where they sit."""

    layer_types: tuple[str, ...]
    """One entry per layer: "linear_attention" (a delta-rule layer) or "full_attention" (softmax attention)."""
    n_k_heads: int
    """Query and key heads of a delta-rule layer (linear_num_key_heads)."""
    n_v_heads: int
    """Value heads, each with its own state (linear_num_value_heads): a multiple of n_k_heads; value head j
    reads query and key head j // (n_v_heads / n_k_heads)."""
    d_k: int
    """Size of each query and key (linear_key_head_dim): the state is d_k x d_v per value head."""
    d_v: int
    """Size of each value (linear_value_head_dim)."""
    conv_width: int
    """Taps of the short causal convolution on q, k and v (linear_conv_kernel_dim)."""
    projections: str
    """How the checkpoint stores the projections: one of `PROJECTIONS`."""
    norm_eps: float
    """The epsilon of the gated RMSNorm on each head's output."""
    beta_scale: float = 1.0
    """b = beta_scale * sigmoid(x W_b): 2 lets b reach 2, a reflection (OLMo's linear_allow_neg_eigval)."""
    chunk_size: int = 64
    """Tokens a prefill takes at once (`core.delta_rule.chunked_gated_delta_rule`), as transformers' fallback."""
    attention_post_norms: bool = False
    """OLMo hybrid: the softmax layers norm their attention's and their MLP's outputs, not their inputs."""
    per_channel_decay: bool = False
    """Kimi Delta Attention: a decay per key channel (n_v x d_k per token), not one per head."""
    gate_activation: str = "silu"
    """What the gated norm applies to its gate: "silu", or "sigmoid" (Kimi Linear)."""
    module: str = "linear_attn."
    """Where the layer's tensors sit under model.layers.i: "linear_attn." ("self_attn." for Kimi Linear)."""

    def is_delta_layer(self, layer: int) -> bool:
        """Whether `layer` is a delta-rule layer (else softmax attention)."""
        return self.layer_types[layer] == "linear_attention"

    @property
    def key_dim(self) -> int:
        """n_k_heads x d_k, the width of the queries (and of the keys) of a delta-rule layer."""
        return self.n_k_heads * self.d_k

    @property
    def value_dim(self) -> int:
        """n_v_heads x d_v, the width of its values and of its output gate."""
        return self.n_v_heads * self.d_v


_DEFAULTS = {
    "qwen3_next": dict(vocab_size=151936, hidden_size=2048, intermediate_size=5632, num_hidden_layers=48,
                       num_attention_heads=16, num_key_value_heads=2, head_dim=256, max_position_embeddings=32768,
                       linear_key_head_dim=128, linear_value_head_dim=128, linear_num_key_heads=16,
                       linear_num_value_heads=32),
    "qwen3_5_text": dict(vocab_size=248320, hidden_size=4096, intermediate_size=12288, num_hidden_layers=32,
                         num_attention_heads=16, num_key_value_heads=4, head_dim=256, max_position_embeddings=32768,
                         linear_key_head_dim=128, linear_value_head_dim=128, linear_num_key_heads=16,
                         linear_num_value_heads=32),
    "olmo_hybrid": dict(vocab_size=100352, hidden_size=3840, intermediate_size=11008, num_hidden_layers=32,
                        num_attention_heads=30, max_position_embeddings=65536, eos_token_id=100257),
    "kimi_linear": dict(vocab_size=163840, hidden_size=2304, intermediate_size=9216, num_hidden_layers=27,
                        num_attention_heads=32, max_position_embeddings=1048576, eos_token_id=163586,
                        rms_norm_eps=1e-5),
}
"""transformers' defaults (Qwen3NextConfig, Qwen3_5TextConfig, OlmoHybridConfig, KimiLinearConfig) for the keys
config.json may leave out."""

_KIMI_NAMES = {"model_max_length": "max_position_embeddings", "moe_renormalize": "norm_topk_prob",
               "num_expert_group": "n_group", "num_experts": "num_local_experts",
               "num_experts_per_token": "num_experts_per_tok", "num_shared_experts": "n_shared_experts"}
"""Kimi Linear's config.json names (KimiLinearConfig.attribute_map) and the names transformers reads them as."""


def _get(cfg: dict, model_type: str, key: str, default=None):
    """config.json's value, else the family's default (a null counts as absent)."""
    value = cfg.get(key)
    return _DEFAULTS[model_type].get(key, default) if value is None else value


def hybrid_fields(cfg: dict, model_type: str, source: str = "config.json") -> dict:
    """The fields of a `DecoderConfig` for a qwen3_next, qwen3_5_text, olmo_hybrid or kimi_linear config.json."""
    if model_type == "kimi_linear":
        return _kimi_fields(cfg, source)
    olmo = model_type == "olmo_hybrid"
    if cfg.get("quantization_config"):
        raise UnsupportedConfigError(f"{source}: quantization_config is not implemented: use a checkpoint in bfloat16 "
                                     "or float32")
    act = cfg.get("hidden_act", "silu")
    if act != "silu":
        raise UnsupportedConfigError(f"{source}: hidden_act {act!r} is not implemented; only 'silu'")
    n_layers = int(_get(cfg, model_type, "num_hidden_layers"))
    d_model = int(_get(cfg, model_type, "hidden_size"))
    n_heads = int(_get(cfg, model_type, "num_attention_heads"))
    n_kv_heads = int(_get(cfg, model_type, "num_key_value_heads", n_heads))
    if n_heads % n_kv_heads:
        raise UnsupportedConfigError(f"{source}: num_attention_heads = {n_heads} is not a multiple of "
                                     f"num_key_value_heads = {n_kv_heads}")
    head_dim = d_model // n_heads if olmo else int(_get(cfg, model_type, "head_dim") or d_model // n_heads)
    max_positions = int(_get(cfg, model_type, "max_position_embeddings"))
    cfg = {**cfg, "max_position_embeddings": max_positions}
    delta = _delta(cfg, model_type, n_layers, n_heads, d_model, source)
    rope, rotary_dim = _rope_and_rotary_dim(cfg, model_type, head_dim, source)
    ropes = tuple(rope if t == "full_attention" else None for t in delta.layer_types)
    eos = cfg["eos_token_id"] if "eos_token_id" in cfg else _DEFAULTS[model_type].get("eos_token_id")
    bias = bool(cfg.get("attention_bias", False))
    return dict(
        model_type=model_type,
        vocab_size=int(_get(cfg, model_type, "vocab_size")),
        d_model=d_model,
        n_layers=n_layers,
        n_heads=n_heads,
        n_kv_heads=n_kv_heads,
        head_dim=head_dim,
        d_ff=int(_get(cfg, model_type, "intermediate_size")),
        rms_norm_eps=float(_get(cfg, model_type, "rms_norm_eps", 1e-6)),
        rope_theta=rope.base if rope is not None else 10000.0,
        tie_word_embeddings=bool(cfg.get("tie_word_embeddings", False)),
        qkv_bias=bias,
        o_bias=bias,
        mlp_bias=False,
        windows=(None,) * n_layers,
        max_positions=max_positions,
        eos_token_ids=() if eos is None else tuple(int(e) for e in (eos if isinstance(eos, list) else [eos])),
        ropes=ropes,
        qk_norm=True,
        qk_norm_scope="projection" if olmo else "head",
        norm_offset=0.0 if olmo else 1.0,  # Qwen's norms multiply by 1 + weight
        attn_output_gate=not olmo,
        moe=_moe(cfg, n_layers, source) if model_type == "qwen3_next" else None,
        dtype=str(cfg.get("dtype") or cfg.get("torch_dtype") or "float32"),
        rotary_dim=rotary_dim,
        delta=delta,
    )


def _delta(cfg: dict, model_type: str, n_layers: int, n_heads: int, d_model: int, source: str) -> DeltaRuleConfig:
    olmo = model_type == "olmo_hybrid"
    layer_types = cfg.get("layer_types")
    if layer_types is None:
        if olmo:  # every fourth layer softmax attention, and at least the last one
            layer_types = ["full_attention" if i % 4 == 3 else "linear_attention" for i in range(n_layers)]
            if "full_attention" not in layer_types:
                layer_types[-1] = "full_attention"
        else:
            interval = int(cfg.get("full_attention_interval") or 4)
            layer_types = ["linear_attention" if (i + 1) % interval else "full_attention" for i in range(n_layers)]
    if len(layer_types) != n_layers:
        raise UnsupportedConfigError(f"{source}: layer_types has {len(layer_types)} entries for {n_layers} layers")
    unknown = sorted(set(layer_types) - set(HYBRID_LAYER_TYPES))
    if unknown:
        raise UnsupportedConfigError(f"{source}: layer_types {unknown} are not implemented; only "
                                     f"{list(HYBRID_LAYER_TYPES)}")
    if olmo:
        n_k = int(cfg.get("linear_num_key_heads") or n_heads)
        n_v = int(cfg.get("linear_num_value_heads") or n_heads)
        d_k = int(cfg.get("linear_key_head_dim") or int(0.75 * d_model / n_k))
        d_v = int(cfg.get("linear_value_head_dim") or 2 * d_k)
    else:
        n_k, n_v = (int(_get(cfg, model_type, k)) for k in ("linear_num_key_heads", "linear_num_value_heads"))
        d_k, d_v = (int(_get(cfg, model_type, k)) for k in ("linear_key_head_dim", "linear_value_head_dim"))
    if n_v % n_k:
        raise UnsupportedConfigError(f"{source}: linear_num_value_heads = {n_v} is not a multiple of "
                                     f"linear_num_key_heads = {n_k}")
    return DeltaRuleConfig(
        layer_types=tuple(layer_types), n_k_heads=n_k, n_v_heads=n_v, d_k=d_k, d_v=d_v,
        conv_width=int(cfg.get("linear_conv_kernel_dim") or 4),
        projections={"qwen3_next": "grouped", "qwen3_5_text": "split", "olmo_hybrid": "separate"}[model_type],
        norm_eps=1e-5 if olmo else float(cfg.get("rms_norm_eps") or 1e-6),  # OLMo's gated norm keeps its own
        beta_scale=2.0 if olmo and cfg.get("linear_allow_neg_eigval", True) else 1.0,
        attention_post_norms=olmo,
    )


_POSITION_ONLY_KEYS = ("mrope_section", "mrope_interleaved")
"""Qwen3.5's multimodal RoPE: for text alone every section sees the same position, the plain RoPE."""


def _rope_and_rotary_dim(cfg: dict, model_type: str, head_dim: int, source: str):
    """(the softmax layers' RoPE, or None without positions (OLMo with a null rope_theta), rotary_dim or None)."""
    params = cfg.get("rope_parameters")
    key = "rope_parameters"
    if not params:
        params, key = dict(cfg.get("rope_scaling") or {}), "rope_scaling"
        if "rope_theta" in cfg:
            params.setdefault("rope_theta", cfg["rope_theta"])
    params = {k: v for k, v in params.items() if k not in _POSITION_ONLY_KEYS}
    if model_type == "olmo_hybrid":
        if "rope_theta" in params and params["rope_theta"] is None:
            return None, None  # transformers builds no rotary module: its softmax layers see no positions
        factor = params.pop("partial_rotary_factor", None) or cfg.get("partial_rotary_factor")
        if factor not in (None, 1, 1.0):
            raise UnsupportedConfigError(f"{source}: partial_rotary_factor = {factor!r} is not implemented for "
                                         "olmo_hybrid; only 1.0")
        return rope_setting(params, 10000.0, cfg, key, source, nested=False), None
    factor = params.pop("partial_rotary_factor", None) or cfg.get("partial_rotary_factor") or 0.25
    rotary_dim = int(head_dim * float(factor))  # as transformers: int(head_dim * partial_rotary_factor)
    if rotary_dim < 2 or rotary_dim % 2:
        raise UnsupportedConfigError(f"{source}: partial_rotary_factor = {factor!r} of head_dim = {head_dim} gives "
                                     f"{rotary_dim} rotated coordinates; an even number of at least 2 is needed")
    rope = rope_setting(params, float(cfg.get("rope_theta") or 10000.0), cfg, key, source, nested=False)
    return rope, None if rotary_dim == head_dim else rotary_dim


def _moe(cfg: dict, n_layers: int, source: str) -> MoEConfig | None:
    """Qwen3-Next's experts: a softmax over all of them, the top k, a shared expert behind a sigmoid gate."""
    n_experts = int(cfg.get("num_experts", 512) or 0)
    if n_experts == 0:
        return None  # a dense MLP in every layer
    step = int(cfg.get("decoder_sparse_step") or 1)
    dense = set(cfg.get("mlp_only_layers") or [])
    layers = tuple(i for i in range(n_layers) if i not in dense and (i + 1) % step == 0)
    top_k = int(cfg.get("num_experts_per_tok", 10))
    if top_k > n_experts:
        raise UnsupportedConfigError(f"{source}: num_experts_per_tok = {top_k} is more than num_experts = {n_experts}")
    return MoEConfig(router="softmax", n_experts=n_experts, top_k=top_k,
                     d_expert=int(cfg.get("moe_intermediate_size", 512)),
                     n_shared_experts=1, norm_topk_prob=bool(cfg.get("norm_topk_prob", True)),
                     shared_width=int(cfg.get("shared_expert_intermediate_size", 512)), shared_gate=True,
                     layers=layers)


def _kimi_fields(cfg: dict, source: str) -> dict:
    """Kimi Linear: Kimi Delta Attention layers, multi-head latent attention without positions, DeepSeek's experts."""
    cfg = {**{new: cfg[old] for old, new in _KIMI_NAMES.items() if old in cfg}, **cfg}
    model_type = "kimi_linear"
    act = cfg.get("hidden_act", "silu")
    if act != "silu":
        raise UnsupportedConfigError(f"{source}: hidden_act {act!r} is not implemented; only 'silu'")
    if cfg.get("quantization_config"):
        raise UnsupportedConfigError(f"{source}: quantization_config is not implemented: use a checkpoint in bfloat16 "
                                     "or float32")
    n_layers = int(_get(cfg, model_type, "num_hidden_layers"))
    d_model = int(_get(cfg, model_type, "hidden_size"))
    n_heads = int(_get(cfg, model_type, "num_attention_heads"))
    n_kv = cfg.get("num_key_value_heads")
    if n_kv is not None and int(n_kv) != n_heads:  # the latent gives every head its key; eager attention would
        raise UnsupportedConfigError(f"{source}: num_key_value_heads = {n_kv} must equal num_attention_heads = "
                                     f"{n_heads} in latent attention")  # repeat them by heads // kv_heads
    q_rank = cfg.get("q_lora_rank")
    latent = LatentAttentionConfig(kv_lora_rank=int(cfg.get("kv_lora_rank") or 512),
                                   qk_nope_head_dim=int(cfg.get("qk_nope_head_dim") or 128),
                                   qk_rope_head_dim=int(cfg.get("qk_rope_head_dim") or 64),
                                   v_head_dim=int(cfg.get("v_head_dim") or 128),
                                   q_lora_rank=None if q_rank is None else int(q_rank))
    linear = cfg.get("linear_attn_config") or {}
    d_k = int(linear.get("head_dim") or cfg.get("linear_head_dim") or 128)
    n_v = int(linear.get("num_heads") or cfg.get("linear_num_heads") or 32)
    layer_types = cfg.get("layer_types")
    if layer_types is None and "full_attn_layers" in linear and "kda_layers" in linear:
        layer_types = [None] * n_layers  # 1-based in the checkpoint
        for i in linear["full_attn_layers"]:
            layer_types[i - 1] = "full_attention"
        for i in linear["kda_layers"]:
            layer_types[i - 1] = "linear_attention"
    elif layer_types is None:
        layer_types = ["full_attention" if i and i % 4 == 0 else "linear_attention" for i in range(n_layers)]
    if len(layer_types) != n_layers or set(layer_types) - set(HYBRID_LAYER_TYPES):
        raise UnsupportedConfigError(f"{source}: layer_types {layer_types!r} must give one of "
                                     f"{list(HYBRID_LAYER_TYPES)} for each of the {n_layers} layers")
    eps = float(_get(cfg, model_type, "rms_norm_eps"))
    delta = DeltaRuleConfig(layer_types=tuple(layer_types), n_k_heads=n_v, n_v_heads=n_v, d_k=d_k, d_v=d_k,
                            conv_width=int(linear.get("short_conv_kernel_size") or cfg.get("linear_conv_kernel_dim") or 4),
                            projections="low_rank", norm_eps=eps, per_channel_decay=True, gate_activation="sigmoid",
                            module="self_attn.")
    mlp_types = cfg.get("mlp_layer_types")
    if mlp_types is None:
        first_dense = int(cfg.get("first_k_dense_replace", 1) or 0)
        mlp_types = ["dense" if i < first_dense else "sparse" for i in range(n_layers)]
    if len(mlp_types) != n_layers or set(mlp_types) - {"dense", "sparse"}:
        raise UnsupportedConfigError(f"{source}: mlp_layer_types {mlp_types!r} must give 'dense' or 'sparse' for "
                                     f"each of the {n_layers} layers")
    moe = MoEConfig(router="sigmoid_grouped", n_experts=int(cfg.get("num_local_experts") or 256),
                    top_k=int(cfg.get("num_experts_per_tok") or 8), d_expert=int(cfg.get("moe_intermediate_size") or 1024),
                    n_shared_experts=int(cfg.get("n_shared_experts", 1) or 0),
                    routed_scaling_factor=float(cfg.get("routed_scaling_factor") or 2.446),
                    n_group=int(cfg.get("n_group") or 1), topk_group=int(cfg.get("topk_group") or 1),
                    norm_topk_prob=bool(cfg.get("norm_topk_prob", True)),
                    layers=tuple(i for i, t in enumerate(mlp_types) if t == "sparse"))
    if moe.n_experts % moe.n_group or moe.n_experts // moe.n_group < 2 or moe.topk_group > moe.n_group or \
            moe.top_k > moe.topk_group * (moe.n_experts // moe.n_group):
        raise UnsupportedConfigError(f"{source}: num_experts_per_tok = {moe.top_k} experts cannot be picked from "
                                     f"topk_group = {moe.topk_group} of n_group = {moe.n_group} groups of "
                                     f"{moe.n_experts} experts (groups of at least 2)")
    eos = cfg["eos_token_id"] if "eos_token_id" in cfg else _DEFAULTS[model_type]["eos_token_id"]
    bias = bool(cfg.get("attention_bias", False))
    return dict(
        model_type=model_type, vocab_size=int(_get(cfg, model_type, "vocab_size")), d_model=d_model,
        n_layers=n_layers, n_heads=n_heads, n_kv_heads=n_heads, head_dim=latent.qk_head_dim,
        d_ff=int(_get(cfg, model_type, "intermediate_size")), rms_norm_eps=eps, rope_theta=10000.0,
        tie_word_embeddings=bool(cfg.get("tie_word_embeddings", False)), qkv_bias=bias, o_bias=bias, mlp_bias=False,
        windows=(None,) * n_layers, max_positions=int(_get(cfg, model_type, "max_position_embeddings")),
        eos_token_ids=() if eos is None else tuple(int(e) for e in (eos if isinstance(eos, list) else [eos])),
        ropes=(None,) * n_layers,  # no positions anywhere: the delta rule's order is its own, the latent's NoPE
        latent=latent, moe=moe, dtype=str(cfg.get("dtype") or cfg.get("torch_dtype") or "float32"), delta=delta,
    )
