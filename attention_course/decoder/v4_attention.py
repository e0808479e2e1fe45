"""DeepSeek-V4's attention: one shared key/value head over a sliding window plus compressed entries (book/decoding.ipynb).

For a layer's input x (n, d_model), at positions p:

    q   = RMS(RMSNorm(x W_qa) W_qb)           (h, n, d)   per head, no gain; RoPE on its last rope_dim coordinates
    kv  = RMSNorm(x W_kv)                     (n, d)      one head, read as key and as value; RoPE likewise
    keys = [the window's kv (the last W tokens, the query's own included) | compressed entries]
    w   = softmax([q . keys / sqrt(d), sink_h])   without the sink's column (`core.sinks.sink_softmax`)
    o   = w @ keys, its last rope_dim coordinates rotated back by the query's own position

so each value's rotation (it is a key too) is undone, leaving what depends on
the distance between query and key. The h heads' outputs go through o_groups
grouped projections (each group of heads to o_lora_rank) then one projection
to d_model.

The compressed entries: every m tokens, one entry pooled from their
projections (`core.compress`), normalised (RMSNorm) and rotated by the
position of its window's first token. A query at position t sees entry w once
its window has closed: w < (t + 1) // m.

- "heavily_compressed_attention" (HCA): windows of m tokens
  (`gated_pool`), every closed entry attended to.
- "compressed_sparse_attention" (CSA): windows of 2m every m
  (`overlapping_gated_pool`); a lightning indexer (its own pooled keys, of
  index_head_dim, and index_n_heads query heads from the low-rank query)
  scores the entries (`core.sparse.indexer_scores`) and each query attends to
  its index_topk best (`core.sparse.top_k_mask`, ties as torch.topk).

Equal indexer scores are not rare: an entry every head's relu sends to 0 scores
0. torch.topk's choice among them depends on the length of the row, and a
whole-prompt run's rows also hold the entries later queries will see (at
-inf): transformers' whole-prompt and cached runs may then pick different
entries for the same query. This code ranks the same rows as transformers in
each case, so it matches it in both.

`V4Cache` keeps, per layer, what the next tokens need: the last W - 1 keys,
the compressed entries (and the indexer's), the projections of the tokens of
a window not yet closed, and, for CSA, the previous window's half that the
next entry reads.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..core.compress import gated_pool, overlapping_gated_pool
from ..core.norms import rms_norm
from ..core.positions import apply_rope
from ..core.rope_scaling import RopeScaling
from ..core.sinks import sink_softmax
from ..core.sparse import indexer_scores, top_k_mask

__all__ = ["V4Cache", "rope_tail", "v4_attention", "v4_cache_numbers"]


def rope_tail(x: np.ndarray, positions: np.ndarray, rope: RopeScaling, rope_dim: int) -> np.ndarray:
    """(..., n, d) -> (..., n, d): RoPE (interleaved pairs) on the last rope_dim coordinates, the others kept.

    Negative positions rotate back (the attention output's rotation by -p).
    """
    theta, factor = rope.frequencies(rope_dim)  # (rope_dim/2,), YaRN's attention factor (1 otherwise)
    rotated = apply_rope(x[..., -rope_dim:], np.asarray(positions), interleaved=True, frequencies=theta)
    if factor != 1.0:
        rotated = rotated * x.dtype.type(factor)  # transformers multiplies cos and sin by it
    return np.concatenate([x[..., :-rope_dim], rotated], axis=-1)  # (..., n, d - r) and (..., n, r)


@dataclass
class _Pool:
    """One pooling's state: the inputs of a window not yet closed, the entries so far, the previous half."""

    pending_kv: np.ndarray | None = None
    """(p, width) projections of the p < m tokens of the open window."""
    pending_gate: np.ndarray | None = None
    entries: np.ndarray | None = None
    """(T, d) the compressed entries emitted so far (normed and rotated)."""
    previous: tuple[np.ndarray, np.ndarray] | None = None
    """CSA only: (kv_a, gate_a), each (m, d), the last closed window's first halves, its gates biased."""

    def arrays(self):
        return [a for a in (self.pending_kv, self.pending_gate, self.entries, *(self.previous or ())) if a is not None]


@dataclass
class _LayerState:
    window: np.ndarray | None = None
    """(n_kept, d) the keys (= values) of the last W - 1 tokens."""
    pools: dict[str, _Pool] = field(default_factory=dict)
    """"compressor" (and "indexer" for CSA)."""


class V4Cache:
    """What DeepSeek-V4's layers keep between calls: windows, compressed entries, indexer keys, open windows.

    Per layer: the keys (= values) of the last W - 1 tokens, (W - 1, d); the
    compressed entries so far, (T, d), and, for CSA, the indexer's, (T,
    index_head_dim); the projections of the tokens of the window not yet
    closed (fewer than m); for CSA, the previous window's first halves
    (m, d each) that the next entry mixes in. `len(cache)` is the number of
    tokens seen; `nbytes` counts every array kept.
    """

    def __init__(self, n_layers: int):
        if isinstance(n_layers, bool) or not isinstance(n_layers, (int, np.integer)) or n_layers < 1:
            raise ValueError(f"n_layers must be a positive int; got {n_layers!r}")
        self.n_layers = int(n_layers)
        self.layers = [_LayerState() for _ in range(self.n_layers)]
        self.seen = 0

    def __len__(self) -> int:
        return self.seen

    def entries(self, layer: int, name: str = "compressor") -> np.ndarray | None:
        """(T, d) the compressed entries `layer` keeps (name "indexer": the indexer's keys), or None."""
        pool = self.layers[layer].pools.get(name)
        return None if pool is None else pool.entries

    @property
    def nbytes(self) -> int:
        """Bytes of every array kept: windows, entries, indexer keys, open windows' inputs, previous halves."""
        total = 0
        for state in self.layers:
            total += 0 if state.window is None else state.window.nbytes
            total += sum(a.nbytes for pool in state.pools.values() for a in pool.arrays())
        return total

    def __repr__(self) -> str:
        return f"V4Cache({self.n_layers} layers, {self.seen} tokens seen, {self.nbytes} bytes)"


def v4_cache_numbers(config, seq_len: int) -> int:
    """Numbers a `V4Cache` keeps after seq_len tokens, counted from the config: what `V4Cache.nbytes` measures.

    Per layer: (min(seq_len, W - 1)) x d window keys; then, with compression
    every m tokens, T = seq_len // m entries of d, and the open window's p =
    seq_len mod m tokens' projections and gates, 2 p x width (width d for HCA,
    2 d for CSA); CSA also keeps, once a window has closed, the previous
    window's first halves, 2 m x d, and the same three for its indexer, at
    index_head_dim.
    """
    c, o = config, config.v4
    total = 0
    for layer, ratio in enumerate(o.ratios):
        total += min(seq_len, o.window - 1) * c.head_dim
        if not ratio:
            continue
        csa = o.layer_types[layer] == "compressed_sparse_attention"
        for d in (c.head_dim, o.index_head_dim) if csa else (c.head_dim,):
            total += seq_len // ratio * d + 2 * (seq_len % ratio) * (2 if csa else 1) * d
            total += 2 * ratio * d if csa and seq_len >= ratio else 0
    return total


def _compress(pool: _Pool, kv: np.ndarray, gate: np.ndarray, ratio: int, bias: np.ndarray, norm: np.ndarray,
              eps: float, overlap: bool, rope: RopeScaling, rope_dim: int) -> np.ndarray:
    """Feed the new tokens' projections (n, width) to `pool`; return all its entries (T, d), new ones appended."""
    if pool.pending_kv is not None:
        kv = np.concatenate([pool.pending_kv, kv])  # (p + n, width): the open window's tokens first
        gate = np.concatenate([pool.pending_gate, gate])
    usable = kv.shape[0] // ratio * ratio  # the tokens of closed windows
    pool.pending_kv, pool.pending_gate = kv[usable:], gate[usable:]
    n_before = 0 if pool.entries is None else pool.entries.shape[0]
    if usable:
        chunk_kv, chunk_gate = kv[:usable], gate[:usable]
        if overlap:
            new = overlapping_gated_pool(chunk_kv, chunk_gate, ratio, bias, pool.previous)  # (usable/m, d)
            d = chunk_kv.shape[-1] // 2
            pool.previous = (chunk_kv[-ratio:, :d], chunk_gate[-ratio:, :d] + bias[:, :d])  # (m, d) each
        else:
            new = gated_pool(chunk_kv, chunk_gate, ratio, bias)  # (usable/m, d)
        new = rms_norm(new, norm, eps)  # (T_new, d)
        first = ratio * (n_before + np.arange(new.shape[0]))  # each entry's window starts here
        new = rope_tail(new, first, rope, rope_dim)
        pool.entries = new if pool.entries is None else np.concatenate([pool.entries, new])
    if pool.entries is None:
        pool.entries = np.zeros((0, norm.shape[0]), dtype=kv.dtype)
    return pool.entries


def _closed(positions: np.ndarray, n_entries: int, ratio: int) -> np.ndarray:
    """(n, T) bool: entry w is visible to the query at position t once its window closed, w < (t + 1) // m."""
    return np.arange(n_entries)[None, :] < ((positions + 1) // ratio)[:, None]


def v4_attention(config, p, layer: int, x: np.ndarray, positions: np.ndarray, state: _LayerState):
    """One DeepSeek-V4 attention layer on its normed input x (n, d_model), appending to `state`.

    Returns:
        out (n, d_model); weights over the tokens (h, n, n_kept + n) (n_kept
        keys the state kept from earlier calls, then the n new ones);
        weights over the compressed entries (h, n, T).
    """
    c, o = config, config.v4
    n, h, d = x.shape[0], c.n_heads, c.head_dim
    rope, eps = o.rope(layer), c.rms_norm_eps
    q_res = rms_norm(x @ p.wq_a.T, p.q_norm, eps)  # (n, d_model) x (d_model, r_q) -> (n, r_q)
    q = (q_res @ p.wq_b.T).reshape(n, h, d).transpose(1, 0, 2)  # (n, h*d) -> (n, h, d) -> (h, n, d)
    q = rms_norm(q, np.ones((), dtype=q.dtype), eps)  # per head, no gain
    q = rope_tail(q, positions, rope, o.rope_dim)  # (h, n, d)
    kv = rms_norm(x @ p.wkv.T, p.kv_norm, eps)  # (n, d_model) x (d_model, d) -> (n, d)
    kv = rope_tail(kv, positions, rope, o.rope_dim)
    kept = np.zeros((0, d), dtype=kv.dtype) if state.window is None else state.window
    keys = np.concatenate([kept, kv])  # (n_kept + n, d)
    key_pos = positions[0] - kept.shape[0] + np.arange(keys.shape[0])  # the kept keys are the latest ones
    visible = (key_pos[None, :] <= positions[:, None]) & (key_pos[None, :] > positions[:, None] - o.window)
    state.window = keys[max(keys.shape[0] - (o.window - 1), 0):]  # what the next token's window needs
    ratio = o.ratios[layer]
    entries = np.zeros((0, d), dtype=kv.dtype)
    seen = np.zeros((n, 0), dtype=bool)
    if ratio:
        csa = o.layer_types[layer] == "compressed_sparse_attention"
        pool = state.pools.setdefault("compressor", _Pool())
        kv_in, gate_in = x @ p.c_wkv.T, x @ p.c_wgate.T  # (n, d_model) x (d_model, width) -> (n, width): d or 2d
        entries = _compress(pool, kv_in, gate_in, ratio, p.c_ape, p.c_norm, eps, csa, rope, o.rope_dim)  # (T, d)
        seen = _closed(positions, entries.shape[0], ratio)  # (n, T)
        if csa:  # the indexer's pooling runs on every call, so that its open window stays that of the entries
            seen = seen & _indexer_choice(c, p, x, q_res, positions, state, ratio, seen)
    scale = q.dtype.type(d ** -0.5)
    scores_tokens = np.where(visible, (q @ keys.T) * scale, -np.inf)  # (h, n, d) x (d, n_k) -> (h, n, n_k)
    scores_entries = np.where(seen, (q @ entries.T) * scale, -np.inf)  # (h, n, d) x (d, T) -> (h, n, T)
    weights = sink_softmax(np.concatenate([scores_tokens, scores_entries], axis=-1), p.sinks)  # (h, n, n_k + T)
    out = weights @ np.concatenate([keys, entries])  # (h, n, n_k + T) x (n_k + T, d) -> (h, n, d)
    out = rope_tail(out, -positions, rope, o.rope_dim)  # the values' rotation undone at the query's position
    g = o.o_groups
    grouped = out.transpose(1, 0, 2).reshape(n, g, h * d // g)  # (h, n, d) -> (n, h, d) -> (n, g, h*d/g)
    w_a = p.wo_a.reshape(g, o.o_lora_rank, h * d // g)  # (g*r_o, h*d/g) -> (g, r_o, h*d/g)
    mid = np.einsum("ngi,goi->ngo", grouped, w_a).reshape(n, g * o.o_lora_rank)  # (n, g, r_o) -> (n, g*r_o)
    return mid @ p.wo_b.T, weights[..., :keys.shape[0]], weights[..., keys.shape[0]:]  # (n, d_model)


def _indexer_choice(c, p, x, q_res, positions, state, ratio, seen) -> np.ndarray:
    """(n, T) bool: the compressed entries the lightning indexer picks for each query (index_topk of the closed)."""
    o = c.v4
    n, h_i, d_i = x.shape[0], o.index_n_heads, o.index_head_dim
    pool = state.pools.setdefault("indexer", _Pool())
    kv_in, gate_in = x @ p.i_wkv.T, x @ p.i_wgate.T  # (n, d_model) x (d_model, 2 d_I) -> (n, 2 d_I)
    k_index = _compress(pool, kv_in, gate_in, ratio, p.i_ape, p.i_norm, c.rms_norm_eps, True, o.rope_compress,
                        o.rope_dim)  # (T, d_I)
    if k_index.shape[0] == 0:
        return seen  # no entry yet: nothing to pick
    q_index = (q_res @ p.i_wq_b.T).reshape(n, h_i, d_i).transpose(1, 0, 2)  # (n, h_I*d_I) -> (h_I, n, d_I)
    q_index = rope_tail(q_index, positions, o.rope_compress, o.rope_dim)
    head_weights = (x @ p.i_weights.T) * x.dtype.type(h_i ** -0.5)  # (n, d_model) x (d_model, h_I) -> (n, h_I)
    scores = indexer_scores(q_index, k_index, head_weights, scale=d_i ** -0.5)  # (n, T)
    return top_k_mask(scores, o.index_topk, causal=False, attn_mask=seen, ties="torch")  # (n, T)
