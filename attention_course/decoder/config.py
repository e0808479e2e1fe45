"""What a decoder checkpoint's config.json says, as one checked record (book/decoding.ipynb).

Every decoder this package runs has the same skeleton: token embeddings, L
layers of

    x = x + Attention(Norm(x))        h_q query heads, h_kv <= h_q key/value heads, RoPE
    x = x + MLP(Norm(x))              a gated feed-forward layer, or a mixture of experts

and a final norm before the output projection. The models differ in options,
each a field below: where RoPE sits and how it is scaled (per layer, or not at
all), a norm on every query and key (Qwen3, Gemma 3; over the whole projection in
MiniMax-M2 and OLMo hybrid; Llama 4's without a gain), the score's scale and a
tanh cap on it (Gemma 2), a sink logit per head (gpt-oss), sliding windows or
chunks per layer (Llama 4, with a temperature on its NoPE layers), Gemma's
extra norms and scaled embeddings, multi-head latent attention (DeepSeek-V3)
with, in DeepSeek-V3.2 and GLM-5, a lightning indexer that picks the keys
each query reads, mixtures of experts (gpt-oss, DeepSeek-V3, MiniMax-M2,
Llama 4, Qwen3-Next), gated attention and layers that keep a state instead of
scores (the delta rule: Qwen3-Next, Qwen3.5, OLMo hybrid, Kimi Linear;
`config_hybrid`); Gemma 3n's text model adds its own
(`config_gemma3n.Gemma3nOptions`), and DeepSeek-V4 its compressed keys,
hyper-connections and hashed experts (`config_v4.V4Options`). `config_json`
reads them from config.json, per model family, and refuses what this package
does not implement with an `UnsupportedConfigError` naming the key.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from ..core.rope_scaling import RopeScaling
from .config_gemma3n import Gemma3nOptions
from .config_json import config_fields
from .config_v4 import V4Options
from .config_hybrid import DeltaRuleConfig
from .options import IndexerConfig, LatentAttentionConfig, MoEConfig, UnsupportedConfigError


@dataclass(frozen=True)
class DecoderConfig:
    """The sizes and options of a decoder (see the module docstring)."""

    model_type: str
    """config.json's model_type: one of `config_json.MODEL_TYPES`."""
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
    """d, the size of one head's query and key (head_dim, or hidden_size / num_attention_heads; with
    latent attention, qk_nope_head_dim + qk_rope_head_dim)."""
    d_ff: int
    """Width of the dense feed-forward layer (intermediate_size)."""
    rms_norm_eps: float
    """The epsilon inside every RMSNorm."""
    rope_theta: float
    """The RoPE base of the full-attention layers (rope_theta, at the top level or under rope_parameters)."""
    tie_word_embeddings: bool
    """The output projection is the embedding matrix itself (no lm_head weight)."""
    qkv_bias: bool
    """The query, key and value projections have biases (Qwen2; attention_bias elsewhere)."""
    o_bias: bool
    """The output projection has a bias (attention_bias)."""
    mlp_bias: bool
    """The feed-forward projections have biases (Llama's mlp_bias)."""
    windows: tuple[int | None, ...]
    """One entry per layer: the sliding window (a query sees itself and window - 1 earlier tokens), or None."""
    max_positions: int
    """max_position_embeddings: the context length the model was trained for."""
    eos_token_ids: tuple[int, ...] = ()
    """Tokens that end a generation (eos_token_id, an int or a list)."""
    ropes: tuple[RopeScaling | None, ...] = ()
    """One entry per layer: how it rotates queries and keys, or None for a layer without positions (NoPE,
    SmolLM3). Empty: every layer plain RoPE with rope_theta."""
    rope_interleaved: bool = False
    """RoPE pairs coordinates (2i, 2i + 1) (DeepSeek's rope_interleave) instead of (i, i + d/2)."""
    qk_norm: bool = False
    """An RMSNorm on each head's query and key before RoPE (Qwen3, Gemma 3)."""
    score_scale: float | None = None
    """What the scores q . k are multiplied by; None: 1 / sqrt(head_dim). Gemma: query_pre_attn_scalar^-1/2;
    DeepSeek with a scaled RoPE and mscale_all_dim: also times yarn_mscale(factor, mscale_all_dim)^2."""
    attn_softcap: float | None = None
    """Scores become c * tanh(s / c) before the mask (Gemma 2's attn_logit_softcapping)."""
    final_softcap: float | None = None
    """Logits become c * tanh(z / c) (Gemma's final_logit_softcapping)."""
    sinks: bool = False
    """Each head has a learned sink logit joined to its softmax rows (gpt-oss)."""
    norm_offset: float = 0.0
    """Gemma's RMSNorm multiplies by (1 + weight): the loader keeps weight + norm_offset."""
    sandwich_norms: bool = False
    """Gemma: the attention and the MLP outputs are normed too before the residual (post_attention_layernorm,
    post_feedforward_layernorm; the MLP's input norm is pre_feedforward_layernorm)."""
    embed_scale: float | None = None
    """Gemma: embeddings are multiplied by sqrt(d_model), rounded to float32 as transformers keeps it."""
    activation: str = "silu"
    """The gate's activation in the MLP: "silu" (SwiGLU) or "gelu_tanh" (GELU, tanh approximation; Gemma)."""
    latent: LatentAttentionConfig | None = None
    """Multi-head latent attention (DeepSeek-V3), or None for grouped-query attention."""
    moe: MoEConfig | None = None
    """The mixture of experts (gpt-oss, DeepSeek-V3), or None for a dense MLP in every layer."""
    dtype: str = "float32"
    """The dtype config.json says the checkpoint is stored in (dtype or torch_dtype)."""
    rotary_dim: int | None = None
    """Partial RoPE: the first rotary_dim coordinates of each query and key are rotated, the rest pass
    through (head_dim x partial_rotary_factor); None: all of them (qk_rope_head_dim with latent attention)."""
    chunks: tuple[int | None, ...] = ()
    """One entry per layer: the attention chunk (a query sees only the earlier keys of its own chunk of
    positions, Llama 4's attention_chunk_size on its chunked_attention layers), or None. Empty: no chunks."""
    qk_norm_scope: str = "head"
    """Where QK-norm's RMSNorm runs: "head" (each head's query and key, a gain of size d: Qwen3, Gemma 3) or
    "projection" (all heads' queries together, a gain of size h_q * d, and the keys likewise: MiniMax-M2, OLMo
    hybrid)."""
    l2_qk_norm: bool = False
    """Llama 4's use_qk_norm: queries and keys of the RoPE layers divided by their root mean square (no
    learned gain), after RoPE."""
    nope_temperature: tuple[float, float] | None = None
    """Llama 4's attn_temperature_tuning: (floor_scale, attn_scale); the queries of layers without RoPE are
    multiplied by `core.temperature.nope_temperature` of their positions. None: not used."""
    gemma3n: Gemma3nOptions | None = None
    """Gemma 3n's text model: AltUp, LAuReL, per-layer inputs, KV sharing, sparse activations; None otherwise."""
    weight_blocks: tuple[int, int] | None = None
    """A checkpoint stored in FP8 with one scale per block of weights (quantization_config's weight_block_size,
    `fp8.dequantize_fp8`), or None: the weights are stored as they are used."""
    indexer: IndexerConfig | None = None
    """DeepSeek Sparse Attention's indexer (DeepSeek-V3.2, GLM-5): each query's latent attention reads only
    the keys it picks; None: every visible key."""
    attn_output_gate: bool = False
    """Gated attention (Qwen3-Next, Qwen3.5): q_proj also makes a gate g, and the attention output is multiplied
    by sigmoid(g), per head and channel, before o_proj."""
    delta: DeltaRuleConfig | None = None
    """The delta-rule layers of a hybrid decoder (Qwen3-Next, Qwen3.5, OLMo hybrid, Kimi Linear): which layers keep a state
    instead of scores, and their sizes; None: softmax attention in every layer."""
    v4: V4Options | None = None
    """DeepSeek-V4 (`deepseek_v4.DeepseekV4Model` runs it): compressed keys beside a sliding window,
    hyper-connections, hashed experts; None otherwise."""
    extra_layers: int = field(default=0, repr=False)
    """Layers the checkpoint stores beyond n_layers that transformers does not run (DeepSeek's multi-token
    prediction layer, num_nextn_predict_layers): their tensors are skipped."""

    def __post_init__(self):
        if not self.ropes:
            object.__setattr__(self, "ropes", (RopeScaling("default", self.rope_theta),) * self.n_layers)
        if not self.chunks:
            object.__setattr__(self, "chunks", (None,) * self.n_layers)
        if len(self.chunks) != self.n_layers:
            raise ValueError(f"chunks needs one entry per layer ({self.n_layers}); got {len(self.chunks)}")
        if self.qk_norm_scope not in ("head", "projection"):
            raise ValueError(f"qk_norm_scope must be 'head' or 'projection'; got {self.qk_norm_scope!r}")
        if len(self.ropes) != self.n_layers or len(self.windows) != self.n_layers:
            raise ValueError(f"ropes and windows need one entry per layer ({self.n_layers}); got {len(self.ropes)} "
                             f"and {len(self.windows)}")
        if self.rotary_dim is not None and not (2 <= self.rotary_dim <= self.head_dim and self.rotary_dim % 2 == 0):
            raise ValueError(f"rotary_dim must be even and in 2..head_dim = 2..{self.head_dim}; got {self.rotary_dim}")

    @property
    def kv_groups(self) -> int:
        """g = h_q / h_kv, the query heads that share one key/value head."""
        return self.n_heads // self.n_kv_heads

    @property
    def scale(self) -> float:
        """What the scores q . k are multiplied by before the softmax."""
        return self.head_dim ** -0.5 if self.score_scale is None else self.score_scale

    @property
    def rope_dim(self) -> int:
        """The coordinates of each query and key that RoPE rotates (qk_rope_head_dim with latent attention,
        rotary_dim with partial RoPE)."""
        if self.latent is not None:
            return self.latent.qk_rope_head_dim
        return self.head_dim if self.rotary_dim is None else self.rotary_dim

    @property
    def v_head_dim(self) -> int:
        """d_v, the size of each head's value."""
        return self.head_dim if self.latent is None else self.latent.v_head_dim

    def is_moe_layer(self, layer: int) -> bool:
        """Whether `layer` has a mixture of experts (else a dense MLP of width d_ff)."""
        if self.moe is None:
            return False
        return layer >= self.moe.first_layer if self.moe.layers is None else layer in self.moe.layers

    @property
    def attention_kind(self) -> str:
        """"multi-head latent", "multi-head", "multi-query" or "grouped-query"."""
        if self.latent is not None:
            return "multi-head latent"
        if self.n_kv_heads == self.n_heads:
            return "multi-head"
        return "multi-query" if self.n_kv_heads == 1 else "grouped-query"

    @classmethod
    def from_dict(cls, cfg: dict, source: str = "config.json") -> "DecoderConfig":
        """Read a Hugging Face config (as a dict); refuse what this forward pass does not implement."""
        return cls(**config_fields(cfg, source))

    @classmethod
    def from_json(cls, path: str | os.PathLike) -> "DecoderConfig":
        """Read config.json from a checkpoint folder."""
        path = Path(path)
        try:
            cfg = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as err:
            raise ValueError(f"{path} is not valid JSON: {err}") from None
        return cls.from_dict(cfg, str(path))
