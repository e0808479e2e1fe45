"""Check for exercise 10: one decoding step with grouped-query attention against a KV cache.

The reference is the package's `decoder.decode_step`. Each mistake is the
same step rebuilt from the package's pieces (`apply_rope`, `repeat_kv`,
`scaled_dot_product_attention`) with one thing done wrong, so a hint is
given only when the student's three arrays are what that mistake returns.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ....core.attention import repeat_kv, scaled_dot_product_attention
from ....core.positions import apply_rope
from ....core.softmax import softmax
from ....decoder.step import decode_step
from ..engine.calls import error_line
from ..engine.cases import Case, Rngs
from ..engine.check import Check
from ..engine.code import Code
from ..engine.run import check_in_process
from ..engine.shrink import Sizes
from ..engine.premises import exp_overflows
from ..engine.mistakes import Mistake
from ..engine.results import CaseResult, CheckResult, CheckStatus
from .attention import reference as attention_reference
from .attention import DIVIDED_BY_D_K_HINT
from .softmax import NO_MAX_SUBTRACTION, naive_softmax

OUTPUT_NAMES = ("output", "k_cache", "v_cache")
PARAMS = ("q", "k", "v", "k_cache", "v_cache")


def _rotate(x, position: int):
    """x (heads, n, d) rotated by RoPE at positions position, position + 1, ... (base 10000)."""
    return apply_rope(x, position + np.arange(x.shape[-2]))


def _tile(x, n_rep):
    """(h_kv, n, d) -> (h_kv * n_rep, n, d) in the order 0, 1, 0, 1, ...: the heads tiled, not repeated."""
    return np.tile(x, (n_rep, 1, 1))


def _attend(q, keys, values, share=repeat_kv, **kwargs):
    """Each query head against its key/value head, shared by `share`; kwargs go to scaled_dot_product_attention."""
    g = q.shape[0] // keys.shape[0]
    return scaled_dot_product_attention(q, share(keys, g), share(values, g), **kwargs)  # (h_q, 1, d_v)


def _step(q, k, v, k_cache, v_cache, *, position=None, rotate_q=True, cache_rotated=True, score_rotated=True,
          rotate_values=False, rotate_whole_cache=False, **attend):
    """decode_step with one of its parts changed (all defaults: the right step)."""
    t = k_cache.shape[-2]
    p = t if position is None else position
    q_used = _rotate(q, p) if rotate_q else q
    k_rot = _rotate(k, p)
    v_new = _rotate(v, p) if rotate_values else v
    cached = np.concatenate([k_cache, k_rot if cache_rotated else k], axis=-2)  # (h_kv, t + 1, d)
    values = np.concatenate([v_cache, v_new], axis=-2)
    if rotate_whole_cache:
        scored = _rotate(cached, 0)  # every cached key rotated (again) at 0..t
    else:
        scored = np.concatenate([k_cache, k_rot if score_rotated else k], axis=-2)
    return _attend(q_used, scored, values, **attend), cached, values


def _appended_on_heads(q, k, v, k_cache, v_cache):
    """Appended along axis 0 (the heads), which only runs with one cached token; g then follows the new head count."""
    k_c = np.concatenate([k_cache, _rotate(k, k_cache.shape[-2])], axis=0)  # (2 h_kv, 1, d) for t = 1
    v_c = np.concatenate([v_cache, v], axis=0)
    if q.shape[0] % k_c.shape[0]:
        return None  # the student's code would raise here
    return _attend(_rotate(q, k_cache.shape[-2]), k_c, v_c), k_c, v_c


def _cache_not_updated(q, k, v, k_cache, v_cache):
    out, _, _ = decode_step(q, k, v, k_cache, v_cache)
    return out, k_cache, v_cache


APPENDED_ON_WRONG_AXIS = Mistake(
    "appended_on_wrong_axis",
    "The new key and value were appended along the wrong axis. The cache has shape (h_kv, t, d): the heads "
    "first, then the t tokens, then the numbers of each vector. A new token adds one row along the token "
    "axis (axis 1, or -2), giving (h_kv, t + 1, d); the number of heads never changes.",
    _appended_on_heads,
)
TOP_LEFT_MASK = Mistake(
    "top_left_causal_mask",
    "Every query head put all its weight on the first cached token: a causal mask aligned top-left, like "
    "is_causal=True, lets the first query see only the first key. The new token is the LAST position: every "
    "key in the cache comes before it, so it needs no mask at all (or the lower-right causal mask).",
    lambda q, k, v, kc, vc: _step(q, k, v, kc, vc, is_causal=True),
)
HEADS_TILED = Mistake(
    "kv_heads_tiled",
    "The key/value heads were shared in the wrong order. Query head i reads key/value head i // g, with "
    "g = h_q / h_kv: consecutive query heads share one head, 0, 0, 1, 1 (np.repeat along the head axis), "
    "not 0, 1, 0, 1 (np.tile).",
    lambda q, k, v, kc, vc: _step(q, k, v, kc, vc, share=_tile),
)
KEYS_CACHED_BEFORE_ROPE = Mistake(
    "keys_cached_before_rope",
    "The cache holds keys as attention uses them: already rotated by RoPE at their own positions. Rotate "
    "the new key at its position before appending it, and use the cached keys as they are: never append an "
    "unrotated key, and never rotate cached keys again.",
)
ROTATED_AT_ZERO = Mistake(
    "rotated_at_position_0",
    "The new query and key were not rotated for their position. With one token, apply_rope's default "
    "positions (0, 1, ...) put it at position 0, which does not rotate it at all. The new token comes after "
    "the t cached ones: its position is t, the cache's length.",
    lambda q, k, v, kc, vc: _step(q, k, v, kc, vc, position=0),
)
OFF_BY_ONE = Mistake(
    "off_by_one_position",
    "The new token was rotated at the wrong position, one away from the right one. Positions count from 0: "
    "after t cached tokens (positions 0 .. t-1), the new one is at position t.",
)
QUERY_NOT_ROTATED = Mistake(
    "query_not_rotated",
    "The key was rotated but the query was not. RoPE rotates both, each at its own position, so that the "
    "score q . k depends on how far apart the two tokens are.",
    lambda q, k, v, kc, vc: _step(q, k, v, kc, vc, rotate_q=False),
)
VALUES_ROTATED = Mistake(
    "values_rotated",
    "The values were rotated too. RoPE rotates queries and keys, which make the scores; the values are "
    "mixed as they are, and cached as they are.",
    lambda q, k, v, kc, vc: _step(q, k, v, kc, vc, rotate_values=True),
)
CACHE_NOT_UPDATED = Mistake(
    "cache_not_updated",
    "The output is right, but the caches came back without the new token. Return the caches with its key "
    "and value appended, shapes (h_kv, t + 1, d) and (h_kv, t + 1, d_v): the next step needs them.",
    _cache_not_updated,
)

def _cache_replaced(q, k, v, k_cache, v_cache):
    """The caches replaced by the new token: it attends to itself alone, and the earlier tokens are lost."""
    t = k_cache.shape[-2]
    keys, values = _rotate(k, t), v  # (h_kv, 1, d)
    return _attend(_rotate(q, t), keys, values), keys, values


def _new_token_not_attended(q, k, v, k_cache, v_cache):
    """Scored against the old cache only (the new key appended after attending)."""
    if k_cache.shape[-2] == 0:
        return None  # nothing to attend to: the student's code would give nan or raise
    t = k_cache.shape[-2]
    out = _attend(_rotate(q, t), k_cache, v_cache)
    return out, np.concatenate([k_cache, _rotate(k, t)], axis=-2), np.concatenate([v_cache, v], axis=-2)


def _appended_at_front(q, k, v, k_cache, v_cache):
    """The new token put before the cached ones: the output is the same, the caches' order is not."""
    t = k_cache.shape[-2]
    keys = np.concatenate([_rotate(k, t), k_cache], axis=-2)  # (h_kv, 1 + t, d)
    values = np.concatenate([v, v_cache], axis=-2)
    return _attend(_rotate(q, t), keys, values), keys, values


def _softmax_axis(axis):
    def predict(q, k, v, k_cache, v_cache):
        out, keys, values = decode_step(q, k, v, k_cache, v_cache)
        g = q.shape[0] // keys.shape[0]
        scores = _rotate(q, k_cache.shape[-2]) @ np.swapaxes(repeat_kv(keys, g), -1, -2) / np.sqrt(q.shape[-1])
        return softmax(scores, axis=axis) @ repeat_kv(values, g), keys, values  # (h_q, 1, t + 1) x (h_q, t + 1, d)
    return predict


SOFTMAX_AXIS_HINT = (
    "The softmax ran over the wrong axis of the scores (h_q, 1, t + 1): over the one query or over the heads. "
    "Each head's query spreads its weight over the t + 1 keys: normalise along the last axis."
)

def _no_max_subtraction(q, k, v, k_cache, v_cache):
    """The step with exp taken of the scores themselves: inf / inf = nan where a score passes exp's limit."""
    scores = _scores_of(q, k, k_cache)  # (h_q, 1, t + 1)
    _, k_cache, v_cache = decode_step(q, k, v, k_cache, v_cache)
    values = np.repeat(v_cache, q.shape[0] // v_cache.shape[0], axis=0)  # (h_q, t + 1, d_v)
    with np.errstate(all="ignore"):
        return naive_softmax(scores) @ values, k_cache, v_cache  # (h_q, 1, t + 1) x (h_q, t + 1, d_v)


MISTAKES = (
    APPENDED_ON_WRONG_AXIS,
    Mistake(NO_MAX_SUBTRACTION.id, NO_MAX_SUBTRACTION.hint, _no_max_subtraction,
            premise=exp_overflows(lambda case: _softmax_scores(case))),
    Mistake("appended_at_front",
            "The output is right, but the new key and value were put in FRONT of the cache. The cache keeps the "
            "tokens in order, position 0 first: the new token, at position t, goes at the end.",
            _appended_at_front),
    Mistake("softmax_wrong_axis", SOFTMAX_AXIS_HINT, _softmax_axis(-2)),
    Mistake("softmax_wrong_axis", SOFTMAX_AXIS_HINT, _softmax_axis(0)),
    Mistake("cache_replaced",
            "The caches came back holding only the new token, and the new token attended to itself alone: the "
            "t earlier tokens were replaced instead of kept. Append the new key and value to the cache along "
            "the token axis, (h_kv, t, d) -> (h_kv, t + 1, d), and attend over all of them.",
            _cache_replaced),
    Mistake("new_token_not_attended",
            "The caches are right, but the output was computed against the t earlier tokens only: the new token "
            "must also attend to itself. Append first, then attend over all t + 1 keys.",
            _new_token_not_attended),
    TOP_LEFT_MASK,
    HEADS_TILED,
    dataclasses.replace(KEYS_CACHED_BEFORE_ROPE, predict=lambda q, k, v, kc, vc: _step(
        q, k, v, kc, vc, cache_rotated=False)),  # scored with the rotated key, cached unrotated
    dataclasses.replace(KEYS_CACHED_BEFORE_ROPE, predict=lambda q, k, v, kc, vc: _step(
        q, k, v, kc, vc, cache_rotated=False, score_rotated=False)),  # the unrotated key, scored and cached
    dataclasses.replace(KEYS_CACHED_BEFORE_ROPE, predict=lambda q, k, v, kc, vc: _step(
        q, k, v, kc, vc, cache_rotated=False, rotate_whole_cache=True)),  # cached unrotated, all rotated again
    ROTATED_AT_ZERO,
    dataclasses.replace(OFF_BY_ONE, predict=lambda q, k, v, kc, vc: _step(q, k, v, kc, vc, position=kc.shape[-2] + 1)),
    dataclasses.replace(OFF_BY_ONE, predict=lambda q, k, v, kc, vc: _step(q, k, v, kc, vc, position=kc.shape[-2] - 1)
                        if kc.shape[-2] else None),
    QUERY_NOT_ROTATED,
    VALUES_ROTATED,
    CACHE_NOT_UPDATED,
    Mistake("missing_scale",
            "The scores were not scaled: divide q . k by sqrt(d), the size of one head, before the softmax.",
            lambda q, k, v, kc, vc: _step(q, k, v, kc, vc, scale=1.0)),
    Mistake("scaled_by_cache_length",
            "The scores were divided by the square root of the number of keys (t + 1); the scale is 1/sqrt(d), "
            "d the size of one head's vectors, whatever the length of the cache.",
            lambda q, k, v, kc, vc: _step(q, k, v, kc, vc, scale=1.0 / np.sqrt(kc.shape[-2] + 1))
            if kc.shape[-2] + 1 != q.shape[-1] else None),
    Mistake("divided_by_d_k", DIVIDED_BY_D_K_HINT,
            lambda q, k, v, kc, vc: _step(q, k, v, kc, vc, scale=1.0 / q.shape[-1])),
    *(Mistake("position_from_wrong_axis",
              "The new token was rotated at a position read from another axis of the cache: the cache is "
              "(h_kv, t, d), and the new token's position is t, the length of its middle axis (axis 1, or -2), "
              "not its number of heads h_kv or its vector size d.",
              lambda q, k, v, kc, vc, axis=axis: _step(q, k, v, kc, vc, position=kc.shape[axis])
              if kc.shape[axis] != kc.shape[-2] else None) for axis in (0, -1)),
)


def _cases(rngs: Rngs) -> list[Case]:
    """Every property on a visible input (groups of query heads, one cached token, multi-query, multi-head, float32
    kept, large scores, an empty cache, values narrower than keys), then hidden inputs that vary the values."""
    rng = rngs(10)

    def step(h_q, h_kv, t, d, scale=1.0, dtype=np.float64, d_v=None):
        d_v = d if d_v is None else d_v
        q = rng.standard_normal((h_q, 1, d)) * scale
        k = rng.standard_normal((h_kv, 1, d)) * scale
        v = rng.standard_normal((h_kv, 1, d_v))
        k_cache = apply_rope(rng.standard_normal((h_kv, t, d)) * scale)  # rotated at positions 0 .. t-1
        v_cache = rng.standard_normal((h_kv, t, d_v))
        return tuple(a.astype(dtype) for a in (q, k, v, k_cache, v_cache))

    return [
        Case("4 query heads sharing 2 key/value heads, 3 cached tokens", step(4, 2, 3, 4)),
        Case("one cached token", step(4, 2, 1, 4)),
        Case("multi-query: 4 query heads, one key/value head, 5 cached tokens", step(4, 1, 5, 6)),
        Case("multi-head: 2 query heads, 2 key/value heads, 4 cached tokens", step(2, 2, 4, 4)),
        # float32 in, float32 out.
        Case("float32, 2 query heads sharing 1, 3 cached tokens", step(2, 1, 3, 2, dtype=np.float32)),
        Case("large scores, 2 query heads sharing 1, 3 cached tokens", step(2, 1, 3, 4, scale=6.0)),
        Case("an empty cache: the first token", step(2, 1, 0, 4)),
        Case("6 query heads in 3 groups, 7 cached tokens, d = 8", step(6, 3, 7, 8), hidden=True),
        Case("float32, 8 query heads sharing 2, 16 cached tokens", step(8, 2, 16, 16, dtype=np.float32), hidden=True),
        Case("large scores, 4 query heads sharing 2, 6 cached tokens", step(4, 2, 6, 4, scale=6.0), hidden=True),
        Case("an empty cache, 4 query heads sharing 2", step(4, 2, 0, 4), hidden=True),
        Case("multi-query: 3 query heads, one key/value head, 2 cached tokens", step(3, 1, 2, 4), hidden=True),
    ] + _scores_beyond_exp(rngs) + _assumption_cases_decode(rngs)


def _scores_beyond_exp(rngs: Rngs) -> list[Case]:
    """Scores far beyond exp's limit (about 709): a softmax without its max subtracted overflows. (Drawn from their
    own generators, so that the other inputs keep their values.)"""
    def step(rng, h_q, h_kv, t, d):
        q, k = rng.standard_normal((h_q, 1, d)) * 60, rng.standard_normal((h_kv, 1, d)) * 60
        v = rng.standard_normal((h_kv, 1, d))
        k_cache = apply_rope(rng.standard_normal((h_kv, t, d)) * 60)  # rotated at positions 0 .. t-1
        return q, k, v, k_cache, rng.standard_normal((h_kv, t, d))

    return [Case("scores beyond exp's limit, 2 query heads sharing 1, 3 cached tokens", step(rngs(103), 2, 1, 3, 4)),
            Case("scores beyond exp's limit, 4 query heads sharing 2, 5 cached tokens", step(rngs(104), 4, 2, 5, 4),
                 hidden=True)]


def _assumption_cases_decode(rngs: Rngs) -> list[Case]:
    """Inputs that break what a decoding step could silently assume (a cache of length 1, h_kv = 1 are above)."""
    rng = rngs(101)

    def step(h_q, h_kv, t, d, d_v):
        q, k = rng.standard_normal((h_q, 1, d)), rng.standard_normal((h_kv, 1, d))
        v = rng.standard_normal((h_kv, 1, d_v))
        k_cache = apply_rope(rng.standard_normal((h_kv, t, d)))  # rotated at positions 0 .. t-1
        return q, k, v, k_cache, rng.standard_normal((h_kv, t, d_v))

    return [
        # d_v != d: the values need not be as wide as the keys.
        Case("values of width 3, d = 4: 2 query heads sharing 1, 2 cached tokens", step(2, 1, 2, 4, 3)),
        Case("values of width 6, d = 4: 4 query heads sharing 2, 3 cached tokens", step(4, 2, 3, 4, 6), hidden=True),
    ]


def _error_hint(case: Case, error: str, code: Code) -> str:
    if "concatenation axis must match" in error:
        return APPENDED_ON_WRONG_AXIS.hint
    if "positions" in error:
        return ("apply_rope takes the positions of the tokens of x, one per token: for one new token at position t, "
                "positions=[t] (or np.array([t])).")
    if ("matmul" in error or "broadcast" in error) and error_line(error):
        return (f"The line that failed, `{error_line(error)}`, combines arrays whose shapes do not match. q is (h_q, 1, d) and the keys (h_kv, t + 1, d): give each query head "
                "its key/value head first (shape (h_q, t + 1, d)), then the scores are q times the keys transposed on "
                "their last two axes, (h_q, 1, t + 1).")
    return ""


def _refine(cases: tuple[Case, ...], results: list[CaseResult]) -> list[CaseResult]:
    """A concatenation on the wrong axis fails with NumPy's own error: name that mistake."""
    refined = []
    for result in results:
        if result.status == CheckStatus.FAILED and result.mistake is None and "concatenation axis must match" in result.got:
            result = dataclasses.replace(result, mistake=APPENDED_ON_WRONG_AXIS.id, hint=APPENDED_ON_WRONG_AXIS.hint)
        refined.append(result)
    return refined


def _softmax_scores(case: Case) -> tuple[np.ndarray, int]:
    """(the new token's scaled scores against the cache and itself, rotated at position t, -1): what `Check.scores`
    reads to tell a saturated input."""
    q, k, _, k_cache = (np.asarray(a, dtype=np.float64) for a in case.args[:4])
    return _scores_of(q, k, k_cache), -1


def _scores_of(q, k, k_cache) -> np.ndarray:
    """The new token's scaled scores against the cache and itself, both rotated at position t: (h_q, 1, t + 1)."""
    t = k_cache.shape[1]  # the new token's position
    keys = np.concatenate([k_cache, apply_rope(k, positions=[t])], axis=1)  # (h_kv, t + 1, d)
    keys = np.repeat(keys, q.shape[0] // keys.shape[0], axis=0)  # (h_q, t + 1, d)
    # (h_q, 1, d) x (h_q, d, t + 1) -> (h_q, 1, t + 1)
    return apply_rope(q, positions=[t]) @ np.swapaxes(keys, -1, -2) / np.sqrt(q.shape[-1])


DECODE_STEP = Check(
    name="decode_step",
    helpers={"apply_rope": apply_rope, "softmax": softmax, "attention": attention_reference},
    function="decode_step",
    params=PARAMS,
    reference=decode_step,
    scores=_softmax_scores,
    sizes=Sizes({"q": ("h_q", None, "d"), "k": ("h_kv", None, "d"), "v": ("h_kv", None, "d_v"),
                 "k_cache": ("h_kv", "t", "d"), "v_cache": ("h_kv", "t", "d_v")}),
    make_cases=_cases,
    mistakes=MISTAKES,
    output_names=OUTPUT_NAMES,
    error_hint=_error_hint,
    refine=_refine,
)


def check_decode_step(decode_step, *, hidden: bool = False) -> CheckResult:
    """Check `decode_step(q, k, v, k_cache, v_cache) -> (output, k_cache, v_cache)`: one token against the cache.

    q: (h_q, 1, d), k: (h_kv, 1, d), v: (h_kv, 1, d_v), the new token's vectors
    before RoPE (base 10000); k_cache: (h_kv, t, d), v_cache: (h_kv, t, d_v), the
    t earlier tokens (keys rotated). Returns the output (h_q, 1, d_v) and the
    caches with the new token appended. The exercise 10_decode_step (book/decoding.ipynb).
    """
    return check_in_process(DECODE_STEP, decode_step, hidden=hidden)


CHECKS = {c.name: c for c in (DECODE_STEP,)}
"""This module's checks by name: what the registry's `Exercise.checks` reads."""
