"""config.json, read per model family into the fields of a `DecoderConfig`, as transformers reads it (book/decoding.ipynb).

A key config.json leaves out takes the default of transformers' configuration
class for that model type. RoPE settings are read in both forms files use:
transformers 5's `rope_parameters` (one dict, or one per layer type as Gemma 3
writes it; keys beside the per-type dicts are not used, by transformers
either) and the older top-level `rope_theta` / `rope_scaling` (Gemma 3:
`rope_local_base_freq` for its sliding layers). Whatever this package does
not implement is refused with an `UnsupportedConfigError` naming the key.
"""

from __future__ import annotations

from ..core.rope_scaling import RopeScaling, yarn_mscale
from . import config_gemma3n, config_v4
from . import config_minimax_llama4 as minimax_llama4
from .config_dsa import DSA_TYPES, dsa_config, indexer_config
from .config_hybrid import hybrid_fields
from .config_rope import need, rope_setting
from .fp8 import fp8_blocks
from .options import LatentAttentionConfig, MoEConfig, UnsupportedConfigError

HYBRID_MODEL_TYPES = ("qwen3_next", "qwen3_5_text", "olmo_hybrid", "kimi_linear")
"""The `model_type`s whose layers mix the delta rule and softmax (or latent) attention, read by `config_hybrid`."""

MODEL_TYPES = ("llama", "mistral", "qwen2", "qwen3", "gemma2", "gemma3_text", "smollm3", "gpt_oss", "deepseek_v3",
               *DSA_TYPES, *minimax_llama4.MODEL_TYPES, config_gemma3n.MODEL_TYPE, *HYBRID_MODEL_TYPES,
               config_v4.MODEL_TYPE)
"""The `model_type`s of config.json that `load_decoder` runs."""

LATENT_TYPES = ("deepseek_v3", *DSA_TYPES)
"""The model types with DeepSeek-V3's latent attention and experts (`config_dsa`: the sparse ones' own keys)."""

LAYER_TYPES = ("full_attention", "sliding_attention")
"""The layer_types implemented."""

_DEFAULT_THETA = {"gemma3_text": 1_000_000.0, "smollm3": 2_000_000.0, "gpt_oss": 150_000.0, "minimax_m2": 5_000_000.0,
                  "llama4_text": 500_000.0, "gemma3n_text": 1_000_000.0}
"""transformers' default rope_theta per model type (10000 for the others)."""

_DEFAULT_HEAD_DIM = {"qwen3": 128, "gemma2": 256, "gemma3_text": 256, "gpt_oss": 64, "minimax_m2": 128,
                     "llama4_text": 128, "gemma3n_text": 256}
"""transformers' default head_dim where it is not hidden_size / num_attention_heads."""

_DEFAULT_MAX_POSITIONS = {"llama": 2048, "mistral": 131072, "qwen2": 32768, "qwen3": 32768, "gemma2": 8192,
                          "gemma3_text": 131072, "smollm3": 32768, "gpt_oss": 131072, "deepseek_v3": 4096,
                          "deepseek_v32": 163840, "glm_moe_dsa": 202752, "minimax_m2": 196608, "llama4_text": 131072,
                          "gemma3n_text": 32768}
"""transformers' default max_position_embeddings per model type."""

_GPT_OSS_ROPE = {"rope_type": "yarn", "factor": 32.0, "beta_fast": 32.0, "beta_slow": 1.0, "truncate": False,
                 "original_max_position_embeddings": 4096}
"""gpt-oss's RoPE when config.json gives none (GptOssConfig's default)."""


def config_fields(cfg: dict, source: str = "config.json") -> dict:
    """The fields of a `DecoderConfig` (`DecoderConfig.from_dict`) from a config.json dict.

    Raises UnsupportedConfigError, naming the key, for what is not implemented.
    """
    model_type = cfg.get("model_type")
    if model_type == "gemma3":
        raise UnsupportedConfigError(f"{source}: model_type 'gemma3' is Gemma 3 with its vision tower; this package "
                                     "runs the text model alone (model_type 'gemma3_text', the config under text_config)")
    if model_type == "qwen3_5":
        raise UnsupportedConfigError(f"{source}: model_type 'qwen3_5' is Qwen3.5 with its vision tower; this package "
                                     "runs the text model alone (model_type 'qwen3_5_text', the config under text_config)")
    minimax_llama4.refuse_multimodal(cfg, source)
    if model_type not in MODEL_TYPES:
        raise UnsupportedConfigError(
            f"{source}: model_type {model_type!r} is not one this package runs; it runs {', '.join(MODEL_TYPES)}")
    if model_type in HYBRID_MODEL_TYPES:  # delta-rule layers beside softmax attention
        return hybrid_fields(cfg, model_type, source)
    if model_type == config_v4.MODEL_TYPE:  # its own attention, residual streams and experts
        return config_v4.v4_fields(cfg, source)
    given = cfg
    if model_type in minimax_llama4.MODEL_TYPES:
        cfg = minimax_llama4.common_view(cfg, model_type)  # partial RoPE read there
    if model_type == config_gemma3n.MODEL_TYPE:
        cfg = config_gemma3n.common_view(cfg)  # its layer types and RoPE per type filled in
    _refuse(cfg, model_type, source)
    if model_type in DSA_TYPES:
        cfg = dsa_config(cfg, model_type, source)  # the family's defaults written in, read as DeepSeek-V3 below
    cfg = {**cfg, "max_position_embeddings": cfg.get("max_position_embeddings") or _DEFAULT_MAX_POSITIONS[model_type]}
    n_layers = int(need(cfg, "num_hidden_layers", source))
    n_heads = int(need(cfg, "num_attention_heads", source))
    n_kv_heads = int(cfg.get("num_key_value_heads") or n_heads)
    if n_heads % n_kv_heads:
        raise UnsupportedConfigError(
            f"{source}: num_attention_heads = {n_heads} is not a multiple of num_key_value_heads = {n_kv_heads}")
    d_model = int(need(cfg, "hidden_size", source))
    latent = _latent(cfg, source) if model_type in LATENT_TYPES else None
    if latent is not None:
        head_dim = latent.qk_head_dim
    else:
        head_dim = cfg.get("head_dim", _DEFAULT_HEAD_DIM.get(model_type))  # absent: the family's default
        head_dim = int(head_dim or d_model // n_heads)  # null: hidden_size / num_attention_heads
    layer_types = _layer_types(cfg, model_type, n_layers, source)
    ropes = _ropes(cfg, model_type, layer_types, source)
    rope_theta = next((r.base for r, t in zip(ropes, layer_types) if r is not None and t == "full_attention"),
                      next((r.base for r in ropes if r is not None), _DEFAULT_THETA.get(model_type, 10000.0)))
    qkv_bias, o_bias, mlp_bias = _biases(cfg, model_type)
    gemma = model_type in ("gemma2", "gemma3_text")
    eos = cfg.get("eos_token_id")
    fields = dict(
        model_type=model_type,
        vocab_size=int(need(cfg, "vocab_size", source)),
        d_model=d_model,
        n_layers=n_layers,
        n_heads=n_heads,
        n_kv_heads=n_kv_heads,
        head_dim=head_dim,
        d_ff=int(need(cfg, "intermediate_size", source)),
        rms_norm_eps=float(cfg.get("rms_norm_eps") or (1e-5 if model_type == "gpt_oss" else 1e-6)),
        rope_theta=float(rope_theta),
        tie_word_embeddings=bool(cfg.get("tie_word_embeddings", gemma or model_type == "smollm3")),
        qkv_bias=qkv_bias,
        o_bias=o_bias,
        mlp_bias=mlp_bias,
        windows=_windows(cfg, model_type, layer_types, source),
        max_positions=int(cfg["max_position_embeddings"]),
        eos_token_ids=() if eos is None else tuple(int(e) for e in (eos if isinstance(eos, list) else [eos])),
        ropes=ropes,
        rope_interleaved=latent is not None and bool(cfg.get("rope_interleave", True)),
        qk_norm=model_type in ("qwen3", "gemma3_text"),
        score_scale=_score_scale(cfg, model_type, latent, ropes),
        attn_softcap=cfg.get("attn_logit_softcapping", 50.0) if model_type == "gemma2" else None,
        final_softcap=cfg.get("final_logit_softcapping", 30.0 if model_type == "gemma2" else None) if gemma else None,
        sinks=model_type == "gpt_oss",
        norm_offset=1.0 if gemma else 0.0,
        sandwich_norms=gemma,
        embed_scale=float(d_model ** 0.5) if gemma else None,
        activation=_activation(cfg, model_type, source),
        latent=latent,
        moe=_moe(cfg, model_type, n_layers, source),
        dtype=str(cfg.get("dtype") or cfg.get("torch_dtype") or "float32"),
        weight_blocks=fp8_blocks(cfg["quantization_config"], source) if cfg.get("quantization_config") else None,
        indexer=indexer_config(cfg, model_type, n_layers, source) if model_type in DSA_TYPES else None,
        extra_layers=int(cfg.get("num_nextn_predict_layers", 1) or 0) if model_type in LATENT_TYPES else 0,
    )
    if model_type in minimax_llama4.MODEL_TYPES:
        given = {**given, "max_position_embeddings": cfg["max_position_embeddings"]}
        fields.update(minimax_llama4.family_fields(given, model_type, fields, source))
    if model_type == config_gemma3n.MODEL_TYPE:
        fields.update(config_gemma3n.gemma3n_fields(given, fields, source))
    return fields


def _refuse(cfg: dict, model_type: str, source: str) -> None:
    """Options of these families that this forward pass does not implement."""
    if cfg.get("quantization_config"):
        fp8_blocks(cfg["quantization_config"], source)  # every stored format but FP8 with block scales is refused
    if cfg.get("use_bidirectional_attention"):
        raise UnsupportedConfigError(f"{source}: use_bidirectional_attention = true is not implemented (a causal "
                                     "decoder only)")
    factor = cfg.get("partial_rotary_factor")
    if factor not in (None, 1, 1.0):
        raise UnsupportedConfigError(f"{source}: partial_rotary_factor = {factor!r} is not implemented; only 1.0")
    if model_type == "deepseek_v3":
        for key, implemented in (("scoring_func", "sigmoid"), ("topk_method", "noaux_tc")):
            if cfg.get(key, implemented) != implemented:
                raise UnsupportedConfigError(f"{source}: {key} = {cfg[key]!r} is not implemented; only {implemented!r}")
    if model_type in LATENT_TYPES:
        if int(cfg.get("num_key_value_heads") or cfg.get("num_attention_heads") or 0) != int(cfg.get("num_attention_heads") or 0):
            raise UnsupportedConfigError(f"{source}: num_key_value_heads must equal num_attention_heads in latent attention")


def _activation(cfg: dict, model_type: str, source: str) -> str:
    if model_type in ("gemma2", "gemma3_text"):
        act = cfg.get("hidden_activation") or "gelu_pytorch_tanh"
        if act != "gelu_pytorch_tanh":
            raise UnsupportedConfigError(f"{source}: hidden_activation {act!r} is not implemented; only "
                                         "'gelu_pytorch_tanh' (GELU, tanh approximation)")
        return "gelu_tanh"
    act = cfg.get("hidden_act", "silu")
    if model_type != "gpt_oss" and act != "silu":  # gpt-oss's experts have their own activation
        raise UnsupportedConfigError(f"{source}: hidden_act {act!r} is not implemented; only 'silu' (SwiGLU)")
    return "silu"


def _biases(cfg: dict, model_type: str) -> tuple[bool, bool, bool]:
    """(q/k/v biases, output projection bias, MLP biases), as each family's modeling code builds its layers."""
    if model_type == "qwen2":
        return True, False, False
    if model_type == "mistral":
        return False, False, False
    attention_bias = bool(cfg.get("attention_bias", model_type == "gpt_oss"))
    mlp_bias = bool(cfg.get("mlp_bias", False)) if model_type in ("llama", "smollm3") else False
    return attention_bias, attention_bias, mlp_bias


def _layer_types(cfg: dict, model_type: str, n_layers: int, source: str) -> tuple[str, ...]:
    """Each layer's type, "full_attention" or "sliding_attention", from layer_types or the family's default."""
    given = cfg.get("layer_types")
    if model_type in ("llama", "mistral", *LATENT_TYPES, *minimax_llama4.MODEL_TYPES):
        return ("full_attention",) * n_layers  # these read no layer_types (Mistral: one window for all layers;
        # Llama 4's chunked layers: config_minimax_llama4)
    if given is not None:
        if len(given) != n_layers:
            raise UnsupportedConfigError(f"{source}: layer_types has {len(given)} entries for {n_layers} layers")
        unknown = sorted(set(given) - set(LAYER_TYPES))
        if unknown:
            raise UnsupportedConfigError(f"{source}: layer_types {unknown} are not implemented; only {list(LAYER_TYPES)}")
        return tuple(given)
    sliding = "sliding_attention"
    if model_type in ("qwen2", "qwen3"):
        window = cfg.get("sliding_window") if cfg.get("use_sliding_window", False) else None
        first = int(cfg.get("max_window_layers", 28))
        return tuple(sliding if window is not None and i >= first else "full_attention" for i in range(n_layers))
    if model_type == "smollm3":
        uses_rope = _no_rope_layers(cfg, n_layers, source)
        slides = cfg.get("use_sliding_window", False) and cfg.get("sliding_window") is not None
        return tuple(sliding if slides and not uses_rope[i] else "full_attention" for i in range(n_layers))
    pattern = int(cfg.get("sliding_window_pattern") or cfg.get("_sliding_window_pattern") or 6) \
        if model_type == "gemma3_text" else 2  # Gemma 2 and gpt-oss alternate, sliding first
    return tuple(sliding if (i + 1) % pattern else "full_attention" for i in range(n_layers))


def _windows(cfg: dict, model_type: str, layer_types: tuple[str, ...], source: str) -> tuple[int | None, ...]:
    """The sliding window of each layer (None: full causal attention)."""
    window = cfg.get("sliding_window", 4096 if model_type in ("mistral", "gemma2", "gemma3_text") else None)
    if model_type == "gpt_oss" and "sliding_window" not in cfg:
        window = 128
    if model_type in ("qwen2", "qwen3") and not cfg.get("use_sliding_window", False):
        window = None  # Qwen writes a sliding_window size even when it does not use one
    if model_type == "mistral":
        return (None if window is None else int(window),) * len(layer_types)
    if "sliding_attention" in layer_types and window is None:
        why = " (use_sliding_window is false, which makes it null)" if model_type in ("qwen2", "qwen3") else ""
        raise UnsupportedConfigError(f"{source}: layer_types has sliding_attention layers but sliding_window is "
                                     f"null{why}: a sliding layer needs a window size")
    return tuple(int(window) if t == "sliding_attention" else None for t in layer_types)


def _no_rope_layers(cfg: dict, n_layers: int, source: str) -> list[int]:
    """SmolLM3: 1 for each layer that uses RoPE, 0 for a layer without positions (NoPE)."""
    given = cfg.get("no_rope_layers")
    if given is None:
        interval = int(cfg.get("no_rope_layer_interval") or 4)
        return [int((i + 1) % interval != 0) for i in range(n_layers)]
    if len(given) != n_layers:
        raise UnsupportedConfigError(f"{source}: no_rope_layers has {len(given)} entries for {n_layers} layers")
    return [int(bool(u)) for u in given]


def _rope_params(cfg: dict, model_type: str) -> tuple[dict, str]:
    """(the RoPE settings as one dict, or one per layer type, and the key config.json gives them under)."""
    theta = cfg.get("rope_theta", _DEFAULT_THETA.get(model_type, 10000.0))
    params = cfg.get("rope_parameters")
    if model_type == "gemma3_text" and not params:
        scaling = dict(cfg.get("rope_scaling") or {})
        return {"full_attention": {"rope_type": "default", "rope_theta": theta, **scaling},
                "sliding_attention": {"rope_type": "default",
                                      "rope_theta": cfg.get("rope_local_base_freq", 10000.0)}}, "rope_scaling"
    if not params:
        params = dict(cfg.get("rope_scaling") or (_GPT_OSS_ROPE if model_type == "gpt_oss" else {}))
        return params, "rope_scaling" if cfg.get("rope_scaling") else "rope_parameters"
    return params, "rope_parameters"


def _ropes(cfg: dict, model_type: str, layer_types: tuple[str, ...], source: str) -> tuple[RopeScaling | None, ...]:
    """Each layer's RoPE (None for NoPE layers), read from rope_parameters or rope_theta / rope_scaling."""
    theta = cfg.get("rope_theta", _DEFAULT_THETA.get(model_type, 10000.0))
    params, key = _rope_params(cfg, model_type)
    if not isinstance(params, dict):
        raise UnsupportedConfigError(f"{source}: {key} must be a dict; got {type(params).__name__}")
    # One dict per layer type as soon as one layer type is a key, as transformers reads it: Gemma 3's config
    # keeps the keys of a single dict it was given beside the per-type ones it fills in, and never uses them
    nested = [k for k in params if k in LAYER_TYPES]
    if model_type == "gemma3_text" and not nested:  # transformers would put its defaults in and ignore these keys
        raise UnsupportedConfigError(f"{source}: {key} for gemma3_text needs one dict per layer type "
                                     f"({', '.join(LAYER_TYPES)}); got the single dict {params!r}")
    if nested:
        local_theta = cfg.get("rope_local_base_freq", 10000.0) if model_type == "gemma3_text" else theta
        per_type = {t: rope_setting(dict(params[t] or {}), local_theta if t == "sliding_attention" else theta, cfg,
                             f"{key}.{t}", source, nested=True) for t in nested}
        missing = sorted(set(layer_types) - set(per_type))
        if missing:
            raise UnsupportedConfigError(f"{source}: {key} has no entry for the layer types {missing}")
        ropes = [per_type[t] for t in layer_types]
    else:
        ropes = [rope_setting(dict(params), theta, cfg, key, source, nested=False)] * len(layer_types)
    if model_type == "smollm3":
        uses_rope = _no_rope_layers(cfg, len(layer_types), source)
        ropes = [r if uses_rope[i] else None for i, r in enumerate(ropes)]
    return tuple(ropes)


def _score_scale(cfg: dict, model_type: str, latent: LatentAttentionConfig | None,
                 ropes: tuple[RopeScaling | None, ...]) -> float | None:
    """What q . k is multiplied by, where it is not 1 / sqrt(head_dim)."""
    if model_type in ("gemma2", "gemma3_text"):
        return float(cfg.get("query_pre_attn_scalar") or 256) ** -0.5
    if latent is None:
        return None
    scale = latent.qk_head_dim ** -0.5
    params = _rope_params(cfg, model_type)[0]
    mscale_all_dim = params.get("mscale_all_dim")
    if ropes[0].rope_type != "default" and mscale_all_dim:  # under every scaling rule, not YaRN's alone
        scale = scale * yarn_mscale(ropes[0].factor, float(mscale_all_dim)) ** 2  # DeepSeek's softmax scale
    return scale


def _latent(cfg: dict, source: str) -> LatentAttentionConfig:
    q_rank = cfg.get("q_lora_rank", 1536)
    return LatentAttentionConfig(
        kv_lora_rank=int(cfg.get("kv_lora_rank", 512)),
        qk_nope_head_dim=int(cfg.get("qk_nope_head_dim", 128)),
        qk_rope_head_dim=int(cfg.get("qk_rope_head_dim", 64)),
        v_head_dim=int(cfg.get("v_head_dim") or 128),
        q_lora_rank=None if q_rank is None else int(q_rank),
    )


def _moe(cfg: dict, model_type: str, n_layers: int, source: str) -> MoEConfig | None:
    if model_type == "gpt_oss":
        return MoEConfig(router="softmax_top_k", n_experts=int(cfg.get("num_local_experts", 128)),
                         top_k=int(cfg.get("num_experts_per_tok", 4)), d_expert=int(need(cfg, "intermediate_size", source)),
                         swiglu_alpha=float(cfg.get("swiglu_alpha", 1.702)), swiglu_limit=float(cfg.get("swiglu_limit", 7.0)))
    if model_type not in LATENT_TYPES:
        return None
    def field(key, default, missing=None):  # DeepseekV3Config's default if the key is absent; `missing` if null
        value = cfg.get(key, default)
        return missing if value is None else value

    moe = MoEConfig(router="sigmoid_grouped", n_experts=int(field("n_routed_experts", 256)),
                    top_k=int(field("num_experts_per_tok", 8)), d_expert=int(field("moe_intermediate_size", 2048)),
                    first_layer=int(field("first_k_dense_replace", 3, 0)), n_shared_experts=int(field("n_shared_experts", 1, 0)),
                    routed_scaling_factor=float(field("routed_scaling_factor", 2.5)),
                    n_group=int(field("n_group", 8, 1)), topk_group=int(field("topk_group", 4, 1)),
                    norm_topk_prob=bool(field("norm_topk_prob", True)))
    if moe.n_experts % moe.n_group or moe.n_experts // moe.n_group < 2:
        raise UnsupportedConfigError(f"{source}: n_routed_experts = {moe.n_experts} must split into n_group = "
                                     f"{moe.n_group} groups of at least 2 experts")
    if moe.topk_group > moe.n_group or moe.top_k > moe.topk_group * (moe.n_experts // moe.n_group):
        raise UnsupportedConfigError(f"{source}: num_experts_per_tok = {moe.top_k} experts cannot be picked from "
                                     f"topk_group = {moe.topk_group} of {moe.n_group} groups")
    return moe
