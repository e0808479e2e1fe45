"""What a Llama-architecture decoder checkpoint's config.json says, checked (book/decoding.ipynb).

Llama, Mistral and Qwen2 share one architecture: token embeddings, L layers of

    x = x + Attention(RMSNorm(x))     queries and keys rotated by RoPE, h_kv <= h key/value heads
    x = x + SwiGLU(RMSNorm(x))        down(silu(gate(x)) * up(x))

and a final RMSNorm before the output projection (`lm_head`, or the embedding
matrix itself when the two are tied). They differ in a few options, all read
here: biases on the query/key/value projections (Qwen2), a sliding window
(Mistral, some Qwen2 layers), the RoPE base. An option this package does not
implement is refused with an error naming the key, never run with wrong numbers.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

MODEL_TYPES = ("llama", "mistral", "qwen2")
"""The `model_type`s of config.json that `load_decoder` runs."""

ROPE_TYPES = ("default",)
"""The RoPE variants implemented: the plain rotation with one base (no context-extension scaling)."""


class UnsupportedConfigError(ValueError):
    """config.json asks for something this forward pass does not implement."""


@dataclass(frozen=True)
class DecoderConfig:
    """The sizes and options of a Llama-architecture decoder."""

    model_type: str
    """"llama", "mistral" or "qwen2"."""
    vocab_size: int
    """Number of tokens in the vocabulary."""
    d_model: int
    """Width of the residual stream (config: hidden_size)."""
    n_layers: int
    """L, the decoder layers (num_hidden_layers)."""
    n_heads: int
    """h_q, query heads per layer (num_attention_heads)."""
    n_kv_heads: int
    """h_kv, key/value heads per layer (num_key_value_heads): h_q for multi-head, 1 for multi-query."""
    head_dim: int
    """d, the size of one head (head_dim, or hidden_size / num_attention_heads)."""
    d_ff: int
    """Width of the SwiGLU feed-forward layer (intermediate_size)."""
    rms_norm_eps: float
    """The epsilon inside every RMSNorm."""
    rope_theta: float
    """The RoPE base (rope_theta, at the top level or under rope_parameters)."""
    tie_word_embeddings: bool
    """The output projection is the embedding matrix itself (no lm_head weight)."""
    qkv_bias: bool
    """The query, key and value projections have biases (Qwen2; Llama's attention_bias)."""
    o_bias: bool
    """The output projection has a bias (Llama's attention_bias)."""
    mlp_bias: bool
    """The feed-forward projections have biases (Llama's mlp_bias)."""
    windows: tuple[int | None, ...]
    """One entry per layer: the sliding window (a query sees itself and window - 1 earlier tokens), or None."""
    max_positions: int
    """max_position_embeddings: the context length the model was trained for."""
    eos_token_ids: tuple[int, ...] = ()
    """Tokens that end a generation (eos_token_id, an int or a list)."""

    @property
    def kv_groups(self) -> int:
        """g = h_q / h_kv, the query heads that share one key/value head."""
        return self.n_heads // self.n_kv_heads

    @classmethod
    def from_dict(cls, cfg: dict, source: str = "config.json") -> "DecoderConfig":
        """Read a Hugging Face config (as a dict); refuse what this forward pass does not implement."""

        def need(key):
            if key not in cfg or cfg[key] is None:
                raise UnsupportedConfigError(f"{source}: the key {key!r} is missing")
            return cfg[key]

        model_type = cfg.get("model_type")
        if model_type not in MODEL_TYPES:
            raise UnsupportedConfigError(
                f"{source}: model_type {model_type!r} is not one this package runs; it runs {', '.join(MODEL_TYPES)}"
            )
        if cfg.get("hidden_act", "silu") != "silu":
            raise UnsupportedConfigError(f"{source}: hidden_act {cfg['hidden_act']!r} is not implemented; only 'silu' (SwiGLU)")
        n_heads = int(need("num_attention_heads"))
        n_kv_heads = int(cfg.get("num_key_value_heads") or n_heads)
        if n_heads % n_kv_heads:
            raise UnsupportedConfigError(
                f"{source}: num_attention_heads = {n_heads} is not a multiple of num_key_value_heads = {n_kv_heads}"
            )
        d_model = int(need("hidden_size"))
        head_dim = int(cfg.get("head_dim") or d_model // n_heads)
        n_layers = int(need("num_hidden_layers"))
        attention_bias = bool(cfg.get("attention_bias", False))
        eos = cfg.get("eos_token_id")
        eos_ids = () if eos is None else tuple(int(e) for e in (eos if isinstance(eos, list) else [eos]))
        return cls(
            model_type=model_type,
            vocab_size=int(need("vocab_size")),
            d_model=d_model,
            n_layers=n_layers,
            n_heads=n_heads,
            n_kv_heads=n_kv_heads,
            head_dim=head_dim,
            d_ff=int(need("intermediate_size")),
            rms_norm_eps=float(cfg.get("rms_norm_eps", 1e-6)),
            rope_theta=_rope_theta(cfg, source),
            tie_word_embeddings=bool(cfg.get("tie_word_embeddings", False)),
            qkv_bias=True if model_type == "qwen2" else attention_bias,
            o_bias=False if model_type == "qwen2" else attention_bias,
            mlp_bias=bool(cfg.get("mlp_bias", False)),
            windows=_windows(cfg, model_type, n_layers, source),
            max_positions=int(cfg.get("max_position_embeddings") or 0),
            eos_token_ids=eos_ids,
        )

    @classmethod
    def from_json(cls, path: str | os.PathLike) -> "DecoderConfig":
        """Read config.json from a checkpoint folder."""
        path = Path(path)
        try:
            cfg = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as err:
            raise ValueError(f"{path} is not valid JSON: {err}") from None
        return cls.from_dict(cfg, str(path))


def _rope_theta(cfg: dict, source: str) -> float:
    """The RoPE base from rope_parameters (transformers 5) or rope_theta / rope_scaling (older files)."""
    params = cfg.get("rope_parameters")
    if isinstance(params, dict) and "full_attention" in params and "rope_theta" not in params:
        raise UnsupportedConfigError(f"{source}: rope_parameters per layer type are not implemented")
    if params is None:
        params = dict(cfg.get("rope_scaling") or {})
        key = "rope_scaling"
        if "rope_theta" in cfg:
            params.setdefault("rope_theta", cfg["rope_theta"])
    else:
        key = "rope_parameters"
    rope_type = params.get("rope_type", params.get("type", "default"))
    if rope_type not in ROPE_TYPES:
        raise UnsupportedConfigError(
            f"{source}: {key}.rope_type = {rope_type!r} (RoPE scaling for longer contexts) is not implemented; "
            f"only {', '.join(map(repr, ROPE_TYPES))}"
        )
    factor = params.get("partial_rotary_factor", cfg.get("partial_rotary_factor", 1.0))
    if factor not in (None, 1, 1.0):
        raise UnsupportedConfigError(f"{source}: partial_rotary_factor = {factor!r} is not implemented; only 1.0")
    theta = params.get("rope_theta", 10000.0)
    if not isinstance(theta, (int, float)) or isinstance(theta, bool) or theta <= 0:
        raise UnsupportedConfigError(f"{source}: {key}.rope_theta must be a positive number; got {theta!r}")
    return float(theta)


def _windows(cfg: dict, model_type: str, n_layers: int, source: str) -> tuple[int | None, ...]:
    """The sliding window of each layer (None: full causal attention)."""
    window = cfg.get("sliding_window")
    layer_types = cfg.get("layer_types")
    if model_type == "qwen2" and not cfg.get("use_sliding_window", False):
        window = None  # Qwen2 writes a sliding_window size even when it does not use one
    if layer_types is not None:
        if len(layer_types) != n_layers:
            raise UnsupportedConfigError(f"{source}: layer_types has {len(layer_types)} entries for {n_layers} layers")
        unknown = sorted(set(layer_types) - {"full_attention", "sliding_attention"})
        if unknown:
            raise UnsupportedConfigError(f"{source}: layer_types {unknown} are not implemented")
        if "sliding_attention" in layer_types and window is None:
            raise UnsupportedConfigError(f"{source}: layer_types has sliding_attention layers but sliding_window is null")
        return tuple(int(window) if t == "sliding_attention" else None for t in layer_types)
    if window is None:
        return (None,) * n_layers
    if model_type == "qwen2":  # layers from max_window_layers on use the window
        first = int(cfg.get("max_window_layers", n_layers))
        return tuple(int(window) if i >= first else None for i in range(n_layers))
    return (int(window),) * n_layers
