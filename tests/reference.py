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


def sinusoidal_table(n: int, d: int, base: float = 10000.0) -> np.ndarray:
    """"Attention Is All You Need", section 3.5: PE(p, 2i) = sin(p / base^(2i/d)), PE(p, 2i+1) = cos(...)."""
    table = np.zeros((n, d))
    for p in range(n):
        for col in range(d):
            angle = p / base ** (2 * (col // 2) / d)
            table[p, col] = math.sin(angle) if col % 2 == 0 else math.cos(angle)
    return table


def rope_vector(x, position: int, base: float = 10000.0, interleaved: bool = False) -> list[float]:
    """RoPE of one vector (RoFormer, eq. 34), pair by pair: pair i turns by position * base^(-2i/d).

    interleaved pairs coordinates (2i, 2i + 1); otherwise (i, i + d/2), as Hugging Face's rotate_half.
    """
    x = [float(v) for v in x]
    d = len(x)
    out = [0.0] * d
    for i in range(d // 2):
        a, b = (2 * i, 2 * i + 1) if interleaved else (i, i + d // 2)
        angle = position * base ** (-2 * i / d)
        c, s = math.cos(angle), math.sin(angle)
        out[a] = x[a] * c - x[b] * s
        out[b] = x[b] * c + x[a] * s
    return out


def alibi_slopes_paper(n: int) -> list[float]:
    """The slopes as the ALiBi paper's code computes them (github.com/ofirpress/attention_with_linear_biases)."""
    def power_of_2(n):
        start = 2 ** (-(2 ** -(math.log2(n) - 3)))
        return [start * start**i for i in range(n)]

    if math.log2(n).is_integer():
        return power_of_2(n)
    closest = 2 ** math.floor(math.log2(n))
    return power_of_2(closest) + alibi_slopes_paper(2 * closest)[0::2][: n - closest]
