"""Why attention divides the scores by sqrt(d_k), measured (book/scaling.ipynb).

If the entries of q and k are independent with mean 0 and variance 1, the dot
product q . k = sum_i q_i k_i is a sum of d_k terms of variance 1, so its
variance is d_k and its standard deviation sqrt(d_k). Scores that spread that
widely make the softmax nearly one-hot, and a nearly one-hot softmax passes
almost no gradient back. The helpers below measure each link of that chain:
the spread of random scores, how peaked their softmax is (largest weight,
entropy) and how large the softmax's Jacobian is.
"""

from __future__ import annotations

import numpy as np

from ..core._checks import as_float_array, positive_int
from ..core.softmax import softmax

DISTRIBUTIONS = ("normal", "uniform", "sign")
"""Zero-mean, unit-variance distributions that `random_scores` can draw from."""


def _unit_variance(rng: np.random.Generator, shape: tuple, distribution: str) -> np.ndarray:
    """Independent entries with mean 0 and variance 1."""
    if distribution == "normal":
        return rng.standard_normal(shape)
    if distribution == "uniform":  # uniform on [-a, a] has variance a^2 / 3
        return rng.uniform(-np.sqrt(3.0), np.sqrt(3.0), shape)
    if distribution == "sign":  # +1 or -1 with equal probability
        return rng.choice(np.array([-1.0, 1.0]), size=shape)
    raise ValueError(f"distribution must be one of {DISTRIBUTIONS}; got {distribution!r}")


def _as_sizes(d_ks) -> list[int]:
    """`d_ks` as a list of positive ints, or a ValueError/TypeError naming it."""
    sizes = np.asarray(d_ks)
    if sizes.ndim != 1 or sizes.size == 0:
        raise ValueError(f"d_ks must be a non-empty 1-D list of key sizes; got shape {sizes.shape}")
    return [positive_int(d, "each d_k in d_ks") for d in sizes.tolist()]


def random_scores(
    d_k: int,
    n_k: int,
    n_samples: int,
    rng: np.random.Generator,
    *,
    scaled: bool = False,
    distribution: str = "normal",
) -> np.ndarray:
    """Scores q . k_j of random queries against random keys.

    Every entry of every query and key is drawn independently with mean 0 and
    variance 1. Memory grows as n_samples * n_k * d_k floats.

    Args:
        d_k: size of the query and key vectors.
        n_k: number of keys each query is scored against.
        n_samples: number of independent queries (each with its own keys).
        rng: the random generator, e.g. `np.random.default_rng(0)`.
        scaled: divide the scores by sqrt(d_k), as attention does.
        distribution: "normal", "uniform" (on [-sqrt 3, sqrt 3]) or "sign" (+-1).

    Returns:
        (n_samples, n_k) float64 scores.
    """
    d_k = positive_int(d_k, "d_k")
    n_k = positive_int(n_k, "n_k")
    n_samples = positive_int(n_samples, "n_samples")
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy Generator (np.random.default_rng(seed)); got {type(rng).__name__}")
    q = _unit_variance(rng, (n_samples, d_k), distribution)  # (S, d_k) one query per sample
    k = _unit_variance(rng, (n_samples, n_k, d_k), distribution)  # (S, n_k, d_k) its own keys
    scores = np.einsum("sd,skd->sk", q, k)  # (S, d_k) . (S, n_k, d_k) -> (S, n_k): q . k_j for each j
    return scores / np.sqrt(d_k) if scaled else scores


def score_std(d_ks, n_samples: int, rng: np.random.Generator, *, scaled: bool = False,
              distribution: str = "normal") -> np.ndarray:
    """Measured standard deviation of q . k for each d_k in `d_ks`.

    Args:
        d_ks: (m,) key sizes to measure.
        n_samples: dot products drawn per d_k; the relative error of the
            estimate is about 1 / sqrt(2 * n_samples).
        rng: the random generator, shared by all d_k in order.
        scaled: measure q . k / sqrt(d_k) instead.
        distribution: as in `random_scores`.

    Returns:
        (m,) the sample standard deviations; about sqrt(d_k) unscaled, about 1 scaled.
    """
    return np.array([
        random_scores(d_k, 1, n_samples, rng, scaled=scaled, distribution=distribution).std()
        for d_k in _as_sizes(d_ks)
    ])


def _weights_of(scores) -> np.ndarray:
    """softmax over the last axis of `scores`, checked: (..., n_k) -> (..., n_k)."""
    s = as_float_array(scores, "scores")
    if s.ndim == 0:
        raise ValueError("scores must have shape (..., n_k) with at least one axis; got a scalar")
    return softmax(s, axis=-1)


def softmax_jacobian(scores) -> np.ndarray:
    """The Jacobian of the softmax at `scores`: J = diag(p) - p p^T.

    J[..., i, j] = d p_i / d s_j = p_i (delta_ij - p_j), where p = softmax(s).
    It is symmetric, each row sums to 0 (the weights always sum to 1), and it
    is all zeros when p is exactly one-hot: then no gradient reaches the scores.

    Args:
        scores: (..., n_k) scores s; the softmax is taken over the last axis.

    Returns:
        (..., n_k, n_k) the Jacobian for each row of scores.
    """
    p = _weights_of(scores)  # (..., n_k)
    outer = p[..., :, None] * p[..., None, :]  # (..., n_k, 1) x (..., 1, n_k) -> (..., n_k, n_k): p p^T
    diag = p[..., :, None] * np.eye(p.shape[-1], dtype=p.dtype)  # (..., n_k, n_k): diag(p)
    return diag - outer


def jacobian_norm(scores) -> np.ndarray:
    """Size of the softmax's Jacobian: its Frobenius norm, sqrt(sum_ij J_ij^2).

    The gradient that reaches the scores is J^T times the gradient on the
    weights, so this bounds how much learning signal passes through. It is 0
    for one-hot weights, sqrt(n - 1) / n for even weights over n keys, and at
    most 1/2 (two keys sharing the weight equally).

    Args:
        scores: (..., n_k) scores.

    Returns:
        (...) one norm per row of scores (a float64 scalar for a single row).
    """
    jac = softmax_jacobian(scores)  # (..., n_k, n_k)
    return np.sqrt(np.sum(jac * jac, axis=(-2, -1)))  # (..., n_k, n_k) -> (...)


def max_weight(scores) -> np.ndarray:
    """The largest softmax weight of each row: 1/n_k if uniform, 1 if one-hot.

    Args:
        scores: (..., n_k) scores.

    Returns:
        (...) the largest weight of each row.
    """
    return _weights_of(scores).max(axis=-1)  # (..., n_k) -> (...)


def softmax_entropy(scores) -> np.ndarray:
    """Entropy of the softmax weights in nats: -sum_j p_j log p_j.

    log(n_k) for uniform weights (attention spread evenly), 0 for one-hot
    (all attention on one key). Keys with weight exactly 0 contribute 0
    (the limit of p log p as p -> 0), so masked keys are handled.

    Args:
        scores: (..., n_k) scores; -inf marks a masked key.

    Returns:
        (...) the entropy of each row.
    """
    p = _weights_of(scores)  # (..., n_k)
    logs = np.log(p, out=np.zeros_like(p), where=p > 0)  # 0 log 0 = 0
    return -np.sum(p * logs, axis=-1)  # (..., n_k) -> (...)


def peakedness(d_ks, n_k: int, n_samples: int, rng: np.random.Generator, *, scaled: bool,
               distribution: str = "normal", saturation: float = 1e-3) -> dict[str, np.ndarray]:
    """How peaked the softmax of random scores gets as d_k grows.

    For each d_k, draws `n_samples` rows of `n_k` random scores (see
    `random_scores`) and summarises them over the rows.

    Args:
        d_ks: (m,) key sizes.
        n_k: keys per row.
        n_samples: rows per d_k.
        rng: the random generator.
        scaled: divide the scores by sqrt(d_k) first, as attention does.
        distribution: as in `random_scores`.
        saturation: a row counts as saturated when the norm of its softmax
            Jacobian is below this: almost no gradient reaches its scores.

    Returns:
        A dict of (m,) arrays: "d_k"; "max_weight" and "entropy" (means over
        the rows of the largest weight and of the entropy in nats);
        "jacobian_median" and "jacobian_mean" (of the Jacobian's Frobenius
        norm); "saturated" (the fraction of saturated rows).
    """
    sizes = _as_sizes(d_ks)
    if not saturation > 0:
        raise ValueError(f"saturation must be a positive threshold; got {saturation!r}")
    names = ("max_weight", "entropy", "jacobian_median", "jacobian_mean", "saturated")
    rows = {name: [] for name in names}
    for d_k in sizes:
        s = random_scores(d_k, n_k, n_samples, rng, scaled=scaled, distribution=distribution)  # (S, n_k)
        norms = jacobian_norm(s)  # (S,)
        rows["max_weight"].append(max_weight(s).mean())
        rows["entropy"].append(softmax_entropy(s).mean())
        rows["jacobian_median"].append(np.median(norms))
        rows["jacobian_mean"].append(norms.mean())
        rows["saturated"].append(np.mean(norms < saturation))
    return {"d_k": np.array(sizes), **{name: np.array(vals) for name, vals in rows.items()}}


__all__ = [
    "DISTRIBUTIONS",
    "jacobian_norm",
    "max_weight",
    "peakedness",
    "random_scores",
    "score_std",
    "softmax_entropy",
    "softmax_jacobian",
]


PROJECTION_INITS = ("unit", "torch_linear", "gpt2")
"""How `projected_score_std` draws W_q and W_k.

- "unit": N(0, 1/d_model), the variance that keeps q's entries at variance 1;
- "torch_linear": PyTorch's `nn.Linear` default, U(-1/sqrt(d_model), 1/sqrt(d_model)),
  of variance 1/(3 d_model);
- "gpt2": N(0, 0.02^2), GPT-2's initialisation of every linear layer, whatever d_model.
"""


def _projection(rng: np.random.Generator, d_model: int, d_k: int, init: str) -> np.ndarray:
    """(d_model, d_k) a freshly initialised projection."""
    if init == "unit":
        return rng.standard_normal((d_model, d_k)) / np.sqrt(d_model)
    if init == "torch_linear":  # kaiming_uniform_(a=sqrt(5)) on (out, in) gives bound 1/sqrt(fan_in)
        bound = 1 / np.sqrt(d_model)
        return rng.uniform(-bound, bound, (d_model, d_k))
    if init == "gpt2":
        return 0.02 * rng.standard_normal((d_model, d_k))
    raise ValueError(f"init must be one of {PROJECTION_INITS}; got {init!r}")


def projected_score_std(d_model: int, d_k: int, n_samples: int, rng: np.random.Generator, *,
                        init: str, scaled: bool = False) -> float:
    """Spread of q . k when q = x W_q and k = x' W_k, at initialisation.

    x and x' are token vectors of `d_model` independent unit-variance entries
    (what layer normalisation hands to attention); W_q and W_k, both
    (d_model, d_k), are drawn once with `init` (one of `PROJECTION_INITS`).

    Returns:
        the standard deviation of the n_samples dot products q . k (divided by
        sqrt(d_k) if `scaled`).
    """
    d_model = positive_int(d_model, "d_model")
    d_k = positive_int(d_k, "d_k")
    n_samples = positive_int(n_samples, "n_samples")
    w_q, w_k = _projection(rng, d_model, d_k, init), _projection(rng, d_model, d_k, init)
    x = rng.standard_normal((2, n_samples, d_model))  # (2, n_samples, d_model): the queries' and keys' tokens
    q = x[0] @ w_q  # (n_samples, d_model) x (d_model, d_k) -> (n_samples, d_k)
    k = x[1] @ w_k  # (n_samples, d_model) x (d_model, d_k) -> (n_samples, d_k)
    scores = np.einsum("sd,sd->s", q, k)  # (n_samples,): one q . k per pair
    if scaled:
        scores = scores / np.sqrt(d_k)
    return float(scores.std())
