"""Check for exercise 7: multi-head attention with learned projections.

The reference is the package's `multi_head_attention` (row vectors, x @ w).
The mistakes are rebuilt from the package's own pieces (`split_heads`,
`merge_heads`, `scaled_dot_product_attention`) with one thing done wrong.
"""

from __future__ import annotations

import numpy as np

from ....core.attention import scaled_dot_product_attention
from ....core.softmax import softmax
from ....core.multi_head import merge_heads, multi_head_attention, split_heads
from ..engine.calls import error_line
from ..engine.cases import Case, Rngs, generated
from ..engine.check import Check
from ..engine.code import Code
from ..engine.run import check_in_process
from ..engine.shrink import Sizes
from ..engine.mistakes import Mistake
from ..engine.results import CheckResult
from .attention import reference as attention_reference

PARAMS = ("x", "w_q", "w_k", "w_v", "w_o", "n_heads")


def _heads(x, w_q, w_k, w_v, n_heads, scale=None, split=split_heads):
    """Each head's attention output, (h, n, d_v), with a chosen scale and head split."""
    q, k, v = (split(x @ w, n_heads) for w in (w_q, w_k, w_v))  # (n, d_model) x (d_model, h*d) -> (h, n, d)
    return scaled_dot_product_attention(q, k, v, scale=scale)  # (h, n, d_v)


def _scaled_by_d_model(x, w_q, w_k, w_v, w_o, n_heads):
    return merge_heads(_heads(x, w_q, w_k, w_v, n_heads, scale=1 / np.sqrt(w_q.shape[1]))) @ w_o


def _missing_scale(x, w_q, w_k, w_v, w_o, n_heads):
    return merge_heads(_heads(x, w_q, w_k, w_v, n_heads, scale=1.0)) @ w_o


def _split_without_transpose(y, n_heads):
    """(n, h*d) reshaped straight to (h, n, d): rows of different tokens get mixed."""
    n, width = y.shape
    return y.reshape(n_heads, n, width // n_heads)  # the wrong reshape: no (n, h, d) step


def _merge_without_transpose(heads):
    """(h, n, d) reshaped straight to (n, h*d): the inverse of the wrong split, not of the right one."""
    h, n, d_v = heads.shape
    return heads.reshape(n, h * d_v)


def _heads_done(split, merge):
    def predict(x, w_q, w_k, w_v, w_o, n_heads):
        return merge(_heads(x, w_q, w_k, w_v, n_heads, split=split)) @ w_o  # (n, h*d_v) x (h*d_v, d_out)
    return predict


def _split_columns_strided(y, n_heads):
    """(n, h*d) reshaped to (n, d, h), then heads first: head j takes every h-th column, not a block of d."""
    n, width = y.shape
    return y.reshape(n, width // n_heads, n_heads).transpose(2, 0, 1)  # (n, d, h) -> (h, n, d)


def _causal(x, w_q, w_k, w_v, w_o, n_heads):
    """Every head with a causal mask, which the task does not ask for."""
    q, k, v = (split_heads(x @ w, n_heads) for w in (w_q, w_k, w_v))  # (n, d_model) x (d_model, h*d) -> (h, n, d)
    return merge_heads(scaled_dot_product_attention(q, k, v, is_causal=True)) @ w_o  # (n, h*d_v) x (h*d_v, d_out)


def _projections_transposed(x, w_q, w_k, w_v, w_o, n_heads):
    if any(w.shape[0] != w.shape[1] for w in (w_q, w_k, w_v, w_o)):
        return None  # x @ w.T fails for a non-square projection
    return multi_head_attention(x, w_q.T, w_k.T, w_v.T, w_o.T, n_heads)


def _keys_times_queries(x, w_q, w_k, w_v, w_o, n_heads):
    q, k, v = (split_heads(x @ w, n_heads) for w in (w_q, w_k, w_v))  # (h, n, d)
    scores = k @ np.swapaxes(q, -1, -2) / np.sqrt(q.shape[-1])  # (h, n, n), the wrong way round
    return merge_heads(softmax(scores) @ v) @ w_o


def _softmax_over_queries(x, w_q, w_k, w_v, w_o, n_heads):
    q, k, v = (split_heads(x @ w, n_heads) for w in (w_q, w_k, w_v))  # (h, n, d)
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])  # (h, n, d) x (h, d, n) -> (h, n, n)
    return merge_heads(softmax(scores, axis=-2) @ v) @ w_o


def _single_head(scale_by_head):
    def predict(x, w_q, w_k, w_v, w_o, n_heads):
        d_head = w_q.shape[1] // n_heads
        scale = 1 / np.sqrt(d_head) if scale_by_head else None
        return scaled_dot_product_attention(x @ w_q, x @ w_k, x @ w_v, scale=scale) @ w_o  # (n, d_out)
    return predict


def _no_output_projection(x, w_q, w_k, w_v, w_o, n_heads):
    return merge_heads(_heads(x, w_q, w_k, w_v, n_heads))  # (n, h*d_v), never mixed by w_o


def _output_transposed(x, w_q, w_k, w_v, w_o, n_heads):
    if w_o.shape[0] != w_o.shape[1]:
        return None  # concat @ w_o.T fails for a w_o that is not square
    return merge_heads(_heads(x, w_q, w_k, w_v, n_heads)) @ w_o.T  # (n, h*d_v) x (d_out, h*d_v)^T


def _keys_from_w_q(x, w_q, w_k, w_v, w_o, n_heads):
    return multi_head_attention(x, w_q, w_q, w_v, w_o, n_heads)  # the keys projected with w_q


def _residual_inside(x, w_q, w_k, w_v, w_o, n_heads):
    if w_o.shape[1] != x.shape[1]:
        return None  # x + (n, d_out) fails unless d_out = d_model
    return x + multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads)


def _heads_reversed(x, w_q, w_k, w_v, w_o, n_heads):
    heads = _heads(x, w_q, w_k, w_v, n_heads)  # (h, n, d_v)
    return merge_heads(heads[::-1]) @ w_o  # head h-1 first


def _scaled_by_d_v(x, w_q, w_k, w_v, w_o, n_heads):
    d_k, d_v = w_q.shape[1] // n_heads, w_v.shape[1] // n_heads
    if d_k == d_v:
        return None
    return merge_heads(_heads(x, w_q, w_k, w_v, n_heads, scale=1 / np.sqrt(d_v))) @ w_o


SINGLE_HEAD_HINT = (
    "This is ONE attention over the full width, as if n_heads were 1. Split the projected queries, keys "
    "and values into n_heads slices of d_k = width / n_heads columns; each head attends on its own."
)

RESHAPED_HINT = (
    "The heads were cut out with a reshape straight to (n_heads, n, d_k) and put back with a reshape straight "
    "to (n, n_heads * d_k). A reshape keeps the order of the numbers, so (n, n_heads * d_k) -> (n_heads, n, d_k) "
    "puts numbers of different tokens into one row. Reshape to (n, n_heads, d_k) first, then move the head axis "
    "to the front; undo both steps, in reverse order, to merge."
)
SPLIT_HINT = (
    "The merge is right but the split is not: a reshape straight to (n_heads, n, d_k) puts numbers of different "
    "tokens into one row, because a reshape keeps the order of the numbers. Reshape to (n, n_heads, d_k) first, "
    "then move the head axis to the front."
)
MERGE_HINT = (
    "The split is right but the merge is not: each head's output (n_heads, n, d_v) was reshaped straight to "
    "(n, n_heads * d_v), which puts numbers of different tokens into one row. Move the head axis back next to "
    "d_v first, (n, n_heads, d_v), then reshape."
)

MISTAKES = (
    Mistake("scaled_by_d_model",
            "Each head compares vectors of size d_k = (width of w_q) / n_heads, so each head scales its scores "
            "by 1/sqrt of that head size, not of the full width.",
            _scaled_by_d_model),
    Mistake("missing_scale", "The scores of each head were not divided by sqrt(d_k) of the head.", _missing_scale),
    Mistake("heads_reshaped_wrongly", RESHAPED_HINT, _heads_done(_split_without_transpose, _merge_without_transpose)),
    Mistake("heads_split_without_transpose", SPLIT_HINT, _heads_done(_split_without_transpose, merge_heads)),
    Mistake("heads_split_into_strided_columns",
            "Each head took every n_heads-th column of the projection (a reshape to (n, d_k, n_heads)) instead of "
            "a block of d_k consecutive columns. Head h owns columns h x d_k to (h + 1) x d_k - 1, which "
            "reshape(n, n_heads, d_k) gives; the merge puts the heads back as such blocks.",
            _heads_done(_split_columns_strided, merge_heads)),
    Mistake("causal_mask_applied",
            "These are the numbers of attention with a causal mask: each token saw only itself and the tokens "
            "before it. This exercise asks for attention over every token, with no mask (only an input of one "
            "token, or where a mask changes nothing, comes out right).",
            _causal),
    Mistake("heads_merged_without_transpose", MERGE_HINT, _heads_done(split_heads, _merge_without_transpose)),
    Mistake("single_head", SINGLE_HEAD_HINT, _single_head(scale_by_head=False)),
    Mistake("single_head", SINGLE_HEAD_HINT, _single_head(scale_by_head=True)),
    Mistake("query_key_swapped",
            "Each head's weights are transposed: its scores were K Q^T, so row i belongs to key i. Row i of a "
            "head's weights belongs to query i and runs over the keys: Q K^T, in that order.",
            _keys_times_queries),
    Mistake("projections_transposed",
            "Each projection was applied transposed (w.T @ x or x @ w.T). With row vectors, one token per row, a "
            "projection is x @ w: (n, d_model) x (d_model, width).",
            _projections_transposed),
    Mistake("softmax_wrong_axis",
            "Each head's softmax ran over the queries (axis -2), not over the keys: each query's weights over the "
            "keys must sum to 1, along the last axis of the (n_heads, n, n) scores.",
            _softmax_over_queries),
    Mistake("missing_output_projection",
            "The heads' outputs were concatenated but not mixed: multiply the concatenation by w_o.",
            _no_output_projection),
    Mistake("output_projection_transposed",
            "The heads' concatenation was multiplied by w_o transposed. With row vectors, w_o is (n_heads * d_v, "
            "d_out) and maps the concatenation (n, n_heads * d_v) as it is: concat @ w_o.",
            _output_transposed),
    Mistake("keys_projected_with_w_q",
            "The keys were projected with w_q: each of the three projections has its own matrix, k = x @ w_k.",
            _keys_from_w_q),
    Mistake("residual_added",
            "The result is x plus the attention's output: the residual connection belongs to the transformer "
            "block around this function, not to the attention itself. Return the output projection alone.",
            _residual_inside),
    Mistake("heads_merged_in_reverse",
            "The heads were put side by side in reverse order: head 0's output goes into the first d_v columns of "
            "the concatenation, head 1's into the next d_v, and so on, in the order the heads were split.",
            _heads_reversed),
    Mistake("scaled_by_d_v",
            "Each head's scores were divided by the square root of d_v, the width of a head's values; the scale is "
            "1/sqrt(d_k), the width of the queries and keys whose dot product makes a score.",
            _scaled_by_d_v),
)


def _weights_code(seed: int, n: int, d_model: int, width: int, d_out: int, n_heads: int, dtype: str = "",
                  value_width: int | None = None, x_scale: float = 1.0) -> str:
    """The code that draws one input: x, the three projections and w_o, in that order.

    `width` is n_heads * d_k (queries and keys), `value_width` n_heads * d_v (default: the same); x is drawn
    times `x_scale` (large scores for a large one).
    """
    cast = f".astype(np.{dtype})" if dtype else ""
    times = f" * {x_scale:g}" if x_scale != 1.0 else ""
    if value_width is None or value_width == width:
        projections = f"w_q, w_k, w_v = ((rng.standard_normal(({d_model}, {width})) / np.sqrt({d_model})){cast} for _ in range(3))\n"
        value_width = width
    else:
        projections = (
            f"w_q, w_k = ((rng.standard_normal(({d_model}, {width})) / np.sqrt({d_model})){cast} for _ in range(2))\n"
            f"w_v = (rng.standard_normal(({d_model}, {value_width})) / np.sqrt({d_model})){cast}\n")
    return (
        f"rng = np.random.default_rng({seed})\n"
        f"x = (rng.standard_normal(({n}, {d_model})){times}){cast}\n"
        + projections +
        f"w_o = (rng.standard_normal(({value_width}, {d_out})) / np.sqrt({value_width})){cast}\n"
        f"n_heads = {n_heads}"
    )


def _cases(rngs: Rngs) -> list[Case]:
    """Every property on a visible input (several heads, d_out != d_model, one head, d_v != d_k, float32 kept,
    one token, large scores; d_model != n_heads * d_k below), then hidden inputs that vary the values."""
    def case(label, seed, *sizes, dtype="", hidden=False, value_width=None, x_scale=1.0):
        code = _weights_code(seed, *sizes, dtype=dtype, value_width=value_width, x_scale=x_scale)
        return generated(label, code, PARAMS, rngs, hidden=hidden, saturated=x_scale > 1)

    return [
        case("4 tokens, d_model = 8, 2 heads", 71, 4, 8, 8, 8, 2),
        case("5 tokens, d_model = 12, 3 heads, d_out = 6", 72, 5, 12, 12, 6, 3),
        case("3 tokens, one head", 73, 3, 4, 4, 4, 1),
        case("d_model = 6, 2 heads with d_k = 4 and d_v = 3, d_out = 5", 77, 5, 6, 8, 5, 2, value_width=6),
        case("float32, 5 tokens, 2 heads of width 3", 75, 5, 6, 6, 4, 2, dtype="float32"),
        case("one token, 2 heads", 76, 1, 4, 4, 4, 2),
        case("large scores: x times 30, 4 tokens, 2 heads", 79, 4, 6, 6, 6, 2, x_scale=30.0),
        case("6 tokens, d_model = 16, 4 heads", 74, 6, 16, 16, 16, 4, hidden=True),
        case("float32, 4 tokens, 3 heads of width 2", 80, 4, 6, 6, 5, 3, dtype="float32", hidden=True),
        case("one token, 3 heads", 81, 1, 6, 6, 4, 3, hidden=True),
        case("d_model = 8, 2 heads with d_k = 3 and d_v = 5, d_out = 4", 82, 4, 8, 6, 4, 2, value_width=10,
             hidden=True),
        case("large scores: x times 30, 5 tokens, 3 heads", 83, 5, 6, 6, 6, 3, x_scale=30.0, hidden=True),
    ] + _assumption_cases_multi_head(rngs)


def _assumption_cases_multi_head(rngs: Rngs) -> list[Case]:
    """Inputs whose widths differ where a function could assume them equal (d_out != d_model and d_v != d_k are above)."""
    return [
        # d_model != n_heads * d_k: the projections narrow 6 features to 2 heads of 2.
        generated("d_model = 6, 2 heads of d_k = 2 (width 4)", _weights_code(78, 3, 6, 4, 6, 2), PARAMS, rngs),
        generated("d_model = 10, 2 heads of d_k = 3 (width 6)", _weights_code(84, 4, 10, 6, 10, 2), PARAMS, rngs,
                  hidden=True),
    ]


def _fewer_heads(args: dict):
    """Smaller inputs that slicing cannot make: the first k heads only, or fewer columns in every head."""
    h = args["n_heads"]
    d_model = args["x"].shape[1]
    d_k, d_v = args["w_q"].shape[1] // h, args["w_v"].shape[1] // h
    for k in sorted({1, h // 2, h - 1} - {0}):
        yield {**args, "w_q": args["w_q"][:, : k * d_k], "w_k": args["w_k"][:, : k * d_k],
               "w_v": args["w_v"][:, : k * d_v], "w_o": args["w_o"][: k * d_v], "n_heads": k}
    for width in sorted({1, d_k - 1} - {0, d_k}):  # (d_model, h * d_k) -> (d_model, h, width) -> (d_model, h * width)
        cut = {w: args[w].reshape(d_model, h, d_k)[:, :, :width].reshape(d_model, h * width) for w in ("w_q", "w_k")}
        yield {**args, **cut}
    for width in sorted({1, d_v - 1} - {0, d_v}):
        w_v = args["w_v"].reshape(d_model, h, d_v)[:, :, :width].reshape(d_model, h * width)
        w_o = args["w_o"].reshape(h, d_v, -1)[:, :width].reshape(h * width, -1)  # the rows of the kept columns
        yield {**args, "w_v": w_v, "w_o": w_o}


def _error_hint(case: Case, error: str, code: Code) -> str:
    """What a failed reshape or product means, quoting the student's line."""
    line = error_line(error)
    if "reshape" in error and line:
        return (f"The line that failed, `{line}`, reshapes to a size that does not hold the numbers: a reshape keeps "
                "the count of numbers. x @ w_q and x @ w_k have n_heads * d_k columns, x @ w_v has n_heads * d_v "
                "(d_v may differ from d_k): split each by its own width.")
    if "matmul" in error and line:
        return (f"The line that failed, `{line}`, multiplies arrays whose inner sizes differ. With row vectors a "
                "projection is x @ w, (n, d_model) x (d_model, width); the merged heads are (n, n_heads * d_v), "
                "and w_o is (n_heads * d_v, d_out).")
    return ""


MULTI_HEAD_ATTENTION = Check(
    name="multi_head_attention",
    helpers={"softmax": softmax, "attention": attention_reference},
    function="multi_head_attention",
    params=PARAMS,
    reference=lambda *args: multi_head_attention(*args),
    sizes=Sizes({"x": ("n", "d_model"), "w_q": ("d_model", None), "w_k": ("d_model", None),
                 "w_v": ("d_model", None), "w_o": (None, "d_out")}, more=_fewer_heads),
    make_cases=_cases,
    mistakes=MISTAKES,
    error_hint=_error_hint,
)


def check_multi_head_attention(multi_head_attention, *, hidden: bool = False) -> CheckResult:
    """Check `multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads) -> (n, d_out)`.

    x: (n, d_model); w_q, w_k, w_v: (d_model, n_heads * d_k); w_o: (n_heads * d_v, d_out).
    The exercise 07_multi_head_attention (book/learned_projections.ipynb).
    """
    return check_in_process(MULTI_HEAD_ATTENTION, multi_head_attention, hidden=hidden)


CHECKS = {c.name: c for c in (MULTI_HEAD_ATTENTION,)}
"""This module's checks by name: what the registry's `Exercise.checks` reads."""
