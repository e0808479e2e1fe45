"""DeepSeek Sparse Attention in a decoder (DeepSeek-V3.2, GLM-5): the lightning indexer beside latent attention.

Each attention layer first lets a small indexer choose, for every query, the
index_topk keys worth reading; the latent attention (`latent.py`) then
softmaxes over those alone (`core.sparse`, where the scoring and the choice
are explained):

    q_low  = RMSNorm(x W_q_a)                  (n, q_lora_rank)   the latent attention's low-rank query
    q_I    = RoPE(q_low W_q_I)                 (h_I, n, d_I)      the indexer's queries
    k_I    = RoPE(LayerNorm(x W_k_I))          (n, d_I)           one indexer key per token, cached
    w      = (x W_w) / sqrt(h_I)               (n, h_I)           each query's trust in each indexer head
    I      = sum_h w * relu(q_I . k_I / sqrt(d_I))                (n, n_k)
    keep   = the top index_topk visible keys of each row of I

RoPE rotates the first qk_rope_head_dim coordinates of q_I and k_I with the
layer's frequencies (rotate-half pairs in DeepSeek-V3.2, interleaved pairs in
GLM-5) and leaves the rest. GLM-5's "shared" layers run no indexer: they
reuse the keys the layer before them chose.

`IndexedLatentCache` keeps the indexer keys beside the latent attention's
latents and RoPE keys, so a decoding step scores its one query against every
cached indexer key.
"""

from __future__ import annotations

import numpy as np

from ..core.multi_head import split_heads
from ..core.norms import rms_norm
from ..core.sparse import indexer_scores, top_k_mask
from .attention import project, rotate
from .cache import LatentCache, _read_only
from .config import DecoderConfig
from .latent import LATENT_NORM_EPS
from .weights import DecoderLayer

INDEXER_NORM_EPS = 1e-6
"""The epsilon of the LayerNorm on the indexer key (transformers builds it with eps=1e-6, whatever rms_norm_eps says)."""


def layer_norm(x: np.ndarray, gain: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    """(..., d) -> (..., d): (x - mean) / sqrt(variance + eps) * gain + bias over the last axis (torch's LayerNorm)."""
    centred = x - x.mean(axis=-1, keepdims=True)
    variance = (centred * centred).mean(axis=-1, keepdims=True)  # biased, as torch's LayerNorm
    return centred / np.sqrt(variance + eps) * gain + bias


class IndexedLatentCache(LatentCache):
    """A `LatentCache` that also keeps each layer's indexer keys (DeepSeek Sparse Attention).

    >>> cache = IndexedLatentCache(n_layers=1)
    >>> latents, rope_keys = cache.update(0, np.ones((1, 3, 8)), np.ones((1, 3, 2)))
    >>> cache.update_indexer(0, np.ones((3, 4))).shape, cache.nbytes     # 3 x (8 + 2 + 4) float64 numbers
    ((3, 4), 336)
    """

    def __init__(self, n_layers: int, window=None):
        super().__init__(n_layers, window)
        if any(w is not None for w in self.windows):
            raise ValueError("an IndexedLatentCache keeps every token: the indexer scores every earlier key; "
                             f"got windows {list(self.windows)}")
        self._index_keys: list[np.ndarray | None] = [None] * self.n_layers

    def update_indexer(self, layer: int, key) -> np.ndarray:
        """Append the new tokens' indexer keys (n_new, d_I); return every one cached: (n_k, d_I), read-only."""
        layer = self._layer(layer)
        key = np.asarray(key)
        if key.ndim != 2:
            raise ValueError(f"key must have shape (n_new, d_I); got shape {key.shape}")
        past = self._index_keys[layer]
        if past is not None and (past.shape[-1] != key.shape[-1] or past.dtype != key.dtype):
            raise ValueError(f"layer {layer} caches indexer keys of shape {past.shape} and dtype {past.dtype}; "
                             f"got shape {key.shape} and dtype {key.dtype}")
        keys = key.copy() if past is None else np.concatenate([past, key])  # (n_past, d_I) + (n_new, d_I) -> (n_k, d_I)
        self._index_keys[layer] = keys
        return _read_only(keys)

    def index_keys(self, layer: int) -> np.ndarray | None:
        """(n_k, d_I) the indexer keys `layer` keeps (read-only), or None (no token yet, or a layer without indexer)."""
        return _read_only(self._index_keys[self._layer(layer)])

    @property
    def nbytes(self) -> int:
        """Bytes of every latent, RoPE key and indexer key kept, all layers."""
        return super().nbytes + sum(k.nbytes for k in self._index_keys if k is not None)

    def __repr__(self) -> str:
        return f"IndexedLatentCache({self.n_layers} layers, {len(self)} tokens seen, {self.nbytes:,} bytes)"


def indexer_qkw(config: DecoderConfig, p: DecoderLayer, layer: int, h: np.ndarray, positions: np.ndarray):
    """(q_I (h_I, n, d_I), k_I (n, d_I), w (n, h_I)) of the normed input h (n, d_model): the indexer's queries and
    keys, rotated, and its head weights, already divided by sqrt(h_I)."""
    c, a, ix, dims = config, p.latent, p.indexer, config.indexer
    q_low = rms_norm(project(h, a.w_q_a, a.b_q_a), a.q_a_norm, LATENT_NORM_EPS)  # (n, q_lora_rank)
    q = split_heads(q_low @ ix.w_q, dims.n_heads)  # (n, q_lora_rank) x (q_lora_rank, h_I*d_I) -> (h_I, n, d_I)
    k = layer_norm(h @ ix.w_k, ix.k_norm, ix.k_norm_bias, INDEXER_NORM_EPS)  # (n, d_model) x (d_model, d_I) -> (n, d_I)
    rope, d_rope = c.ropes[layer], c.latent.qk_rope_head_dim
    q = rotate(q, positions, rope, dims.rope_interleaved, rotary_dim=d_rope)  # the first d_rope coordinates turn
    k = rotate(k, positions, rope, dims.rope_interleaved, rotary_dim=d_rope)
    w = (h @ ix.w_weights) * dims.n_heads ** -0.5  # (n, d_model) x (d_model, h_I) -> (n, h_I)
    return q, k, w


def select_keys(config: DecoderConfig, p: DecoderLayer, layer: int, h: np.ndarray, positions: np.ndarray,
                cache=None, previous: np.ndarray | None = None) -> np.ndarray:
    """(n, n_k) bool, True at the keys each of the n queries reads in `layer`: its indexer's top index_topk visible
    keys, or, in a layer whose indexer is shared, `previous` (the choice of the layer before).

    With a cache (an `IndexedLatentCache`), the new indexer keys are appended
    to it and the queries, the last n of n_k positions, score every key it holds.
    """
    dims = config.indexer
    if dims.shared[layer]:
        if previous is None:
            raise ValueError(f"layer {layer} reuses the keys the layer before it chose, but none was given")
        return previous
    q, k, w = indexer_qkw(config, p, layer, h, positions)
    if cache is not None:
        k = cache.update_indexer(layer, k)  # (n_k, d_I): every token's indexer key
    scores = indexer_scores(q, k, w, scale=dims.head_dim ** -0.5)  # (n, n_k)
    return top_k_mask(scores, dims.top_k, ties="torch")  # (n, n_k): causal, then the top index_topk as torch picks
