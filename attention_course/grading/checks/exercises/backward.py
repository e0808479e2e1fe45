"""Check for exercise 11: the tiled backward pass of one tile of queries (book/backward.ipynb).

The student writes `backward_query_tile(Q, K, V, O, dO, lse, mask, block_size)`:
the gradients that one tile of queries contributes, visiting the keys one tile
at a time and rebuilding each tile's weights from the stored log-sum-exp, as
FlashAttention-2's backward does. The reference is the package's own
`tiled.backward.backward_query_tile`. As for exercise 8, one input is large
enough that the (n_q, n_k) matrix of this tile's scores would take megabytes,
and the call's peak memory is measured.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ....core.attention import attention_weights
from ....tiled.backward import backward_query_tile, flash_attention_forward, tile_weights
from ....tiled.online_softmax import tile_scores, tiles
from ..engine.calls import error_line
from ..engine.cases import Case, Rngs, generated, random_qkv
from ..engine.check import Check
from ..engine.code import Code
from ..engine.run import check_in_process
from ..engine.shrink import Sizes
from ..engine.premises import exp_limits
from ..engine.mistakes import Lead, Mistake, Premise, code_uses_infinity
from ..engine.results import CheckResult

PARAMS = ("Q", "K", "V", "O", "dO", "lse", "mask", "block_size")
MEMORY_FRACTION = 0.25
"""Above what it returns, the measured call may use this fraction of the n_q x n_k float64 score matrix."""

FORGETS_D = Mistake(
    "forgets_d",
    "dS is not P * dP. Each row of weights sums to 1, so moving one score moves the others: the softmax's "
    "Jacobian subtracts, in every row, the weighted average of dP, D = sum_j p_j dP_j. Computed from what "
    "the forward pass kept, D is one number per query: rowsum(O * dO).",
)
UNNORMALISED_P = Mistake(
    "unnormalised_p",
    "The weights rebuilt in each key tile must be the forward pass's weights, which sum to 1 over all the "
    "keys. exp(score) alone, or exp(score - this tile's max), is not normalised; subtracting the query's "
    "log-sum-exp (lse) is what divides by the whole row's sum, without seeing the whole row.",
)
MISSING_SCALE = Mistake(
    "missing_scale",
    "The scores were S = Q K^T * scale, so by the chain rule every path from a score back to Q or to K "
    "carries that scale once more: both dQ and dK need it.",
)
WRONG_AXIS = Mistake(
    "wrong_axis",
    "dK and dV have one row per key: each of their rows sums over the queries of the tile (the weight "
    "matrix transposed), while dQ has one row per query and sums over the keys. Check which axis each "
    "product contracts.",
)
SHIFT_BY_ZERO = Lead(
    "inf_minus_inf",
    "If exp(score - lse) was taken for it, its scores and its lse are all -inf, and exp(-inf - (-inf)) is exp(nan): "
    "shift its scores by 0 instead of by lse.",
    code_uses_infinity,
)
NAN_FOR_EMPTY_ROWS = Mistake(
    "nan_for_empty_rows",
    "nan where a query can attend to nothing (its mask row is all False, so its lse is -inf). Such a query has "
    "weights 0 (its output is 0 whatever Q, K and V are), so it must contribute nothing.",
    leads=(SHIFT_BY_ZERO,),
)
NAN_WITH_EMPTY_ROWS = Mistake(
    "nan_for_empty_rows",
    "The gradients have nan, and this input has a query that can attend to nothing (its mask row is all "
    "False, so its lse is -inf): such a query has weights 0 and must contribute nothing.",
    leads=(SHIFT_BY_ZERO, Lead("mask_after_exp", "If the mask was applied after exp (the weights multiplied by it), "
                               "exp(score - (-inf)) is inf, and inf × 0 is nan: put -inf at hidden scores before exp.",
                               lambda case, code: True)),
)
def _hidden_far_above_lse(case: Case) -> bool:
    """Some hidden key's score lies above its query's finite lse by more than exp's limit: exp(S - lse) of it
    overflows. (A query whose lse is -inf attends to nothing: what its nan says is another hint's.)"""
    Q, K, _, _, _, lse, mask = case.args[:7]
    if mask is None:
        return False
    Q, K = (np.asarray(a, dtype=np.float64) for a in (Q, K))
    with np.errstate(all="ignore"):
        above = Q @ K.T * _scale(Q) - np.asarray(lse, dtype=np.float64)[:, None]  # (n_q, n_k)
    hidden = ~np.asarray(mask, dtype=bool) & np.isfinite(np.asarray(lse, dtype=np.float64))[:, None]
    return bool(np.any(above[hidden] > exp_limits(case)[0]))


def _lse_of_minus_inf(case: Case) -> bool:
    """Some query can attend to nothing: its lse is -inf."""
    return bool(np.any(np.isneginf(np.asarray(case.args[5], dtype=np.float64))))


MASKED_AFTER_EXP = Mistake(
    "masked_after_exp",
    "A hidden key must get weight exactly 0 whatever its score. This input has a hidden key that scores far above "
    "its query's lse, and these are the gradients a mask applied after exp gives (exp(S - lse) multiplied by the "
    "mask): exp of that score overflows to inf, and inf × 0 is nan. Put -inf at the hidden scores before exp, as "
    "the forward pass did.",
    premise=Premise("hidden_key_far_above_lse", _hidden_far_above_lse),
)
BUILDS_FULL_ROW = Mistake(
    "builds_full_matrix",
    "The gradients are right, but the call's peak memory was a large part of the whole (n_q, n_k) matrix of "
    "this tile's scores: if the function builds that matrix (or something as large), that is why. Visit the "
    "keys one tile of block_size at a time: rebuild the scores and weights of that tile only, and add its "
    "share to dQ, dK and dV.",
)


def _scale(Q) -> float:
    return 1 / np.sqrt(Q.shape[1])


def _reference(Q, K, V, O, dO, lse, mask, block_size):
    """The package's loop over the key tiles of one tile of queries."""
    return backward_query_tile(Q, K, V, O, dO, lse, block_size, scale=_scale(Q), mask=mask)


def _from_weights(Q, K, V, O, dO, p, *, use_d=True, scale_dq=True, scale_dk=True, d_sign=-1.0):
    """dQ, dK, dV from the full (n_q, n_k) weights p, with the chosen parts left out (what a mistake computes)."""
    scale = _scale(Q)
    d = np.sum(O * dO, axis=1, keepdims=True) if use_d else 0.0  # (n_q, 1)
    dv = p.T @ dO  # (n_k, n_q) x (n_q, d_v) -> (n_k, d_v)
    ds = p * (dO @ V.T + d_sign * d)  # (n_q, n_k)
    dq = ds @ K * (scale if scale_dq else 1.0)  # (n_q, n_k) x (n_k, d_k) -> (n_q, d_k)
    dk = ds.T @ Q * (scale if scale_dk else 1.0)  # (n_k, n_q) x (n_q, d_k) -> (n_k, d_k)
    return dq, dk, dv


def _weights(Q, K, mask):
    """The forward pass's (n_q, n_k) weights, by the package's plain attention."""
    return attention_weights(Q, K, attn_mask=mask)


def _scores(Q, K, mask):
    """The (n_q, n_k) scaled, masked scores as the tiled loop computes them."""
    every = slice(0, K.shape[0])
    return tile_scores(Q, K, _scale(Q), mask, slice(0, Q.shape[0]), every, False)


def _forgets_d(Q, K, V, O, dO, lse, mask, b):
    return _from_weights(Q, K, V, O, dO, _weights(Q, K, mask), use_d=False)


def _exp_of_scores(Q, K, V, O, dO, lse, mask, b):
    """exp(score): no log-sum-exp subtracted."""
    return _from_weights(Q, K, V, O, dO, np.exp(_scores(Q, K, mask)))


def _exp_minus_tile_max(Q, K, V, O, dO, lse, mask, b):
    """exp(score - the max of the key tile's scores), tile by tile."""
    s = _scores(Q, K, mask)
    p = np.zeros_like(s)
    for keys in tiles(K.shape[0], b):
        m = s[:, keys].max(axis=1, keepdims=True)  # (n_q, 1)
        p[:, keys] = tile_weights(s[:, keys], m[:, 0])
    return _from_weights(Q, K, V, O, dO, p)


def _d_added(Q, K, V, O, dO, lse, mask, b):
    return _from_weights(Q, K, V, O, dO, _weights(Q, K, mask), d_sign=1.0)


def _mask_ignored(Q, K, V, O, dO, lse, mask, b):
    """Weights rebuilt from every key's score, the mask forgotten (the lse is the masked one)."""
    if mask.all() or np.any(lse == -np.inf):
        return None
    return _from_weights(Q, K, V, O, dO, np.exp(Q @ K.T * _scale(Q) - lse[:, None]))


def _weights_without_scale(Q, K, V, O, dO, lse, mask, b):
    """Weights rebuilt from Q K^T without the scale (the rest of the gradient scaled as it should be)."""
    if np.any(lse == -np.inf):
        return None
    s = np.where(mask, Q @ K.T, -np.inf)  # (n_q, n_k)
    return _from_weights(Q, K, V, O, dO, np.exp(s - lse[:, None]))


def _dq_of_last_tile(Q, K, V, O, dO, lse, mask, b):
    """dQ assigned, not added, in each key tile: only the last key tile's share is left."""
    dq, dk, dv = _reference(Q, K, V, O, dO, lse, mask, b)
    last = list(tiles(K.shape[0], b))[-1]
    if last == slice(0, K.shape[0]):
        return None  # one key tile: assigning is adding
    dq_last, _, _ = _reference(Q, K[last], V[last], O, dO, lse, mask[:, last], b)
    return dq_last, dk, dv


def _dv_from_ds(Q, K, V, O, dO, lse, mask, b):
    dq, dk, dv = _reference(Q, K, V, O, dO, lse, mask, b)
    p = tile_weights(_scores(Q, K, mask), lse)
    ds = p * (dO @ V.T - np.sum(O * dO, axis=1, keepdims=True))  # (n_q, n_k)
    return dq, dk, ds.T @ dO  # (n_k, n_q) x (n_q, d_v) -> (n_k, d_v)


def _no_scale(dq_scaled: bool, dk_scaled: bool):
    def predict(Q, K, V, O, dO, lse, mask, b):
        return _from_weights(Q, K, V, O, dO, _weights(Q, K, mask), scale_dq=dq_scaled, scale_dk=dk_scaled)
    return predict


def _wrong_axis(dk_wrong: bool, dv_wrong: bool):
    """dK or dV of a key tile computed as dS @ Q or P @ dO (contracting the keys): defined for square tiles only."""
    def predict(Q, K, V, O, dO, lse, mask, b):
        dq, dk, dv = _reference(Q, K, V, O, dO, lse, mask, b)
        s = _scores(Q, K, mask)
        p = tile_weights(s, lse)
        ds = p * (dO @ V.T - np.sum(O * dO, axis=1, keepdims=True))  # (n_q, n_k)
        dk, dv = dk.copy(), dv.copy()
        for keys in tiles(K.shape[0], b):
            if dk_wrong:
                dk[keys] = _scale(Q) * (ds[:, keys] @ Q)  # (n_q, bk) x (n_q, d_k): only when bk == n_q
            if dv_wrong:
                dv[keys] = p[:, keys] @ dO  # (n_q, bk) x (n_q, d_v): only when bk == n_q
        return dq, dk, dv
    return predict


def _no_guard_for_empty_rows(Q, K, V, O, dO, lse, mask, b):
    """exp(score - lse) taken as it is: nan for a query whose lse is -inf."""
    if not np.any(lse == -np.inf):
        return None
    with np.errstate(invalid="ignore"):
        p = np.exp(_scores(Q, K, mask) - lse[:, None])
    return _from_weights(Q, K, V, O, dO, p)


def _from_ds(Q, K, dO, p, ds):
    """dQ, dK, dV from the weights p and a (possibly wrong) dS, both (n_q, n_k)."""
    scale = _scale(Q)
    return scale * (ds @ K), scale * (ds.T @ Q), p.T @ dO  # (n_q, d_k), (n_k, d_k), (n_k, d_v)


def _d_per_tile(Q, K, V, O, dO, lse, mask, b):
    """D recomputed in each key tile from that tile's weights: rowsum(P_tile * dP_tile), the tile's share only."""
    if K.shape[0] <= b:
        return None  # one key tile: its share is the whole of D
    p = tile_weights(_scores(Q, K, mask), lse)  # (n_q, n_k)
    dp = dO @ V.T  # (n_q, d_v) x (d_v, n_k) -> (n_q, n_k)
    ds = np.zeros_like(p)
    for keys in tiles(K.shape[0], b):
        d = np.sum(p[:, keys] * dp[:, keys], axis=1, keepdims=True)  # (n_q, 1) this tile's part of D
        ds[:, keys] = p[:, keys] * (dp[:, keys] - d)
    return _from_ds(Q, K, dO, p, ds)


def _d_broadcast_from_1d(Q, K, V, O, dO, lse, mask, b):
    """D of shape (n_q,), subtracted from the (n_q, bk) tile: it lines up with the keys, so it runs only if bk = n_q."""
    p = tile_weights(_scores(Q, K, mask), lse)  # (n_q, n_k)
    dp = dO @ V.T
    d = np.sum(O * dO, axis=1)  # (n_q,), no keepdims
    ds = np.zeros_like(p)
    for keys in tiles(K.shape[0], b):
        if keys.stop - keys.start != Q.shape[0]:
            return None  # (n_q, bk) - (n_q,) raises unless bk = n_q
        ds[:, keys] = p[:, keys] * (dp[:, keys] - d[None, :])  # D of query j subtracted in column j
    return _from_ds(Q, K, dO, p, ds)


def _tile_transposed(dk: bool, dv: bool):
    """dK or dV of each key tile computed transposed ((d, bk), an einsum's output indices swapped), which fits the
    tile's (bk, d) rows only when bk = d."""
    def predict(Q, K, V, O, dO, lse, mask, b):
        dq, dK, dV = _reference(Q, K, V, O, dO, lse, mask, b)
        dK, dV = dK.copy(), dV.copy()
        for keys in tiles(K.shape[0], b):
            width = keys.stop - keys.start
            if (dk and width != K.shape[1]) or (dv and width != V.shape[1]):
                return None
            if dk:
                dK[keys] = dK[keys].T  # (bk, d_k) holding its transpose
            if dv:
                dV[keys] = dV[keys].T
        return dq, dK, dV
    return predict


def _masked_after_exp(guarded: bool):
    """Weights exp(S - lse) from the unmasked scores, then multiplied by the mask (guarded: shift 0 for lse = -inf)."""
    def predict(Q, K, V, O, dO, lse, mask, b):
        shift = np.where(lse == -np.inf, 0.0, lse) if guarded else lse
        with np.errstate(all="ignore"):
            p = np.exp(Q @ K.T * _scale(Q) - shift[:, None]) * mask  # (n_q, n_k)
        return _from_weights(Q, K, V, O, dO, p)
    return predict


def _case(rngs, seed, label, n_q, n_k, d_k, d_v, b, *, mask="", dtype="", scale=1.0, setup="", **kwargs) -> Case:
    """Q, K, V and dO drawn from `rngs(seed)`; O and lse from the package's tiled forward pass.

    `mask` is the code that makes the (n_q, n_k) mask (default: every key visible), `setup` lines run before it
    (to give a key a chosen score); the student is shown all of this code, so the input can be rebuilt in a
    notebook.
    """
    cast = f".astype(np.{dtype})" if dtype else ""
    times = f" * {scale:g}" if scale != 1.0 else ""
    code = (
        f"rng = np.random.default_rng({seed})\n"
        f"Q = (rng.standard_normal(({n_q}, {d_k})){times}){cast}\n"
        f"K = (rng.standard_normal(({n_k}, {d_k})){times}){cast}\n"
        f"V = rng.standard_normal(({n_k}, {d_v})){cast}\n"
        + setup +
        f"mask = {mask or f'np.ones(({n_q}, {n_k}), dtype=bool)'}\n"
        "from attention_course.tiled.backward import flash_attention_forward\n"
        f"O, lse = flash_attention_forward(Q, K, V, attn_mask=mask, block_size={b})\n"
        f"dO = rng.standard_normal(({n_q}, {d_v})){cast}\n"
        f"block_size = {b}"
    )
    return generated(label, code, PARAMS, rngs, **kwargs)


FAR_ABOVE = ("Q = np.abs(Q) + 0.5  # every coordinate positive\n"
             "K[{key}] = 1000.0  # key {key} scores far above the others...\n")


def _cases(rngs: Rngs) -> list[Case]:
    """Every property on a visible input (several key tiles, a short last tile, one tile, a causal mask, the
    memory budget, a query that sees nothing, float32 kept, one query, odd sizes, large scores, float64's digits,
    a hidden key far above the others), then hidden inputs that vary the values."""
    return [
        _case(rngs, 111, "4 queries, 8 keys, blocks of 4", 4, 8, 4, 3, 4),
        _case(rngs, 112, "4 queries, 10 keys, blocks of 4 (the last key tile is shorter)", 4, 10, 4, 3, 4),
        _case(rngs, 113, "one key tile holds every key: 3 queries, 5 keys, blocks of 8", 3, 5, 4, 2, 8),
        _case(rngs, 114, "a causal mask: queries 3..8 of 9, blocks of 3", 6, 9, 4, 3, 3,
              mask="np.arange(9)[None, :] <= np.arange(3, 9)[:, None]  # rows 3..8 of a causal mask"),
        _case(rngs, 115, "256 queries, 4096 keys, blocks of 64", 256, 4096, 4, 4, 64, measure_memory=True,
              note="every key visible; the peak memory of this call is measured"),
        _case(rngs, 116, "a query that can attend to nothing (its mask row is all False)", 5, 7, 4, 3, 3,
              mask="(rng.random((5, 7)) < 0.7) & (np.arange(5) != 2)[:, None]  # query 2 sees nothing"),
        _case(rngs, 117, "float32, 5 queries, 7 keys, blocks of 3", 5, 7, 4, 3, 3, dtype="float32"),
        _case(rngs, 118, "one query, one key, blocks of 1", 1, 1, 3, 2, 1),
        _case(rngs, 119, "odd sizes: 7 queries, 13 keys, d_k = 5, d_v = 3, blocks of 4", 7, 13, 5, 3, 4),
        _case(rngs, 120, "large scores, 4 queries, 12 keys, blocks of 4", 4, 12, 4, 3, 4, scale=6.0),
        # hidden keys get weight exactly 0 whatever their scores
        _case(rngs, 122, "a hidden key scoring far above every query's lse: 4 queries, 8 keys, blocks of 4",
              4, 8, 4, 3, 4, setup=FAR_ABOVE.format(key=5),
              mask="np.arange(8)[None, :] != np.full((4, 1), 5)  # ... and hidden from every query"),
        _case(rngs, 131, "5 queries, 8 keys, blocks of 4", 5, 8, 3, 4, 4, hidden=True),
        _case(rngs, 132, "3 queries, 7 keys, blocks of 3 (the last key tile is shorter)", 3, 7, 4, 2, 3, hidden=True),
        _case(rngs, 133, "a query that can attend to nothing, 4 queries, 6 keys, blocks of 4", 4, 6, 4, 3, 4,
              mask="(rng.random((4, 6)) < 0.7) & (np.arange(4) != 0)[:, None]  # query 0 sees nothing", hidden=True),
        _case(rngs, 134, "float32, 4 queries, 9 keys, blocks of 4", 4, 9, 4, 2, 4, dtype="float32", hidden=True),
        _case(rngs, 135, "one query, three keys, blocks of 2", 1, 3, 2, 2, 2, hidden=True),
        _case(rngs, 136, "large scores, 3 queries, 8 keys, blocks of 3", 3, 8, 4, 2, 3, scale=6.0, hidden=True),
        _case(rngs, 137, "hidden keys scoring far above every query's lse, other values", 3, 7, 4, 2, 3,
              setup=FAR_ABOVE.format(key=1), mask="np.arange(7)[None, :] != np.full((3, 1), 1)", hidden=True),
    ] + _assumption_cases_backward(rngs)


def _assumption_cases_backward(rngs: Rngs) -> list[Case]:
    """Inputs that break what a tiled backward could silently assume."""
    rng = rngs(121)
    return [
        # float64 kept: scores near 1000 that differ by about 1, so float32 (steps of 6e-5) moves the weights.
        _large_offset_case(rng, "float64 precision: scores near 1000, 3 queries, 5 keys, blocks of 2"),
        _large_offset_case(rng, "float64 precision: other scores near 1000", hidden=True),
    ]


def _large_offset_case(rng, label: str, hidden: bool = False) -> Case:
    """Scores near 1000 from a shared first coordinate: every weight depends on differences of about 1."""
    Q, K, V = random_qkv(rng, 3, 5, 4, 2)
    Q[:, 0] = K[:, 0] = np.sqrt(2000.0)  # q0 k0 / sqrt(4) = 1000
    mask = np.ones((3, 5), dtype=bool)
    O, lse = flash_attention_forward(Q, K, V, attn_mask=mask, block_size=2)
    dO = rng.standard_normal((3, 2))
    return Case(label, (Q, K, V, O, dO, lse, mask, 2), hidden=hidden, precision=(1e-6, 1e-9))


def _forward_again(args: dict) -> dict:
    """O and lse of a cut-down input, from the package's tiled forward (they depend on every other argument)."""
    O, lse = flash_attention_forward(args["Q"], args["K"], args["V"], attn_mask=args["mask"], block_size=args["block_size"])
    return {**args, "O": O, "lse": lse}


def _memory(case: Case, obs) -> tuple[str, Mistake] | None:
    """Fail right gradients whose peak memory, above what they return, grows like the whole tile row."""
    if not case.measure_memory:
        return None
    Q, K = case.args[0], case.args[1]
    matrix = Q.shape[0] * K.shape[0] * 8
    returned = sum(x.nbytes for x in obs.value) if isinstance(obs.value, tuple) else 0
    budget = returned + MEMORY_FRACTION * matrix
    if obs.peak_bytes is None:
        return "its memory could not be measured", BUILDS_FULL_ROW
    if obs.peak_bytes > budget:
        return (
            f"right values, but the call's peak memory was {obs.peak_bytes / 1e6:.1f} MB; the gradients it returns "
            f"take {returned / 1e6:.1f} MB and the {Q.shape[0]} x {K.shape[0]} matrix of scores alone "
            f"{matrix / 1e6:.1f} MB: a tiled version needs under {budget / 1e6:.1f} MB",
            BUILDS_FULL_ROW,
        )
    return None


def _specific(case: Case, expected, got, code: Code) -> Mistake | None:
    lse = case.args[5]
    if isinstance(got, tuple) and np.any(lse == -np.inf):
        if any(isinstance(g, np.ndarray) and g.dtype.kind == "f" and np.isnan(g).any() for g in got):
            return NAN_WITH_EMPTY_ROWS
    return None


def _error_hint(case: Case, error: str, code: Code) -> str:
    line = error_line(error)
    if ("mismatch" in error or "shapes" in error or "broadcast" in error) and line:
        return (f"The line that failed, `{line}`, combines arrays whose sizes do not match: here the query tile "
                f"has {case.args[0].shape[0]} rows and a key tile up to {case.args[7]}. If it is a product for dK or "
                "dV, it must contract the queries (the weights transposed); for dQ, the keys.")
    return ""


def _predicted(mistake: Mistake, predict) -> Mistake:
    return dataclasses.replace(mistake, predict=predict)


BACKWARD_QUERY_TILE = Check(
    name="backward_query_tile",
    function="backward_query_tile",
    params=PARAMS,
    reference=_reference,
    sizes=Sizes({"Q": ("n_q", "d_k"), "K": ("n_k", "d_k"), "V": ("n_k", "d_v"), "dO": ("n_q", "d_v"),
                 "mask": ("n_q", "n_k")}, {"block_size": "block"}, _forward_again),
    make_cases=_cases,
    output_names=("dQ", "dK", "dV"),
    mistakes=(
        dataclasses.replace(NAN_FOR_EMPTY_ROWS, predict=_no_guard_for_empty_rows,
                            premise=Premise("slice_with_nothing_to_attend", _lse_of_minus_inf)),
        _predicted(FORGETS_D, _forgets_d),
        _predicted(UNNORMALISED_P, _exp_of_scores),
        _predicted(UNNORMALISED_P, _exp_minus_tile_max),
        _predicted(MISSING_SCALE, _no_scale(False, False)),
        _predicted(MISSING_SCALE, _no_scale(False, True)),
        _predicted(MISSING_SCALE, _no_scale(True, False)),
        _predicted(WRONG_AXIS, _wrong_axis(True, True)),
        _predicted(WRONG_AXIS, _wrong_axis(False, True)),
        _predicted(WRONG_AXIS, _wrong_axis(True, False)),
        Mistake("dq_overwritten",
                "dQ holds only the last key tile's share. Every key tile adds its part to each query's gradient: "
                "accumulate dQ over the key tiles (+=) rather than assigning it in each one.",
                _dq_of_last_tile),
        Mistake("dv_from_ds",
                "dV was computed from dS. V enters the output as O = P V, so dV = P^T dO: the weights themselves, "
                "not the gradient of the scores.",
                _dv_from_ds),
        Mistake("d_added",
                "dS = P * (dP - D): D, the weighted average of dP, is subtracted in every row, because moving "
                "one score moves the other weights the opposite way. Here it was added.",
                _d_added),
        Mistake("mask_ignored",
                "The weights were rebuilt from every key's score, the mask forgotten: a hidden key has weight 0 "
                "in the forward pass, so put -inf at its score before subtracting lse, as the forward pass did.",
                _mask_ignored),
        Mistake("d_per_tile",
                "D was computed in each key tile from that tile's weights alone. D = rowsum(P * dP) runs over ALL the "
                "keys of a query, which one tile does not see; the forward pass's rowsum(O * dO) gives it whole, "
                "one number per query, before the loop.",
                _d_per_tile),
        Mistake("d_broadcast_from_1d",
                "D has shape (n_q,), one number per query, and was subtracted from the (n_q, bk) tile as it is: "
                "NumPy lines it up with the last axis, the keys, so key j got query j's D. Keep the query axis: "
                "shape (n_q, 1) (keepdims=True, or D[:, None]).",
                _d_broadcast_from_1d),
        *(_predicted(Mistake("gradient_tile_transposed",
                             "Each key tile's share of dK or dV came out transposed, (d, bk) where the tile's rows "
                             "are (bk, d): it only fits when bk = d, as here. dK of a tile is scale * dS^T Q, one row "
                             "per key; in an einsum, the output indices are the key's, then the coordinate's."),
                     _tile_transposed(dk, dv)) for dk, dv in ((True, False), (False, True), (True, True))),
        *(_predicted(MASKED_AFTER_EXP, _masked_after_exp(guarded)) for guarded in (True, False)),
        Mistake("weights_rebuilt_without_scale",
                "The weights were rebuilt from Q K^T without the scale. The forward pass's scores, and its lse, "
                "are Q K^T * scale: rebuild the same scores, exp(Q K^T * scale - lse).",
                _weights_without_scale),
    ),
    specific=_specific,
    error_hint=_error_hint,
    after_pass=_memory,
)


def check_backward_query_tile(backward_query_tile, *, hidden: bool = False) -> CheckResult:
    """Check `backward_query_tile(Q, K, V, O, dO, lse, mask, block_size) -> (dQ, dK, dV)`.

    Q, O, dO: (n_q, ·) one tile of queries, their outputs and dL/dO; lse: (n_q,)
    their log-sum-exps; K, V: (n_k, ·) every key and value; mask: (n_q, n_k)
    bool. Returns this tile's dQ (n_q, d_k) and its shares of dK (n_k, d_k)
    and dV (n_k, d_v), visiting the keys in tiles of block_size and never
    holding an (n_q, n_k) array. The exercise 11_attention_backward (book/backward.ipynb).
    """
    return check_in_process(BACKWARD_QUERY_TILE, backward_query_tile, hidden=hidden)


CHECKS = {c.name: c for c in (BACKWARD_QUERY_TILE,)}
"""This module's checks by name: what the registry's `Exercise.checks` reads."""
