"""DeepSeek-V4's compressed keys: the pooled entry, one query's view, the cache saved (book/without_all_scores.ipynb).

- `SMALL_POOL` and `pool_weights`: four tokens' candidates and gates, small
  enough to follow by hand, and the per-coordinate softmax weights that make
  their entry (`core.compress.gated_pool`).
- `entry_tokens`: the tokens an entry reads (m of them, or 2m overlapping).
- `SMALL_V4`, `QueryView` and `query_view`: which tokens one query of a small random
  DeepSeek-V4 layer sees exactly (its window) and which compressed entries
  its indexer picks, read from the decoder's own attention weights.
- `DEEPSEEK_V4_FLASH`, `CacheRow` and `cache_per_token`: the numbers a
  DeepSeek-V4 cache keeps per token of context (`decoder.cache.cache_bytes`)
  against every token's key kept, and against DeepSeek-V3's latent and its
  full per-head cache.

The formulas live in `core/compress.py`; the layer in `decoder/v4_attention.py`.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType

import numpy as np

from ..core._checks import as_float_array, frozen_array, positive_int, require_ndim
from ..core.compress import gated_pool
from ..core.softmax import softmax
from ..decoder.cache import cache_bytes
from ..decoder.config import DecoderConfig
from ..decoder.published import PublishedConfig, published_config

__all__ = ["DEEPSEEK_V4_FLASH", "SMALL_POOL", "SMALL_V4", "CacheRow", "QueryView", "SmallPool", "cache_per_token",
           "entry_tokens", "pool_weights", "query_view"]


@dataclass(frozen=True)
class SmallPool:
    """One window's inputs to `core.compress.gated_pool`: m tokens, d coordinates."""

    kv: np.ndarray
    """(m, d) each token's candidate vector."""
    gate: np.ndarray
    """(m, d) each token's gate logits."""
    position_bias: np.ndarray
    """(m, d) the learned bias of each place in the window."""

    def entry(self) -> np.ndarray:
        """(d,) the window's compressed entry."""
        return gated_pool(self.kv, self.gate, self.kv.shape[0], self.position_bias)[0]


SMALL_POOL = SmallPool(
    kv=frozen_array([[1.0, 4.0], [2.0, 0.0], [3.0, -2.0], [4.0, 2.0]]),
    gate=frozen_array([[0.0, 2.0], [0.0, 0.0], [0.0, 0.0], [0.0, 0.0]]),
    position_bias=frozen_array([[0.0, 0.0], [0.0, 0.0], [0.0, 0.0], [np.log(5.0), 0.0]]),
)
"""Four tokens, two coordinates. Coordinate 0: equal gates, but the last place's bias (log 5) gives the fourth
token five times the others' weight. Coordinate 1: the first token's gate (2) makes it dominate."""


def pool_weights(kv, gate, position_bias) -> np.ndarray:
    """The weights `gated_pool` gives one window's tokens, per coordinate.

    Args:
        kv: (m, d) the window's candidates (checked for shape only).
        gate: (m, d) their gate logits.
        position_bias: (m, d) added to the gates by place.

    Returns:
        (m, d) softmax over the m tokens, separately in each coordinate (each column sums to 1).
    """
    c, z, b = (as_float_array(a, name) for a, name in ((kv, "kv"), (gate, "gate"), (position_bias, "position_bias")))
    require_ndim(c, "kv", 2, "(m, d)")
    if z.shape != c.shape or b.shape != c.shape:
        raise ValueError(f"gate and position_bias must have kv's shape (m, d) = {c.shape}; got {z.shape} and {b.shape}")
    return softmax(z + b, axis=0)  # (m, d): over the window's tokens


def entry_tokens(entry: int, ratio: int, overlapping: bool) -> range:
    """The token positions compressed entry `entry` pools: [w m, (w + 1) m), or [(w - 1) m, (w + 1) m) overlapping
    (the first window's entry has no window before it)."""
    if isinstance(entry, bool) or not isinstance(entry, (int, np.integer)) or entry < 0:
        raise ValueError(f"entry must be an int >= 0; got {entry!r}")
    m = positive_int(ratio, "ratio")
    return range(max(entry - 1, 0) * m if overlapping else entry * m, (entry + 1) * m)


@dataclass(frozen=True)
class QueryView:
    """What one query of a DeepSeek-V4 layer attends to, read from the layer's attention weights."""

    position: int
    """The query's position t (the context holds t + 1 tokens)."""
    window: np.ndarray
    """(W,) the positions whose own keys it weighs: its sliding window, itself included."""
    n_closed: int
    """The compressed entries it may see: those whose window has closed, (t + 1) // m."""
    picked: np.ndarray
    """(k,) the entries it weighs (a CSA layer: the indexer's top k; HCA: all closed ones)."""
    ratio: int
    """m, tokens per entry."""
    overlapping: bool
    """True for CSA (entries pool 2m tokens every m)."""
    weight_window: float
    """The weight of the window's tokens, summed, averaged over the heads."""
    weight_entries: float
    """The weight of the picked entries, summed, averaged over the heads (the sink takes the rest)."""


SMALL_V4 = MappingProxyType(dict(
    model_type="deepseek_v4", vocab_size=64, hidden_size=32, moe_intermediate_size=16, num_hidden_layers=1,
    num_attention_heads=4, head_dim=16, q_lora_rank=12, partial_rotary_factor=0.5, n_routed_experts=4,
    num_experts_per_tok=2, n_shared_experts=1, layer_types=["compressed_sparse_attention"], mlp_layer_types=["moe"],
    compress_rates={"compressed_sparse_attention": 4, "heavily_compressed_attention": 16}, hc_mult=2,
    hc_sinkhorn_iters=3, sliding_window=16, o_groups=2, o_lora_rank=8, index_n_heads=4, index_head_dim=8,
    index_topk=6, max_position_embeddings=1024, rms_norm_eps=1e-6))
"""A one-layer DeepSeek-V4 with DeepSeek-V4's ratio m = 4 and a window and top-k scaled down (16 and 6), so that a
context of a hundred tokens already reaches past the window."""


def query_view(rng: np.random.Generator, n: int, config=SMALL_V4, layer: int = 0) -> QueryView:
    """Run a random DeepSeek-V4 (`decoder.random_decoder`) on n tokens and read its last query's view in `layer`.

    The window and the picked entries are the keys and entries the decoder's
    attention gives a weight above 0 (head 0; every head shares them).

    Args:
        rng: the weights' and the tokens' randomness.
        n: tokens of context (n_k), the query the last.
        config: a config.json dict of model_type deepseek_v4.
        layer: the layer read.
    """
    from ..decoder.load import random_decoder  # the decoders load on use: `import attention_course` stays light

    n = positive_int(n, "n")
    model = random_decoder(rng, config=dict(config))
    c = model.config
    if c.v4 is None:
        raise ValueError(f"config must be a DeepSeek-V4 config (model_type deepseek_v4); got {c.model_type!r}")
    if not 0 <= layer < c.n_layers or not c.v4.ratios[layer]:
        raise ValueError(f"layer must be a compressed layer of the {c.n_layers}; got {layer!r}")
    ids = rng.integers(1, c.vocab_size, n)
    weights = model.forward(ids).attentions[layer, :, -1]  # (L, h, n, n + T) -> (h, n + T): the last query
    tokens, entries = weights[:, :n], weights[:, n:]  # (h, n), (h, T_max)
    ratio = c.v4.ratios[layer]
    return QueryView(position=n - 1, window=np.flatnonzero(tokens[0] > 0), n_closed=n // ratio,
                     picked=np.flatnonzero(entries[0] > 0), ratio=ratio,
                     overlapping=c.v4.layer_types[layer] == "compressed_sparse_attention",
                     weight_window=float(tokens.sum(-1).mean()), weight_entries=float(entries.sum(-1).mean()))


DEEPSEEK_V4_FLASH = PublishedConfig(
    "deepseek-ai/DeepSeek-V4-Flash-Base",
    "transformers 5's DeepseekV4Config defaults (its docstring: a configuration similar to "
    "deepseek-ai/DeepSeek-V4-Flash-Base); layer_types and compress_rates left at those defaults",
    MappingProxyType(dict(
        model_type="deepseek_v4", vocab_size=129280, hidden_size=4096, moe_intermediate_size=2048,
        num_hidden_layers=43, num_attention_heads=64, num_key_value_heads=1, head_dim=512, q_lora_rank=1024,
        partial_rotary_factor=0.125, num_experts_per_tok=6, n_routed_experts=256, n_shared_experts=1,
        routed_scaling_factor=1.5, max_position_embeddings=1048576, rope_theta=10000.0, compress_rope_theta=160000.0,
        hc_mult=4, sliding_window=128, o_groups=8, o_lora_rank=1024, index_n_heads=64, index_head_dim=128,
        index_topk=512, rms_norm_eps=1e-6)),
)
"""DeepSeek-V4's sizes as transformers' configuration class gives them by default (no published config.json is
stored here): 43 layers, two heavily compressed (m' = 128) then compressed sparse (m = 4) and heavily compressed
in turn, one key/value head of 512, a window of 128."""


@dataclass(frozen=True)
class CacheRow:
    """One way of caching a context: numbers kept per token."""

    name: str
    """What is kept."""
    per_token: float
    """Numbers kept, all layers, divided by the context's tokens."""


def cache_per_token(seq_len: int, v4: DecoderConfig | None = None, v3: DecoderConfig | None = None) -> list[CacheRow]:
    """Numbers per token of a seq_len-token context: DeepSeek-V4's cache, every token's key kept, DeepSeek-V3's.

    Rows: V4's cache (`cache_bytes`: windows, entries, indexer keys, open windows);
    the same layers keeping every token's key (= value), n_layers x d; DeepSeek-V3's
    latent, n_layers x (kv_lora_rank + d_rope); DeepSeek-V3 caching each head's key
    and value, n_layers x h x (d_k + d_v).

    Args:
        seq_len: tokens of context.
        v4: a DeepSeek-V4 `DecoderConfig` (default `DEEPSEEK_V4_FLASH`'s).
        v3: a latent-attention `DecoderConfig` (default DeepSeek-V3's published one).
    """
    seq_len = positive_int(seq_len, "seq_len")
    v4 = DEEPSEEK_V4_FLASH.config if v4 is None else v4
    v3 = published_config("deepseek-ai/DeepSeek-V3") if v3 is None else v3
    if not isinstance(v4, DecoderConfig) or v4.v4 is None:
        raise TypeError(f"v4 must be a DeepSeek-V4 DecoderConfig; got {type(v4).__name__}")
    if not isinstance(v3, DecoderConfig) or v3.latent is None:
        raise TypeError(f"v3 must be a latent-attention DecoderConfig; got {type(v3).__name__}")

    def numbers(config, **kw) -> float:
        return cache_bytes(config, seq_len, dtype="float32", **kw) / 4 / seq_len  # 4 bytes a number

    return [CacheRow("DeepSeek-V4 (window + compressed)", numbers(v4)),
            CacheRow("DeepSeek-V4's keys, every token", float(v4.n_layers * v4.head_dim)),
            CacheRow("DeepSeek-V3 latent", numbers(v3)),
            CacheRow("DeepSeek-V3 per-head keys, values", numbers(v3, latent=False))]
