"""rope_attention that rotates the values as well as the queries and the keys."""
CHECK = "rope_attention"
MISTAKE = "values_rotated"
MARKS = "0/15"

import numpy as np

from attention_course import scaled_dot_product_attention


def apply_rope(x, positions, base=10000.0):
    d = x.shape[-1]
    h = d // 2
    theta = base ** (-2 * np.arange(h) / d)
    angles = positions[:, None] * theta
    c, s = np.cos(angles).astype(x.dtype), np.sin(angles).astype(x.dtype)
    a, b = x[..., :h], x[..., h:]
    return np.concatenate([a * c - b * s, b * c + a * s], axis=-1)


def rope_attention(q, k, v, positions, base=10000.0):
    q, k, v = (apply_rope(t, positions, base) for t in (q, k, v))
    return scaled_dot_product_attention(q, k, v)
