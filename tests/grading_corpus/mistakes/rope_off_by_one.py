"""apply_rope that counts positions from 1: every token is turned one position too far."""
CHECK = "apply_rope"
MISTAKE = "positions_off_by_one"
MARKS = "0/18"

import numpy as np


def apply_rope(x, positions, base=10000.0):
    d = x.shape[-1]
    h = d // 2
    theta = base ** (-2 * np.arange(h) / d)
    angles = (np.asarray(positions) + 1)[:, None] * theta  # "the first token is token 1"
    c, s = np.cos(angles).astype(x.dtype), np.sin(angles).astype(x.dtype)
    a, b = x[..., :h], x[..., h:]
    return np.concatenate([a * c - b * s, b * c + a * s], axis=-1)
