"""One tile of queries against all the keys it can see, compiled (the inner loop of `driver`).

`driver.attention` splits the queries into tiles and hands each tile to
`attend_query_tile`, which runs the online softmax of
`tiled.online_softmax` over the key tiles:

    for each key tile:
        S = Q_tile K_tile^T                       BLAS gemm          (bq, bk)
        mask S (causal diagonal, bool or float)   compiled loop
        S = 2**(S - m_new), m, l, alpha updated   exp2               (bq, bk)
        out = out * alpha + S V_tile              BLAS gemm, beta=1  (bq, d_v)
    out /= l

The scores are in base 2: Q_tile arrives multiplied by log2(e) along with the
scale, so 2**S is exp of the natural scores (see `exp2`).

Written as Python around NumPy calls, the same loop pays for slicing and
dispatch between the calls and its threads take turns with the GIL at every
tile, which keeps the tiles large. Compiled, a whole query tile is one call
that holds no GIL, and the products write straight into the scratch tile and
the output (`gemm.matmul_into`).
"""

from __future__ import annotations

import numpy as np
from numba import njit, types
from numba.extending import overload

from .exp2 import LOG2_E, exp_rows, exp_rows_shifted
from .gemm import matmul_into

_COMPILE = dict(nogil=True, cache=True)


def _masked(score, allowed):
    """One masked score, inside compiled code only."""
    raise NotImplementedError("_masked runs inside numba-compiled functions only")


@overload(_masked)
def _masked_for(score, allowed):
    """A bool mask hides a score (-inf where False); a float mask is added to it, in base 2 like the score."""
    if isinstance(allowed, types.Boolean):
        return lambda score, allowed: score if allowed else -np.inf
    log2_e = np.float32(LOG2_E) if allowed == types.float32 else np.float64(LOG2_E)
    return lambda score, allowed: score + allowed * log2_e


@njit(**_COMPILE)
def _mask_tile(s, mask, first_query, first_key, is_causal):
    """Mask one tile of scores in place.

    Args:
        s: (bq, bk) scores of queries first_query.. and keys first_key..
        mask: None, or (n_q, n_k) bool or float in s's dtype (a broadcast view is fine).
        is_causal: also hide key j from query i when j > i.
    """
    bq, bk = s.shape
    if mask is not None:
        for i in range(bq):
            for j in range(bk):
                s[i, j] = _masked(s[i, j], mask[first_query + i, first_key + j])
    if is_causal and first_key + bk - 1 > first_query:  # the tile reaches past the diagonal
        for i in range(bq):
            for j in range(max(first_query + i + 1 - first_key, 0), bk):
                s[i, j] = -np.inf


@njit(**_COMPILE)
def attend_query_tile(q_tile, k, v, mask, first_query, n_keys, is_causal, keep_max, block_k, scratch, m, l, alpha, out):
    """The attention output of one tile of queries, by the online softmax over key tiles.

    Args:
        q_tile: (bq, d_k) queries first_query.. first_query + bq - 1, already
            multiplied by the scale and log2(e): its scores are in base 2.
        k: (n_k, d_k) keys; v: (n_k, d_v) values; row-major, q_tile's dtype.
        mask: None, or (n_q, n_k) bool or float in q_tile's dtype (broadcast
            views are fine); a float mask is in natural units, like a score.
        n_keys: keys 0.. n_keys - 1 are visited, in tiles of block_k; the
            caller leaves out the keys a causal mask hides from the whole tile.
        is_causal: hide key j from query i when j > i.
        keep_max: True keeps a running max (2**(score - max)); False takes
            2**score as it is, for scores the caller has shown to be small.
        block_k: keys per tile.
        scratch: (>= bq, >= block_k) C-contiguous, holds one tile of scores.
        m, l, alpha: (>= bq,) running max, running denominator, rescale factors.
        out: (bq, d_v) row-major; receives softmax(scores) @ V, zeros for a
            query with nothing to attend to.

    Returns:
        How many key tiles were computed.
    """
    bq, d_v = out.shape
    n_tiles = 0
    # Explicit loops here rather than array expressions (out[:] = 0, out[i] *= a): numba
    # compiles each array expression into a kernel of its own, which made the first call
    # on a machine take several seconds longer.
    for i in range(bq):
        m[i] = -np.inf
        l[i] = 0
        for j in range(d_v):
            out[i, j] = 0
    for first_key in range(0, n_keys, block_k):
        last_key = min(first_key + block_k, n_keys)
        bk = last_key - first_key
        s = scratch[:bq, :bk]
        matmul_into(q_tile, k[first_key:last_key].T, s, False)  # (bq, d_k) x (d_k, bk) -> (bq, bk)
        _mask_tile(s, mask, first_query, first_key, is_causal)
        if keep_max:
            # m_new = max(m, row max); s = 2**(s - m_new); alpha = 2**(m - m_new); l = l * alpha + row sums
            exp_rows_shifted(scratch, bq, bk, m, l, alpha)
            for i in range(bq):
                for j in range(d_v):
                    out[i, j] *= alpha[i]  # what was summed under the old max, rescaled to the new one
        else:
            exp_rows(scratch, bq, bk, l)  # s = 2**s; l += row sums
        matmul_into(s, v[first_key:last_key], out, True)  # out += (bq, bk) x (bk, d_v) -> (bq, d_v)
        n_tiles += 1
    for i in range(bq):
        for j in range(d_v):  # a row that saw only -inf (l == 0) attends to nothing and gets zeros, as in torch
            out[i, j] = 0 if l[i] == 0 else out[i, j] / l[i]
    return n_tiles
