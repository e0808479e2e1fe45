"""apply_rope that writes the rotated pairs back into the caller's array."""
CHECK = "apply_rope"
MISTAKE = "modifies_input"
MARKS = "0/18"

import numpy as np


def apply_rope(x, positions, base=10000.0):
    d = x.shape[-1]
    h = d // 2
    theta = base ** (-2 * np.arange(h) / d)
    angles = positions[:, None] * theta
    c, s = np.cos(angles).astype(x.dtype), np.sin(angles).astype(x.dtype)
    a, b = x[..., :h].copy(), x[..., h:].copy()
    x[..., :h] = a * c - b * s
    x[..., h:] = b * c + a * s
    return x
