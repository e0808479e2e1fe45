"""apply_rope whose exponents are computed with floor division: every pair turns at 1 radian per position."""
CHECK = "apply_rope"
MISTAKE = "integer_exponent"
MARKS = "2/18"

import numpy as np


def apply_rope(x, positions, base=10000.0):
    d = x.shape[-1]
    h = d // 2
    theta = base ** -(np.arange(0, d, 2) // d)  # 0 // d, 2 // d, ...: all 0
    angles = positions[:, None] * theta
    c, s = np.cos(angles).astype(x.dtype), np.sin(angles).astype(x.dtype)
    a, b = x[..., :h], x[..., h:]
    return np.concatenate([a * c - b * s, b * c + a * s], axis=-1)
