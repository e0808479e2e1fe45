"""rope_attention that rotates the queries only."""
CHECK = "rope_attention"
MISTAKE = "one_side_rotated"
MARKS = "3/15"

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
    return scaled_dot_product_attention(apply_rope(q, positions, base), k, v)
