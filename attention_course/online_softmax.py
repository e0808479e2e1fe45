"""The online softmax, one key tile at a time, every state kept (chapter 7).

`flash_attention` never stores the n_q x n_k scores. It visits the keys in
tiles and keeps, for each query, three running quantities (when the scores are
provably too small for exp to overflow, it may drop the max and keep only l
and acc, with m = 0 throughout; the result is the same):

    m    the largest score seen so far            (running max)
    l    sum_j exp(s_j - m) over the keys so far   (running denominator)
    acc  sum_j exp(s_j - m) v_j over the keys so far (running numerator)

When a tile brings a larger score, m grows to m' and everything summed so far
is multiplied by alpha = exp(m - m'), which re-bases it on the new max. After
every tile, acc / l is exactly the attention output over the keys seen so far;
after the last tile it is the full output. `trace_online_softmax` runs this
loop for a small example and records the state after each tile so the book can
show it; it is written for reading, not for speed.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

import numpy as np

from ._checks import check_scale, positive_int
from .attention import check_qkv


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
        rows = [self._HEADER, *self.rows(query, decimals)]
        widths = [max(len(r[c]) for r in rows) for c in range(len(self._HEADER))]
        return "\n".join("  ".join(cell.rjust(w) for cell, w in zip(r, widths)) for r in rows)

    def html_table(self, query: int, decimals: int = 3) -> str:
        """The same table as HTML (for a notebook's display)."""
        head = "".join(f"<th>{html.escape(h)}</th>" for h in self._HEADER)
        body = "".join(
            "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in self.rows(query, decimals)
        )
        caption = f"query {query}: running state after each tile of {self.block_size} keys"
        return (f'<table class="online-softmax-trace"><caption>{html.escape(caption)}</caption>'
                f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")


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
    n_q, n_k, d_v = q.shape[0], k.shape[0], v.shape[1]
    m = np.full(n_q, -np.inf)  # (n_q,) no score seen yet
    l = np.zeros(n_q)  # (n_q,)
    acc = np.zeros((n_q, d_v))  # (n_q, d_v)
    steps = []
    for j0 in range(0, n_k, block_size):
        j1 = min(j0 + block_size, n_k)
        s = (q @ k[j0:j1].T) * scale  # (n_q, d_k) x (d_k, bk) -> (n_q, bk)
        tile_max = s.max(axis=1)  # (n_q,)
        m_new = np.maximum(m, tile_max)  # (n_q,)
        alpha = np.exp(m - m_new)  # (n_q,) exp(-inf) = 0 on the first tile: nothing to re-base
        p = np.exp(s - m_new[:, None])  # (n_q, bk) every exponent <= 0
        l = alpha * l + p.sum(axis=1)  # (n_q,)
        acc = alpha[:, None] * acc + p @ v[j0:j1]  # (n_q, 1) * (n_q, d_v) + (n_q, bk) x (bk, d_v) -> (n_q, d_v)
        steps.append(TileStep(keys=(j0, j1), scores=s, tile_max=tile_max, m_before=m, m=m_new,
                              alpha=alpha, l=l, acc=acc))
        m = m_new
    return OnlineSoftmaxTrace(steps=tuple(steps), block_size=block_size)
