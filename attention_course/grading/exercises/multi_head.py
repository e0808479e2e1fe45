"""Check for exercise 7: multi-head attention with learned projections.

The reference is the package's `multi_head_attention` (row vectors, x @ w).
The mistakes are rebuilt from the package's own pieces (`split_heads`,
`merge_heads`, `scaled_dot_product_attention`) with one thing done wrong.
"""

from __future__ import annotations

import numpy as np

from ...core.attention import scaled_dot_product_attention
from ...core.multi_head import merge_heads, multi_head_attention, split_heads
from ..engine.cases import Case
from ..engine.check import Check, run_check
from ..engine.shrink import Sizes
from ..engine.mistakes import Mistake
from ..engine.results import CheckResult

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


def _reshaped_heads(x, w_q, w_k, w_v, w_o, n_heads):
    heads = _heads(x, w_q, w_k, w_v, n_heads, split=_split_without_transpose)  # (h, n, d_v)
    h, n, d_v = heads.shape
    return heads.reshape(n, h * d_v) @ w_o  # the matching wrong merge


def _single_head(scale_by_head):
    def predict(x, w_q, w_k, w_v, w_o, n_heads):
        d_head = w_q.shape[1] // n_heads
        scale = 1 / np.sqrt(d_head) if scale_by_head else None
        return scaled_dot_product_attention(x @ w_q, x @ w_k, x @ w_v, scale=scale) @ w_o  # (n, d_out)
    return predict


def _no_output_projection(x, w_q, w_k, w_v, w_o, n_heads):
    return merge_heads(_heads(x, w_q, w_k, w_v, n_heads))  # (n, h*d_v), never mixed by w_o


SINGLE_HEAD_HINT = (
    "This is ONE attention over the full width, as if n_heads were 1. Split the projected queries, keys "
    "and values into n_heads slices of d_k = width / n_heads columns; each head attends on its own."
)

MISTAKES = (
    Mistake("scaled_by_d_model",
            "Each head compares vectors of size d_k = (width of w_q) / n_heads, so each head scales its scores "
            "by 1/sqrt of that head size, not of the full width.",
            _scaled_by_d_model),
    Mistake("missing_scale", "The scores of each head were not divided by sqrt(d_k) of the head.", _missing_scale),
    Mistake("heads_reshaped_wrongly",
            "The heads were cut out with a reshape straight to (n_heads, n, d_k), which mixes different "
            "tokens into one row. Reshape to (n, n_heads, d_k) first, then move the head axis to the front.",
            _reshaped_heads),
    Mistake("single_head", SINGLE_HEAD_HINT, _single_head(scale_by_head=False)),
    Mistake("single_head", SINGLE_HEAD_HINT, _single_head(scale_by_head=True)),
    Mistake("missing_output_projection",
            "The heads' outputs were concatenated but not mixed: multiply the concatenation by w_o.",
            _no_output_projection),
)


def _cases() -> list[Case]:
    rng = np.random.default_rng(7)

    def weights(n, d_model, width, d_out, n_heads, dtype=np.float64):
        x = rng.standard_normal((n, d_model))
        ws = [rng.standard_normal((d_model, width)) / np.sqrt(d_model) for _ in range(3)]
        w_o = rng.standard_normal((width, d_out)) / np.sqrt(width)
        return tuple(a.astype(dtype) for a in (x, *ws, w_o)) + (n_heads,)

    return [
        Case("4 tokens, d_model = 8, 2 heads", weights(4, 8, 8, 8, 2)),
        Case("5 tokens, d_model = 12, 3 heads, d_out = 6", weights(5, 12, 12, 6, 3)),
        Case("3 tokens, one head", weights(3, 4, 4, 4, 1)),
        Case("6 tokens, d_model = 16, 4 heads", weights(6, 16, 16, 16, 4), hidden=True),
        Case("float32, 5 tokens, 2 heads of width 3", weights(5, 6, 6, 4, 2, dtype=np.float32), hidden=True),
        Case("one token, 2 heads", weights(1, 4, 4, 4, 2), hidden=True),
    ] + _assumption_cases_multi_head()


def _assumption_cases_multi_head() -> list[Case]:
    """Inputs whose widths differ where a function could assume them equal (d_out != d_model is above)."""
    rng = np.random.default_rng(71)

    def weights(n, d_model, d_k, d_v, d_out, n_heads):
        x = rng.standard_normal((n, d_model))
        w_q, w_k = (rng.standard_normal((d_model, n_heads * d_k)) / np.sqrt(d_model) for _ in range(2))
        w_v = rng.standard_normal((d_model, n_heads * d_v)) / np.sqrt(d_model)
        w_o = rng.standard_normal((n_heads * d_v, d_out)) / np.sqrt(n_heads * d_v)
        return x, w_q, w_k, w_v, w_o, n_heads

    return [
        # d_model != n_heads * d_k: the projections narrow 6 features to 2 heads of 2.
        Case("d_model = 6, 2 heads of d_k = 2 (width 4)", weights(3, 6, 2, 2, 6, 2)),
        # d_v != d_k: w_v is wider than w_q, and w_o has n_heads * d_v rows.
        Case("2 heads, d_k = 2, d_v = 3", weights(4, 4, 2, 3, 4, 2), hidden=True),
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


def _error_hint(case: Case, error: str) -> str:
    if "reshape" in error or "cannot reshape" in error:
        return "A reshape failed: the width of each projection is n_heads times d_k; check the sizes you reshape to."
    if "matmul" in error or "shapes" in error:
        return "A matrix product got mismatched shapes: with row vectors, a projection is x @ w, (n, d_model) x (d_model, width)."
    return ""


MULTI_HEAD_ATTENTION = Check(
    name="multi_head_attention",
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
    return run_check(MULTI_HEAD_ATTENTION, multi_head_attention, hidden=hidden)
