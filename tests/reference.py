"""Deliberately naive reference implementations for the tests.

Written as explicit loops over rows, in float64 with Python's `math`, so they
share no code (and no vectorisation tricks) with the package they check.
"""

from __future__ import annotations

import math

import numpy as np


def softmax_row(row) -> list[float]:
    """Softmax of one list of numbers; -inf -> 0, an all -inf row -> zeros."""
    finite = [x for x in row if x != -math.inf]
    if not finite:
        return [0.0] * len(row)
    m = max(finite)
    exps = [0.0 if x == -math.inf else math.exp(x - m) for x in row]
    total = sum(exps)
    return [e / total for e in exps]


def attention_2d(q, k, v, allowed=None, bias=None, scale=None) -> tuple[np.ndarray, np.ndarray]:
    """(weights (n_q, n_k), output (n_q, d_v)) for one head, row by row.

    allowed: optional (n_q, n_k) bool; bias: optional (n_q, n_k) float added to the scores.
    """
    q, k, v = (np.asarray(a, dtype=np.float64) for a in (q, k, v))
    n_q, d_k = q.shape
    n_k, d_v = v.shape
    scale = 1.0 / math.sqrt(d_k) if scale is None else scale
    weights = np.zeros((n_q, n_k))
    out = np.zeros((n_q, d_v))
    for i in range(n_q):
        scores = []
        for j in range(n_k):
            s = sum(float(q[i, t]) * float(k[j, t]) for t in range(d_k)) * scale
            if bias is not None:
                s += float(bias[i, j])
            if allowed is not None and not allowed[i, j]:
                s = -math.inf
            scores.append(s)
        w = softmax_row(scores)
        weights[i] = w
        for j in range(n_k):
            out[i] += w[j] * v[j]
    return weights, out


def causal_allowed(n_q: int, n_k: int) -> np.ndarray:
    """(n_q, n_k) bool, True where key j <= query i."""
    return np.array([[j <= i for j in range(n_k)] for i in range(n_q)])


def lower_right_causal_allowed(n_q: int, n_k: int) -> np.ndarray:
    """(n_q, n_k) bool, True where key j <= query i + (n_k - n_q): the queries are the last n_q positions."""
    return np.array([[j <= i + n_k - n_q for j in range(n_k)] for i in range(n_q)])


def sliding_window_allowed(n_q: int, n_k: int, window: int, lower_right: bool = True) -> np.ndarray:
    """(n_q, n_k) bool, True where query i at position p sees key j: p - window < j <= p."""
    offset = n_k - n_q if lower_right else 0
    return np.array([[i + offset - window < j <= i + offset for j in range(n_k)] for i in range(n_q)])
