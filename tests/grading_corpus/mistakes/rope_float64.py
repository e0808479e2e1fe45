"""apply_rope with the right numbers, but float32 input comes back as float64."""
CHECK = "apply_rope"
MISTAKE = 'dtype_changed'
MARKS = "16/18"

import numpy as np


def apply_rope(x, positions, base=10000.0):
    d = x.shape[-1]
    h = d // 2
    theta = base ** (-2 * np.arange(h) / d)
    angles = positions[:, None] * theta
    c, s = np.cos(angles), np.sin(angles)  # float64: the product with float32 x is float64
    a, b = x[..., :h], x[..., h:]
    return np.concatenate([a * c - b * s, b * c + a * s], axis=-1)
