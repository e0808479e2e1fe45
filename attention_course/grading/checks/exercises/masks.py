"""Checks for exercises 5 and 6: causal and padding masks, masked attention.

One convention, the package's (and PyTorch's): a boolean mask is True where a
query may attend, and masked scores become -inf before the softmax.
"""

from __future__ import annotations

import dataclasses
import re

import numpy as np

from ....core.attention import attention_weights, scaled_dot_product_attention
from ....core.masks import causal_mask, padding_mask
from ....core.softmax import softmax
from .attention import (
    DIVIDED_BY_D_K_HINT,
    MISSING_SCALE_HINT,
    OUTPUT_NAMES,
    SCALED_BY_N_Q_HINT,
    WRONG_AXIS_HINT,
    error_hint,
    pair,
    scores_of,
    softmax_scores,
    specific,
)
from .attention import reference as attention_reference
from ..engine.calls import error_line
from ..engine.cases import Case, Rngs, generated, random_qkv
from ..engine.check import Check
from ..engine.code import Code
from ..engine.run import check_in_process
from ..engine.shrink import Sizes
from ..engine.premises import exp_overflows, hidden_key_far_above, nothing_to_attend
from ..engine.mistakes import Lead, Mistake
from ..engine.results import CheckResult
from .softmax import INF_MINUS_INF, NO_MAX_SUBTRACTION, ZERO_SUM, naive_softmax, shifted_softmax

INVERTED_HINT = (
    "The mask is inverted. In this course, as in PyTorch, True means \"may attend\" and False means "
    "\"hidden\"."
)


# ---- causal_mask(n) ---------------------------------------------------------------------------

CAUSAL_MASK = Check(
    name="causal_mask",
    function="causal_mask",
    params=("n",),
    reference=causal_mask,
    sizes=Sizes({}, {"n": "n"}),
    make_cases=lambda rngs: [
        Case("four tokens", (4,)),
        Case("one token", (1,)),
        Case("three tokens", (3,)),
        Case("seven tokens", (7,), hidden=True),
    ],
    mistakes=(
        Mistake("upper_triangle",
                "Token i may look at itself and the tokens BEFORE it (keys 0..i), never after: "
                "row i is True up to column i. That is the lower triangle.",
                lambda n: np.tri(n, dtype=bool).T),
        Mistake("excludes_diagonal",
                "Each token may attend to itself: the diagonal belongs to the allowed part.",
                lambda n: np.tri(n, k=-1, dtype=bool)),
        Mistake("mask_inverted", INVERTED_HINT, lambda n: ~np.tri(n, dtype=bool)),
        Mistake("mask_not_boolean",
                "Return booleans (dtype bool), True where attention is allowed. A float mask of 0s and 1s "
                "would be ADDED to the scores by attention functions, which is not what you want.",
                lambda n: np.tri(n)),
        Mistake("one_token_ahead",
                "Row i is True up to column i + 1: each token may also see the NEXT token. The diagonal is the "
                "last allowed column of each row (keys 0..i).",
                lambda n: np.tri(n, k=1, dtype=bool)),
        Mistake("additive_mask",
                "This is an additive float mask (0 where allowed, -inf where hidden). The task asks for the "
                "boolean convention: True where a query may attend, False where it may not.",
                lambda n: np.where(np.tri(n, dtype=bool), 0.0, -np.inf)),
    ),
)


def check_causal_mask(causal_mask, *, hidden: bool = False) -> CheckResult:
    """Check `causal_mask(n)`: a bool (n, n) array, True where key j <= query i.

    The exercise 05_causal_mask (book/masks.ipynb).
    """
    return check_in_process(CAUSAL_MASK, causal_mask, hidden=hidden)


# ---- masked_attention(Q, K, V, mask) ----------------------------------------------------------

def masked_reference(Q, K, V, mask):
    return scaled_dot_product_attention(Q, K, V, attn_mask=mask), attention_weights(Q, K, attn_mask=mask)


def _with_bias(Q, K, V, mask, fill, scale=None, softmax_fn=softmax, axis=-1):
    """Attention where masked scores are replaced by `fill` before the softmax."""
    scores = np.where(mask, scores_of(Q, K, scale), fill)  # (..., n_q, n_k)
    return pair(softmax_fn(scores, axis=axis), V)


def _mask_after_softmax(Q, K, V, mask):
    """softmax over every key, then the masked weights zeroed: rows no longer sum to 1."""
    return pair(softmax(scores_of(Q, K)) * mask, V)


MASK_AFTER_SOFTMAX_HINT = (
    "The mask was applied after the softmax: the hidden keys' weights were zeroed, but the remaining "
    "ones no longer sum to 1, and the hidden keys still took part in the normalisation. Mask the scores "
    "BEFORE the softmax."
)
FILLED_WITH_ZERO_HINT = (
    "Masked scores were set to 0 (or multiplied by the mask). A score of 0 still gets weight exp(0) > 0 "
    "after the softmax; only -inf gives exactly 0, because exp(-inf) = 0."
)
MASK_IGNORED_HINT = "The result is plain attention, as if the mask were not there: apply it to the scores."
LARGE_NEGATIVE_HINT = (
    "Right wherever a query can see at least one key, wrong for the query that can see none: its weights "
    "came back uniform, as a finite fill such as -1e9 gives (every score equal, so every weight 1/n_k). "
    "A query with nothing to attend to must get weights 0 and output 0."
)
LARGE_NEGATIVE_LEADS = (
    # Code that writes no infinity cannot have filled with -inf; code that does may still give such a row
    # uniform weights another way (a fill elsewhere, a fallback of 1/n_k), which is all that can be said of it.
    Lead("finite_fill", "Your code writes no -inf: fill hidden scores with -inf, never a large negative number.",
         lambda case, code: code.known and not code.infinity),
    Lead("uniform_row", "If some hidden scores get a finite fill, or a row with nothing to see is given weights "
         "1/n_k, that is the difference: leave such a row's weights at 0.",
         lambda case, code: not (code.known and not code.infinity)),
)
EMPTY_ROW_NAN = Mistake(
    "nan_for_empty_row",
    "The query that can see no key came back as nan. Such a query gets weights 0 and output 0; the course's "
    "softmax already does this.",
    leads=(
        dataclasses.replace(INF_MINUS_INF, text="If its scores were filled with -inf and its max subtracted, that max "
                            "is -inf, and -inf - (-inf) is nan: where a row's max is -inf, subtract 0 instead."),
        dataclasses.replace(ZERO_SUM, text="If its weights were divided by their sum, that sum is 0, and 0/0 is nan: "
                            "where a row's sum is 0, divide by 1."),
    ),
)
MASKED_AFTER_EXP = (
    "A hidden key must get weight exactly 0 whatever its score. This input has a hidden key that scores far "
    "above every key its query may see, and these are the weights a mask applied after the exponentials gives "
    "there (the exponentials, or the softmax's weights, multiplied by the mask and divided by their sum): exp of "
    "that score overflows to inf, and inf × 0 is nan, or the keys that may be seen underflow to 0, shifted by the "
    "hidden key's score. Put -inf at the hidden scores before the max and the exp."
)


def _raw_and_visible(case: Case) -> tuple[np.ndarray, np.ndarray]:
    """(the scaled scores before any mask, True where the query may see the key) of a masked or a padded input."""
    Q, K, _, hide = case.args[:4]
    scores = scores_of(np.asarray(Q, dtype=np.float64), np.asarray(K, dtype=np.float64))  # (..., n_q, n_k)
    hide = np.asarray(hide)
    if hide.dtype == bool:  # a mask, broadcastable to the scores
        return scores, hide
    return scores, (np.arange(K.shape[-2])[None, :] < hide[:, None])[:, None, :]  # (B, 1, n_k) from lengths


HIDDEN_KEY_FAR_ABOVE = hidden_key_far_above(_raw_and_visible)
"""What the hint of a mask applied after exp says of its input: a hidden key far above the keys its query sees."""


def _after_exp(visible_max: bool, guarded: bool, through_softmax: bool = False):
    """Weights masked after exp: exp(s - max) times the mask, divided by its sum (guarded: 0 where the sum is 0)."""
    def predict(Q, K, V, mask):
        s = scores_of(Q, K)  # (..., n_q, n_k)
        if through_softmax:
            e = softmax(s) * mask  # the softmax over every key, then the hidden ones zeroed
        else:
            m = np.max(np.where(mask, s, -np.inf) if visible_max else s, axis=-1, keepdims=True)
            if guarded:
                m = np.where(np.isfinite(m), m, 0.0)
            e = np.exp(s - m) * mask
        total = e.sum(axis=-1, keepdims=True)
        return pair(e / np.where(total > 0, total, 1.0) if guarded else e / total, V)
    return predict


def _unmasked_output(Q, K, V, mask):
    """Right weights, but the output mixed with the weights of the softmax over every key."""
    return softmax(scores_of(Q, K)) @ V, attention_weights(Q, K, attn_mask=mask)


MASKED_MISTAKES = (
    Mistake("mask_after_softmax", MASK_AFTER_SOFTMAX_HINT, _mask_after_softmax),
    Mistake("mask_filled_with_zero", FILLED_WITH_ZERO_HINT, lambda Q, K, V, m: _with_bias(Q, K, V, m, 0.0)),
    Mistake("mask_inverted", INVERTED_HINT, lambda Q, K, V, m: _with_bias(Q, K, V, ~np.asarray(m), -np.inf)),
    Mistake("mask_ignored", MASK_IGNORED_HINT, lambda Q, K, V, m: pair(softmax(scores_of(Q, K)), V)),
    Mistake("missing_scale", MISSING_SCALE_HINT, lambda Q, K, V, m: _with_bias(Q, K, V, m, -np.inf, scale=1.0)),
    Mistake("divided_by_d_k", DIVIDED_BY_D_K_HINT, lambda Q, K, V, m: _with_bias(Q, K, V, m, -np.inf, scale=1 / Q.shape[-1])),
    Mistake("scaled_by_n_q", SCALED_BY_N_Q_HINT,
            lambda Q, K, V, m: _with_bias(Q, K, V, m, -np.inf, scale=1 / np.sqrt(Q.shape[-2]))),
    Mistake("softmax_wrong_axis", WRONG_AXIS_HINT, lambda Q, K, V, m: _with_bias(Q, K, V, m, -np.inf, axis=-2)),
    Mistake("mask_filled_with_large_negative", LARGE_NEGATIVE_HINT, lambda Q, K, V, m: _with_bias(Q, K, V, m, -1e9),
            leads=LARGE_NEGATIVE_LEADS),
    Mistake("mask_filled_with_large_negative", LARGE_NEGATIVE_HINT, lambda Q, K, V, m: _with_bias(Q, K, V, m, -1e4),
            leads=LARGE_NEGATIVE_LEADS),
    dataclasses.replace(EMPTY_ROW_NAN, predict=lambda Q, K, V, m: _with_bias(Q, K, V, m, -np.inf,
                                                                             softmax_fn=shifted_softmax),
                        premise=nothing_to_attend(softmax_scores)),
    Mistake(NO_MAX_SUBTRACTION.id, NO_MAX_SUBTRACTION.hint,
            lambda Q, K, V, m: _with_bias(Q, K, V, m, -np.inf, softmax_fn=naive_softmax),
            premise=exp_overflows(softmax_scores)),
    Mistake("mask_transposed",
            "The mask was used transposed: entry [i, j] of the mask says whether query i may see key j, the "
            "same layout as the scores (n_q, n_k), but here query i followed column i of the mask. With a "
            "causal mask that shows each query the later keys instead of the earlier ones.",
            lambda Q, K, V, m: _with_bias(Q, K, V, np.asarray(m).T, -np.inf)
            if np.ndim(m) == 2 and np.shape(m)[0] == np.shape(m)[1] and not np.array_equal(m, np.asarray(m).T)
            else None),
    Mistake("mask_added_to_scores",
            "The mask was added to the scores (True counts as 1, False as 0), which only nudges them. A "
            "boolean mask chooses: keep the score where it is True, put -inf where it is False.",
            lambda Q, K, V, m: pair(softmax(scores_of(Q, K) + np.asarray(m)), V)),
    *(Mistake("masked_after_exp", MASKED_AFTER_EXP, _after_exp(visible, guarded), premise=HIDDEN_KEY_FAR_ABOVE)
      for visible in (True, False) for guarded in (True, False)),
    *(Mistake("masked_after_exp", MASKED_AFTER_EXP, _after_exp(True, guarded, through_softmax=True),
              premise=HIDDEN_KEY_FAR_ABOVE)
      for guarded in (True, False)),
    Mistake("output_from_unmasked_weights",
            "The weights are right, but the output was mixed with other weights: those of the softmax over every "
            "key, the mask left out. The output is the weights you return times V.",
            _unmasked_output),
)


def _random_mask(rng, n_q, n_k):
    mask = rng.random((n_q, n_k)) < 0.6
    mask[np.arange(n_q), rng.integers(0, n_k, n_q)] = True  # every query keeps at least one key
    return mask


def _masked_cases(rngs: Rngs) -> list[Case]:
    """Every property on a visible input (a causal mask, holes, a shared row, large scores, scores of 0, a query
    with nothing to see, float32 kept, n_q != n_k, a 1-D mask, hidden keys far above the rest), then hidden
    inputs that vary the values."""
    rng = rngs(5)
    return [
        Case("causal, four tokens", (*random_qkv(rng, 4, 4, 4, 2), causal_mask(4))),
        Case("a mask with holes, three queries, five keys", (*random_qkv(rng, 3, 5, 4, 2), _random_mask(rng, 3, 5))),
        Case("one mask row shared by every query", (*random_qkv(rng, 3, 5, 4, 3), np.array([[True, True, False, True, False]]))),
        Case("causal, large scores", (*random_qkv(rng, 4, 4, 4, 2, scale=30.0), causal_mask(4))),
        Case("a query of zeros: every score it may see is exactly 0",
             (np.array([[0.0, 0.0], [1.0, -1.0]]), np.array([[1.0, 2.0], [0.5, -1.0], [2.0, 0.0]]),
              np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]), np.array([[True, True, False], [True, False, True]]))),
        Case("a query that can see no key (its mask row is all False)",
             (*random_qkv(rng, 3, 4, 4, 2), np.array([[True, False, True, False], [False] * 4, [True, True, False, True]]))),
        # float32 in, float32 out.
        Case("float32, causal, three tokens", (*random_qkv(rng, 3, 3, 2, 2, dtype=np.float32), causal_mask(3))),
        Case("two queries, four keys, causal", (*random_qkv(rng, 2, 4, 3, 2), causal_mask(2, 4))),
        Case("a mask of shape (n_k,)", (*random_qkv(rng, 3, 4, 2, 2), np.array([True, False, True, True]))),
        # hidden keys get exactly 0 whatever their scores: key 1 scores over 1000 above every visible key.
        Case("a hidden key scoring 1000 above every key its query may see",
             (np.array([[1.0, 1.0], [2.0, 0.5], [0.5, 1.5]]),
              np.array([[1.0, 0.0], [1000.0, 1000.0], [0.0, 1.0], [1.0, 1.0]]),
              np.array([[1.0, 0.0], [5.0, 5.0], [0.0, 1.0], [1.0, -1.0]]),
              np.array([[True, False, True, True], [True, False, True, False], [False, False, True, True]]))),
        Case("float32, causal, six tokens", (*random_qkv(rng, 6, 6, 8, 2, dtype=np.float32), causal_mask(6)), hidden=True),
        Case("two queries, six keys, causal", (*random_qkv(rng, 2, 6, 4, 2), causal_mask(2, 6)), hidden=True),
        Case("a mask of shape (n_k,), five keys", (*random_qkv(rng, 3, 5, 4, 2), np.array([True, True, False, True, False])),
             hidden=True),
        Case("a mask with holes, four queries, six keys", (*random_qkv(rng, 4, 6, 4, 3), _random_mask(rng, 4, 6)),
             hidden=True),
        Case("a query that can see no key, five keys",
             (*random_qkv(rng, 3, 5, 4, 2), np.array([[True] * 5, [False] * 5, [False, True, False, True, False]])),
             hidden=True),
        _far_above(rng, "hidden keys scoring far above every key their query may see, other values"),
    ] + _assumption_cases_masked(rngs)


def _far_above(rng, label: str) -> Case:
    """Positive queries, and hidden keys of 800 in every coordinate: their scores lie hundreds above the rest."""
    Q = np.abs(rng.standard_normal((3, 4))) + 0.5  # (3, 4): every coordinate positive
    K = rng.standard_normal((5, 4))
    K[[0, 3]] = 800.0  # keys 0 and 3, hidden from every query
    mask = np.array([[False, True, True, False, True]] * 3)
    return Case(label, (Q, K, rng.standard_normal((5, 2)), mask), hidden=True)


def _assumption_cases_masked(rngs: Rngs) -> list[Case]:
    """Inputs that break what a masked attention could silently assume (an allowed score of exactly 0 is above)."""
    rng = rngs(51)
    return [
        # n_q > n_k: more queries than keys, with a mask of shape (n_q, n_k).
        Case("five queries, two keys", (*random_qkv(rng, 5, 2, 2, 2), _random_mask(rng, 5, 2))),
        Case("six queries, three keys", (*random_qkv(rng, 6, 3, 3, 4), _random_mask(rng, 6, 3)), hidden=True),
    ]


MASKED_ATTENTION = Check(
    name="masked_attention",
    helpers={"causal_mask": causal_mask, "softmax": softmax, "attention": attention_reference},
    function="masked_attention",
    params=("Q", "K", "V", "mask"),
    reference=masked_reference,
    sizes=Sizes({"Q": ("n_q", "d_k"), "K": ("n_k", "d_k"), "V": ("n_k", "d_v"), "mask": ("n_q", "n_k")}),
    make_cases=_masked_cases,
    mistakes=MASKED_MISTAKES,
    output_names=OUTPUT_NAMES,
    specific=specific,
    error_hint=error_hint,
    scores=softmax_scores,
)


def check_masked_attention(masked_attention, *, hidden: bool = False) -> CheckResult:
    """Check `masked_attention(Q, K, V, mask) -> (output, weights)`.

    mask: bool, broadcastable to (n_q, n_k), True where query i may attend to
    key j; hidden keys get weight exactly 0. The exercise 05_causal_mask (book/masks.ipynb).
    """
    return check_in_process(MASKED_ATTENTION, masked_attention, hidden=hidden)


# ---- padding_mask(lengths, n) -----------------------------------------------------------------

PADDING_MASK = Check(
    name="padding_mask",
    function="padding_mask",
    params=("lengths", "n"),
    reference=padding_mask,
    sizes=Sizes({"lengths": ("B",)}, {"n": "n"}, lambda a: {**a, "lengths": np.minimum(a["lengths"], a["n"])}),
    make_cases=lambda rngs: [
        Case("lengths 3, 1, 4 padded to 4", (np.array([3, 1, 4]), 4)),
        Case("lengths 2, 2 padded to 5", (np.array([2, 2]), 5)),
        Case("an empty sequence and a full one", (np.array([0, 5]), 5)),
        Case("one sequence of length 2, padded to 3", (np.array([2]), 3)),
        Case("one sequence of length 7", (np.array([7]), 7), hidden=True),
        Case("six sequences padded to 6", (np.arange(1, 7), 6), hidden=True),
    ] + _assumption_cases_padding(rngs),
    mistakes=(
        Mistake("no_query_axis",
                "Right values, but the mask needs a middle axis of size 1, shape (B, 1, n), so that it "
                "broadcasts over the queries of each sequence when it meets scores of shape (B, n, n).",
                lambda lengths, n: padding_mask(lengths, n)[:, 0, :]),
        Mistake("masks_queries",
                "The mask has shape (B, n, 1): it hides queries (rows). Padding hides KEYS (columns): "
                "no real token should attend to a padding token. Put the size-1 axis in the middle: (B, 1, n).",
                lambda lengths, n: np.swapaxes(padding_mask(lengths, n), -1, -2)),
        Mistake("off_by_one",
                "A sequence of length L has real tokens at positions 0, 1, ..., L-1; position L is already padding.",
                lambda lengths, n: (np.arange(n)[None, :] <= np.asarray(lengths)[:, None])[:, None, :]),
        Mistake("mask_inverted", INVERTED_HINT, lambda lengths, n: ~padding_mask(lengths, n)),
        Mistake("mask_not_boolean",
                "Return booleans (dtype bool), True for real tokens and False for padding.",
                lambda lengths, n: padding_mask(lengths, n).astype(np.float64)),
        Mistake("mask_repeated_over_queries",
                "Right values, but repeated for every query: shape (B, n, n). The task asks for (B, 1, n); "
                "broadcasting repeats the middle axis over the queries when the mask meets the scores.",
                lambda lengths, n: np.broadcast_to(padding_mask(lengths, n), (len(lengths), n, n)).copy()),
        Mistake("hides_queries_and_keys",
                "The mask hides padding queries as well as padding keys, shape (B, n, n). Padding hides keys "
                "only, shape (B, 1, n): what a padding query computes is discarded anyway.",
                lambda lengths, n: padding_mask(lengths, n) & np.swapaxes(padding_mask(lengths, n), -1, -2)),
    ),
)


def _assumption_cases_padding(rngs: Rngs) -> list[Case]:
    """lengths given as a tuple: the signature asks for lengths, not for an array (no full sequence is above)."""
    rng = rngs(62)
    lengths = tuple(int(n) for n in rng.integers(1, 4, size=3))  # plain ints: the grader's channel carries tuples of them
    return [Case("lengths given as a tuple, (3, 1), padded to 3", ((3, 1), 3)),
            Case("lengths given as a tuple of three, padded to 4", (lengths, 4), hidden=True)]


def check_padding_mask(padding_mask, *, hidden: bool = False) -> CheckResult:
    """Check `padding_mask(lengths, n)`: bool (B, 1, n), True at the real tokens of each sequence.

    The exercise 06_padding_mask (book/masks.ipynb, and book/follow_up_questions.ipynb on padding).
    """
    return check_in_process(PADDING_MASK, padding_mask, hidden=hidden)


# ---- padded_attention(Q, K, V, lengths) --------------------------------------------------------

def padded_reference(Q, K, V, lengths):
    mask = padding_mask(lengths, K.shape[-2])  # (B, 1, n_k)
    return masked_reference(Q, K, V, mask)


def _padded_variant(mistake_fn):
    """A masked-attention mistake applied with the padding mask."""
    return lambda Q, K, V, lengths: mistake_fn(Q, K, V, padding_mask(lengths, K.shape[-2]))


def _masks_queries(Q, K, V, lengths):
    mask = np.swapaxes(padding_mask(lengths, K.shape[-2]), -1, -2)  # (B, n, 1): hides query rows
    return _with_bias(Q, K, V, mask, -np.inf)


def _real_rows_only(case: Case, expected, value):
    """`value` with the rows of padding queries taken from `expected` (they are not graded)."""
    if not (isinstance(value, tuple) and len(value) == 2 and isinstance(expected, tuple)):
        return value
    lengths = case.args[3]
    fixed = []
    for got, exp in zip(value, expected):
        if not isinstance(got, np.ndarray) or got.shape != exp.shape:
            fixed.append(got)
            continue
        got = got.astype(np.result_type(got, exp), copy=True)
        for b, length in enumerate(lengths):
            got[b, length:] = exp[b, length:]  # (n - L, ...) rows of padding queries
        fixed.append(got)
    return tuple(fixed)


KEYS_NOT_HIDDEN = Mistake(
    "padding_keys_not_hidden",
    "The real queries' rows are what attention gives with no padding hidden at all: every real query "
    "still attends to the padding keys. If no mask was applied, build one from `lengths`; if the mask "
    "has shape (B, n, 1), it hides queries (rows) instead of keys (columns): padding hides KEYS, shape "
    "(B, 1, n), so that it removes them for every query.",
)


def _length_off_by_one(Q, K, V, lengths):
    mask = (np.arange(K.shape[-2])[None, :] <= np.asarray(lengths)[:, None])[:, None, :]  # keeps one padding key
    return _with_bias(Q, K, V, mask, -np.inf)


def _length_short_by_one(Q, K, V, lengths):
    mask = (np.arange(K.shape[-2])[None, :] < np.asarray(lengths)[:, None] - 1)[:, None, :]  # hides the last real key
    return _with_bias(Q, K, V, mask, -np.inf)


def _first_length_for_all(Q, K, V, lengths):
    mask = padding_mask(np.full(len(lengths), lengths[0]), K.shape[-2])  # every sequence cut at lengths[0]
    return _with_bias(Q, K, V, mask, -np.inf)


def _scores_transposed(Q, K, V, lengths):
    """The scores written [b, key, query] (an einsum 'bqd,bkd->bkq'), then masked and normalised as if [b, q, k]."""
    scores = np.swapaxes(scores_of(Q, K), -1, -2)  # (B, n_k, n_q): each row one key's scores over the queries
    mask = (np.arange(K.shape[-2])[None, :] < np.asarray(lengths)[:, None])[:, None, :]  # (B, 1, n)
    return pair(softmax(np.where(mask, scores, -np.inf)), V)


PADDED_MISTAKES = (
    Mistake("scores_transposed",
            "The scores came out transposed, entry [b, j, i] holding query i's score against key j (an einsum "
            "written 'bqd,bkd->bkq', or K @ Q^T): each row then runs over the queries, so the padding mask, the "
            "softmax and the weights follow the wrong axis. The scores are (B, n_q, n_k): 'bqd,bkd->bqk', Q @ K^T.",
            _scores_transposed),
    Mistake(KEYS_NOT_HIDDEN.id, KEYS_NOT_HIDDEN.hint, _masks_queries),
    Mistake(KEYS_NOT_HIDDEN.id, KEYS_NOT_HIDDEN.hint, lambda Q, K, V, lengths: pair(softmax(scores_of(Q, K)), V)),
    Mistake("length_off_by_one",
            "Each real query also attended to the first padding key: a sequence of length L has real tokens "
            "at positions 0 .. L-1, so position L is already padding.",
            _length_off_by_one),
    Mistake("length_short_by_one",
            "Each sequence also hid its last real key: a sequence of length L has real tokens at positions "
            "0 .. L-1, so only the positions from L on are padding (position < L is real).",
            _length_short_by_one),
    Mistake("one_length_for_all",
            "Every sequence was cut at the length of the first one. Each sequence b has its own length, "
            "lengths[b]: the mask needs one row per sequence.",
            _first_length_for_all),
    *(dataclasses.replace(m, predict=_padded_variant(m.predict)) for m in MASKED_MISTAKES if m.id != "mask_ignored"),
)


def _padded_error_hint(case: Case, error: str, code: Code) -> str:
    line = error_line(error)
    if ("matmul" in error or "broadcast" in error) and ".T" in line:
        return (
            f"The line that failed, `{line}`, uses `.T`. With a batch, Q and K have shape (B, n, d_k); `.T` "
            "reverses ALL the axes. Swap only the last two (np.swapaxes(K, -1, -2)) so that Q @ K^T gives (B, n, n)."
        )
    if "broadcast" in error and line:
        axes = [len(s) for s in _broadcast_shapes(error)]  # how many axes each array on the line had
        said = [f"The line that failed, `{line}`, combines arrays whose shapes do not line up: print the shape of "
                "each array on that line. The scores of a batch have shape (B, n, n)."]
        if 2 in axes:  # an array of two axes met the scores: a mask of shape (B, n), say
            said.append("A padding mask of shape (B, 1, n) lines up with them, one of shape (B, n) does not.")
        lasts = sorted({s[-1] for s in _broadcast_shapes(error) if len(s) == 3 and s[-1] != 1})
        if len(lasts) > 1:  # e.g. a mask sized by the longest sequence, not by n
            said.append(f"The last axes of its arrays differ ({' and '.join(map(str, lasts))}): an array combined "
                        "with the scores needs n entries along the keys (or 1, to broadcast).")
        if 4 in axes:  # scores of four axes: (B, n, B, n), np.dot's product of two 3-D arrays
            said.append("An array on that line has four axes: np.dot of 3-D arrays pairs every sequence with every "
                        "other, shape (B, n, B, n), where Q @ np.swapaxes(K, -1, -2) (np.matmul) gives (B, n, n)."
                        if code.uses("dot") else "An array on that line has four axes, where the scores have three.")
        return " ".join(said)
    return ""


def _broadcast_shapes(error: str) -> list[tuple[int, ...]]:
    """The shapes NumPy lists in a broadcasting error ("shapes (2,1,3) (2,3,2,3)"), in its order."""
    listed = re.search(r"shapes((?: \([0-9, ]*\))+)", error)
    if listed is None:
        return []
    return [tuple(int(n) for n in s.split(",") if n.strip()) for s in re.findall(r"\(([0-9, ]*)\)", listed.group(1))]


def _padded_cases(rngs: Rngs) -> list[Case]:
    """Every property on a visible input (a full and a padded sequence, several lengths, large scores, float32
    kept, the first sequence shorter, none full, one sequence, padding keys far above the real ones), then hidden
    inputs that vary the values."""
    rng = rngs(6)

    def batch(B, n, d_k, d_v, lengths, scale=1.0, dtype=np.float64):
        qkv = random_qkv(rng, n, n, d_k, d_v, scale=scale, value_scale=scale, batch=(B,), dtype=dtype)
        return (*qkv, np.array(lengths))

    return [
        Case("two sequences of lengths 4 and 2, padded to 4", batch(2, 4, 3, 2, [4, 2])),
        generated("three sequences of lengths 5, 3, 1", (
            "rng = np.random.default_rng(61)\n"
            "Q, K = (rng.standard_normal((3, 5, 4)) for _ in range(2))\n"
            "V = rng.standard_normal((3, 5, 2))\n"
            "lengths = np.array([5, 3, 1])"), ("Q", "K", "V", "lengths"), rngs),
        Case("large scores, lengths 3 and 2", batch(2, 3, 4, 2, [3, 2], scale=30.0)),
        # float32 in, float32 out.
        Case("float32, lengths 3 and 1", batch(2, 3, 2, 2, [3, 1], dtype=np.float32)),
        Case("the first sequence shorter than the other: lengths 1 and 3", batch(2, 3, 2, 2, [1, 3])),
        Case("no sequence of full length: lengths 2 and 1 padded to 4", batch(2, 4, 2, 2, [2, 1])),
        Case("one full sequence", batch(1, 4, 2, 2, [4])),
        # padding keys get exactly 0 whatever their scores: here they score over 1000 above the real keys.
        generated("padding keys scoring 1000 above every real key", (
            "rng = np.random.default_rng(62)\n"
            "Q = np.abs(rng.standard_normal((2, 3, 2))) + 0.5  # every coordinate positive\n"
            "K = rng.standard_normal((2, 3, 2))\n"
            "K[:, 2] = 1000.0  # the last key of each sequence, padding in both\n"
            "V = rng.standard_normal((2, 3, 2))\n"
            "lengths = np.array([2, 1])"), ("Q", "K", "V", "lengths"), rngs),
        Case("float32, lengths 6, 2, 4", batch(3, 6, 4, 3, [6, 2, 4], dtype=np.float32), hidden=True),
        Case("one full sequence of five", batch(1, 5, 3, 2, [5]), hidden=True),
        Case("the first sequence shorter than the others: lengths 2, 5, 3", batch(3, 5, 4, 2, [2, 5, 3]), hidden=True),
        Case("no sequence of full length: lengths 2 and 3 padded to 5", batch(2, 5, 4, 2, [2, 3]), hidden=True),
        Case("large scores, lengths 4, 1, 3", batch(3, 4, 3, 2, [4, 1, 3], scale=30.0), hidden=True),
        _padding_far_above(rng),
    ]


def _padding_far_above(rng) -> Case:
    Q = np.abs(rng.standard_normal((2, 4, 3))) + 0.5  # (B, n, d_k): every coordinate positive
    K = rng.standard_normal((2, 4, 3))
    K[0, 2:] = K[1, 3:] = 700.0  # padding keys of both sequences
    return Case("padding keys scoring far above every real key, other values",
                (Q, K, rng.standard_normal((2, 4, 2)), np.array([2, 3])), hidden=True)


PADDED_ATTENTION = Check(
    name="padded_attention",
    helpers={"padding_mask": padding_mask, "causal_mask": causal_mask, "masked_attention": masked_reference,
             "softmax": softmax, "attention": attention_reference},
    function="padded_attention",
    params=("Q", "K", "V", "lengths"),
    reference=padded_reference,
    sizes=Sizes({"Q": ("B", "n", "d_k"), "K": ("B", "n", "d_k"), "V": ("B", "n", "d_v"), "lengths": ("B",)},
                rebuild=lambda a: {**a, "lengths": np.minimum(a["lengths"], a["K"].shape[-2])}),
    make_cases=_padded_cases,
    mistakes=PADDED_MISTAKES,
    output_names=OUTPUT_NAMES,
    graded=_real_rows_only,
    specific=specific,
    scores=softmax_scores,
    error_hint=_padded_error_hint,
)


def check_padded_attention(padded_attention, *, hidden: bool = False) -> CheckResult:
    """Check `padded_attention(Q, K, V, lengths) -> (output, weights)` over a padded batch.

    Q, K: (B, n, d_k), V: (B, n, d_v), lengths: (B,) real tokens per sequence.
    Only the rows of real queries are compared. The exercise 06_padding_mask (book/masks.ipynb).
    """
    return check_in_process(PADDED_ATTENTION, padded_attention, hidden=hidden)


CHECKS = {c.name: c for c in (CAUSAL_MASK, MASKED_ATTENTION, PADDING_MASK, PADDED_ATTENTION)}
"""This module's checks by name: what the registry's `Exercise.checks` reads."""
