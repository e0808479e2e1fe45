"""The KV cache: the keys and values a decoder has already computed, kept for the next token (book/decoding.ipynb).

A decoder that generates text scores each new token's query against the keys
of every token before it. Those keys and values do not change once computed
(causal attention: an earlier token never sees a later one), so they are kept
per layer and each step appends one new key and value per head:

    step t:  K_cache (h_kv, t, d)  ->  append k_t (h_kv, 1, d)  ->  K (h_kv, t + 1, d)

`KVCache` holds them; `kv_cache_bytes` counts what they take for a given
model and context length, without building anything. Multi-head latent
attention (DeepSeek-V3) caches less: per token and layer, one latent of
kv_lora_rank numbers and one RoPE key of qk_rope_head_dim shared by every
head (`LatentCache`, `latent_cache_bytes`). `cache_bytes` counts either from
a `DecoderConfig`, sliding windows included.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import numpy as np

from ..core._checks import as_float_array, positive_int, require_ndim

if TYPE_CHECKING:  # annotations only: a cache does not load the configuration readers
    from .config import DecoderConfig

EXTRA_ITEMSIZES = {"bfloat16": 2, "bf16": 2, "float8_e4m3fn": 1, "float8_e5m2": 1, "fp8": 1}
"""Bytes per number of the dtypes models are stored in that NumPy itself does not name."""


def itemsize(dtype) -> int:
    """Bytes per number of `dtype`: a NumPy dtype, or "bfloat16" / "float8_e4m3fn" / "float8_e5m2"."""
    if isinstance(dtype, str) and dtype.lower() in EXTRA_ITEMSIZES:
        return EXTRA_ITEMSIZES[dtype.lower()]
    try:
        return np.dtype(dtype).itemsize
    except TypeError:
        raise TypeError(
            f"dtype must be a NumPy dtype such as 'float32', or one of {', '.join(map(repr, EXTRA_ITEMSIZES))}; "
            f"got {dtype!r}"
        ) from None


def kv_cache_bytes(n_layers: int, n_kv_heads: int, head_dim: int, seq_len: int, dtype="float32", batch: int = 1) -> int:
    """Bytes a KV cache takes: 2 (keys and values) x layers x KV heads x head size x tokens x batch x itemsize.

    Args:
        n_layers: L, the decoder layers (each keeps its own keys and values).
        n_kv_heads: h_kv, the key/value heads per layer (h for multi-head
            attention, 1 for multi-query, fewer than h for grouped-query).
        head_dim: d, the size of one head's key (and value).
        seq_len: the tokens cached (prompt and generated so far).
        dtype: what the cache is stored in: a NumPy dtype or "bfloat16".
        batch: sequences cached side by side.

    Returns:
        The size in bytes, an int (exact: no floating point).
    """
    sizes = [positive_int(x, name) for x, name in ((n_layers, "n_layers"), (n_kv_heads, "n_kv_heads"),
                                                     (head_dim, "head_dim"), (seq_len, "seq_len"), (batch, "batch"))]
    total = 2 * itemsize(dtype)  # one key and one value per head, token and layer
    for size in sizes:
        total *= size
    return total


def latent_cache_bytes(n_layers: int, kv_lora_rank: int, qk_rope_head_dim: int, seq_len: int, dtype="float32",
                       batch: int = 1) -> int:
    """Bytes a multi-head latent attention cache takes: layers x (latent + shared RoPE key) x tokens x batch x itemsize.

    No per-head keys or values: each token keeps one latent of kv_lora_rank
    numbers and one RoPE key of qk_rope_head_dim, whatever the number of heads.

    Returns:
        The size in bytes, an int (exact).
    """
    sizes = [positive_int(x, name) for x, name in ((n_layers, "n_layers"), (kv_lora_rank, "kv_lora_rank"),
                                                     (qk_rope_head_dim, "qk_rope_head_dim"), (seq_len, "seq_len"),
                                                     (batch, "batch"))]
    n_layers, r, d_rope, seq_len, batch = sizes
    return n_layers * (r + d_rope) * seq_len * batch * itemsize(dtype)


def cache_bytes(config: DecoderConfig, seq_len: int = 1, dtype=None, batch: int = 1, keep_window: bool = False,
                latent: bool = True) -> int:
    """Bytes the cache of a model with `config` takes after seq_len tokens, counted from its config fields.

    Per layer and token: h_kv x (d + d_v) numbers for grouped-query (and
    multi-head, multi-query) attention; kv_lora_rank + qk_rope_head_dim for
    latent attention; and, with DeepSeek Sparse Attention, index_head_dim
    more in each layer that runs an indexer (its key, `IndexedLatentCache`);
    nothing for a Gemma 3n layer that shares another's. A delta-rule layer
    (Qwen3-Next, Qwen3.5, OLMo hybrid, Kimi) keeps n_v x d_k x d_v numbers of
    state and (w - 1) x (2 n_k d_k + n_v d_v) convolution inputs, whatever
    seq_len (`hybrid_cache.HybridCache`). DeepSeek-V4: what `V4Cache` keeps
    (`v4_attention.v4_cache_numbers`; keep_window and latent do not apply).

    Args:
        config: the model's `DecoderConfig` (`DecoderConfig.from_dict`, `published_config`).
        seq_len: tokens cached; 1 gives the bytes per token.
        dtype: what the cache is stored in; default the checkpoint's dtype (config.dtype).
        batch: sequences cached side by side.
        keep_window: sliding-window layers keep only window - 1 tokens (`KVCache(window=...)`), chunked
            layers only the tokens of the current chunk, seq_len mod chunk (`KVCache(chunk=...)`).
        latent: False counts a latent-attention model as if each head's rebuilt key and value
            were cached (h x (d_nope + d_rope + d_v) per layer): what the latent saves.

    Returns:
        The size in bytes, an int (exact).
    """
    c = config
    seq_len, batch = positive_int(seq_len, "seq_len"), positive_int(batch, "batch")
    if c.v4 is not None:  # DeepSeek-V4 keeps a window and compressed entries (`v4_attention.V4Cache`)
        from .v4_attention import v4_cache_numbers

        return v4_cache_numbers(c, seq_len) * batch * itemsize(c.dtype if dtype is None else dtype)
    if c.latent is not None and latent:
        per_layer = c.latent.kv_lora_rank + c.latent.qk_rope_head_dim  # one latent and one shared RoPE key
    else:
        per_layer = c.n_kv_heads * (c.head_dim + c.v_head_dim)  # a key and a value per key/value head
    tokens = [min(seq_len, w - 1) if keep_window and w is not None else seq_len for w in c.windows]
    if keep_window:
        tokens = [t if chunk is None else seq_len % chunk for t, chunk in zip(tokens, c.chunks)]
    if c.gemma3n is not None:  # a layer that reads another's keys and values keeps none of its own
        tokens = [t if source == i else 0 for i, (t, source) in enumerate(zip(tokens, c.gemma3n.kv_sources))]
    constant = 0  # numbers kept per sequence whatever its length
    if c.delta is not None:
        d = c.delta
        n_delta = sum(d.is_delta_layer(i) for i in range(c.n_layers))
        tokens = [0 if d.is_delta_layer(i) else t for i, t in enumerate(tokens)]
        constant = n_delta * (d.n_v_heads * d.d_k * d.d_v + (d.conv_width - 1) * (2 * d.key_dim + d.value_dim))
    numbers = per_layer * sum(tokens) + constant
    if c.indexer is not None:  # one indexer key per token in every layer with an indexer of its own
        numbers += c.indexer.head_dim * sum(n for n, shared in zip(tokens, c.indexer.shared) if not shared)
    return numbers * batch * itemsize(c.dtype if dtype is None else dtype)


def _windows(n_layers: int, window, name: str = "window") -> tuple[int | None, ...]:
    """One window (or chunk; None: keep everything) per layer, from None, an int or a sequence."""
    if window is None or isinstance(window, (int, np.integer)):
        return (None if window is None else positive_int(window, name),) * n_layers
    if not isinstance(window, Sequence) or isinstance(window, str) or len(window) != n_layers:
        raise ValueError(f"{name} must be None, an int or a sequence of {n_layers} ints or Nones (one per layer); "
                         f"got {window!r}")
    return tuple(None if w is None else positive_int(w, f"{name}[{i}]") for i, w in enumerate(window))


def layer_index(layer, n_layers: int) -> int:
    """`layer` checked to be an int in 0..n_layers - 1 (a ValueError naming it otherwise)."""
    if isinstance(layer, (bool, np.bool_)) or not isinstance(layer, (int, np.integer)) or not 0 <= layer < n_layers:
        raise ValueError(f"layer must be an int in 0..{n_layers - 1}; got {layer!r}")
    return int(layer)


def new_keys_values(key, value) -> tuple[np.ndarray, np.ndarray]:
    """A step's keys (..., h_kv, n_new, d_k) and values (..., h_kv, n_new, d_v), checked to agree but on d."""
    k = as_float_array(key, "key")
    v = as_float_array(value, "value")
    require_ndim(k, "key", 3, "(..., h_kv, n_new, d_k)")
    require_ndim(v, "value", 3, "(..., h_kv, n_new, d_v)")
    if k.shape[:-1] != v.shape[:-1]:
        raise ValueError(f"key and value must agree on every axis but the last, (..., h_kv, n_new); "
                         f"got key {k.shape} and value {v.shape}")
    return k, v


class KVCache:
    """The keys and values of every layer, appended along the sequence axis as tokens arrive.

    >>> cache = KVCache(n_layers=1)
    >>> k = v = np.ones((2, 3, 4))                   # (h_kv, n, d): 3 tokens, 2 heads of 4
    >>> keys, values = cache.update(0, k, v)
    >>> keys, values = cache.update(0, k[:, :1], v[:, :1])   # one more token
    >>> keys.shape, len(cache), cache.nbytes          # 2 x (2 x 4 x 4) float64 numbers
    ((2, 4, 4), 4, 512)

    Args:
        n_layers: L, the decoder layers.
        window: None (keep every token), or a sliding window per layer (an
            int for every layer, or a sequence of ints and Nones, one per
            layer). A query of a sliding-window layer sees itself and the
            window - 1 tokens before it, so such a layer keeps only the
            window - 1 most recent keys and values: exactly what the next
            token can still see besides its own.
        chunk: None, or an attention chunk per layer (an int or a sequence
            of ints and Nones). A chunked layer's query sees only the keys of
            its own chunk of positions (0..C-1, C..2C-1, ...), so such a
            layer keeps only the tokens of the current chunk: seen mod C.
    """

    def __init__(self, n_layers: int, window: int | Sequence[int | None] | None = None,
                 chunk: int | Sequence[int | None] | None = None):
        self.n_layers = positive_int(n_layers, "n_layers")
        self.windows = _windows(self.n_layers, window)
        self.chunks = _windows(self.n_layers, chunk, "chunk")
        self._keys: list[np.ndarray | None] = [None] * self.n_layers
        self._values: list[np.ndarray | None] = [None] * self.n_layers
        self._seen = [0] * self.n_layers

    def _layer(self, layer) -> int:
        return layer_index(layer, self.n_layers)

    def update(self, layer: int, key, value) -> tuple[np.ndarray, np.ndarray]:
        """Append this step's keys and values to `layer`'s cache; return every key and value to attend over.

        Args:
            layer: which layer, 0..L-1.
            key: (..., h_kv, n_new, d_k) the new tokens' keys (rotated, if the
                model uses RoPE: the cache holds keys as attention uses them).
            value: (..., h_kv, n_new, d_v) their values.

        Returns:
            (keys (..., h_kv, n_past + n_new, d_k), values (..., h_kv, n_past + n_new, d_v)),
            the cached tokens followed by the new ones (n_past is what a
            sliding-window layer kept: at most window - 1), as read-only
            arrays: nothing outside the cache can change what it holds.
        """
        layer = self._layer(layer)
        k, v = new_keys_values(key, value)
        n_new = k.shape[-2]
        past_k, past_v = self._keys[layer], self._values[layer]
        if past_k is not None:
            for name, new, old in (("key", k, past_k), ("value", v, past_v)):
                if new.shape[:-2] != old.shape[:-2] or new.shape[-1] != old.shape[-1] or new.dtype != old.dtype:
                    raise ValueError(
                        f"layer {layer} caches {name}s of shape (..., n, d) = {old.shape} and dtype {old.dtype}; "
                        f"got {name} of shape {new.shape} and dtype {new.dtype}: only the sequence axis (-2) may differ"
                    )
            k = np.concatenate([past_k, k], axis=-2)  # (..., h_kv, n_past, d) + (..., h_kv, n_new, d) -> (..., n_past + n_new, d)
            v = np.concatenate([past_v, v], axis=-2)
        else:
            k, v = k.copy(), v.copy()  # the cache owns its arrays: the caller may reuse theirs
        self._seen[layer] += n_new
        window, chunk = self.windows[layer], self.chunks[layer]
        if chunk is not None and k.shape[-2] > self._seen[layer] % chunk:  # a chunked layer starts afresh per chunk
            keep = self._seen[layer] % chunk  # the tokens of the current chunk, 0 after its last one
            self._keys[layer] = k[..., k.shape[-2] - keep:, :].copy()  # (..., h_kv, keep, d_k)
            self._values[layer] = v[..., v.shape[-2] - keep:, :].copy()
        elif window is not None and k.shape[-2] > window - 1:  # a sliding-window layer forgets the oldest tokens
            self._keys[layer] = k[..., k.shape[-2] - (window - 1):, :].copy()  # (..., h_kv, window - 1, d_k)
            self._values[layer] = v[..., v.shape[-2] - (window - 1):, :].copy()
        else:
            self._keys[layer], self._values[layer] = k, v
        return _read_only(k), _read_only(v)

    def keys(self, layer: int) -> np.ndarray | None:
        """(..., h_kv, n_kept, d_k) the keys `layer` keeps (a read-only view), or None before the first token."""
        return _read_only(self._keys[self._layer(layer)])

    def values(self, layer: int) -> np.ndarray | None:
        """(..., h_kv, n_kept, d_v) the values `layer` keeps (a read-only view), or None before the first token."""
        return _read_only(self._values[self._layer(layer)])

    def seen(self, layer: int = 0) -> int:
        """Tokens that have passed through `layer`: the position the next token gets."""
        return self._seen[self._layer(layer)]

    def kept(self, layer: int = 0) -> int:
        """Tokens whose keys and values `layer` keeps (all it has seen, at most window - 1, or the current chunk's)."""
        k = self._keys[self._layer(layer)]
        return 0 if k is None else k.shape[-2]

    def __len__(self) -> int:
        """Tokens seen so far (by layer 0): the position of the next token."""
        return self._seen[0]

    @property
    def nbytes(self) -> int:
        """Bytes of every key and value kept, all layers."""
        return sum(a.nbytes for a in (*self._keys, *self._values) if a is not None)

    def __repr__(self) -> str:
        windows = "" if all(w is None for w in self.windows) else f", windows {list(self.windows)}"
        return f"KVCache({self.n_layers} layers, {len(self)} tokens seen, {self.nbytes:,} bytes{windows})"


class LatentCache(KVCache):
    """What multi-head latent attention caches: per layer, each token's latent and its shared RoPE key.

    The same interface as `KVCache`, with the latent (1, n, r) in place of
    the keys and the RoPE key (1, n, d_rope) in place of the values: neither
    has a head axis worth the name (one for all heads).

    >>> cache = LatentCache(n_layers=1)
    >>> latents, rope_keys = cache.update(0, np.ones((1, 3, 8)), np.ones((1, 3, 2)))
    >>> cache.latents(0).shape, cache.rope_keys(0).shape, cache.nbytes     # 3 x (8 + 2) float64 numbers
    ((1, 3, 8), (1, 3, 2), 240)
    """

    def update(self, layer: int, latent, rope_key) -> tuple[np.ndarray, np.ndarray]:
        """Append latents (1, n_new, r) and RoPE keys (1, n_new, d_rope); return every one kept: (1, n_k, r), (1, n_k, d_rope)."""
        return super().update(layer, latent, rope_key)

    def latents(self, layer: int) -> np.ndarray | None:
        """(1, n_kept, r) the latents `layer` keeps (read-only), or None before the first token."""
        return self.keys(layer)

    def rope_keys(self, layer: int) -> np.ndarray | None:
        """(1, n_kept, d_rope) the shared RoPE keys `layer` keeps (read-only), or None before the first token."""
        return self.values(layer)

    def __repr__(self) -> str:
        return f"LatentCache({self.n_layers} layers, {len(self)} tokens seen, {self.nbytes:,} bytes)"


def _read_only(a: np.ndarray | None) -> np.ndarray | None:
    if a is None:
        return None
    view = a.view()
    view.flags.writeable = False
    return view


@runtime_checkable
class LayerCache(Protocol):
    """What `DecoderModel.forward` asks of a cache: `KVCache`, `PagedKVCache` and `QuantizedKVCache` all give it.

    They differ in how they store the keys and values (one array per layer,
    fixed blocks, quantized numbers), not in what `update` returns: every
    earlier key and value the layer keeps, followed by the new ones.
    """

    n_layers: int
    windows: tuple[int | None, ...]

    def update(self, layer: int, key, value) -> tuple[np.ndarray, np.ndarray]: ...

    def keys(self, layer: int) -> np.ndarray | None: ...

    def values(self, layer: int) -> np.ndarray | None: ...

    def seen(self, layer: int = 0) -> int: ...

    def kept(self, layer: int = 0) -> int: ...

    def __len__(self) -> int: ...

    @property
    def nbytes(self) -> int: ...
