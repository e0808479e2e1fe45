"""The online softmax and the readable tiled loop, the idea behind FlashAttention (book/cost.ipynb).

The plain computation builds the whole (n_q, n_k) score matrix. Here the keys
are visited one tile at a time for each tile of queries, and the softmax is
accumulated on the fly: for each query we keep

    m    the largest score seen so far             (running max)
    l    sum_j exp(s_j - m) over the keys so far    (running denominator)
    acc  sum_j exp(s_j - m) v_j over the keys so far (running numerator)

When a tile brings a larger score, m grows to m' and everything summed so far
is multiplied by alpha = exp(m - m'), which re-bases it on the new max. After
every tile, acc / l is exactly the attention output over the keys seen so far;
after the last tile it is the full output. Memory holds one tile of scores
instead of n_q x n_k; the arithmetic is the same O(n_q n_k d) as the plain
version.

`online_softmax_update` is one step of it, `tiled_attention` the loop over
the tiles of one head, and `trace_online_softmax` runs that loop on a small
example and keeps the state after each tile, so the book can show it. This is
the loop `flash_attention(..., backend="numpy")` runs and the one the tiled
exercise is graded against; the compiled accelerator (`tiled/_compiled`)
computes the same numbers faster.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .._tables import html_table, text_table
from ..core._checks import check_scale, compute_dtype, positive_int, result_dtype
from ..core.attention import check_qkv
from ..core.masks import mask_to_bias


@dataclass(frozen=True)
class OnlineSoftmaxState:
    """The running softmax of a tile of queries over the keys seen so far."""

    m: np.ndarray
    """(bq,) the largest score seen so far (-inf before any)."""
    l: np.ndarray
    """(bq,) the running denominator, sum_j exp(s_j - m)."""
    acc: np.ndarray
    """(bq, d_v) the running numerator, sum_j exp(s_j - m) v_j."""
    alpha: np.ndarray
    """(bq,) exp(m_before - m): the factor the last step re-based the sums by (0 on the first tile)."""

    @classmethod
    def start(cls, n_q: int, d_v: int, dtype=np.float64) -> OnlineSoftmaxState:
        """The state before any key: m = -inf, l = 0, acc = 0."""
        return cls(m=np.full(n_q, -np.inf, dtype), l=np.zeros(n_q, dtype), acc=np.zeros((n_q, d_v), dtype),
                   alpha=np.zeros(n_q, dtype))

    @property
    def output(self) -> np.ndarray:
        """(bq, d_v) acc / l, the attention output over the keys seen so far; zeros where l == 0 (nothing seen)."""
        l = self.l[:, None]  # (bq, 1)
        return np.divide(self.acc, l, out=np.zeros_like(self.acc), where=l != 0)  # NaN in l stays NaN

    @property
    def lse(self) -> np.ndarray:
        """(bq,) m + log(l) = log sum_j exp(s_j), the log-sum-exp of the scores seen so far; -inf where l == 0.

        One number per query that the backward pass needs to rebuild every
        weight from its score: p_j = exp(s_j - lse) (tiled/backward.py).
        """
        log_l = np.log(self.l, out=np.full_like(self.l, -np.inf), where=self.l != 0)  # log 0 = -inf, without a warning
        return np.where(self.l != 0, self.m + log_l, log_l)  # m may be -inf where l == 0: keep -inf, never NaN


def online_softmax_update(state: OnlineSoftmaxState, scores: np.ndarray, values: np.ndarray) -> OnlineSoftmaxState:
    """Fold one tile of scores and its values into the running softmax.

    Args:
        state: the running state of bq queries.
        scores: (bq, bk) this tile's scaled (and masked) scores.
        values: (bk, d_v) the values of this tile's keys.

    Returns:
        The new state; `state` is not modified.
    """
    m_new = np.maximum(state.m, scores.max(axis=-1))  # (bq,) the max over the keys seen so far
    # A row that has seen only -inf has m_new = -inf; shifting by it would give -inf - -inf = NaN.
    # Shift such rows by 0: their exponentials are exactly 0 and their l stays 0.
    shift = np.where(m_new == -np.inf, 0, m_new)  # (bq,)
    p = np.exp(scores - shift[:, None])  # (bq, bk) every exponent <= 0
    alpha = np.exp(state.m - shift)  # (bq,) re-bases what was summed under the old max; exp(-inf) = 0 at first
    l = alpha * state.l + p.sum(axis=-1)  # (bq,)
    acc = alpha[:, None] * state.acc + p @ values  # (bq, 1) * (bq, d_v) + (bq, bk) x (bk, d_v) -> (bq, d_v)
    return OnlineSoftmaxState(m=m_new, l=l, acc=acc, alpha=alpha)


Update = Callable[[OnlineSoftmaxState, np.ndarray, np.ndarray], OnlineSoftmaxState]


def tiles(n: int, block: int) -> list[slice]:
    """Consecutive slices of at most `block` positions covering 0..n-1 (the last may be shorter)."""
    return [slice(start, min(start + block, n)) for start in range(0, n, block)]


def keys_seen(rows: slice, n_k: int, is_causal: bool) -> int:
    """How many keys (0, 1, ...) the queries in `rows` can see: all, or under the causal mask up to the last query.

    Under the causal mask query i sees keys 0..i, so keys from `rows.stop` on
    are hidden from every query of the tile and their tiles are not computed.
    """
    return min(n_k, rows.stop) if is_causal else n_k


def tile_scores(q_tile: np.ndarray, k_tile: np.ndarray, scale: float, mask_tile: np.ndarray | None,
                rows: slice, keys: slice, is_causal: bool) -> np.ndarray:
    """One tile of scaled, masked scores: (q_tile k_tile^T) * scale, -inf where a key is hidden.

    Args:
        q_tile: (bq, d_k) the queries of `rows`; k_tile: (bk, d_k) the keys of `keys`.
        scale: multiplies the scores.
        mask_tile: None, or this tile of the (n_q, n_k) mask: (bq, bk), boolean or float.
        rows, keys: which queries and keys the tile holds (for the causal diagonal).
        is_causal: hide key j from query i when j > i.

    Returns:
        (bq, bk) scores in q_tile's dtype. The forward pass and the backward
        pass (which recomputes them) both call this, so they see the same numbers.
    """
    s = (q_tile @ k_tile.T) * scale  # (bq, d_k) x (d_k, bk) -> (bq, bk)
    if mask_tile is not None:
        s = s + mask_to_bias(mask_tile, s.dtype)  # masked scores -> -inf
    if is_causal and keys.stop - 1 > rows.start:  # the tile reaches past the diagonal
        later = np.arange(keys.start, keys.stop)[None, :] > np.arange(rows.start, rows.stop)[:, None]
        s = np.where(later, -np.inf, s)  # (bq, bk): key j hidden from query i when j > i
    return s
def kv_batch(batch: tuple, groups: int) -> tuple:
    """The batch shape of key and value when each of their heads serves `groups` query heads.

    batch: the broadcast leading dims of the queries, heads last (..., h_q);
    with groups = h_q / h_kv > 1 the key/value batch is (..., h_kv).
    """
    return batch if groups == 1 else batch[:-1] + (batch[-1] // groups,)


def kv_index(b: tuple, groups: int) -> tuple:
    """The key/value batch index that query batch index `b` reads: query head i uses key/value head i // groups."""
    return b if groups == 1 else b[:-1] + (b[-1] // groups,)


def tiled_attention(q: np.ndarray, k: np.ndarray, v: np.ndarray, block_q: int, block_k: int, *, scale: float,
                    mask: np.ndarray | None = None, is_causal: bool = False,
                    update: Update = online_softmax_update, out: np.ndarray | None = None,
                    lse: np.ndarray | None = None) -> np.ndarray:
    """softmax(q k^T * scale + mask) v for one head, one tile of queries and keys at a time.

    Args:
        q: (n_q, d_k) queries; k: (n_k, d_k) keys; v: (n_k, d_v) values; checked, of one float dtype.
        block_q, block_k: queries and keys per tile.
        scale: multiplies the scores.
        mask: None, or a (n_q, n_k) boolean (True = may attend) or float mask (a broadcast view is fine).
        is_causal: hide key j from query i when j > i; key tiles after a query tile's last query are skipped.
        update: the online-softmax step. `trace_online_softmax` passes one that also records each state;
            the tiled exercise's grader passes mistaken ones to predict what a loop with that mistake returns.
        out: None, or an (n_q, d_v) array to write the result into.
        lse: None, or an (n_q,) array that receives each query's log-sum-exp of its scores
            (`OnlineSoftmaxState.lse`; -inf for a query with nothing to attend to).

    Returns:
        (n_q, d_v) in q's dtype (or `out`); zeros for a query with nothing to attend to.
    """
    n_q, n_k, d_v = q.shape[0], k.shape[0], v.shape[1]
    out = np.empty((n_q, d_v), dtype=q.dtype) if out is None else out
    for rows in tiles(n_q, block_q):
        state = OnlineSoftmaxState.start(rows.stop - rows.start, d_v, q.dtype)
        for keys in tiles(keys_seen(rows, n_k, is_causal), block_k):
            s = tile_scores(q[rows], k[keys], scale, None if mask is None else mask[rows, keys], rows, keys, is_causal)
            state = update(state, s, v[keys])
        out[rows] = state.output
        if lse is not None:
            lse[rows] = state.lse
    return out


@dataclass(frozen=True)
class TileStep:
    """The running state of every query after one key tile."""

    keys: tuple[int, int]
    """(start, stop): this tile holds keys start..stop-1."""
    scores: np.ndarray
    """(n_q, bk) the scaled scores of this tile, the only scores held in memory."""
    tile_max: np.ndarray
    """(n_q,) the largest score in this tile."""
    m_before: np.ndarray
    """(n_q,) the running max before the tile (-inf before the first)."""
    m: np.ndarray
    """(n_q,) the running max after it: max(m_before, tile_max)."""
    alpha: np.ndarray
    """(n_q,) exp(m_before - m): the factor that re-bases the old sums (0 on the first tile)."""
    l: np.ndarray
    """(n_q,) the running denominator after the tile."""
    acc: np.ndarray
    """(n_q, d_v) the running numerator after the tile."""

    @property
    def output(self) -> np.ndarray:
        """(n_q, d_v) acc / l: the attention output over the keys seen so far."""
        return self.acc / self.l[:, None]  # (n_q, d_v) / (n_q, 1)


@dataclass(frozen=True)
class OnlineSoftmaxTrace:
    """All the tiles of one online-softmax pass."""

    steps: tuple[TileStep, ...]
    """One TileStep per key tile, in order."""
    block_size: int
    """Keys per tile."""

    @property
    def output(self) -> np.ndarray:
        """(n_q, d_v) the final result: acc / l after the last tile."""
        return self.steps[-1].output

    def rows(self, query: int, decimals: int = 3) -> list[tuple[str, ...]]:
        """The state of one query after each tile, as strings for a table."""
        def fmt(x) -> str:
            return "-inf" if x == -np.inf else f"{x:.{decimals}f}"

        out = []
        for t, st in enumerate(self.steps):
            est = ", ".join(fmt(v) for v in st.output[query])
            out.append((
                str(t + 1), f"{st.keys[0]}..{st.keys[1] - 1}", fmt(st.m_before[query]), fmt(st.tile_max[query]),
                fmt(st.m[query]), fmt(st.alpha[query]), fmt(st.l[query]), f"[{est}]",
            ))
        return out

    _HEADER = ("tile", "keys", "m before", "tile max", "m after", "alpha", "l", "acc / l")

    def table(self, query: int, decimals: int = 3) -> str:
        """A plain-text table of `query`'s running state, tile by tile."""
        return text_table(self._HEADER, self.rows(query, decimals))

    def html_table(self, query: int, decimals: int = 3) -> str:
        """The same table as HTML (for a notebook's display)."""
        caption = f"query {query}: running state after each tile of {self.block_size} keys"
        return html_table(self._HEADER, self.rows(query, decimals), caption, "online-softmax-trace")


def trace_online_softmax(query, key, value, block_size: int = 4, scale=None) -> OnlineSoftmaxTrace:
    """Run the online softmax over key tiles, keeping the state after each tile.

    Args:
        query: (n_q, d_k) queries (all query rows are processed together; in
            `flash_attention` they are also split into tiles, independently).
        key: (n_k, d_k) keys.
        value: (n_k, d_v) values.
        block_size: keys per tile; the last tile may be shorter.
        scale: multiplies the scores; defaults to 1/sqrt(d_k).

    Returns:
        An OnlineSoftmaxTrace; its `output` equals
        `scaled_dot_product_attention(query, key, value, scale=scale)` up to rounding.
    """
    q, k, v = check_qkv(query, key, value)
    if q.ndim != 2 or k.ndim != 2 or v.ndim != 2:
        raise ValueError(
            "trace_online_softmax takes one head: query (n_q, d_k), key (n_k, d_k), value (n_k, d_v); "
            f"got shapes {q.shape}, {k.shape}, {v.shape}"
        )
    block_size = positive_int(block_size, "block_size")
    scale = check_scale(scale, q.shape[-1])
    dtype = compute_dtype(result_dtype(q, k, v))  # float16 and bfloat16 are traced in float32
    steps: list[TileStep] = []

    def recording_update(state: OnlineSoftmaxState, scores: np.ndarray, values: np.ndarray) -> OnlineSoftmaxState:
        new = online_softmax_update(state, scores, values)
        start = steps[-1].keys[1] if steps else 0
        steps.append(TileStep(keys=(start, start + scores.shape[1]), scores=scores, tile_max=scores.max(axis=1),
                              m_before=state.m, m=new.m, alpha=new.alpha, l=new.l, acc=new.acc))
        return new

    tiled_attention(q.astype(dtype, copy=False), k.astype(dtype, copy=False), v.astype(dtype, copy=False),
                    block_q=q.shape[0], block_k=block_size, scale=scale, update=recording_update)
    return OnlineSoftmaxTrace(steps=tuple(steps), block_size=block_size)
