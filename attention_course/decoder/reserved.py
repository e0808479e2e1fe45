"""The reserved KV cache: room for the longest sequence set aside up front, written in place (book/generating_cost.ipynb).

What serving systems did before paging: each request gets one contiguous
buffer per layer for `max_tokens` tokens, the longest it may reach. A step
writes its keys and values into the next free rows and attention reads a
view of the rows filled so far, so nothing is copied; but the buffer takes
`max_tokens` tokens' worth of memory however short the request turns out to
be (`PagedKVCache` takes only the blocks it fills).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..core._checks import positive_int
from .stored import StoredCache


class ReservedKVCache(StoredCache):
    """Keys and values in one buffer per layer, sized for `max_tokens` tokens when the first token arrives.

    >>> cache = ReservedKVCache(n_layers=1, max_tokens=100)
    >>> k = v = np.ones((2, 3, 4))                  # (h_kv, n, d): 3 tokens, 2 heads of 4
    >>> keys, values = cache.update(0, k, v)
    >>> keys.shape, cache.nbytes                     # 100 tokens reserved: 2 x (2 x 100 x 4) float64
    ((2, 3, 4), 12800)

    `update`, `keys` and `values` return read-only views of the buffers:
    nothing is copied, and a view shows what the buffer holds until the
    layer's next update.

    Args:
        n_layers: L, the decoder layers.
        max_tokens: the tokens each layer has room for; a layer asked to
            keep more raises ValueError. A sliding-window layer needs room
            for window - 1 tokens plus the new ones of a call; when it
            reaches the end of its buffer, the tokens it keeps move back to
            the front.
        window: None, an int, or one int-or-None per layer, as in `KVCache`.
    """

    def __init__(self, n_layers: int, max_tokens: int, window: int | Sequence[int | None] | None = None):
        super().__init__(n_layers, window)
        self.max_tokens = positive_int(max_tokens, "max_tokens")
        self._buffers: list[tuple[np.ndarray, np.ndarray] | None] = [None] * self.n_layers
        self._start = [0] * self.n_layers  # row of the first kept token
        self._count = [0] * self.n_layers  # tokens kept

    def _append(self, layer: int, k: np.ndarray, v: np.ndarray) -> None:
        n_new = k.shape[-2]
        if self._buffers[layer] is None:  # reserve the whole length now that the shapes are known
            self._buffers[layer] = (np.zeros(k.shape[:-2] + (self.max_tokens, k.shape[-1]), dtype=k.dtype),
                                    np.zeros(v.shape[:-2] + (self.max_tokens, v.shape[-1]), dtype=v.dtype))
        keys, values = self._buffers[layer]
        start, count = self._start[layer], self._count[layer]
        if count + n_new > self.max_tokens:
            raise ValueError(f"layer {layer} reserved room for max_tokens = {self.max_tokens} tokens; it keeps {count} "
                             f"and got {n_new} more")
        if start + count + n_new > self.max_tokens:  # the end of the buffer: move the kept tokens to the front
            keys[..., :count, :] = keys[..., start:start + count, :].copy()
            values[..., :count, :] = values[..., start:start + count, :].copy()
            start = self._start[layer] = 0
        end = start + count
        keys[..., end:end + n_new, :] = k  # (..., h_kv, n_new, d_k) into the next free rows
        values[..., end:end + n_new, :] = v
        self._count[layer] += n_new

    def _read(self, layer: int) -> tuple[np.ndarray, np.ndarray]:
        start, count = self._start[layer], self._count[layer]
        keys, values = self._buffers[layer]
        return keys[..., start:start + count, :], values[..., start:start + count, :]  # views: nothing copied

    def _forget(self, layer: int, keep: int) -> None:
        self._start[layer] += self._count[layer] - keep
        self._count[layer] = keep

    def kept(self, layer: int = 0) -> int:
        """Tokens whose keys and values `layer` keeps (all it has seen, or at most window - 1)."""
        return self._count[self._layer(layer)]

    @property
    def nbytes(self) -> int:
        """Bytes of every reserved buffer, all layers: max_tokens tokens each, however many are filled."""
        return sum(k.nbytes + v.nbytes for k, v in (b for b in self._buffers if b is not None))

    def _repr_extra(self) -> str:
        return f", room for {self.max_tokens:,} tokens"
