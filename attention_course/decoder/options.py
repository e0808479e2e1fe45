"""The parts of a decoder's configuration that only some models have, and the error for what is not implemented.

`LatentAttentionConfig` (DeepSeek-V3's multi-head latent attention) and
`MoEConfig` (a mixture of experts: gpt-oss, DeepSeek-V3) are fields of
`config.DecoderConfig`; `config_json` builds them from config.json.
"""

from __future__ import annotations

from dataclasses import dataclass


class UnsupportedConfigError(ValueError):
    """config.json asks for something this forward pass does not implement."""


@dataclass(frozen=True)
class LatentAttentionConfig:
    """Multi-head latent attention (DeepSeek-V2/V3): keys and values rebuilt per head from one shared latent.

    Per token, the cache keeps a latent c (kv_lora_rank) and one RoPE key
    k_rope (qk_rope_head_dim) shared by every head; head i's key is
    [c W_UK_i, k_rope] (qk_nope_head_dim + qk_rope_head_dim) and its value
    c W_UV_i (v_head_dim).
    """

    kv_lora_rank: int
    """r, the size of the latent every head's key and value are rebuilt from."""
    qk_nope_head_dim: int
    """The part of each query and key without position (rebuilt from the latent)."""
    qk_rope_head_dim: int
    """The part with RoPE: one key shared by every head, rotated once."""
    v_head_dim: int
    """d_v, the size of each head's value (need not equal the key's size)."""
    q_lora_rank: int | None = None
    """Queries through a low-rank pair q_a (d_model -> q_lora_rank), a norm, q_b; None: one q_proj."""

    @property
    def qk_head_dim(self) -> int:
        """The size of each head's query and key: qk_nope_head_dim + qk_rope_head_dim."""
        return self.qk_nope_head_dim + self.qk_rope_head_dim


@dataclass(frozen=True)
class MoEConfig:
    """A mixture-of-experts feed-forward layer: a router sends each token to top_k of n_experts small MLPs."""

    router: str
    """"softmax_top_k" (gpt-oss: softmax over the top_k router logits) or "sigmoid_grouped" (DeepSeek-V3:
    sigmoid scores, a correction bias for the choice, top_k within the best topk_group of n_group groups)."""
    n_experts: int
    """Experts per layer (num_local_experts, n_routed_experts)."""
    top_k: int
    """Experts per token (num_experts_per_tok)."""
    d_expert: int
    """Width of one expert's hidden layer (intermediate_size in gpt-oss, moe_intermediate_size in DeepSeek)."""
    first_layer: int = 0
    """Layers before this one have a dense MLP of width d_ff (first_k_dense_replace)."""
    n_shared_experts: int = 0
    """Experts every token goes through besides the routed ones (DeepSeek)."""
    routed_scaling_factor: float = 1.0
    """Multiplies the routed experts' weights (DeepSeek)."""
    n_group: int = 1
    """DeepSeek: experts form n_group groups; a token picks among topk_group of them."""
    topk_group: int = 1
    """DeepSeek: the groups kept, by the sum of their two best scores."""
    norm_topk_prob: bool = True
    """DeepSeek: the top_k weights are divided by their sum."""
    swiglu_alpha: float = 1.702
    """gpt-oss: gate * sigmoid(alpha * gate), its experts' activation."""
    swiglu_limit: float = 7.0
    """gpt-oss: the gate is clamped above at limit, the up projection to [-limit, limit]."""


@dataclass(frozen=True)
class IndexerConfig:
    """DeepSeek Sparse Attention (DeepSeek-V3.2, GLM-5): a lightning indexer picks the keys each query attends to.

    Per layer, the indexer scores every cached key with n_heads small heads
    (`core.sparse.indexer_scores`) and the latent attention's softmax runs
    over the top_k best alone (`core.sparse.top_k_mask`).
    """

    n_heads: int
    """h_I, the indexer's heads (index_n_heads)."""
    head_dim: int
    """d_I, the size of each indexer query and of the one indexer key per token (index_head_dim)."""
    top_k: int
    """Keys kept per query (index_topk)."""
    rope_interleaved: bool
    """The indexer's RoPE pairs coordinates (2i, 2i + 1) (GLM-5) or (i, i + d/2) (DeepSeek-V3.2); it rotates the
    first qk_rope_head_dim coordinates of each indexer query and key."""
    shared: tuple[bool, ...]
    """One entry per layer: True where the layer has no indexer and reuses the keys the previous layer chose
    (GLM-5's indexer_types "shared"), False where it runs its own ("full")."""
