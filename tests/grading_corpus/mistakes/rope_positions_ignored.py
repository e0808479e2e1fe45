"""apply_rope that numbers the tokens 0, 1, 2, ... itself and never reads `positions`."""
CHECK = "apply_rope"
MISTAKE = "positions_ignored"
MARKS = "1/18"

import numpy as np


def apply_rope(x, positions, base=10000.0):
    n, d = x.shape[-2:]
    h = d // 2
    theta = base ** (-2 * np.arange(h) / d)
    angles = np.arange(n)[:, None] * theta
    c, s = np.cos(angles).astype(x.dtype), np.sin(angles).astype(x.dtype)
    a, b = x[..., :h], x[..., h:]
    return np.concatenate([a * c - b * s, b * c + a * s], axis=-1)
