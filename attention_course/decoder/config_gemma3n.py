"""config.json of Gemma 3n's text model (Gemma3nTextConfig, model_type gemma3n_text), read into a `DecoderConfig`.

Gemma 3n keeps Gemma 3's attention (QK-norm per head, sliding and full
layers with a RoPE base each, norms around attention and the MLP) and adds:
a norm on the values too and a score scale of 1; the keys and values of its
last `num_kv_shared_layers` layers taken from the last earlier layer of the
same type (KV sharing); AltUp (`altup_num_inputs` copies of the residual
stream, one of them run through each layer, the others predicted and
corrected); LAuReL (a low-rank residual beside attention); an embedding per
layer of each token (`hidden_size_per_layer_input`); and, on the layers
`activation_sparsity_pattern` names, only the gate activations above a
Gaussian quantile kept. `Gemma3nOptions` holds what the other families do
not have. Defaults are Gemma3nTextConfig's.
"""

from __future__ import annotations

from dataclasses import dataclass

from .options import UnsupportedConfigError

MODEL_TYPE = "gemma3n_text"


@dataclass(frozen=True)
class Gemma3nOptions:
    """What Gemma 3n's text model adds to a `DecoderConfig` (see the module docstring)."""

    d_ffs: tuple[int, ...]
    """Each layer's MLP width (intermediate_size, one for all or one per layer)."""
    sparsity: tuple[float, ...]
    """Each layer's activation sparsity s: the gate keeps what exceeds mean + std * Phi^-1(s); 0: dense."""
    kv_sources: tuple[int, ...]
    """For each layer, the layer whose keys and values it attends over: itself, or, for the last
    num_kv_shared_layers layers, the last earlier layer of the same type."""
    altup_num_inputs: int
    """A, the copies of the residual stream AltUp keeps."""
    altup_active_idx: int
    """The copy each layer runs through attention and the MLP."""
    altup_correct_scale: bool
    """The corrected active copy is scaled by a learned vector before the per-layer input gate."""
    laurel_rank: int
    """The width of LAuReL's low-rank pair."""
    d_per_layer: int
    """P, the size of each token's embedding per layer (hidden_size_per_layer_input)."""
    vocab_per_layer: int
    """Tokens with a per-layer embedding (vocab_size_per_layer_input); the others use token 0's."""


def kv_sources(layer_types: list[str], n_shared: int, source: str) -> tuple[int, ...]:
    """Each layer's source of keys and values: itself, or the last unshared layer of its type (transformers'
    kv_sharing_modes)."""
    n_layers = len(layer_types)
    if not 0 <= n_shared < n_layers:
        raise UnsupportedConfigError(f"{source}: num_kv_shared_layers = {n_shared} must be in 0..num_hidden_layers - 1 "
                                     f"= 0..{n_layers - 1}")
    first_shared = n_layers - n_shared
    out = list(range(n_layers))
    for i in range(first_shared, n_layers):
        earlier = [j for j in range(first_shared) if layer_types[j] == layer_types[i]]
        if not earlier:
            raise UnsupportedConfigError(f"{source}: layer {i} ({layer_types[i]}) shares keys and values, but no earlier "
                                         "layer of that type computes them")
        out[i] = earlier[-1]
    return tuple(out)


def common_view(cfg: dict) -> dict:
    """config.json as the common reader should see it: layer_types, sliding_window and one RoPE dict per layer
    type filled in as Gemma3nTextConfig fills them (rope_theta and rope_scaling for the full layers,
    rope_local_base_freq for the sliding ones)."""
    cfg = dict(cfg)
    n_layers = cfg.get("num_hidden_layers")
    if not cfg.get("layer_types") and isinstance(n_layers, int):
        cfg["layer_types"] = ["full_attention" if (i + 1) % 5 == 0 else "sliding_attention" for i in range(n_layers)]
    cfg.setdefault("sliding_window", 512)
    if isinstance(cfg.get("intermediate_size"), (list, tuple)) and cfg["intermediate_size"]:
        cfg["intermediate_size"] = max(cfg["intermediate_size"])  # each layer's width: Gemma3nOptions.d_ffs
    params = dict(cfg.get("rope_parameters") or {})
    if not any(t in params for t in ("full_attention", "sliding_attention")):
        params = {}
    full = dict(params.get("full_attention") or {"rope_type": "default"})
    full.update(cfg.get("rope_scaling") or {})
    full.setdefault("rope_theta", cfg.get("rope_theta", 1_000_000.0))
    local = dict(params.get("sliding_attention") or {"rope_type": "default"})
    local.setdefault("rope_theta", cfg.get("rope_local_base_freq", 10_000.0))
    cfg["rope_parameters"] = {"full_attention": full, "sliding_attention": local}
    cfg.pop("rope_scaling", None)
    return cfg


def gemma3n_fields(cfg: dict, fields: dict, source: str) -> dict:
    """The `DecoderConfig` fields Gemma 3n sets beyond (or instead of) the common ones read for it."""
    n_layers = fields["n_layers"]
    layer_types = list(cfg.get("layer_types") or ["full_attention" if (i + 1) % 5 == 0 else "sliding_attention"
                                                  for i in range(n_layers)])
    width = cfg.get("intermediate_size", 16384)
    d_ffs = [int(w) for w in width] if isinstance(width, (list, tuple)) else [int(width)] * n_layers
    if len(d_ffs) != n_layers:
        raise UnsupportedConfigError(f"{source}: intermediate_size has {len(d_ffs)} entries for {n_layers} layers")
    sparsity = cfg.get("activation_sparsity_pattern")
    if sparsity is None:
        sparse = 10 if n_layers > 10 else 0
        sparsity = [0.95] * sparse + [0.0] * (n_layers - sparse)
    elif isinstance(sparsity, (int, float)):
        sparsity = [float(sparsity)] * n_layers
    if len(sparsity) != n_layers or not all(0.0 <= s < 1.0 for s in sparsity):
        raise UnsupportedConfigError(f"{source}: activation_sparsity_pattern needs one value in [0, 1) per layer "
                                     f"({n_layers}); got {sparsity!r}")
    n_inputs, active = int(cfg.get("altup_num_inputs", 4)), int(cfg.get("altup_active_idx", 0))
    if n_inputs < 1 or not 0 <= active < n_inputs:
        raise UnsupportedConfigError(f"{source}: altup_active_idx = {active} must be in 0..altup_num_inputs - 1 = "
                                     f"0..{n_inputs - 1}")
    options = Gemma3nOptions(
        d_ffs=tuple(d_ffs), sparsity=tuple(float(s) for s in sparsity),
        kv_sources=kv_sources(layer_types, int(cfg.get("num_kv_shared_layers", 15)), source),
        altup_num_inputs=n_inputs, altup_active_idx=active, altup_correct_scale=bool(cfg.get("altup_correct_scale", True)),
        laurel_rank=int(cfg.get("laurel_rank", 64)), d_per_layer=int(cfg.get("hidden_size_per_layer_input", 256)),
        vocab_per_layer=int(cfg.get("vocab_size_per_layer_input", 262144)))
    act = cfg.get("hidden_activation") or "gelu_pytorch_tanh"
    if act != "gelu_pytorch_tanh":
        raise UnsupportedConfigError(f"{source}: hidden_activation {act!r} is not implemented; only 'gelu_pytorch_tanh'")
    return dict(d_ff=max(d_ffs), score_scale=1.0, qk_norm=True, sandwich_norms=True, activation="gelu_tanh",
                embed_scale=float(fields["d_model"] ** 0.5), norm_offset=0.0,  # its RMSNorm multiplies by weight itself
                tie_word_embeddings=bool(cfg.get("tie_word_embeddings", True)),
                final_softcap=cfg.get("final_logit_softcapping", 30.0), gemma3n=options)
