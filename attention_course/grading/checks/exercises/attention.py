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
from ..engine.cases import Case, Rngs, random_qkv
from ..engine.check import Check
from ..engine.run import run_check
from ..engine.shrink import Sizes
from ..engine.mistakes import Mistake
from ..engine.results import CheckResult
from .scores import scaled_reference, scores_reference
from .softmax import NO_MAX_SUBTRACTION, diagnose_weights, global_softmax, naive_softmax, not_finite_softmax, unnormalised

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

MISTAKES = (
    Mistake("missing_scale", MISSING_SCALE_HINT, lambda Q, K, V: pair(softmax(scores_of(Q, K, 1.0)), V)),
    Mistake("divided_by_d_k", DIVIDED_BY_D_K_HINT, lambda Q, K, V: pair(softmax(scores_of(Q, K, 1 / Q.shape[-1])), V)),
    Mistake("query_key_swapped", SWAPPED_HINT, _swapped),
    Mistake("query_key_swapped", SWAPPED_HINT, _transposed_weights),
    Mistake("softmax_wrong_axis", WRONG_AXIS_HINT, lambda Q, K, V: pair(softmax(scores_of(Q, K), axis=-2), V)),
    Mistake(NO_MAX_SUBTRACTION.id, NO_MAX_SUBTRACTION.hint, lambda Q, K, V: pair(naive_softmax(scores_of(Q, K)), V)),
    Mistake("returns_weights_as_output", RETURNS_WEIGHTS_HINT, lambda Q, K, V: (attention_weights(Q, K),) * 2),
    Mistake("returns_weights_as_output", RETURNS_WEIGHTS_HINT, lambda Q, K, V: reference(Q, K, V)[::-1]),
    Mistake("returns_weights_as_output", RETURNS_WEIGHTS_HINT, lambda Q, K, V: attention_weights(Q, K)),
    Mistake("does_not_sum_to_1", NOT_NORMALISED_HINT, lambda Q, K, V: pair(unnormalised(scores_of(Q, K)), V)),
    Mistake("scaled_after_softmax", SCALED_AFTER_SOFTMAX_HINT,
            lambda Q, K, V: pair(softmax(scores_of(Q, K, 1.0)) / np.sqrt(Q.shape[-1]), V)),
    Mistake("scaled_by_n_k", SCALED_BY_N_K_HINT, lambda Q, K, V: pair(softmax(scores_of(Q, K, 1 / np.sqrt(K.shape[-2]))), V)),
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


def specific(case: Case, expected, got) -> Mistake | None:
    """Describe weights that are not finite or do not sum to 1 over the keys."""
    if not isinstance(got, tuple) or len(got) != 2:
        return None
    weights = got[1]
    if isinstance(weights, np.ndarray) and weights.dtype.kind == "f" and not np.isfinite(weights).all():
        Q, K = case.args[0], case.args[1]
        scores = scores_of(np.asarray(Q, dtype=np.float64), np.asarray(K, dtype=np.float64))
        if len(case.args) > 3:  # a mask: the hidden scores are -inf
            scores = np.where(case.args[3], scores, -np.inf) if np.ndim(case.args[3]) <= scores.ndim else scores
        return not_finite_softmax(scores, weights) if weights.shape == scores.shape else None
    found = diagnose_weights(weights, -1, expected[1].shape)
    if found is not None and found.id == "softmax_wrong_axis":
        return Mistake(found.id, "Each column of the weights sums to 1 instead of each row. If the softmax ran "
                       "over the first axis, that is why: every query (row) spreads its weight over the keys, so "
                       "normalise along the last axis.")
    return found


def error_hint(case: Case, error: str) -> str:
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
    rng = rngs(4)

    def qkv(n_q, n_k, d_k, d_v, scale=1.0, dtype=np.float64):
        return random_qkv(rng, n_q, n_k, d_k, d_v, scale=scale, dtype=dtype)

    return [
        Case("the bank bot: one query, four keys", (BANK_BOT.query[None, :].copy(), BANK_BOT.keys.copy(), BANK_BOT.values.copy())),
        Case("four queries, four keys", qkv(4, 4, 4, 2)),
        Case("three queries, five keys, d_k = 8", qkv(3, 5, 8, 2)),
        Case("large scores", qkv(3, 3, 4, 2, scale=30.0)),
        Case("float32, five queries, six keys", qkv(5, 6, 4, 3, dtype=np.float32), hidden=True),
        Case("a single key", qkv(3, 1, 4, 2), hidden=True),
        Case("two queries, three keys, d_v = 5", qkv(2, 3, 6, 5), hidden=True),
    ] + _assumption_cases_attention(rngs)


def _assumption_cases_attention(rngs: Rngs) -> list[Case]:
    """Inputs that break what an attention could silently assume (n_q = n_k, d_v = d_k and n_k = 1 are above)."""
    rng = rngs(41)
    return [
        # d_k > 1: with one coordinate, each score is one product and the scale is 1.
        Case("d_k = 1, d_v = 1", random_qkv(rng, 3, 4, 1, 1), hidden=True),
        # float64 kept: q . k is near 1000000 and the two differ by 1.03; float32 (steps of 0.0625 there, q and k
        # themselves not exact) moves the weights by about 1%.
        Case("float64 precision: large scores that differ by little",
             (np.array([[1000 + rng.uniform(), 0.5]]), np.array([[1.0, 1.0], [1.0, -1.06]]) * [1000 - rng.uniform(), 1],
              np.array([[1.0, 0.0], [0.0, 1.0]])), hidden=True),
    ]


QKV_SIZES = Sizes({"Q": ("n_q", "d_k"), "K": ("n_k", "d_k"), "V": ("n_k", "d_v")})
"""A smaller failing input: fewer queries or keys, a smaller d_k or d_v, fewer heads."""

ATTENTION = Check(
    float32_kept=False,  # the solutions divide by np.sqrt(d_k), a float64: a widened dtype is noted, not marked down
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
)


def check_attention(attention, *, hidden: bool = False) -> CheckResult:
    """Check `attention(Q, K, V) -> (output, weights)`.

    Q: (n_q, d_k), K: (n_k, d_k), V: (n_k, d_v); output (n_q, d_v), weights
    (n_q, n_k) with rows summing to 1. The exercise 04_attention (book/worked_example.ipynb).
    """
    return run_check(ATTENTION, attention, hidden=hidden)
