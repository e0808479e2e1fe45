"""The paged KV cache: fixed blocks of tokens and a block table per sequence, as vLLM's PagedAttention keeps them (book/generating_cost.ipynb).

A contiguous cache needs room for every token a request may ever reach; a
server that does not know how long an answer will be must reserve the
maximum for each request. A paged cache instead cuts each layer's keys and
values into blocks of `block_size` tokens and takes a block only when the
previous one is full. A block table maps the sequence's logical blocks to
physical ones, which need not be adjacent or in order:

    token t  ->  logical block t // block_size, slot t % block_size  ->  physical block block_table[t // block_size]

so a sequence holds at most block_size - 1 unused slots per layer. Attention
reads the blocks through the table one at a time (`PagedKVCache.attend`),
folding each into an online softmax as the tiled loop does with key tiles
(tiled/online_softmax.py): the result equals attention over the contiguous cache.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..core._checks import as_float_array, check_scale, compute_dtype, positive_int, require_ndim
from ..tiled.online_softmax import OnlineSoftmaxState, online_softmax_update
from .stored import StoredCache

DEFAULT_BLOCK_SIZE = 16
"""Tokens per block: vLLM's default block size."""


class PagedKVCache(StoredCache):
    """Keys and values in fixed blocks of `block_size` tokens, found through a block table per layer.

    >>> cache = PagedKVCache(n_layers=1, block_size=4)
    >>> k = v = np.ones((2, 6, 8))                       # (h_kv, n, d): 6 tokens, 2 heads of 8
    >>> keys, values = cache.update(0, k, v)
    >>> keys.shape, cache.block_table(0), cache.kept(0)  # two blocks: 4 tokens and 2 (+ 2 free slots)
    ((2, 6, 8), [0, 1], 6)
    >>> cache.nbytes                                     # whole blocks: 2 x (keys, values) x 2 heads x 4 slots x 8 float64
    2048

    Args:
        n_layers: L, the decoder layers.
        block_size: tokens per block (vLLM's default is 16).
        window: None, an int, or one int-or-None per layer, as in `KVCache`.
            A sliding-window layer forgets all but the window - 1 most
            recent tokens; a block none of whose tokens is kept goes back to
            the layer's free list, and the next block it needs comes from
            there, so the block table is no longer in order.
    """

    def __init__(self, n_layers: int, block_size: int = DEFAULT_BLOCK_SIZE,
                 window: int | Sequence[int | None] | None = None):
        super().__init__(n_layers, window)
        self.block_size = positive_int(block_size, "block_size")
        self._key_blocks: list[list[np.ndarray]] = [[] for _ in range(self.n_layers)]  # physical blocks
        self._value_blocks: list[list[np.ndarray]] = [[] for _ in range(self.n_layers)]
        self._tables: list[list[int]] = [[] for _ in range(self.n_layers)]  # logical block -> physical block
        self._free: list[list[int]] = [[] for _ in range(self.n_layers)]  # physical blocks no token uses
        self._start = [0] * self.n_layers  # slot of the first kept token in the first block of the table
        self._count = [0] * self.n_layers  # tokens kept

    # --- the storage ------------------------------------------------------------------------

    def _new_block(self, layer: int, k: np.ndarray, v: np.ndarray) -> int:
        """A physical block for `layer`: one from the free list, or a new one shaped like k and v's tokens."""
        if self._free[layer]:
            return self._free[layer].pop()
        b = self.block_size
        self._key_blocks[layer].append(np.zeros(k.shape[:-2] + (b, k.shape[-1]), dtype=k.dtype))  # (..., h_kv, b, d_k)
        self._value_blocks[layer].append(np.zeros(v.shape[:-2] + (b, v.shape[-1]), dtype=v.dtype))
        return len(self._key_blocks[layer]) - 1

    def _append(self, layer: int, k: np.ndarray, v: np.ndarray) -> None:
        b, table = self.block_size, self._tables[layer]
        slot = self._start[layer] + self._count[layer]  # the next free slot, counted over the table's blocks
        written = 0
        while written < k.shape[-2]:
            if slot // b == len(table):  # every block is full: take another
                table.append(self._new_block(layer, k, v))
            physical, offset = table[slot // b], slot % b
            n = min(b - offset, k.shape[-2] - written)  # as many tokens as fit in this block
            self._key_blocks[layer][physical][..., offset:offset + n, :] = k[..., written:written + n, :]
            self._value_blocks[layer][physical][..., offset:offset + n, :] = v[..., written:written + n, :]
            slot += n
            written += n
        self._count[layer] += written

    def _read(self, layer: int) -> tuple[np.ndarray, np.ndarray]:
        table, start, count = self._tables[layer], self._start[layer], self._count[layer]
        k_shape, v_shape, k_dtype, v_dtype = self._layout[layer]
        if not table:
            return (np.empty(k_shape[:-1] + (0, k_shape[-1]), k_dtype), np.empty(v_shape[:-1] + (0, v_shape[-1]), v_dtype))
        keys = np.concatenate([self._key_blocks[layer][p] for p in table], axis=-2)  # (..., h_kv, blocks * b, d_k)
        values = np.concatenate([self._value_blocks[layer][p] for p in table], axis=-2)
        return keys[..., start:start + count, :], values[..., start:start + count, :]  # the kept tokens, in order

    def _forget(self, layer: int, keep: int) -> None:
        table = self._tables[layer]
        self._start[layer] += self._count[layer] - keep
        self._count[layer] = keep
        if keep == 0:  # nothing kept: every block is free
            self._start[layer] = 0
            self._free[layer].extend(reversed(table))
            table.clear()
        while self._start[layer] >= self.block_size:  # the first block holds no kept token: free it
            self._free[layer].append(table.pop(0))
            self._start[layer] -= self.block_size

    def kept(self, layer: int = 0) -> int:
        """Tokens whose keys and values `layer` keeps (all it has seen, or at most window - 1)."""
        return self._count[self._layer(layer)]

    def block_table(self, layer: int = 0) -> list[int]:
        """The physical block of each of `layer`'s logical blocks, in order (a copy)."""
        return list(self._tables[self._layer(layer)])

    def blocks(self, layer: int = 0) -> int:
        """Blocks `layer` holds: ceil(tokens kept / block_size), or one more when a window left the first one part-used."""
        return len(self._tables[self._layer(layer)])

    @property
    def nbytes(self) -> int:
        """Bytes of every block in the block tables, all layers: whole blocks, their unused slots included."""
        total = 0
        for layer in range(self.n_layers):
            for p in self._tables[layer]:
                total += self._key_blocks[layer][p].nbytes + self._value_blocks[layer][p].nbytes
        return total

    def _repr_extra(self) -> str:
        return f", blocks of {self.block_size}"

    # --- attention through the block table ----------------------------------------------------

    def attend(self, layer: int, query, key, value, *, window: int | None = None, scale=None) -> np.ndarray:
        """Store the new tokens' keys and values, then attend over the blocks one at a time through the block table.

        What a paged-attention kernel does for one sequence: the queries are
        the last n_new positions, each block's scores are folded into an
        online softmax (`tiled.online_softmax_update`), and no contiguous
        copy of the cache is ever made.

        Args:
            layer: which layer, 0..L-1.
            query: (h_q, n_new, d_k) the new tokens' queries (rotated, with RoPE).
            key: (h_kv, n_new, d_k) their keys; value: (h_kv, n_new, d_v) their values.
                h_q must be a multiple of h_kv: query head i reads key/value head i // (h_q / h_kv).
            window: None (causal: a query sees every earlier token), or the
                sliding window of the layer (a query sees itself and window - 1 tokens before it).
            scale: multiplies the scores; defaults to 1/sqrt(d_k).

        Returns:
            (h_q, n_new, d_v): the same as `scaled_dot_product_attention` of the
            queries over the keys and values the layer keeps, with the causal
            (or sliding-window) mask aligned lower-right.
        """
        layer = self._layer(layer)
        k, v = self._check(layer, key, value)
        q = as_float_array(query, "query")
        require_ndim(q, "query", 3, "(h_q, n_new, d_k)")
        if k.ndim != 3 or q.ndim != 3:
            raise ValueError(f"attend takes one sequence: query (h_q, n_new, d_k), key (h_kv, n_new, d_k); "
                             f"got query {q.shape} and key {k.shape}")
        if q.shape[-2:] != k.shape[-2:] or q.shape[0] % k.shape[0]:
            raise ValueError(f"query must have shape (h_q, n_new, d_k) with key's n_new and d_k and h_q a multiple of "
                             f"h_kv; got query {q.shape} and key {k.shape}")
        if window is not None:
            window = positive_int(window, "window")
        scale = check_scale(scale, q.shape[-1])
        self._store(layer, k, v)
        out = self._attention(layer, q, window, scale)
        self._slide(layer)
        return out

    def _attention(self, layer: int, q: np.ndarray, window: int | None, scale: float) -> np.ndarray:
        b, table, start, count = self.block_size, self._tables[layer], self._start[layer], self._count[layer]
        h_q, n_q, _ = q.shape
        h_kv = self._layout[layer][0][0]
        dtype = compute_dtype(np.result_type(q.dtype, self._layout[layer][2], self._layout[layer][3]))
        first = self._seen[layer] - count  # position of the first kept token
        query_pos = np.arange(self._seen[layer] - n_q, self._seen[layer])  # (n_q,) the queries are the newest tokens
        out = np.empty((h_q, n_q, self._layout[layer][1][-1]), dtype=dtype)
        for head in range(h_q):
            kv_head = head // (h_q // h_kv)  # consecutive query heads share a key/value head
            state = OnlineSoftmaxState.start(n_q, out.shape[-1], dtype)
            for i, physical in enumerate(table):
                keys = self._key_blocks[layer][physical][kv_head].astype(dtype, copy=False)  # (b, d_k)
                values = self._value_blocks[layer][physical][kv_head].astype(dtype, copy=False)  # (b, d_v)
                slot = i * b + np.arange(b)  # (b,) this block's slots
                key_pos = first + slot - start  # (b,) their positions in the sequence
                seen = (slot >= start) & (slot < start + count)  # slots holding a kept token
                allowed = seen[None, :] & (key_pos[None, :] <= query_pos[:, None])  # (n_q, b) causal
                if window is not None:
                    allowed &= query_pos[:, None] - key_pos[None, :] < window
                scores = (q[head].astype(dtype, copy=False) @ keys.T) * scale  # (n_q, d_k) x (d_k, b) -> (n_q, b)
                state = online_softmax_update(state, np.where(allowed, scores, -np.inf), values)
            out[head] = state.output
        return out
