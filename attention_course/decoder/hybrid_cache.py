"""The cache of a hybrid decoder: keys and values for its softmax layers, a fixed-size state for its delta-rule layers.

A softmax layer needs every earlier key and value, so its cache grows by one
per token (`KVCache`). A delta-rule layer (`delta.delta_rule_mixer`) has
folded every earlier token into its state S (n_v, d_k, d_v); beside it, its
short convolution needs the last w - 1 inputs of q, k and v. Both keep their
size however long the sequence grows:

    softmax layer:     K, V (h_kv, t, d)                         grows with t
    delta-rule layer:  S (n_v, d_k, d_v), conv inputs (w - 1, c)  constant
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .cache import KVCache, _read_only, layer_index


class HybridCache(KVCache):
    """A `KVCache` for the softmax layers, and each delta-rule layer's state and last convolution inputs.

    >>> cache = HybridCache(n_layers=2, delta_layers=[True, False])
    >>> cache.set_state(0, np.zeros((3, 6)), np.zeros((2, 4, 4)), n_new=5)     # layer 0 saw 5 tokens
    >>> keys, values = cache.update(1, np.ones((2, 5, 4)), np.ones((2, 5, 4)))
    >>> len(cache), cache.nbytes      # (3*6 + 2*4*4) + 2 x (2*5*4) float64 numbers
    (5, 1040)

    Args:
        n_layers: L, the decoder layers.
        delta_layers: one bool per layer: True for a delta-rule layer.
    """

    def __init__(self, n_layers: int, delta_layers: Sequence[bool]):
        super().__init__(n_layers)
        if len(delta_layers) != self.n_layers:
            raise ValueError(f"delta_layers needs one entry per layer ({self.n_layers}); got {len(delta_layers)}")
        self.delta_layers = tuple(bool(d) for d in delta_layers)
        self._conv: list[np.ndarray | None] = [None] * self.n_layers
        self._states: list[np.ndarray | None] = [None] * self.n_layers

    def _delta_layer(self, layer) -> int:
        layer = layer_index(layer, self.n_layers)
        if not self.delta_layers[layer]:
            raise ValueError(f"layer {layer} is a softmax-attention layer: it keeps keys and values, not a state")
        return layer

    def update(self, layer: int, key, value) -> tuple[np.ndarray, np.ndarray]:
        """`KVCache.update` for a softmax layer (a ValueError for a delta-rule layer)."""
        if self.delta_layers[layer_index(layer, self.n_layers)]:
            raise ValueError(f"layer {layer} is a delta-rule layer: it keeps a state (set_state), not keys and values")
        return super().update(layer, key, value)

    def state(self, layer: int) -> tuple[np.ndarray | None, np.ndarray | None]:
        """(the convolution's last inputs (w - 1, c), the state (n_v, d_k, d_v)) of a delta-rule layer, read-only,
        or (None, None) before its first token."""
        layer = self._delta_layer(layer)
        return _read_only(self._conv[layer]), _read_only(self._states[layer])

    def set_state(self, layer: int, conv, state, n_new: int) -> None:
        """Keep a delta-rule layer's new convolution inputs (w - 1, c) and state (n_v, d_k, d_v), after n_new tokens."""
        layer = self._delta_layer(layer)
        self._conv[layer] = np.array(conv)  # copies: the cache owns what it keeps
        self._states[layer] = np.array(state)
        self._seen[layer] += int(n_new)

    def kept(self, layer: int = 0) -> int:
        """Tokens whose keys and values `layer` keeps: 0 for a delta-rule layer, which keeps a state instead."""
        return 0 if self.delta_layers[layer_index(layer, self.n_layers)] else super().kept(layer)

    @property
    def nbytes(self) -> int:
        """Bytes of every key and value, state and convolution input kept, all layers."""
        return super().nbytes + sum(a.nbytes for a in (*self._conv, *self._states) if a is not None)

    def __repr__(self) -> str:
        n_delta = sum(self.delta_layers)
        return (f"HybridCache({self.n_layers} layers ({n_delta} delta-rule), {len(self)} tokens seen, "
                f"{self.nbytes:,} bytes)")

