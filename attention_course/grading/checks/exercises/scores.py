"""Checks for exercises 1 and 2: dot-product scores, scaling, and their spread.

References come from the package: the scores are step 2 of `trace_attention`,
the scale is the default of `scaled_dot_product_attention` (1/sqrt(d_k)).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ....core._checks import check_scale
from ....chapters.worked_example import BANK_BOT, trace_attention
from ..engine.calls import error_line
from ..engine.cases import Case, Rngs
from ..engine.check import Check
from ..engine.code import Code
from ..engine.run import check_in_process
from ..engine.shrink import Sizes
from ..engine.mistakes import Lead, Mistake
from ..engine.results import CheckResult


def scores_reference(query, keys):
    values = np.zeros((np.shape(keys)[0], 1))  # the scores do not depend on the values
    return trace_attention(query, keys, values).scores  # (n_k,)


def _dot_scores_cases(rngs: Rngs) -> list[Case]:
    """Every property tried on a visible input (one key, d_k = 1, float32 kept, float64's digits kept), then
    hidden inputs that vary the values."""
    rng = rngs(1)
    return [
        Case("the bank bot's query and keys", (BANK_BOT.query.copy(), BANK_BOT.keys.copy())),
        Case("three keys, d_k = 2", (np.array([1.0, -1.0]), np.array([[2.0, 0.0], [0.0, 3.0], [1.0, 1.0]]))),
        Case("five random keys, d_k = 3", (rng.standard_normal(3), rng.standard_normal((5, 3)))),
        # n_k = 1: one key, still one score in an array of shape (1,).
        Case("one key, d_k = 3", (rng.standard_normal(3), rng.standard_normal((1, 3)))),
        # float32 in, float32 out.
        Case("float32, four keys, d_k = 3",
             (rng.standard_normal(3).astype(np.float32), rng.standard_normal((4, 3)).astype(np.float32))),
        Case("one key, d_k = 8", (rng.standard_normal(8), rng.standard_normal((1, 8))), hidden=True),
        Case("two keys, d_k = 6", (rng.standard_normal(6), rng.standard_normal((2, 6))), hidden=True),
        Case("float32, seven keys, d_k = 16",
             (rng.standard_normal(16).astype(np.float32), rng.standard_normal((7, 16)).astype(np.float32)), hidden=True),
    ] + _assumption_cases_dot_scores(rngs)


def _assumption_cases_dot_scores(rngs: Rngs) -> list[Case]:
    """Inputs that break what a function could silently assume (keys square, n_k = 1 and float32 are above)."""
    rng = rngs(12)
    return [
        # d_k > 1: one coordinate per vector, so a score is one product.
        Case("d_k = 1: each score is one product", (np.array([2.0]), np.array([[3.0], [-1.0], [0.5]]))),
        # float64 kept: the products cancel, so float32 (7 digits) would return 0 or 2 for the first score.
        _cancelling("float64 precision: (a + 1) - a = 1 for a near 30 000 000", rng),
        Case("d_k = 1, five keys", (rng.standard_normal(1), rng.standard_normal((5, 1))), hidden=True),
        _cancelling("float64 precision: products that cancel, other values", rng, hidden=True),
    ]


def _cancelling(label: str, rng, hidden: bool = False) -> Case:
    """A query (a + 1, -a) against keys (1, 1), (1, 0), (0, 1): scores 1, a + 1, -a, exact in float64 only."""
    a = float(rng.integers(20_000_000, 40_000_000))  # above 2**24: float32 cannot hold both a and a + 1
    return Case(label, (np.array([a + 1, -a]), np.array([[1.0, 1.0], [1.0, 0.0], [0.0, 1.0]])), hidden=hidden,
                precision=(1e-6, 1e-9))


DOT_SCORES_SIZES = Sizes({"query": ("d_k",), "keys": ("n_k", "d_k")})
"""A smaller failing input: fewer keys, a smaller d_k."""

def _dot_scores_error_hint(case: Case, error: str, code: Code) -> str:
    line = error_line(error)
    if "matmul" in error and ("@" in line or "dot(" in line or "matmul(" in line):
        return (f"The line that failed, `{line}`, multiplies arrays whose inner sizes differ: here the query has "
                f"{case.args[0].shape[0]} entries and `keys` has shape {case.args[1].shape}, one key per row. "
                "In a product A @ B, the last axis of A meets the first axis of B.")
    return ""


DOT_SCORES = Check(
    name="dot_scores",
    function="dot_scores",
    params=("query", "keys"),
    reference=scores_reference,
    sizes=DOT_SCORES_SIZES,
    make_cases=_dot_scores_cases,
    error_hint=_dot_scores_error_hint,
    mistakes=(
        Mistake("scaled_too_early",
                "These are already divided by sqrt(d_k). This step asks for the raw dot products q·k; "
                "the scaling is the next step (exercise 2).",
                lambda q, K: K @ q / np.sqrt(q.shape[-1])),  # (n_k, d_k) x (d_k,) -> (n_k,)
        Mistake("summed_over_keys",
                "Each score adds up the d_k products of the query with ONE key, so there is one score per key. "
                "You added up over the keys instead: check which axis your sum runs over.",
                lambda q, K: (q[None, :] * K).sum(axis=0)),  # (n_k, d_k) -> (d_k,)
        Mistake("no_sum",
                "q·k is a sum of products: multiply entry by entry, then add the d_k products up into one number per key.",
                lambda q, K: q[None, :] * K),  # (n_k, d_k)
        Mistake("keys_transposed",
                "These are the products of the query with the COLUMNS of `keys` (what `query @ keys` or "
                "`keys.T @ query` computes), which only runs at all when n_k = d_k. `keys` holds one key per "
                "row, shape (n_k, d_k): each score pairs the query with one row.",
                lambda q, K: K.T @ q if K.shape[0] == K.shape[1] else None),  # (d_k, n_k) x (d_k,) -> (n_k,)
        Mistake("one_total",
                "One number came back: the sum of all the scores. There is one score per key, n_k numbers: "
                "add up the d_k products of the query with each key separately.",
                lambda q, K: (K @ q).sum()),  # (n_k,) -> ()
        Mistake("cosine_similarity",
                "These scores were divided by the lengths of the vectors (a cosine similarity, between -1 "
                "and 1). The dot-product score is the plain sum of products, q·k, with no normalisation.",
                lambda q, K: K @ q / (np.linalg.norm(K, axis=-1) * np.linalg.norm(q))),
        Mistake("distance_not_dot",
                "These are the distances between the query and each key, |q - k|. The score is the dot product "
                "q·k: large when the vectors point the same way, not when they are close.",
                lambda q, K: np.linalg.norm(K - q[None, :], axis=-1)),
        Mistake("mean_not_sum",
                "Each score is d_k times too small: the products were averaged (a mean), not added up. q·k is the "
                "sum of the d_k products.",
                lambda q, K: (q[None, :] * K).mean(axis=-1) if q.shape[-1] > 1 else None),
        Mistake("last_score_only",
                "One number came back, the score of the LAST key only: a loop that overwrites one variable "
                "keeps only its last value. Collect one score per key (n_k of them) and return them all.",
                lambda q, K: K[-1] @ q),  # (d_k,) x (d_k,) -> ()
    ),
)


def check_dot_scores(dot_scores, *, hidden: bool = False) -> CheckResult:
    """Check `dot_scores(query, keys)`: query (d_k,), keys (n_k, d_k) -> (n_k,) scores q·k_j.

    The exercise 01_dot_scores (book/worked_example.ipynb).
    `hidden=True` also tries the inputs the batch grader uses.
    """
    return check_in_process(DOT_SCORES, dot_scores, hidden=hidden)


def scaled_reference(scores, d_k):
    return np.asarray(scores) * check_scale(None, d_k)  # the package's default scale, 1/sqrt(d_k)


def _scale_cases(rngs: Rngs) -> list[Case]:
    """Every property tried on a visible input (any shape, float32 kept, float64's range kept, integer scores),
    then hidden inputs that vary the values."""
    rng = rngs(2)
    bank = trace_attention(BANK_BOT.query, BANK_BOT.keys, BANK_BOT.values).scores
    return [
        Case("the bank bot's scores, d_k = 4", (bank.copy(), 4)),
        Case("three queries by five keys, d_k = 16", (rng.standard_normal((3, 5)) * 4, 16)),
        Case("six scores, d_k = 128", (rng.standard_normal(6) * 11, 128)),
        # any shape: a batch of score matrices.
        Case("a batch of scores, shape (2, 2, 3), d_k = 64", (rng.standard_normal((2, 2, 3)) * 8, 64)),
        # float32 in, float32 out.
        Case("float32 scores, d_k = 9", (rng.standard_normal((2, 3)).astype(np.float32) * 3, 9)),
        Case("a batch of scores, shape (2, 3, 4), d_k = 32", (rng.standard_normal((2, 3, 4)) * 8, 32), hidden=True),
        Case("float32 scores, d_k = 25", (rng.standard_normal((2, 5)).astype(np.float32) * 3, 25), hidden=True),
    ] + _assumption_cases_scale(rngs)


def _assumption_cases_scale(rngs: Rngs) -> list[Case]:
    """Inputs that break what a scaling could silently assume (d_k a perfect square is broken above by 128)."""
    rng = rngs(22)
    return [
        # float64 kept: 1e39 is beyond float32's largest number (3.4e38), so a cast to float32 gives inf.
        Case("float64 scores beyond float32's range, d_k = 4", (np.array([1e39, -1e39, 2.0]), 4)),
        # floats returned: an array made with empty_like/zeros_like of integer scores would round the result
        # (towards 0: -3 / 2 becomes -1, where floor division would give -2).
        Case("integer scores, d_k = 4", (2 * rng.integers(-4, 5, size=(1, 3)) + 1, 4)),  # odd: x / 2 is not whole
        Case("float64 scores beyond float32's range, d_k = 16", (np.array([3e40, 2.0, -5e39]) * rng.uniform(1, 2), 16),
             hidden=True),
        Case("integer scores, d_k = 16", (rng.integers(-20, 21, size=(2, 3)), 16), hidden=True),
    ]


SCALE_SCORES = Check(
    name="scale_scores",
    function="scale_scores",
    params=("scores", "d_k"),
    reference=scaled_reference,
    sizes=Sizes({"scores": "*"}),
    make_cases=_scale_cases,
    mistakes=(
        Mistake("missing_scale",
                "The scores came back unchanged. Scaling divides every score by the square root of d_k, "
                "so that the spread of the scores stays near 1 whatever the size of the vectors.",
                lambda s, d_k: s),
        Mistake("divided_by_d_k",
                "You divided by d_k itself. The spread of a dot product grows like sqrt(d_k), "
                "so dividing by d_k shrinks large-d_k scores far too much: divide by its square root.",
                lambda s, d_k: s / d_k),
        Mistake("multiplied_by_sqrt_d_k",
                "The scores grew instead of shrinking: the scale divides by sqrt(d_k).",
                lambda s, d_k: s * np.sqrt(d_k)),
        Mistake("scaled_by_number_of_keys",
                "You scaled by the number of scores (keys), not by d_k, the size of the query and key vectors.",
                lambda s, d_k: s / np.sqrt(s.shape[-1])),
        Mistake("scaled_by_scores_size",
                "You scaled by the square root of the number of scores in the array, not of d_k, the size of "
                "the query and key vectors (d_k is the second argument).",
                lambda s, d_k: s / np.sqrt(np.size(s))),
        Mistake("subtracted_sqrt_d_k",
                "sqrt(d_k) was subtracted from the scores. Scaling divides: scores / sqrt(d_k).",
                lambda s, d_k: s - np.sqrt(d_k)),
        *(Mistake("rounded",
                  "The scaled scores were rounded. Return them at full precision; round only when printing.",
                  lambda s, d_k, digits=digits: np.round(s / np.sqrt(d_k), digits)) for digits in (1, 2, 3, 4)),
        Mistake("integer_division",
                "Floor division `//` rounds the scaled scores down to whole numbers: use true division.",
                lambda s, d_k: s // np.sqrt(d_k)),
    ),
)


def check_scale_scores(scale_scores, *, hidden: bool = False) -> CheckResult:
    """Check `scale_scores(scores, d_k)`: scores of any shape -> scores / sqrt(d_k), same shape.

    The exercise 02_scale_scores (book/scaling.ipynb).
    """
    return check_in_process(SCALE_SCORES, scale_scores, hidden=hidden)


SPREAD_TOLERANCE = 0.1
"""A measured spread passes within 10% of sqrt(d_k): with 10 000 samples the
standard error of the estimate is under 1%, so an honest measurement never fails."""


def _spread_cases(rngs: Rngs) -> list[Case]:
    """The measurement for several d_k, and what its arguments promise: the same arguments give the same number,
    another seed or another number of samples another number."""
    return [
        Case("d_k = 128", (128,)),
        Case("d_k = 16", (16,)),
        Case("d_k = 4, 20 000 samples, seed 1", (4,), {"n_samples": 20_000, "seed": 1}),
        Case("d_k = 1", (1,)),
        Case("d_k = 16 again: the same seed gives the same number", (16,)),
        Case("d_k = 16, seed 5: another seed, another number", (16,), {"seed": 5}),
        Case("d_k = 4, seed 1, 10 000 samples: fewer samples, another number", (4,), {"n_samples": 10_000, "seed": 1}),
        Case("d_k = 64, seed 7", (64,), {"seed": 7}, hidden=True),
        Case("d_k = 2, seed 3", (2,), {"seed": 3}, hidden=True),
        Case("d_k = 32, 5 000 samples, seed 11", (32,), {"n_samples": 5_000, "seed": 11}, hidden=True),
    ]


def _theory(d_k, n_samples=10_000, seed=0):
    """sqrt(d_k): the standard deviation of q·k for entries of mean 0 and variance 1."""
    return np.sqrt(float(d_k))


def _arguments(case: Case) -> tuple[int, int, int]:
    """(d_k, n_samples, seed) of a spread input, the defaults filled in."""
    return case.args[0], case.kwargs.get("n_samples", 10_000), case.kwargs.get("seed", 0)


def _standard_error(value: float, case: Case, band: float) -> bool:
    """True if `value` is within `band` of sqrt(d_k / n_samples), the standard error of the mean of q·k."""
    d_k, n, _ = _arguments(case)
    error = np.sqrt(d_k / n)
    return abs(value - error) <= band * error


_SPREAD_MISTAKES = {
    m.id: m
    for m in (
        Mistake("formula_not_measurement",
                "That is exactly sqrt(d_k), the formula. The question asks you to measure it: draw random query "
                "and key vectors, compute their dot products and take the standard deviation."),
        Mistake("variance_not_spread",
                "This is close to d_k, which is the variance of q·k. The spread asked for is its standard "
                "deviation, the square root of the variance."),
        Mistake("spread_about_one",
                "The measured spread is about 1, where about sqrt(d_k) was expected. Two ways to measure 1: if "
                "the dot products were divided by sqrt(d_k), that is the spread of the scaled scores; if the "
                "products q_i k_i were not added up over the d_k coordinates (np.std(q * k)), that is the "
                "spread of one product. The question asks for the spread of the raw q·k, one sum per pair."),
        Mistake("mean_not_spread",
                "The number measured is close to 0 (under 5% of sqrt(d_k)), where the spread is about sqrt(d_k)."),
        Mistake("dot_with_itself",
                "The measured spread is close to sqrt(2 d_k), the spread of q·q, a vector dotted with itself "
                "(a sum of d_k squares, each of variance 2). If the keys are the queries (one array drawn and "
                "used twice), draw the keys separately: q and k must be independent."),
        Mistake("entries_not_unit_variance",
                "The measured spread is far from sqrt(d_k), and not near d_k, 1 or 0 either. The sqrt(d_k) law "
                "holds for entries of mean 0 and variance 1: if q and k were drawn otherwise (uniform numbers, "
                "say), draw them from a standard normal."),
        Mistake("not_a_number",
                "Return one number: the standard deviation of the measured dot products (a float)."),
    )
}
def _compare_spread(case: Case, expected, got, predictions):
    """Judge a measured spread by a tolerance band and name what it measured instead."""
    d_k = case.args[0]
    target = float(expected)
    if not isinstance(got, np.ndarray) or got.size != 1 or got.dtype.kind not in "iuf":
        return f"expected one number near {target:.2f}, got {got if got is None else 'something else'}", _SPREAD_MISTAKES["not_a_number"]
    value = float(got.reshape(()))
    if not np.isfinite(value):
        return f"expected a number near {target:.2f}, got {value}", _SPREAD_MISTAKES["not_a_number"]
    if value == target and d_k > 1:
        return f"got exactly sqrt({d_k}) = {target:.4f}", _SPREAD_MISTAKES["formula_not_measurement"]
    if abs(value - target) <= SPREAD_TOLERANCE * target:
        return None
    message = f"expected about {target:.2f} (within {SPREAD_TOLERANCE:.0%}), got {value:.4g}"
    if d_k >= 4 and abs(value - d_k) <= SPREAD_TOLERANCE * d_k:
        return message, _SPREAD_MISTAKES["variance_not_spread"]
    if d_k >= 4 and abs(value - 1) <= SPREAD_TOLERANCE:
        return message, _SPREAD_MISTAKES["spread_about_one"]
    if abs(value) < 0.05 * target:  # the mean of q·k is 0, give or take sqrt(d_k / n_samples)
        return message, _near_zero(value)
    if d_k >= 4 and abs(value - np.sqrt(2 * d_k)) <= SPREAD_TOLERANCE * np.sqrt(2 * d_k):
        return message, _SPREAD_MISTAKES["dot_with_itself"]
    return message, _SPREAD_MISTAKES["entries_not_unit_variance"]


def _near_zero(value: float) -> Mistake:
    """A measurement close to 0, and the two things it may be: a mean, or a standard deviation divided by
    sqrt(n_samples) (offered only where this number can be it)."""
    return dataclasses.replace(_SPREAD_MISTAKES["mean_not_spread"], facts=(("value", value),), leads=(
        # a mean of n draws of q·k lands within 2% of sqrt(d_k / n) about once in 70; a divided std nearly always
        Lead("mean", "If it is the mean of the dot products (which is 0, give or take sqrt(d_k / n_samples)), "
             "take their standard deviation instead.",
             lambda case, code, v=value: not _standard_error(v, case, 0.02)),
        Lead("standard_error", "If the standard deviation was divided by sqrt(n_samples) (this number is within 10% "
             "of sqrt(d_k / n_samples), the standard error of the mean), leave that out: the spread is the standard "
             "deviation itself.",
             lambda case, code, v=value: _standard_error(v, case, 0.1)),
    ))


NOT_REPRODUCIBLE = Mistake(
    "not_reproducible",
    "The same d_k, n_samples and seed gave two different numbers: a measurement made with "
    "`np.random.default_rng(seed)` is the same every time it is made.",
    leads=(Lead("global_generator", "If the random numbers come from NumPy's global functions (np.random.randn, "
                "np.random.normal, ...) or from a generator made without `seed`, draw them from "
                "`rng = np.random.default_rng(seed)` instead.", lambda case, code: True),),
)
SEED_IGNORED = Mistake(
    "seed_ignored",
    "Two different seeds gave exactly the same number: the measurement does not depend on `seed`. Make the "
    "generator from the `seed` argument, `np.random.default_rng(seed)`, and draw every number from it.",
)
SAMPLES_IGNORED = Mistake(
    "n_samples_ignored",
    "Two different values of n_samples (with the same seed) gave exactly the same number: the measurement does "
    "not depend on `n_samples`. Draw n_samples queries and n_samples keys.",
)


def _across_spread(returned: dict[int, tuple[Case, object]]) -> dict[int, tuple[str, Mistake]]:
    """The promises of the arguments, from pairs of inputs: the same arguments give the same number; another seed
    or another n_samples, another number. The later input of a pair fails."""
    seen: list[tuple[Case, tuple, float]] = []
    failed: dict[int, tuple[str, Mistake]] = {}
    for i, (case, value) in sorted(returned.items()):
        if not isinstance(value, np.ndarray) or value.size != 1 or value.dtype.kind not in "iuf":
            continue
        v = float(value.reshape(()))
        args = _arguments(case)
        for other, other_args, w in seen:
            if i in failed:
                break
            if args == other_args and v != w:
                failed[i] = (f"got {v:.6g}, where the same input (\"{other.label}\") gave {w:.6g}", NOT_REPRODUCIBLE)
            elif (args[0], args[1]) == other_args[:2] and args[2] != other_args[2] and v == w:
                failed[i] = (f"got {v:.6g}, exactly what seed {other_args[2]} gave (\"{other.label}\")", SEED_IGNORED)
            elif (args[0], args[2]) == (other_args[0], other_args[2]) and args[1] != other_args[1] and v == w:
                failed[i] = (f"got {v:.6g}, exactly what {other_args[1]} samples gave (\"{other.label}\")",
                             SAMPLES_IGNORED)
        seen.append((case, args, v))
    return failed


def _spread_text(case: Case, expected) -> str:
    return f"about {float(expected):.2f}, that is sqrt({case.args[0]}), give or take {SPREAD_TOLERANCE:.0%}"


DOT_PRODUCT_SPREAD = Check(
    name="dot_product_spread",
    helpers={"dot_scores": scores_reference, "scale_scores": scaled_reference},
    function="dot_product_spread",
    params=("d_k",),
    reference=_theory,
    make_cases=_spread_cases,
    compare=_compare_spread,
    across=_across_spread,
    expected_text=_spread_text,
)


def check_dot_product_spread(dot_product_spread, *, hidden: bool = False) -> CheckResult:
    """Check `dot_product_spread(d_k, n_samples=10_000, seed=0)`: the measured std of q·k.

    Passes when the measurement is within 10% of sqrt(d_k) (the expected value
    shown is the theory, sqrt(d_k)). The exercise 02_scale_scores (book/scaling.ipynb).
    """
    return check_in_process(DOT_PRODUCT_SPREAD, dot_product_spread, hidden=hidden)


CHECKS = {c.name: c for c in (DOT_SCORES, SCALE_SCORES, DOT_PRODUCT_SPREAD)}
"""This module's checks by name: what the registry's `Exercise.checks` reads."""
