"""What the paged and the quantized KV caches share: layers, windows, token counts, input checks (book/generating_cost.ipynb).

`KVCache` keeps each layer's keys and values as one growing array. The caches
serving systems use store them in a layout of their own, fixed blocks
(`PagedKVCache`) or quantized numbers (`QuantizedKVCache`), and give them
back as the same arrays. `StoredCache` is the part that does not depend on the
layout: a subclass says how to append tokens, read every kept token back, and
forget the oldest ones.

    update(layer, k, v):  check -> _append(k, v) -> _read (what attention uses) -> _forget (sliding window)
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..core._checks import positive_int
from .cache import _read_only, _windows, layer_index, new_keys_values


class StoredCache:
    """Base class: the keys and values of every layer, in a storage layout a subclass defines.

    Args:
        n_layers: L, the decoder layers.
        window: None, an int or one int-or-None per layer, as in `KVCache`:
            a sliding-window layer keeps only the window - 1 most recent tokens.
    """

    def __init__(self, n_layers: int, window: int | Sequence[int | None] | None = None):
        self.n_layers = positive_int(n_layers, "n_layers")
        self.windows = _windows(self.n_layers, window)
        self._seen = [0] * self.n_layers
        self._layout: list[tuple | None] = [None] * self.n_layers  # key and value shapes without n, their dtypes

    # --- what a subclass provides -------------------------------------------------------------

    def _append(self, layer: int, k: np.ndarray, v: np.ndarray) -> None:
        """Store the new tokens' keys (..., h_kv, n_new, d_k) and values (..., h_kv, n_new, d_v) after the kept ones."""
        raise NotImplementedError

    def _read(self, layer: int) -> tuple[np.ndarray, np.ndarray]:
        """Every kept key and value of `layer`, oldest first, as arrays of the dtype they came in."""
        raise NotImplementedError

    def _forget(self, layer: int, keep: int) -> None:
        """Keep only the `keep` most recent tokens of `layer` (free whatever storage no longer holds one)."""
        raise NotImplementedError

    def kept(self, layer: int = 0) -> int:
        """Tokens whose keys and values `layer` keeps (all it has seen, or at most window - 1)."""
        raise NotImplementedError

    @property
    def nbytes(self) -> int:
        """Bytes of everything the cache holds, all layers."""
        raise NotImplementedError

    # --- shared -------------------------------------------------------------------------------

    def _layer(self, layer) -> int:
        return layer_index(layer, self.n_layers)

    def _check(self, layer: int, key, value) -> tuple[np.ndarray, np.ndarray]:
        k, v = new_keys_values(key, value)
        layout = (k.shape[:-2] + k.shape[-1:], v.shape[:-2] + v.shape[-1:], k.dtype, v.dtype)
        before = self._layout[layer]
        if before is not None and before != layout:
            raise ValueError(
                f"layer {layer} caches keys of shape (..., h_kv, n, d_k) with (..., h_kv, d_k) = {before[0]} and "
                f"dtype {before[2]}, values with (..., h_kv, d_v) = {before[1]} and dtype {before[3]}; got key "
                f"{k.shape} {k.dtype} and value {v.shape} {v.dtype}: only the sequence axis (-2) may differ"
            )
        self._layout[layer] = layout
        return k, v

    def update(self, layer: int, key, value) -> tuple[np.ndarray, np.ndarray]:
        """Store this step's keys and values in `layer`; return every key and value to attend over.

        Args:
            layer: which layer, 0..L-1.
            key: (..., h_kv, n_new, d_k) the new tokens' keys (rotated, with RoPE).
            value: (..., h_kv, n_new, d_v) their values.

        Returns:
            (keys (..., h_kv, n_past + n_new, d_k), values (..., h_kv, n_past + n_new, d_v)),
            read back from the storage (so a quantized cache returns what it
            keeps, not what it was given), as read-only arrays; n_past is
            what the layer kept before the call, as `KVCache.update` returns.
        """
        layer = self._layer(layer)
        self._store(layer, *self._check(layer, key, value))
        keys, values = self._read(layer)  # (..., h_kv, n_past + n_new, d): what attention sees now
        self._slide(layer)
        return _read_only(keys), _read_only(values)

    def _store(self, layer: int, k: np.ndarray, v: np.ndarray) -> None:
        self._append(layer, k, v)
        self._seen[layer] += k.shape[-2]

    def _slide(self, layer: int) -> None:
        """On a sliding-window layer, forget all but the window - 1 tokens the next token can still see."""
        window = self.windows[layer]
        if window is not None and self.kept(layer) > window - 1:
            self._forget(layer, window - 1)

    def keys(self, layer: int) -> np.ndarray | None:
        """(..., h_kv, n_kept, d_k) the keys `layer` keeps, read back from the storage; None before the first token."""
        layer = self._layer(layer)
        return None if self._layout[layer] is None else _read_only(self._read(layer)[0])

    def values(self, layer: int) -> np.ndarray | None:
        """(..., h_kv, n_kept, d_v) the values `layer` keeps, read back from the storage; None before the first token."""
        layer = self._layer(layer)
        return None if self._layout[layer] is None else _read_only(self._read(layer)[1])

    def seen(self, layer: int = 0) -> int:
        """Tokens that have passed through `layer`: the position the next token gets."""
        return self._seen[self._layer(layer)]

    def __len__(self) -> int:
        """Tokens seen so far (by layer 0): the position of the next token."""
        return self._seen[0]

    def _repr_extra(self) -> str:
        return ""

    def __repr__(self) -> str:
        windows = "" if all(w is None for w in self.windows) else f", windows {list(self.windows)}"
        return (f"{type(self).__name__}({self.n_layers} layers{self._repr_extra()}, {len(self)} tokens seen, "
                f"{self.nbytes:,} bytes{windows})")
