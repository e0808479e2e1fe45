"""Check for exercise 14: DeepSeek sparse attention for one block of queries.

The reference is the package's own: `core.sparse.indexer_scores` ranks the
keys, `core.sparse.sparse_attention` keeps each query's `top_k` best visible
keys (`top_k_mask`: the future never kept, every visible key kept when there
are at most `top_k`, ties to the earlier key) and takes the softmax over
them alone, every query head sharing one key and value per token (as
DeepSeek-V3.2 runs its latent attention). Each mistake is the same layer
rebuilt from the package's pieces (`layer`) with one part changed, so a hint
is given only when the student's two arrays are what that mistake returns.
"""

from __future__ import annotations

import math

import numpy as np

from ....core.attention import attention_weights
from ....core.masks import causal_mask
from ....core.softmax import softmax
from ....core.sparse import indexer_scores, sparse_attention, top_k_mask
from ..engine.cases import Case, Rngs, generated
from ..engine.code import Code
from ..engine.check import Check
from ..engine.mistakes import Mistake
from ..engine.results import CheckResult
from ..engine.run import check_in_process
from ..engine.shrink import Sizes

PARAMS = ("q", "k", "v", "q_index", "k_index", "w", "top_k")
OUTPUT_NAMES = ("output", "weights")


def reference(q, k, v, q_index, k_index, w, top_k):
    """(output (h, n_q, d_v), weights (h, n_q, n_k)): `sparse_attention` on the indexer's scores, one key and
    value per token shared by the h query heads."""
    n_q, n_k = np.shape(q)[-2], np.shape(k)[-2]
    if n_q > n_k:
        raise ValueError(f"the queries are the last n_q of the n_k positions: n_q = {n_q} must be at most n_k = {n_k}")
    scores = indexer_scores(q_index, k_index, w)  # (n_q, n_k)
    return sparse_attention(q, np.asarray(k)[None], np.asarray(v)[None], scores, top_k, enable_gqa=True)


# --- the layer rebuilt with one part changed -----------------------------------------------------

def _per_head(q_index, k_index):
    """(n_q, h_I, n_k): each indexer head's scaled dot products, before the relu."""
    d_i = q_index.shape[-1]
    per_head = q_index @ k_index.T * (1.0 / math.sqrt(d_i))  # (h_I, n_q, d_I) x (d_I, n_k) -> (h_I, n_q, n_k)
    return np.swapaxes(per_head, 0, 1)  # (n_q, h_I, n_k)


def _relu_forgotten(q_index, k_index, w):
    return np.einsum("th,ths->ts", w, _per_head(q_index, k_index))  # sum_h w[t, h] * s[t, h, s]


def _relu_of_each_weighted_head(q_index, k_index, w):
    return np.maximum(w[:, :, None] * _per_head(q_index, k_index), 0).sum(axis=1)  # sum_h relu(w s)


def _relu_of_the_sum(q_index, k_index, w):
    return np.maximum(_relu_forgotten(q_index, k_index, w), 0)  # relu(sum_h w s)


def _weights_ignored(q_index, k_index, w):
    return indexer_scores(q_index, k_index, np.ones_like(w))  # sum_h relu(s): every head weighted alike


def _visible(n_q, n_k, lower_right=True):
    return causal_mask(n_q, n_k, lower_right=lower_right)  # (n_q, n_k)


def _keep_right(scores, top_k):
    return top_k_mask(scores, top_k)


def _keep_before_causal(scores, top_k):
    """The top_k keys over every key, future ones included."""
    return top_k_mask(scores, top_k, causal=False)


def _keep_before_causal_then_hidden(scores, top_k):
    """The top_k keys over every key, then the future ones among them dropped (fewer than top_k left)."""
    return top_k_mask(scores, top_k, causal=False) & _visible(*scores.shape)


def _keep_top_left(scores, top_k):
    n_q, n_k = scores.shape
    if n_q == n_k:
        return None
    return top_k_mask(scores, top_k, causal=False, attn_mask=_visible(n_q, n_k, lower_right=False))


def _keep_later_on_ties(scores, top_k):
    """The visible top_k with ties broken toward the later key: the earlier-first rule on the keys reversed."""
    visible = _visible(*scores.shape)
    return top_k_mask(scores[:, ::-1], top_k, causal=False, attn_mask=visible[:, ::-1])[:, ::-1]


def _keep_hidden_when_few_visible(scores, top_k):
    """top_k keys ranked with the hidden ones at -inf: where fewer than top_k are visible, hidden ones fill up."""
    ranked = np.where(_visible(*scores.shape), scores, -np.inf)  # (n_q, n_k)
    return top_k_mask(ranked, top_k, causal=False)


def _weigh_right(q, k, keep, scale):
    return attention_weights(q, k[None], attn_mask=keep[None], scale=scale, enable_gqa=True)  # (h, n_q, n_k)


def _softmax_then_masked(over_visible: bool):
    def weigh(q, k, keep, scale):
        scores = q @ k.T * (1.0 / math.sqrt(q.shape[-1]))  # (h, n_q, d) x (d, n_k) -> (h, n_q, n_k)
        if over_visible:
            scores = np.where(_visible(*keep.shape), scores, -np.inf)
        return softmax(scores, axis=-1) * keep  # the kept keys' share of a softmax over more keys
    return weigh


def layer(q, k, v, q_index, k_index, w, top_k, *, index=indexer_scores, keep=_keep_right, weigh=_weigh_right,
          scale=None):
    """The reference computation, rebuilt from the package's pieces with one part changed (all defaults: the
    reference): index(q_index, k_index, w) -> (n_q, n_k) scores; keep(scores, top_k) -> (n_q, n_k) the keys
    kept, or None where the mistake cannot be made; weigh(q, k, keep, scale) -> (h, n_q, n_k) weights."""
    kept = keep(index(q_index, k_index, w), top_k)
    if kept is None:
        return None
    weights = weigh(q, k, kept, scale).astype(np.result_type(q, k, v), copy=False)  # (h, n_q, n_k)
    return weights @ v, weights  # (h, n_q, n_k) x (n_k, d_v) -> (h, n_q, d_v)


def _mistake(**changes):
    return lambda q, k, v, q_index, k_index, w, top_k: layer(q, k, v, q_index, k_index, w, top_k, **changes)


RELU_AFTER_HINT = (
    "The relu came after the head weights: relu(w[t, h] * s) or relu of the weighted sum. The relu belongs to each "
    "head's own scaled dot product, before its weight: a head either votes for a key or abstains, and its weight, "
    "which may be negative, then says how much its vote counts (a negative weight turns a vote into one against)."
)
FUTURE_HINT = (
    "Keys after a query's own position were ranked with the visible ones. The causal mask comes first: a query "
    "ranks only the keys at or before its position, then keeps the top_k of those; a future key is never kept, and "
    "it must not take the place of a visible one."
)

MISTAKES = (
    Mistake("relu_forgotten",
            "The indexer's scores had no relu: a head whose scaled dot product with a key is negative still "
            "counted, where it should abstain. Each head's scaled dot product goes through relu(x) = max(x, 0) "
            "before it is weighted and summed.",
            _mistake(index=_relu_forgotten)),
    Mistake("relu_after_weighting", RELU_AFTER_HINT, _mistake(index=_relu_of_each_weighted_head)),
    Mistake("relu_after_weighting", RELU_AFTER_HINT, _mistake(index=_relu_of_the_sum)),
    Mistake("head_weights_ignored",
            "The indexer heads were weighted alike: the weights w were not used. Each query weighs each indexer "
            "head's vote by its own w[t, h] (of either sign) before summing over the heads.",
            _mistake(index=_weights_ignored)),
    Mistake("future_keys_selected", FUTURE_HINT, _mistake(keep=_keep_before_causal)),
    Mistake("future_keys_selected", FUTURE_HINT, _mistake(keep=_keep_before_causal_then_hidden)),
    Mistake("top_left_causal_mask",
            "The causal mask was placed as if the queries were the first n_q positions. They are the last n_q of "
            "the n_k keys (a block of new tokens after the earlier ones): query i sits at position i + n_k - n_q "
            "and may rank every key up to there.",
            _mistake(keep=_keep_top_left)),
    Mistake("ties_to_the_later_key",
            "Where keys tie for the last place kept, the later key was kept. The rule here (the package's, and "
            "a stable sort's) keeps the earlier key: rank by score, and among equal scores by position, earliest "
            "first.",
            _mistake(keep=_keep_later_on_ties)),
    Mistake("hidden_keys_kept_when_few_visible",
            "A query that sees fewer than top_k keys kept some hidden (future) keys to make up the number. Such a "
            "query keeps every key it may see and no other: a future key ranked at -inf is still not a key it may "
            "attend to.",
            _mistake(keep=_keep_hidden_when_few_visible)),
    Mistake("softmax_over_all_keys",
            "The weights are the kept keys' share of a softmax over more keys (every visible one, or every key), "
            "the others then set to 0: the kept weights sum to less than 1. The softmax runs over the kept keys "
            "alone: hide the others (-inf) before it.",
            _mistake(weigh=_softmax_then_masked(over_visible=True))),
    Mistake("softmax_over_all_keys",
            "The weights are the kept keys' share of a softmax over more keys (every visible one, or every key), "
            "the others then set to 0: the kept weights sum to less than 1. The softmax runs over the kept keys "
            "alone: hide the others (-inf) before it.",
            _mistake(weigh=_softmax_then_masked(over_visible=False))),
    Mistake("missing_scale",
            "The attention scores were not scaled: multiply q . k by 1 / sqrt(d), d the width of a query and key, "
            "before the softmax (the indexer's own scale does not change which keys are kept).",
            _mistake(scale=1.0)),
)


# --- the inputs -------------------------------------------------------------------------------------

def _code(seed, h, n_q, n_k, d, d_v, h_i, d_i, top_k, *, scale=None, dtype=None, small_integers=False) -> str:
    """The code that draws an input, shown to the student; `small_integers`: the indexer's arrays drawn from
    -2 .. 2, so that its scores are exact (d_I = 4: a scale of 1/2) and equal ones tie in any order of the sums."""
    def draw(shape, scaled=False, index=False):
        if index and small_integers:
            return f"rng.integers(-2, 3, {shape}).astype(np.float64)"
        expr = f"rng.standard_normal({shape})" + (f" * {scale:g}" if scale and scaled else "")
        if dtype is None:
            return expr
        return f"({expr}).astype(np.{dtype})" if " * " in expr else f"{expr}.astype(np.{dtype})"

    lines = [f"rng = np.random.default_rng({seed})",
             f"q = {draw((h, n_q, d), True)}  # (h, n_q, d)",
             f"k = {draw((n_k, d), True)}  # (n_k, d): one key per token, for every head",
             f"v = {draw((n_k, d_v))}  # (n_k, d_v)",
             f"q_index = {draw((h_i, n_q, d_i), index=True)}  # (h_I, n_q, d_I)",
             f"k_index = {draw((n_k, d_i), index=True)}  # (n_k, d_I)",
             f"w = {draw((n_q, h_i), index=True)}  # (n_q, h_I)"]
    return "\n".join(lines + [f"top_k = {top_k}"])


TIE_DRAW = 4
"""The random generator's seed that draws the visible input with ties: a draw where keeping the later of two tied
keys changes the result."""


def _shown(label: str, rngs: Rngs, *args, **options) -> Case:
    return generated(label, _code(*args, **options), PARAMS, rngs)


def _draw(rng, h, n_q, n_k, d, d_v, h_i, d_i, *, scale=1.0, dtype=np.float64):
    arrays = (rng.standard_normal((h, n_q, d)) * scale, rng.standard_normal((n_k, d)) * scale,
              rng.standard_normal((n_k, d_v)), rng.standard_normal((h_i, n_q, d_i)),
              rng.standard_normal((n_k, d_i)), rng.standard_normal((n_q, h_i)))
    return tuple(a.astype(dtype) for a in arrays)


def _cases(rngs: Rngs) -> list[Case]:
    rng = rngs(1400)
    return [
        _shown("a prompt of 6 tokens, 2 heads, an indexer of 3 heads, top_k = 3", rngs, 1, 2, 6, 6, 4, 4, 3, 4, 3),
        _shown("a block of 4 queries after 5 earlier tokens (n_q = 4, n_k = 9), top_k = 4", rngs,
               2, 2, 4, 9, 4, 3, 4, 2, 4),
        _shown("decoding: one query after 9 earlier tokens, top_k = 3", rngs, 3, 2, 1, 10, 4, 4, 2, 4, 3),
        _shown("ties: the indexer's numbers are small integers, and equal scores tie for the last place kept",
               rngs, TIE_DRAW, 1, 6, 6, 4, 2, 2, 4, 2, small_integers=True),
        _shown("top_k = 8 over 6 tokens: every visible key kept", rngs, 5, 2, 6, 6, 4, 2, 2, 4, 8),
        _shown("top_k = 1, a block of 3 queries after 4 earlier tokens", rngs, 6, 2, 3, 7, 4, 2, 3, 2, 1),
        _shown("float32, 2 heads, 5 queries after 2 earlier tokens, top_k = 2", rngs, 7, 2, 5, 7, 4, 3, 4, 4, 2,
               dtype="float32"),
        _shown("large scores (q and k times 30), top_k = 3", rngs, 8, 2, 4, 6, 4, 2, 2, 4, 3, scale=30),
        _shown("an indexer of 6 heads, 8 tokens, top_k = 4", rngs, 9, 1, 8, 8, 2, 2, 6, 3, 4),
        Case("4 heads, 8 queries after 8 earlier tokens, an indexer of 4 heads, top_k = 5",
             _draw(rng, 4, 8, 16, 8, 4, 4, 8) + (5,), hidden=True),
        Case("float32, one query after 15 earlier tokens, top_k = 6",
             _draw(rng, 2, 1, 16, 4, 4, 3, 4, dtype=np.float32) + (6,), hidden=True),
        Case("large scores, a prompt of 7 tokens, top_k = 2", _draw(rng, 2, 7, 7, 4, 2, 2, 4, scale=30.0) + (2,),
             hidden=True),
        Case("a prompt of 9 tokens, an indexer of 5 heads, top_k = 4", _draw(rng, 3, 9, 9, 4, 3, 5, 2) + (4,),
             hidden=True),
        _tied(rng),
    ] + _assumption_cases_sparse_attention(rngs)


def _tied(rng) -> Case:
    """A hidden input whose indexer scores tie: its arrays drawn from -2 .. 2, d_I = 4 (exact scores)."""
    q, k, v = _draw(rng, 2, 7, 7, 4, 3, 1, 4)[:3]
    q_index, k_index, w = (rng.integers(-2, 3, shape).astype(np.float64) for shape in ((2, 7, 4), (7, 4), (7, 2)))
    return Case("ties: 7 tokens, the indexer's numbers small integers, top_k = 3", (q, k, v, q_index, k_index, w, 3),
                hidden=True)


def _assumption_cases_sparse_attention(rngs: Rngs) -> list[Case]:
    """Inputs that break what a sparse attention could silently assume."""
    rng = rngs(1401)
    return [
        # top_k > n_k: more keys asked for than there are (a short prompt under a model's top_k of 2048)
        _shown("top_k = 20 over 4 tokens: more than there are keys", rngs, 10, 2, 4, 4, 2, 2, 2, 3, 20),
        # the values need not be as wide as the queries and keys, nor the indexer's heads as many as the main ones
        Case("values of width 5, d = 3, an indexer of 4 heads of width 2 beside 2 heads, top_k = 3",
             _draw(rng, 2, 5, 7, 3, 5, 4, 2) + (3,), hidden=True),
    ]


def _softmax_scores(case: Case) -> tuple[np.ndarray, int]:
    """(the scaled scores of the kept keys, -inf at the others, -1): what `Check.scores` reads to tell a saturated
    input."""
    q, k, _, q_index, k_index, w, top_k = case.args
    q, k = np.asarray(q, dtype=np.float64), np.asarray(k, dtype=np.float64)
    kept = top_k_mask(indexer_scores(q_index, k_index, w), top_k)  # (n_q, n_k)
    scores = q @ k.T / np.sqrt(q.shape[-1])  # (h, n_q, d) x (d, n_k) -> (h, n_q, n_k)
    return np.where(kept, scores, -np.inf), -1


def _error_hint(case: Case, error: str, code: Code) -> str:
    top_k, n_k = int(case.args[-1]), np.shape(case.args[1])[0]
    if top_k >= n_k and ("kth" in error or "out of bounds" in error):
        return (f"top_k = {top_k} here and there are only n_k = {n_k} keys. A query that sees top_k keys or "
                "fewer keeps all of them: the number kept is never more than the number it may see.")
    return ""


SPARSE_ATTENTION = Check(
    name="sparse_attention",
    function="sparse_attention",
    params=PARAMS,
    reference=reference,
    make_cases=_cases,
    mistakes=MISTAKES,
    output_names=OUTPUT_NAMES,
    sizes=Sizes({"q": ("h", "n_q", "d"), "k": ("n_k", "d"), "v": ("n_k", "d_v"), "q_index": ("h_I", "n_q", "d_I"),
                 "k_index": ("n_k", "d_I"), "w": ("n_q", "h_I")}),
    error_hint=_error_hint,
    helpers={"softmax": softmax},
    scores=_softmax_scores,
)


def check_sparse_attention(sparse_attention, *, hidden: bool = False) -> CheckResult:
    """Check `sparse_attention(q, k, v, q_index, k_index, w, top_k) -> (output, weights)`: DeepSeek sparse attention.

    q: (h, n_q, d), the last n_q of n_k positions; k: (n_k, d) and v: (n_k, d_v), one per token shared by the
    heads; q_index: (h_I, n_q, d_I), k_index: (n_k, d_I), w: (n_q, h_I), the lightning indexer's; top_k: the keys
    each query keeps. The exercise 14_sparse_attention (book/todays_models.ipynb).
    """
    return check_in_process(SPARSE_ATTENTION, sparse_attention, hidden=hidden)


CHECKS = {c.name: c for c in (SPARSE_ATTENTION,)}
"""This module's checks by name: what the registry's `Exercise.checks` reads."""
