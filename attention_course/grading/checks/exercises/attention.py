"""Check for exercise 4: attention(Q, K, V) returning (output, weights).

References are the package's `scaled_dot_product_attention` and
`attention_weights`. Each recognised mistake is a small wrong attention
whose result is compared with the student's.
"""

from __future__ import annotations

import numpy as np

from ....core.attention import attention_weights, scaled_dot_product_attention
from ....core.softmax import softmax
from ....chapters.worked_example import BANK_BOT
from ..engine.calls import error_line
from ..engine.cases import Case, Rngs, generated, random_qkv
from ..engine.check import Check
from ..engine.code import Code
from ..engine.run import check_in_process
from ..engine.shrink import Sizes
from ..engine.premises import exp_overflows
from ..engine.mistakes import Mistake, same_values, seen_difference
from ..engine.results import CheckResult
from .scores import scaled_reference, scores_reference
from .softmax import (
    NO_MAX_SUBTRACTION,
    diagnose_weights,
    global_softmax,
    naive_softmax,
    not_finite_softmax,
    unnormalised,
)

OUTPUT_NAMES = ("output", "weights")


def scores_of(Q, K, scale=None):
    """Q K^T * scale, with the default scale 1/sqrt(d_k)."""
    scale = 1 / np.sqrt(Q.shape[-1]) if scale is None else scale
    return (Q @ np.swapaxes(K, -1, -2)) * scale  # (..., n_q, d_k) x (..., d_k, n_k) -> (..., n_q, n_k)


def pair(weights, V):
    """(weights @ V, weights), the pair an attention exercise returns."""
    return weights @ V, weights  # (..., n_q, n_k) x (..., n_k, d_v) -> (..., n_q, d_v)


def reference(Q, K, V):
    return scaled_dot_product_attention(Q, K, V), attention_weights(Q, K)


def _swapped(Q, K, V):
    """Scores K Q^T: each key's weights over the queries, then mixed with V."""
    w = softmax(scores_of(K, Q), axis=-1)  # (n_k, n_q)
    return pair(w, V)  # needs n_q == n_k


def _transposed_weights(Q, K, V):
    """The right output but the weights returned as (n_k, n_q)."""
    out, w = reference(Q, K, V)
    return out, np.swapaxes(w, -1, -2)


# Mistakes shared with the masked and padded attention checks.
MISSING_SCALE_HINT = (
    "The scores were not scaled. Divide Q K^T by sqrt(d_k) before the softmax; "
    "otherwise large d_k makes the softmax nearly one-hot."
)
DIVIDED_BY_D_K_HINT = "You divided the scores by d_k; the scale is 1/sqrt(d_k), the square root."
SWAPPED_HINT = (
    "The weights are transposed: their rows run over the keys and their columns over the queries, as if "
    "query and key had swapped roles. Row i of the weights belongs to query i and runs over the keys, so the "
    "scores are Q times K transposed, in that order, and the weights come back with shape (n_q, n_k)."
)
WRONG_AXIS_HINT = (
    "The softmax ran over the wrong axis: each column sums to 1 instead of each row. Every query "
    "(row) spreads its weight over the keys, so normalise along the last axis."
)
RETURNS_WEIGHTS_HINT = (
    "The output is the weights themselves (or output and weights are swapped). The output mixes the "
    "value vectors: weights times V, one row of d_v numbers per query. Return (output, weights) in that order."
)
NOT_NORMALISED_HINT = "The weights do not sum to 1 over the keys: divide the exponentials by their sum along each row."

SCALED_AFTER_SOFTMAX_HINT = (
    "The weights were divided by sqrt(d_k) after the softmax, so they no longer sum to 1. The scale belongs "
    "to the scores: divide Q K^T by sqrt(d_k), then take the softmax."
)
SCALED_BY_N_K_HINT = "The scores were divided by the square root of the number of keys; the scale is 1/sqrt(d_k), d_k the size of a query."
SCALED_BY_N_Q_HINT = (
    "The scores were divided by the square root of the number of queries (the length of Q's second-to-last axis, "
    "its rows); the scale is 1/sqrt(d_k), d_k the size of one query: Q's last axis."
)

MISTAKES = (
    Mistake("missing_scale", MISSING_SCALE_HINT, lambda Q, K, V: pair(softmax(scores_of(Q, K, 1.0)), V)),
    Mistake("divided_by_d_k", DIVIDED_BY_D_K_HINT, lambda Q, K, V: pair(softmax(scores_of(Q, K, 1 / Q.shape[-1])), V)),
    Mistake("query_key_swapped", SWAPPED_HINT, _swapped),
    Mistake("query_key_swapped", SWAPPED_HINT, _transposed_weights),
    Mistake("softmax_wrong_axis", WRONG_AXIS_HINT, lambda Q, K, V: pair(softmax(scores_of(Q, K), axis=-2), V)),
    Mistake(NO_MAX_SUBTRACTION.id, NO_MAX_SUBTRACTION.hint, lambda Q, K, V: pair(naive_softmax(scores_of(Q, K)), V),
            premise=exp_overflows(lambda case: softmax_scores(case))),
    Mistake("returns_weights_as_output", RETURNS_WEIGHTS_HINT, lambda Q, K, V: (attention_weights(Q, K),) * 2),
    Mistake("returns_weights_as_output", RETURNS_WEIGHTS_HINT, lambda Q, K, V: reference(Q, K, V)[::-1]),
    Mistake("returns_weights_as_output", RETURNS_WEIGHTS_HINT, lambda Q, K, V: attention_weights(Q, K)),
    Mistake("does_not_sum_to_1", NOT_NORMALISED_HINT, lambda Q, K, V: pair(unnormalised(scores_of(Q, K)), V)),
    Mistake("scaled_after_softmax", SCALED_AFTER_SOFTMAX_HINT,
            lambda Q, K, V: pair(softmax(scores_of(Q, K, 1.0)) / np.sqrt(Q.shape[-1]), V)),
    Mistake("scaled_by_n_k", SCALED_BY_N_K_HINT, lambda Q, K, V: pair(softmax(scores_of(Q, K, 1 / np.sqrt(K.shape[-2]))), V)),
    Mistake("integer_division",
            "Floor division `//` rounded the scaled scores down to whole numbers before the softmax: use true "
            "division, `/`.",
            lambda Q, K, V: pair(softmax((Q @ np.swapaxes(K, -1, -2)) // np.sqrt(Q.shape[-1])), V)),
    Mistake("d_k_from_every_entry",
            "The scores were divided by the square root of the number of entries of Q (Q.size, n_q x d_k), not of "
            "d_k: d_k is the size of one query, the last axis, Q.shape[-1].",
            lambda Q, K, V: pair(softmax(scores_of(Q, K, 1 / np.sqrt(Q.size))), V)
            if Q.size != Q.shape[-1] else None),
    Mistake("scaled_by_n_q", SCALED_BY_N_Q_HINT, lambda Q, K, V: pair(softmax(scores_of(Q, K, 1 / np.sqrt(Q.shape[-2]))), V)),
    Mistake("scaled_by_d_v",
            "The scores were divided by the square root of d_v, the size of a value; the scale is 1/sqrt(d_k), "
            "the size of the vectors whose dot product makes a score.",
            lambda Q, K, V: pair(softmax(scores_of(Q, K, 1 / np.sqrt(V.shape[-1]))), V) if V.shape[-1] != Q.shape[-1] else None),
    Mistake("normalised_over_everything",
            "All the weights together sum to 1, but no single row does: the softmax divided by the sum over "
            "every query and key. Each query's row of weights must sum to 1 on its own.",
            lambda Q, K, V: pair(global_softmax(scores_of(Q, K)), V)),
    Mistake("output_from_scores",
            "The weights are right, but the output mixes the values with the scores, not with the weights: "
            "the output is weights times V.",
            lambda Q, K, V: (scores_of(Q, K) @ V, attention_weights(Q, K))),
)


def masked_scores(case: Case) -> np.ndarray | None:
    """The scaled scores of an attention input in float64, -inf where its mask (or its lengths) hide a key."""
    Q, K = (np.asarray(a, dtype=np.float64) for a in case.args[:2])
    scores = scores_of(Q, K)  # (..., n_q, n_k)
    if len(case.args) > 3:
        hide = np.asarray(case.args[3])
        if hide.dtype.kind in "iu" and hide.ndim == 1 and scores.ndim == 3:  # lengths (B,): a padding mask
            hide = np.arange(K.shape[-2])[None, None, :] < hide[:, None, None]  # (B, 1, n_k)
        try:
            scores = np.where(hide, scores, -np.inf)
        except ValueError:  # a mask that does not broadcast: describe the scores alone
            pass
    return scores


def softmax_scores(case: Case) -> tuple[np.ndarray, int]:
    """(the masked scaled scores, -1): what `Check.scores` reads to tell a saturated input."""
    return masked_scores(case), -1


def specific(case: Case, expected, got, code: Code) -> Mistake | None:
    """Describe weights that are not finite or do not sum as the expected ones do; or right weights whose output
    is not weights times V."""
    if not isinstance(got, tuple) or len(got) != 2:
        return None
    output, weights = got
    masked = len(case.args) > 3
    if (isinstance(weights, np.ndarray) and weights.shape == expected[1].shape
            and same_values(weights, expected[1], case.tolerance)):  # the weights are right: only the output is wrong
        if not (isinstance(output, np.ndarray) and output.shape == expected[0].shape):
            return None  # an output of another shape: the shape is what is said
        seen = seen_difference(expected, got, case.tolerance, OUTPUT_NAMES, saturation=case.saturation)
        if seen is not None:
            return seen
        V = np.asarray(case.args[2], dtype=np.float64)
        mixed = weights.astype(np.float64) @ V  # (..., n_q, n_k) x (..., n_k, d_v) -> (..., n_q, d_v)
        return None if same_values(output, mixed, case.tolerance) else OUTPUT_NOT_FROM_WEIGHTS
    if isinstance(weights, np.ndarray) and weights.dtype.kind == "f" and not np.isfinite(weights).all():
        scores = masked_scores(case)
        return not_finite_softmax(scores, weights, item=OUTPUT_NAMES[1]) if weights.shape == scores.shape else None
    found = diagnose_weights(weights, -1, expected[1], masked=masked)
    if found is not None and found.id == "softmax_wrong_axis":
        return Mistake(found.id, "Each column of the weights sums to 1 instead of each row. If the softmax ran "
                       "over the first axis, that is why: every query (row) spreads its weight over the keys, so "
                       "normalise along the last axis.")
    return found


OUTPUT_NOT_FROM_WEIGHTS = Mistake(
    "output_not_from_weights",
    "The weights are right, but the output is not the weights times V: each output row mixes the value vectors "
    "with that query's weights, output = weights @ V. Compute the output from the weights you return.",
)


def error_hint(case: Case, error: str, code: Code) -> str:
    """What a failed matrix product means, quoting the student's line."""
    line = error_line(error)
    if "matmul" in error and line:
        return (
            f"The line that failed, `{line}`, multiplies arrays whose inner sizes do not match. Q is (n_q, d_k) "
            "and K is (n_k, d_k), so the scores are Q times K transposed, (n_q, n_k); the output is the weights "
            "(n_q, n_k) times V (n_k, d_v)."
        )
    return ""


def _cases(rngs: Rngs) -> list[Case]:
    """Every property on a visible input (one query, n_q != n_k, large scores, float32 kept, one key, d_v != d_k,
    d_k = 1, float64's digits kept), then hidden inputs that vary the values."""
    rng = rngs(4)

    def qkv(n_q, n_k, d_k, d_v, scale=1.0, dtype=np.float64):
        return random_qkv(rng, n_q, n_k, d_k, d_v, scale=scale, dtype=dtype)

    return [
        Case("the bank bot: one query, four keys", (BANK_BOT.query[None, :].copy(), BANK_BOT.keys.copy(), BANK_BOT.values.copy())),
        Case("four queries, four keys", qkv(4, 4, 4, 2)),
        Case("three queries, five keys, d_k = 8", qkv(3, 5, 8, 2)),
        Case("large scores", qkv(3, 3, 4, 2, scale=30.0)),
        # float32 in, float32 out.
        Case("float32, two queries, three keys", qkv(2, 3, 2, 2, dtype=np.float32)),
        Case("a single key", qkv(3, 1, 4, 2)),
        Case("two queries, three keys, d_k = 4, d_v = 3", qkv(2, 3, 4, 3)),
        Case("five queries, two keys, d_k = 3", qkv(5, 2, 3, 2)),
        Case("float32, five queries, six keys", qkv(5, 6, 4, 3, dtype=np.float32), hidden=True),
        Case("a single key, two queries", qkv(2, 1, 3, 3), hidden=True),
        Case("two queries, three keys, d_v = 5", qkv(2, 3, 6, 5), hidden=True),
        Case("large scores, four queries, five keys", qkv(4, 5, 4, 2, scale=30.0), hidden=True),
        Case("six queries, seven keys, d_k = 8", qkv(6, 7, 8, 3), hidden=True),
    ] + _assumption_cases_attention(rngs)


def _assumption_cases_attention(rngs: Rngs) -> list[Case]:
    """Inputs that break what an attention could silently assume (n_q = n_k, d_v = d_k and n_k = 1 are above)."""
    rng = rngs(41)
    return [
        # d_k > 1: with one coordinate, each score is one product and the scale is 1.
        Case("d_k = 1, d_v = 1", random_qkv(rng, 3, 4, 1, 1)),
        # float64 kept: q . k is near 1000000 and the two differ by 1.03; float32 (steps of 0.0625 there, q and k
        # themselves not exact) moves the weights by about 1%.
        _close_large_scores("float64 precision: large scores that differ by little", rng),
        Case("d_k = 1, d_v = 2", random_qkv(rng, 2, 3, 1, 2), hidden=True),
        _close_large_scores("float64 precision: other large scores that differ by little", rng, hidden=True),
    ]


def _close_large_scores(label: str, rng, hidden: bool = False) -> Case:
    """One query whose two scores are near 700 000 and differ by about 0.7: float32 cannot tell them apart."""
    Q = np.array([[1000 + rng.uniform(), 0.5]])
    K = np.array([[1.0, 1.0], [1.0, -1.06]]) * [1000 - rng.uniform(), 1]
    return Case(label, (Q, K, np.array([[1.0, 0.0], [0.0, 1.0]])), hidden=hidden, precision=(1e-6, 1e-9))


QKV_SIZES = Sizes({"Q": ("n_q", "d_k"), "K": ("n_k", "d_k"), "V": ("n_k", "d_v")})
"""A smaller failing input: fewer queries or keys, a smaller d_k or d_v, fewer heads."""

ATTENTION = Check(
    name="attention",
    helpers={"softmax": softmax, "dot_scores": scores_reference, "scale_scores": scaled_reference},
    function="attention",
    params=("Q", "K", "V"),
    reference=reference,
    sizes=QKV_SIZES,
    make_cases=_cases,
    mistakes=MISTAKES,
    output_names=OUTPUT_NAMES,
    specific=specific,
    error_hint=error_hint,
    scores=softmax_scores,
)


def check_attention(attention, *, hidden: bool = False) -> CheckResult:
    """Check `attention(Q, K, V) -> (output, weights)`.

    Q: (n_q, d_k), K: (n_k, d_k), V: (n_k, d_v); output (n_q, d_v), weights
    (n_q, n_k) with rows summing to 1. The exercise 04_attention (book/worked_example.ipynb).
    """
    return check_in_process(ATTENTION, attention, hidden=hidden)


CHECKS = {c.name: c for c in (ATTENTION,)}
"""This module's checks by name: what the registry's `Exercise.checks` reads."""
