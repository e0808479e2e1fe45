"""apply_rope with 10000 written into it: the `base` argument is never used."""
CHECK = "apply_rope"
MISTAKE = "base_ignored"
MARKS = "12/18"

import numpy as np


def apply_rope(x, positions, base=10000.0):
    d = x.shape[-1]
    h = d // 2
    theta = 10000.0 ** (-2 * np.arange(h) / d)
    angles = positions[:, None] * theta
    c, s = np.cos(angles).astype(x.dtype), np.sin(angles).astype(x.dtype)
    a, b = x[..., :h], x[..., h:]
    return np.concatenate([a * c - b * s, b * c + a * s], axis=-1)
