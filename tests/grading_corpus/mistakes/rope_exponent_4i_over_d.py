"""apply_rope dividing the even indices 0, 2, 4, ... by d/2: the exponent becomes -4i/d."""
CHECK = "apply_rope"
MISTAKE = "wrong_frequency_exponent"
MARKS = "2/18"

import numpy as np


def apply_rope(x, positions, base=10000.0):
    d = x.shape[-1]
    h = d // 2
    theta = base ** (-np.arange(0, d, 2) / h)
    angle = positions[:, None] * theta
    c, s = np.cos(angle).astype(x.dtype), np.sin(angle).astype(x.dtype)
    a, b = x[..., :h], x[..., h:]
    return np.concatenate([a * c - b * s, b * c + a * s], axis=-1)
