"""apply_rope written for the (n, h, d) layout: the angle table is lined up with the axis before the tokens."""
CHECK = "apply_rope"
MISTAKE = "positions_on_wrong_axis"
MARKS = "2/18"

import numpy as np


def apply_rope(x, positions, base=10000.0):
    d = x.shape[-1]
    h = d // 2
    theta = base ** (-2 * np.arange(h) / d)
    angles = positions[:, None] * theta  # (n, d/2)
    c = np.cos(angles)[:, None, :].astype(x.dtype)  # (n, 1, d/2), as for x of shape (n, heads, d)
    s = np.sin(angles)[:, None, :].astype(x.dtype)
    a, b = x[..., :h], x[..., h:]
    return np.concatenate([a * c - b * s, b * c + a * s], axis=-1)
