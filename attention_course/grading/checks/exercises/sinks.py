"""Check for exercise 12: attention with a learned sink per head and a sliding window, as a gpt-oss layer computes it.

The reference is the package's own: `core.sinks.sink_attention` with the
decoder's `layer_mask` (a sliding window, or the causal mask of a full layer,
the queries being the last n_q of the n_k positions) and grouped-query heads.
Each mistake is the same layer rebuilt from the package's pieces
(`attention_scores`, `repeat_kv`, `sliding_window_mask`, `sink_softmax`,
`softmax`) with one thing done wrong, so a hint is given only when the
student's two arrays are what that mistake returns.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from ....core.attention import attention_scores, repeat_kv
from ....core.masks import causal_mask, sliding_window_mask
from ....core.sinks import sink_attention, sink_softmax
from ....core.softmax import softmax
from ....decoder.attention import layer_mask
from ..engine.calls import error_line
from ..engine.cases import Case, Rngs, generated
from ..engine.code import Code
from ..engine.check import Check
from ..engine.premises import exp_limits, exp_overflows
from ..engine.mistakes import Mistake, Premise, same_values
from ..engine.results import CheckResult
from ..engine.run import check_in_process
from ..engine.shrink import Sizes
from .decoding import HEADS_TILED

PARAMS = ("q", "k", "v", "sinks", "window")
OUTPUT_NAMES = ("output", "weights")


def reference(q, k, v, sinks, window):
    """(output (h_q, n_q, d_v), weights (h_q, n_q, n_k)): `sink_attention` under the layer's mask, heads shared."""
    n_q, n_k = np.shape(q)[-2], np.shape(k)[-2]
    if n_q > n_k:
        raise ValueError(f"the queries are the last n_q of the n_k positions: n_q = {n_q} must be at most n_k = {n_k}")
    return sink_attention(q, k, v, sinks, attn_mask=layer_mask(n_q, n_k, window), enable_gqa=True)


# --- the layer rebuilt with one part changed -----------------------------------------------------

def _allowed(n_q: int, n_k: int, window: int | None, *, extra: int = 0, lower_right: bool = True) -> np.ndarray:
    """(n_q, n_k) the keys each query may see: its window (widened by `extra`, which may be negative), or causal."""
    if window is None:
        return causal_mask(n_q, n_k, lower_right=lower_right)
    if window + extra < 1:
        return np.zeros((n_q, n_k), dtype=bool)  # a window of 0: not even itself
    return sliding_window_mask(n_q, n_k, window + extra, lower_right=lower_right)


def _band(n_q: int, n_k: int, window: int | None, *, causal: bool) -> np.ndarray:
    """The window's keys without the causal half: |j - p| < window (`causal` False: j > p - window only, no end)."""
    if window is None:
        return None
    p = np.arange(n_q)[:, None] + (n_k - n_q)  # (n_q, 1): each query's position
    j = np.arange(n_k)[None, :]  # (1, n_k)
    return (np.abs(j - p) < window) if causal else (j > p - window)


def layer(q, k, v, sinks, window, *, allowed=None, fill=-np.inf, sink=None, scale=None, share=repeat_kv,
          weigh=None, returned=None):
    """The reference computation, rebuilt from the package's pieces with one part changed (all defaults: the reference).

    allowed: (n_q, n_k) mask to use; fill: the score of a key it hides; sink:
    the (h_q,) sinks to use; scale: multiplies the scores; share: gives each
    query head its key/value head; weigh(masked scores, sinks) -> weights;
    returned(masked scores, sinks, weights) -> the weights returned.
    """
    h_q, n_q, n_k = q.shape[0], q.shape[-2], k.shape[-2]
    g = h_q // k.shape[0]
    scores = attention_scores(q, share(k, g), scale=scale)  # (h_q, n_q, d) x (h_q, d, n_k) -> (h_q, n_q, n_k)
    mask = _allowed(n_q, n_k, window) if allowed is None else allowed
    masked = np.where(mask, scores, np.asarray(fill, dtype=scores.dtype))  # (h_q, n_q, n_k)
    sinks = sinks if sink is None else sink.astype(sinks.dtype)
    weights = sink_softmax(masked, sinks) if weigh is None else weigh(masked, sinks)  # (h_q, n_q, n_k)
    output = weights @ share(v, g)  # (h_q, n_q, n_k) x (h_q, n_k, d_v) -> (h_q, n_q, d_v)
    return output, weights if returned is None else returned(masked, sinks, weights)


def _column(masked, sinks):
    """(h_q, n_q, 1): each head's sink as one more column of its scores."""
    return np.broadcast_to(sinks[:, None, None], masked.shape[:-1] + (1,))


def _plain(masked, sinks):
    return softmax(masked, axis=-1)  # no sink: each row sums to 1


def _added_to_every_score(masked, sinks):
    """softmax(s + sink_h): the same for every key of a row, so it changes nothing, except a sink of -inf."""
    return softmax(masked + sinks[:, None, None], axis=-1)


def _renormalised(masked, sinks):
    """The sink's column dropped, then each row divided by its sum again."""
    w = sink_softmax(masked, sinks)
    return w / w.sum(axis=-1, keepdims=True)


def _share_of_the_keys_overflows(masked, sinks):
    """softmax over the keys times what the sink leaves them, e^sink / (e^sink + sum e^s) computed as written."""
    e_sink = np.exp(_column(masked, sinks))  # inf for a sink above about 88 (float32) or 709 (float64)
    left = 1 - e_sink / (e_sink + np.exp(masked).sum(axis=-1, keepdims=True))
    return softmax(masked, axis=-1) * left


def _sink_above_exp_limit(case: Case) -> bool:
    """Some head's sink logit lies above exp's limit: e^sink overflows."""
    return bool(np.any(np.asarray(case.args[3], dtype=np.float64) > exp_limits(case)[0]))


def _sink_not_shifted(masked, sinks):
    """The keys' exponentials shifted by their row's maximum, the sink's not."""
    e = np.exp(masked - masked.max(axis=-1, keepdims=True))
    return e / (e.sum(axis=-1, keepdims=True) + np.exp(_column(masked, sinks)))


def _no_shift(masked, sinks):
    """e^s / (e^sink + sum e^s) with nothing subtracted: overflows for large scores."""
    e = np.exp(masked)
    return e / (np.exp(_column(masked, sinks)) + e.sum(axis=-1, keepdims=True))


def _sink_in_numerator(masked, sinks):
    """(e^s_j + e^sink) / (e^sink + sum e^s) for the keys a query may see: the sink's term above the line too."""
    joined = np.concatenate([masked, _column(masked, sinks)], axis=-1)  # (h_q, n_q, n_k + 1)
    p = softmax(joined, axis=-1)
    return np.where(np.isfinite(masked), p[..., :-1] + p[..., -1:], 0.0).astype(masked.dtype)


def _sink_added_in_numerator(masked, sinks):
    """e^(s_j + sink) / (e^sink + sum e^s): the sink added to each key's own score, above the line only."""
    return np.exp(np.clip(_column(masked, sinks), None, 700)) * sink_softmax(masked, sinks)


def _with_sink_column(last: bool):
    def returned(masked, sinks, weights):
        joined = np.concatenate([masked, _column(masked, sinks)], axis=-1)  # (h_q, n_q, n_k + 1)
        p = softmax(joined, axis=-1)
        return p if last else np.concatenate([p[..., -1:], p[..., :-1]], axis=-1)
    return returned


def _mistake(**changes):
    """A prediction: the layer with `changes`; a change may be a function of (q, k, v, sinks, window)."""
    def predict(q, k, v, sinks, window):
        values = {name: (c(q, k, v, sinks, window) if name in _COMPUTED else c) for name, c in changes.items()}
        if any(value is None for value in values.values()):
            return None  # the mistake cannot be made on this input
        return layer(q, k, v, sinks, window, **values)
    return predict


_COMPUTED = {"allowed", "sink", "scale"}
"""Changes given as functions of the arguments."""


def _window(extra: int):
    def allowed(q, k, v, sinks, window):
        if window is None or window + extra < 0 or window >= k.shape[-2] and window + extra >= k.shape[-2]:
            return None  # no window, or one that covers every key either way
        return _allowed(q.shape[-2], k.shape[-2], window, extra=extra)
    return allowed


def _window_at_the_start(q, k, v, sinks, window):
    """Each query sees the keys before it among the first `window` of the sequence."""
    n_q, n_k = q.shape[-2], k.shape[-2]
    if window is None or window >= n_k:
        return None  # a window that keeps every key: at the start or at the end, the same
    position = np.arange(n_q)[:, None] + n_k - n_q  # (n_q, 1): the queries are the last n_q positions
    key = np.arange(n_k)[None, :]
    return (key <= position) & (key < window)  # (n_q, n_k)


def _top_left(q, k, v, sinks, window):
    n_q, n_k = q.shape[-2], k.shape[-2]
    return None if n_q == n_k else _allowed(n_q, n_k, window, lower_right=False)


def _future(causal: bool):
    return lambda q, k, v, sinks, window: _band(q.shape[-2], k.shape[-2], window, causal=causal)


def _one_sink(q, k, v, sinks, window):
    return None if np.all(sinks == sinks[0]) else np.full_like(sinks, sinks[0])


def _sinks_of_key_value_heads(q, k, v, sinks, window):
    g = q.shape[0] // k.shape[0]
    return None if g == 1 else np.repeat(sinks[: k.shape[0]], g)  # query head i given sink i // g


NOT_1E9_HINT = (
    "A key outside the window was filled with a large negative number such as -1e9 instead of -inf. -1e9 is "
    "not nothing: a query whose own scores are below it (here, a head without a sink whose query points away "
    "from every key) gives its weight to the keys it must not see. Fill with -np.inf, which exp turns into "
    "exactly 0."
)
SINK_LEFT_OUT_HINT = (
    "The weights were computed as if there were no sink: each row sums to 1. The sink takes a share of each "
    "row and gives nothing back, so the keys' weights sum to less than 1: it is one more term in the softmax's "
    "denominator, e^sink_h + sum_j e^s_ij, with no value behind it. Adding it to every score changes nothing "
    "(a softmax does not change when the same number is added to all its inputs), and dividing by the keys' "
    "sum again after dropping its column undoes it (where the sink takes nearly everything, that sum is 0 "
    "and the division gives nan)."
)
WINDOW_OFF_BY_ONE_HINT = (
    "The window is one key too wide or too narrow. A window of w lets a query see w keys: itself and the "
    "w - 1 keys before it (the transformers and Mistral convention), so query position p sees keys "
    "p - w + 1 .. p."
)
FUTURE_KEYS_HINT = (
    "Queries saw keys after their own position: a sliding window is a causal mask with a lower end, "
    "keys p - w + 1 .. p for the query at position p, never a band on both sides."
)
SINK_COLUMN_KEPT_HINT = (
    "The weights came back with the sink's column still in them, n_k + 1 per row. The sink has no key: "
    "return the weights over the n_k keys only (transformers drops the sink's column too); each row then "
    "sums to less than 1."
)
SINK_IN_NUMERATOR_HINT = (
    "The sink entered the numerator: each key's weight is e^s_ij / (e^sink_h + sum_j' e^s_ij'), the sink "
    "below the line only. It takes its share from every key alike; it adds nothing to any of them."
)

MISTAKES = (
    Mistake("sink_left_out", SINK_LEFT_OUT_HINT, _mistake(weigh=_plain)),
    Mistake("sink_left_out", SINK_LEFT_OUT_HINT, _mistake(weigh=_added_to_every_score)),
    Mistake("sink_left_out", SINK_LEFT_OUT_HINT, _mistake(weigh=_renormalised)),
    Mistake("sink_in_numerator", SINK_IN_NUMERATOR_HINT, _mistake(weigh=_sink_in_numerator)),
    Mistake("sink_in_numerator", SINK_IN_NUMERATOR_HINT, _mistake(weigh=_sink_added_in_numerator)),
    Mistake("one_sink_for_all_heads",
            "Every head used the first head's sink. Each query head learns its own sink logit: sinks has one "
            "entry per query head, and head h's row of scores gets sinks[h].",
            _mistake(sink=_one_sink)),
    Mistake("sinks_of_the_key_value_heads",
            "Query head h used sinks[h // g], as if the sinks belonged to the shared key/value heads. The sinks "
            "belong to the query heads: h_q of them, and head h's softmax gets sinks[h].",
            _mistake(sink=_sinks_of_key_value_heads)),
    Mistake("sink_column_kept", SINK_COLUMN_KEPT_HINT, _mistake(returned=_with_sink_column(last=True))),
    Mistake("sink_column_kept", SINK_COLUMN_KEPT_HINT, _mistake(returned=_with_sink_column(last=False))),
    Mistake("sink_share_overflows",
            "nan where a sink dominates its row. If the keys' softmax is multiplied by what the sink leaves them, "
            "1 - e^sink / (e^sink + sum e^s), then e^sink overflows to inf for a large sink and inf / inf is nan. "
            "Subtract the row's maximum, the sink included, before any exponential: join the sink to the scores "
            "as one more column and take a stable softmax.",
            _mistake(weigh=_share_of_the_keys_overflows),
            premise=Premise("sink_above_exp_limit", _sink_above_exp_limit)),
    Mistake("sink_not_shifted",
            "The sink's exponential was not shifted with the scores'. After subtracting the row's maximum m from "
            "the scores, the sink's term must be e^(sink - m) too: e^(s_j - m) / (e^(sink - m) + sum e^(s - m)). "
            "Joining the sink as a column before the softmax does it for you.",
            _mistake(weigh=_sink_not_shifted)),
    Mistake("no_max_subtraction",
            "nan for large scores: e^s overflows to inf before the division, and inf / inf is nan. Subtract each "
            "row's maximum (the sink included) before the exponential.",
            _mistake(weigh=_no_shift),
            premise=exp_overflows(lambda case: (_softmax_scores(case)[0][..., :-1], -1))),
    Mistake("sink_scaled",
            "The sink was divided by sqrt(d) with the scores. The sink is a logit joined to the scores after "
            "they are scaled: use it as it is.",
            _mistake(sink=lambda q, k, v, sinks, window: sinks / math.sqrt(q.shape[-1]))),
    Mistake("window_off_by_one", WINDOW_OFF_BY_ONE_HINT, _mistake(allowed=_window(+1))),
    Mistake("window_off_by_one", WINDOW_OFF_BY_ONE_HINT, _mistake(allowed=_window(-1))),
    Mistake("window_top_left",
            "The window was placed as if the queries were the first n_q positions. They are the last n_q of "
            "the n_k keys (one new token after a cache, or a chunk after it): query i sits at position "
            "i + n_k - n_q, and its window ends there.",
            _mistake(allowed=_top_left)),
    Mistake("window_at_the_start",
            "The window kept the first keys of the sequence, positions 0 to window - 1, for every query. A sliding "
            "window ends at its query: query i at position p sees itself and the window - 1 keys just before it, "
            "the positions j with p - window < j <= p.",
            _mistake(allowed=_window_at_the_start)),
    Mistake("window_ignored",
            "The window was not applied: each query saw every key up to its own position. With a window w, it "
            "sees only itself and the w - 1 keys before it.",
            _mistake(allowed=lambda q, k, v, sinks, window: None if window is None or window >= k.shape[-2]
                     else causal_mask(q.shape[-2], k.shape[-2], lower_right=True))),
    Mistake("future_keys_visible", FUTURE_KEYS_HINT, _mistake(allowed=_future(causal=True))),
    Mistake("future_keys_visible", FUTURE_KEYS_HINT, _mistake(allowed=_future(causal=False))),
    Mistake("mask_filled_with_large_negative", NOT_1E9_HINT, _mistake(fill=-1e9)),
    dataclasses.replace(HEADS_TILED, predict=_mistake(share=lambda x, g: np.tile(x, (g, 1, 1)))),
    Mistake("missing_scale",
            "The scores were not scaled: multiply q . k by 1 / sqrt(d), d the size of a head's query and key, "
            "before joining the sink.",
            _mistake(scale=lambda q, k, v, sinks, window: 1.0)),
)


# --- the inputs -------------------------------------------------------------------------------------

def _draw(rng, h_q, h_kv, n_q, n_k, d, d_v, *, scale=1.0, sinks=None, dtype=np.float64):
    """q (h_q, n_q, d), k (h_kv, n_k, d), v (h_kv, n_k, d_v) and sinks (h_q,), drawn in that order."""
    q = rng.standard_normal((h_q, n_q, d)) * scale
    k = rng.standard_normal((h_kv, n_k, d)) * scale
    v = rng.standard_normal((h_kv, n_k, d_v))
    s = rng.normal(0.0, 1.5, h_q) if sinks is None else np.asarray(sinks, dtype=np.float64)
    return tuple(a.astype(dtype) for a in (q, k, v, s))


def _code(h_q, h_kv, n_q, n_k, d, d_v, *, scale=None, sinks=None, dtype=None) -> str:
    """The code that draws an input as `_draw` does, shown to the student."""
    def drawn(shape, scaled):
        expr = f"rng.standard_normal({shape})" + (f" * {scale:g}" if scale and scaled else "")
        if dtype is None:
            return expr
        return f"({expr}).astype(np.{dtype})" if " * " in expr else f"{expr}.astype(np.{dtype})"

    cast = f".astype(np.{dtype})" if dtype else ""
    lines = ["rng = np.random.default_rng(SEED)",
             f"q = {drawn((h_q, n_q, d), True)}  # (h_q, n_q, d)",
             f"k = {drawn((h_kv, n_k, d), True)}  # (h_kv, n_k, d)",
             f"v = {drawn((h_kv, n_k, d_v), False)}  # (h_kv, n_k, d_v)",
             (f"sinks = rng.normal(0.0, 1.5, {h_q}){cast}  # (h_q,), one per query head" if sinks is None
              else f"sinks = np.array({sinks}){cast}  # (h_q,), one per query head")]
    return "\n".join(lines)


def _shown(label: str, seed: int, window, rngs: Rngs, **sizes) -> Case:
    """A visible input drawn by the code it shows (seed `seed`), with its window."""
    code = _code(**sizes).replace("SEED", str(seed)) + f"\nwindow = {window!r}"
    return generated(label, code, PARAMS, rngs)


def _cases(rngs: Rngs) -> list[Case]:
    rng = rngs(1200)
    return [
        _shown("a prompt of 5 tokens, 2 heads with their own sinks, a window of 3", 1, 3, rngs,
               h_q=2, h_kv=2, n_q=5, n_k=5, d=4, d_v=4),
        _shown("grouped-query: 4 query heads sharing 2, 6 tokens, a window of 4, values of width 3", 2, 4, rngs,
               h_q=4, h_kv=2, n_q=6, n_k=6, d=4, d_v=3),
        _shown("decoding: one new token after 7 cached (n_q = 1, n_k = 8), a window of 3, 4 heads sharing 1", 3, 3,
               rngs, h_q=4, h_kv=1, n_q=1, n_k=8, d=4, d_v=4),
        _shown("a chunk of 3 new tokens after 5 cached (n_q = 3, n_k = 8), a window of 4", 4, 4, rngs,
               h_q=2, h_kv=1, n_q=3, n_k=8, d=4, d_v=2),
        _shown("a window of 1: each query sees only itself", 5, 1, rngs, h_q=2, h_kv=2, n_q=4, n_k=4, d=2, d_v=2),
        _shown("a window longer than the sequence (10 over 4 tokens): every earlier key", 6, 10, rngs,
               h_q=2, h_kv=1, n_q=4, n_k=4, d=4, d_v=2),
        _shown("a full layer (window None): every earlier key", 7, None, rngs, h_q=2, h_kv=2, n_q=5, n_k=5, d=4,
               d_v=2),
        _shown("float32, a sink that dominates: head 1's sink is 100, far above its scores", 8, 3, rngs,
               h_q=2, h_kv=1, n_q=4, n_k=4, d=4, d_v=2, sinks=[0.5, 100.0], dtype="float32"),
        _shown("large scores (q and k times 30), a window of 2", 9, 2, rngs, h_q=2, h_kv=2, n_q=4, n_k=4, d=4, d_v=2,
               scale=30),
        generated("head 0 has no sink (-inf) and its queries point away from every key: scores far below -1e9",
                  "rng = np.random.default_rng(10)\n"
                  "q = -np.abs(rng.standard_normal((2, 6, 4))) * 1e5  # every entry negative\n"
                  "k = np.abs(rng.standard_normal((1, 6, 4))) * 1e5  # every entry positive\n"
                  "v = rng.standard_normal((1, 6, 2))\n"
                  "sinks = np.array([-np.inf, 0.5])\n"
                  "window = 3", PARAMS, rngs),
        Case("8 query heads sharing 2, 9 tokens, a window of 4", _draw(rng, 8, 2, 9, 9, 8, 8) + (4,), hidden=True),
        Case("float32, 4 heads sharing 2, a chunk of 5 after 6, a window of 3",
             _draw(rng, 4, 2, 5, 11, 8, 8, dtype=np.float32) + (3,), hidden=True),
        Case("one new token after 12 cached, a window of 5, 6 heads sharing 3", _draw(rng, 6, 3, 1, 13, 4, 4) + (5,),
             hidden=True),
        Case("float64, a sink of 800 in one head", _draw(rng, 2, 2, 4, 4, 4, 4, sinks=[800.0, -0.5]) + (2,),
             hidden=True),
        Case("large scores, a full layer, 3 heads sharing 1", _draw(rng, 3, 1, 5, 5, 4, 2, scale=30.0) + (None,),
             hidden=True),
    ] + _assumption_cases_sink_attention(rngs)


def _assumption_cases_sink_attention(rngs: Rngs) -> list[Case]:
    """Inputs that break what a sink layer could silently assume."""
    rng = rngs(1201)
    return [
        # d_v != d: the values need not be as wide as the queries and keys
        Case("values of width 5, d = 4: 4 heads sharing 2, a window of 3", _draw(rng, 4, 2, 6, 6, 4, 5) + (3,),
             hidden=True),
        # one token, one key: no window to slide, a sink beside a single score
        Case("one token, one head", _draw(rng, 1, 1, 1, 1, 4, 4) + (2,), hidden=True),
    ]


def _error_hint(case: Case, error: str, code: Code) -> str:
    if "NoneType" in error and case.args[-1] is None:
        return ("window is None here: a full layer, where each query sees itself and every key before it (the "
                "causal mask, with the queries the last n_q of the n_k positions).")
    if ("matmul" in error or "broadcast" in error) and error_line(error):
        return (f"The line that failed, `{error_line(error)}`, combines arrays whose shapes do not match. q is "
                "(h_q, n_q, d), k and v are (h_kv, n_k, d) and (h_kv, n_k, d_v), sinks is (h_q,): give each query "
                "head its key/value head first, and the sinks an axis for the queries and one for the keys, "
                "(h_q, 1, 1), to join them to the scores (h_q, n_q, n_k).")
    return ""


EXP_OVERFLOWED = Mistake(
    "exp_overflowed",
    "The values are right, but computing them overflowed: NumPy reported an exponential that gave inf on this "
    "input, and the weights came out right only because a division by inf gives 0. The task asks for no "
    "overflow: subtract from every exponent, the sink's included, the row's maximum taken over the scores AND "
    "the sink, so that every exponent is <= 0.",
)


def _sink_far_above(case: Case) -> bool:
    """Some head's sink lies above the largest score of one of its rows by more than exp's limit: e^(sink - m), m
    the row's maximum without the sink, overflows."""
    scores = _softmax_scores(case)[0]  # (h_q, n_q, n_k + 1), the sink last
    keys, sinks = scores[..., :-1], scores[..., -1]
    with np.errstate(all="ignore"):
        gap = sinks - np.max(keys, axis=-1)  # (h_q, n_q)
    return bool(np.any(np.isfinite(sinks) & (gap > exp_limits(case)[0])))


OUTPUT_NOT_FROM_WEIGHTS = Mistake(
    "output_not_from_weights",
    "The weights are right, but the output is not them times the values: each row of the output mixes head h's "
    "values (those of its key/value head) with the weights you return, the sink's share mixing nothing.",
)


def _specific(case: Case, expected, got, code: Code) -> Mistake | None:
    """Right weights beside a wrong output (of the right shape): the output was mixed with other weights."""
    if not (isinstance(got, tuple) and len(got) == 2 and all(isinstance(g, np.ndarray) for g in got)):
        return None
    output, weights = got
    if (weights.shape == expected[1].shape and output.shape == expected[0].shape
            and same_values(weights, expected[1], case.tolerance) and not same_values(output, expected[0], case.tolerance)):
        return OUTPUT_NOT_FROM_WEIGHTS
    return None


def _no_overflow(case: Case, obs) -> tuple[str, Mistake] | None:
    """Fail a right answer whose computation overflowed (the task forbids it), on an input where a sink lies far
    above its row's scores, so that the shift by a maximum without the sink overflows."""
    if not obs.overflowed or not _sink_far_above(case):
        return None
    return ("right values, but an exponential overflowed to inf while computing them (NumPy reported it); here a "
            "sink lies more than exp's limit above its row's largest score", EXP_OVERFLOWED)


def _softmax_scores(case: Case) -> tuple[np.ndarray, int]:
    """(the masked scaled scores with each head's sink as a last column, -1): what `Check.scores` reads to tell a
    saturated input."""
    q, k, _, sinks, window = case.args[:5]
    q, k = np.asarray(q, dtype=np.float64), np.asarray(k, dtype=np.float64)
    h_q, n_q, n_k = q.shape[0], q.shape[-2], k.shape[-2]
    keys = np.repeat(k, h_q // k.shape[0], axis=0)  # (h_q, n_k, d)
    scores = q @ keys.transpose(0, 2, 1) / np.sqrt(q.shape[-1])  # (h_q, n_q, d) x (h_q, d, n_k) -> (h_q, n_q, n_k)
    scores = np.where(layer_mask(n_q, n_k, window), scores, -np.inf)
    column = np.broadcast_to(np.asarray(sinks, dtype=np.float64)[:, None, None], (h_q, n_q, 1))
    return np.concatenate([scores, column], axis=-1), -1  # (h_q, n_q, n_k + 1)


SINK_ATTENTION = Check(
    name="sink_attention",
    function="sink_attention",
    params=PARAMS,
    reference=reference,
    make_cases=_cases,
    mistakes=MISTAKES,
    output_names=OUTPUT_NAMES,
    sizes=Sizes({"q": ("h_q", "n_q", "d"), "k": ("h_kv", "n_k", "d"), "v": ("h_kv", "n_k", "d_v"),
                 "sinks": ("h_q",)}),
    error_hint=_error_hint,
    helpers={"softmax": softmax},
    scores=_softmax_scores,
    after_pass=_no_overflow,
    specific=_specific,
)


def check_sink_attention(sink_attention, *, hidden: bool = False) -> CheckResult:
    """Check `sink_attention(q, k, v, sinks, window) -> (output, weights)`: a gpt-oss attention layer.

    q: (h_q, n_q, d), k: (h_kv, n_k, d), v: (h_kv, n_k, d_v), the queries the
    last n_q of the n_k positions; sinks: (h_q,), one logit per query head;
    window: each query sees itself and the window - 1 keys before it (None: a
    full layer). The exercise 12_sink_attention (book/todays_models.ipynb).
    """
    return check_in_process(SINK_ATTENTION, sink_attention, hidden=hidden)


CHECKS = {c.name: c for c in (SINK_ATTENTION,)}
"""This module's checks by name: what the registry's `Exercise.checks` reads."""
